"""One way every prmkit study states its uncertainty: an :class:`Estimate` (mean, interval, and which
random components the interval counts), made by :func:`crossed_bootstrap`, :func:`nested_bootstrap` (runs
nested in draws, e.g. RL seeds inside (π0, PRM) draws) or :func:`t_interval`.

Why crossed: a study trains ``S`` seeds (whole runs) and evaluates each on the *same* ``P`` problems, so
its number carries two independent noises. A t-interval over seeds alone ignores that every seed saw the
same problems, so it understates what a fresh problem set would change; resampling problems alone
ignores training noise, which often dominates at a handful of seeds. :func:`crossed_bootstrap` resamples
both at once (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat. 1(2)): each resample draws a
multiset of problems, shared by all seeds, and a multiset of seeds. It is mildly conservative (the
seed × problem interaction is counted about twice).

Few seeds: a percentile bootstrap of 3 or 5 seed values runs narrow twice over: its variance of a mean of
S values is (S-1)/S of the unbiased one, and its tails are the normal's where a mean of S values has
Student's with S-1 degrees of freedom (in tests/core/test_stats.py's simulation, where seeds carry most of
the variance, the plain percentile interval covered 83 % at 3 seeds and 92 % at 5). So every interval
resampled over seeds (or over :func:`nested_bootstrap`'s draws) is widened about its point
(:func:`_few_seeds`): the missing seed variance is added back and the seed part taken at Student's
quantile with S-1 degrees of freedom, the problem part at P-1, so it becomes the t-interval over seeds
when seeds are everything and stays the bootstrap when problems are (95 % and 97 % coverage at 3 and 5
seeds in that simulation); its ``method`` says by how much. :func:`t_interval` is the choice when only
whole runs can be resampled.

A statistic is a :data:`Stat`: it sees problem *weights* rather than resampled copies, so one call
scores a whole chunk of resamples as matrix products (:func:`mean_stat`, :func:`ratio_stat`) or one sort
(:func:`weighted_auroc`, :func:`weighted_auprc`), and a paired comparison is the difference of two
statistics on the same weights (:func:`paired`), so both sides see the same problems and seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

__all__ = [
    "Estimate",
    "Stat",
    "auc",
    "crossed_bootstrap",
    "item_weights",
    "mean_stat",
    "multiplicity",
    "paired",
    "percentile_band",
    "ratio_stat",
    "single_run_range",
    "t_interval",
    "weighted_auprc",
    "weighted_auroc",
]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval and what noise the interval counts.

    ``draws`` names each random component and how many independent draws of it the study made
    (``{"seed": 5, "problem": 48}``), so a reader sees what the interval could and could not see;
    ``method`` says how the interval was made.
    """

    mean: float
    low: float
    high: float
    draws: dict[str, int]
    method: str

    def cell(self, scale: float = 100, digits: int = 1, signed: bool = False, collapse: bool = True) -> str:
        """``'74.4 [70.1, 78.0]'`` (signed: ``'+3.1 [-0.4, +6.5]'``), the numbers times ``scale``; a point
        with no interval (``low == high == mean``) prints alone unless ``collapse`` is False (an interval
        that was computed and has no width: ``'100.0 [100.0, 100.0]'``), and an undefined mean as ``n/a``."""
        if math.isnan(self.mean):
            return "n/a"
        spec = f"{'+' if signed else ''}.{digits}f"

        def num(x: float) -> str:
            return "n/a" if math.isnan(x) else format(x * scale, spec)

        if collapse and self.low == self.high == self.mean:
            return num(self.mean)
        return f"{num(self.mean)} [{num(self.low)}, {num(self.high)}]"

    @classmethod
    def of(cls, value: Mapping[str, Any]) -> Estimate:
        """An estimate from its JSON form in a results file: ``mean`` with ``low`` and ``high`` (both
        None or absent: a point), ``draws`` and ``method`` when the file kept them."""
        mean = float(value["mean"])
        low, high = value.get("low"), value.get("high")
        if low is None or high is None:
            low = high = mean
        return cls(mean, float(low), float(high), dict(value.get("draws") or {}), value.get("method") or "")

    def excludes(self, value: float = 0.0) -> bool:
        """Whether the interval lies wholly on one side of ``value`` (e.g. a difference excluding 0)."""
        return self.low > value or self.high < value

    def to_dict(self) -> dict:
        """JSON-able: mean, low, high, draws, method; ``Estimate(**e.to_dict())`` gives ``e`` back (an
        undefined number stays nan, which Python's ``json`` writes as ``NaN``)."""
        return {
            "mean": float(self.mean),
            "low": float(self.low),
            "high": float(self.high),
            "draws": dict(self.draws),
            "method": self.method,
        }


