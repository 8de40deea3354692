"""The search registry: one entry per search command, from which the CLI builds ``prmkit bon | vote |
beam | smc | resample``, so a method has one name and a new one is one registration plus its module.

An entry is the one command record (:class:`prmkit.core.commands.Command`): the command's name, its typed
config (``--help`` is generated from it) and ``run(config)``, the file-level job in the method's own
module beside its pure core (``best_of_n(problems, policy, scorer, ...)`` in bon.py, ``run_bon(config)``
next to it). Every search lays out its flags the same way and prints its summary as JSON. Entries load
lazily, as the labellers do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prmkit.core.commands import Command, Layout
from prmkit.core.registry import Registry

LAYOUT = Layout(
    arguments=("problems",),
    flags={
        "out": ["--out", "-o"],
        "diverse": "--dvts",
        "policy.policy": "--policy",
        "policy.model": "--policy-model",
        "policy.url": "--url",
        "policy.temperature": "--temperature",
    },
    flat=("load",),
)
"""The flags the search commands have always had; the policy's other options read ``--policy-...``."""


def as_json(summary: dict[str, Any], config: Any = None) -> str:
    """A search's summary as it is printed: indented JSON (what the search commands have always printed)."""
    return json.dumps(summary, indent=2)


@dataclass(frozen=True, init=False)
class Search(Command):
    """One search command: the one command record with the searches' flags and JSON summary."""

    def __init__(self, name: str, config: type, run: Callable[..., dict[str, Any]] | str) -> None:
        """``name`` is the CLI command (``prmkit NAME``); ``config`` its typed config
        (:mod:`prmkit.search.config`); ``run(config, show_progress=True) -> summary`` reads the problems,
        searches and writes the results."""
        super().__init__(name, config, run, layout=LAYOUT, show=as_json)


SEARCHES: Registry[Search] = Registry("search")
SEARCHES.register("bon", "prmkit.search.bon:SEARCH")
SEARCHES.register("vote", "prmkit.search.vote:SEARCH")
SEARCHES.register("beam", "prmkit.search.beam:SEARCH")
SEARCHES.register("smc", "prmkit.search.smc:SEARCH")
SEARCHES.register("resample", "prmkit.search.resample:SEARCH")
