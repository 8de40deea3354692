"""The search registry: one entry per search command, from which the CLI builds ``prmkit bon | vote |
beam | smc | resample``, so a method has one name and a new one is one registration plus its module.

An entry names the command, its typed config (``--help`` is generated from it) and ``run(config)``, the
file-level job in the method's own module beside its pure core (``best_of_n(problems, policy, scorer, ...)``
in bon.py, ``run_bon(config)`` next to it). Entries load lazily, as the labellers do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prmkit.core.registry import Registry


@dataclass(frozen=True)
class Search:
    """One search command."""

    name: str
    """Its one name: the CLI command (``prmkit NAME``)."""
    config: type
    """Its typed config (:mod:`prmkit.search.config`)."""
    run: Callable[..., dict[str, Any]]
    """``run(config, show_progress=True) -> summary``: read the problems, search, write the results."""


SEARCHES: Registry[Search] = Registry("search")
SEARCHES.register("bon", "prmkit.search.bon:SEARCH")
SEARCHES.register("vote", "prmkit.search.vote:SEARCH")
SEARCHES.register("beam", "prmkit.search.beam:SEARCH")
SEARCHES.register("smc", "prmkit.search.smc:SEARCH")
SEARCHES.register("resample", "prmkit.search.resample:SEARCH")
