"""Seeded code tasks: a short function with one injected bug, visible tests and hidden tests.

A task draws a program family of its split (:mod:`prmkit.worlds.code.families`), its constants and one
bug site; the program is the family's function with that line replaced. Its tests are inputs drawn from
the family's range with the *reference* function's outputs (run by prmkit's interpreter): the visible
ones go into ``test_solution.py``, the hidden ones only the grader runs. A draw is kept only when the bug
fails at least one visible and one hidden test (so the agent can see it, and special-casing the visible
inputs cannot pass the grader); a misconception's wrong fix is kept only when a visible test shows it. A
share ``weak_tests`` of the tasks has one visible test, as an issue often comes with one failing test.

``Problem.metadata["code"]`` holds what the tools and the checker need: the family, the reference and
buggy programs, the bug's line and kind, the misconception's fix, the tests. ``Problem.answer`` is the
grader's receipt of the reference's hidden outputs (:func:`prmkit.worlds.code.tools.receipt`).

Determinism: problem ``i`` of a split draws from ``random.Random`` seeded by BLAKE2 of
``(CODE_WORLD_VERSION, seed, split, i)``. Train and test partition the task space by a digest of the
program and its visible tests, so they never share one whatever ``n`` is.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from prmkit.core.model import Problem
from prmkit.worlds.code.config import CODE_WORLD_VERSION, CodeWorldConfig
from prmkit.worlds.code.families import FAMILIES, Family, Site
from prmkit.worlds.code.interpreter import outputs
from prmkit.worlds.code.tools import SOLUTION, TESTS, TOOLS, receipt, source, test_line
from prmkit.worlds.splits import draw_in_split, problem_rng

FUNCTION = "f"


def _inputs(rng: random.Random, family: Family, visible: int, hidden: int) -> tuple[list[int], list[int]]:
    """Distinct visible inputs, and hidden ones distinct from them while the family's range allows."""
    values = list(range(family.inputs[0], family.inputs[1] + 1))
    shown = rng.sample(values, min(visible, len(values)))
    rest = [v for v in values if v not in shown]
    kept = rng.sample(rest, min(hidden, len(rest)))
    return sorted(shown), sorted(kept + [rng.choice(values) for _ in range(hidden - len(kept))])


def _fails(program: list[str], inputs: list[int], expected: tuple[int | str, ...]) -> bool:
    return outputs(source(program), tuple(inputs)) != expected


def _attempt(
    rng: random.Random, family: Family, site: Site, config: CodeWorldConfig, visible: int
) -> dict[str, Any] | None:
    """One draw of constants and tests for ``site``; None when the bug does not show in both test sets."""
    constants = family.constants(rng)
    reference = [line.format(**constants) for line in family.lines]
    program = list(reference)
    program[site.line] = site.buggy.format(**constants)
    shown, hidden = _inputs(rng, family, visible, config.hidden_tests)
    want_shown = outputs(source(reference), tuple(shown))
    want_hidden = outputs(source(reference), tuple(hidden))
    if not _fails(program, shown, want_shown) or not _fails(program, hidden, want_hidden):
        return None
    misfix = None if site.misfix is None else site.misfix.format(**constants)
    if misfix is not None and not _fails([*reference[: site.line], misfix, *reference[site.line + 1 :]],
                                         shown, want_shown):  # fmt: skip
        misfix = None
    return {
        "family": family.name,
        "constants": constants,
        "function": FUNCTION,
        "reference": reference,
        "program": program,
        "bug_line": site.line,
        "bug_kind": site.kind,
        "fix": reference[site.line],
        "misfix": misfix,
        "misconception": None if misfix is None else family.misconception,
        "visible": [[x, y] for x, y in zip(shown, want_shown, strict=True)],
        "hidden": [[x, y] for x, y in zip(hidden, want_hidden, strict=True)],
        "answer": receipt(want_hidden),
    }


def _draw(rng: random.Random, config: CodeWorldConfig, split: str) -> dict[str, Any]:
    visible = 1 if rng.random() < config.weak_tests else config.visible_tests
    while True:
        family = FAMILIES[rng.choice(config.families_of(split))]
        site = rng.choice(family.sites)
        for _ in range(20):
            task = _attempt(rng, family, site, config, visible)
            if task is not None:
                return task


def _signature(task: dict[str, Any]) -> str:
    """What splits train from test: the buggy program and its visible tests."""
    return "\n".join(task["program"]) + repr(task["visible"])


def listing(name: str, lines: list[str]) -> str:
    """A file as the task text shows it: its name, then its numbered lines."""
    return "\n".join([name, *(f"{i}| {line}" for i, line in enumerate(lines, 1))])


def generate_problem(
    index: int, seed: int = 0, config: CodeWorldConfig | None = None, split: str = "train"
) -> Problem:
    """Problem number ``index`` of a split (independent of how many others are generated): the buggy
    function and its visible tests in the text, the task in ``metadata["code"]``, the tools in
    ``Problem.tools``."""
    config = config or CodeWorldConfig()
    rng = problem_rng(CODE_WORLD_VERSION, seed, split, index)
    task = draw_in_split(split, config.test_fraction, lambda: _draw(rng, config, split), _signature)
    task.update(version=CODE_WORLD_VERSION, split=split)
    tests = [test_line(FUNCTION, x, y) for x, y in task["visible"]]
    text = (
        "Some tests of solution.py fail. Find the bug, fix it, run the tests and submit.\n\n"
        f"{listing(SOLUTION, task['program'])}\n\n{listing(TESTS, tests)}"
    )
    return Problem(
        id=f"codeworld-{split}-{seed}-{index:06d}",
        text=text,
        answer=str(task["answer"]),
        source=CODE_WORLD_VERSION,
        tools=copy.deepcopy(TOOLS),
        metadata={"code": task},
    )


def generate_problems(
    n: int, seed: int = 0, split: str = "train", config: CodeWorldConfig | None = None
) -> list[Problem]:
    """``n`` problems of ``split`` ("train", "test" or "heldout"); the same seed gives the same problems."""
    config = config or CodeWorldConfig()
    return [generate_problem(i, seed, config, split) for i in range(n)]
