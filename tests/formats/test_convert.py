from __future__ import annotations

import json

import pytest

from prmkit.core import InputError
from prmkit.formats import FORMATS, convert, detect_format, inspect, read, validate, write

FORMAT_NAMES = [
    "prmkit",
    "prm800k",
    "math_shepherd",
    "processbench",
    "trl",
    "agentprocessbench",
    "chat",
    "prmbench",
    "socratic_prmbench",
    "bbm",
    "mrben",
    "deltabench",
]
WRITE_ONLY = ["step_dpo"]
"""Formats written, never read back (pairs, not traces): tests/formats/test_step_dpo.py covers them."""
SUFFIX = {"processbench": ".json"}


def _real_files(real_data):
    files = sorted(p for p in real_data.glob("*/*") if p.suffix in (".json", ".jsonl"))
    assert len(files) == 7
    return files


def test_registry_names_and_did_you_mean():
    assert FORMATS.names() == sorted(FORMAT_NAMES + WRITE_ONLY)
    with pytest.raises(KeyError, match="Did you mean 'processbench'"):
        FORMATS.get("procesbench")


def test_detection_on_every_real_sample(real_data):
    expected = {"prm800k": "prm800k", "math_shepherd": "math_shepherd", "processbench": "processbench"}
    for path in _real_files(real_data):
        assert detect_format(path) == expected[path.parent.name]


def test_every_real_sample_is_lossless_through_prmkit_files(real_data, tmp_path):
    for path in _real_files(real_data):
        original = read(path)
        for suffix in (".jsonl",):
            core = tmp_path / f"{path.stem}{suffix}"
            report = convert(path, core)
            assert report.to_format == "prmkit" and report.detected and not report.dropped and not report.lost
            back = read(core)
            assert back.format == "prmkit"
            assert list(back) == list(original) and back.problems == original.problems
            out = tmp_path / path.name
            write(out, back.traces or back.problems, original.format)
            assert out.read_bytes() == path.read_bytes(), path.name


@pytest.mark.parametrize("target", FORMAT_NAMES)
def test_every_real_sample_converts_to_every_format(real_data, tmp_path, target):
    for path in _real_files(real_data):
        if path.name.startswith("math_splits") and target not in ("prmkit", "prm800k"):
            with pytest.raises(InputError, match="holds no problem-only records"):
                convert(path, tmp_path / "x", to_format=target)
            continue
        out = tmp_path / f"{path.stem}-{target}{SUFFIX.get(target, '.jsonl')}"
        report = convert(path, out, to_format=target)
        assert report.read == len(read(path).traces or read(path).problems)
        if target != "trl":  # TRL's expansion writes several rows per PRM800K trace
            assert report.written + sum(report.dropped.values()) == report.read
        check = validate(out, target)
        assert check.valid, check.issues
        assert check.records == report.written


def test_processbench_to_math_shepherd_cuts_the_unlabelled_tail(real_data, tmp_path):
    src = real_data / "processbench" / "gsm8k.json"
    out = tmp_path / "ms.jsonl"
    report = convert(src, out, to_format="math_shepherd")
    records = json.loads(src.read_text(encoding="utf-8"))
    cut = sum(1 for r in records if 0 <= r["label"] < len(r["steps"]) - 1)
    assert report.notes == {"unlabelled_tail_cut": cut}
    back = read(out)
    for rec, t in zip(records, back, strict=True):
        n = len(rec["steps"]) if rec["label"] == -1 else rec["label"] + 1
        assert [s.text for s in t.steps] == rec["steps"][:n]
        assert t.first_error("mc_hard") == rec["label"]


def test_prm800k_phase2_to_processbench_keeps_the_first_error(prm800k_labels, tmp_path):
    traces = read(prm800k_labels)
    for t in traces:  # PRM800K records no outcome or generator; supply them to write ProcessBench
        t.answer_correct, t.generator = False, "gpt-4 (prm800k)"
    out = tmp_path / "pb.json"
    report = write(out, traces, "processbench")
    assert report.written == 6
    labels = [r["label"] for r in json.loads(out.read_text(encoding="utf-8"))]
    assert labels == [-1, 6, -1, -1, -1, -1]  # the neutral step 1 of line 2 is not an error
    write(out, traces, "processbench", neutral="negative")
    assert [r["label"] for r in json.loads(out.read_text(encoding="utf-8"))][1] == 1


