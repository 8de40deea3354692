"""Format adapters at the edge of the core model: read and write the field's data sets, convert between them.

Contract: every reader turns a file into core :class:`~prmkit.core.model.Trace` objects (or Problems),
keeping what the core model cannot hold in ``metadata``; every writer goes back atomically and reports
what it dropped and why. Bad input raises one :class:`~prmkit.core.errors.InputError` listing every issue
as ``file:line: field: expected ..., found ...``; ``skip_invalid=True`` skips and counts by reason.

Files:

- ``base.py``          ReadResult, WriteReport, Format, record checking, rows in/out (JSONL, JSON array, Parquet)
- ``binary.py``        -1/0/+1 -> booleans: the neutral mapping and first-error policy, recorded in provenance
- ``prm800k.py``       PRM800K phase 1/2 label files and MATH split files (byte-exact round trip)
- ``math_shepherd.py`` Math-Shepherd ``input``/``label`` with the ``ки`` tag (byte-exact round trip)
- ``processbench.py``  ProcessBench JSON arrays (byte-exact round trip)
- ``trl.py``           TRL stepwise supervision, written as TRL's own converters write it
- ``chat.py``          OpenAI-style chat logs (messages, tool calls, tools); the message mapping of agent formats
- ``agentprocessbench.py`` AgentProcessBench agent trajectories with step labels (byte-exact round trip)
- ``mrben.py``         MR-Ben's per-subject JSON (sampled solutions per question, their first error step)
- ``bbm.py``           BIG-Bench Mistake's per-task JSONL (CoT steps, ``mistake_index``)
- ``prmbench.py``      PRMBench and Socratic-PRMBench JSONL (modified solution, ``error_steps``; byte-exact round trip)
- ``deltabench.py``    DeltaBench's JSONL (long CoT in sections, erroneous / unuseful sections; byte-exact round trip)
- ``step_dpo.py``      Step-DPO preference pairs from any label source, with their provenance (write-only)
- ``native.py``        prmkit's own JSONL / Parquet (lossless)
- ``detect.py``        format detection from content
- ``registry.py``      ``FORMATS``: format name -> adapter (lazy)
- ``convert.py``       read, write, convert, validate, inspect (the public API; CLI twins in prmkit.cli.data)
- ``inputs.py``        the one input rule: ``read_traces`` / ``read_problems`` read every format
- ``stats.py``         inspect: counts, label distribution by source, first-error histogram (PNG)
- ``views.py``         the results view of the Step-DPO pairs study (``step-dpo-pairs``): a docs table from its file
"""

from __future__ import annotations

from prmkit.formats.base import Format, ReadResult, WriteReport
from prmkit.formats.binary import binarize_traces
from prmkit.formats.convert import (
    ConversionReport,
    InspectReport,
    ValidationReport,
    convert,
    inspect,
    read,
    validate,
    write,
)
from prmkit.formats.detect import detect_format
from prmkit.formats.inputs import read_problems, read_traces
from prmkit.formats.registry import FORMATS

__all__ = [
    "FORMATS",
    "ConversionReport",
    "Format",
    "InspectReport",
    "ReadResult",
    "ValidationReport",
    "WriteReport",
    "binarize_traces",
    "convert",
    "detect_format",
    "inspect",
    "read",
    "read_problems",
    "read_traces",
    "validate",
    "write",
]
