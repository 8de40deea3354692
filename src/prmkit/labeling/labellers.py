"""The labeller registry: one entry per labelling method, read by the CLI, recipes, the pipeline's plan
and the label report, so a method has one name and a new one is one registration plus its module.

An entry is the one command record (:class:`prmkit.core.commands.Command`: name, typed config, run
function) extended with which label sources it writes and which other methods' files it reads (or needs). Built-ins register by import path (their modules
load only when used); third-party packages register through the ``prmkit.labellers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prmkit.core.commands import Command, lead_summary
from prmkit.core.registry import Registry

USER_ERRORS = (
    "prmkit.labeling.jobs:JobMismatchError",
    "prmkit.labeling.jobs:JobLockedError",
    "prmkit.labeling.jobs:JobStoppedError",
    "prmkit.policies.http:EndpointError",
    "prmkit.worlds.judge:NotAWorldProblemError",
)
"""What a user causes when labelling (a changed job, a dead endpoint, a judge for world problems on
other traces): one line each, never a traceback."""


@dataclass(frozen=True, init=False)
class Labeller(Command):
    """One labelling method: the one command record (name, config, ``run(config) -> summary``) with what
    the recipes and the label report need of a labeller besides. Made as it always was:
    ``Labeller(name, produces, config, run, reads=..., needs=..., rollouts=..., keeps_all=...)``."""

    produces: tuple[str, ...] = ()
    """The label sources it writes (what ``train.prm_sources`` may name). A method's name is one of the
    core model's provenance methods (``LABEL_METHODS``); a plugin writes under one of them with its own
    actor and names the source ``method:actor`` (e.g. ``model:my-verifier``)."""
    reads: tuple[str, ...] = ()
    """Methods whose output file it labels further when they run too (the judge adds its labels to the
    MC file, so one file carries both), in order of preference; else it reads the traces."""
    needs: tuple[str, ...] = ()
    """Methods that must run too (consensus compares MC with the judge)."""
    rollouts: str | None = None
    """The summary key counting its policy rollouts, for the label report's cost column."""
    keeps_all: bool = True
    """Whether its output holds every trace it read (with their earlier labels): then a file later in a
    chain carries the labels of the methods before it. A filter (consensus) keeps some traces only."""

    def __init__(
        self,
        name: str,
        produces: tuple[str, ...],
        config: type,
        run: Callable[..., dict[str, Any]] | str,
        reads: tuple[str, ...] = (),
        needs: tuple[str, ...] = (),
        rollouts: str | None = None,
        keeps_all: bool = True,
    ) -> None:
        """``name`` is the CLI command (``prmkit label NAME``), the recipe's ``labels.methods`` entry and
        the stage; ``config`` its typed config; ``run(config) -> summary`` the file-level job."""
        super().__init__(name, config, run, help=lead_summary(config), errors=USER_ERRORS)
        extras = {"produces": tuple(produces), "reads": tuple(reads), "needs": tuple(needs)}
        for key, value in (extras | {"rollouts": rollouts, "keeps_all": keeps_all}).items():
            object.__setattr__(self, key, value)  # frozen, as the dataclass's own __init__ sets fields


LABELLERS: Registry[Labeller] = Registry("labeller", entry_points="prmkit.labellers")
LABELLERS.register("mc", "prmkit.labeling.mc:LABELLER")
LABELLERS.register("progress", "prmkit.labeling.progress:LABELLER")
LABELLERS.register("binary_search", "prmkit.labeling.binary_search:LABELLER")
LABELLERS.register("mcts", "prmkit.labeling.mcts:LABELLER")
LABELLERS.register("judge", "prmkit.labeling.judge:LABELLER")
LABELLERS.register("consensus", "prmkit.labeling.consensus:LABELLER")


def labeller(name: str) -> Labeller:
    """The labeller registered as ``name`` (a one-line error with the closest name otherwise)."""
    return LABELLERS.get(name)


def producer(source: str) -> str | None:
    """The method that writes label source ``source`` (the source itself, else its method part:
    ``mc_hard:...`` -> ``mc``), or None for sources no labeller makes (gold, human, imported)."""
    method = source.partition(":")[0]
    exact = next((n for n in LABELLERS.names() if source in labeller(n).produces), None)
    return exact or next((n for n in LABELLERS.names() if method in labeller(n).produces), None)
