"""``prmkit eval prmbench`` on the synthetic records of tests/data/prmbench and tests/data/socratic_prmbench,
against the numbers PRMBench's official code gives on them (:data:`OFFICIAL`, constants at the end)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cards.process_card import LabelSourceSummary, ProcessCard, write_process_card
from prmkit.cli import app
from prmkit.evaluation.config import PRMBenchConfig
from prmkit.evaluation.overlap import overlaps
from prmkit.evaluation.prmbench import Item, evaluate, items_of, run_prmbench
from prmkit.evaluation.prmbench_metric import Prediction
from prmkit.formats import read

DATA = Path(__file__).parents[1] / "data"
PRMBENCH = sorted((DATA / "prmbench").glob("*.jsonl"))
SOCRATIC = sorted((DATA / "socratic_prmbench").glob("*.jsonl"))
SEEDS = (0, 1, 2, 3)
runner = CliRunner()


def _traces(files):
    return [t for f in files for t in read(f)]


def predictions(rows: list[tuple[str, int]], seed: int) -> list[dict]:
    """Seeded predictions in mr_eval's format for ``(official idx, step count)`` rows, taken in idx order:
    scores, labels at 0.5, every fifth row cut short, the fourth and ninth marked invalid, and on odd seeds
    redundancy labels (a ReasonEval-like model's) on about half the rows. The official numbers in
    :data:`OFFICIAL` were computed on exactly these predictions (rows from ``load_data_function``)."""
    rng = random.Random(seed)
    out = []
    for i, (idx, n) in enumerate(sorted(rows)):
        if i in (3, 8):
            out.append({"idx": idx, "scores": {}, "validity": False})
            continue
        k = n if i % 5 else rng.randint(1, n)
        scores = [rng.random() for _ in range(k)]
        s = {"step_level_validity_scores": scores, "step_level_validity_labels": [x > 0.5 for x in scores]}
        if seed % 2 and rng.random() < 0.5:
            s["step_level_redundancy_labels"] = [rng.random() * 0.3 > 0.15 for _ in range(k)]
        out.append({"idx": idx, "scores": s})
    return out


def _rows(items: list[Item]) -> list[tuple[str, int]]:
    return [(i.key, len(i.trace.steps)) for i in items]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def test_items_are_the_official_ones():
    items, bench, repeated = items_of(_traces(PRMBENCH))
    assert bench == "prmbench" and repeated == 1
    assert sorted(i.key for i in items) == OFFICIAL_KEYS
    assert sum(len(i.trace.steps) for i in items) == OFFICIAL_STEPS
    assert {i.classification for i in items} == set(CLASSES)
    assert sum(i.prm800k_train for i in items) == 7 and sum(not i.prm800k_train for i in items) == 11


@pytest.mark.parametrize("seed", SEEDS)
def test_same_numbers_as_the_official_code(seed):
    items, _, _ = items_of(_traces(PRMBENCH))
    results = predictions(_rows(items), seed)
    preds = {r["idx"]: Prediction.from_record(r) for r in results}
    result = evaluate(_traces(PRMBENCH), preds)
    for k, name in enumerate(("all", "not_prm800k_train")):
        expected, mine = OFFICIAL[seed, name], result.official[name]
        assert _close(mine["validitiy_rate"], expected["validitiy_rate"]), name
        total = dict(zip(FIELDS, expected["overall"], strict=True))
        assert set(mine["total_hallucination_results"]) == set(FIELDS[:-1])
        for metric, value in mine["total_hallucination_results"].items():
            assert _close(value, total[metric]), (name, metric, value, total[metric])
        by_class = mine["hallucination_type_results"]
        assert set(by_class) == set(FIELDS[:-1])
        classes = {c: dict(zip(FIELDS, v, strict=True)) for c, v in expected.items() if c in CLASSES}
        for metric, values in by_class.items():
            assert set(values) == set(classes), (name, metric)
            for c, value in values.items():
                assert _close(value, classes[c][metric]), (name, metric, c, value, classes[c][metric])
        s = result.slices[k]
        assert s.items == expected["items"] and s.overall.prm_score_official == pytest.approx(
            total["prm_score_official"], abs=1e-9
        )
        if -1 not in (total["f1"], total["negative_f1"]):
            assert s.overall.prm_score == pytest.approx(total["prm_score_official"], abs=1e-9)
        for row in s.classes:
            if row.name == "correct":
                continue
            want = classes[row.name]
            assert row.prm_score_official == pytest.approx(want["prm_score_official"], abs=1e-9), row.name
            used = [want["f1"]] if row.name == "multi_solutions" else [want["f1"], want["negative_f1"]]
            if -1 not in used:  # the official -1 is "undefined" or an F1 of 0: prmkit's n/a or 0 there
                assert row.prm_score == pytest.approx(want["prm_score_official"], abs=1e-9), row.name


def test_redundancy_labels_score_only_redundancy_and_circular():
    items, _, _ = items_of(_traces(PRMBENCH))
    perfect = []
    for it in items:
        errors = {e - 1 for e in it.error_steps}
        labels = [i not in errors for i in range(len(it.trace.steps))]
        perfect.append(
            {
                "idx": it.key,
                "scores": {
                    "step_level_validity_labels": labels,
                    "step_level_redundancy_scores": [0.9] * len(labels),
                },
            }
        )
    preds = {r["idx"]: Prediction.from_record(r) for r in perfect}
    rows = {r.name: r for r in evaluate(_traces(PRMBENCH), preds).slices[0].classes}
    # redundancy score 0.9 > 0.15 marks every step redundant, so invalid: only the two classes suffer
    assert rows["redundency"].f1_correct == 0 and rows["circular"].f1_correct == 0
    assert rows["deception"].prm_score == 1 and rows["correct"].f1_correct == 1


def test_cli_predictions_compare_and_out(tmp_path):
    rows = _rows(items_of(_traces(PRMBENCH))[0])
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, seed in ((a, 0), (b, 2)):
        path.write_text("".join(json.dumps(r) + "\n" for r in predictions(rows, seed)), encoding="utf-8")
    out = tmp_path / "out"
    files = [str(f) for f in PRMBENCH]
    res = runner.invoke(
        app, ["eval", "prmbench", *files, "--predictions", str(a), "--compare", str(b), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "items not built on PRM800K train problems (11 items)" in res.output
    assert "built on PRM800K train problems: 7 of 18 items" in res.output and "PRMScore − " in res.output
    saved = json.loads((out / "prmbench.json").read_text())
    assert set(saved["compare"]) == {"against", "all", "not_prm800k_train"}
    again = run_prmbench(PRMBenchConfig(files=PRMBENCH, predictions=out / "predictions.jsonl"))
    assert again.slices[0].overall.prm_score == pytest.approx(
        saved["slices"][0]["overall"]["prm_score"], abs=1e-6
    )


def test_a_label_source_and_the_card_overlap(tmp_path):
    card = ProcessCard(
        kind="prm",
        labels=[LabelSourceSummary(source="human:x", provenance=[{"params": {"dataset": "prm800k"}}])],
    )
    write_process_card(tmp_path, card)
    assert [o.dataset for o in overlaps(card.model_dump(mode="json"))] == [
        "PRM800K"
    ] and "3,203 of PRMBench" in card.warnings()[-1]
    result = run_prmbench(PRMBenchConfig(files=PRMBENCH, source="imported:prmbench", card=tmp_path))
    assert result.slices[0].overall.prm_score == 1 and result.slices[0].first_error_f1 == 1
    assert result.contamination is not None and "51.5 %" in result.contamination
    assert not overlaps(ProcessCard(kind="prm", data={"input": "world.jsonl"}).model_dump(mode="json"))


def test_socratic_prmbench_scores_its_own_classes():
    traces = _traces(SOCRATIC)
    items, bench, _ = items_of(traces)
    assert bench == "socratic_prmbench" and "correct" not in {i.classification for i in items}
    preds = {i.key: Prediction.from_scores([0.9] * len(i.trace.steps)) for i in items}
    result = evaluate(traces, preds)
    assert result.prm800k_train == 0 and result.slices[1].items == result.slices[0].items
    assert result.slices[0].overall.f1_error == 0 and result.slices[0].categories == {}
    with pytest.raises(ValueError, match="one benchmark"):
        items_of(_traces([*SOCRATIC, *PRMBENCH]))


# ---- computed by PRMBench's official evaluate_function (ssmisya/PRMBench at commit
# a1ae4eab803e14c4c6316bf89d1679b0486faa8c) on these fixtures and predictions; not by prmkit. ----
# Written by a local script that runs that code (load_data_function, evaluate_function) on
# tests/data/prmbench with predictions(rows, seed) above; PRMBench's code is not in this repository.
# Values to 10 significant digits; -1 is the official code's "undefined". prm_score_official is the
# leaderboard notebook's arithmetic on those F1s (0.5·f1 + 0.5·negative_f1; f1 alone for
# multi_solutions), -1 entering the mean as -1.
FIELDS = (
    "precision",
    "recall",
    "f1",
    "negative_precision",
    "negative_recall",
    "negative_f1",
    "correct_step_acc",
    "wrong_step_acc",
    "total_step_acc",
    "first_error_acc",
    "similarity",
    "prm_score_official",
)
"""Order of the numbers in each row below (the official metric names, then the notebook's PRMScore)."""
CLASSES = (
    "circular",
    "confidence",
    "correct",
    "counterfactual",
    "deception",
    "domain_inconsistency",
    "missing_condition",
    "multi_solutions",
    "redundency",
    "step_contradiction",
)
OFFICIAL_KEYS = [
    "circular_prm_test_p1_0",
    "circular_prm_test_p1_7",
    "confidence_prm_train_p1_0",
    "correct_prm_test_p1_0",
    "correct_prm_test_p1_7",
    "correct_prm_train_p1_0",
    "correct_prm_train_p1_1",
    "counterfactual_prm_train_p1_0",
    "deception_prm_train_p1_1",
    "domain_inconsistency_prm_test_p2_14",
    "missing_condition_prm_test_p2_14",
    "multi_solutions_prm_test_p1_0",
    "multi_solutions_prm_test_p2_40",
    "redundency_prm_test_p1_0",
    "redundency_prm_test_p1_7",
    "redundency_prm_train_p1_0",
    "redundency_prm_train_p1_1",
    "step_contradiction_prm_test_p2_14",
]
"""The official load_data_function's item keys (correct copies included), sorted."""
OFFICIAL_STEPS = 126
# fmt: off
OFFICIAL = {
    (0, "all"): {
        "items": 18, "validitiy_rate": 0.9285714286,
        "overall": (0.7179487179, 0.4057971014, 0.5185185185, 0.1632653061, 0.4210526316, 0.2352941176,
            0.4057971014, 0.4210526316, 0.4090909091, 0.5454545455, 0.1689814815, 0.3769063181),
        "circular": (0.75, 0.6, 0.6666666667, 0.3333333333, 0.5, 0.4, 0.6, 0.5, 0.5714285714, 0.5, 0.1,
            0.5333333333),
        "confidence": (0, 0, -1, 0, 0, -1, 0, 0, 0, 0, 0.3, -1),
        "correct": (1, 0.5555555556, 0.7142857143, 0, -1, 0, 0.5555555556, -1, 0.5555555556, -1, -1,
            0.3571428571),
        "counterfactual": (0.5, 0.5, 0.5, 0.6666666667, 0.6666666667, 0.6666666667, 0.5, 0.6666666667, 0.6,
            1, 0.1, 0.5833333333),
        "deception": (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        "domain_inconsistency": (0.75, 0.375, 0.5, 0, 0, -1, 0.375, 0, 0.3333333333, 0, -1, -0.25),
        "missing_condition": (1, 0.4, 0.5714285714, 0.25, 1, 0.4, 0.4, 1, 0.5, 1, -1, 0.4857142857),
        "multi_solutions": (1, 0.5, 0.6666666667, 0, -1, 0, 0.5, -1, 0.5, -1, -1, 0.6666666667),
        "redundency": (0.7692307692, 0.3846153846, 0.5128205128, 0.1111111111, 0.4, 0.1739130435,
            0.3846153846, 0.4, 0.3870967742, 0.5, 0.1712962963, 0.3433667781),
        "step_contradiction": (1, 0.2222222222, 0.3636363636, 0.125, 1, 0.2222222222, 0.2222222222, 1, 0.3,
            1, -1, 0.2929292929),
    },
    (0, "not_prm800k_train"): {
        "items": 11, "validitiy_rate": 1,
        "overall": (0.8076923077, 0.3962264151, 0.5316455696, 0.1351351351, 0.5, 0.2127659574,
            0.3962264151, 0.5, 0.4126984127, 0.5714285714, 0.07777777778, 0.3722057635),
        "circular": (0.75, 0.6, 0.6666666667, 0.3333333333, 0.5, 0.4, 0.6, 0.5, 0.5714285714, 0.5, 0.1,
            0.5333333333),
        "correct": (1, 0.5, 0.6666666667, 0, -1, 0, 0.5, -1, 0.5, -1, -1, 0.3333333333),
        "domain_inconsistency": (0.75, 0.375, 0.5, 0, 0, -1, 0.375, 0, 0.3333333333, 0, -1, -0.25),
        "missing_condition": (1, 0.4, 0.5714285714, 0.25, 1, 0.4, 0.4, 1, 0.5, 1, -1, 0.4857142857),
        "multi_solutions": (1, 0.5, 0.6666666667, 0, -1, 0, 0.5, -1, 0.5, -1, -1, 0.6666666667),
        "redundency": (0.6666666667, 0.3076923077, 0.4210526316, 0.1, 0.3333333333, 0.1538461538,
            0.3076923077, 0.3333333333, 0.3125, 0.5, 0.05555555556, 0.2874493927),
        "step_contradiction": (1, 0.2222222222, 0.3636363636, 0.125, 1, 0.2222222222, 0.2222222222, 1, 0.3,
            1, -1, 0.2929292929),
    },
    (1, "all"): {
        "items": 18, "validitiy_rate": 0.9285714286,
        "overall": (0.8139534884, 0.5303030303, 0.6422018349, 0.225, 0.5294117647, 0.3157894737,
            0.5303030303, 0.5294117647, 0.5301204819, 0.5, 0.3291666667, 0.4789956543),
        "circular": (0.8, 0.4444444444, 0.5714285714, 0.2857142857, 0.6666666667, 0.4, 0.4444444444,
            0.6666666667, 0.5, 1, 0.475, 0.4857142857),
        "confidence": (0.5, 1, 0.6666666667, 1, 0.75, 0.8571428571, 1, 0.75, 0.8, 1, 0.2, 0.7619047619),
        "correct": (1, 0.7142857143, 0.8333333333, 0, -1, 0, 0.7142857143, -1, 0.7142857143, -1, -1,
            0.4166666667),
        "counterfactual": (0, 0, -1, 0.5, 0.6666666667, 0.5714285714, 0, 0.6666666667, 0.4, 1, 0.4,
            -0.2142857143),
        "deception": (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        "domain_inconsistency": (0.8333333333, 0.625, 0.7142857143, 0, 0, -1, 0.625, 0, 0.5555555556, 0,
            -1, -0.1428571429),
        "missing_condition": (0.6666666667, 0.4, 0.5, 0, 0, -1, 0.4, 0, 0.3333333333, 0, -1, -0.25),
        "multi_solutions": (1, 0.75, 0.8571428571, 0, -1, 0, 0.75, -1, 0.75, -1, -1, 0.8571428571),
        "redundency": (0.8666666667, 0.5416666667, 0.6666666667, 0.1538461538, 0.5, 0.2352941176,
            0.5416666667, 0.5, 0.5357142857, 0.3333333333, 0.3, 0.4509803922),
        "step_contradiction": (0.8, 0.4444444444, 0.5714285714, 0, 0, -1, 0.4444444444, 0, 0.4, 0, -1,
            -0.2142857143),
    },
    (1, "not_prm800k_train"): {
        "items": 11, "validitiy_rate": 1,
        "overall": (0.8235294118, 0.5384615385, 0.6511627907, 0.1111111111, 0.3333333333, 0.1666666667,
            0.5384615385, 0.3333333333, 0.5081967213, 0.2857142857, 0.3416666667, 0.4089147287),
        "circular": (0.8, 0.4444444444, 0.5714285714, 0.2857142857, 0.6666666667, 0.4, 0.4444444444,
            0.6666666667, 0.5, 1, 0.475, 0.4857142857),
        "correct": (1, 0.875, 0.9333333333, 0, -1, 0, 0.875, -1, 0.875, -1, -1, 0.4666666667),
        "domain_inconsistency": (0.8333333333, 0.625, 0.7142857143, 0, 0, -1, 0.625, 0, 0.5555555556, 0,
            -1, -0.1428571429),
        "missing_condition": (0.6666666667, 0.4, 0.5, 0, 0, -1, 0.4, 0, 0.3333333333, 0, -1, -0.25),
        "multi_solutions": (1, 0.75, 0.8571428571, 0, -1, 0, 0.75, -1, 0.75, -1, -1, 0.8571428571),
        "redundency": (0.7777777778, 0.5384615385, 0.6363636364, 0.1428571429, 0.3333333333, 0.2,
            0.5384615385, 0.3333333333, 0.5, 0, 0.2083333333, 0.4181818182),
        "step_contradiction": (0.8, 0.4444444444, 0.5714285714, 0, 0, -1, 0.4444444444, 0, 0.4, 0, -1,
            -0.2142857143),
    },
    (2, "all"): {
        "items": 18, "validitiy_rate": 0.9285714286,
        "overall": (0.78, 0.5820895522, 0.6666666667, 0.1515151515, 0.3125, 0.2040816327, 0.5820895522,
            0.3125, 0.5301204819, 0.3333333333, 0.2166666667, 0.4353741497),
        "circular": (1, 0.5555555556, 0.7142857143, 0.3333333333, 1, 0.5, 0.5555555556, 1, 0.6363636364, 1,
            0.25, 0.6071428571),
        "confidence": (0.25, 1, 0.4, 1, 0.25, 0.4, 1, 0.25, 0.4, 0, 0.3, 0.4),
        "correct": (1, 0.6111111111, 0.7586206897, 0, -1, 0, 0.6111111111, -1, 0.6111111111, -1, -1,
            0.3793103448),
        "counterfactual": (0.4, 1, 0.5714285714, -1, 0, 0, 1, 0, 0.4, 0, 0.5, 0.2857142857),
        "deception": (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        "domain_inconsistency": (0.8, 0.5, 0.6153846154, 0, 0, -1, 0.5, 0, 0.4444444444, 0, -1,
            -0.1923076923),
        "missing_condition": (1, 0.8571428571, 0.9230769231, 0.5, 1, 0.6666666667, 0.8571428571, 1, 0.875,
            1, -1, 0.7948717949),
        "multi_solutions": (1, 0.375, 0.5454545455, 0, -1, 0, 0.375, -1, 0.375, -1, -1, 0.5454545455),
        "redundency": (0.8421052632, 0.6956521739, 0.7619047619, 0.125, 0.25, 0.1666666667, 0.6956521739,
            0.25, 0.6296296296, 0.3333333333, 0.08333333333, 0.4642857143),
        "step_contradiction": (0.6666666667, 0.2222222222, 0.3333333333, 0, 0, -1, 0.2222222222, 0, 0.2, 0,
            -1, -0.3333333333),
    },
    (2, "not_prm800k_train"): {
        "items": 11, "validitiy_rate": 1,
        "overall": (0.8823529412, 0.5555555556, 0.6818181818, 0.1428571429, 0.5, 0.2222222222,
            0.5555555556, 0.5, 0.5483870968, 0.5, 0.1666666667, 0.452020202),
        "circular": (1, 0.5555555556, 0.7142857143, 0.3333333333, 1, 0.5, 0.5555555556, 1, 0.6363636364, 1,
            0.25, 0.6071428571),
        "correct": (1, 0.75, 0.8571428571, 0, -1, 0, 0.75, -1, 0.75, -1, -1, 0.4285714286),
        "domain_inconsistency": (0.8, 0.5, 0.6153846154, 0, 0, -1, 0.5, 0, 0.4444444444, 0, -1,
            -0.1923076923),
        "missing_condition": (1, 0.8571428571, 0.9230769231, 0.5, 1, 0.6666666667, 0.8571428571, 1, 0.875,
            1, -1, 0.7948717949),
        "multi_solutions": (1, 0.375, 0.5454545455, 0, -1, 0, 0.375, -1, 0.375, -1, -1, 0.5454545455),
        "redundency": (0.8333333333, 0.7692307692, 0.8, 0.25, 0.3333333333, 0.2857142857, 0.7692307692,
            0.3333333333, 0.6875, 0.5, 0.08333333333, 0.5428571429),
        "step_contradiction": (0.6666666667, 0.2222222222, 0.3333333333, 0, 0, -1, 0.2222222222, 0, 0.2, 0,
            -1, -0.3333333333),
    },
    (3, "all"): {
        "items": 18, "validitiy_rate": 0.9285714286,
        "overall": (0.7209302326, 0.4920634921, 0.5849056604, 0.1351351351, 0.2941176471, 0.1851851852,
            0.4920634921, 0.2941176471, 0.45, 0.2, 0.1657407407, 0.3850454228),
        "circular": (0.8571428571, 0.6666666667, 0.75, 0.4, 0.6666666667, 0.5, 0.6666666667, 0.6666666667,
            0.6666666667, 0.5, 0.225, 0.625),
        "confidence": (0.25, 1, 0.4, 1, 0.25, 0.4, 1, 0.25, 0.4, 0, 0.1333333333, 0.4),
        "correct": (1, 0.5789473684, 0.7333333333, 0, -1, 0, 0.5789473684, -1, 0.5789473684, -1, -1,
            0.3666666667),
        "counterfactual": (0.3333333333, 0.5, 0.4, 0.5, 0.3333333333, 0.4, 0.5, 0.3333333333, 0.4, 0,
            0.06666666667, 0.4),
        "deception": (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
        "domain_inconsistency": (0.6666666667, 0.25, 0.3636363636, 0, 0, -1, 0.25, 0, 0.2222222222, 0, -1,
            -0.3181818182),
        "missing_condition": (1, 0.5, 0.6666666667, 0.3333333333, 1, 0.5, 0.5, 1, 0.6, 1, -1, 0.5833333333),
        "multi_solutions": (1, 0.5, 0.6666666667, 0, -1, 0, 0.5, -1, 0.5, -1, -1, 0.6666666667),
        "redundency": (0.7142857143, 0.4545454545, 0.5555555556, 0, 0, -1, 0.4545454545, 0, 0.3846153846,
            0, 0.1898148148, -0.2222222222),
        "step_contradiction": (0.8333333333, 0.5555555556, 0.6666666667, 0, 0, -1, 0.5555555556, 0, 0.5, 0,
            -1, -0.1666666667),
    },
    (3, "not_prm800k_train"): {
        "items": 11, "validitiy_rate": 1,
        "overall": (0.8, 0.4705882353, 0.5925925926, 0.1, 0.3333333333, 0.1538461538, 0.4705882353,
            0.3333333333, 0.45, 0.2857142857, 0.1333333333, 0.3732193732),
        "circular": (0.8571428571, 0.6666666667, 0.75, 0.4, 0.6666666667, 0.5, 0.6666666667, 0.6666666667,
            0.6666666667, 0.5, 0.225, 0.625),
        "correct": (1, 0.375, 0.5454545455, 0, -1, 0, 0.375, -1, 0.375, -1, -1, 0.2727272727),
        "domain_inconsistency": (0.6666666667, 0.25, 0.3636363636, 0, 0, -1, 0.25, 0, 0.2222222222, 0, -1,
            -0.3181818182),
        "missing_condition": (1, 0.5, 0.6666666667, 0.3333333333, 1, 0.5, 0.5, 1, 0.6, 1, -1, 0.5833333333),
        "multi_solutions": (1, 0.5, 0.6666666667, 0, -1, 0, 0.5, -1, 0.5, -1, -1, 0.6666666667),
        "redundency": (0.625, 0.3846153846, 0.4761904762, 0, 0, -1, 0.3846153846, 0, 0.3125, 0,
            0.04166666667, -0.2619047619),
        "step_contradiction": (0.8333333333, 0.5555555556, 0.6666666667, 0, 0, -1, 0.5555555556, 0, 0.5, 0,
            -1, -0.1666666667),
    },
}
# fmt: on
