"""The real CLI, end to end: each `prmkit label` command, and a job SIGKILLed mid-run then resumed."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from prmkit.core.dataset import write_traces
from prmkit.formats.inputs import read_traces

PRMKIT = str(Path(sys.executable).parent / "prmkit")


def prmkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PRMKIT, *args], capture_output=True, text=True, timeout=300)


def _without_times(path: Path) -> list[dict]:
    out = []
    for t in read_traces(path):
        for s in t.steps:
            for lab in s.labels:
                lab.provenance.created_at = None
        out.append(t.model_dump())
    return out


@pytest.mark.slow
def test_every_label_command_through_the_cli(traces, tmp_path):
    src = tmp_path / "traces.jsonl"
    write_traces(src, traces[:60])
    r = prmkit("label", "mc", "--input", str(src), "--output", str(tmp_path / "mc.jsonl"), "--rollouts", "4")
    assert r.returncode == 0, r.stderr
    assert yaml.safe_load(r.stdout)["method"] == "mc"
    recipe = tmp_path / "judge.yaml"
    recipe.write_text(f"input: {tmp_path / 'mc.jsonl'}\noutput: {tmp_path / 'both.jsonl'}\n")
    assert prmkit("label", "judge", "--config", str(recipe)).returncode == 0
    r = prmkit(
        "label",
        "binary_search",
        "--input",
        str(src),
        "--output",
        str(tmp_path / "bs.jsonl"),
        "--keep-rollouts",
        str(tmp_path / "kept.jsonl"),
    )
    assert r.returncode == 0, r.stderr
    assert len(read_traces(tmp_path / "kept.jsonl")) == yaml.safe_load(r.stdout)["kept_rollout_traces"] > 0
    r = prmkit(
        "label",
        "consensus",
        "--input",
        str(tmp_path / "both.jsonl"),
        "--output",
        str(tmp_path / "kept_c.jsonl"),
    )
    assert r.returncode == 0 and "kept_fraction" in r.stdout, r.stderr
    r = prmkit(
        "label", "report", "--input", str(tmp_path / "both.jsonl"), "--output", str(tmp_path / "report.yaml")
    )
    assert r.returncode == 0, r.stderr
    report = yaml.safe_load((tmp_path / "report.yaml").read_text())
    assert report["sources"]["mc_hard:world"]["first_error"]["accuracy"] > 0.7
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert yaml.safe_load((tmp_path / "mc.jsonl.config.yaml").read_text())["rollouts"] == 4
    bad = prmkit(
        "label", "mc", "--input", str(src), "--output", str(tmp_path / "x.jsonl"), "--policy", "endpoint"
    )
    assert bad.returncode == 2 and "needs --url and --model" in bad.stderr


@pytest.mark.slow
def test_a_sigkilled_job_resumes_to_the_uninterrupted_result(tmp_path):
    from prmkit.labeling.mc import MCConfig, run_mc
    from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces

    src = tmp_path / "traces.jsonl"
    write_traces(src, gold_label(sample_traces(generate_problems(200, seed=13, split="train"), 3, seed=13)))
    args = ["label", "mc", "--input", str(src), "--rollouts", "8", "--seed", "5", "--concurrency", "2"]
    run_mc(
        MCConfig(input=src, output=tmp_path / "ref.jsonl", rollouts=8, seed=5, concurrency=2),
        show_progress=False,
    )
    log = tmp_path / "out.jsonl.job" / "records.jsonl"
    proc = subprocess.Popen(
        [PRMKIT, *args, "--output", str(tmp_path / "out.jsonl")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= 30:
            proc.kill()  # SIGKILL: no cleanup, no flush, possibly mid-line
            break
        time.sleep(0.002)
    proc.wait()
    assert proc.returncode == -9, "the job finished before it could be killed; make it bigger"
    done = log.read_bytes().count(b"\n")
    assert not (tmp_path / "out.jsonl").exists()
    r = prmkit(*args, "--output", str(tmp_path / "out.jsonl"))
    assert r.returncode == 0, r.stderr
    summary = yaml.safe_load(r.stdout)
    assert summary["prefixes_resumed"] >= done > 0
    assert _without_times(tmp_path / "out.jsonl") == _without_times(tmp_path / "ref.jsonl")
    keys = [line.split('"key": "')[1].split('"')[0] for line in log.read_text().splitlines()]
    ref_keys = (tmp_path / "ref.jsonl.job" / "records.jsonl").read_text().count("\n")
    assert len(keys) == len(set(keys)) == ref_keys  # no rollout lost or drawn twice
