"""PRMBench and Socratic-PRMBench readers: synthetic fixtures in the real schema (tests/data/prmbench and
tests/data/socratic_prmbench, README.md in each), and the real samples under ``../shared/data/real`` where
the project provides them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core import InputError
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats import detect_format, read, validate, write
from tests.conftest import REAL

DATA = Path(__file__).parents[1] / "data"
PRMBENCH = sorted((DATA / "prmbench").glob("*.jsonl"))
SOCRATIC = sorted((DATA / "socratic_prmbench").glob("*.jsonl"))
REAL_FOLDERS = {"prmbench": REAL / "prmbench", "socratic_prmbench": REAL / "socratic_prmbench"}
runner = CliRunner()


def _write(path: Path, records: list) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("files", "fmt"), [(PRMBENCH, "prmbench"), (SOCRATIC, "socratic_prmbench")])
def test_every_file_is_detected_and_round_trips_byte_exactly(files, fmt, tmp_path):
    assert len(files) >= 6
    for path in files:
        assert detect_format(path) == fmt
        traces = read(path)
        report = write(tmp_path / path.name, traces, fmt)
        assert report.written == len(traces) and not report.dropped and not report.notes
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.parametrize("fmt", ["prmbench", "socratic_prmbench"])
def test_real_records_read_and_round_trip_byte_exactly(fmt, tmp_path):
    folder = REAL_FOLDERS[fmt]
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not files:
        pytest.skip(f"no real {fmt} samples at {folder} (the shared/ folder beside the project root)")
    for path in files:
        traces = read(path)
        assert traces.format == fmt and detect_format(path) == fmt and len(traces) > 0, path.name
        assert all(t.sources() == [f"imported:{fmt}"] for t in traces), path.name
        report = write(tmp_path / path.name, traces, fmt)
        assert report.written == len(traces) and not report.dropped and not report.notes, path.name
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_records_map_to_traces_labels_and_metadata():
    (circular, past_end) = read(DATA / "prmbench" / "prm800k_test_p1_4o_circular.jsonl")
    assert circular.id == "circular_prm_test_p1_0" and circular.problem.source == "prm_test_p1"
    assert circular.ratings("imported:prmbench") == [1, -1, -1, 1, 1, 1]
    fields = circular.metadata["prmbench"]["fields"]
    assert fields["modified_steps"] == [2, 3, 4] and len(fields["original_process"]) == 5
    assert fields["question"] != fields["original_question"]  # the dataset's own form of the question
    # error step 12 of a 10-step process: kept for the round trip, labels only on the steps that exist
    assert past_end.metadata["prmbench"]["fields"]["error_steps"] == [2, 7, 12]
    assert len(past_end.steps) == 10 and past_end.first_error("imported:prmbench") == 1
    first, repeated_a, repeated_b = read(DATA / "prmbench" / "prm_test_p12_multi_solutions.jsonl")
    assert first.problem.answer == "2.10" and set(first.ratings("imported:prmbench")) == {1}
    assert (repeated_a.id, repeated_b.id) == (
        "multi_solutions_prm_test_p2_40",
        "multi_solutions_prm_test_p2_40-2",
    )
    (train,) = read(DATA / "prmbench" / "prm800k_train_p1_first400_4o_deception.jsonl")
    assert train.problem.source == "prm_train_p1"
    (missing,) = read(DATA / "prmbench" / "prm800k_test_p2_4o_missing_condition.jsonl")
    assert missing.problem.source == "prm_test_p2" and "x < 2" in missing.problem.text
    assert "x < 2" not in missing.metadata["prmbench"]["fields"]["original_question"]
    (chinese,) = read(DATA / "socratic_prmbench" / "test_premise_redundancy.jsonl")
    assert chinese.problem.source == "OlympiadBench" and "求a_5的值" in chinese.problem.text
    prov = chinese.steps[0].labels[0].provenance
    assert (prov.method, prov.actor) == ("imported", "socratic_prmbench")
    (veri,) = read(DATA / "socratic_prmbench" / "test_correction_error.jsonl")
    assert veri.id == "correction_error_gsm8k_test#77_veri" and veri.problem.source == "gsm8k_test"
    (past,) = read(DATA / "socratic_prmbench" / "test_conclusion_inconsistency.jsonl")
    assert len(past.steps) == 5 and past.ratings("imported:socratic_prmbench") == [1, 1, 1, -1, -1]


def test_a_file_with_lists_stored_as_strings():
    listed, stringed = read(DATA / "socratic_prmbench" / "test_decomposition_unsoundness.jsonl")
    assert "raw" not in listed.metadata["socratic_prmbench"]
    raw = stringed.metadata["socratic_prmbench"]["raw"]
    assert set(raw) == {"original_process", "modified_process", "modified_steps", "error_steps"}
    assert len(stringed.steps) == 4 and stringed.ratings("imported:socratic_prmbench") == [1, -1, 1, -1]
    assert (
        stringed.metadata["socratic_prmbench"]["fields"]["original_process"][3] == "The total is 6 * 4 = 24."
    )


def test_lists_stored_as_strings_are_read_and_written_back(tmp_path):
    rec = json.loads(SOCRATIC[0].read_text(encoding="utf-8").splitlines()[0])
    listed = read(SOCRATIC[0])[0]
    for key in ("modified_process", "modified_steps", "error_steps"):
        rec[key] = str(rec[key]) if key != "modified_process" else json.dumps(rec[key], ensure_ascii=False)
    path = _write(tmp_path / "s.jsonl", [rec])
    (trace,) = read(path, "socratic_prmbench")
    assert [s.text for s in trace.steps] == [s.text for s in listed.steps]
    assert trace.ratings("imported:socratic_prmbench") == listed.ratings("imported:socratic_prmbench")
    write(tmp_path / "back.jsonl", [trace], "socratic_prmbench")
    assert (tmp_path / "back.jsonl").read_bytes() == path.read_bytes()


BAD_CASES = [
    (lambda r: r.pop("modified_process"), "modified_process: expected a list, found nothing"),
    (
        lambda r: r.update(modified_process=[]),
        "modified_process: expected at least one step, found an empty list",
    ),
    (
        lambda r: r.update(error_steps=[0, 3]),
        "error_steps[0]: expected a 1-based step number (1 or more), found 0",
    ),
    (
        lambda r: r.update(error_steps=["3"]),
        "error_steps[0]: expected an integer (a 1-based step number), found '3'",
    ),
    (
        lambda r: r.update(error_steps="three"),
        "error_steps: expected a list (or a string holding one), found 'three'",
    ),
    (lambda r: r["modified_process"].__setitem__(1, 7), "modified_process[1]: expected a string, found 7"),
    (lambda r: r.update(classification=None), "classification: expected a string, found None"),
    (lambda r: r.pop("idx"), "idx: expected a string, found nothing"),
]


@pytest.mark.parametrize(("spoil", "message"), BAD_CASES)
def test_located_errors(tmp_path, spoil, message):
    records = [json.loads(line) for line in PRMBENCH[0].read_text(encoding="utf-8").splitlines()]
    spoil(records[0])
    path = _write(tmp_path / "bad.jsonl", records)
    with pytest.raises(InputError) as err:
        read(path, "prmbench")
    assert [str(i) for i in err.value.issues] == [f"{path}:1: {message}"]
    result = read(path, "prmbench", skip_invalid=True)
    assert len(result) == 1 and result.skipped.total == 1


def test_every_error_of_a_file_is_reported(tmp_path):
    lines = PRMBENCH[0].read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    records[1]["error_steps"] = [-1]
    path = _write(tmp_path / "bad.jsonl", [records[0], "{not json", records[1]])
    check = validate(path)
    assert check.format == "prmbench" and [i.line for i in check.issues] == [2, 3]


def test_cli_convert_through_prmkit_and_back(tmp_path):
    for src, fmt in ((PRMBENCH[-1], "prmbench"), (SOCRATIC[0], "socratic_prmbench")):
        native, back = tmp_path / f"{fmt}.prmkit.jsonl", tmp_path / f"{fmt}.jsonl"
        assert runner.invoke(app, ["convert", str(src), str(native), "--to", "prmkit"]).exit_code == 0
        result = runner.invoke(app, ["convert", str(native), str(back), "--to", fmt])
        assert result.exit_code == 0, result.output
        assert back.read_bytes() == src.read_bytes()


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_prmbench_holds_texts_and_error_steps(tmp_path_factory, data):
    prov = Provenance(method="judge", actor="j")
    n = data.draw(st.integers(1, 5))
    texts = data.draw(st.lists(st.text(max_size=8), min_size=n, max_size=n))
    ratings = data.draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    steps = [
        Step(text=t, labels=[Label(rating=r, provenance=prov)]) for t, r in zip(texts, ratings, strict=True)
    ]
    trace = Trace(id="t", problem=Problem(id="p", text=data.draw(st.text(max_size=8))), steps=steps)
    folder = tmp_path_factory.mktemp("prop")
    write(folder / "a.jsonl", [trace], "prmbench")
    (back,) = read(folder / "a.jsonl", "prmbench")
    write(folder / "b.jsonl", [back], "prmbench")
    assert (folder / "a.jsonl").read_bytes() == (folder / "b.jsonl").read_bytes()
    assert [s.text for s in back.steps] == texts and back.problem.text == trace.problem.text
    assert back.ratings("imported:prmbench") == ratings
