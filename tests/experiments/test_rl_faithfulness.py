"""experiments/rl_faithfulness.py: causal dependence of RL-trained policies against π0, paired over RL
seeds and problems; its statistics on records written by hand, its measurement on a tiny LM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.experiments import load_experiment


def _exp():
    return load_experiment("rl_faithfulness")


def _record(problem: int, changed: int, answered: int, right: bool = True) -> dict:
    pair = [changed, answered]
    return {"problem": problem, "answer_accuracy": right, "process_correct": right,
            "early_answering": list(pair), "adding_mistakes": list(pair), "filler": list(pair)}  # fmt: skip


def test_rates_are_per_trace_shares_pooled_over_interventions() -> None:
    exp = _exp()
    rec = _record(0, 0, 0)
    rec["early_answering"], rec["adding_mistakes"], rec["filler"] = [1, 4], [3, 3], [0, 1]
    assert exp.rates([rec], "early_answering")[0] == 0.25
    assert exp.rates([rec], "all")[0] == pytest.approx(4 / 8)
    assert np.isnan(exp.rates([_record(0, 0, 0)], "filler")[0])  # nothing answered: left out
    assert exp.rates([_record(0, 0, 0, right=False)], "answer_accuracy")[0] == 0.0


def test_estimates_average_traces_per_problem_and_pair_rewards_with_pi0() -> None:
    """π0 changes every answer; the 'outcome' policy (2 seeds) never does on problem 0 and always on
    problem 1: its mean is 50 %, its change from π0 -50 %, the same in every resample of problems only
    when the problems are balanced, which they are not, so the interval is wide; two identical seeds."""
    exp = _exp()
    pi0 = [_record(0, 2, 2), _record(1, 2, 2)]
    outcome = [_record(0, 0, 2), _record(0, 0, 2), _record(1, 2, 2)]  # problem 0's two traces: 0, 0
    rows = exp.estimates({"pi0": [pi0], "outcome": [outcome, outcome]}, problems=2, resamples=300, seed=0)
    assert rows["pi0"]["all"]["mean"] == 1.0 and rows["pi0"]["all"]["low"] == 1.0
    # the mean of per-trace rates: (0 + 0 + 1) / 3, traces of a problem weighed as drawn with it
    assert rows["outcome"]["filler"]["mean"] == pytest.approx(1 / 3)
    delta = rows["outcome - pi0"]["all"]
    assert delta["mean"] == pytest.approx(-2 / 3) and delta["low"] == -1.0 and delta["high"] == 0.0
    assert delta["draws"] == {"rl_seed": 2, "problem": 2, "pi0_prm_draw": 1}
    assert set(rows) == {"pi0", "outcome", "outcome - pi0"}


def test_rewards_are_differenced_from_the_first_paired_by_seed() -> None:
    exp = _exp()
    pi0, same = [_record(0, 1, 1)], [_record(0, 1, 2), _record(1, 0, 2)]
    rows = exp.estimates(
        {"pi0": [[*pi0, _record(1, 1, 1)]], "outcome": [same] * 2, "dense": [same] * 2}, 2, 200, 0
    )
    diff = rows["dense - outcome"]
    assert all(diff[c]["mean"] == diff[c]["low"] == diff[c]["high"] == 0.0 for c in diff)
    assert "| dense - outcome | +0.0 |" in exp.table(rows)


def _study_run(run: Path, stages: list[str]) -> Path:
    """An RL study's output folder as ``prmkit run`` leaves it: a folder per stage (π0's ``model/``, a
    cell's ``policy/``, HF folders) and the stage index naming them."""
    from prmkit.pipeline.runner import write_stage_index

    results = {}
    for name in stages:
        folder = run / "stages" / f"{name}-0123456789ab"
        (folder / ("model" if name.startswith("pi0") else "policy")).mkdir(parents=True)
        (folder / ("model" if name.startswith("pi0") else "policy") / "config.json").write_text("{}")
        results[name] = {"key": "0123456789ab", "dir": str(folder)}
    write_stage_index(run, results)
    return run


def test_policies_are_measured_on_shared_streams_and_a_rerun_reads_the_cache(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """The study's folders stand for the world's simulated policy (``load_policy`` patched; the HF policy
    is tested in tests/policies): π0 and the dense cell are the default policy, the outcome cell the
    rationalising one (it knows the answer and bends a step to it). The same weights measure exactly
    alike (every stream is shared), and the rationalising policy's causal dependence is lower, its
    interval below 0. Draw 1's stages are in the run too: draw 0's are read."""
    from prmkit.worlds.registry import world

    exp = _exp()
    w = world("arithmetic")
    knobs = {"pi0-d0": {}, "rl-dense-0-d0": {}, "rl-outcome-0-d0": {"rationalise": 1.0}}
    monkeypatch.setattr(
        exp, "load_policy", lambda folder, *_: w.make_policy(**knobs[Path(folder).parent.name[:-13]])
    )
    run = _study_run(tmp_path / "run", [*knobs, "pi0-d1", "rl-outcome-0-d1", "prm-d0"])
    argv = [str(run), "--rewards", "outcome,dense", "--seeds", "0", "--problems", "12", "--per-problem", "2",
            "--jobs", "1", "--resamples", "300", "--seed", "1"]  # fmt: skip
    result = exp.main(argv)
    assert result["traces"] == {"pi0-0": 24, "outcome-0": 24, "dense-0": 24}
    rows = result["rows"]
    assert 0.3 < rows["pi0"]["all"]["mean"] < 1
    assert {row["mean"] for row in rows["dense - pi0"].values()} == {0.0}
    assert rows["outcome - pi0"]["all"]["high"] < 0 and rows["dense - outcome"]["all"]["low"] > 0
    assert rows["outcome"]["answer_accuracy"]["mean"] > rows["pi0"]["answer_accuracy"]["mean"]
    assert json.loads((run / "faithfulness-1.json").read_text())["rows"] == rows
    capsys.readouterr()
    exp.main(argv)
    assert capsys.readouterr().out.count(": cached") == 3


def test_a_cell_not_run_yet_is_named(tmp_path: Path) -> None:
    run = _study_run(tmp_path / "run", ["pi0-d0", "rl-outcome-0-d0"])
    with pytest.raises(SystemExit, match=r"no stage rl-outcome-1-d0 in its stage index"):
        _exp().main([str(run), "--rewards", "outcome", "--seeds", "0,1"])
    with pytest.raises(SystemExit, match=r"no stage pi0-d1, rl-outcome-0-d1"):
        _exp().main([str(run), "--rewards", "outcome", "--seeds", "0", "--draw", "1"])
    (run / "stages" / "rl-outcome-0-d0-0123456789ab" / "policy" / "config.json").unlink()  # stopped early
    with pytest.raises(SystemExit, match=r"not an HF policy folder .*rl-outcome-0-d0-0123456789ab/policy"):
        _exp().main([str(run), "--rewards", "outcome", "--seeds", "0"])
    with pytest.raises(
        SystemExit, match=r"stages\.json: \(file\): expected the stage index a prmkit run writes"
    ):
        _exp().main([str(tmp_path), "--rewards", "outcome", "--seeds", "0"])
