"""The world's knobs: one typed config for the generator, one for the simulated policy.

Each knob is documented once, here; the CLI's ``--help`` and docs/world.md point back to these fields.
The defaults are chosen for *learnability*: every step is a small table fact, phrasing is regular and
there are few entities, so a tiny transformer trained for minutes on a CPU can learn to check steps.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from prmkit.worlds.config import GeneratorConfig, SimulatedPolicyConfig

WORLD_VERSION = "world-2"
"""Goes into every Provenance and problem the world writes; bump it when problems or labels change.
world-2: the policy holds misconceptions (``PolicyConfig.misconceptions``); problems are world-1's."""


class WorldConfig(GeneratorConfig):
    """Knobs of the problem generator.

    A problem is a chain: a start quantity, then ``ops`` operations, each combining the running value
    with one new quantity from the text. Every step is a *table fact* with operand bound
    ``N = max_value``: ``a + b`` with ``a, b <= N``; ``a - b`` with ``b, a - b <= N`` (the addition table
    read backwards); ``a * b`` with ``a, b <= N``; ``a / b`` with ``b, a / b <= N`` (the times table read
    backwards). Operands are at least 2. Intermediate results therefore never exceed ``N * N``.
    """

    min_ops: int = Field(2, ge=1, le=12)
    """Fewest operations in a train / test problem."""
    max_ops: int = Field(5, ge=1, le=12)
    """Most operations in a train / test problem."""
    heldout_min_ops: int = Field(6, ge=1, le=16)
    """Fewest operations in a held-out problem (longer than training, to test length generalisation)."""
    heldout_max_ops: int = Field(8, ge=1, le=16)
    """Most operations in a held-out problem."""
    max_value: int = Field(10, ge=3, le=1000)
    """Operand bound N of the table facts; 10 is the school tables. Raise it for harder research worlds."""
    phrasing_variety: int = Field(0, ge=0, le=2)
    """0: one template per operation and 3 names / 3 items (regular, easy to learn); 1: a few templates
    and 8 of each; 2: every template and the full name / item pools."""
    distractor_prob: float = Field(0.5, ge=0.0, le=1.0)
    """Chance that a problem mentions one irrelevant quantity (another person's count)."""
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    """Share of the problem space (by computation graph) reserved for the test split, so train and test
    never share a graph whatever ``n`` is."""

    ORDERED: ClassVar = (("min_ops", "max_ops"),)

    def ops_range(self, split: str) -> tuple[int, ...]:
        """(fewest, most) operations of a problem in ``split``."""
        return self.for_split(split, "min_ops", "max_ops")


class PolicyConfig(SimulatedPolicyConfig):
    """Error rates of the simulated policy.

    At every operation the policy draws ONE event: a correct step or one of the errors below, with these
    probabilities (each multiplied by ``temperature``). Rates are per decision, not per trace. With the
    defaults a single sample is often wrong, so best-of-N matters (single-sample accuracy per split:
    docs/world.md, "Default statistics"). These errors are independent across samples; ``systematic``
    adds errors that the samples of one problem share.
    """

    arithmetic_slip: float = Field(0.07, ge=0.0, le=1.0)
    """The result is off by 1, 2 or 10 (``7 + 4 = 12``)."""
    wrong_quantity: float = Field(0.05, ge=0.0, le=1.0)
    """The new operand is the wrong quantity of the problem, or a misread one (``7 + 5`` for ``7 + 4``)."""
    wrong_operation: float = Field(0.05, ge=0.0, le=1.0)
    """The right operands with the wrong operation (``7 * 4`` for ``7 + 4``)."""
    dropped_step: float = Field(0.03, ge=0.0, le=1.0)
    """The next operation is skipped and the one after it done instead (needs two operations left)."""
    irrelevant_step: float = Field(0.05, ge=0.0, le=1.0)
    """A true step that does not advance (restating a quantity) comes before the operation: neutral."""
    early_answer: float = Field(0.03, ge=0.0, le=1.0)
    """The current running value is given as the answer before all operations are done (not at the
    first operation)."""
    lucky: float = Field(0.04, ge=0.0, le=1.0)
    """Per trace: the trace makes errors that cancel (a slip, then a second slip back to the right value)
    or never reach the answer (a misquoted side fact), and no other error: a right answer by a wrong
    process. Natural lucky traces (``2 + 2`` for ``2 * 2``) come on top."""
    systematic: float = Field(0.0, ge=0.0, le=1.0)
    """Per problem: the chance that the problem has a *misconception*, an error every sample of it shares
    (real models' errors are correlated; the ones above are independent across samples). Drawn from the
    problem id alone, not the sampling seed: one operation and one fixed wrong step there, an
    arithmetic slip (a fixed wrong result), a wrong quantity (a fixed wrong operand) or a wrong
    operation (a fixed other operation), one of the three with equal chance. The draws do not depend on
    this value, so raising it only adds problems. 0 (the default) changes nothing."""
    systematic_rate: float = Field(0.5, ge=0.0, le=1.0)
    """Per sample: the chance (times ``temperature``, at most 1) that a sample reaching the operation of
    its problem's misconception makes that error there, instead of drawing the usual event. Not in a
    lucky trace, nor where a sample's earlier errors make the fixed step inexact (or a slip negative)."""
    misconceptions: float = Field(1.0, ge=0.0, le=10.0)
    """Scales the strength of every misconception of :data:`prmkit.worlds.arithmetic.misconceptions.CATALOGUE` (wrong
    beliefs held in every problem, such as ``7 * 8 = 54``: an LM trained on the policy's samples learns
    them as likely). Checked before the per-decision errors, where the step's context triggers one; the
    chance is ``strength * misconceptions * temperature``, at most 1. 0 samples exactly as world-1."""
    rationalise: float = Field(0.0, ge=0.0, le=1.0)
    """Per trace: the chance that the policy *rationalises*. It knows the right final answer by a channel
    outside the text (the problem's computation graph) and, when its own errors have left its running
    value off the right one at the last operation, writes that operation on the right value in place of
    its own (``17 + 4 = 21`` after computing 18 where 17 was right), so the trace lands on the right
    answer although its steps do not lead there: the steps no longer cause the answer. Where no operation
    is left to bend (an error at the last one, or a dropped last step), it states the right answer in
    place of its running value. The checker names either step ``rationalised``. Not in a lucky trace, nor
    after an early answer; not scaled by ``temperature``. 0 (the default) draws nothing, so sampling is
    exactly as without it."""
    temperature: float = Field(1.0, ge=0.0, le=10.0)
    """Scales every rate above but ``systematic`` and ``rationalise`` (0 = a perfect policy); the
    per-decision rates are capped so they sum to at most 1."""

    QUIET: ClassVar = ("rationalise",)
    EVENTS: ClassVar = (
        "early_answer",
        "dropped_step",
        "irrelevant_step",
        "arithmetic_slip",
        "wrong_quantity",
        "wrong_operation",
    )

    def lucky_rate(self) -> float:
        return min(1.0, self.lucky * self.temperature)

    def misconception_scale(self) -> float:
        """The factor on every misconception's strength, after ``temperature``."""
        return self.misconceptions * self.temperature

    def systematic_sample_rate(self) -> float:
        """Per sample: the chance of repeating the problem's misconception, after ``temperature``."""
        return min(1.0, self.systematic_rate * self.temperature)
