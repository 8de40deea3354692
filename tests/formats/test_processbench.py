from __future__ import annotations

import json

import pytest

from prmkit.core import InputError
from prmkit.formats import detect_format, read, write


def test_every_split_round_trips_byte_exactly(processbench_files, tmp_path):
    for path in processbench_files:
        traces = read(path, "processbench")
        out = tmp_path / path.name
        report = write(out, traces, "processbench")
        assert report.written == len(traces) and not report.dropped
        assert out.read_bytes() == path.read_bytes(), path.name


def test_first_error_equals_label_on_every_record(processbench_files):
    for path in processbench_files:
        records = json.loads(path.read_text(encoding="utf-8"))
        traces = read(path)
        assert traces.format == "processbench" and traces.detected
        for rec, t in zip(records, traces, strict=True):
            assert t.first_error("human:processbench") == rec["label"]
            assert t.id == rec["id"] and t.generator == rec["generator"]
            assert t.answer_correct is rec["final_answer_correct"]
            ratings = t.ratings("human:processbench")
            if rec["label"] == -1:
                assert ratings == [1] * len(rec["steps"])
            else:
                k = rec["label"]
                assert ratings == [1] * k + [-1] + [None] * (len(rec["steps"]) - k - 1)


def test_right_answer_beside_a_wrong_step_is_kept(processbench_files):
    gsm8k = read(next(p for p in processbench_files if p.name == "gsm8k.json"))
    lucky = [t for t in gsm8k if t.answer_correct and t.first_error("human:processbench") >= 0]
    assert [t.id for t in lucky] == ["gsm8k-208"]
    prov = lucky[0].steps[0].labels[0].provenance
    assert (prov.method, prov.actor) == ("human", "processbench")


def test_non_ascii_text_is_written_unescaped(processbench_files, tmp_path):
    for path in processbench_files:
        text = path.read_text(encoding="utf-8")
        if not text.isascii():
            out = tmp_path / path.name
            write(out, read(path), "processbench")
            assert out.read_text(encoding="utf-8") == text and not text.endswith("\n")
            return
    pytest.fail("no sample has non-ASCII text")


def _records(processbench_files):
    return json.loads(processbench_files[0].read_text(encoding="utf-8"))[:3]


def test_label_out_of_range_and_wrong_types(processbench_files, tmp_path):
    recs = _records(processbench_files)
    recs[1]["label"] = len(recs[1]["steps"])
    recs[2]["final_answer_correct"] = "yes"
    recs[2]["steps"][1] = 3
    recs[0].pop("generator")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(recs, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(path, "processbench")
    n = len(recs[1]["steps"])
    assert [str(i) for i in err.value.issues] == [
        f"{path}:1: generator: expected a string (the model that wrote the solution), found nothing",
        f"{path}:2: label: expected -1 or a step index 0..{n - 1}, found {n}",
        f"{path}:3: steps[1]: expected a string, found 3",
        f"{path}:3: final_answer_correct: expected true or false, found 'yes'",
    ]
    result = read(path, "processbench", skip_invalid=True)
    assert len(result) == 0 and dict(result.skipped.skipped) == {"missing": 1, "range": 1, "type": 1}


def test_jsonl_where_a_json_array_belongs(processbench_files, tmp_path):
    path = tmp_path / "gsm8k.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(processbench_files)), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(path, "processbench")
    assert str(err.value.issues[0]) == (
        f"{path}:1: (file): expected a JSON array of processbench records, found JSON Lines (one object per line)"
    )
    assert detect_format(path) == "processbench"  # detection names the format; reading then says why it fails
    with pytest.raises(InputError, match="expected a JSON array of processbench records"):
        read(path)
