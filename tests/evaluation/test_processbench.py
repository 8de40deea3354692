from __future__ import annotations

import json

import numpy as np
import pytest

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.protocols import JudgeVerdict
from prmkit.evaluation.processbench import (
    eval_processbench,
    evaluate_first_error,
    harmonic_f1,
    headline,
    load_sets,
    predicted_first_error,
    subset_metrics,
    tune_threshold,
)

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
    result = eval_processbench(files, source="human:processbench")
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
