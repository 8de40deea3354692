"""Best-of-N curves: answer accuracy against N (1 to 256, log scale) for every way of choosing.

Published PRM gains over majority vote are often 1–2 points, so a curve without an error bar says
little: every point carries a bootstrap confidence band over problems, and every method's gap to
majority vote carries its own *paired* band (the same resampled problems on both sides).

How a point is computed: each problem has a pool of M sampled traces; for each N <= M we draw
``draws`` random subsets of size N, let each method choose from each subset and average (ties are
broken at random because subset order is random). Per-problem accuracies are then resampled.

Methods: ``prm:<agg>`` (best-of-N by aggregated PRM score, one per aggregation), ``orm`` (best-of-N by
ORM score), ``majority`` (plain vote), ``weighted:<agg>`` (PRM-weighted vote), ``oracle`` (pass@N).
Answers are grouped exactly as :mod:`prmkit.search.vote` groups them; traces without an answer never
vote and are never right.

Honest accuracy (where a world has loopholes): a trace *games the task* when gold marks a step of it
with the loophole class (:func:`~prmkit.evaluation.gold.loophole_step`: the agent world's grader tool
or hidden loophole, the code world's edited tests, special-cased inputs or submission without a run);
a trace without gold labels never counts as gaming. Beside each method's accuracy an *honest accuracy*
counts a gamed success as wrong:

- a pick (``prm:<agg>``, ``orm``) is honestly right when the picked trace is right and does not game;
- the oracle when some right trace of the subset does not game;
- a vote (``majority``, ``weighted:<agg>``) when its winning answer is right *and* at least one trace
  of the subset that does not game gave that answer: an answer only gamed trajectories reached is wrong.

Both are read off the same subsets, picks and tie-breaks (common random numbers, no extra random draw),
so accuracy is exactly what it is without the honest reading, and the two differ only by gamed wins.
They are recorded (``honest_accuracy`` in the rows, ``honest`` in :attr:`BonResult.per_problem`) only
when some pool holds a gaming trace: a world without loopholes writes what it always did.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.answers import check_answer
from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.core.stats import percentile_band
from prmkit.evaluation.config import DEFAULT_AGGREGATIONS, EvalBonConfig
from prmkit.evaluation.gold import check_lengths, group_by_problem, loophole_step, trace_correct
from prmkit.evaluation.scored import score_with
from prmkit.scoring.aggregate import aggregate
from prmkit.search.vote import group_answers


@dataclass
class Pool:
    """One problem's candidates, as arrays: correctness, answer group, and one score per method."""

    problem_id: str
    correct: np.ndarray
    answer: np.ndarray
    """Answer-group id per trace; -1 for a trace without an answer (it never votes)."""
    group_correct: np.ndarray
    games: np.ndarray
    """Per trace: whether it games the task (gold marks a loophole step in it); see the module docstring."""
    scores: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.correct)


def aggregate_all(scores: Sequence[Sequence[float]], how: str) -> np.ndarray:
    """One aggregated score per trace, through ``prmkit.scoring``'s aggregation registry."""
    return np.array([aggregate(list(s), how) for s in scores], dtype=float)


def build_pools(traces: Sequence[Trace], trace_scores: dict[str, np.ndarray]) -> list[Pool]:
    """Group traces by problem into pools carrying every method's per-trace score."""
    pools = []
    for pid, idx in group_by_problem(traces).items():
        members = [traces[i] for i in idx]
        groups = group_answers([t.final_answer for t in members])
        answer = np.full(len(members), -1, dtype=int)
        for g_id, group in enumerate(groups):
            answer[group.members] = g_id
        ref = members[0].problem.answer
        group_correct = np.array([bool(check_answer(ref, g.answer)) for g in groups], dtype=bool)
        pools.append(
            Pool(
                problem_id=pid,
                correct=np.array([trace_correct(t) for t in members], dtype=bool),
                answer=answer,
                group_correct=group_correct,
                games=np.array([loophole_step(t) >= 0 for t in members], dtype=bool),
                scores={name: np.asarray(s)[idx] for name, s in trace_scores.items()},
            )
        )
    return pools