Stat = Callable[[int, np.ndarray], np.ndarray]
"""stat(seed_index, weights) -> values: weights is an (R, P) array of non-negative problem multiplicities
(one row per bootstrap resample; a row of ones is the data as observed); returns the (R,) statistic of
that seed's run on each reweighted problem set."""


def _percent(confidence: float) -> str:
    return f"{confidence * 100:.10g} %"


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), found {confidence}")


def _evaluate(stat: Stat, seed: int, weights: np.ndarray) -> np.ndarray:
    out = np.asarray(stat(seed, weights), dtype=float)
    if out.shape != (len(weights),):
        raise ValueError(
            f"stat(seed {seed}, weights of shape {weights.shape}) returned shape {out.shape}; "
            f"a Stat returns one value per row of weights, shape ({len(weights)},)"
        )
    return out


def crossed_bootstrap(
    stat: Stat,
    seeds: int,
    problems: int,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    rng: int = 0,
    draws: dict[str, int] | None = None,
    chunk: int = 250,
) -> Estimate:
    """Interval of the mean over seeds of ``stat``, resampling seeds and problems together: percentile,
    widened for few seeds.

    The point estimate is the mean over seeds of ``stat(s, ones((1, problems)))``. Resample ``r`` draws
    problem multiplicities ``w_r ~ Multinomial(problems, uniform)``, shared by every seed because the
    seeds were evaluated on the same problems, and seeds ``s_r1 .. s_rS`` with replacement; its value is
    ``mean_j stat(s_rj, w_r)``. With one seed only problems are resampled, with one problem only seeds.

    ``stat`` is called once per seed per ``chunk`` resamples (S x R evaluations, not S^2 x R), the drawn
    seeds then picked per row. Resamples where ``stat`` is undefined (nan, e.g. an AUROC whose resample
    holds no positive) are left out and counted in ``method``. With two seeds or more the percentile
    interval is widened for few seeds (:func:`_few_seeds`, the module's docstring), and ``method`` says so.
    """
    for name, n in (("seeds", seeds), ("problems", problems), ("resamples", resamples), ("chunk", chunk)):
        if n < 1:
            raise ValueError(f"{name} must be at least 1, found {n}")
    _check_confidence(confidence)
    draws = dict(draws) if draws is not None else {"seed": seeds, "problem": problems}
    points = np.array([_evaluate(stat, s, np.ones((1, problems)))[0] for s in range(seeds)])
    point = float(np.mean(points))
    if seeds == 1 and problems == 1:
        return Estimate(point, point, point, draws, "one seed on one problem: nothing to resample")
    over = {(True, True): "crossed bootstrap over seed × problem", (True, False): "bootstrap over seed"}
    method = over.get((seeds > 1, problems > 1), "bootstrap over problem")
    method += f", {resamples} resamples, {_percent(confidence)}"
    if math.isnan(point):
        return Estimate(point, math.nan, math.nan, draws, method + "; undefined on the data as observed")

    gen = np.random.default_rng(rng)
    uniform = np.full(problems, 1 / problems)
    values = np.empty(resamples)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        if problems > 1:
            weights = gen.multinomial(problems, uniform, size=size).astype(float)
        else:
            weights = np.ones((size, 1))
        per_seed = np.stack([_evaluate(stat, s, weights) for s in range(seeds)])  # (S, size)
        if seeds > 1:
            picked = gen.integers(0, seeds, size=(seeds, size))
            values[start : start + size] = per_seed[picked, np.arange(size)].mean(axis=0)
        else:
            values[start : start + size] = per_seed[0]

    defined = values[~np.isnan(values)]
    if len(defined) < resamples:
        method += f"; {resamples - len(defined)} of {resamples} resamples undefined and left out"
    if len(defined) == 0:
        return Estimate(point, math.nan, math.nan, draws, method)
    low, high = np.quantile(defined, [(1 - confidence) / 2, (1 + confidence) / 2])
    if seeds > 1:
        low, high, note = _few_seeds(point, low, high, defined, points, problems - 1, confidence, "seeds")
        method += note
    return Estimate(point, float(low), float(high), draws, method)


