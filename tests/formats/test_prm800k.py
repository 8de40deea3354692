from __future__ import annotations

import json

import pytest

from prmkit.core import InputError
from prmkit.formats import prm800k, read, write

from .helpers import real_lines, write_lines


def test_label_file_round_trips_byte_exactly(prm800k_labels, tmp_path):
    traces = read(prm800k_labels, "prm800k")
    out = tmp_path / "out.jsonl"
    report = write(out, traces, "prm800k")
    assert report.written == 6
    assert out.read_bytes() == prm800k_labels.read_bytes()


def test_math_splits_round_trip_byte_exactly_as_problems(math_splits, tmp_path):
    result = read(math_splits)
    assert result.format == "prm800k" and result.detected
    assert len(result) == 0 and len(result.problems) == 20
    first = result.problems[0]
    assert first.id == "test/precalculus/807.json"
    assert first.answer == "\\left( 3, \\frac{\\pi}{2} \\right)"
    assert first.metadata["level"] == 2 and first.metadata["subject"] == "Precalculus"
    out = tmp_path / "splits.jsonl"
    write(out, result.problems, "prm800k")
    assert out.read_bytes() == math_splits.read_bytes()


def test_phase1_trajectory_human_completion_and_alternatives(prm800k_labels):
    t = read(prm800k_labels)[0]
    labeler = "e90a38f3-3135-4465-87af-3e6322e3d772"
    assert t.sources() == [f"human:{labeler}"]
    assert t.metadata["prm800k"]["phase"] == 1
    assert t.ratings(f"human:{labeler}") == [1, None, 1, 1, 1, 1]
    human = t.steps[1]
    assert human.text == "We have $3p+e=1.24$ and $5p+e=1.82$."
    meta = human.metadata["prm800k"]
    assert meta["human_completion"] == {"rating": None, "source": "human", "flagged": False}
    assert [c["rating"] for c in meta["alternatives"]] == [-1] * 5
    # the last step's chosen completion is index 4; the neutral (0) alternative stays out of the trajectory
    last = t.steps[-1].metadata["prm800k"]
    assert last["chosen_completion"] == 4 and last["alternatives"][0]["rating"] == 0
    assert t.steps[0].labels[0].metadata == {"flagged": False}
    assert t.final_answer == "29" and t.problem.answer == "29"
    assert t.steps[0].labels[0].provenance.method == "human"


def test_phase2_steps_after_first_error_are_unlabelled_and_alternatives_not_in_solution(prm800k_labels):
    t = read(prm800k_labels)[1]
    source = t.sources()[0]
    raw = real_lines(prm800k_labels)[1]
    assert [s.text for s in t.steps] == raw["question"]["pre_generated_steps"]  # 13 steps, 7 labelled
    assert t.ratings(source) == [1, 0, 1, 1, 1, 1, -1] + [None] * 6
    assert t.first_error(source) == 6
    error_step = t.steps[6].metadata["prm800k"]
    assert error_step["chosen_completion"] is None and error_step["index"] == 0
    assert len(error_step["alternatives"]) == 3  # rated +1, but not part of the solution
    assert t.steps[6].labels[0].metadata == {"flagged": None}
    assert t.final_answer == "7200"
    assert t.problem.metadata["ground_truth_solution"] == raw["question"]["ground_truth_solution"]
    assert t.metadata["prm800k"]["generation"] == 6


def test_all_null_step_is_kept_raw_and_screening_nulls_survive(prm800k_labels):
    traces = read(prm800k_labels)
    give_up = traces[4]
    assert give_up.metadata["prm800k"]["finish_reason"] == "give_up"
    assert give_up.metadata["prm800k"]["tail"] == [
        {"completions": None, "human_completion": None, "chosen_completion": None}
    ]
    screening = traces[5]
    assert screening.metadata["prm800k"]["is_initial_screening_question"] is True
    assert screening.metadata["prm800k"]["generation"] == -1
    assert screening.problem.answer is None and screening.problem.metadata == {"ground_truth_solution": None}


def _variant(prm800k_labels):
    """Real line 1 with what the samples lack: QC flag, flagged true, null rating, corrected_rating, odd keys."""
    rec = real_lines(prm800k_labels)[0]
    rec["is_quality_control_question"] = True
    rec["label"]["steps"][0]["completions"][0]["flagged"] = True
    rec["label"]["steps"][2]["completions"][0]["rating"] = None
    rec["label"]["steps"][1]["human_completion"]["corrected_rating"] = None
    rec["label"]["finish_reason"] = "bad_problem"
    rec["question"] = {
        "ground_truth_answer": rec["question"]["ground_truth_answer"],
        "problem": rec["question"]["problem"],
    }
    rec["extra_key"] = {"x": 1}
    rec["label"]["steps"][3]["human_completion"] = {"text": "unused", "rating": None}
    return rec


def test_unseen_variants_round_trip_byte_exactly(prm800k_labels, tmp_path):
    src = write_lines(tmp_path / "v.jsonl", [_variant(prm800k_labels)])
    t = read(src)[0]
    assert t.steps[0].labels[0].metadata == {"flagged": True}
    assert t.steps[2].labels == [] and t.steps[2].metadata["prm800k"]["unrated"] == {"flagged": False}
    assert t.steps[1].metadata["prm800k"]["human_completion"]["corrected_rating"] is None
    assert t.metadata["prm800k"]["extra"] == {"record": {"extra_key": {"x": 1}}}
    out = tmp_path / "o.jsonl"
    write(out, read(src), "prm800k")
    assert out.read_bytes() == src.read_bytes()


