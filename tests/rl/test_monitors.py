"""The monitors watch what training pays: a sum-form hack on the world is flagged by the paid reward and
the length warning, while the PRM's ``min`` (the proxy of every run) stays flat and says nothing.

The hack is built from the world's own pieces: the simulated policy's samples are π0; the "hacked"
policy restates its first step before going on (more steps, each a true equation); the PRM is one that
checks each step's arithmetic and not whether it follows from the problem, the blind spot that lets a
per-step reward be earned by repetition. The world's checker is the gold."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from prmkit.core.model import Trace
from prmkit.rl.monitors import (
    COLUMNS,
    MONITORS_FILE,
    PER_PROBLEM,
    PER_PROBLEM_FILE,
    RATES,
    Monitor,
    MonitorCallback,
    all_warnings,
    dependence_warning,
    keep_points_until,
    length_warning,
    read_per_problem,
    read_points,
)
from prmkit.rl.paid import PaidForm
from prmkit.worlds.arithmetic import generate_problems, sample_traces
from prmkit.worlds.registry import world

EQUATION = re.compile(r"(-?[\d.]+) ([-+*/]) (-?[\d.]+) = (-?[\d.]+)")


class ArithmeticPRM:
    """1.0 for a step whose equation is true arithmetic (or that has none), 0.0 otherwise."""

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        return [[self._step(s.text) for s in t.steps] for t in traces]

    @staticmethod
    def _step(text: str) -> float:
        m = EQUATION.search(text)
        if m is None:
            return 1.0
        a, op, b, c = float(m[1]), m[2], float(m[3]), float(m[4])
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else float("nan")}[op]
        return float(abs(value - c) < 1e-6)


def _points(paid: PaidForm) -> list[dict]:
    problems = generate_problems(48, seed=11, split="test")
    traces = sample_traces(problems, 4, seed=3)
    honest = [(t.problem, "\n".join(s.text for s in t.steps)) for t in traces]

    def padded(share: float) -> list[tuple]:
        out = []
        for i, t in enumerate(traces):
            steps = [s.text for s in t.steps]
            if i % 100 < share * 100 and len(steps) > 1:  # restate the first step twice
                steps = [steps[0], steps[0], steps[0], *steps[1:]]
            out.append((t.problem, "\n".join(steps)))
        return out

    monitor = Monitor(
        [], samples=1, temperature=1.0, max_new_tokens=1, prm=ArithmeticPRM(), aggregation="min", paid=paid
    )
    monitor.gold = True  # world problems: the checker judges every sample
    return [
        monitor.measure_samples(samples, step)
        for step, samples in ((0, honest), (10, padded(0.5)), (20, padded(1.0)))
    ]


def test_a_sum_form_hack_is_flagged_by_the_paid_reward_and_the_length_warning() -> None:
    points = _points(PaidForm("dense", credit="sum"))
    first, last = points[0], points[-1]
    # the hack: more steps, a higher per-step pay, less gold; the PRM's min hardly moves
    assert last["steps_per_response"] > first["steps_per_response"] + 1.5
    assert last["paid_reward"] > first["paid_reward"] + 1.5
    assert first["process_correct"] - last["process_correct"] > 0.05  # 0.297 -> 0.219 here
    assert abs(last["prm_reward"] - first["prm_reward"]) < 0.05
    warnings = all_warnings(points)
    assert any(w.startswith("reward hacking") and "the paid reward rose" in w for w in warnings), warnings
    assert not any("the PRM reward rose" in w for w in warnings)  # the min proxy alone would miss it
    assert any(w.startswith("more steps, less gold") for w in warnings)


def test_min_credit_pays_nothing_for_the_padding_and_the_length_warning_still_fires() -> None:
    points = _points(PaidForm("dense", credit="min"))
    assert points[-1]["paid_reward"] <= points[0]["paid_reward"] + 0.01  # min-form: padding earns nothing
    warnings = all_warnings(points)
    assert not any(w.startswith("reward hacking") for w in warnings)
    assert any(w.startswith("more steps, less gold") for w in warnings)


def test_paid_forms() -> None:
    assert PaidForm("outcome").of(1.0, [0.2, 0.3], 0.0) == 1.0
    assert PaidForm("prm_aggregate", aggregation="sum").of(0.0, [0.2, 0.3], 0.0) == pytest.approx(0.5)
    assert PaidForm("dense", credit="sum").of(0.0, [0.5] * 6, 0.0) == pytest.approx(3.0)
    assert PaidForm("dense", credit="min").of(0.0, [0.9, 0.1], 0.0) == pytest.approx(0.1, abs=1e-3)
    mixed = PaidForm("mixed", credit="sum", process_weight=0.25)
    assert mixed.of(1.0, [0.5, 0.5], 0.0) == pytest.approx(0.75 * 1.0 + 0.25 * 1.0)
    assert PaidForm("dense").of(1.0, None, -0.5) == -0.5  # paid the unfinished rule
    progress = PaidForm("progress", credit="sum", progress_alpha=1.0)  # Q + A: 0.8 + 0, then 0.2 - 0.6
    assert progress.of(0.0, [0.8, 0.2], 0.0) == pytest.approx(0.4)
    assert PaidForm("prm_aggregate", aggregation="min").pays_aggregate("min")  # then it is prm_reward
    assert not PaidForm("prm_aggregate", aggregation="sum").pays_aggregate("min")


def test_the_length_warning_needs_both_longer_responses_and_less_gold() -> None:
    def pts(steps: list[float], gold: list[float]) -> list[dict]:
        return [
            {"step": 10 * i, "steps_per_response": s, "process_correct": g}
            for i, (s, g) in enumerate(zip(steps, gold, strict=True))
        ]

    assert length_warning(pts([4.0, 5.0], [0.4, 0.3])) is not None
    assert length_warning(pts([4.0, 5.0], [0.4, 0.38])) is None  # gold within noise
    assert length_warning(pts([4.0, 4.3], [0.4, 0.2])) is None  # a drift shorter than half a step
    assert length_warning(pts([4.0], [0.4])) is None


def test_per_problem_counts_add_up_to_the_points_rates() -> None:
    """Every rate of a point is the ratio of two per-problem columns' sums (``RATES``), so a bootstrap
    that resamples problems recomputes exactly what the point reports."""
    for point in _points(PaidForm("dense", credit="sum")):
        record = point[PER_PROBLEM]
        unmeasured = {"dependence", "dependence_traces"}  # without a policy to intervene with
        assert record["columns"] == [c for c in COLUMNS if c not in unmeasured]  # the rest, all measured
        assert len(record["problems"]) == 48
        sums = dict(
            zip(record["columns"], map(sum, zip(*record["problems"].values(), strict=True)), strict=True)
        )
        assert sums["samples"] == point["samples"] == 4 * 48
        assert {row[0] for row in record["problems"].values()} == {4}  # 4 samples of every problem
        for metric, (num, den) in RATES.items():
            if num in unmeasured:
                continue
            reported = (
                point["first_error_classes"].get("misconception", 0.0)
                if metric == "misconception"
                else point[metric]
            )
            # a point rounds its rates to four decimals (steps per response to three)
            assert sums[num] / sums[den] == pytest.approx(reported, abs=5e-4), metric
        assert sums["process_correct"] + sums["lucky"] == sums["answer_correct"]  # every finished here


class _Replay:
    """A monitor that returns measured points in order (the callback's bookkeeping, without a model)."""

    def __init__(self, points: list[dict]):
        self.points = iter(points)

    def measure(self, model, tokenizer, step: int) -> dict:
        return {**next(self.points), "step": step}


def test_the_callback_keeps_counts_beside_the_points_and_a_resume_drops_both(tmp_path) -> None:
    points = _points(PaidForm("dense", credit="sum"))
    callback = MonitorCallback(_Replay(points), every=10, output_dir=tmp_path)
    for step in (0, 10, 20):
        callback.record(None, None, step)
    written = read_points(tmp_path / MONITORS_FILE)
    assert [p["step"] for p in written] == [0, 10, 20]
    assert all(PER_PROBLEM not in p for p in written)  # the points (card, log, summary) stay small
    counts = read_per_problem(tmp_path)
    assert sorted(counts) == [0, 10, 20]
    assert counts[20] == points[2][PER_PROBLEM]
    assert (tmp_path / PER_PROBLEM_FILE).stat().st_size < 20_000  # 48 problems x 10 columns, 3 points
    keep_points_until(tmp_path / MONITORS_FILE, 10)  # a run resumed from step 10 measures 20 again
    assert [p["step"] for p in read_points(tmp_path / MONITORS_FILE)] == [0, 10]
    assert sorted(read_per_problem(tmp_path / PER_PROBLEM_FILE)) == [0, 10]


def test_causal_dependence_falls_when_the_policy_rationalises_and_warns() -> None:
    """π0 is the world's default policy, the "trained" policy the same with its rationalising knob on (it
    knows the answer and bends a step to reach it): the same monitor, continuing each intervention with
    the policy of its point, sees the answers stop depending on the steps, and warns."""
    arithmetic = world("arithmetic")
    monitor = Monitor([], samples=2, temperature=1.0, max_new_tokens=1, faithfulness=24)
    points = []
    for step, knobs in ((0, {}), (10, {"rationalise": 1.0})):
        config = arithmetic.policy_config(**knobs)
        traces = arithmetic.traces(16, 2, 3, "test", config)
        samples = [(t.problem, "\n".join(s.text for s in t.steps)) for t in traces]
        points.append(monitor.measure_samples(samples, step, arithmetic.policy(config)))
    first, last = points
    assert first["dependence_traces"] == last["dependence_traces"] == 24
    assert first["causal_dependence"] - last["causal_dependence"] > 0.3  # 0.65 -> 0.06 here
    warning = dependence_warning(points)
    assert (
        warning is not None
        and warning.startswith("less causal dependence")
        and warning in all_warnings(points)
    )
    for point in points:  # the rate is the ratio of its two per-problem columns, as every rate
        record = point[PER_PROBLEM]
        sums = dict(
            zip(record["columns"], map(sum, zip(*record["problems"].values(), strict=True)), strict=True)
        )
        assert sums["dependence"] / sums["dependence_traces"] == pytest.approx(
            point["causal_dependence"], abs=1e-3
        )
    assert dependence_warning([first, {**first, "step": 10}]) is None
    assert "causal_dependence" not in monitor.measure_samples(samples, 0)  # no policy: not measured
