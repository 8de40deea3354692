from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import JudgeVerdict
from prmkit.evaluation.config import ProcessBenchConfig
from prmkit.evaluation.processbench import (
    evaluate_first_error,
    harmonic_f1,
    headline,
    load_sets,
    predicted_first_error,
    run_processbench,
    subset_metrics,
    tune_threshold,
)
from prmkit.policies.critic import parse_first_error, verdict_from_first_error

from .worldlike import make_trace

SPLITS = ("gsm8k", "math", "olympiadbench", "omnimath")


class ListScorer:
    """A StepScorer that returns fixed scores per trace id."""

    name = "fixed"

    def __init__(self, table: dict[str, list[float]]):
        self.table = table

    def score(self, traces):
        return [self.table[t.id] for t in traces]


def test_hand_computed_subset_metrics_and_headline():
    a = subset_metrics("a", gold=[-1, -1, 2, 0], predicted=[-1, 1, 2, 1])
    assert (a.with_error, a.error_free) == (2, 2)
    assert a.acc_error == 0.5 and a.acc_correct == 0.5 and a.f1 == 0.5
    b = subset_metrics("b", gold=[-1, 3], predicted=[-1, 3])
    assert b.f1 == 1.0
    plain, weighted = headline([a, b])
    assert plain == pytest.approx(0.75)  # QwenLM: plain mean of subset F1s
    assert weighted == pytest.approx((4 * 0.5 + 2 * 1.0) / 6)  # huggingface script: weighted by size


def test_f1_edge_cases():
    assert harmonic_f1(0.0, 0.0) == 0.0
    assert harmonic_f1(0.25, 1.0) == pytest.approx(0.4)
    only_errors = subset_metrics("x", gold=[1, 2], predicted=[1, -1])
    assert only_errors.acc_correct is None and only_errors.f1 is None
    assert predicted_first_error([0.9, 0.5, 0.2, 0.1], 0.5) == 2  # strictly below the threshold
    assert predicted_first_error([0.9, 0.8], 0.5) == -1


@pytest.fixture(scope="module")
def processbench(real_data):
    files = [real_data / "processbench" / f"{s}.json" for s in SPLITS]
    return files, load_sets(files)


def test_real_samples_read_with_gold(processbench):
    files, sets = processbench
    assert list(sets) == list(SPLITS)
    raw = {s: json.loads(f.read_text()) for s, f in zip(SPLITS, files, strict=True)}
    for s in SPLITS:
        assert [t.first_error("human:processbench") for t in sets[s]] == [r["label"] for r in raw[s]]
    # the labels themselves as predictor: perfect on every subset
    result = run_processbench(ProcessBenchConfig(files=files, source="human:processbench"))
    assert result.f1 == 1.0 and result.f1_size_weighted == 1.0


def test_real_samples_scorer_metrics_match_processbench_definition(processbench, tmp_path):
    files, sets = processbench
    raw = {s: json.loads(f.read_text()) for s, f in zip(SPLITS, files, strict=True)}
    # a scorer that always flags step 0: right only on traces whose first error IS step 0
    table = {r["id"]: [0.1] + [0.9] * (len(r["steps"]) - 1) for s in SPLITS for r in raw[s]}
    result = evaluate_first_error(sets, ListScorer(table), threshold=0.5)
    by_name = {s.name: s for s in result.subsets}
    for s in SPLITS:  # QwenLM's formulas, written out on the raw records
        err = [r for r in raw[s] if r["label"] != -1]
        ok = [r for r in raw[s] if r["label"] == -1]
        acc1 = np.mean([r["label"] == 0 for r in err])
        acc2 = np.mean([False for _ in ok])
        assert by_name[s].acc_error == pytest.approx(acc1)
        assert by_name[s].acc_correct == pytest.approx(acc2)
    assert by_name["gsm8k"].acc_error == pytest.approx(1 / 7)  # gsm8k-9 is the one label-0 record
    assert result.f1 == 0.0 and result.threshold == 0.5 and result.threshold_from == "given"
    # a scorer that finds every error except in math: plain mean 0.75 vs size-weighted 28/36
    table = {}
    for s in SPLITS:
        for r in raw[s]:
            row = [0.9] * len(r["steps"])
            if r["label"] != -1 and s != "math":
                row[r["label"]] = 0.2
            table[r["id"]] = row
    result = evaluate_first_error(sets, ListScorer(table))
    assert [x.f1 for x in result.subsets] == [1.0, 0.0, 1.0, 1.0]
    assert result.f1 == pytest.approx(0.75)
    assert result.f1_size_weighted == pytest.approx((10 + 9 + 9) / 36)
    assert "not the headline" in result.table()
    result.write(tmp_path)
    saved = json.loads((tmp_path / "processbench.json").read_text())
    assert saved["threshold"] == 0.5 and saved["threshold_from"] == "default"
    assert (tmp_path / "first_error_hist.png").stat().st_size > 1000
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 36


