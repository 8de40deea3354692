"""experiments/code_sweep.py: each point's commands set its knob wherever it acts (training tasks and
evaluation tasks; the trajectories' agent, Monte Carlo's rollout agent and the judged agent), and
``collect`` gives the numbers the equal-information view shows for the same study files."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prmkit.cli.run import parse_sets
from prmkit.core.results import estimate_cell, render_blocks
from prmkit.evaluation.study import Measured, summarize
from prmkit.evaluation.views import SWEEP_DIFFERENCES, code_sweep_table, equal_information_table
from prmkit.pipeline import load_recipe
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import plan
from prmkit.pipeline.sweep import for_seed
from tests.experiments import ROOT, load_experiment

exp = load_experiment("code_sweep")
FILES = {"input": Path("in.jsonl"), "output": Path("out.jsonl"), "work_dir": None}


def _recipe(line: list[str]) -> Recipe:
    """The recipe one printed command runs (its file, ``--set`` items, ``-o``, ``--seeds``, ``--reuse``)."""
    args = line[3:]
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    flag = {a: args[i + 1] for i, a in enumerate(args) if a in ("-o", "--seeds", "--reuse")}
    overrides = parse_sets(sets) | {
        "output_dir": flag["-o"],
        "seeds": [int(s) for s in flag["--seeds"].split(",")],
    }
    overrides |= {"reuse": [flag["--reuse"]]} if "--reuse" in flag else {}
    return load_recipe(ROOT / line[2], overrides)


def _knobs(r: Recipe) -> dict[str, Any]:
    """Every place a knob acts, read from the resolved recipe (and the agents it builds)."""
    generator = r.evaluate.generator
    rollouts = [r.labels.config(m, FILES) for m in r.labels.methods if m in ("mc", "progress")]
    return {
        "problems.world.weak_tests": r.problems.world.weak_tests,
        "evaluate.generator.weak_tests": exp.DEFAULTS["weak_tests"]
        if generator is None
        else generator.weak_tests,
        "problems.policy.symptom_patch": r.problems.policy.symptom_patch,
        "rollouts.symptom_patch": {c.build_policy().config.symptom_patch for c in rollouts},
        "evaluate.policy.symptom_patch": r.evaluate.policy.symptom_patch,
    }


@pytest.mark.parametrize("point", list(exp.POINTS))
def test_a_point_sets_its_knob_in_every_place_on_both_sides(point: str) -> None:
    knob, value = exp.POINTS[point]
    hidden, visible = exp.commands(point, "0,1", Path("/runs"))
    want = {
        "problems.world.weak_tests": value if knob == "weak_tests" else exp.DEFAULTS["weak_tests"],
        "evaluate.generator.weak_tests": value if knob == "weak_tests" else exp.DEFAULTS["weak_tests"],
        "problems.policy.symptom_patch": value if knob == "symptom_patch" else exp.DEFAULTS["symptom_patch"],
        "rollouts.symptom_patch": {value if knob == "symptom_patch" else exp.DEFAULTS["symptom_patch"]},
        "evaluate.policy.symptom_patch": value if knob == "symptom_patch" else exp.DEFAULTS["symptom_patch"],
    }
    for line in (hidden, visible):
        r = _recipe(line)
        assert _knobs(r) == want
        assert r.seeds == [0, 1]
        # the judged agent keeps the recipe's other settings (its shared traps, its step limit)
        assert (r.evaluate.policy.systematic, r.evaluate.policy.max_steps) == (0.5, 9)
    assert (
        _recipe(hidden).train.prm_sources == ["mc_hard"]
        and _recipe(hidden).output_dir == Path("/runs") / point
    )
    ci = _recipe(visible)
    assert ci.reuse == [Path("/runs") / point] and ci.output_dir == Path(f"/runs/{point}-visible")
    assert ci.train.orm is not None and ci.train.orm.outcome == "visible_pass"


@pytest.mark.parametrize("knob", list(exp.KNOBS))
def test_a_knob_at_its_default_keeps_every_stage_of_the_default_runs(knob: str) -> None:
    """The overrides at the default value change no stage's settings: the committed runs are the default
    point of the same sweep, not a neighbour of it."""
    for path, base in ((exp.HIDDEN, ["train.prm_sources=[mc_hard]"]), (exp.VISIBLE, [])):
        settings = []
        for sets in (base, base + exp.overrides(knob, exp.DEFAULTS[knob])):
            r = load_recipe(ROOT / path, parse_sets(sets) | {"seeds": [0]})
            settings.append({s.name: s.settings for s in plan(for_seed(r, 0))})
        assert settings[0] == settings[1]


def test_commands_prints_both_runs_of_the_points_asked(monkeypatch: Any, capsys: Any) -> None:
    monkeypatch.setattr(
        sys, "argv", ["code_sweep.py", "commands", "--points", "symptom_patch-0", "--seeds", "0"]
    )
    exp.main()
    printed = [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#")]
    assert printed == [shlex.join(line) for line in exp.commands("symptom_patch-0", "0", exp.RUNS)]


def _rows(table: str) -> dict[str, list[str]]:
    """A Markdown table's body rows by their side (``hidden``/``CI``), cells stripped, numbers only."""
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| hidden") or line.startswith("| CI"):
            rows[cells[0].split()[0]] = cells[1:]
        elif line.startswith("| weak_tests") and "(default)" in cells[1]:
            rows[cells[2]] = cells[3:9]
    return rows