def _few_seeds(
    point: float,
    low: float,
    high: float,
    values: np.ndarray,
    top: np.ndarray,
    rest_df: int,
    confidence: float,
    unit: str,
) -> tuple[float, float, str]:
    """The percentile interval ``[low, high]`` of bootstrap ``values`` widened for a top level of few
    units (seeds, or draws): (low, high, the sentence ``method`` gains).

    ``top`` holds the G units' values on the data as observed, s² their variance (ddof 1). Resampling G
    values gives their mean the variance (G-1)/G · s²/G, so the bootstrap's variance V_b lacks s²/G²;
    with it restored, the top part is ``s²/G`` (G-1 degrees of freedom) and the rest (problems) is
    ``V_b + s²/G² - s²/G`` (``rest_df``). Each part is taken at its own Student-t quantile and the two
    half-widths added in quadrature, ``h = √(t²_{G-1} s²/G + t²_rest rest)``; both arms of the interval,
    measured from the point, are stretched by ``k = h / (z √V_b)``, never shrunk, so the bootstrap's
    asymmetry stays. Seeds only (one problem): the t-interval over the G values; problems only: the
    bootstrap. Pooling the two parts into one Welch–Satterthwaite df instead covered about 91 % at 3
    seeds in the simulation of tests/core/test_stats.py (tried while writing this, not kept as a test):
    that df is estimated from the same 3 values, so it runs high exactly when s² runs low.
    """
    g = len(top)
    s2 = float(np.var(top, ddof=1))
    boot = float(np.var(values, ddof=1)) if len(values) > 1 else 0.0
    if not (s2 > 0 and boot > 0):  # nan, or nothing between the units or in the resamples to widen
        return low, high, ""
    part = s2 / g
    rest = max(boot + s2 / g**2 - part, 0.0)
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    t_rest = _t_quantile(rest_df, confidence) if rest_df >= 1 else z
    half = math.sqrt(_t_quantile(g - 1, confidence) ** 2 * part + t_rest**2 * rest)
    k = max(1.0, half / (z * math.sqrt(boot)))
    low, high = point - k * max(point - low, 0.0), point + k * max(high - point, 0.0)
    return low, high, f"; widened ×{k:.2f} for {g} {unit} (their part at Student t, {g - 1} df)"


