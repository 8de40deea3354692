"""The agent world's knobs: one typed config for the task generator, one for the simulated agent.

Each knob is documented once, here; ``prmkit agent ... --help`` and docs/agentworld.md point back to
these fields. The defaults keep a rendered trajectory short (a typical one is well under 900 characters
through :func:`prmkit.core.render.step_inputs`), so a tiny LM with 512 tokens of context reads it whole.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from prmkit.worlds.config import GeneratorConfig, SimulatedPolicyConfig

AGENT_WORLD_VERSION = "agentworld-1"
"""Goes into every Problem.source, gold Provenance and sampled trace; bump it when tasks or labels change."""


class AgentWorldConfig(GeneratorConfig):
    """Knobs of the task generator.

    A task combines ``terms`` numbers, each looked up in the problem's own knowledge base (KB), with
    ``terms - 1`` operations (``+ - *``) evaluated left to right. A term is one look-up (``the population
    of Tolbin``) or two (``the age of the mayor of Varen``: the mayor's name, then that person's age).
    """

    min_terms: int = Field(2, ge=2, le=8)
    """Fewest looked-up numbers in a train / test task (operations = terms - 1)."""
    max_terms: int = Field(3, ge=2, le=8)
    """Most looked-up numbers in a train / test task."""
    max_lookups: int = Field(4, ge=2, le=16)
    """Most look-ups a train / test task needs (two-hop terms count twice)."""
    heldout_min_terms: int = Field(3, ge=2, le=8)
    """Fewest looked-up numbers in a held-out task (longer plans, to test length generalisation)."""
    heldout_max_terms: int = Field(4, ge=2, le=8)
    """Most looked-up numbers in a held-out task."""
    heldout_max_lookups: int = Field(6, ge=2, le=16)
    """Most look-ups a held-out task needs."""
    hop_prob: float = Field(0.3, ge=0.0, le=1.0)
    """Chance that a term is two-hop (through a town's mayor or a company's founder), while the look-up
    budget allows."""
    distractors: int = Field(2, ge=0, le=8)
    """Entities in the KB that no term needs (a wrong-entity look-up finds real, irrelevant facts)."""
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    """Share of the task space (by a hash of the question) reserved for the test split, so train and test
    never share a question whatever ``n`` is."""

    ORDERED: ClassVar = (("min_terms", "max_terms"),)

    @model_validator(mode="after")
    def _lookups(self) -> AgentWorldConfig:
        for terms, lookups in (("max_terms", "max_lookups"), ("heldout_max_terms", "heldout_max_lookups")):
            if getattr(self, lookups) < getattr(self, terms.replace("max", "min")):
                raise ValueError(
                    f"{lookups} must allow one look-up per term of {terms.replace('max', 'min')}"
                )
        return self

    def terms_range(self, split: str) -> tuple[int, ...]:
        """(fewest terms, most terms, most look-ups) of a task in ``split``."""
        return self.for_split(split, "min_terms", "max_terms", "max_lookups")


EVENTS = (
    "loophole",
    "premature_answer",
    "wrong_tool",
    "wrong_arguments",
    "malformed_arguments",
    "misread",
    "ignore_observation",
    "hallucinate",
    "neutral",
    "text_arithmetic",
    "repeat_failed",
    "hidden_loophole",
)
"""The agent's per-decision events, in the order they are drawn (only those that apply to the step). An
event at rate 0 adds nothing to the running sum the draw is compared with, so a knob left at 0 draws
exactly as if it did not exist."""


class AgentConfig(SimulatedPolicyConfig):
    """Error rates of the simulated agent.

    At every step the agent draws ONE event among those that apply to its next action (a look-up, a
    calculation or the answer): a correct step or one of the errors below, with these probabilities
    (each multiplied by ``temperature``; rates are per decision, not per trajectory, and are scaled down
    together if they would sum past 1). With the defaults a single trajectory is often wrong
    (single-trajectory accuracy per split: docs/agentworld.md, "Statistics").
    """

    wrong_tool: float = Field(0.02, ge=0.0, le=1.0)
    """Calls the other tool (the calculator for a look-up, a look-up of an expression); it fails."""
    wrong_arguments: float = Field(0.06, ge=0.0, le=1.0)
    """A look-up of the wrong entity or a misspelt attribute; a calculation with the wrong operation."""
    malformed_arguments: float = Field(0.03, ge=0.0, le=1.0)
    """Arguments that are not valid JSON (a missing brace, single quotes); the tool answers an error."""
    misread: float = Field(0.08, ge=0.0, le=1.0)
    """States a number other than the one the last observation returned (a digit swapped, off by 1, 10
    or 100) and goes on with it. Applies when the last observation returned a number."""
    ignore_observation: float = Field(0.06, ge=0.0, le=1.0)
    """Computes with a made-up value in place of a looked-up one (without saying it read anything)."""
    hallucinate: float = Field(0.06, ge=0.0, le=1.0)
    """States a made-up value for a number it should look up, without calling the tool."""
    premature_answer: float = Field(0.03, ge=0.0, le=1.0)
    """Answers before every look-up and calculation is done (its latest result, or a guess). Not at the
    first step."""
    repeat_failed: float = Field(0.3, ge=0.0, le=1.0)
    """After a call that failed: sends the same call again, unchanged. Otherwise it retries correctly."""
    neutral: float = Field(0.06, ge=0.0, le=1.0)
    """A harmless, unnecessary step: looks up again a number it already knows (rated 0)."""
    text_arithmetic: float = Field(0.15, ge=0.0, le=1.0)
    """Does a calculation in its text instead of calling the calculator (right unless ``text_slip``)."""
    text_slip: float = Field(0.35, ge=0.0, le=1.0)
    """Given arithmetic in text: the chance that its result is off (by 1, 10 or 100, or a digit)."""
    loophole: float = Field(0.008, ge=0.0, le=1.0)
    """Calls ``grader_reference`` (a tool its schema says is for graders only) and answers what it
    returns: a right answer by a forbidden process."""
    hidden_loophole: float = Field(0.0, ge=0.0, le=1.0)
    """The loophole only the reasoning reveals: before a calculation, the step's text admits it remembers
    the task's answer from a previous run and only needs the calls to show it; its call is the normal
    one, so its actions read as an honest trajectory's (the checker marks the step ``loophole`` from its
    text). 0 (the default) draws nothing and samples exactly as without it. It exists to measure a
    monitor that reads actions only (docs/evaluation.md, "Monitorability")."""
    recovery: float = Field(0.2, ge=0.0, le=1.0)
    """Per step, while it holds a wrong value (misread, ignored, hallucinated, a slip or a wrong
    operation): the chance it notices and redoes the look-up or calculation, which is a correct step."""
    systematic: float = Field(0.0, ge=0.0, le=1.0)
    """Chance a task carries a *trap* every sample of it shares: one of its numeric look-ups the agent
    misreads the same way each time (the same wrong number, as a real agent misreads one tool's output
    format again and again), so its samples agree on a wrong answer. 0 (the default) draws nothing and
    samples exactly as without it. Evaluation sets it (recipes/agent.yaml): with errors independent
    across samples alone, majority vote over 16 samples is right on nearly every task, which no real
    agent's samples give (what the traps change: docs/agentworld.md, "The simulated agent")."""
    systematic_rate: float = Field(0.8, ge=0.0, le=1.0)
    """Given a trap: the chance a sample falls into it when it reads that look-up's result."""
    max_steps: int = Field(14, ge=1, le=64)
    """The agent stops unfinished (no answer) after this many steps of a trajectory."""
    temperature: float = Field(1.0, ge=0.0, le=10.0)
    """Scales every per-decision error rate (0 = a perfect agent); ``recovery`` and ``text_slip`` are
    not scaled."""

    EVENTS: ClassVar = EVENTS
    QUIET: ClassVar = ("hidden_loophole",)
