"""AgentProcessBench's metrics against its own script, on hand-made files where the script's rules matter.

The expected tables below were printed by RUCBM/AgentProcessBench ``eval/compare.py`` at commit
96bcf8a11edef0131e41b5a8340918016e454c82, run on the files these tests write from REFERENCE and
PREDICTIONS (``python compare.py --reference_dir ref --models_root_dir runs --datasets
hotpotqa,bfcl,tau2,mini --expected_reference_records 4 --score_metric M``). prmkit's code is its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.core.model import Label, Observation, Problem, Provenance, Step, ToolCall, Trace
from prmkit.evaluation.agentprocessbench import (
    Pair,
    compare_files,
    count,
    evaluate_traces,
    first_negative,
    int_label,
    latest_predictions,
    normalise_labels,
    rate,
    record_key,
    reference_records,
    run_agentprocessbench,
    timestamp,
)
from prmkit.evaluation.config import AgentProcessBenchConfig
from prmkit.formats import read

runner = CliRunner()


def ref(ti, labels, **kw):
    return {"total_index": ti, "question": "q", "messages": [], "step_labels": labels, "final_label": 1, **kw}


REFERENCE = {
    "hotpotqa": [
        ref(0, {"2": 1, "4": 1, "6": -1, "8": -1}, query_index=0, sample_index=0),
        ref(1, {"2": 1, "4": 1}, query_index=0, sample_index=1),
        ref(2, {"2": 0, "4": 1, "6": -1}, query_index=0, sample_index=2),
        ref(3, {"2": 1, "4": -1}, query_index=0, sample_index=3),
    ],
    "bfcl": [
        ref(500, {"2": 1, "4": -1}),
        ref(501, {"2": 1, "4": 1, "6": -1}),
        ref(502, {"2": -1, "4": -1}),
        ref(503, {"2": 1, "4": 0, "6": 1}),
    ],
    "tau2": [
        ref(750, {str(i): 1 for i in range(2, 22, 2)} | {"22": -1}),
        ref(751, {str(i): (0 if i % 4 else 1) for i in range(2, 14, 2)}),
        ref(752, {"2": 1, "4": 1, "6": 1}),
        ref(753, {"2": 1, "4": -1, "6": -1}),
    ],
    "mini": [
        {"record_id": "a", "step_labels": {"1": 1, "3": -1}},
        {"query_index": 2, "sample_index": 1, "step_labels": {"1": -1}},
        {"record_id": "c", "step_labels": None},
        {"record_id": "d", "step_labels": [1, -1]},
    ],
}
PREDICTIONS = {
    "hotpotqa": [
        # two lines for total_index 0: the newer timestamp wins although it comes first
        {
            "total_index": 0,
            "updated_at": "2025-03-01T00:00:00Z",
            "step_labels": {"2": 1, "4": -1, "6": -1, "8": -1},
        },
        {
            "total_index": 0,
            "updated_at": "2025-02-01T00:00:00Z",
            "step_labels": {"2": 1, "4": 1, "6": -1, "8": -1},
        },
        # keyed by query/sample (0 + 0*5 + 1), labels as a list indexed by message
        {"query_index": 0, "sample_index": 1, "step_labels": [None, None, 1, None, 1]},
        # string labels, an extra predicted key
        {"total_index": 2, "step_labels": {"2": "0", "4": " 1", "6": "-1", "8": "1"}},
        # total_index 3 missing; a prediction for a record the reference does not have
        {"total_index": 99, "step_labels": {"2": 1}},
    ],
    "bfcl": [
        {"total_index": 500, "step_labels": {"2": True, "4": False}},
        # failed annotation: still compared on its labels, counted as missing_or_failed
        {
            "total_index": 501,
            "comment": " llm_annotate_failed: timeout",
            "step_labels": {"2": 1, "4": 1, "6": -1},
        },
        # 1.5 is dropped; "x" is not an integer key
        {"total_index": 502, "step_labels": {"2": 1, "4": -1, "x": -1, "6": 1.5}},
        # a timestamped line beats a later line without one (ms since the epoch)
        {"total_index": 503, "timestamp": 1700000000000, "step_labels": {"2": 1, "4": -1, "6": 1}},
        {"total_index": 503, "step_labels": {"2": 1, "4": 0, "6": 1}},
    ],
    "tau2": [
        {"total_index": 750, "step_labels": {str(i): 1 for i in range(2, 24, 2)}},
        {"total_index": 751, "step_labels": {str(i): 1 for i in range(2, 14, 2)}},
        # no -1 on either side, labels equal; created_at unparseable, then timestamp in ns
        {
            "total_index": 752,
            "created_at": "yesterday",
            "timestamp": 1.7e18,
            "step_labels": {"2": 1, "4": 0, "6": 1},
        },
        {"total_index": 752, "timestamp": 1.6e18, "step_labels": {"2": 1, "4": 1, "6": 1}},
        {"total_index": 753, "step_labels": {"2": 1, "4": -1, "6": 1}},
    ],
    "mini": [
        {"record_id": " a ", "step_labels": {"1": 1, "3": -1}},
        {"query_index": "2", "sample_index": 1.0, "step_labels": {"1": 1}},
        {"record_id": "d", "step_labels": {"0": 1, "1": -1}},
    ],
}

OFFICIAL_TABLE = """\
MODEL  demo
dataset   ref_n  pred_n  missing_or_failed_pct  step_micro_acc  step_exact_acc  first_neg1_idx_acc
bfcl          4       4                 25.00%          70.00%          25.00%              25.00%
hotpotqa      4       4                 25.00%          72.73%          25.00%              50.00%
mini          4       3                 25.00%          80.00%          75.00%              75.00%
tau2          4       4                  0.00%          73.91%           0.00%              75.00%
AVG          16      15                 18.75%          73.47%          31.25%              56.25%
"""
OFFICIAL_FINAL = {
    "step_micro_acc": "FINAL_SCORE[step_micro_acc]=73.47%\nFINAL_SCORE_RAW=0.734694\n",
    "step_exact_acc": "FINAL_SCORE[step_exact_acc]=31.25%\nFINAL_SCORE_RAW=0.312500\n",
    "first_neg1_idx_acc": "FINAL_SCORE[first_neg1_idx_acc]=56.25%\nFINAL_SCORE_RAW=0.562500\n",
}
DATASETS = ("hotpotqa", "bfcl", "tau2", "mini")


def write_files(root: Path) -> tuple[list[Path], list[Path]]:
    """The reference and prediction files, named as the script finds them (<dataset>.jsonl,
    <dataset>__<run>.jsonl)."""
    refs, preds = [], []
    for d in DATASETS:
        refs.append(root / "ref" / f"{d}.jsonl")
        preds.append(root / "runs" / f"{d}__demo.jsonl")
        for path, records in ((refs[-1], REFERENCE[d]), (preds[-1], PREDICTIONS[d])):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return refs, preds


@pytest.mark.parametrize("metric", list(OFFICIAL_FINAL))
def test_the_official_table_character_for_character(tmp_path, metric):
    result = compare_files(*write_files(tmp_path))
    assert result.official_table(score_metric=metric) == OFFICIAL_TABLE + OFFICIAL_FINAL[metric]


def test_avg_is_micro_not_the_mean_of_percentages(tmp_path):
    result = compare_files(*write_files(tmp_path))
    per_dataset = [c.metrics()["step_micro_acc"] for c in result.datasets]
    assert (result.avg.step_matches, result.avg.step_total) == (36, 49)
    assert result.avg.metrics()["step_micro_acc"] == pytest.approx(36 / 49)
    assert sum(per_dataset) / len(per_dataset) == pytest.approx(0.7416, abs=1e-4)  # what AVG is not


def test_each_rule_on_its_record(tmp_path):
    refs, preds = write_files(tmp_path)
    result = compare_files(refs, preds)
    rows = {(r["dataset"], r["id"]): r for r in result.predictions}
    # the newer timestamp wins although its line comes first
    assert rows["hotpotqa", "ti:0"]["predicted"] == {"2": 1, "4": -1, "6": -1, "8": -1}
    # query_index 0, sample_index 1 -> total_index 1; a list of labels is keyed by position
    assert rows["hotpotqa", "ti:1"]["predicted"] == {"2": 1, "4": 1}
    # string labels parse; the extra predicted key "8" spoils only the exact match
    assert rows["hotpotqa", "ti:2"]["predicted"] == {"2": 0, "4": 1, "6": -1, "8": 1}
    assert rows["hotpotqa", "ti:3"]["status"] == "unlabelled" and rows["hotpotqa", "ti:3"]["predicted"] == {}
    assert rows["bfcl", "ti:500"]["predicted"] == {"2": 1, "4": 0}  # bools are 0/1
    # a failed annotation is counted as missing_or_failed but still compared on its labels
    failed = rows["bfcl", "ti:501"]
    assert failed["status"] == "unparseable" and failed["predicted"] == failed["reference"]
    assert failed["predicted_first_error"] is None  # for F1 it is no prediction (ProcessBench's rule)
    assert rows["bfcl", "ti:502"]["predicted"] == {"2": 1, "4": -1, "x": -1}  # 1.5 dropped
    assert rows["bfcl", "ti:503"]["predicted"] == {"2": 1, "4": -1, "6": 1}  # timestamped line wins
    assert rows["tau2", "ti:752"]["predicted"] == {"2": 1, "4": 0, "6": 1}  # 1.7e18 ns > 1.6e18 ns
    assert rows["mini", "rid:a"]["predicted"] == {"1": 1, "3": -1}
    assert rows["mini", "qs:2:1"]["predicted"] == {"1": 1}
    # an empty reference with no prediction: an exact and a first-error match, no steps
    assert rows["mini", "rid:c"]["reference"] == {} and rows["mini", "rid:c"]["status"] == "unlabelled"
    bfcl = next(c for c in result.datasets if c.dataset == "bfcl")
    assert (bfcl.missing_or_failed, bfcl.step_matches, bfcl.step_total) == (1, 7, 10)
    hotpotqa = next(c for c in result.datasets if c.dataset == "hotpotqa")
    assert hotpotqa.pred_records == 4  # the prediction for total_index 99 counts in pred_n only


def test_first_error_f1_uses_processbench_rules(tmp_path):
    result = compare_files(*write_files(tmp_path))
    hotpotqa = next(s for s in result.first_error if s.name == "hotpotqa")
    # gold first errors 6, -1, 6, 4; predicted 4, -1, 6 and none (missing)
    assert (hotpotqa.with_error, hotpotqa.error_free, hotpotqa.no_prediction) == (3, 1, 1)
    assert hotpotqa.acc_error == pytest.approx(1 / 3) and hotpotqa.acc_correct == 1.0
    assert hotpotqa.f1 == pytest.approx(0.5)
    pooled = result.first_error_avg
    assert pooled.traces == 16 and pooled.no_prediction == 3  # two missing, one failed
    defined = [s.f1 for s in result.first_error if s.f1 is not None]
    assert result.f1_mean == pytest.approx(sum(defined) / len(defined))


def test_label_and_key_normalisation():
    assert [int_label(v) for v in (1, -1, True, False, 2.0, 1.5, " -1 ", "+1", "1.0", "--1", None, "x")] == [
        1, -1, 1, 0, 2, None, -1, None, None, None, None, None,
    ]  # fmt: skip
    assert normalise_labels([1, None, "-1", 0.5]) == {"0": 1, "2": -1}
    assert normalise_labels(None) == {}
    with pytest.raises(ValueError, match=r"f.jsonl:3: step_labels: expected an object .* found str"):
        normalise_labels("1,-1", "f.jsonl:3: step_labels")
    assert first_negative({"x": -1, "10": -1, "8": 1, "9": -1}) == 9
    assert first_negative({"2": 1}) == -1
    assert record_key({"total_index": "7", "query_index": 1, "sample_index": 1}, "bfcl", "") == "ti:7"
    assert record_key({"query_index": 3, "sample_index": 2}, "tau2", "") == "ti:767"
    assert record_key({"query_index": 3, "sample_index": 2}, "other", "") == "qs:3:2"
    assert record_key({"record_id": " r1 "}, "other", "") == "rid:r1"
    with pytest.raises(ValueError, match=r"f.jsonl:2: record key: expected total_index"):
        record_key({"record_id": " "}, "bfcl", "f.jsonl:2")


def test_timestamps_and_the_latest_prediction(tmp_path):
    assert timestamp({"updated_at": "1970-01-01T00:00:10Z"}) == 10.0
    assert timestamp({"created_at": 1.7e9}) == timestamp({"timestamp": 1.7e12}) == 1.7e9  # s and ms
    assert timestamp({"updated_at": "soon", "timestamp": 2e18}) == 2e9  # the next field, in ns
    assert timestamp({"updated_at": ""}) is None
    path = tmp_path / "p.jsonl"
    lines = [
        {"total_index": 1, "step_labels": {"2": 1}},
        {"total_index": 1, "updated_at": "2025-01-02T00:00:00+00:00", "step_labels": {"2": -1}},
        {"total_index": 1, "step_labels": {"2": 0}},  # no timestamp: loses to the timestamped line
        {"total_index": 2, "step_labels": {"2": 0}},
        {"total_index": 2, "step_labels": {"2": 1}},  # neither has one: the later line
        {"total_index": 3, "created_at": 20, "step_labels": {"2": 1}},
        {"total_index": 3, "created_at": 20, "step_labels": {"2": -1}},  # a tie: the later line
    ]
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n\n")
    picked = {k: rec["step_labels"]["2"] for k, (_, rec) in latest_predictions(path, "x").items()}
    assert picked == {"ti:1": -1, "ti:2": 1, "ti:3": -1}


def test_malformed_files_are_located_errors(tmp_path):
    ref = tmp_path / "hotpotqa.jsonl"
    ref.write_text('{"total_index": 1, "step_labels": {}}\n\n{"total_index": 1, "step_labels": {}}\n')
    with pytest.raises(ValueError, match=r"hotpotqa.jsonl:3: record key ti:1 already given on line 1"):
        reference_records(ref, "hotpotqa")
    ref.write_text('{"total_index": 1}\n[1]\n')
    with pytest.raises(ValueError, match=r"hotpotqa.jsonl:2: expected a JSON object, found list"):
        reference_records(ref, "hotpotqa")
    ref.write_text('{"total_index": 1, "step_labels": 3}\n')
    pred = tmp_path / "hotpotqa__run.jsonl"
    pred.write_text('{"total_index": 1, "step_labels": {}}\n')
    with pytest.raises(ValueError, match=r"hotpotqa.jsonl:1: step_labels: expected an object"):
        compare_files([ref], [pred])
    with pytest.raises(ValueError, match=r"predictions for dataset 'bfcl' paired with reference"):
        compare_files([ref], [tmp_path / "bfcl__run.jsonl"])
    with pytest.raises(ValueError, match=r"expected one file per reference file \(1\), found 0"):
        compare_files([ref], [])


def test_counts_of_pairs_by_hand():
    pairs = [
        Pair("a", {"1": 1, "3": -1}, {"1": 1, "3": -1, "5": 1}),
        Pair("b", {"1": 0}, {}, "unlabelled"),  # no -1 on either side: a first-error match
    ]
    c = count("x", pairs, pred_records=1)
    assert (c.step_matches, c.step_total, c.exact_matches, c.first_error_matches) == (2, 3, 0, 2)
    assert c.metrics()["missing_or_failed_pct"] == 0.5


def test_cli_compare_prints_the_official_table(tmp_path):
    refs, preds = write_files(tmp_path)
    args = ["eval", "agentprocessbench", *map(str, refs)]
    for p in preds:
        args += ["--predictions", str(p)]
    result = runner.invoke(app, [*args, "--score-metric", "step_exact_acc", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert OFFICIAL_TABLE + OFFICIAL_FINAL["step_exact_acc"] in result.output
    saved = json.loads((tmp_path / "out" / "agentprocessbench.json").read_text())
    assert saved["final_score"] == pytest.approx(5 / 16) and saved["avg"]["step_total"] == 49
    assert len((tmp_path / "out" / "predictions.jsonl").read_text().splitlines()) == 16
    refused = runner.invoke(app, [*args, "--threshold", "0.3"])
    assert refused.exit_code != 0 and "leave out threshold" in refused.output


# -- traces and predictors ---------------------------------------------------------------------------

APB = Provenance(method="human", actor="agentprocessbench")


def agent_trace(tid: str, gold: list[int]) -> Trace:
    """An agent trajectory: each step calls a tool and gets its result back, the last one answers."""
    steps = []
    for i, rating in enumerate(gold):
        last = i == len(gold) - 1
        call = (
            [] if last else [ToolCall(name="search", arguments=json.dumps({"q": f"{tid} {i}"}), id=f"c{i}")]
        )
        seen = [] if last else [Observation(content=f"result {i}", call_id=f"c{i}", name="search")]
        steps.append(
            Step(
                text="<answer>x</answer>" if last else "",
                kind="reasoning" if last else "tool_call",
                tool_calls=call,
                observations=seen,
                labels=[Label(rating=rating, provenance=APB)],
            )
        )
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    return Trace(id=tid, problem=Problem(id=tid, text="q", tools=tools), steps=steps, final_answer="x")


GOLD = {"A": [1, 1, -1, -1], "B": [1, 0, 1], "C": [-1, 1]}
SCORES = {"A": [0.9, 0.6, 0.2, 0.55], "B": [0.8, 0.65, 0.95], "C": [0.7, 0.1]}


class TableScorer:
    """A StepScorer with fixed scores per trace id."""

    name = "table"

    def score(self, traces):
        return [SCORES[t.id] for t in traces]


def trace_sets() -> dict[str, list[Trace]]:
    return {
        "hotpotqa": [agent_trace("A", GOLD["A"]), agent_trace("B", GOLD["B"])],
        "bfcl": [agent_trace("C", GOLD["C"])],
    }


def test_rate_with_and_without_a_neutral_band():
    assert rate([0.1, 0.5, 0.6, 0.7, 0.9], 0.5) == [-1, 1, 1, 1, 1]
    assert rate([0.1, 0.5, 0.6, 0.7, 0.9], 0.5, 0.7) == [-1, 0, 0, 1, 1]
    with pytest.raises(ValueError, match=r"neutral_below: expected a value >= the threshold 0\.5"):
        rate([0.4], 0.5, 0.3)


def test_a_scorer_on_agent_trajectories_counted_by_hand():
    # A -> [1, 0, -1, 0]: 2/4; B -> [1, 0, 1]: 3/3 exact; C -> [1, -1]: 0/2, first error 1 vs 0
    result = evaluate_traces(trace_sets(), TableScorer(), threshold=0.5, neutral_below=0.7)
    assert result.gold_source == "human:agentprocessbench" and result.threshold_from == "given"
    assert [c.dataset for c in result.datasets] == ["bfcl", "hotpotqa"]
    bfcl, hotpotqa = result.datasets
    assert (hotpotqa.step_matches, hotpotqa.step_total, hotpotqa.exact_matches) == (5, 7, 1)
    assert hotpotqa.first_error_matches == 2 and bfcl.first_error_matches == 0
    assert result.avg.metrics()["step_micro_acc"] == pytest.approx(5 / 9)
    # first-error F1: hotpotqa gold [2, -1] predicted [2, -1]; bfcl gold [0] predicted [1]
    assert result.first_error[1].f1 == 1.0 and result.first_error[0].f1 is None
    assert result.first_error_avg.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert result.f1_mean == 1.0  # the one-sided bfcl is left out, as ProcessBench's headline does
    binary = evaluate_traces(trace_sets(), TableScorer(), threshold=0.5)  # no band: no 0 is predicted
    assert binary.avg.step_matches == 3 + 2 + 0


def test_step_keys_name_message_indices():
    def message_keys(trace):
        return [str(2 + 2 * i) for i in range(len(trace.steps))]

    as_messages = evaluate_traces(trace_sets(), TableScorer(), 0.5, 0.7, step_keys=message_keys)
    by_position = evaluate_traces(trace_sets(), TableScorer(), 0.5, 0.7)
    assert as_messages.to_dict()["avg"] == by_position.to_dict()["avg"]
    assert as_messages.first_error == by_position.first_error  # first errors compared as keys on both sides
    row = next(r for r in as_messages.predictions if r["id"] == "A")
    assert row["reference"] == {"2": 1, "4": 1, "6": -1, "8": -1} and row["gold_first_error"] == 6


def test_stored_labels_reproduce_the_reference(tmp_path):
    files = []
    for name, traces in trace_sets().items():
        files.append(tmp_path / f"{name}.jsonl")
        write_traces(files[-1], traces)
    # labels:SRC maps -1/0/+1 to 0/0.5/1: threshold 0.5 and a band up to 0.75 give the labels back
    result = run_agentprocessbench(
        AgentProcessBenchConfig(files=files, model="labels:human:agentprocessbench", neutral_below=0.75)
    )
    assert result.avg.metrics() == {
        "missing_or_failed_pct": 0.0, "step_micro_acc": 1.0, "step_exact_acc": 1.0, "first_neg1_idx_acc": 1.0,
    }  # fmt: skip
    assert result.threshold == 0.5 and result.threshold_from == "default"
    as_source = run_agentprocessbench(AgentProcessBenchConfig(files=files, source="human:agentprocessbench"))
    assert as_source.avg.step_matches == as_source.avg.step_total == 9
    with pytest.raises(ValueError, match="neutral_below: cuts a model's scores"):
        run_agentprocessbench(
            AgentProcessBenchConfig(files=files, source="human:agentprocessbench", neutral_below=0.7)
        )
    with pytest.raises(ValueError, match=r"gold: expected labels from one of .* found imported:elsewhere"):
        _no_known_gold()


def _no_known_gold():
    trace = agent_trace("A", GOLD["A"])
    for step in trace.steps:
        step.labels = [Label(rating=1, provenance=Provenance(method="imported", actor="elsewhere"))]
    evaluate_traces({"x": [trace]}, TableScorer(), threshold=0.5)


def test_cli_scores_trajectories(tmp_path):
    files = []
    for name, traces in trace_sets().items():
        files.append(str(tmp_path / f"{name}.jsonl"))
        write_traces(files[-1], traces)
    args = ["eval", "agentprocessbench", *files, "--model", "labels:human:agentprocessbench"]
    result = runner.invoke(app, [*args, "--neutral-below", "0.75", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "FINAL_SCORE[step_micro_acc]=100.00%" in result.output and "neutral below 0.75" in result.output
    saved = json.loads((tmp_path / "out" / "agentprocessbench.json").read_text())
    assert saved["neutral_below"] == 0.75 and saved["avg"]["step_total"] == 9
    assert saved["threshold_from"] == "default"
    none = runner.invoke(app, ["eval", "agentprocessbench", *files])
    assert none.exit_code != 0 and "give --predictions FILE" in none.output


def test_written_predictions_give_the_script_the_same_numbers(tmp_path):
    refs, preds = write_files(tmp_path)
    first = compare_files(refs, preds)
    first.write(tmp_path / "out")
    written = [tmp_path / "out" / "official" / f"{d}__prmkit.jsonl" for d in DATASETS]
    again = compare_files(refs, written)
    keep = ("missing_or_failed", "step_matches", "step_total", "exact_matches", "first_error_matches")
    for a, b in zip((*first.datasets, first.avg), (*again.datasets, again.avg), strict=True):
        assert [getattr(a, k) for k in keep] == [getattr(b, k) for k in keep]
    assert again.avg.pred_records == first.avg.pred_records - 1  # total_index 99 is not the reference's


def apb_record(total: int, labels: dict[str, int]) -> dict:
    """A small AgentProcessBench record: system, user, then assistant steps calling a tool (each with
    its result), then an answer; labels on the assistant messages (indices 2, 4, ...)."""
    messages = [{"role": "system", "content": "Answer with tools."}, {"role": "user", "content": "Who?"}]
    n = len(labels)
    for i in range(n - 1):
        call = {"id": f"call-{i}", "type": "function", "function": {"name": "search", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "name": "search", "content": f"r{i}", "tool_call_id": f"call-{i}"})
    messages.append({"role": "assistant", "content": "<answer>Adelaide</answer>"})
    tool = {"type": "function", "function": {"name": "search", "description": "s", "parameters": {}}}
    return {
        "total_index": total, "query_index": total // 5, "sample_index": total % 5, "question": "Who?",
        "data_source": "searchR1_hotpotqa", "ground_truth": {"target": ["Adelaide"]},
        "answer_text": "Adelaide",
        "messages": messages, "tool_metrics": {}, "tools": [tool], "step_labels": labels, "final_label": 1,
    }  # fmt: skip


def test_a_scorer_on_agentprocessbench_files_agrees_with_the_comparison(tmp_path):
    pytest.importorskip("prmkit.formats.agentprocessbench")
    ref = tmp_path / "hotpotqa.jsonl"
    records = [apb_record(0, {"2": 1, "4": 1, "6": -1}), apb_record(1, {"2": 1, "4": 0})]
    ref.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))

    class ByLength:
        name = "by-length"

        def score(self, traces):  # a longer trajectory's last step looks wrong to it
            return [[0.9] * (len(t.steps) - 1) + [0.1 if len(t.steps) > 2 else 0.6] for t in traces]

    result = evaluate_traces({"hotpotqa": list(read(ref))}, ByLength(), threshold=0.5, neutral_below=0.7)
    assert result.gold_source == "human:agentprocessbench"
    rows = {r["id"]: r for r in result.predictions}
    assert [r["predicted"] for r in rows.values()] == [{"2": 1, "4": 1, "6": -1}, {"2": 1, "4": 0}]
    assert result.avg.step_matches == result.avg.step_total == 5
    assert [r["predicted_first_error"] for r in rows.values()] == [6, -1]  # message indices
    assert result.first_error_avg.f1 == 1.0
    result.write(tmp_path / "out")
    compared = compare_files([ref], [tmp_path / "out" / "official" / "hotpotqa__prmkit.jsonl"])
    assert compared.avg == result.avg
