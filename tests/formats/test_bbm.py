"""BIG-Bench Mistake records: synthetic fixtures in the real schema (tests/data/bbm/README.md), and the real
samples under ``../shared/data/real/bbm`` where the project provides them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core import InputError
from prmkit.formats import detect_format, read, write
from prmkit.formats.bbm import SOURCE
from tests.conftest import REAL

DATA = Path(__file__).parents[1] / "data" / "bbm"
FILES = sorted(DATA.glob("*.jsonl"))
REAL_BBM = REAL / "bbm"


def test_every_file_round_trips_byte_exactly(tmp_path):
    assert len(FILES) == 5
    for path in FILES:
        traces = read(path)
        assert traces.format == "bbm" and detect_format(path) == "bbm"
        report = write(tmp_path / path.name, traces, "bbm")
        assert report.written == len(traces) and not report.dropped
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_mistake_index_is_the_first_error_and_fields_map():
    mistaken, clean = read(DATA / "multistep_arithmetic.jsonl")
    assert mistaken.id == "multistep_arithmetic-0" and mistaken.problem.source == "multistep_arithmetic"
    assert mistaken.first_error(SOURCE) == 3 and mistaken.ratings(SOURCE) == [1, 1, 1, -1, None]
    assert clean.first_error(SOURCE) == -1 and set(clean.ratings(SOURCE)) == {1}
    assert (mistaken.final_answer, mistaken.problem.answer, mistaken.answer_correct) == ("13", "12", False)
    assert clean.answer_correct is False  # no mistake marked, yet a wrong answer (as in the real files)
    no_answer = read(DATA / "logical_deduction.jsonl")[1]
    assert no_answer.final_answer is None and no_answer.answer_correct is None
    dyck = read(DATA / "dyck_languages.jsonl")[0]
    assert dyck.metadata["bbm"]["key_order"] == ["input", "target", "answer", "steps", "mistake_index"]


def test_real_records_read_and_round_trip_byte_exactly(tmp_path):
    files = sorted(REAL_BBM.glob("*.jsonl")) if REAL_BBM.is_dir() else []
    if not files:
        pytest.skip(
            f"no real BIG-Bench Mistake samples at {REAL_BBM} (the shared/ folder beside the project root)"
        )
    for path in files:
        traces = read(path)
        assert traces.format == "bbm" and detect_format(path) == "bbm" and len(traces) > 0, path.name
        assert {t.problem.source for t in traces} == {path.stem}
        report = write(tmp_path / path.name, traces, "bbm")
        assert report.written == len(traces) and not report.dropped, path.name
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def _bad(tmp_path: Path, edit) -> str:
    lines = (DATA / "multistep_arithmetic.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1])
    lines[1] = edit(rec) if callable(edit) else edit
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(path, "bbm")
    return str(err.value)


@pytest.mark.parametrize(
    ("edit", "where", "expected"),
    [
        ("{not json", "(", "JSON"),
        (lambda r: {k: v for k, v in r.items() if k != "target"}, "target", "a string"),
        (lambda r: r | {"steps": "one"}, "steps", "a list of strings"),
        (lambda r: r | {"steps": []}, "steps", "at least one step"),
        (lambda r: r | {"mistake_index": 9}, "mistake_index", "null or a step index"),
        (lambda r: r | {"mistake_index": "1"}, "mistake_index", "an integer"),
    ],
)
def test_bad_records_are_located(tmp_path, edit, where, expected):
    message = _bad(tmp_path, edit)
    assert "t.jsonl:2" in message and where in message and expected in message
