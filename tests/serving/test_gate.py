"""The gate's rule, ``prmkit gate measure`` against a hand count, and a monitor file configuring a server.

The measured scorer is the world's noisy simulated judge, stored as labels (``labels:judge``): it misses
some errors and raises false alarms, so the rates are neither 0 nor 1 and a hand count can disagree with
a wrong implementation. The hand count reads the judge's own first error (a step rated -1 is a 0.0 score,
below the threshold; a 0 rating is 0.5, not below it) against the gold first error.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from prmkit.cards.roles import DeploymentMonitor, read_monitor
from prmkit.cli import app
from prmkit.core import write_traces
from prmkit.core.errors import InputError
from prmkit.labeling.judge import label_judge
from prmkit.serving.config import GateOptions, ServerConfig
from prmkit.serving.gate import GateRule, gate_rule, measure_gate
from prmkit.serving.reward_server import create_app
from prmkit.worlds.arithmetic import (
    OracleScorer,
    SimulatedJudge,
    generate_problems,
    gold_label,
    sample_traces,
)
from tests.serving.conftest import prmkit_serve

runner = CliRunner()


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """World traces with gold labels and the noisy judge's, written as a file."""
    traces = gold_label(sample_traces(generate_problems(30, seed=7, split="test"), 2, seed=7))
    labelled, _ = label_judge(traces, SimulatedJudge(miss_rate=0.3, false_alarm_rate=0.15, seed=0))
    path = tmp_path_factory.mktemp("gate") / "traces.jsonl"
    write_traces(path, labelled)
    return path


def test_the_rule_flags_below_the_threshold_at_the_first_step_that_makes_it_doubtful() -> None:
    rule = GateRule(0.5)
    assert rule.verdict([0.9, 0.7, 0.6]).doubtful is False
    assert rule.verdict([0.9, 0.7, 0.6]).first_doubtful_step is None
    v = rule.verdict([0.9, 0.4, 0.8, 0.2])
    assert (v.doubtful, v.first_doubtful_step, v.score) == (True, 1, 0.2)
    assert rule.verdict([0.5]).doubtful is False  # at the threshold passes: below it is doubtful
    prod = GateRule(0.5, "prod").verdict([0.9, 0.8, 0.6, 0.9])  # no step below 0.5; 0.9*0.8*0.6 = 0.432
    assert prod.doubtful and prod.first_doubtful_step == 2
    last = GateRule(0.5, "last").verdict([0.1, 0.9])  # the last step passes: so does the trace
    assert not last.doubtful and last.first_doubtful_step is None
    assert GateRule(0.25, "mean", "resample").words == (
        "a trace whose mean step score is below 0.25 is doubtful: resample it from its first doubtful step"
    )


def test_gate_measure_writes_rates_equal_to_a_hand_count(judged: Path, tmp_path: Path) -> None:
    from prmkit.formats.inputs import read_traces

    out = tmp_path / "monitor.json"
    r = runner.invoke(
        app, ["gate", "measure", "labels:judge", str(judged), "--threshold", "0.5", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    written = json.loads(out.read_text())
    assert set(written) == set(DeploymentMonitor.model_fields)  # exactly the card's monitor fields
    monitor = read_monitor(out)
    traces = read_traces(judged)
    positives = [t for t in traces if t.first_error("gold") >= 0]
    negatives = [t for t in traces if t.first_error("gold") == -1]
    caught = sum(t.first_error("judge") >= 0 for t in positives)
    passed = sum(t.first_error("judge") == -1 for t in negatives)
    assert 0 < caught < len(positives) and 0 < passed < len(negatives)  # a noisy gate: rates strictly inside
    assert (monitor.traces, monitor.positives) == (len(traces), len(positives))
    assert monitor.tpr == caught / len(positives) and monitor.tnr == passed / len(negatives)
    assert monitor.g_mean2 == pytest.approx(monitor.tpr * monitor.tnr)
    assert (monitor.threshold, monitor.aggregation, monitor.action) == (0.5, "min", "flag")
    assert monitor.measured_on == str(judged) and "min step score is below 0.5" in monitor.rule
    assert f"{len(traces)} traces ({len(positives)} with an error)" in r.output


def test_the_oracle_gate_is_perfect_and_an_impossible_threshold_flags_everything(judged: Path) -> None:
    from prmkit.formats.inputs import read_traces

    traces = read_traces(judged)
    rows = OracleScorer().score(traces)
    perfect = measure_gate(traces, rows, GateRule(0.5))
    assert (perfect.tpr, perfect.tnr, perfect.g_mean2) == (1.0, 1.0, 1.0)
    everything = measure_gate(traces, rows, GateRule(1.5))
    assert (everything.tpr, everything.tnr, everything.g_mean2) == (1.0, 0.0, 0.0)
    unlabelled = [
        t.model_copy(update={"steps": [s.model_copy(update={"labels": []}) for s in t.steps]}) for t in traces
    ]
    with pytest.raises(ValueError, match="no trace of the input has 'gold' labels"):
        measure_gate(unlabelled, rows, GateRule(0.5))


def test_what_is_measured_is_served(judged: Path, tmp_path: Path) -> None:
    """``prmkit serve --gate-monitor`` (a real process) serves the rule ``gate measure`` wrote."""
    out = tmp_path / "monitor.json"
    flags = ["--threshold", "0.75", "--aggregation", "mean", "-o", str(out)]
    r = runner.invoke(app, ["gate", "measure", "arithmetic-oracle", str(judged), *flags])
    assert r.exit_code == 0, r.output
    assert gate_rule(GateOptions(monitor=out)) == GateRule(0.75, "mean", "flag")
    traces = gold_label(sample_traces(generate_problems(2, seed=3, split="test"), 4, seed=3))
    wrong = next(t for t in traces if 1 <= t.first_error("gold") < 0.75 * len(t.steps))
    first = wrong.first_error("gold")
    body = {"problem": wrong.problem.text, "steps": [s.text for s in wrong.steps]}
    with prmkit_serve("arithmetic-oracle", "--gate-monitor", str(out), log=tmp_path / "serve.log") as url:
        v = httpx.post(f"{url}/verify", json=body, timeout=30).json()
    assert (v["threshold"], v["aggregation"], v["rule"]) == (0.75, "mean", read_monitor(out).rule)
    assert v["score"] == pytest.approx(first / len(wrong.steps))  # the oracle's mean: 1.0 before the error
    assert v["decision"] == "flag" and v["first_doubtful_step"] == first


def test_flags_that_contradict_the_monitor_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "monitor.json"
    monitor = DeploymentMonitor(rule="r", aggregation="min", threshold=0.5, action="resample")
    path.write_text(monitor.model_dump_json())
    with pytest.raises(InputError, match="a --gate-policy-url to resample through"):
        gate_rule(GateOptions(monitor=path))
    with pytest.raises(InputError, match=r"aggregation: expected the --gate-aggregation given \(mean\)"):
        gate_rule(GateOptions(monitor=path, aggregation="mean", policy_url="http://127.0.0.1:1"))
    rule = gate_rule(GateOptions(monitor=path, policy_url="http://127.0.0.1:1"))
    assert rule == GateRule(0.5, "min", "resample")
    path.write_text('{"rule": "r", "aggregation": "min"}')
    with pytest.raises(InputError, match="threshold"):
        create_app(OracleScorer(), ServerConfig(gate=GateOptions(monitor=path)))
    r = runner.invoke(
        app, ["serve", "arithmetic-oracle", "--gate-monitor", str(path), "--gate-threshold", "0.5"]
    )
    assert r.exit_code == 2 and "threshold once" in r.output