def test_threshold_tuned_on_dev_and_recorded():
    dev = [make_trace("d", f"d{i}", 4, fe, fe == -1) for i, fe in enumerate([-1, 0, 2, -1, 3, 1])]
    test = [make_trace("t", f"t{i}", 5, fe, fe == -1) for i, fe in enumerate([-1, 4, 1, -1])]

    def scores(t: Trace) -> list[float]:  # valid steps 0.45, the first error 0.2: needs a threshold < 0.45
        fe = t.first_error("gold")
        return [0.2 if i == fe else 0.45 for i in range(len(t.steps))]

    scorer = ListScorer({t.id: scores(t) for t in dev + test})
    default = evaluate_first_error({"test": test}, scorer)
    assert default.threshold == 0.5 and default.subsets[0].acc_correct == 0.0
    tuned = evaluate_first_error({"test": test}, scorer, dev={"dev": dev})
    assert tuned.threshold_from == "dev" and 0.2 < tuned.threshold <= 0.45
    assert tuned.f1 == 1.0 and tuned.gold_source == "gold"


def test_judge_and_label_source_predictors():
    traces = [make_trace("p", f"x{i}", 4, fe, fe == -1) for i, fe in enumerate([-1, 1, 3, -1])]

    class OffByOneJudge:
        name = "off-by-one"

        def judge(self, problem: Problem, steps: list[Step]) -> JudgeVerdict:
            trace = next(t for t in traces if t.steps == list(steps))
            fe = trace.first_error("gold")
            first = -1 if fe in (-1, 3) else fe + 1  # misses an error on the last step, late on others
            return JudgeVerdict(ratings=[None] * len(steps), first_error=first)

    result = evaluate_first_error({"w": traces}, OffByOneJudge())
    s = result.subsets[0]
    assert (s.acc_error, s.acc_correct) == (0.0, 1.0)
    assert result.threshold is None and result.threshold_from == "not used"
    assert evaluate_first_error({"w": traces}, "gold:world:prefix").f1 == 1.0


def test_missing_gold_is_an_error():
    bare = Trace(id="b", problem=Problem(id="p", text="q"), steps=[Step(text="s")])
    with pytest.raises(ValueError, match="no gold found"):
        evaluate_first_error({"x": [bare]}, "gold")


def _headline_at(scores: dict, gold: dict, t: float) -> float:
    subs = [subset_metrics(s, gold[s], [predicted_first_error(x, t) for x in scores[s]]) for s in scores]
    return headline(subs)[0]