def test_grading_into_prmkit_jsonl_keeps_everything_and_marks_the_answers(prm800k_labels, tmp_path):
    """``--grade`` on prmkit's own format (what `prmkit train orm` asks for): every trace is kept, the
    gradable ones get ``answer_correct``, the rest stay unknown and are counted."""
    out = tmp_path / "graded.jsonl"
    report = convert(prm800k_labels, out, to_format="prmkit", grade=True)
    assert report.written == 6 and not report.dropped
    assert report.notes == {"answer_correct_graded": 4, "answer_not_gradable": 2}
    outcomes = [
        json.loads(line).get("answer_correct") for line in out.read_text(encoding="utf-8").splitlines()
    ]
    assert outcomes == [True, False, True, True, None, None]  # as the ProcessBench test below grades them
    again = tmp_path / "again.jsonl"  # what already has an outcome is left as it is
    assert convert(out, again, to_format="prmkit", grade=True).notes == {"answer_not_gradable": 2}


def test_prm800k_to_processbench_with_grading_and_a_generator_name(prm800k_labels, tmp_path):
    out = tmp_path / "pb.json"
    report = convert(prm800k_labels, out, to_format="processbench", grade=True, generator="prm800k-gpt4")
    # line 5 gave up (no final answer) and line 6 is a screening question (no ground truth): not gradable
    assert report.dropped == {"answer_not_gradable": 2} and report.notes == {"answer_correct_graded": 4}
    records = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["final_answer_correct"], r["label"]) for r in records] == [
        (True, -1),
        (False, 6),  # phase 2: pre-generated answer 7200, ground truth 28800
        (True, -1),
        (True, -1),
    ]
    assert {r["generator"] for r in records} == {"prm800k-gpt4"}


def test_conversion_reports_drops_by_reason(prm800k_labels, tmp_path):
    report = convert(prm800k_labels, tmp_path / "pb.json", to_format="processbench")
    assert report.written == 0 and report.dropped == {"no_final_answer_correct": 6}
    assert any("first error" in item for item in report.lost)
    text = "\n".join(report.lines())
    assert "dropped 6 trace(s): {'no_final_answer_correct': 6}" in text
    assert json.loads((tmp_path / "pb.json").read_text()) == []


def test_a_failed_read_writes_nothing(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"prompt": "Q", "completions": ["a"], "labels": [true, false]}\n')
    dst = tmp_path / "out.jsonl"
    with pytest.raises(
        InputError, match=r"bad.jsonl:1: labels: expected 1 values \(one per completion\), found 2"
    ):
        convert(src, dst)
    assert not dst.exists() and list(tmp_path.iterdir()) == [src]


def test_unknown_content_names_the_known_formats(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"foo": 1}\n')
    with pytest.raises(InputError) as err:
        read(path)
    assert str(err.value.issues[0]) == (
        f"{path}:1: (record): expected a record of a known format (processbench, prm800k, math_shepherd, trl, "
        "prmkit, agentprocessbench, chat, prmbench, bbm, mrben, deltabench, socratic_prmbench); "
        "name it with --from, found keys ['foo']"
    )
    report = validate(path)
    assert not report.valid and report.format == "unknown"


def test_inspect_counts_labels_and_first_errors(real_data, tmp_path):
    png = tmp_path / "fe.png"
    report = inspect(real_data / "processbench" / "gsm8k.json", png=png)
    assert (report.format, report.problems, report.traces, report.steps) == ("processbench", 10, 10, 48)
    assert report.first_error == {"human:processbench": {-1: 3, 0: 1, 1: 3, 2: 2, 4: 1}}
    assert report.labels["human:processbench"] == {"+1": 27, "-1": 7, "unlabelled": 14}
    # ids 0-9 come from the half with a wrong final answer, 200-208 from the right half
    assert report.answer_correct == {"false": 6, "true": 4}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    prm = inspect(real_data / "prm800k" / "labels_openr_samples.jsonl", by="method")
    assert prm.labels == {"human": {"+1": 41, "unlabelled": 8, "0": 1, "-1": 1}}
    assert prm.first_error == {"human": {-1: 5, 6: 1}}


def test_broken_parquet_and_missing_file(tmp_path):
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"x.parquet: \(file\): expected a readable Parquet file, found"):
        read(bad)
    with pytest.raises(InputError, match="readable Parquet"):
        read(bad, "trl")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read(tmp_path / "nope.jsonl")
