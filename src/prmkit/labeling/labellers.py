"""The labeller registry: one entry per labelling method, read by the CLI, recipes, the pipeline's plan
and the label report, so a method has one name and a new one is one registration plus its module.

An entry says what the method is called, which label sources it writes, which other methods' files it
reads (or needs), its typed config and its run function. Built-ins register by import path (their modules
load only when used); third-party packages register through the ``prmkit.labellers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prmkit.core.registry import Registry


@dataclass(frozen=True)
class Labeller:
    """One labelling method."""

    name: str
    """Its one name: CLI command (``prmkit label NAME``), recipe ``labels.methods`` entry, stage name."""
    produces: tuple[str, ...]
    """The label sources it writes (what ``train.prm_sources`` may name). A method's name is one of the
    core model's provenance methods (``LABEL_METHODS``); a plugin writes under one of them with its own
    actor and names the source ``method:actor`` (e.g. ``model:my-verifier``)."""
    config: type
    """Its typed config (``prmkit label NAME --help`` is generated from it)."""
    run: Callable[..., dict[str, Any]]
    """``run(config) -> summary``: the file-level job behind the command."""
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