def test_tuned_threshold_is_the_best_on_dev():
    """The vectorised search finds a threshold at least as good as a brute-force scan, on random dev sets."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        scores = {s: [list(rng.random(rng.integers(1, 6))) for _ in range(20)] for s in ("a", "b")}
        gold = {s: [int(rng.integers(-1, len(x))) for x in scores[s]] for s in scores}
        tuned = tune_threshold(scores, gold)
        grid = max(_headline_at(scores, gold, t) for t in np.linspace(0, 1.001, 400))
        assert _headline_at(scores, gold, tuned) >= grid - 1e-12


# --- Edge cases against QwenLM/ProcessBench's own scoring lines (issue 20, item 3) ---------------------
# Read from QwenLM/ProcessBench at commit e8024636bcabdf8bd514440551b531d3f90dd18b, files
# code/run_eval.py (critic models) and code/run_eval_prm_rlhflow.py (PRMs); both score a subset as
#
#     error_data = [e for e in res_data if e['label'] != -1]
#     correct_data = [e for e in res_data if e['label'] == -1]
#     acc1 = np.mean([e['match'] for e in error_data]) * 100
#     acc2 = np.mean([e['match'] for e in correct_data]) * 100
#     f1 = 2 * acc1 * acc2 / (acc1 + acc2)
#
# with ``d['match'] = (pred == d['label'])`` and ``pred = None`` for a critique without an integer box.


def official_subset(gold: list[int], predicted: list[int | None]) -> tuple[float, float, float]:
    """The upstream lines above, verbatim but for the inputs (numpy: mean of [] and 0/0 are nan)."""
    res_data = [{"label": g, "match": p == g} for g, p in zip(gold, predicted, strict=True)]
    error_data = [e for e in res_data if e["label"] != -1]
    correct_data = [e for e in res_data if e["label"] == -1]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        acc1 = np.mean([e["match"] for e in error_data]) * 100
        acc2 = np.mean([e["match"] for e in correct_data]) * 100
        f1 = 2 * acc1 * acc2 / (acc1 + acc2)
    return float(acc1), float(acc2), float(f1)


def _same(prmkit_value: float | None, official_percent: float) -> bool:
    """prmkit's fraction (None where upstream has nan) equals upstream's percentage."""
    if math.isnan(official_percent):
        return prmkit_value is None or math.isnan(prmkit_value)
    return prmkit_value is not None and math.isclose(100 * prmkit_value, official_percent)


def _strict_json(path) -> dict:
    """Parse as strict JSON: a bare NaN/Infinity (Python's json extension) is an error."""

    def refuse(name: str):
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_both_accuracies_zero_gives_official_nan_beside_prmkit_zero():
    """Upstream ``f1 = 2 * acc1 * acc2 / (acc1 + acc2)`` is numpy's 0/0 = nan when both accuracies are 0.

    prmkit's own ``f1`` keeps the harmonic mean's limit 0 (so a subset that gets everything wrong pulls
    the headline down instead of dropping out of it); ``f1_official`` carries the script's nan.
    """
    gold, pred = [-1, -1, 2], [0, 1, 1]
    s = subset_metrics("x", gold, pred)
    acc1, acc2, f1 = official_subset(gold, pred)
    assert (acc1, acc2) == (0.0, 0.0) and math.isnan(f1)
    assert s.acc_error == 0.0 and s.acc_correct == 0.0 and s.f1 == 0.0
    assert math.isnan(s.f1_official)
    fine = subset_metrics("y", [-1, 2], [-1, 1])
    assert official_subset([-1, 2], [-1, 1])[2] == 0.0  # acc1 0, acc2 100: 0 / 100 = 0 upstream, not nan
    assert fine.f1 == 0.0 and fine.f1_official == 0.0


def _three_subsets() -> tuple[dict[str, list[Trace]], ListScorer]:
    sets = {
        "mixed": [make_trace("m", "m0", 3, -1, True), make_trace("m", "m1", 3, 1, False)],
        "only_ok": [make_trace("o", "o0", 3, -1, True), make_trace("o", "o1", 4, -1, True)],
        "zero": [make_trace("z", "z0", 3, -1, True), make_trace("z", "z1", 3, 0, False)],
    }
    table = {"m0": [0.9] * 3, "m1": [0.9, 0.1, 0.9], "o0": [0.9] * 3, "o1": [0.9] * 4}
    table |= {"z0": [0.1, 0.9, 0.9], "z1": [0.9] * 3}  # wrong on both: flags a clean trace, misses step 0
    return sets, ListScorer(table)


def test_undefined_subsets_are_nan_officially_counted_and_survive_json(tmp_path):
    """A subset with only error-free traces: upstream ``np.mean([])`` is nan, so acc1 and F1 are nan.

    The paper's average of the subset F1s is then nan too (numpy propagates it). prmkit's headline
    averages the subsets whose F1 is defined, and says so: ``f1_official`` (nan) beside it, the
    undefined subsets named, nan written to JSON as null with ``*_undefined: true``, "nan" in the table.
    """
    sets, scorer = _three_subsets()
    result = evaluate_first_error(sets, scorer, threshold=0.5)
    by = {s.name: s for s in result.subsets}
    for name, traces in sets.items():
        gold = [t.first_error("gold") for t in traces]
        pred = [predicted_first_error(scorer.table[t.id], 0.5) for t in traces]
        acc1, acc2, f1 = official_subset(gold, pred)
        s = by[name]
        assert _same(s.acc_error, acc1) and _same(s.acc_correct, acc2) and _same(s.f1_official, f1), name
    assert by["mixed"].f1 == 1.0 and by["only_ok"].f1 is None and by["zero"].f1 == 0.0
    assert result.f1 == pytest.approx(0.5)  # mean of mixed (1.0) and zero (0.0); only_ok has no F1
    assert math.isnan(result.f1_official)
    assert math.isnan(float(np.mean([official_subset(*_gp(sets[n], scorer))[2] for n in sets])))
    assert result.undefined_subsets == ["only_ok", "zero"]
    assert result.excluded_from_headline == ["only_ok"]
    table = result.table()
    assert "nan" in table and "only_ok" in table.split("headline")[-1]
    saved = _strict_json(result.write(tmp_path))
    assert saved["f1"] == 0.5 and saved["f1_official"] is None and saved["f1_official_undefined"] is True
    subs = {s["name"]: s for s in saved["subsets"]}
    assert subs["mixed"]["f1_official"] == 1.0 and subs["mixed"]["f1_official_undefined"] is False
    assert subs["zero"]["f1"] == 0.0 and subs["zero"]["f1_official"] is None
    assert subs["zero"]["f1_official_undefined"] is True and subs["only_ok"]["f1"] is None


def _gp(traces: list[Trace], scorer: ListScorer) -> tuple[list[int], list[int]]:
    return [t.first_error("gold") for t in traces], [
        predicted_first_error(scorer.table[t.id], 0.5) for t in traces
    ]


class CriticJudge:
    """A Judge whose answers are critic text, read exactly as the endpoint judge reads them."""

    name = "critic"

    def __init__(self, answers: dict[str, str]):
        self.answers = answers  # by problem id

    def judge(self, problem: Problem, steps: list[Step]) -> JudgeVerdict:
        raw = self.answers[problem.id]
        return verdict_from_first_error(parse_first_error(raw), len(steps), raw)


def _gold_traces(fes: list[int]) -> list[Trace]:
    return [make_trace(f"p{i}", f"t{i}", 4, fe, fe == -1) for i, fe in enumerate(fes)]


def test_a_critic_that_always_refuses_gets_acc_correct_zero():
    """Upstream: ``pred = None`` when the critique has no integer box, ``match = (pred == label)``:
    False on error-free traces too, so a critic that always refuses scores acc2 = 0, not 100."""
    traces = _gold_traces([-1, 1, -1, 3, -1, 0])
    refuse = CriticJudge({t.problem.id: "I'm sorry, I can't help with that." for t in traces})
    result = evaluate_first_error({"w": traces}, refuse)
    s = result.subsets[0]
    acc1, acc2, f1 = official_subset([t.first_error("gold") for t in traces], [None] * len(traces))
    assert (acc1, acc2) == (0.0, 0.0) and math.isnan(f1)
    assert s.acc_error == 0.0 and s.acc_correct == 0.0 and s.f1 == 0.0 and math.isnan(s.f1_official)
    assert s.unparseable == len(traces) and s.no_prediction == len(traces)
    assert "unparseable" in result.table()


def test_unparseable_and_out_of_range_answers_never_match_and_are_counted(tmp_path):
    """A third of the answers unparseable, one index out of range: each is "no prediction", scored as
    upstream scores ``pred = None`` (or an int no label equals): never a match, whatever the gold."""
    fes = [-1, 1, -1, 3, -1, 0, -1, 2, 2]
    traces = _gold_traces(fes)
    answers = {}
    for i, (t, fe) in enumerate(zip(traces, fes, strict=True)):
        answers[t.problem.id] = f"The earliest error: \\boxed{{{fe}}}"  # a perfect critic ...
        if i % 3 == 0:
            answers[t.problem.id] = "Let me think step by step. The answer is unclear"  # ... except these
    answers["p4"] = "Paragraph 9 is wrong. \\boxed{9}"  # gold -1; 9 is out of range for 4 steps
    result = evaluate_first_error({"w": traces}, CriticJudge(answers))
    s = result.subsets[0]
    official_pred = [parse_first_error(answers[t.problem.id]) for t in traces]
    acc1, acc2, f1 = official_subset(fes, official_pred)
    assert _same(s.acc_error, acc1) and _same(s.acc_correct, acc2) and _same(s.f1_official, f1)
    assert (s.unparseable, s.out_of_range, s.no_prediction) == (3, 1, 4)
    assert s.acc_correct == pytest.approx(1 / 4)  # of 4 error-free traces only p2 is read and right
    result.write(tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert [r["predicted"] for r in rows[:2]] == [None, 1]
    assert rows[0]["status"] == "unparseable" and rows[4]["status"] == "out_of_range"
    assert (tmp_path / "first_error_hist.png").stat().st_size > 1000
