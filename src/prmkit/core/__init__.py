"""The core: the typed model and the files it lives in. Everything else in prmkit stands on it.

- ``model.py``     Problem, Trace, Step, Label, Provenance, Continuation; label-source selectors
- ``dataset.py``   prmkit JSONL / Parquet files and the Hugging Face ``datasets`` bridge
- ``files.py``     located JSON reading, atomic writes, crash-safe append logs
- ``errors.py``    ``file:line: field: expected ..., found ...`` errors and skip reports
- ``registry.py``  lazy name -> backend registries with "Did you mean"
- ``protocols.py`` Policy, Judge, StepScorer: the seams backends implement
- ``answers.py``   final-answer equivalence (exact for numbers, math-verify otherwise)
- ``http_limits.py`` what one client's connections may cost a prmkit web server (uvicorn bounds)
- ``progress.py``  the shared stderr console and rich progress bar (not imported here: rich loads lazily)
- ``config.py``    ``Config``: the base of every typed config (unknown keys refused, field docstrings as help)
- ``commands.py``  ``Command``: the one command record (name, typed config, ``run(config)``, how its result prints)
- ``yamlconf.py``  YAML / JSON files into typed configs, errors located at the file's line
- ``steps.py``     text <-> steps <-> answer: how a model's words become steps and back
- ``render.py``    the text a model reads for each step (agent steps with their calls)
- ``seeds.py``     seeds derived from names, reproducible anywhere
- ``stats.py``     uncertainty of a study: ``Estimate``, the crossed bootstrap, t-intervals
- ``results.py``   how measured numbers are shown: ``Table``, the cell format, the ``<!-- results: -->`` views
- ``ranks.py``     which process of a launch this is (``RANK``, ``WORLD_SIZE``), with no process group
"""

from prmkit.core.dataset import (
    from_hf_dataset,
    read_native_problems,
    read_native_traces,
    read_parquet,
    to_hf_dataset,
    write_jsonl,
    write_parquet,
    write_traces,
)
from prmkit.core.errors import InputError, Issue, SkipReport
from prmkit.core.model import Continuation, Label, Problem, Provenance, Step, Trace, matches
from prmkit.core.protocols import Judge, JudgeVerdict, Policy, StepScorer
from prmkit.core.registry import Registry, UnknownNameError

__all__ = [
    "Continuation",
    "InputError",
    "Issue",
    "Judge",
    "JudgeVerdict",
    "Label",
    "Policy",
    "Problem",
    "Provenance",
    "Registry",
    "SkipReport",
    "Step",
    "StepScorer",
    "Trace",
    "UnknownNameError",
    "from_hf_dataset",
    "matches",
    "read_native_problems",
    "read_native_traces",
    "read_parquet",
    "to_hf_dataset",
    "write_jsonl",
    "write_parquet",
    "write_traces",
]
