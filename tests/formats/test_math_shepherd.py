from __future__ import annotations

import json

import pytest

from prmkit.core import InputError
from prmkit.formats import read, write

from .helpers import real_lines, write_lines

TAG = "ки"


def test_round_trips_byte_exactly(shepherd, tmp_path):
    traces = read(shepherd, "math_shepherd")
    out = tmp_path / "o.jsonl"
    report = write(out, traces, "math_shepherd")
    assert report.written == 7 and not report.dropped
    assert out.read_bytes() == shepherd.read_bytes()


def test_labels_are_read_at_the_tag_offsets_as_mc_hard(shepherd):
    traces = read(shepherd)
    assert traces.format == "math_shepherd" and traces.detected
    expected = ["++++-", "---", "--", "-----", "+----", "--", "---"]
    assert [
        "".join("+" if r == 1 else "-" for r in t.ratings("mc_hard:math-shepherd")) for t in traces
    ] == expected
    t = traces[0]
    assert t.problem.text.endswith("clarinet lessons in a year?") and t.problem.source == "GSM8K"
    # '+' inside the maths of step 1 is not a label
    assert t.steps[0].text == "Janet spends 3 hours + 5 hours = <<3+5=8>>8 hours per week on music lessons."
    prov = t.steps[0].labels[0].provenance
    assert (prov.method, prov.actor) == ("mc_hard", "math-shepherd")
    assert "peiyi9979/Math-Shepherd" in prov.params["source"]
    assert t.final_answer == "13520"
    assert all(not s.metadata for tr in traces for s in tr.steps)  # the real rows use the standard layout


def test_irregular_layout_round_trips(tmp_path):
    text = f"What is 1+1?\nstep 1: 1+1=2 {TAG}\n\nStep 3:  So 2.  {TAG}  "
    label = text.replace(TAG, "+", 1).replace(TAG, "-", 1)
    src = write_lines(tmp_path / "i.jsonl", [{"input": text, "label": label, "task": "MATH", "id": 7}])
    t = read(src)[0]
    assert [s.text for s in t.steps] == ["1+1=2", "So 2."]
    assert t.ratings("mc_hard") == [1, -1]
    assert t.steps[0].metadata["math_shepherd"] == {"prefix": "step 1: "}
    assert t.metadata["math_shepherd"] == {"joiner": "\n", "tail": "  ", "extra": {"id": 7}}
    out = tmp_path / "o.jsonl"
    write(out, read(src), "math_shepherd")
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize(
    ("change", "message", "reason"),
    [
        (lambda r: r.update(label=r["label"] + "+"), None, "count"),
        (
            lambda r: r.update(label=r["label"][:40] + "X" + r["label"][41:]),
            "label: expected input with each ки replaced by + or -, found a difference at character 40",
            "mismatch",
        ),
        (
            lambda r: r.pop("input"),
            "input: expected a string of steps each ending in ' ки', found nothing",
            "missing",
        ),
        (
            lambda r: r.update(
                input=r["input"].replace("Step 1:", "S1:"), label=r["label"].replace("Step 1:", "S1:")
            ),
            None,
            "format",
        ),
    ],
)
def test_bad_rows_are_located(shepherd, tmp_path, change, message, reason):
    rows = real_lines(shepherd)[:2]
    change(rows[1])
    path = write_lines(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as err:
        read(path, "math_shepherd")
    issue = err.value.issues[0]
    assert (issue.line, issue.reason) == (2, reason)
    if message:
        assert str(issue) == f"{path}:2: {message}"
    assert dict(read(path, "math_shepherd", skip_invalid=True).skipped.skipped) == {reason: 1}


def test_fewer_labels_than_tags_names_both_counts(shepherd, tmp_path):
    row = real_lines(shepherd)[1]  # 3 steps, all '-'
    row["label"] = row["label"].replace("-\nStep 3", f"{TAG}\nStep 3")
    path = write_lines(tmp_path / "bad.jsonl", [row])
    with pytest.raises(InputError) as err:
        read(path)
    n_in, n_lab = len(row["input"]), len(row["label"])
    assert str(err.value.issues[0]) == (
        f"{path}:1: label: expected 3 step labels ('+' or '-' at each ки of input), "
        f"found 2 (label has {n_lab} characters, input {n_in})"
    )


def test_a_label_character_other_than_plus_minus(shepherd, tmp_path):
    row = real_lines(shepherd)[2]
    pos = row["input"].index(TAG)
    row["label"] = row["label"][:pos] + "?" + row["label"][pos + 1 :]
    path = write_lines(tmp_path / "bad.jsonl", [row])
    with pytest.raises(InputError) as err:
        read(path)
    assert (
        str(err.value.issues[0])
        == f"{path}:1: label[{pos}]: expected '+' or '-' (label of step 1), found '?'"
    )


def test_writer_drops_traces_whose_text_holds_the_tag(shepherd, tmp_path):
    traces = read(shepherd)
    traces[0].steps[1].text += f" {TAG}"
    report = write(tmp_path / "o.jsonl", traces, "math_shepherd")
    assert report.written == 6 and report.dropped == {"text_contains_step_tag_ки": 1}


def test_literal_tag_file_round_trips_with_ensure_ascii_false(shepherd, tmp_path):
    literal = tmp_path / "literal.jsonl"
    literal.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in real_lines(shepherd)), encoding="utf-8"
    )
    assert TAG in literal.read_text(encoding="utf-8")
    out = tmp_path / "o.jsonl"
    write(out, read(literal), "math_shepherd", ensure_ascii=False)
    assert out.read_bytes() == literal.read_bytes()
    assert [t.ratings("mc_hard") for t in read(literal)] == [t.ratings("mc_hard") for t in read(shepherd)]
