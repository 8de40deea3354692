"""MR-Ben records: synthetic fixtures in the real schema (tests/data/mrben/README.md), and the real samples
under ``../shared/data/real/mrben`` where the project provides them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core import InputError
from prmkit.formats import detect_format, read, write
from prmkit.formats.mrben import SOURCE
from tests.conftest import REAL

DATA = Path(__file__).parents[1] / "data" / "mrben"
FILES = sorted(DATA.glob("*.json"))
REAL_MRBEN = REAL / "mrben"


def test_every_file_round_trips_byte_exactly(tmp_path):
    assert [p.stem for p in FILES] == ["biology", "coding", "math"]
    for path in FILES:
        traces = read(path)
        assert traces.format == "mrben" and detect_format(path) == "mrben"
        write(tmp_path / path.name, traces, "mrben")
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_jsonl_of_the_records_round_trips(tmp_path):
    traces = read(DATA / "math.json")
    write(tmp_path / "m.jsonl", traces, "mrben")
    assert detect_format(tmp_path / "m.jsonl") == "mrben"
    back = read(tmp_path / "m.jsonl")
    write(tmp_path / "m.json", back, "mrben")
    assert (tmp_path / "m.json").read_bytes() == (DATA / "math.json").read_bytes()


def test_first_error_steps_and_coding_lines():
    first, *_, correct, last = read(DATA / "math.json")
    assert first.id == "5e1f0000-0000-4000-8000-000000000001/Claude2" and first.generator == "Claude2"
    assert first.first_error(SOURCE) == 0 and first.answer_correct is False
    assert first.problem.source == "college_math" and first.problem.answer == "B"
    assert correct.answer_correct is True and set(correct.ratings(SOURCE)) == {1}
    assert last.first_error(SOURCE) == 2 and last.ratings(SOURCE) == [1, 1, -1, None, None]
    code = read(DATA / "coding.json")
    assert code[0].first_error(SOURCE) == 3 and code[0].steps[3].text.strip() == 'if ch == "a":'
    assert (
        code[2].steps[code[2].first_error(SOURCE)].text.strip()
        == "It skips the first character of the string."
    )
    empty = code[3]  # annotated first error step is "": no gold location, no labels
    assert empty.answer_correct is False and empty.sources() == []
    assert code[6].steps[0].text == "" and code[6].metadata["mrben"]["coding"]  # code opening with a newline
    assert "Options" not in code[0].metadata["mrben"]["key_order"]


def _real_files() -> list[Path]:
    files = sorted(REAL_MRBEN.glob("*.json")) if REAL_MRBEN.is_dir() else []
    if not files:
        pytest.skip(f"no real MR-Ben samples at {REAL_MRBEN} (the shared/ folder beside the project root)")
    return files


def test_real_records_read_and_round_trip_byte_exactly(tmp_path):
    for path in _real_files():
        traces = read(path)
        assert traces.format == "mrben" and detect_format(path) == "mrben" and len(traces) > 0, path.name
        for t in traces:
            assert t.answer_correct is not None and t.steps, t.id
            if t.answer_correct:
                assert set(t.ratings(SOURCE)) == {1}, t.id
        write(tmp_path / path.name, traces, "mrben")
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def _located(tmp_path: Path, edit) -> str:
    data = json.loads((DATA / "math.json").read_text(encoding="utf-8"))
    key = list(data)[1]
    data[key][1] = edit(data[key][1])
    path = tmp_path / "math.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    opens = [n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text == "    {"]
    line = opens[len(data[next(iter(data))]) + 1]  # the second record of the second question opens here
    with pytest.raises(InputError) as err:
        read(path)
    return str(err.value), line


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda r: {k: v for k, v in r.items() if k != "Question"}, "Question"),
        (lambda r: r | {"Model_Solution_Steps": []}, "Model_Solution_Steps"),
        (lambda r: r | {"Model_Solution_Steps": [1]}, "Model_Solution_Steps[0]"),
        (
            lambda r: (
                r | {"Model_Solution_Correctness": "incorrect", "Model_Solution_First_Error_Step": "99"}
            ),
            "Model_Solution_First_Error_Step",
        ),
        (lambda r: r | {"Model_Solution_Correctness": "maybe"}, "Model_Solution_Correctness"),
    ],
)
def test_bad_records_are_located(tmp_path, edit, where):
    message, line = _located(tmp_path, edit)
    assert f"math.json:{line}" in message and where in message


def test_bad_json_is_located(tmp_path):
    path = tmp_path / "math.json"
    path.write_text('{\n  "a": [\n    {oops}\n  ]\n}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        read(path)
    assert "math.json:3" in str(err.value)
