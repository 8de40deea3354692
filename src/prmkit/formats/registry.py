"""``FORMATS``: format name -> adapter, the one list every reader, writer and command looks names up in.

Entries are lazy (``module:attribute``) so a format's module loads only when it is used. It sits in a module
of its own, below ``convert.py``, so that looking a name up never imports the package that re-exports it.
"""

from __future__ import annotations

from prmkit.core.registry import Registry
from prmkit.formats.base import Format

FORMATS: Registry[Format] = Registry("format")
"""Format name -> adapter; lazy so a format's module loads only when it is used."""
FORMATS.register("prm800k", "prmkit.formats.prm800k:FORMAT")
FORMATS.register("math_shepherd", "prmkit.formats.math_shepherd:FORMAT")
FORMATS.register("processbench", "prmkit.formats.processbench:FORMAT")
FORMATS.register("trl", "prmkit.formats.trl:FORMAT")
FORMATS.register("agentprocessbench", "prmkit.formats.agentprocessbench:FORMAT")
FORMATS.register("chat", "prmkit.formats.chat:FORMAT")
FORMATS.register("bbm", "prmkit.formats.bbm:FORMAT")
FORMATS.register("mrben", "prmkit.formats.mrben:FORMAT")
FORMATS.register("deltabench", "prmkit.formats.deltabench:FORMAT")
FORMATS.register("prmbench", "prmkit.formats.prmbench:FORMAT")
FORMATS.register("socratic_prmbench", "prmkit.formats.prmbench:SOCRATIC_FORMAT")
FORMATS.register("prmkit", "prmkit.formats.native:FORMAT")
FORMATS.register("step_dpo", "prmkit.formats.step_dpo:FORMAT")
FORMATS.alias("step-dpo", "step_dpo")  # the paper's spelling
