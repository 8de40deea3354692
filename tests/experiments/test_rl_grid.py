"""experiments/rl_grid.py: the recipe's cells and draws, the nested bootstrap, and the table the RL
experiment's numbers are read from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prmkit.rl.config import RlConfig
from prmkit.rl.monitors import COLUMNS as MONITOR_COLUMNS
from prmkit.rl.monitors import PER_PROBLEM_FILE
from tests.experiments import ROOT, load_experiment


def _grid():
    return load_experiment("rl_grid")


def _recipe() -> dict:
    return yaml.safe_load((ROOT / "recipes" / "rl.yaml").read_text())


def test_every_cell_of_the_recipe_is_a_valid_rl_config() -> None:
    grid, recipe = _grid(), _recipe()
    cells = grid.cells(recipe)
    experiment, extra = recipe["experiment"], recipe["experiment"]["extra"]
    main = len(experiment["rewards"]) * len(experiment["seeds"]) * len(experiment.get("draws", [0]))
    assert len(cells) == main + sum(len(spec.get("seeds", [0])) for spec in extra.values())
    assert {spec.get("prm") for spec in extra.values()} - {None} <= set(grid.PRMS)
    for cell in cells:
        config = RlConfig.model_validate({**cell.rl, "seed": cell.seed})
        assert config.reward == cell.rl["reward"]
    (hack,) = [c.rl for c in cells if c.name == "hackable"]
    assert hack["unfinished_reward"] is None and hack["steps"] == 150
    grid.check_recipe(recipe)


def test_the_measurement_is_the_grid_over_draws_with_200_monitor_problems() -> None:
    """``--measure``: 2 (π0, PRM) draws x 5 RL seeds of the grid's rewards, 200 monitor problems, no extra
    cells; the recipe's own cells (the cached runs the docs read) keep their 48 problems."""
    grid, recipe = _grid(), _recipe()
    measured = grid.measurement(recipe)
    grid.check_recipe(measured)
    cells = grid.cells(measured)
    rewards = recipe["experiment"]["rewards"]
    assert len(cells) == 2 * 5 * len(rewards) and {c.name for c in cells} == set(rewards)
    assert {(c.draw, c.seed) for c in cells} == {(d, s) for d in (0, 1) for s in range(5)}
    assert {c.rl["prompts"]["monitor_n"] for c in cells} == {200}
    assert {c.rl["prompts"]["monitor_n"] for c in grid.cells(recipe)} == {48}
    assert {c.rl["monitor_every"] for c in cells} == {50}  # first and last point: steps 0 and 100
    assert all(c.rl["prompts"]["monitor_samples"] == 4 for c in cells)  # the rl section's, merged under
    # each draw its own RL prompts and monitor problems: prompts.seed shifted by the draw
    assert {(c.draw, c.rl["prompts"]["seed"]) for c in cells} == {(0, 0), (1, 1)}
    del recipe["experiment"]["measure"]
    with pytest.raises(SystemExit, match=r"experiment\.measure"):
        grid.measurement(recipe)


def test_draws_shift_every_seed_and_keep_draw_0_where_it_was(tmp_path: Path, monkeypatch) -> None:
    """Draw 0 is the recipe and ``--out`` itself (cached runs still count); draw d builds π0 and its PRM
    from seeds shifted by d, in its own folder."""
    grid, recipe = _grid(), _recipe()
    assert grid.draw_recipe(recipe, 0) is recipe
    seeds = {}
    for d in (0, 1, 2):
        r = grid.draw_recipe(recipe, d)
        seeds[d] = (r["pi0"].get("seed", 0), r["pi0"]["pretrain"].get("seed", 0), r["prm"]["label"].get("seed", 0),
                    r["prm"]["train"].get("seed", 0), r["rl"]["prompts"]["seed"])  # fmt: skip
    assert seeds[0] == (0, 0, 0, 0, 0) and seeds[1] == (1, 1, 1, 1, 1) and seeds[2] == (2, 2, 2, 2, 2)
    # the weak PRMs of the extra cells are draw 0's alone: their settings are not shifted
    assert grid.draw_recipe(recipe, 1)["prm"]["majority"] == recipe["prm"]["majority"]
    commands: list[list[str]] = []
    monkeypatch.setattr(grid, "run", lambda args, log: commands.append([*args, "->", str(log)]))
    cell = grid.Cell("dense", 3, 0, {})
    assert cell.folder(tmp_path) == tmp_path / "cells" / "dense-3"  # issue 19's and 36's layout
    assert grid.Cell("dense", 3, 1, {}).folder(tmp_path) == tmp_path / "draw-1" / "cells" / "dense-3"
    prms = {d: grid.build_draw(recipe, tmp_path, d, []) for d in (0, 1)}
    assert prms[0] == {"pi0": tmp_path / "pi0", "prm": tmp_path / "prm"}
    assert prms[1] == {"pi0": tmp_path / "draw-1" / "pi0", "prm": tmp_path / "draw-1" / "prm"}
    generate = [c for c in commands if c[:2] == ["arithmetic", "generate"]]
    assert [c[c.index("--seed") + 1] for c in generate] == ["0", "1"]
    assert (
        str(tmp_path / "problems.jsonl") in generate[0]
        and str(tmp_path / "draw-1" / "problems.jsonl") in generate[1]
    )
    for d, folder in ((0, tmp_path), (1, tmp_path / "draw-1")):
        for name in ("pretrain", "label-mc", "train-prm"):
            written = yaml.safe_load((folder / "configs" / f"{name}.yaml").read_text())
            assert written.get("seed", 0) == d, (name, d)
    assert not (tmp_path / "draw-1" / "cells").exists()


