"""DeltaBench records: synthetic fixtures in the real schema (tests/data/deltabench/README.md), the real
file under ``../shared/data/real/deltabench`` where the project provides it, and ``prmkit eval deltabench``
reading the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core import InputError
from prmkit.formats import convert, detect_format, read, write
from prmkit.formats.deltabench import SOURCE, join_sections, split_sections
from tests.conftest import REAL
from tests.formats.helpers import real_lines, write_lines

DATA = Path(__file__).parents[1] / "data" / "deltabench"
FILES = sorted(DATA.glob("*.jsonl"))
REAL_DELTABENCH = REAL / "deltabench"


def test_every_file_round_trips_byte_exactly(tmp_path):
    assert [p.name for p in FILES] == ["Deltabench_v1.jsonl", "section_content.jsonl"]
    for path in FILES:
        traces = read(path)
        assert traces.format == "deltabench" and detect_format(path) == "deltabench"
        write(tmp_path / path.name, traces, "deltabench")
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_convert_through_prmkit_and_back_is_byte_exact(tmp_path):
    for path in FILES:
        convert(path, tmp_path / "t.jsonl", to_format="prmkit")
        convert(tmp_path / "t.jsonl", tmp_path / path.name, to_format="deltabench")
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_sections_labels_and_mapping():
    first, code, clean, repeated = read(DATA / "Deltabench_v1.jsonl")
    assert first.id == "dbx-001" and first.problem.source == "math" and first.problem.answer == "7"
    assert first.steps[1].text == "That is 9 - 3 = 6 integers." and first.answer_correct is True
    assert first.ratings(SOURCE) == [1, -1, 1, 1]
    assert code.ratings(SOURCE) == [1, -1, -1, 1] and code.answer_correct is False  # unuseful 2, error 3
    kinds = [s.label(SOURCE).metadata for s in code.steps[1:3]]
    assert kinds == [{"error": False, "unuseful": True}, {"error": True, "unuseful": False}]
    assert clean.ratings(SOURCE) == [-1, 1, 1]  # an unuseful section only: still gold (upstream's union)
    assert repeated.first_error(SOURCE) == 1
    old = read(DATA / "section_content.jsonl")
    assert [t.id for t in old] == ["section_content-0", "section_content-1"]
    assert old[0].steps[2].text.startswith("Hmm, multiplication") and old[0].answer_correct is None


def test_edited_steps_and_labels_rebuild_the_section_fields(tmp_path):
    trace = read(DATA / "Deltabench_v1.jsonl")[0]
    trace.steps[1].text = "That is 9 - 3 + 1 = 7 integers."
    trace.steps[1].labels[0].rating = 1
    write(tmp_path / "e.jsonl", [trace], "deltabench")
    (rec,) = real_lines(tmp_path / "e.jsonl")
    assert rec["sections"][1] == {"content": "That is 9 - 3 + 1 = 7 integers."}
    assert split_sections(rec["sections_content"])[1] == "That is 9 - 3 + 1 = 7 integers."
    assert rec["reason_error_section_numbers"] == [] and rec["reason_unuseful_section_numbers"] == []
    assert split_sections(join_sections(["a", "b\n\nc"])) == ["a", "b\n\nc"]


def test_eval_deltabench_reads_the_file_and_groups_by_domain(tmp_path):
    out = CliRunner().invoke(
        app,
        ["eval", "deltabench", str(DATA / "Deltabench_v1.jsonl"), "--source", SOURCE, "-o", str(tmp_path)],
    )
    assert out.exit_code == 0, out.output
    result = json.loads((tmp_path / "deltabench.json").read_text())
    assert result["headline"] == 1.0
    assert [g["name"] for g in result["groups"]] == ["math", "code", "Physics&Chemistry&Biology", "general"]


def _real_files() -> list[Path]:
    files = sorted(REAL_DELTABENCH.glob("*.jsonl")) if REAL_DELTABENCH.is_dir() else []
    if not files:
        pytest.skip(
            f"no real DeltaBench file at {REAL_DELTABENCH} (the shared/ folder beside the project root)"
        )
    return files


def test_real_records_read_and_round_trip(tmp_path):
    for path in _real_files():
        traces = read(path)
        assert traces.format == "deltabench" and detect_format(path) == "deltabench" and len(traces) > 0
        assert all(t.steps and None not in t.ratings(SOURCE) for t in traces)
        write(tmp_path / path.name, traces, "deltabench")
        # the records come back equal; byte for byte only if the file was written as json.dumps writes
        assert real_lines(tmp_path / path.name) == real_lines(path), path.name


def _record() -> dict:
    return json.loads((DATA / "Deltabench_v1.jsonl").read_text(encoding="utf-8").splitlines()[1])


@pytest.mark.parametrize(
    ("edit", "where", "reason"),
    [
        (lambda r: {k: v for k, v in r.items() if k != "question"}, "question", "missing"),
        (lambda r: r | {"reason_error_section_numbers": "3"}, "reason_error_section_numbers", "type"),
        (lambda r: r | {"reason_unuseful_section_numbers": [2.0]}, "reason_unuseful_section_numbers[0]", "type"),
        (lambda r: r | {"reason_error_section_numbers": [9]}, "reason_error_section_numbers[0]", "range"),
        (lambda r: r | {"sections": []}, "sections", "empty"),
        (lambda r: r | {"sections": [{"content": 1}]}, "sections[0].content", "type"),
        (lambda r: {k: v for k, v in r.items() if k != "sections"} | {"sections_content": "no headers"},
         "sections_content", "layout"),
        (lambda r: {k: v for k, v in r.items() if k not in ("sections", "sections_content")},
         "sections_content", "missing"),
    ],
)  # fmt: skip
def test_bad_records_are_located(tmp_path, edit, where, reason):
    path = write_lines(tmp_path / "d.jsonl", [_record(), edit(_record())])
    with pytest.raises(InputError) as err:
        read(path, "deltabench")
    issue = err.value.issues[0]
    assert (issue.line, issue.field, issue.reason) == (2, where, reason) and "d.jsonl:2" in str(err.value)


def test_bad_json_and_every_issue_are_reported(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [_record(), "{oops", _record() | {"question": 3}])
    with pytest.raises(InputError) as err:
        read(path, "deltabench")
    assert [i.line for i in err.value.issues] == [2, 3]
    assert read(path, "deltabench", skip_invalid=True).skipped.total == 2