def nested_bootstrap(
    stat: Stat,
    draws: Sequence[tuple[Sequence[int], int]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    rng: int = 0,
    counted: dict[str, int] | None = None,
    chunk: int = 250,
) -> Estimate:
    """Percentile interval of the mean over runs of ``stat``, resampling every level a run's number came
    from: the draws (a (π0, PRM) pair each), then inside each drawn draw its runs (RL seeds) and its
    problems, crossed: one multinomial weight vector over the draw's problems, shared by all of its runs
    (and by every statistic a caller pairs on the same call), so what the runs of a draw share cancels in
    a paired difference. A draw drawn twice gets two independent inner resamples (a two-stage bootstrap,
    Davison & Hinkley 1997, ch. 3, hierarchical data: mildly conservative with many draws; with two or
    three the draw stage is a percentile bootstrap of a handful of values and runs narrow).

    ``draws[g] = (runs, problems)``: the run indices ``stat`` knows in draw g and its problem count;
    ``stat(run, weights)`` is :data:`Stat` ((R, P_g) weights -> (R,)). One draw: the
    crossed bootstrap of :func:`crossed_bootstrap`. Resamples where ``stat`` is nan are
    left out and counted in the method. ``counted``: the :attr:`Estimate.draws` to state.

    Widened for few units at the top (:func:`_few_seeds`): the draws' means when there are several draws,
    the runs when there is one; the rest's degrees of freedom are the problems' (summed over draws, less
    one each)."""
    if not draws or any(len(runs) < 1 or problems < 1 for runs, problems in draws) or resamples < 1:
        raise ValueError(f"nested_bootstrap needs draws with runs and problems, and resamples; found {draws}")
    _check_confidence(confidence)
    most = max(p for _, p in draws)
    shown = {
        "draw": len(draws),
        "run": sum(len(r) for r, _ in draws),
        **({"problem": most} if most > 1 else {}),
    }
    counted = counted or shown
    by_draw = [[_evaluate(stat, i, np.ones((1, p)))[0] for i in runs] for runs, p in draws]
    point = float(np.mean([v for values in by_draw for v in values]))
    if len(draws) == 1 and len(draws[0][0]) == 1 and draws[0][1] == 1:
        return Estimate(point, point, point, counted, "one run on one problem: nothing to resample")
    method = (
        f"nested bootstrap over {len(draws)} draw(s), then runs x problems within each, {resamples} resamples"
    )
    method += f", {_percent(confidence)}"
    if math.isnan(point):
        return Estimate(point, math.nan, math.nan, counted, method + "; undefined on the data as observed")
    gen = np.random.default_rng(rng)
    values = np.empty(resamples)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        total, count = np.zeros(size), np.zeros(size)
        for slot in gen.integers(0, len(draws), size=(len(draws), size)):
            for g, (runs, p) in enumerate(draws):
                rows = np.flatnonzero(slot == g)
                if not len(rows):
                    continue
                weights = gen.multinomial(p, np.full(p, 1 / p), size=len(rows)).astype(float)
                per_run = np.stack([_evaluate(stat, i, weights) for i in runs])
                picked = gen.integers(0, len(runs), size=(len(runs), len(rows)))
                total[rows] += per_run[picked, np.arange(len(rows))].sum(axis=0)
                count[rows] += len(runs)
        values[start : start + size] = total / count
    defined = values[~np.isnan(values)]
    if len(defined) < resamples:
        method += f"; {resamples - len(defined)} of {resamples} resamples undefined and left out"
    if not len(defined):
        return Estimate(point, math.nan, math.nan, counted, method)
    low, high = np.quantile(defined, [(1 - confidence) / 2, (1 + confidence) / 2])
    if len(draws) > 1:
        top, unit = np.array([np.mean(v) for v in by_draw]), "draws"
        rest_df = sum(p - 1 for _, p in draws)
    else:
        top, unit, rest_df = np.array(by_draw[0]), "runs", draws[0][1] - 1
    if len(top) > 1:
        low, high, note = _few_seeds(point, low, high, defined, top, rest_df, confidence, unit)
        method += note
    return Estimate(point, float(low), float(high), counted, method)


def paired(a: Stat, b: Stat) -> Stat:
    """``a - b`` on the same seeds and problem weights: a paired comparison, whose interval counts only
    the noise the two sides do not share."""
    return lambda s, w: a(s, w) - b(s, w)


def _per_seed(arrays: Sequence[np.ndarray], what: str) -> np.ndarray:
    out = np.asarray([np.asarray(v, dtype=float) for v in arrays])
    if out.ndim != 2:
        raise ValueError(f"{what}: one (P,) array per seed, all of one length; found shape {out.shape}")
    return out


def mean_stat(values: Sequence[np.ndarray]) -> Stat:
    """values[s] is a (P,) array of per-problem values for seed s (e.g. best-of-N accuracy per problem):
    the weighted mean ``(W @ v) / W.sum(1)``."""
    table = _per_seed(values, "mean_stat values")
    return lambda s, w: (w @ table[s]) / w.sum(axis=1)


def ratio_stat(numerators: Sequence[np.ndarray], denominators: Sequence[np.ndarray]) -> Stat:
    """Per-problem sums (P,) per seed -> ``(W @ num) / (W @ den)``, nan where den is 0: a ratio of totals
    (e.g. correct steps over all steps), where problems with more items weigh more."""
    num, den = (
        _per_seed(numerators, "ratio_stat numerators"),
        _per_seed(denominators, "ratio_stat denominators"),
    )
    if num.shape != den.shape:
        raise ValueError(f"ratio_stat: numerators {num.shape} and denominators {den.shape} differ in shape")

    def stat(s: int, w: np.ndarray) -> np.ndarray:
        top, bottom = w @ num[s], w @ den[s]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1), np.nan)

    return stat


