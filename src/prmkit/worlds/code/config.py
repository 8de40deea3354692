"""The code world's knobs: one typed config for the task generator, one for the simulated agent.

Each knob is documented once, here; ``prmkit code ... --help`` and docs/codeworld.md point back to these
fields.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from prmkit.core.registry import suggest
from prmkit.worlds.code.families import FAMILIES
from prmkit.worlds.config import GeneratorConfig, SimulatedPolicyConfig

CODE_WORLD_VERSION = "codeworld-2"
"""Goes into every Problem.source, gold Provenance and sampled trace; bump it when tasks or labels change."""

FAMILY_NAMES = tuple(FAMILIES)
"""Every program family the generator knows (:data:`prmkit.worlds.code.families.FAMILIES`)."""


class CodeWorldConfig(GeneratorConfig):
    """Knobs of the task generator.

    A task is one short function of a program family with one injected bug (an off-by-one, a wrong
    operator, comparison or constant on one line), visible tests the agent can run and hidden tests only
    the grader runs. Held-out tasks come from families that train / test tasks never use.
    """

    families: list[str] = Field(
        default_factory=lambda: ["sum_multiples", "count_multiples", "distance", "power", "digit_sum"]
    )
    """Program families of train / test tasks."""
    heldout_families: list[str] = Field(default_factory=lambda: ["collatz", "triangle"])
    """Program families of held-out tasks (programs the agent's train tasks never show)."""
    visible_tests: int = Field(3, ge=1, le=8)
    """Tests in ``test_solution.py``, which the agent runs (and could edit: a loophole)."""
    weak_tests: float = Field(0.3, ge=0.0, le=1.0)
    """Chance a task's test file holds ONE visible test (one the bug fails) instead of ``visible_tests``,
    as an issue often comes with one failing test. Against one test a patch of the symptom (the returned
    value offset by what the test missed) passes CI and fails the hidden tests; 0 gives every task
    ``visible_tests``."""
    hidden_tests: int = Field(5, ge=1, le=16)
    """Tests only the grader runs: the outcome is whether the submitted program passes them."""
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    """Share of the task space (by a hash of the program and its visible tests) reserved for the test
    split, so train and test never share a task whatever ``n`` is."""

    @field_validator("families", "heldout_families")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("expected at least one program family")
        for name in value:
            if name not in FAMILY_NAMES:
                raise ValueError(
                    f"unknown program family {name!r} (known: {', '.join(FAMILY_NAMES)}){suggest(name, FAMILY_NAMES)}"
                )
        return value

    def families_of(self, split: str) -> list[str]:
        """The families a task of ``split`` is drawn from."""
        return self.heldout_families if split == "heldout" else self.families


EVENTS = (
    "edit_tests",
    "special_case",
    "premature_submit",
    "wrong_line",
    "syntax_break",
    "reread",
    "symptom_patch",
    "claim_without_run",
    "skip_run",
)
"""The agent's per-decision events, in the order they are drawn (only those that apply to the step). An
event at rate 0 adds nothing to the running sum the draw is compared with. ``wrong_plan``, ``misread``,
``repeat_failed`` and ``recovery`` are drawn on their own (each applies at one kind of step)."""


class CodeAgentConfig(SimulatedPolicyConfig):
    """Error rates of the simulated coding agent.

    Its honest plan: state the suspected line and run the tests; read the result; edit that line; run
    the tests again; submit when they pass. At every step it draws ONE event among those that apply to its
    next action (rates per decision, each times ``temperature``, scaled down together if they would sum
    past 1). Measured rates: docs/codeworld.md, "Statistics".
    """

    wrong_plan: float = Field(0.12, ge=0.0, le=1.0)
    """The first message's plan suspects another line than the bug's; its first edit then goes there."""
    misread: float = Field(0.06, ge=0.0, le=1.0)
    """After a run in which some tests fail: states that all of them pass."""
    wrong_line: float = Field(0.05, ge=0.0, le=1.0)
    """Edits a line that is not the bug's (a plausible change to a constant or operator there)."""
    syntax_break: float = Field(0.05, ge=0.0, le=1.0)
    """Writes the intended line with a syntax error (a missing colon or parenthesis)."""
    repeat_failed: float = Field(0.3, ge=0.0, le=1.0)
    """After an edit the tests showed wrong: writes the same edit again, unchanged."""
    premature_submit: float = Field(0.03, ge=0.0, le=1.0)
    """Submits although the last run showed failing tests. Not before the first edit."""
    claim_without_run: float = Field(0.04, ge=0.0, le=1.0)
    """Right after an edit: states that the tests pass, without running them, and submits."""
    reread: float = Field(0.05, ge=0.0, le=1.0)
    """Reads the code again although nothing changed since it last read it (a harmless step, rated 0)."""
    symptom_patch: float = Field(0.2, ge=0.0, le=1.0)
    """After a failing run: patches the symptom, not the cause: offsets the returned value by what the
    first failing test missed (``return total + 3``). It passes a task's visible tests when they are one
    (``CodeWorldConfig.weak_tests``) and fails the hidden ones: what CI calls a fix and is not."""
    edit_tests: float = Field(0.012, ge=0.0, le=1.0)
    """Loophole: edits the expected value of a failing visible test to what the program returns."""
    special_case: float = Field(0.012, ge=0.0, le=1.0)
    """Loophole: adds ``if n == INPUT: return EXPECTED`` for each failing visible test."""
    skip_run: float = Field(0.015, ge=0.0, le=1.0)
    """Loophole: submits right after an edit without running the tests (and without saying they pass)."""
    misconception: float = Field(1.0, ge=0.0, le=10.0)
    """Scales the strength of every misconception of :data:`prmkit.worlds.code.families.MISCONCEPTIONS`
    (a wrong belief about how to fix a bug, held in every task of a family: ``range(1, n)`` "fixed" to
    ``range(1, n - 1)``): the chance it writes that wrong fix at its first attempt on the bug's line is
    ``strength * misconception * temperature``, at most 1. 0 never writes one."""
    recovery: float = Field(0.35, ge=0.0, le=1.0)
    """Per step where it applies: reverts an edit of a wrong line once the tests show it failed, re-reads
    the code after a failed fix, or runs the tests once more after misreading them."""
    systematic: float = Field(0.0, ge=0.0, le=1.0)
    """Chance a task carries a *trap* every sample of it shares: the agent misreads the first test run of
    that task as passing and submits the program as it found it, without the re-run its ``recovery``
    would give an ordinary misread (as a real agent misreads one runner's output the same way each time),
    so its samples agree on a wrong answer. 0 (the default) draws nothing and samples exactly as without
    it. Evaluation sets it (recipes/code.yaml): with errors independent across samples alone, majority
    vote over 16 samples is right on every task (docs/codeworld.md)."""
    systematic_rate: float = Field(0.8, ge=0.0, le=1.0)
    """Given a trap: the chance a sample falls into it at its first test run."""
    max_steps: int = Field(10, ge=1, le=64)
    """The agent stops unfinished (no submission) after this many steps of a trajectory."""
    temperature: float = Field(1.0, ge=0.0, le=10.0)
    """Scales every per-decision error rate and ``wrong_plan``, ``misread`` and the misconceptions (0 = a
    perfect agent); ``recovery`` and ``repeat_failed`` are not scaled."""

    EVENTS: ClassVar = EVENTS
    QUIET: ClassVar = ("systematic", "systematic_rate")

    def scaled(self, name: str) -> float:
        """A rate drawn on its own (``wrong_plan``, ``misread``), after ``temperature``, at most 1."""
        return min(1.0, getattr(self, name) * self.temperature)
