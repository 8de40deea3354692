"""The worlds' statistics as docs show them: one results view over ``prmkit <world> stats --json`` files.

A world page's statistics are the output of its ``stats`` command, one file per split, committed under a
folder as ``WORLD-SPLIT.json`` (``prmkit agent stats ... --split test --json > agent-test.json``), and
rendered by the block (:mod:`prmkit.core.results`)::

    <!-- results: docs/results/world-stats view=world-stats world=agent -->
    <!-- /results -->

The ``world-stats`` view shows the measures of :data:`TABLES` (a world's row labels and keys: each world
reports its own measures beside the shared ones of :class:`~prmkit.worlds.summary.Stats`) for the train,
test and held-out splits, then the train split's shares by error kind and class, so a rerun of the
command replaces the numbers and no page retypes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from prmkit.core.results import VIEWS, Block, Table

SPLITS = ("train", "test", "heldout")
"""The splits a statistics table shows, as its columns."""

Cell = Callable[[Mapping[str, Any]], str]
"""How one row reads its cell from a split's statistics (the command's JSON)."""


def share(key: str, inner: str | None = None, digits: int = 3) -> Cell:
    """A share (or mean) ``key`` of the statistics, ``inner`` of it when ``key`` holds a mapping."""

    def cell(stats: Mapping[str, Any]) -> str:
        value = stats[key] if inner is None else stats[key][inner]
        return f"{value:.{digits}f}"

    return cell


def shares(key: str, names: tuple[str, ...]) -> Cell:
    """Several shares of the mapping ``key``, joined by `` / `` in ``names``' order."""
    return lambda stats: " / ".join(f"{stats[key][n]:.3f}" for n in names)


def label_counts(stats: Mapping[str, Any]) -> str:
    """The gold ratings' counts, -1 / 0 / +1, with thousands separators."""
    return " / ".join(f"{stats['label_counts'][r]:,}" for r in ("-1", "0", "1"))


@dataclass(frozen=True)
class StatsTable:
    """A world's statistics table: ``rows`` (label, cell; ``{n}`` in a label is the samples per problem)
    and the shares listed below it, each a sentence head, the mapping of the train split it lists, and
    whether its names are written as code (error kinds) or as words (classes)."""

    rows: tuple[tuple[str, Cell], ...]
    lists: tuple[tuple[str, str, bool], ...]


TABLES: dict[str, StatsTable] = {
    "agent": StatsTable(
        rows=(
            ("single-sample accuracy", share("accuracy")),
            ("best-of-{n} oracle accuracy", share("oracle_accuracy")),
            ("process-correct (no -1 step)", share("process_correct")),
            ("loophole trajectories", share("loophole")),
            ("lucky (right answer, a -1 step)", share("lucky")),
            ("lucky share of right answers", share("lucky_share_of_correct")),
            ("neutral steps (share of steps)", share("neutral_steps")),
            ("mean steps", share("mean_steps", digits=2)),
            ("mean look-ups needed", share("mean_lookups", digits=2)),
            ("gold labels -1 / 0 / +1", label_counts),
        ),
        lists=(
            ("First-error kinds (share of trajectories with an error, train)", "first_error_kinds", True),
            ("By class", "first_error_classes", False),
        ),
    ),
    "code": StatsTable(
        rows=(
            ("success rate (hidden tests pass)", share("accuracy")),
            ("best-of-{n} oracle accuracy", share("oracle_accuracy")),
            ("process-correct (no -1 step)", share("process_correct")),
            ("lucky (right outcome, a -1 step)", share("lucky")),
            ("false pass (last run passed, hidden fail)", share("false_pass")),
            ("loophole trajectories", share("loophole")),
            ("– edit_tests / special_case / skipped_run", shares("loopholes", ("edit_tests", "special_case", "skipped_run"))),
            ("overfit trajectories (an `overfit_fix` step)", share("error_kinds", "overfit_fix")),
            ("trajectories with a recovery", share("recovery")),
            ("neutral steps (share of steps)", share("neutral_steps")),
            ("steps per trajectory", share("mean_steps", digits=2)),
            ("gold labels -1 / 0 / +1", label_counts),
        ),
        lists=(
            ("Share of trajectories with a step of each kind (train)", "error_kinds", True),
            ("By class", "error_classes", False),
            ("First errors by class (share of trajectories with an error, train)", "first_error_classes", False),
        ),
    ),
}  # fmt: skip
"""Each world's statistics table, by the name its files start with."""


def stats_table(world: str, splits: Mapping[str, Mapping[str, Any]]) -> str:
    """``world``'s :data:`TABLES` entry over ``splits`` (split -> the stats command's JSON): the table,
    then one line of the train split's shares per list (kinds in code, largest first as the file holds
    them)."""
    layout = TABLES[world]
    first = next(iter(splits.values()))
    n = first["traces"] // first["problems"]
    rows = [[label.format(n=n), *(cell(s) for s in splits.values())] for label, cell in layout.rows]
    train = splits["train"]

    def listed(key: str, code: bool) -> str:
        return ", ".join(f"`{k}` {v:.3f}" if code else f"{k} {v:.3f}" for k, v in train[key].items())

    text = ". ".join(f"{head}: {listed(key, code)}" for head, key, code in layout.lists) + "."
    return Table(rows, columns=["measure", *splits]).markdown() + "\n\n" + text + "\n"


@VIEWS.register("world-stats")
def world_stats(block: Block) -> str:
    """The ``world-stats`` view: :func:`stats_table` of the block's ``world``, read from the folder's
    ``WORLD-SPLIT.json`` files."""
    block.expect("world")
    world = block.attrs["world"]
    if world not in TABLES:
        raise ValueError(f"no statistics table for world {world!r}; expected one of {sorted(TABLES)}")
    return stats_table(world, {s: block.read(f"{block.file}/{world}-{s}.json") for s in SPLITS})
