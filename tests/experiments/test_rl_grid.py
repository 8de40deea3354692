"""experiments/rl_grid.py: the recipe's cells and the table the RL experiment's numbers are read from."""

from __future__ import annotations

import json

import pytest
import yaml

from prmkit.rl.config import RlConfig
from tests.experiments import ROOT, load_experiment


def _grid():
    return load_experiment("rl_grid")


def test_every_cell_of_the_recipe_is_a_valid_rl_config() -> None:
    grid = _grid()
    recipe = yaml.safe_load((ROOT / "recipes" / "rl.yaml").read_text())
    cells = grid.cells(recipe)
    extra = recipe["experiment"]["extra"]
    assert len(cells) == 5 * 3 + sum(len(spec.get("seeds", [0])) for spec in extra.values())
    assert {spec.get("prm") for spec in extra.values()} - {None} <= set(grid.PRMS)
    for _name, seed, section in cells:
        config = RlConfig.model_validate({**section, "seed": seed})
        assert config.reward == (section["reward"])
    (hack,) = [s for n, _, s in cells if n == "hackable"]
    assert hack["unfinished_reward"] is None and hack["steps"] == 150


def test_majority_answers_count_votes_per_problem(tmp_path) -> None:
    """The reference of the ``majority`` PRM: most common final answer per problem, a tie to the answer
    sampled first, an unfinished sample (no final answer) casting no vote."""
    votes = [("p1", "5"), ("p1", "7"), ("p1", "7"), ("p2", "3"), ("p2", "4"), ("p2", None), ("p2", None)]
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps({"problem": {"id": p}, "final_answer": a}) + "\n" for p, a in votes))
    assert _grid().majority_answers(path) == {"p1": "7", "p2": "3"}


def _point(step: int, process: float, lucky: float) -> dict:
    return {"step": step, "process_correct": process, "answer_accuracy": process + lucky, "lucky": lucky,
            "prm_reward": process, "first_error_classes": {"misconception": 0.5}, "unfinished": 0.0,
            "steps_per_response": 4.0}  # fmt: skip


def test_report_reads_finished_cells_and_pairs_changes_by_seed(tmp_path) -> None:
    grid = _grid()
    extra = {"hack": {"reward": "dense", "seeds": [0, 1]}}
    recipe = {
        "experiment": {"rewards": ["outcome", "dense"], "seeds": [0, 1, 2, 3], "extra": extra},
        "rl": {},
    }
    gains = {"outcome": [0.00, 0.02, 0.04], "dense": [0.05, 0.07, 0.09], "hack": [-0.1, -0.2]}
    for reward, per_seed in gains.items():
        for seed, gain in enumerate(per_seed):
            cell = tmp_path / "cells" / f"{reward}-{seed}"
            cell.mkdir(parents=True)
            start = 0.30 + 0.01 * seed
            points = [_point(0, start, 0.1), _point(100, start + gain, 0.1 - gain)]
            (cell / "monitors.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
            (cell / "policy_card.json").write_text("{}")
    running = tmp_path / "cells" / "dense-3"
    running.mkdir()
    (running / "monitors.jsonl").write_text(json.dumps(_point(0, 0.9, 0.0)) + "\n")  # not finished: left out
    text = grid.report(tmp_path, recipe)
    # dense − outcome, paired by seed: +5 points on every seed, so the interval is a point
    assert "| dense − outcome | +5.0 [+5.0, +5.0] | -5.0 [-5.0, -5.0] | +0.0 [+0.0, +0.0] |" in text
    # outcome's Δ process-correct 0, 2, 4 points: mean 2.0, t(2) = 4.303, sd 2 -> half-width 4.97
    assert "| outcome | 3 | 100 | +2.0 [-3.0, +7.0] |" in text
    assert (tmp_path / "curves.png").stat().st_size > 0
    results = json.loads((tmp_path / "results.json").read_text())["cells"]
    assert results["dense"]["seeds"] == [0, 1, 2]
    # an extra cell keeps every seed's points (not only the last seed's)
    assert results["hack"]["seeds"] == [0, 1] and set(results["hack"]["points"]) == {"0", "1"}
    assert "### extra cell `hack` (seed 1)" in text


@pytest.mark.parametrize("missing", ["pi0", "prm", "experiment", "rl"])
def test_a_recipe_without_a_section_is_refused_by_name(missing) -> None:
    recipe = yaml.safe_load((ROOT / "recipes" / "rl.yaml").read_text())
    del recipe[missing]
    with pytest.raises(SystemExit, match=missing):
        _grid().check_recipe(recipe)
