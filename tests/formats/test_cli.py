from __future__ import annotations

import json

from typer.testing import CliRunner

from prmkit.cli import app

from .test_trl import PRM800K_LAST, PRM800K_ROWS

runner = CliRunner()


def test_convert_detects_and_reports(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    result = runner.invoke(app, ["convert", str(prm800k_labels), str(out), "--to", "trl"])
    assert result.exit_code == 0, result.output
    assert "(prm800k, detected)" in result.output
    assert f"wrote {sum(PRM800K_ROWS)} record(s)" in result.output
    assert "'neutral': 'negative'" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == sum(PRM800K_ROWS)


def test_convert_first_error_with_neutral_option(prm800k_labels, tmp_path):
    out = tmp_path / "trl.jsonl"
    args = ["convert", str(prm800k_labels), str(out), "--from", "prm800k", "--to", "trl"]
    result = runner.invoke(app, [*args, "--trl-mode", "first_error", "--neutral", "negative"])
    assert result.exit_code == 0, result.output
    assert "(prm800k, given)" in result.output
    labels = [
        "".join("T" if x else "F" for x in json.loads(line)["labels"])
        for line in out.read_text().splitlines()
    ]
    assert labels[1] == "TF"  # neutral made negative: the path stops at the neutral step
    assert labels[0] == PRM800K_LAST[0]


def test_convert_bad_input_exits_2_with_located_messages(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text(
        '{"prompt": "Q", "completions": ["a"], "labels": [true]}\n{"prompt": "Q", "completions": ["a"]}\n'
    )
    dst = tmp_path / "o.jsonl"
    result = runner.invoke(app, ["convert", str(src), str(dst)])
    assert result.exit_code == 2
    assert (
        f"{src}:2: labels: expected a list of booleans (or floats in [0, 1]), found nothing" in result.output
    )
    assert not dst.exists()
    result = runner.invoke(app, ["convert", str(src), str(dst), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "skipped 1 invalid input record(s): {'missing': 1}" in result.output
    result = runner.invoke(app, ["convert", str(src), str(dst), "--to", "trl", "--neutral", "maybe"])
    assert (
        result.exit_code == 2
        and "option neutral: expected one of negative, positive, found 'maybe'" in result.output
    )
    result = runner.invoke(app, ["convert", str(src), str(dst), "--to", "tlr"])
    assert result.exit_code == 2 and "Did you mean 'trl'" in result.output


def test_inspect_prints_a_table_and_writes_png(real_data, tmp_path):
    png = tmp_path / "h.png"
    result = runner.invoke(
        app, ["inspect", str(real_data / "processbench" / "omnimath.json"), "--png", str(png)]
    )
    assert result.exit_code == 0, result.output
    assert "processbench (detected); 9 problems, 9 traces" in result.output
    assert "human:processbench" in result.output and "labels by source" in result.output
    assert png.stat().st_size > 1000


def test_validate_exit_codes(real_data, shepherd, tmp_path):
    result = runner.invoke(app, ["validate", str(shepherd)])
    assert result.exit_code == 0 and "valid math_shepherd (detected), 7 record(s)" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(shepherd.read_text(encoding="utf-8").replace('"task"', '"tusk"', 1) + "{oops\n")
    result = runner.invoke(app, ["validate", str(bad), "--from", "math_shepherd"])
    assert result.exit_code == 2
    assert f"{bad}:8: (json): expected one JSON object per line" in result.output
    assert f"{bad}: 1 issue(s) (math_shepherd, given)" in result.output
    result = runner.invoke(
        app, ["validate", str(real_data / "processbench" / "math.json"), "--from", "prm800k"]
    )
    assert (
        result.exit_code == 2
        and "expected JSON Lines (one prm800k record per line), found a JSON array" in result.output
    )