def test_a_cached_cell_measured_on_other_monitor_problems_is_refused(tmp_path: Path) -> None:
    """``--measure`` pointed at issue 36's folder would skip its 48-problem cells as cached and report
    them as 200-problem ones: refused, naming the folder."""
    grid, recipe = _grid(), _recipe()
    (cell,) = [c for c in grid.cells(grid.measurement(recipe)) if (c.name, c.draw, c.seed) == ("dense", 0, 0)]
    folder = cell.folder(tmp_path)
    folder.mkdir(parents=True)
    (folder / "policy_card.json").write_text("{}")
    ran = {"prompts": {**recipe["rl"]["prompts"], "source": "world"}}  # issue 36's cell: monitor_n 48
    (folder / "rl_config.json").write_text(json.dumps(ran))
    with pytest.raises(SystemExit, match="monitor_n"):
        grid.run_cell(tmp_path, {}, cell)
    (plain,) = [c for c in grid.cells(recipe) if (c.name, c.draw, c.seed) == ("dense", 0, 0)]
    assert grid.run_cell(tmp_path, {}, plain) == "dense-0: cached"  # the recipe's own cell is that run


@pytest.mark.parametrize("missing", ["pi0", "prm", "experiment", "rl"])
def test_a_recipe_without_a_section_is_refused_by_name(missing) -> None:
    recipe = _recipe()
    del recipe[missing]
    with pytest.raises(SystemExit, match=missing):
        _grid().check_recipe(recipe)


def test_draws_must_be_distinct_non_negative_integers() -> None:
    recipe = _recipe()
    recipe["experiment"]["draws"] = [0, 0]
    with pytest.raises(SystemExit, match=r"experiment\.draws"):
        _grid().check_recipe(recipe)


def test_majority_answers_count_votes_per_problem(tmp_path) -> None:
    """The reference of the ``majority`` PRM: most common final answer per problem, a tie to the answer
    sampled first, an unfinished sample (no final answer) casting no vote."""
    votes = [("p1", "5"), ("p1", "7"), ("p1", "7"), ("p2", "3"), ("p2", "4"), ("p2", None), ("p2", None)]
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps({"problem": {"id": p}, "final_answer": a}) + "\n" for p, a in votes))
    assert _grid().majority_answers(path) == {"p1": "7", "p2": "3"}


# --- the nested bootstrap ---------------------------------------------------------------------------


# --- the report on fabricated cells -------------------------------------------------------------------

COLUMNS = [
    c for c in MONITOR_COLUMNS if c not in ("prm_reward", "paid_reward", "dependence", "dependence_traces")
]
"""The per-problem columns of a gold-checked run without a PRM (and without the causal-dependence monitor)."""