def item_weights(weights: np.ndarray, problem_of: np.ndarray) -> np.ndarray:
    """Expand (R, P) problem weights to (R, n) item weights: item i belongs to problem problem_of[i] (ints
    in [0, P)), so all the steps or traces of a problem are drawn together, as the problem was."""
    weights, problem_of = np.asarray(weights), np.asarray(problem_of)
    if problem_of.ndim != 1 or not np.issubdtype(problem_of.dtype, np.integer):
        raise ValueError(
            f"problem_of must be a 1-D integer array, found {problem_of.dtype} {problem_of.shape}"
        )
    p = weights.shape[-1]
    if len(problem_of) and (problem_of.min() < 0 or problem_of.max() >= p):
        raise ValueError(f"problem_of holds indices outside [0, {p}): {problem_of.min()}..{problem_of.max()}")
    return weights[..., problem_of]


def _grouped(
    scores: np.ndarray, positive: np.ndarray, weights: np.ndarray, descending: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(R, G) positive and negative weight of each group of equal scores, groups in score order."""
    scores, positive = np.asarray(scores, dtype=float), np.asarray(positive, dtype=bool)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    if scores.ndim != 1 or positive.shape != scores.shape or w.ndim != 2 or w.shape[1] != len(scores):
        raise ValueError(
            f"scores {scores.shape} and positive {positive.shape} must be (n,), weights (n,) or (R, n); "
            f"found weights {np.shape(weights)}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("scores hold nan or infinite values: a ranking of them is undefined")
    if (w < 0).any():
        raise ValueError("weights must be non-negative (they are multiplicities)")
    order = np.argsort(-scores if descending else scores, kind="stable")
    ranked, ws, pos = scores[order], w[:, order], positive[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    return np.add.reduceat(ws * pos, starts, axis=1), np.add.reduceat(ws * ~pos, starts, axis=1)


def weighted_auroc(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC (Mann-Whitney, ties count half) of ``scores`` (n,) for the boolean labels ``positive`` (n,),
    item i carrying weight ``weights[:, i]`` ((R, n) or (n,)): the weighted chance that a positive
    outscores a negative, for all R rows from one sort and cumulative sums. Returns (R,) ((1,) for 1-D
    weights), nan where a row has zero positive or zero negative weight. Higher score = more positive."""
    rows = np.atleast_2d(np.asarray(weights)).shape[0]
    if len(scores) == 0:
        return np.full(rows, np.nan)
    pos, neg = _grouped(scores, positive, weights, descending=False)
    below = np.cumsum(neg, axis=1) - neg  # negative weight strictly below each group's score
    wins = (pos * (below + neg / 2)).sum(axis=1)
    pairs = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pairs > 0, wins / np.where(pairs > 0, pairs, 1), np.nan)


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a score of ``positive`` exceeds one of ``negative``), ties counting half: the two-sample
    Mann-Whitney AUC, :func:`weighted_auroc` at unit weights (exact: its numerator counts halves). nan when
    either sample is empty."""
    pos, neg = np.asarray(positive, dtype=float), np.asarray(negative, dtype=float)
    if not len(pos) or not len(neg):
        return math.nan
    labels = np.r_[np.ones(len(pos), dtype=bool), np.zeros(len(neg), dtype=bool)]
    return float(weighted_auroc(np.r_[pos, neg], labels, np.ones(len(labels)))[0])


def percentile_band(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The central ``confidence`` band of bootstrap ``values`` (numpy's linear percentiles): the
    percentile interval of a resampled statistic."""
    _check_confidence(confidence)
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def weighted_auprc(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average precision, scikit-learn's step-function definition ``sum_k (R_k - R_{k-1}) P_k`` over
    distinct score thresholds (equal scores enter together), weighted and vectorised as
    :func:`weighted_auroc`. nan where a row has zero positive weight (no recall to gain); a row with no
    negative weight scores 1."""
    rows = np.atleast_2d(np.asarray(weights)).shape[0]
    if len(scores) == 0:
        return np.full(rows, np.nan)
    pos, neg = _grouped(scores, positive, weights, descending=True)
    tp, predicted = np.cumsum(pos, axis=1), np.cumsum(pos + neg, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1), 0.0)
        total = pos.sum(axis=1)
        return np.where(total > 0, (pos * precision).sum(axis=1) / np.where(total > 0, total, 1), np.nan)


@lru_cache(maxsize=256)
def _t_quantile(df: float, confidence: float) -> float:
    """Two-sided Student-t quantile at any ``df`` >= 1, whole or not (Welch–Satterthwaite's are not):
    up to 30 degrees of freedom the t CDF integrated numerically and inverted by bisection, beyond it an
    expansion around the normal quantile within 1e-5 of the exact one (Abramowitz & Stegun 26.7.5); no
    scipy in prmkit's dependencies.

    With ``t = √df · tan θ`` the t density becomes ``c · cos^(df-1) θ`` on [0, π/2), smooth and bounded,
    ``c = Γ((df+1)/2) / (√π Γ(df/2))``, so Simpson's rule on a fixed grid reads ``P(|T| < t)`` to 1e-9."""
    _check_confidence(confidence)
    if not df >= 1:
        raise ValueError(f"a Student-t quantile needs at least 1 degree of freedom, found {df}")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    if df > 30:
        return (
            z
            + (z**3 + z) / (4 * df)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        )
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(math.pi)

    def inside(theta: float) -> float:  # P(|T| < √df tan θ)
        x = np.linspace(0.0, theta, 2001)
        f = np.cos(x) ** (df - 1)
        return 2 * c * (theta / 6000) * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())

    a, b = 0.0, math.pi / 2
    for _ in range(60):
        mid = (a + b) / 2
        a, b = (mid, b) if inside(mid) < confidence else (a, mid)
    return math.sqrt(df) * math.tan((a + b) / 2)


def t_interval(
    values: Sequence[float], confidence: float = 0.95, draws: dict[str, int] | None = None
) -> Estimate:
    """Student-t interval of the mean of independent values (e.g. one number per RL seed), for studies
    where only whole runs can be resampled; it counts only the noise between runs. One value: a point."""
    _check_confidence(confidence)
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0:
        raise ValueError(f"t_interval needs a non-empty list of numbers, found shape {x.shape}")
    n, mean = len(x), float(x.mean())
    draws = dict(draws) if draws is not None else {"seed": n}
    if n == 1:
        return Estimate(mean, mean, mean, draws, "a single seed: no interval")
    half = _t_quantile(n - 1, confidence) * float(x.std(ddof=1)) / math.sqrt(n)
    return Estimate(
        mean, mean - half, mean + half, draws, f"t-interval over {n} seeds, {_percent(confidence)}"
    )


def multiplicity(intervals: int, confidence: float = 0.95) -> str:
    """The sentence a table states beside it: how many of its intervals would miss by chance alone, and
    how wide each would be under Bonferroni, so a reader does not take one excluding 0 among many as news."""
    _check_confidence(confidence)
    if intervals < 1:
        raise ValueError(f"intervals must be at least 1, found {intervals}")
    expected = intervals * (1 - confidence)
    count = f"{expected:.1f}".removesuffix(".0") if expected >= 1 else f"{expected:.2g}"
    if intervals == 1:
        return f"1 interval at {_percent(confidence)}: a {count} chance it excludes the true value by chance alone."
    tail = 100 * (1 - confidence) / intervals
    adjusted = f"{100 - tail:.{max(1, -math.floor(math.log10(tail)))}f}"
    return (
        f"{intervals} intervals at {_percent(confidence)} each: about {count} would exclude the true value "
        f"by chance alone; Bonferroni-adjusted, each would be a {adjusted} % interval."
    )


def single_run_range(values: Sequence[float]) -> tuple[float, float]:
    """(min, max) of per-seed values: the range one run falls in, shown beside the mean, since a reader
    who trains once gets one run, not the mean."""
    if len(values) == 0:
        raise ValueError("single_run_range needs at least one value")
    return float(min(values)), float(max(values))
