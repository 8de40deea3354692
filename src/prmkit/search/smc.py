"""Particle filtering (sequential Monte Carlo) over steps, resampled by PRM weights.

Puri et al. 2025, "A Probabilistic Inference Approach to Inference-Time Scaling of LLMs using
Particle-Based Monte Carlo Methods" (arXiv:2502.01618), as its_hub implements it
(``its_hub.algorithms.particle_gibbs.ParticleFiltering``: ``ParticleGibbs`` with one iteration and no
reference particle). Its choices, kept here:

- **Particles.** ``n`` particles start from the empty prefix. Each round every unfinished particle grows
  by one step (``continue_from(..., max_steps=1)``; the copies of one ancestor share one call with
  ``n`` = their count, so a policy draws them as distinct samples) and is scored in one scorer call.
- **Weights.** A particle's weight is the logit of its prefix's score, ``log(s / (1 - s))`` with ``s``
  clipped to ``[1e-7, 1 - 1e-7]`` (its_hub's ``_inv_sigmoid``), and the resampling probabilities are
  the softmax of those logits divided by ``temperature`` (its_hub: 1, i.e. probabilities proportional
  to the odds ``s / (1 - s)``). ``s`` is the prefix's step scores aggregated with ``aggregation``;
  the default ``last``, the PRM's score of the latest step given the whole prefix, is the paper's
  "model aggregation". Scores outside ``[0, 1]`` are refused: they are not probabilities.
- **Resampling.** Every round ``n`` particles are drawn from those probabilities, with replacement
  (its_hub's ``random.choices``: ``multinomial``; ``systematic`` resampling, one uniform draw and
  ``n`` evenly spaced pointers, keeps each count within one of ``n`` times its probability). its_hub
  resamples finished particles with the others at their final weight: one drawn twice stays as two
  copies and generates nothing more, one not drawn is gone. With ``keep_finished`` a finished particle
  instead leaves the population and is kept for the final choice (as beam search keeps its answered
  beams), and only the unfinished ones are resampled, into the slots left.
- **Choice.** The particle with the highest final weight (its_hub's ``SelectionMethod.ARGMAX``, its
  default; the first of equals). its_hub resamples once more after every particle has finished; that
  draw can only lose the best particle and is skipped here.

It stops when every particle has finished or after ``max_depth`` rounds; particles still open then are
finished with one full rollout per ancestor (the copies of one in one call), counted like every step.

Length policy (beam search's): a particle the scorer can no longer read whole is dropped, never weighed
on a prefix's scores, and counted (``details["dropped_overlong"]``); the result has no choice when every
particle outgrew the model. Seeded: problem ``k`` resamples with ``numpy.random.default_rng(seed + k)``
(modulo 2**64, so a negative seed works too) and asks the policy with seeds derived from it, so a run
repeats exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import Policy, StepScorer
from prmkit.scoring import load_scorer
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.scorer import overlong_policy
from prmkit.search.common import Compute, SearchResult, chosen_result, score_readable
from prmkit.search.config import SmcConfig
from prmkit.search.files import search_files
from prmkit.search.parallel import CONCURRENCY, SharedScorer, map_problems
from prmkit.search.searches import Search

if TYPE_CHECKING:  # numpy loads when a search runs, not when the CLI lists its commands
    import numpy as np

RESAMPLING = ("multinomial", "systematic")
CLIP = 1e-7
"""Scores are clipped to ``[CLIP, 1 - CLIP]`` before the logit (its_hub's value)."""


def particle_weights(scores: Sequence[float], temperature: float = 1.0) -> np.ndarray:
    """Resampling probabilities: ``softmax(logit(clip(s)) / temperature)`` over the particles' scores."""
    import numpy as np

    s = np.asarray(scores, dtype=float)
    if not len(s):
        raise ValueError("particle_weights needs at least one score")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, found {temperature}")
    outside = s[(s < 0) | (s > 1) | np.isnan(s)]
    if len(outside):
        raise ValueError(
            f"SMC reads scores as probabilities in [0, 1], found {float(outside[0])!r}: use a scorer whose "
            "scores are probabilities (a PRM's P(correct), a world oracle)"
        )
    s = np.clip(s, CLIP, 1 - CLIP)
    logits = np.log(s / (1 - s)) / temperature
    e = np.exp(logits - logits.max())
    return e / e.sum()


def resample(probabilities: Sequence[float], k: int, rng: np.random.Generator, scheme: str) -> list[int]:
    """``k`` indices drawn with ``probabilities`` (ascending): ``multinomial`` (independent draws) or
    ``systematic`` (pointers ``(u + j) / k`` for one ``u ~ U[0, 1)``)."""
    import numpy as np

    p = np.asarray(probabilities, dtype=float)
    if scheme == "multinomial":
        counts = rng.multinomial(k, p / p.sum())
        return [i for i, c in enumerate(counts) for _ in range(int(c))]
    if scheme == "systematic":
        edges = np.cumsum(p / p.sum())
        edges[-1] = 1.0  # no pointer falls past the last edge through rounding
        pointers = (rng.random() + np.arange(k)) / k
        return [int(i) for i in np.searchsorted(edges, pointers, side="right")]
    raise ValueError(f"resampling must be one of {RESAMPLING}, found {scheme!r}")


@dataclass(eq=False)
class _Particle:
    steps: list[Step]
    final_answer: str | None = None
    done: bool = False
    scores: list[float] | None = field(default_factory=list)
    """None: the scorer could not read the particle whole (it outgrew the model)."""


def _as_trace(problem: Problem, p: _Particle, name: str, i: int) -> Trace:
    return Trace(
        id=f"{problem.id}/smc/{i}",
        problem=problem,
        steps=p.steps,
        final_answer=p.final_answer,
        generator=name,
    )


def _grow(
    problem: Problem,
    policy: Policy,
    groups: Sequence[tuple[_Particle, int]],
    seed: int,
    compute: Compute,
    rollout: bool = False,
) -> list[_Particle]:
    """Each ancestor's ``count`` children: one step each (a whole rollout with ``rollout``)."""
    children = []
    for g, (parent, count) in enumerate(groups):
        conts = policy.continue_from(
            problem, parent.steps, n=count, seed=seed + 7919 * g, max_steps=None if rollout else 1
        )
        compute.add_continuations(conts)
        for cont in conts:
            done = rollout or cont.finished or not cont.steps
            children.append(_Particle(parent.steps + list(cont.steps), cont.final_answer, done))
    return children


def _readable(
    problem: Problem, scorer: StepScorer, particles: list[_Particle], name: str, compute: Compute
) -> list[_Particle]:
    """Score ``particles`` in one call; the ones the scorer read whole (the module's length policy)."""
    traces = [_as_trace(problem, p, name, i) for i, p in enumerate(particles)]
    for p, row in zip(particles, score_readable(scorer, traces, compute), strict=True):
        p.scores = row
    return [p for p in particles if p.scores is not None]


@dataclass(frozen=True)
class SmcOptions:
    """The knobs of one SMC run (documented in :class:`~prmkit.search.config.SmcConfig`)."""

    n: int = 16
    max_depth: int = 40
    aggregation: str = "last"
    temperature: float = 1.0
    resampling: str = "multinomial"
    keep_finished: bool = False


def smc_one(
    problem: Problem, policy: Policy, scorer: StepScorer, options: SmcOptions, seed: int = 0
) -> SearchResult:
    """Particle filtering for one problem (the module docstring's algorithm)."""
    o = options
    if o.n < 1 or o.resampling not in RESAMPLING:
        raise ValueError(f"need n >= 1 and resampling in {RESAMPLING}, found n={o.n}, {o.resampling!r}")
    import numpy as np

    rng = np.random.default_rng(seed % 2**64)
    name, compute = getattr(policy, "name", "policy"), Compute()
    groups: list[tuple[_Particle, int]] = [(_Particle(steps=[]), o.n)]
    finished: list[_Particle] = []  # its_hub: the finished particles drawn (with copies); else all kept
    depth = dropped = 0
    while groups and depth < o.max_depth:
        children = _grow(problem, policy, groups, seed * 1_000_003 + depth * 1009, compute)
        readable = _readable(problem, scorer, children, name, compute)
        dropped += len(children) - len(readable)
        depth += 1
        if o.keep_finished:
            finished += [p for p in readable if p.done]
            pool, slots = [p for p in readable if not p.done], o.n - len(finished)
        else:
            pool, slots = finished + readable, o.n
        if o.keep_finished and (not pool or slots < 1):
            groups = []
            break
        if not o.keep_finished and all(p.done for p in pool):
            finished, groups = pool, []
            break
        probabilities = particle_weights([aggregate(p.scores, o.aggregation) for p in pool], o.temperature)
        drawn = Counter(resample(probabilities, slots, rng, o.resampling))
        if not o.keep_finished:
            finished = [pool[i] for i, c in sorted(drawn.items()) if pool[i].done for _ in range(c)]
        groups = [(pool[i], c) for i, c in sorted(drawn.items()) if not pool[i].done]
    if groups:
        done = _grow(problem, policy, groups, seed * 1_000_003 + 104729, compute, rollout=True)
        readable = _readable(problem, scorer, done, name, compute)
        dropped += len(done) - len(readable)
        finished += readable
    best = max(finished, key=lambda p: aggregate(p.scores, o.aggregation), default=None)
    distinct = list({id(p): p for p in finished}.values())
    return chosen_result(
        problem,
        "smc",
        _as_trace(problem, best, name, 0) if best is not None else None,
        best.scores if best is not None and best.scores is not None else [],
        aggregation=o.aggregation,
        compute=compute,
        candidates=[_as_trace(problem, p, name, i) for i, p in enumerate(distinct)],
        details={
            "n": o.n, "depth": depth, "aggregation": o.aggregation, "temperature": o.temperature,
            "resampling": o.resampling, "keep_finished": o.keep_finished, "finished": len(finished),
            "distinct_finished": len(distinct), "dropped_overlong": dropped,
        },
    )  # fmt: skip


def smc(
    problems: Sequence[Problem],
    policy: Policy,
    scorer: StepScorer,
    n: int = 16,
    max_depth: int = 40,
    aggregation: str = "last",
    seed: int = 0,
    *,
    temperature: float = 1.0,
    resampling: str = "multinomial",
    keep_finished: bool = False,
    concurrency: int = CONCURRENCY,
    show_progress: bool = False,
) -> list[SearchResult]:
    """Particle filtering with ``n`` particles over problems; problem ``k`` uses seed ``seed + k``,
    ``concurrency`` problems at once sharing the scorer (the results do not depend on it)."""
    options = SmcOptions(n, max_depth, aggregation, temperature, resampling, keep_finished)
    with overlong_policy(scorer, "skip"):
        shared = SharedScorer(scorer)

        def one(k: int) -> SearchResult:
            return smc_one(problems[k], policy, shared, options, seed + k)

        stop = getattr(policy, "stop", None)
        return map_problems(one, len(problems), concurrency, "particle filtering", show_progress, stop)


def run_smc(config: SmcConfig, show_progress: bool = True) -> dict[str, Any]:
    """``prmkit smc``: :func:`smc` over the config's problem file; writes its results and returns the
    summary."""
    policy, scorer = config.policy.build_policy(), load_scorer(config.scorer, load=config.load)
    return search_files(
        config,
        lambda problems: smc(
            problems, policy, scorer, config.n, config.max_depth, config.aggregation, config.seed,
            temperature=config.temperature, resampling=config.resampling,
            keep_finished=config.keep_finished, concurrency=config.concurrency, show_progress=show_progress,
        ),
    )  # fmt: skip


SEARCH = Search("smc", SmcConfig, run_smc)
"""Particle filtering (sequential Monte Carlo) over steps, resampled by PRM weights."""
