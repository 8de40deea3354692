"""The simulated policy every world shares: its ``continue_from``, its sampling loop, the seeds of its draws.

A world's policy subclasses :class:`SimulatedPolicy` and supplies its own parts: how it reads a prefix
(:meth:`~SimulatedPolicy.read`: its beliefs after the steps, whoever wrote them), the answer a prefix
already gave, the text of steps its seeds hash, one continuation from a read prefix, and one complete
sample with what it meant to do. The rest is here, once: ``continue_from`` (the core Policy protocol) and
:class:`SampleTraces`, a world's ``sample_traces``, which records how it sampled in every trace's
``metadata["sampling"]``.

Seeds: ``continue_from`` draws from one ``random.Random`` per call seeded from (the policy's
``seed_offset``, the call's seed, the problem id, the prefix's length and a CRC of its text); a call
without a seed takes the next of a per-policy counter. ``sample_traces`` draws from one per problem seeded
from (``seed_offset``, seed, problem id), so a trace's draws depend only on (seed, problem id, its index)
and not on the other problems. Seeds are derived by BLAKE2 (:func:`prmkit.core.seeds.derive_seed`), never
``hash()``.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.core.seeds import derive_seed
from prmkit.worlds.checks import paused_gc


@dataclass(frozen=True)
class Sample:
    """One complete trace a simulated policy wrote (what goes into its :class:`~prmkit.core.model.Trace`)."""

    steps: list[Step]
    final_answer: str | None
    metadata: dict[str, Any]
    """What the policy meant to do (``injected`` errors and more), for tests; checkers never read it."""


class SimulatedPolicy:
    """Base of a world's simulated policy: ``continue_from`` (:class:`prmkit.core.protocols.Policy`) from
    the world's parts, which a subclass defines (and ``name``, ``seed_offset`` and a ``_calls`` counter)."""

    name: str
    seed_offset: int
    """Shifts every seed, so two policies with the same config draw differently."""
    _calls: int
    _rates: dict[str, float]
    """Each event's rate per decision (the config's ``rates()``), for :meth:`draw_event`."""

    def settings(self) -> dict[str, Any]:
        """Its knobs that differ from their defaults, its temperature always: how it samples, as traces
        record it (``metadata["sampling"]``, the process card's policy role)."""
        config = getattr(self, "config", None)
        knobs = {} if config is None else config.model_dump(mode="json", exclude_defaults=True)
        if config is not None and hasattr(config, "temperature"):
            knobs = {"temperature": config.temperature, **knobs}
        return knobs

    def draw_event(self, rng: random.Random, applicable: set[str]) -> str | None:
        """At most one event of a decision: each of ``applicable`` with its rate (``_rates``, the config's
        ``rates()``, in its ``EVENTS`` order), none (a right step) with what is left; one uniform draw."""
        u, acc = rng.random(), 0.0
        for event in type(self.config).EVENTS:  # type: ignore[attr-defined]
            if event in applicable:
                acc += self._rates[event]
                if u < acc:
                    return event
        return None

    def step_budget(self, position: int, max_steps: int | None) -> int:
        """How many steps a continuation from step ``position`` may take: what is left of the policy's own
        step limit (``config.max_steps``; at least one), and at most ``max_steps`` (beam search's one)."""
        budget = max(1, self.config.max_steps - position)  # type: ignore[attr-defined]
        return budget if max_steps is None else min(budget, max_steps)

    def read(self, problem: Problem, prefix: Sequence[Step]) -> Any:
        """What the policy believes after ``prefix`` (anyone's steps): where it continues from.
        ``read(problem, [])`` is where every sample starts."""
        raise NotImplementedError

    def prefix_answer(self, start: Any) -> str | None:
        """The final answer the read prefix already gave, or None."""
        raise NotImplementedError

    def rendered(self, prefix: Sequence[Step]) -> list[str]:
        """The steps' texts, as the seed of a continuation reads them."""
        raise NotImplementedError

    def outcomes(self, state: Any) -> dict[str, bool]:
        """The environment's checks of the trajectory that left ``state`` (``Continuation.outcomes``):
        none unless a world reports some (the code world: what CI says)."""
        return {}

    def continuation(
        self, problem: Problem, start: Any, rng: random.Random, position: int, max_steps: int | None
    ) -> Continuation:
        """One continuation from ``start`` (which it must not change) after ``position`` steps."""
        raise NotImplementedError

    def draw(self, problem: Problem, start: Any, rng: random.Random) -> Sample:
        """One complete sample from ``start`` (``read(problem, [])``; it must not change it)."""
        raise NotImplementedError

    def continue_from(
        self,
        problem: Problem,
        prefix: Sequence[Step],
        n: int = 1,
        *,
        seed: int | None = None,
        max_steps: int | None = None,
    ) -> list[Continuation]:
        """``n`` continuations of ``prefix`` (anyone's steps); errors in it are carried forward."""
        start = self.read(problem, prefix)
        answer = self.prefix_answer(start)
        if answer is not None:  # the prefix already answered
            checks = self.outcomes(start)
            return [c.model_copy(update={"outcomes": checks}) for c in self.answered(answer, n, seed)]
        rng = continuation_rng(self.seed_offset, self.next_seed(seed), problem, self.rendered(prefix))
        return [self.continuation(problem, start, rng, len(prefix), max_steps) for _ in range(n)]

    def answered(self, answer: str, n: int, seed: int | None) -> list[Continuation]:
        """The continuations of a prefix that already answered: nothing more, that answer."""
        return [Continuation(final_answer=answer) for _ in range(n)]

    def next_seed(self, seed: int | None) -> int:
        """``seed``, or without one the next of the policy's call counter."""
        if seed is None:
            seed, self._calls = self._calls, self._calls + 1
        return seed


