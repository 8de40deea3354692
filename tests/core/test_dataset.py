from __future__ import annotations

import json

import pytest

from prmkit.core import (
    InputError,
    Label,
    Problem,
    Provenance,
    SkipReport,
    Step,
    Trace,
    from_hf_dataset,
    read_native_problems,
    read_native_traces,
    to_hf_dataset,
    write_traces,
)
from prmkit.core.files import JsonlAppender


def traces() -> list[Trace]:
    prov = Provenance.now(
        "mc_soft", "world-policy", params={"rollouts": 8, "nested": {"a": [1, 2]}}, version="1"
    )
    p = Problem(id="p", text="Q", answer="7", source="arithmetic", metadata={"ops": 2})
    return [
        Trace(
            id="t0",
            problem=p,
            steps=[
                Step(text="x", labels=[Label(score=0.375, provenance=prov)], metadata={"k": None}),
                Step(text="y", kind="tool_call", labels=[Label(rating=0, score=0.5, provenance=prov)]),
            ],
            final_answer="7",
            answer_correct=True,
            generator="g",
        ),
        Trace(id="t1", problem=p, steps=[]),
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_file_round_trip_is_lossless(tmp_path, suffix):
    path = tmp_path / f"d{suffix}"
    data = traces()
    write_traces(path, data)
    assert read_native_traces(path) == data


def test_hf_dataset_round_trip():
    data = traces()
    ds = to_hf_dataset(data)
    assert ds.num_rows == 2
    assert from_hf_dataset(ds) == data


def test_bad_records_are_located_and_all_collected(tmp_path):
    good = traces()[0].model_dump_json()
    bad_rating = json.loads(good)
    bad_rating["steps"][0]["labels"][0]["rating"] = 5
    lines = [good, "{not json", json.dumps(bad_rating), json.dumps({"id": "t"})]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        read_native_traces(path)
    msg = str(err.value)
    assert f"{path}:2: (json): expected one JSON object per line" in msg
    assert f"{path}:3: steps.0.labels.0.rating: expected input should be -1, 0 or 1, found 5" in msg
    assert f"{path}:4: problem: expected field required, found nothing" in msg
    report = SkipReport()
    assert len(read_native_traces(path, skip_invalid=True, report=report)) == 1
    assert dict(report.skipped) == {"json": 1, "range": 1, "missing": 1}


def test_wrong_encoding_and_lfs_pointer(tmp_path):
    enc = tmp_path / "latin.jsonl"
    enc.write_bytes(b'{"id": "caf\xe9"}\n')
    with pytest.raises(
        InputError, match=r"latin.jsonl:1: \(encoding\): expected UTF-8 text, found byte 0xe9"
    ):
        read_native_traces(enc)
    lfs = tmp_path / "phase2_train.jsonl"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 1\n")
    with pytest.raises(InputError, match="git lfs pull"):
        read_native_traces(lfs)


def test_problems_from_a_trace_file(tmp_path):
    path = tmp_path / "t.jsonl"
    write_traces(path, traces())
    assert [p.id for p in read_native_problems(path)] == ["p"]


def test_appender_cuts_a_torn_tail(tmp_path):
    path = tmp_path / "log.jsonl"
    with JsonlAppender(path) as log:
        log.append({"i": 0})
        log.append({"i": 1})
    with open(path, "a") as fh:
        fh.write('{"i": 2')  # killed mid-write
    with JsonlAppender(path) as log:
        assert log.records() == [{"i": 0}, {"i": 1}]
        log.append({"i": 2})
        assert [r["i"] for r in log.records()] == [0, 1, 2]


def test_reading_pauses_the_cycle_collector_and_restores_it(tmp_path, monkeypatch):
    """Issue 65: the reader pauses Python's cycle collector while records become models (two thirds of
    reading a labelled file went to collections) and gives it back as it found it, on success, on a file
    with errors, and left off when a caller had it off; the records read are the same either way."""
    import gc

    path, data = tmp_path / "t.jsonl", traces()
    write_traces(path, data)
    seen: list[bool] = []
    validate = Trace.model_validate

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return validate(*args, **kwargs)

    monkeypatch.setattr(Trace, "model_validate", spy)
    assert gc.isenabled()
    assert read_native_traces(path) == data
    assert seen == [False, False] and gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text() + '{"id": "t"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:3: problem: expected field required"):
        read_native_traces(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        assert read_native_traces(path) == data
        assert not gc.isenabled()
    finally:
        gc.enable()
