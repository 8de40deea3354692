from __future__ import annotations

import json

import pytest

from prmkit.core import InputError, Label, Problem, Provenance, Step, Trace
from prmkit.formats import convert, read, write
from prmkit.formats.trl import expand_prm800k

from .helpers import real_lines, write_lines

# formats.md §1.5: TRL's algorithm on the 6 real PRM800K lines: rows per record, last row's labels.
PRM800K_ROWS = [10, 5, 7, 7, 7, 1]
PRM800K_LAST = ["TTTTTT", "TFTTTT", "TTTTT", "TTTTTTT", "TTTTTTTT", "TTTTTTTTTTTT"]
# formats.md §2: TRL's algorithm on the 7 real Math-Shepherd rows.
SHEPHERD_LABELS = ["TTTTF", "FFF", "FF", "FFFFF", "TFFFF", "FF", "FFF"]


def _tf(labels):
    return "".join("T" if x else "F" for x in labels)


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _groups(rows, sizes):
    out, i = [], 0
    for n in sizes:
        out.append(rows[i : i + n])
        i += n
    assert i == len(rows)
    return out


def test_prm800k_expansion_matches_the_hand_trace(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    report = convert(prm800k_labels, out, to_format="trl")
    assert report.options["mode"] == "expand" and report.options["neutral"] == "negative"
    rows = _rows(out)
    assert report.written == len(rows) == sum(PRM800K_ROWS)
    groups = _groups(rows, PRM800K_ROWS)
    assert [_tf(g[-1]["labels"]) for g in groups] == PRM800K_LAST
    # the -1 step of the phase-2 line appears only as a terminal row
    assert "TFTTTTF" in [_tf(r["labels"]) for r in groups[1]]
    assert all(
        r["prompt"] == rec["question"]["problem"]
        for g, rec in zip(groups, real_lines(prm800k_labels), strict=True)
        for r in g
    )


def test_expansion_through_the_core_equals_expansion_of_the_raw_lines(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    convert(prm800k_labels, out, to_format="trl")
    assert _rows(out) == [row for rec in real_lines(prm800k_labels) for row in expand_prm800k(rec)]


def test_neutral_positive_flips_the_neutral_step(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    report = convert(prm800k_labels, out, to_format="trl", neutral="positive")
    assert report.options["neutral"] == "positive"
    last = _groups(_rows(out), PRM800K_ROWS)[1][-1]
    assert _tf(last["labels"]) == "TTTTTT"


def test_first_error_mode_keeps_the_chosen_path_up_to_its_first_error(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    report = convert(prm800k_labels, out, to_format="trl", mode="first_error")
    rows = _rows(out)
    labellers = list(dict.fromkeys(f"human:{rec['labeler']}" for rec in real_lines(prm800k_labels)))
    assert report.options == {
        "mode": "first_error",
        "neutral": "positive",
        "source": labellers,  # each record's own labeller, as TRL's converter reads it
        "threshold": 0.5,
        "scores": "column",
    }
    assert f"label sources: {len(labellers)} ({labellers[0]}, " in "\n".join(report.lines())
    assert len(rows) == 6
    # phase 2: 13 pre-generated steps, cut after the -1 at step 6; the neutral step 1 is not an error
    assert _tf(rows[1]["labels"]) == "TTTTTTF" and len(rows[1]["completions"]) == 7
    assert report.notes == {"after_first_error_cut": 1}
    # phase 1: the labeller's own step counts as correct, as in every converter
    assert rows[0]["completions"][1] == "We have $3p+e=1.24$ and $5p+e=1.82$."


def test_math_shepherd_rows_match_trl_converter(shepherd, tmp_path):
    out = tmp_path / "trl.jsonl"
    convert(shepherd, out, to_format="trl")
    rows = _rows(out)
    assert [_tf(r["labels"]) for r in rows] == SHEPHERD_LABELS
    assert (
        rows[0]["completions"][0]
        == "Step 1: Janet spends 3 hours + 5 hours = <<3+5=8>>8 hours per week on music lessons."
    )
    assert all(
        r["prompt"].endswith("?") and r["completions"][-1].startswith(f"Step {len(r['labels'])}: ")
        for r in rows
    )


def _soft_trace() -> Trace:
    prov = Provenance(method="mc_soft", actor="world-policy", params={"rollouts": 8})
    steps = [
        Step(text=f"s{i}", labels=[Label(score=s, provenance=prov)]) for i, s in enumerate([0.875, 0.7, 0.25])
    ]
    return Trace(id="t", problem=Problem(id="p", text="Q"), steps=steps)


def test_soft_scores_are_never_truncated(tmp_path):
    out = tmp_path / "soft.jsonl"
    write(out, [_soft_trace()], "trl")
    row = _rows(out)[0]
    assert row["labels"] == [True, True, False] and row["scores"] == [0.875, 0.7, 0.25]
    back = read(out)[0]
    assert [(lab.rating, lab.score) for s in back.steps for lab in s.labels] == [
        (1, 0.875),
        (1, 0.7),
        (-1, 0.25),
    ]
    write(out, [_soft_trace()], "trl", scores="labels")
    assert _rows(out)[0]["labels"] == [0.875, 0.7, 0.25]
    assert [s.labels[0].score for s in read(out, "trl")[0].steps] == [0.875, 0.7, 0.25]


def test_parquet_round_trip(shepherd, tmp_path):
    jsonl, parquet = tmp_path / "a.jsonl", tmp_path / "a.parquet"
    convert(shepherd, jsonl, to_format="trl")
    convert(jsonl, parquet, to_format="trl")
    assert read(parquet).format == "trl"
    back = tmp_path / "b.jsonl"
    convert(parquet, back, to_format="trl")
    assert back.read_bytes() == jsonl.read_bytes()


def test_bad_rows_are_located(tmp_path):
    rows = [
        {"prompt": "Q", "completions": ["a", "b"], "labels": [True]},
        {"prompt": "Q", "completions": ["a"], "labels": ["yes"]},
        {"prompt": "Q", "completions": ["a"], "labels": [1.5]},
        {"prompt": 3, "completions": ["a"], "labels": [True]},
        {"prompt": "Q", "completions": ["a"], "labels": [False]},
    ]
    path = write_lines(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as err:
        read(path, "trl")
    assert [str(i) for i in err.value.issues] == [
        f"{path}:1: labels: expected 2 values (one per completion), found 1",
        f"{path}:2: labels[0]: expected true, false or a number in [0, 1], found 'yes'",
        f"{path}:3: labels[0]: expected true, false or a number in [0, 1], found 1.5",
        f"{path}:4: prompt: expected a string (TRL's standard stepwise form), found 3",
    ]
    result = read(path, "trl", skip_invalid=True)
    assert len(result) == 1 and dict(result.skipped.skipped) == {"count": 1, "type": 2, "range": 1}


def test_unknown_option_and_bad_choice_are_errors(tmp_path):
    with pytest.raises(TypeError, match="format 'trl' does not take option\\(s\\) nuetral"):
        write(tmp_path / "x.jsonl", [_soft_trace()], "trl", nuetral="positive")
    with pytest.raises(ValueError, match="option mode: expected one of expand, first_error, found 'all'"):
        write(tmp_path / "x.jsonl", [_soft_trace()], "trl", mode="all")
    assert not (tmp_path / "x.jsonl").exists()


def _world_trace() -> Trace:
    """The world's two gold views on a trace whose step 3 is right after a wrong step 2."""
    local = Provenance(method="gold", actor="world:local")
    prefix = Provenance(method="gold", actor="world:prefix")
    steps = [
        Step(text=t, labels=[Label(rating=lo, provenance=local), Label(rating=pr, provenance=prefix)])
        for t, lo, pr in [("a = 2", 1, 1), ("b = a * 5 = 12", -1, -1), ("c = 3 + 4 = 7", 1, -1)]
    ]
    return Trace(id="w", problem=Problem(id="p", text="Q"), steps=steps)


def test_several_sources_and_none_chosen_is_refused_with_the_list(tmp_path):
    """With no --source the export used to take the first source (``gold:world:local``): step 3 came out
    True although it follows a wrong step. Now the choice is the user's, and the error lists it."""
    src, out = tmp_path / "world.jsonl", tmp_path / "trl.jsonl"
    write(src, [_world_trace()], "prmkit")
    with pytest.raises(ValueError) as err:
        convert(src, out, to_format="trl")
    assert str(err.value) == (
        "1 trace(s) carry several label sources and none was chosen: gold:world:local (1 traces), "
        "gold:world:prefix (1 traces); pick one with --source (option source), e.g. --source "
        "gold:world:prefix (the prefix view, what TRL's PRM800K and Math-Shepherd rows hold)"
    )
    assert not out.exists()
    report = convert(src, out, to_format="trl", source="gold:world:prefix")
    assert [_tf(r["labels"]) for r in _rows(out)] == ["TFF"]
    assert report.options["source"] == "gold:world:prefix"
    assert "label source: gold:world:prefix" in report.lines()
    convert(src, out, to_format="trl", source="gold:world:local")
    assert [_tf(r["labels"]) for r in _rows(out)] == ["TFT"]


def test_cli_names_the_source_it_exported(tmp_path, shepherd):
    from typer.testing import CliRunner

    from prmkit.cli import app

    runner = CliRunner()
    out = tmp_path / "trl.jsonl"
    result = runner.invoke(app, ["convert", str(shepherd), str(out), "--to", "trl"])
    assert result.exit_code == 0, result.output
    assert "label source: mc_hard:math-shepherd" in result.output
    src = tmp_path / "world.jsonl"
    write(src, [_world_trace()], "prmkit")
    result = runner.invoke(app, ["convert", str(src), str(out), "--to", "trl"])
    assert result.exit_code != 0 and "--source gold:world:prefix" in result.output
