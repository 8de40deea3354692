"""Issue 22, items 3 and 4: one input rule for every command that reads traces, and the data bugs a new user
hits on real files (``../shared/data/real``).

Every case runs the real ``prmkit`` command through typer's CliRunner. Before the fix ``score``,
``annotate assign``, ``train`` and ``pretrain`` read prmkit JSONL only (a ProcessBench file was "236
invalid record(s)" in pydantic wording), ``convert`` writing 0 records exited 0, Math-Shepherd -> TRL ->
Math-Shepherd wrote "Step 1: Step 1:", ``label judge`` on non-world traces ended in a traceback, and
``inspect`` / ``validate`` wrote their report to stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.formats.inputs import read_traces

runner = CliRunner()


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def real(real_data: Path) -> dict[str, Path]:
    return {
        "shepherd": real_data / "math_shepherd" / "math_shepherd_openr_samples.jsonl",
        "prm800k": real_data / "prm800k" / "labels_openr_samples.jsonl",
        "math_split": real_data / "prm800k" / "math_splits_test_first20.jsonl",
        "gsm8k": real_data / "processbench" / "gsm8k.json",
    }


@pytest.fixture(scope="module")
def trl_file(real: dict[str, Path], tmp_path_factory) -> Path:
    """The real Math-Shepherd sample as TRL writes it (completions keep TRL's "Step k: " prefix)."""
    out = tmp_path_factory.mktemp("trl") / "shepherd.trl.jsonl"
    result = invoke("convert", real["shepherd"], out, "--to", "trl")
    assert result.exit_code == 0, result.output
    return out


def test_score_reads_math_shepherd_and_trl_files(real, trl_file, checkpoint, tmp_path):
    for name, src in (("shepherd", real["shepherd"]), ("trl", trl_file)):
        out = tmp_path / f"{name}.scored.jsonl"
        result = invoke("score", checkpoint, src, "-o", out)
        assert result.exit_code == 0, result.output
        scored = read_traces(out)
        assert len(scored) == 7
        assert all(lab.provenance.method == "model" for t in scored for s in t.steps for lab in s.labels[-1:])


def test_annotate_assign_reads_a_processbench_file(real, tmp_path):
    result = invoke(
        "annotate",
        "assign",
        real["gsm8k"],
        "--annotators",
        "a,b",
        "--db",
        tmp_path / "l.db",
        "--create-users",
    )
    assert result.exit_code == 0, result.output
    assert "invalid record" not in result.output
    # 10 ProcessBench records -> 10 items, split between the two annotators
    assert "a: 5 data" in result.output and "b: 5 data" in result.output


@pytest.mark.parametrize("command", [("train", "prm"), ("train", "orm"), ("pretrain",), ("score", "CKPT")])
def test_a_problems_only_file_is_one_line_saying_what_to_run(command, real, checkpoint, tmp_path):
    args = [checkpoint if a == "CKPT" else a for a in command]
    result = invoke(*args, real["math_split"], "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "invalid record" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    assert "20 problem(s) only (prm800k)" in lines[0] and "prmkit bon" in lines[0]


def test_train_orm_on_a_format_without_outcomes_says_so(real, tmp_path):
    result = invoke("train", "orm", real["shepherd"], "-o", tmp_path / "orm")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "answer_correct" in result.output and "math_shepherd" in result.output
    assert "prmkit train prm" in result.output and "--grade" in result.output


def test_convert_writing_nothing_fails_with_the_fix(real, tmp_path):
    out = tmp_path / "pb.json"
    result = invoke("convert", real["shepherd"], out)  # Math-Shepherd holds no final_answer_correct
    assert result.exit_code == 2, result.output
    assert "wrote 0 of 7" in result.stderr and "no_final_answer_correct" in result.stderr
    assert "--grade" in result.stderr
    assert not out.exists()  # no empty file left to pass for a result
    result = invoke("convert", real["prm800k"], out, "--grade")  # graded, but PRM800K names no generator
    assert result.exit_code == 2, result.output
    assert "no_generator" in result.stderr and "--generator NAME" in result.stderr
    result = invoke("convert", real["prm800k"], out, "--grade", "--generator", "gpt-4")
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())


def test_math_shepherd_through_trl_and_back_keeps_one_step_prefix(real, trl_file, tmp_path):
    back = tmp_path / "back.jsonl"
    assert invoke("convert", trl_file, back, "--to", "math_shepherd").exit_code == 0
    text = back.read_text()
    assert "Step 1: Step 1:" not in text
    original = [json.loads(line) for line in real["shepherd"].read_text().splitlines()]
    again = [json.loads(line) for line in text.splitlines()]
    assert [r["input"] for r in again] == [r["input"] for r in original]
    assert [r["label"] for r in again] == [r["label"] for r in original]
    # TRL -> TRL is still byte-exact (the prefix goes back on), and the core step text has no prefix
    trl_again = tmp_path / "again.trl.jsonl"
    assert invoke("convert", trl_file, trl_again, "--to", "trl").exit_code == 0
    assert trl_again.read_bytes() == trl_file.read_bytes()
    assert read_traces(trl_file)[0].steps[0].text.startswith("Janet spends")


def test_label_judge_world_on_other_traces_names_the_judge_to_use(trl_file, tmp_path):
    result = invoke("label", "judge", "--input", trl_file, "--output", tmp_path / "j.jsonl")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, ValueError)
    assert "world computation graph" in result.stderr
    assert "--judge endpoint --judge-url URL --judge-model NAME" in result.stderr


def test_inspect_and_validate_write_their_report_to_stdout(real, tmp_path):
    result = invoke("inspect", real["gsm8k"])
    assert result.exit_code == 0, result.output
    assert "processbench (detected); 10 problems, 10 traces, 48 steps" in result.stdout
    assert "labels by source" in result.stdout and result.stderr == ""
    result = invoke("validate", real["shepherd"])
    assert result.exit_code == 0
    assert "valid math_shepherd (detected), 7 record(s)" in result.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "x Step 1: a \\u043a\\u0438", "label": 3}\n')
    result = invoke("validate", bad)
    assert result.exit_code == 2
    assert f"{bad}:1: label: expected" in result.stdout and "1 issue(s)" in result.stdout
    result = invoke("validate", tmp_path / "missing.jsonl")  # an error, not a report: stderr
    assert result.exit_code == 2 and result.stdout == "" and "missing.jsonl" in result.stderr
