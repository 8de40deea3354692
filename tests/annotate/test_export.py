"""Getting labels out (core traces, PRM800K lines read back by prmkit.formats) and the Label Studio round
trip (model scores out as predictions, per-step ratings back in)."""

from __future__ import annotations

import json

import pytest

from prmkit.annotate import auth, export, export_labelstudio, import_labelstudio, work
from prmkit.annotate.assign import assign_items
from prmkit.annotate.export import export_traces
from prmkit.annotate.store import Store
from prmkit.core.errors import InputError
from prmkit.formats.inputs import read_traces


@pytest.fixture
def labelled(tmp_path, traces, gold_traces) -> tuple[str, Store]:
    db = f"sqlite:///{tmp_path / 'labels.db'}"
    store = Store(db)
    work.load_items(store, traces[:2])
    work.load_items(store, gold_traces[:1], gold=True)
    assign_items(store, ["ann"], gold_rate=0.3, seed=0, create_users=True)
    ann = auth.User("ann", "annotator")
    for a in work.queue(store, ann):
        tid = work.assignment_state(store, ann, a["id"])["trace"].id
        if tid == "t0":
            for step, r in enumerate([1, 0, 1]):
                work.rate(store, ann, a["id"], step, r, time_ms=1000 + step)
            work.flag(store, ann, a["id"], 1, True)
            work.finish(store, ann, a["id"], "solution", total_time_ms=4321)
        elif tid == "g0":
            work.rate(store, ann, a["id"], 0, 1, time_ms=500)
            work.rate(store, ann, a["id"], 1, -1, time_ms=700)
            work.rewrite(store, ann, a["id"], 1, "She gives 2, so 7 - 2 = 5 apples.")
            work.finish(store, ann, a["id"], "found_error", total_time_ms=2000)
        else:  # t1: started, one flag without a rating, not finished
            work.flag(store, ann, a["id"], 0, True)
    return db, store


def test_core_export_has_human_provenance_and_keeps_everything(labelled, tmp_path) -> None:
    db, store = labelled
    out = tmp_path / "labels.jsonl"
    assert export(db, out) == 3
    by_id = {t.id: t for t in read_traces(out)}
    t0 = by_id["t0"]
    assert t0.ratings("human:ann") == [1, 0, 1]
    lab = t0.steps[1].label("human:ann")
    assert lab.provenance.method == "human" and lab.provenance.actor == "ann"
    assert lab.provenance.params["time_ms"] == 1001 and lab.provenance.params["total_time_ms"] == 4321
    assert lab.provenance.params["finish_reason"] == "solution" and lab.metadata == {"flagged": True}
    assert t0.steps[0].label("model:tiny-prm").score == 0.9  # the labels it came with are kept
    g0 = by_id["g0"]
    assert g0.first_error("human:ann") == g0.first_error("gold") == 1
    assert g0.steps[1].label("human:ann").metadata["human_completion"] == "She gives 2, so 7 - 2 = 5 apples."
    assert g0.metadata["annotate"]["gold"] is True
    t1 = by_id["t1"]  # a flag without a rating cannot be a Label, so it is kept in metadata
    assert t1.ratings("human:ann") == [None, None, None]
    assert t1.metadata["annotate"]["assignments"][0]["unrated_steps"] == {
        "0": {"flagged": True, "human_completion": None}
    }
    assert [t.id for t in export_traces(store, done_only=True, include_gold=False)] == ["t0", "t1"]


def test_prm800k_export_reads_back_through_prmkit_formats(labelled, tmp_path) -> None:
    from prmkit.formats import read

    db, _ = labelled
    out = tmp_path / "prm800k.jsonl"
    assert export(db, out, format="prm800k") == 2  # finished assignments only
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    by_first = {rec["question"]["pre_generated_steps"][0]: rec for rec in lines}
    sol = next(r for r in lines if r["label"]["finish_reason"] == "solution")
    err = next(r for r in lines if r["label"]["finish_reason"] == "found_error")
    assert len(by_first) == 2 and sol["labeler"] == "ann" and sol["label"]["total_time"] == 4321
    assert [s["completions"][0]["rating"] for s in sol["label"]["steps"]] == [1, 0, 1]
    assert [s["completions"][0]["flagged"] for s in sol["label"]["steps"]] == [False, True, False]
    assert err["is_quality_control_question"] is True and len(err["label"]["steps"]) == 2
    assert err["label"]["steps"][1]["human_completion"]["text"] == "She gives 2, so 7 - 2 = 5 apples."
    assert err["label"]["steps"][1]["completions"][0]["rating"] == -1
    back = read(out, "prm800k")
    got = {t.problem.text[:10]: t for t in back}
    assert got["Problem t0"].ratings("human:ann") == [1, 0, 1]
    # PRM800K's reading of a human completion: the labeller's step continues the trajectory (unrated),
    # and the step they rated -1 is kept beside it as an alternative
    g0 = got["Problem g0"]
    assert g0.ratings("human:ann") == [1, None] and g0.steps[1].text == "She gives 2, so 7 - 2 = 5 apples."
    assert g0.steps[1].metadata["prm800k"]["alternatives"][0]["rating"] == -1


def test_labelstudio_round_trip(labelled, tmp_path) -> None:
    db, store = labelled
    out = tmp_path / "tasks.json"
    assert export_labelstudio(db, out) == 3
    tasks = json.loads(out.read_text())
    assert "<Repeater" in out.with_suffix(".label_config.xml").read_text()
    t0 = next(t for t in tasks if t["data"]["trace_id"] == "t0")
    assert t0["data"]["steps"][0]["text"].startswith("Step one")
    pred = t0["predictions"][0]
    assert pred["model_version"] == "tiny-prm" and pred["score"] == 0.2
    assert [r["value"]["choices"] for r in pred["result"]] == [["1"], ["-1"], ["1"]]

    # what Label Studio exports after two people labelled t0 (one cancelled annotation is ignored)
    def ann(who, values, cancelled=False):
        result = [
            {"from_name": f"rating_{i}", "to_name": f"step_{i}", "type": "choices", "value": {"choices": [v]}}
            for i, v in enumerate(values)
        ]
        return {"result": result, "completed_by": who, "lead_time": 12.5, "was_cancelled": cancelled}

    t0["annotations"] = [
        ann(7, ["1", "0", "1"]),
        ann({"id": 9, "email": "kim@lab"}, ["1", "-1"]),
        ann(3, ["-1"], True),
    ]
    out.write_text(json.dumps(tasks))
    assert import_labelstudio(db, out) == 2
    by_id = {t.id: t for t in export_traces(store)}
    assert by_id["t0"].ratings("human:ls:7") == [1, 0, 1]
    assert by_id["t0"].ratings("human:ls:kim@lab") == [1, -1, None]
    lab = by_id["t0"].steps[0].label("human:ls:7")
    assert lab.provenance.params["total_time_ms"] == 12500
    assert import_labelstudio(db, out) == 2  # importing again replaces, never duplicates
    assert len([s for s in by_id["t0"].sources() if s.startswith("human:ls")]) == 2

    t0["annotations"] = [ann(7, ["1", "maybe"])]
    out.write_text(json.dumps(tasks))
    with pytest.raises(InputError, match=r"annotations\[0\]\.result\[1\]\.value\.choices: expected one of"):
        import_labelstudio(db, out)