def test_collect_of_the_default_point_is_the_equal_information_view(tmp_path: Path) -> None:
    result = exp.collect(tmp_path / "no-points-yet")
    assert result["missing"] == list(exp.POINTS)
    assert [(p["knob"], p["value"], p["default"]) for p in result["points"]] == [
        ("weak_tests", 0.3, True),
        ("symptom_patch", 0.2, True),
    ]
    studies = [json.loads(f.read_text(encoding="utf-8")) for f in exp.DEFAULT_STUDIES.values()]
    for set_name in exp.SETS:
        view = equal_information_table(
            list(zip(("hidden tests", "CI"), studies, strict=True)), set_name, "prm-mc_hard", list(exp.NS)
        )
        assert _rows(code_sweep_table(result, set_name)) == _rows(view)
        side = result["points"][0]["sides"]["hidden"]
        assert side["seeds"] == [0, 1, 2] and side["intervals"] == "seeds × tasks"
        assert side[set_name]["tasks"] == {"first error (test + held-out)": 132, "best-of-N (test)": 48}


def _measured(rng: np.random.Generator, problems: list[str]) -> Measured:
    """One model's evaluation on ``problems``: first-error predictions on a test and a held-out subset,
    best-of-N accuracy per problem at N = 4 and 16."""
    predictions = []
    for i, pid in enumerate(problems):
        for _ in range(4):
            gold = int(rng.integers(-1, 3))
            scores = rng.random(4).tolist()
            predicted = next((j for j, s in enumerate(scores) if s < 0.5), -1)
            subset = "world-test" if i % 2 else "world-heldout"
            predictions.append(
                {"problem": pid, "subset": subset, "gold": gold, "predicted": predicted, "scores": scores}
            )
    accuracy = {
        m: rng.random((2, len(problems))).tolist()
        for m in ("prm:min", "weighted:min", "majority", "oracle", "orm")
    }
    bon = {"problems": problems, "ns": [4, 16], "accuracy": accuracy, "honest": accuracy}
    return Measured(predictions, bon)


def _one_seed_study(folder: Path, seed: int) -> None:
    """A run's study.json of one seed, made by the library's own :func:`summarize`."""
    rng = np.random.default_rng(seed)
    problems = [f"p{i}" for i in range(12)]
    study: dict[str, Any] = {"recipe": "code world", "seeds": [0]}
    for set_name, evaluate_seed in (("tuning", 1234), ("claims", 8642)):
        run = {"prm-mc_hard": _measured(rng, problems), "orm": _measured(rng, problems)}
        pairs = [("prm-mc_hard", "orm")]
        study[set_name] = {"evaluate_seed": evaluate_seed} | summarize(
            [run], pairs=pairs, outcome_models=["orm"], resamples=50
        )
    folder.mkdir(parents=True)
    (folder / "study.json").write_text(json.dumps(study), encoding="utf-8")


def test_collect_reads_a_finished_point_of_one_seed(tmp_path: Path) -> None:
    _one_seed_study(tmp_path / "weak_tests-0", 1)
    _one_seed_study(tmp_path / "weak_tests-0-visible", 2)
    _one_seed_study(tmp_path / "symptom_patch-0.4", 3)  # its CI side not done yet: not collected
    result = exp.collect(tmp_path)
    assert result["missing"] == ["weak_tests-0.6", "symptom_patch-0", "symptom_patch-0.4"]
    point = result["points"][0]
    assert (point["knob"], point["value"], point["default"]) == ("weak_tests", 0.0, False)
    for side in ("hidden", "CI"):
        numbers = point["sides"][side]
        assert numbers["seeds"] == [0] and numbers["intervals"] == "tasks only (one seed)"
        study = json.loads(
            (tmp_path / f"weak_tests-0{'-visible' if side == 'CI' else ''}" / "study.json").read_text()
        )
        key = "prm-mc_hard best-of-N (min) − ORM best-of-N (honest): N=16"
        assert numbers["claims"]["differences"]["honest best-of-16"] == study["claims"]["paired"][key]
        assert numbers["tuning"]["tasks"] == {"first error (test + held-out)": 12, "best-of-N (test)": 12}
        assert numbers["claims"]["differences"]["best-of-4"]["method"].startswith("bootstrap over problem")
    table = code_sweep_table(result, "claims")
    ci = point["sides"]["CI"]["claims"]["differences"]
    cells = " | ".join(estimate_cell(ci[name], signed=True) for name in SWEEP_DIFFERENCES)
    assert f"| weak_tests | 0 | CI | {cells} | 1 (tasks only) |" in table
    assert "| weak_tests | 0 | hidden |" in table and table.count("| 1 (tasks only) |") == 2


def test_a_code_sweep_block_renders_the_collected_file(tmp_path: Path) -> None:
    result = exp.collect(tmp_path / "no-points-yet")
    (tmp_path / "code-sweep.json").write_text(json.dumps(result), encoding="utf-8")
    text = "<!-- results: code-sweep.json view=code-sweep set=tuning -->\n<!-- /results -->\n"
    assert code_sweep_table(result, "tuning") in render_blocks(text, tmp_path)