@dataclass(frozen=True)
class SampleTraces:
    """A world's ``sample_traces``: complete traces of each problem from its simulated policy."""

    default: Callable[[], SimulatedPolicy]
    """The policy used when none is given (the world's, with its default config)."""
    generator: str
    """``Trace.generator`` of every trace (the policy and the world's version)."""

    def __call__(
        self,
        problems: Sequence[Problem],
        per_problem: int,
        seed: int = 0,
        policy: SimulatedPolicy | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Trace]:
        """``per_problem`` complete traces of each problem; a trace's draws depend only on (seed, problem
        id, its index). ``progress(1)`` is called after each problem."""
        policy = policy or self.default()
        sampling = sampling_settings(policy, seed, per_problem)
        out: list[Trace] = []
        with paused_gc():
            for problem in problems:
                start = policy.read(problem, [])
                rng = random.Random(derive_seed("sample", policy.seed_offset, seed, problem.id))
                for j in range(per_problem):
                    s = policy.draw(problem, start, rng)
                    out.append(
                        Trace(
                            id=f"{problem.id}-s{seed}-{j}",
                            problem=problem,
                            steps=s.steps,
                            final_answer=s.final_answer,
                            generator=self.generator,
                            metadata={**s.metadata, "sampling": dict(sampling)},
                        )
                    )
                if progress is not None:
                    progress(1)
        return out


def sampling_settings(policy: SimulatedPolicy, seed: int, per_problem: int) -> dict[str, Any]:
    """What ``Trace.metadata["sampling"]`` records of a sample: the policy, the seed, samples per problem
    and the policy's knobs that differ from their defaults (its temperature always), so a reader (the
    process card) can say how the traces were drawn."""
    return {"policy": policy.name, "seed": seed, "per_problem": per_problem, **policy.settings()}


def continuation_rng(seed_offset: int, seed: int, problem: Problem, prefix: Sequence[str]) -> random.Random:
    """The stream of ``continue_from``'s draws: from the policy's offset, the call's seed, the problem and
    the prefix (its length and the CRC of its rendered steps ``prefix``), so the same call always
    continues the same way."""
    tail = zlib.crc32("\n".join(prefix).encode())
    return random.Random(derive_seed("continue", seed_offset, seed, problem.id, len(prefix), tail))