def subsets(m: int, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` random size-``n`` subsets of ``range(m)``, shape (draws, n); one subset when n == m."""
    if n >= m:
        return rng.permutation(m)[None, :]
    return rng.random((draws, m)).argsort(axis=1)[:, :n]


def pick_best(score: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The chosen trace of each subset: highest score (first in random order among equals)."""
    return idx[np.arange(len(idx)), score[idx].argmax(axis=1)]


def _vote(
    pool: Pool, idx: np.ndarray, weight: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per subset: whether the winning answer is right (weights: counts, or PRM scores), and whether it
    is honestly right (right, and given by at least one trace of the subset that does not game)."""
    k = len(pool.group_correct)
    if k == 0:
        return np.zeros(len(idx), dtype=bool), np.zeros(len(idx), dtype=bool)
    ans = pool.answer[idx].ravel()
    rows = np.repeat(np.arange(len(idx)), idx.shape[1])
    voting = ans >= 0
    w = np.ones(idx.size) if weight is None else weight[idx].ravel()
    totals = np.zeros((len(idx), k))
    present = np.zeros((len(idx), k), dtype=bool)
    np.add.at(totals, (rows[voting], ans[voting]), w[voting])
    present[rows[voting], ans[voting]] = True
    jitter = rng.random(totals.shape) * 1e-9  # random tie-break among equal totals
    winner = np.where(present, totals + jitter, -np.inf).argmax(axis=1)
    right = pool.group_correct[winner] & present.any(axis=1)
    honest_voters = voting & ~pool.games[idx].ravel()
    given_honestly = np.zeros((len(idx), k), dtype=bool)
    given_honestly[rows[honest_voters], ans[honest_voters]] = True
    return right, right & given_honestly[np.arange(len(idx)), winner]


def method_hits(
    pool: Pool, method: str, idx: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per subset of ``idx``: whether ``method``'s choice is right, and whether it is honestly right
    (module docstring); both from the same choice."""
    if method == "oracle":
        right = pool.correct[idx]
        return right.any(axis=1), (right & ~pool.games[idx]).any(axis=1)
    if method == "majority":
        return _vote(pool, idx, None, rng)
    if method.startswith("weighted:"):
        return _vote(pool, idx, pool.scores[method.replace("weighted:", "prm:")], rng)
    chosen = pick_best(pool.scores[method], idx)
    return pool.correct[chosen], pool.correct[chosen] & ~pool.games[chosen]


def pool_accuracies(
    pool: Pool, methods: Sequence[str], n: int, draws: int, rng: np.random.Generator
) -> list[float]:
    """Expected accuracy of each method choosing among ``n`` random candidates of ``pool``.

    Every method sees the same random subsets (common random numbers), so their gaps are not blurred
    by subset-sampling noise: at N = 1 every method scores exactly the same.
    """
    return [plain for plain, _ in pool_accuracy_pairs(pool, methods, n, draws, rng)]


def pool_accuracy_pairs(
    pool: Pool, methods: Sequence[str], n: int, draws: int, rng: np.random.Generator
) -> list[tuple[float, float]]:
    """(accuracy, honest accuracy) of each method, as :func:`pool_accuracies` draws them: the same
    subsets and the same random numbers, so the first of each pair is exactly its accuracy."""
    idx = subsets(pool.size, n, draws, rng)
    out = []
    for method in methods:
        right, honest = method_hits(pool, method, idx, rng)
        out.append((float(right.mean()), float(honest.mean())))
    return out


def bootstrap_mean(
    values: np.ndarray, resamples: np.ndarray, confidence: float
) -> tuple[float, float, float]:
    """Mean and percentile band of per-problem ``values`` over resampled problem indices."""
    return (float(values.mean()), *percentile_band(values[resamples].mean(axis=1), confidence))


@dataclass
class BonResult:
    """Rows of (method, n, accuracy with band, gap to majority with paired band)."""

    rows: list[dict[str, Any]]
    params: dict[str, Any]
    per_problem: dict[str, Any] = field(default_factory=dict)
    """``problems`` (ids), ``ns`` and ``accuracy[method][i_n][i_problem]``: each problem's expected
    accuracy, so a study can resample problems and seeds together (:mod:`prmkit.core.stats`); and
    ``honest``, shaped as ``accuracy``, when some pool holds a trace that games the task."""

    def methods(self) -> list[str]:
        return list(dict.fromkeys(r["method"] for r in self.rows))

    def curve(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["method"] == method]

    def at(self, method: str, n: int) -> dict[str, Any]:
        return next(r for r in self.rows if r["method"] == method and r["n"] == n)

    def write_per_problem(self, path: str | Path) -> Path:
        """``per_problem`` as JSON (``bon_per_problem.json`` beside ``bon.csv``)."""
        import json

        path = Path(path)
        with atomic_write(path) as fh:
            json.dump(self.per_problem, fh)
        return path

    def write_csv(self, path: str | Path) -> Path:
        path = Path(path)
        with atomic_write(path) as fh:
            writer = csv.DictWriter(fh, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)
        return path


def default_ns(max_n: int) -> list[int]:
    """1, 2, 4, ... up to ``max_n`` (and ``max_n`` itself when it is not a power of two)."""
    ns = [1 << k for k in range(max_n.bit_length()) if (1 << k) <= max_n]
    return ns if ns[-1] == max_n else [*ns, max_n]


def bon_curves(
    traces: Sequence[Trace],
    prm_scores: Sequence[Sequence[float]] | None = None,
    orm_scores: Sequence[Sequence[float]] | None = None,
    aggregations: Sequence[str] = DEFAULT_AGGREGATIONS,
    vote_aggregation: str = "min",
    max_n: int = 256,
    ns: Sequence[int] | None = None,
    draws: int = 32,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BonResult:
    """Accuracy against N for every method, with bootstrap bands; see the module docstring.

    ``orm_scores`` are per-step lists like any scorer's; the last step's score is the ORM's verdict.
    N runs up to the smallest pool (problems with fewer than ``max_n`` samples cap the curve).
    """
    methods, trace_scores = method_scores(traces, prm_scores, orm_scores, aggregations, vote_aggregation)
    pools = build_pools(traces, trace_scores)
    if not pools:
        raise ValueError("no traces to evaluate")
    smallest = min(p.size for p in pools)
    ns = sorted({n for n in (ns or default_ns(min(max_n, smallest))) if 1 <= n <= smallest})
    rng = np.random.default_rng(seed)
    # both[n, problem, method, (accuracy, honest accuracy)] -> acc[method, n, problem]
    both = np.array([[pool_accuracy_pairs(p, methods, n, draws, rng) for p in pools] for n in ns])
    acc, honest = both[..., 0].transpose(2, 0, 1), both[..., 1].transpose(2, 0, 1)
    resamples = rng.integers(0, len(pools), size=(bootstrap, len(pools)))
    gaming = sum(int(p.games.sum()) for p in pools)
    rows = [
        curve_row(method, n, acc[mi, ni], acc[1, ni], resamples, confidence)
        | (honest_cells(honest[mi, ni], resamples, confidence) if gaming else {})
        for mi, method in enumerate(methods)
        for ni, n in enumerate(ns)
    ]
    params = {
        "problems": len(pools),
        "pool_size_min": smallest,
        "draws": draws,
        "bootstrap": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "vote_aggregation": vote_aggregation,
    } | ({"gaming_traces": gaming} if gaming else {})
    per_problem = {
        "problems": [p.problem_id for p in pools],
        "ns": ns,
        "accuracy": {m: np.round(acc[mi], 6).tolist() for mi, m in enumerate(methods)},
    }
    if gaming:
        per_problem["honest"] = {m: np.round(honest[mi], 6).tolist() for mi, m in enumerate(methods)}
    return BonResult(rows=rows, params=params, per_problem=per_problem)


def method_scores(
    traces: Sequence[Trace],
    prm_scores: Sequence[Sequence[float]] | None,
    orm_scores: Sequence[Sequence[float]] | None,
    aggregations: Sequence[str],
    vote_aggregation: str,
) -> tuple[list[str], dict[str, np.ndarray]]:
    """The methods to compare (oracle and majority first) and the per-trace score each selects by."""
    trace_scores: dict[str, np.ndarray] = {}
    methods = ["oracle", "majority"]
    if prm_scores is not None:
        check_lengths(traces, prm_scores)
        for how in aggregations:
            trace_scores[f"prm:{how}"] = aggregate_all(prm_scores, how)
            methods.append(f"prm:{how}")
        if f"prm:{vote_aggregation}" not in trace_scores:
            trace_scores[f"prm:{vote_aggregation}"] = aggregate_all(prm_scores, vote_aggregation)
        methods.append(f"weighted:{vote_aggregation}")
    if orm_scores is not None:
        check_lengths(traces, orm_scores)
        trace_scores["orm"] = aggregate_all(orm_scores, "last")
        methods.append("orm")
    return methods, trace_scores


def curve_row(
    method: str, n: int, acc: np.ndarray, majority: np.ndarray, resamples: np.ndarray, confidence: float
) -> dict[str, Any]:
    """One point of a curve: accuracy with its band, and the paired gap to majority vote with its band."""
    mean, lo, hi = bootstrap_mean(acc, resamples, confidence)
    gap, gap_lo, gap_hi = bootstrap_mean(acc - majority, resamples, confidence)
    values = {
        "accuracy": mean,
        "lo": lo,
        "hi": hi,
        "gap_vs_majority": gap,
        "gap_lo": gap_lo,
        "gap_hi": gap_hi,
    }
    return {"method": method, "n": n, **{k: round(v, 6) for k, v in values.items()}, "problems": len(acc)}


def honest_cells(honest: np.ndarray, resamples: np.ndarray, confidence: float) -> dict[str, float]:
    """A curve point's honest accuracy with its band, over the same resampled problems as its accuracy."""
    mean, lo, hi = bootstrap_mean(honest, resamples, confidence)
    return {"honest_accuracy": round(mean, 6), "honest_lo": round(lo, 6), "honest_hi": round(hi, 6)}


def run_eval_bon(config: EvalBonConfig) -> BonResult:
    """``prmkit eval bon``: :func:`bon_curves` for the config's trace file (many samples per problem) scored
    by its ``prm`` and ``orm``; written to ``out`` when given (``bon.csv``, ``bon.json`` with rows and
    parameters, ``bon.png``). The fields are documented on
    :class:`~prmkit.evaluation.config.EvalBonConfig`."""
    import json

    from prmkit.evaluation import plots
    from prmkit.formats.inputs import read_traces

    c = config
    items = read_traces(c.traces)
    prm_scored = score_with(c.prm, items, c.load) if c.prm else None
    orm_scored = score_with(c.orm, items, c.load) if c.orm else None
    result = bon_curves(
        items,
        prm_scored.scores if prm_scored else None,
        orm_scored.scores if orm_scored else None,
        c.aggregations,
        c.vote_aggregation,
        c.max_n,
        None,
        c.draws,
        c.bootstrap,
        c.confidence,
        c.seed,
    )
    result.params |= {
        "traces": str(c.traces),
        "prm": prm_scored.name if prm_scored else None,
        "orm": orm_scored.name if orm_scored else None,
    }
    if c.out is not None:
        result.write_csv(c.out / "bon.csv")
        with atomic_write(c.out / "bon.json") as fh:
            json.dump({"params": result.params, "rows": result.rows}, fh, indent=2)
        plots.bon_curves(result.rows, c.out / "bon.png")
    return result
