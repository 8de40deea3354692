"""Step-DPO pairs: hand-built traces with known labels give exact pairs; the world's gold labels give many."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core import InputError
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats import convert, read, write
from prmkit.formats.step_dpo import pair_first_errors

runner = CliRunner()
JUDGE = Provenance(
    method="judge",
    actor="world-judge",
    params={"temperature": 0.0},
    version="3",
    created_at=datetime(2026, 1, 2, tzinfo=UTC),
)
MC = Provenance(method="mc_soft", actor="world-policy", params={"rollouts": 8})


def _trace(tid: str, problem: Problem, steps: list[tuple[str, int]], prov: Provenance = JUDGE) -> Trace:
    return Trace(
        id=tid,
        problem=problem,
        steps=[Step(text=t, labels=[Label(rating=r, provenance=prov)]) for t, r in steps],
    )


def _traces() -> list[Trace]:
    """Problem p: A all right; B wrong at step 3 after A's prefix; C wrong at step 2; D wrong at step 1.
    Problem q: E wrong at step 2, F shares no prefix with it (one character differs).
    Problem r: G and H share step 1 and are both wrong at step 2."""
    p = Problem(id="p", text="2 + 3 * 4 = ?", answer="14", source="toy")
    q = Problem(id="q", text="1 + 1 = ?", answer="2")
    r = Problem(id="r", text="5 - 2 = ?", answer="3")
    return [
        _trace("A", p, [("3 * 4 = 12.", 1), ("2 + 12 = 14.", 1), ("The answer is 14.", 1)]),
        _trace("B", p, [("3 * 4 = 12.", 1), ("2 + 12 = 14.", 1), ("The answer is 15.", -1)]),
        _trace("C", p, [("3 * 4 = 12.", 1), ("2 + 12 = 13.", -1), ("The answer is 13.", -1)]),
        _trace("D", p, [("2 + 3 = 5.", -1), ("5 * 4 = 20.", 1)]),
        _trace("E", q, [("One plus one.", 1), ("1 + 1 = 3.", -1)]),
        _trace("F", q, [("One plus one", 1), ("1 + 1 = 2.", 1)]),
        _trace("G", r, [("Subtract.", 1), ("5 - 2 = 4.", -1)]),
        _trace("H", r, [("Subtract.", 1), ("5 - 2 = 2.", -1)]),
    ]


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_hand_built_traces_give_exact_pairs(tmp_path):
    out = tmp_path / "pairs.jsonl"
    report = write(out, _traces(), "step_dpo")
    rows = _rows(out)
    assert [(r["prmkit"]["chosen_trace_id"], r["prmkit"]["rejected_trace_id"]) for r in rows] == [
        ("A", "B"),
        ("A", "C"),  # B takes the same correct step 2: one pair per distinct chosen text
        ("A", "D"),
    ]
    assert rows[0] == {
        "dataset": "toy",
        "prompt": "2 + 3 * 4 = ?",
        "initial_reason_steps": "Let's think step by step.\nStep 1: 3 * 4 = 12.\nStep 2: 2 + 12 = 14.\nStep 3:",
        "chosen": " The answer is 14.",
        "rejected": " The answer is 15.",
        "full_chosen": " The answer is 14.",
        "full_rejected": " The answer is 15.",
        "answer": "14",
        "prmkit": {
            "problem_id": "p",
            "chosen_trace_id": "A",
            "rejected_trace_id": "B",
            "step": 3,
            "pairing": "first-error",
            "source": "judge:world-judge",
            "chosen_label": {
                "method": "judge",
                "actor": "world-judge",
                "params": {"temperature": 0.0},
                "version": "3",
            },
            "rejected_label": {
                "method": "judge",
                "actor": "world-judge",
                "params": {"temperature": 0.0},
                "version": "3",
            },
            "writer_version": "1",
        },
    }
    assert rows[1]["initial_reason_steps"] == "Let's think step by step.\nStep 1: 3 * 4 = 12.\nStep 2:"
    assert rows[1]["full_chosen"] == " 2 + 12 = 14.\nStep 3: The answer is 14."
    assert rows[1]["full_rejected"] == " 2 + 12 = 13.\nStep 3: The answer is 13."
    assert rows[2]["initial_reason_steps"] == "Let's think step by step.\nStep 1:"  # an error at step 1
    assert (rows[2]["chosen"], rows[2]["rejected"]) == (" 3 * 4 = 12.", " 2 + 3 = 5.")
    assert report.written == 3
    assert report.dropped == {"no_shared_prefix": 1, "no_correct_next_step": 2}  # E; G and H
    assert report.notes == {"traces_without_error": 2, "problems_without_pair": 2}  # A, F; q, r
    assert report.options == {"source": "judge:world-judge", "pairing": "first-error", "threshold": 0.5}


def test_a_prefix_that_differs_by_one_character_forms_no_pair():
    traces = _traces()[4:6]  # E ("One plus one.") and F ("One plus one")
    pairing = pair_first_errors(traces, "judge")
    assert pairing.pairs == [] and pairing.unpaired == {"no_shared_prefix": 1}
    traces[1].steps[0].text = "One plus one."
    (pair,) = pair_first_errors(traces, "judge").pairs
    assert (pair.chosen.id, pair.rejected.id, pair.step) == ("F", "E", 1)


def test_unlabelled_prefix_and_unlabelled_traces_are_counted():
    p = Problem(id="p", text="?")
    a = _trace("a", p, [("x", 1), ("y", 1)])
    b = _trace("b", p, [("x", 1), ("z", -1)])
    b.steps[0].labels = []
    bare = Trace(id="c", problem=p, steps=[Step(text="x")])
    pairing = pair_first_errors([a, b, bare], "judge")
    assert pairing.pairs == []
    assert pairing.unpaired == {"unlabelled_prefix": 1, "no_labels": 1}


def _two_sources() -> list[Trace]:
    """The judge puts the first error at step 2, the MC soft scores at step 1 (0.2 < 0.5)."""
    p = Problem(id="p", text="?")
    out = []
    for tid, texts, judge, mc in (
        ("good", ["a", "b"], [1, 1], [0.9, 0.8]),
        ("bad", ["a", "c"], [1, -1], [0.2, 0.1]),
        ("other", ["d", "e"], [1, 1], [0.7, 0.7]),
    ):
        steps = [
            Step(text=t, labels=[Label(rating=j, provenance=JUDGE), Label(score=m, provenance=MC)])
            for t, j, m in zip(texts, judge, mc, strict=True)
        ]
        out.append(Trace(id=tid, problem=p, steps=steps))
    return out


def test_the_label_source_decides_the_pairs(tmp_path):
    traces = _two_sources()
    with pytest.raises(
        ValueError, match=r"judge:world-judge \(3 traces\), mc_soft:world-policy \(3 traces\)"
    ):
        write(tmp_path / "x.jsonl", traces, "step_dpo")
    assert not (tmp_path / "x.jsonl").exists()
    (by_judge,) = pair_first_errors(traces, "judge:world-judge").pairs
    assert (by_judge.chosen.id, by_judge.rejected.id, by_judge.step) == ("good", "bad", 1)
    by_mc = pair_first_errors(traces, "mc_soft")  # step 1 of "bad" scores 0.2: an error at step 1
    # "good" takes the same step 1 ("a", scored 0.9): a step rated both ways is no preference
    assert [(p.chosen.id, p.rejected.id, p.step) for p in by_mc.pairs] == [("other", "bad", 0)]
    assert pair_first_errors(traces, "mc_soft", threshold=0.15).pairs[0].step == 1  # 0.2 is right now
    report = write(tmp_path / "mc.jsonl", traces, "step_dpo", source="mc_soft")
    row = _rows(tmp_path / "mc.jsonl")[0]
    assert report.options["source"] == "mc_soft" and row["prmkit"]["source"] == "mc_soft"
    assert row["prmkit"]["rejected_label"]["params"] == {"rollouts": 8}


def test_provenance_round_trips(tmp_path):
    out = tmp_path / "pairs.jsonl"
    traces = _traces()
    write(out, traces, "step_dpo")
    for row in _rows(out):
        meta = row["prmkit"]
        by_id = {t.id: t for t in traces}
        k = meta["step"] - 1
        for side in ("chosen", "rejected"):
            trace = by_id[meta[f"{side}_trace_id"]]
            assert trace.problem.id == meta["problem_id"]
            label = trace.steps[k].label(meta["source"])
            assert Provenance.model_validate(meta[f"{side}_label"]) == label.provenance.model_copy(
                update={"created_at": None}
            )
            assert row[side] == f" {trace.steps[k].text}"


def test_parquet_rows_match_jsonl(tmp_path):
    import pyarrow.parquet as pq

    traces = _two_sources()
    for t in traces:  # a source without params: no empty struct, which Parquet cannot hold
        for s in t.steps:
            s.labels = [Label(rating=s.labels[0].rating, provenance=Provenance(method="gold", actor="w"))]
    write(tmp_path / "p.jsonl", traces, "step_dpo")
    write(tmp_path / "p.parquet", traces, "step_dpo")
    rows = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert rows == _rows(tmp_path / "p.jsonl")
    assert rows[0]["prmkit"]["rejected_label"] == {"method": "gold", "actor": "w", "version": None}


def test_other_pairings_are_refused_and_the_format_is_write_only(tmp_path):
    with pytest.raises(ValueError, match="option pairing: expected one of first-error, found 'full-step'"):
        write(tmp_path / "x.jsonl", _traces(), "step_dpo", pairing="full-step")
    out = tmp_path / "pairs.jsonl"
    write(out, _traces(), "step_dpo")
    with pytest.raises(InputError, match="step_dpo, which is write-only"):
        read(out, "step_dpo")


def test_cli_convert_to_step_dpo(tmp_path):
    src, out = tmp_path / "traces.jsonl", tmp_path / "pairs.jsonl"
    write(src, _traces(), "prmkit")
    result = runner.invoke(
        app, ["convert", str(src), str(out), "--to", "step-dpo", "--pairing", "first-error"]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 3 record(s)" in result.output
    assert "dropped 3 trace(s): {'no_shared_prefix': 1, 'no_correct_next_step': 2}" in result.output
    assert "'problems_without_pair': 2" in result.output
    assert "label source: judge:world-judge" in result.output
    assert len(_rows(out)) == 3

    back = runner.invoke(app, ["convert", str(out), str(tmp_path / "back.jsonl"), "--from", "step-dpo"])
    assert back.exit_code == 2
    assert "step_dpo, which is write-only" in back.output

    lonely = tmp_path / "lonely.jsonl"
    write(lonely, _traces()[4:6], "prmkit")
    empty = runner.invoke(app, ["convert", str(lonely), str(tmp_path / "none.jsonl"), "--to", "step_dpo"])
    assert empty.exit_code == 2
    assert "1 no_shared_prefix (step_dpo pairs traces of a problem that share" in empty.output
    assert not (tmp_path / "none.jsonl").exists()


def test_world_traces_with_gold_labels_give_pairs(tmp_path):
    from prmkit.worlds.registry import world

    traces = world("arithmetic").traces(10, 8, 0, "test", None)
    src, out = tmp_path / "world.jsonl", tmp_path / "pairs.jsonl"
    write(src, traces, "prmkit")
    report = convert(src, out, to_format="step-dpo", source="gold:world:prefix")
    rows = _rows(out)
    assert report.written == len(rows) >= 20
    by_id = {t.id: t for t in traces}
    for row in rows:
        meta = row["prmkit"]
        k = meta["step"] - 1
        chosen, rejected = by_id[meta["chosen_trace_id"]], by_id[meta["rejected_trace_id"]]
        assert chosen.problem.id == rejected.problem.id == meta["problem_id"]
        assert [s.text for s in chosen.steps[:k]] == [s.text for s in rejected.steps[:k]]
        assert rejected.first_error("gold:world:prefix") == k
        assert chosen.ratings("gold:world:prefix")[: k + 1] == [1] * (k + 1)
        assert meta["rejected_label"] == {"method": "gold", "actor": "world:prefix", "version": "world-2"}
    assert sum(report.dropped.values()) + report.notes["traces_without_error"] <= len(traces)


def test_the_rows_load_with_the_json_loader_step_dpo_trains_from(tmp_path):
    """Step-DPO's train.py: ``load_dataset("json", data_files=...)``, then a map that drops every column."""
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "pairs.jsonl"
    write(out, _traces(), "step_dpo")
    train = datasets.load_dataset("json", data_files=str(out), cache_dir=str(tmp_path / "cache"))["train"]
    assert train.column_names[:8] == [
        "dataset",
        "prompt",
        "initial_reason_steps",
        "chosen",
        "rejected",
        "full_chosen",
        "full_rejected",
        "answer",
    ]
    assert train[0]["prompt"] + "\n" + train[0]["initial_reason_steps"] + train[0]["chosen"] == (
        "2 + 3 * 4 = ?\nLet's think step by step.\nStep 1: 3 * 4 = 12.\nStep 2: 2 + 12 = 14.\n"
        "Step 3: The answer is 14."
    )