def _write_cell(folder: Path, rows: dict[int, dict[str, list[int]]], kl: float | None = None) -> None:
    """A finished cell whose points are what its per-problem rows (4 samples a problem) add up to."""
    folder.mkdir(parents=True)
    points, records = [], []
    for step, per in rows.items():
        n = 4 * len(per)
        sums = {c: sum(r[i] for r in per.values()) for i, c in enumerate(COLUMNS)}
        points.append({"step": step, "samples": n, "answer_accuracy": sums["answer_correct"] / n,
                       "process_correct": sums["process_correct"] / n, "lucky": sums["lucky"] / n,
                       "unfinished": 0.0, "steps_per_response": sums["steps"] / n,
                       "first_error_classes": {"misconception": sums["misconception"] / max(1, sums["errors"])}})  # fmt: skip
        records.append({"step": step, "columns": COLUMNS, "problems": per})
    (folder / "monitors.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    (folder / PER_PROBLEM_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "policy_card.json").write_text("{}")
    if kl is not None:
        (folder / "train_log.jsonl").write_text(json.dumps({"kl": kl, "step": 1}) + "\n")


def _row(right: int) -> list[int]:
    """A problem's counts over 4 samples: ``right`` process-correct, the rest wrong (half of them by a
    misconception first)."""
    return [4, right, 0, 16, right, 0, 4 - right, (4 - right) // 2]


def _fabricate(out: Path, draw_shift: int) -> dict:
    """2 draws x 3 RL seeds x 2 rewards on 24 monitor problems per draw (each draw its own): π0 gets
    problem p right in p % 4 of its 4 samples; at step 100 a seed's runs gain one right sample on every
    third problem (which third depends on the seed, the same for both rewards), dense one more on every
    problem; every run of draw 1 gains ``draw_shift`` more (draws disagreeing)."""
    for draw in (0, 1):
        for seed in (0, 1, 2):
            for reward, gain in (("outcome", 0), ("dense", 1)):
                start, end = {}, {}
                for p in range(24):
                    more = gain + ((p + seed) % 3 == 0) + (draw_shift if draw else 0)
                    start[f"d{draw}-p{p:02d}"] = _row(p % 4)
                    end[f"d{draw}-p{p:02d}"] = _row(min(4, p % 4 + more))
                folder = (out / f"draw-{draw}" if draw else out) / "cells" / f"{reward}-{seed}"
                _write_cell(folder, {0: start, 100: end}, kl=0.01 * (seed + 1))
    return {"experiment": {"rewards": ["outcome", "dense"], "seeds": [0, 1, 2], "draws": [0, 1]}, "rl": {}}


def test_report_counts_draws_seeds_and_problems_and_pairs_rewards(tmp_path: Path) -> None:
    grid = _grid()
    numbers = {}
    for shift in (0, 2):
        out = tmp_path / f"shift-{shift}"
        text = grid.report(out, _fabricate(out, shift), resamples=1000)
        numbers[shift] = json.loads((out / "results.json").read_text())
        assert "2 (π0, PRM) draw(s) (0, 1) × RL seeds 0, 1, 2: 6 runs per reward" in text
        assert "24 monitor problems per draw (each draw its own test problems) × 4 samples each" in text
        assert "intervals at 95 % each" in text and "Bonferroni" in text
    agree, disagree = numbers[0], numbers[2]
    delta = lambda n, r, m="process_correct": n["rewards"][r]["delta"][m]  # noqa: E731
    width = lambda e: e["high"] - e["low"]  # noqa: E731
    # draws that disagree widen every interval the draw stage sees
    assert width(delta(disagree, "dense")) > 2 * width(delta(agree, "dense"))
    assert width(delta(disagree, "outcome")) > 2 * width(delta(agree, "outcome"))
    # dense − outcome, paired by draw, seed and problem: what the two share (the draw's shift, the seed's
    # problems) cancels; the unpaired interval of two independent estimates does not
    pair = disagree["paired"]["dense − outcome"]["process_correct"]
    unpaired = (width(delta(disagree, "dense")) ** 2 + width(delta(disagree, "outcome")) ** 2) ** 0.5
    assert pair["mean"] > 0 and width(pair) < unpaired / 3, (pair, unpaired)
    # two draws that disagree leave one degree of freedom between them: the interval is widened at
    # Student's t (core.stats) and no longer excludes 0; draws that agree leave nothing to widen
    assert (
        "widened" in pair["method"]
        and pair["low"] < 0 < agree["paired"]["dense − outcome"]["process_correct"]["low"]
    )
    assert pair["mean"] == pytest.approx(
        delta(disagree, "dense")["mean"] - delta(disagree, "outcome")["mean"]
    )
    assert pair["draws"] == {"draw": 2, "run": 6, "problem": 24}
    assert numbers[0]["components"] == {
        "pi0_prm_draws": 2, "rl_seeds": [0, 1, 2], "monitor_problems_per_draw": {"0": 24, "1": 24},
        "samples_per_problem": 4,
    }  # fmt: skip
    # the Δ is the last point's rate minus π0's, the mean over runs
    first, last = (
        agree["rewards"]["dense"]["first"]["process_correct"],
        agree["rewards"]["dense"]["last"]["process_correct"],
    )
    assert delta(agree, "dense")["mean"] == pytest.approx(last["mean"] - first["mean"])
    # 3 tables x 6 metrics per reward (no PRM here: no PRM or paid reward), 2 KLs, 3 paired differences;
    # then each draw alone: 6 changes per reward and 3 paired differences
    assert agree["intervals"] == 2 * 3 * 6 + 2 + 3 + 2 * (2 * 6 + 3)
    # each draw alone: its own seeds crossed with its own problems; where the draws disagree, draw 1's
    # runs gained up to 2 more right samples a problem than draw 0's (4 at most), and the pooled mean is between
    alone = {d: disagree["per_draw"][d]["rewards"]["dense"]["delta"]["process_correct"] for d in ("0", "1")}
    assert alone["0"]["draws"] == {"draw": 1, "run": 3, "problem": 24}
    gained = [
        (min(4, p % 4 + 1 + ((p + s) % 3 == 0) + 2) - min(4, p % 4 + 1 + ((p + s) % 3 == 0))) / 4
        for s in (0, 1, 2)
        for p in range(24)
    ]
    assert alone["1"]["mean"] - alone["0"]["mean"] == pytest.approx(sum(gained) / len(gained))
    assert alone["0"]["mean"] < delta(disagree, "dense")["mean"] < alone["1"]["mean"]
    assert width(alone["0"]) < width(delta(disagree, "dense")) / 2
    assert set(disagree["per_draw"]["1"]["paired"]) == {"dense − outcome"}
    assert "## Each draw alone" in text
    assert set(agree["cells"]["dense"]["runs"]) == {f"{d}-{s}" for d in (0, 1) for s in (0, 1, 2)}
    assert agree["rewards"]["dense"]["kl_last"]["mean"] == pytest.approx(0.02)


def _point(step: int, process: float, lucky: float) -> dict:
    return {"step": step, "process_correct": process, "answer_accuracy": process + lucky, "lucky": lucky,
            "prm_reward": process, "first_error_classes": {"misconception": 0.5}, "unfinished": 0.0,
            "steps_per_response": 4.0}  # fmt: skip


def test_cells_without_per_problem_counts_get_t_intervals_over_seeds(tmp_path: Path) -> None:
    """Cells from before issue 37 (``monitors.jsonl`` only, one draw): the same report, its intervals the
    t-intervals over seeds of the runs' rates, and a line saying that problems were left out."""
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
    text = grid.report(tmp_path, recipe, resamples=500)
    assert "no per-problem monitor counts" in text and "Student-t over the runs" in text
    assert "One π0/PRM draw" in text
    numbers = json.loads((tmp_path / "results.json").read_text())
    # dense − outcome, paired by seed: +5 points on every seed, so the interval is a point
    pair = numbers["paired"]["dense − outcome"]
    assert pair["process_correct"]["mean"] == pytest.approx(0.05)
    assert pair["process_correct"]["high"] - pair["process_correct"]["low"] < 1e-9
    assert pair["lucky"]["mean"] == pytest.approx(-0.05)
    # outcome's Δ process-correct 0, 2, 4 points: mean 2.0, t(2) = 4.303, sd 2 -> half-width 4.97, the
    # interval issue 19's and 36's reports gave (a percentile bootstrap of 3 runs would be narrower)
    assert "| outcome | 3 | 100 | +2.0 [-3.0, +7.0] |" in text
    assert numbers["rewards"]["outcome"]["delta"]["process_correct"]["method"].startswith("t-interval over 3")
    assert (tmp_path / "curves.png").stat().st_size > 0
    cells = numbers["cells"]
    assert set(cells["dense"]["runs"]) == {"0-0", "0-1", "0-2"}
    # an extra cell keeps every seed's points (not only the last seed's)
    assert set(cells["hack"]["runs"]) == {"0-0", "0-1"} and len(cells["hack"]["runs"]["0-1"]["points"]) == 2
    assert "### extra cell `hack` (seed 1)" in text


def test_steps_to_a_gain_is_the_first_point_that_far_above_step_0() -> None:
    grid = _grid()
    points = [_point(0, 0.30, 0.0), _point(10, 0.34, 0.0), _point(20, 0.35, 0.0), _point(30, 0.41, 0.0)]
    assert grid.steps_to_gain(points, 0.05) == 20  # +5 points exactly counts
    assert grid.steps_to_gain(points, 0.10) == 30 and grid.steps_to_gain(points, 0.2) is None
    assert grid.steps_to_gain([], 0.05) is None
    runs = {"dense": {(0, 1): points, (0, 0): points[:2]}}
    table = grid.gains_table(runs, {"rewards": ["outcome", "dense"]})
    assert table == {"dense": {"0.05": {"0-0": None, "0-1": 20}, "0.1": {"0-0": None, "0-1": 30}}}


def test_an_extra_cell_on_the_grids_problems_is_paired_with_outcome_and_its_own_reward(
    tmp_path: Path,
) -> None:
    """``dense_twice`` (seeds 0, 1 of draw 0) gains one more right sample than dense wherever a problem
    has room: its Δ minus dense's, paired by seed and problem, is that share exactly, and above 0."""
    grid = _grid()
    recipe = _fabricate(tmp_path, 0)
    recipe["experiment"]["extra"] = {"dense_twice": {"reward": "dense", "seeds": [0, 1]}}
    for seed in (0, 1):
        start, end = {}, {}
        for p in range(24):
            start[f"d0-p{p:02d}"] = _row(p % 4)
            end[f"d0-p{p:02d}"] = _row(min(4, p % 4 + 2 + ((p + seed) % 3 == 0)))
        _write_cell(tmp_path / "cells" / f"dense_twice-{seed}", {0: start, 100: end}, kl=0.02)
    text = grid.report(tmp_path, recipe, resamples=300)
    extra = json.loads((tmp_path / "results.json").read_text())["extra"]
    assert extra["bases"] == {"dense_twice": "dense"} and "## Extra cells on the grid's problems" in text
    assert extra["rewards"]["dense_twice"]["delta"]["process_correct"]["draws"]["run"] == 2
    own = extra["paired"]["dense_twice − dense"]["process_correct"]
    capped = sum(min(4, p % 4 + 2 + ((p + s) % 3 == 0)) - min(4, p % 4 + 1 + ((p + s) % 3 == 0))
                 for s in (0, 1) for p in range(24)) / (2 * 96)  # fmt: skip
    assert own["mean"] == pytest.approx(capped) and own["low"] > 0
    assert "dense_twice − outcome" in extra["paired"]


def test_the_docs_block_shows_every_draw_pooled_and_alone_with_its_multiplicity(tmp_path: Path) -> None:
    grid = _grid()
    out = tmp_path / "run"
    grid.report(out, _fabricate(out, 2), resamples=200)
    results = json.loads((out / "results.json").read_text())
    text = grid.block(results, tuned=["0"])
    assert (
        text.startswith("Draws: 2 (π0, PRM) draw(s) (0, 1)")
        and "intervals at 95 %" not in text.split("\n")[0]
    )
    pair = results["paired"]["dense − outcome"]["process_correct"]["cell"]
    assert f"| dense − outcome | all draws | {pair} |" in text
    alone = results["per_draw"]["1"]["paired"]["dense − outcome"]["process_correct"]["cell"]
    assert f"| dense − outcome | draw 1 (fresh: claims) | {alone} |" in text
    assert "| dense | draw 0 (its problems read in tuning) |" in text
    # intervals shown: 2 rewards x (π0 level, 3 changes, KL) + 3 rows x 3 sets x 2 metrics; no PRM reward
    # here, and lucky answers are 0 in every run, a value with no interval
    assert "| +0.0 |" in text and "This block: 28 intervals at 95 % each" in text
    (tmp_path / "r.json").write_text(json.dumps(results))
    doc = "x\n<!-- rl-measure: r.json tuned=0 -->\nold\n<!-- /rl-measure -->\ny\n"
    assert grid.render(doc, tmp_path) == doc.replace("old\n", text)
    assert grid.render(grid.render(doc, tmp_path), tmp_path) == grid.render(doc, tmp_path)


def test_the_rl_docs_block_is_what_the_committed_measurement_gives() -> None:
    """The measurement blocks of docs/rl.md and docs/results.md equal the render of docs/results/rl-measure.json, which holds
    issue 37's draws: 2 (π0, PRM) draws x 5 RL seeds x 200 monitor problems, each draw also alone."""
    grid = _grid()
    for page in ("rl.md", "results.md"):
        docs = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert grid.BLOCK.search(docs) is not None, page
        assert grid.render(docs, ROOT) == docs, page
    results = json.loads((ROOT / "docs" / "results" / "rl-measure.json").read_text(encoding="utf-8"))
    parts = results["components"]
    assert parts["pi0_prm_draws"] >= 2 and len(parts["rl_seeds"]) >= 5
    assert min(parts["monitor_problems_per_draw"].values()) >= 200
    assert set(results["per_draw"]) == {"0", "1"} and "dense − outcome" in results["paired"]