def test_edited_trace_writes_its_edits(prm800k_labels):
    t = read(prm800k_labels)[0]
    t.steps[0].text = "edited"
    t.steps[0].labels[0].rating = 0
    rec = prm800k.to_record(t)
    assert rec["label"]["steps"][0]["completions"][0] == {"text": "edited", "rating": 0, "flagged": False}


def _bad(prm800k_labels, tmp_path, mutate, name="bad.jsonl"):
    good = real_lines(prm800k_labels)[0]
    bad = json.loads(json.dumps(good))
    mutate(bad)
    return write_lines(tmp_path / name, [good, bad])


@pytest.mark.parametrize(
    ("mutate", "message", "reason"),
    [
        (
            lambda r: r["label"]["steps"][0]["completions"][0].update(rating=2),
            "label.steps[0].completions[0].rating: expected -1, 0 or 1 (or null), found 2",
            "range",
        ),
        (
            lambda r: r["label"]["steps"][0]["completions"][0].update(rating=True),
            "label.steps[0].completions[0].rating: expected an integer -1, 0 or 1 (or null), found True",
            "type",
        ),
        (
            lambda r: r["question"].pop("problem"),
            "question.problem: expected a string, found nothing",
            "missing",
        ),
        (
            lambda r: r.update(is_quality_control_question="no"),
            "is_quality_control_question: expected true or false, found 'no'",
            "type",
        ),
        (
            lambda r: r["label"]["steps"][5].update(chosen_completion=9),
            "label.steps[5].chosen_completion: expected an index into the 5 completions, found 9",
            "range",
        ),
        (
            lambda r: r["label"]["steps"][1].update(human_completion="text"),
            "label.steps[1].human_completion: expected an object {text, ...} (or null), found 'text'",
            "type",
        ),
    ],
)
def test_bad_records_are_located(prm800k_labels, tmp_path, mutate, message, reason):
    path = _bad(prm800k_labels, tmp_path, mutate)
    with pytest.raises(InputError) as err:
        read(path, "prm800k")
    assert [str(i) for i in err.value.issues] == [f"{path}:2: {message}"]
    result = read(path, "prm800k", skip_invalid=True)
    assert len(result) == 1 and dict(result.skipped.skipped) == {reason: 1}


def test_all_errors_of_a_file_are_collected(prm800k_labels, tmp_path):
    good = real_lines(prm800k_labels)[0]
    bad = json.loads(json.dumps(good))
    bad["label"]["steps"][0]["completions"][0]["rating"] = 5
    bad["label"].pop("finish_reason")
    path = write_lines(tmp_path / "bad.jsonl", [bad, "{not json", good])
    with pytest.raises(InputError) as err:
        read(path, "prm800k")
    assert [(i.line, i.field, i.reason) for i in err.value.issues] == [
        (1, "label.finish_reason", "missing"),
        (1, "label.steps[0].completions[0].rating", "range"),
        (2, "(json)", "json"),
    ]


def test_lfs_pointer_json_array_and_encoding_errors(tmp_path):
    lfs = tmp_path / "phase2_test.jsonl"
    lfs.write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:6b172efa884ac8341a946dd82e06947c135b7254109fb3f7aa907c715d98aaad\nsize 12240719\n"
    )
    with pytest.raises(
        InputError,
        match=r"phase2_test.jsonl:1: \(file\): expected data, found a Git LFS pointer; run `git lfs pull`",
    ):
        read(lfs, "prm800k")
    array = tmp_path / "a.jsonl"
    array.write_text("[{}]")
    with pytest.raises(InputError) as err:
        read(array, "prm800k")
    assert str(err.value.issues[0]) == (
        f"{array}:1: (file): expected JSON Lines (one prm800k record per line), found a JSON array (starts with '[')"
    )
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(b'{"labeler": "caf\xe9"}\n')
    with pytest.raises(InputError) as err:
        read(latin, "prm800k")
    assert str(err.value.issues[0]) == f"{latin}:1: (encoding): expected UTF-8 text, found byte 0xe9"


def test_phase2_pre_generated_steps_that_differ_from_the_labels_are_kept(prm800k_labels, tmp_path):
    rec = real_lines(prm800k_labels)[1]
    rec["question"]["pre_generated_steps"][0] = "a different first step"
    src = write_lines(tmp_path / "p2.jsonl", [rec])
    t = read(src)[0]
    assert len(t.steps) == 7  # only the labelled trajectory: the pre-generated text is not the labelled one
    assert t.metadata["prm800k"]["pre_generated_steps"][0] == "a different first step"
    out = tmp_path / "o.jsonl"
    write(out, [t], "prm800k")
    assert out.read_bytes() == src.read_bytes()


def test_binarize_records_the_mapping_in_provenance(prm800k_labels):
    from prmkit.formats import binarize_traces

    t = read(prm800k_labels)[1]
    source = t.sources()[0]
    (negative,) = binarize_traces([t], neutral="negative")
    assert negative.ratings(source) == [1, -1, 1, 1, 1, 1, -1] + [None] * 6
    params = negative.steps[1].labels[0].provenance.params
    assert params["binarized"] == {"from": source, "neutral": "negative", "mode": "expand"}
    (cut,) = binarize_traces([t], mode="first_error")
    assert cut.ratings(source) == [1, 1, 1, 1, 1, 1, -1] + [None] * 6
    assert t.ratings(source)[1] == 0  # the original keeps its raw rating
