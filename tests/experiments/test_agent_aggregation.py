"""experiments/agent_aggregation.py on a tiny agent-recipe run: its pools are the evaluation stages' own
(best-of-N by min, last and mean equal each stage's bon.csv), recover is measured beside them, on both sets."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.experiments import load_experiment

# a loophole rate far above the recipe's so the tiny pools hold trajectories that game the task; no ORM (read
# as the PRM is, its stages would add a third to the run: the run of experiments/agent_aggregation.py on
# recipes/agent.yaml checks it against its stages' bon.csv as it does every model)
RECIPE = """
name: tiny agent
output_dir: {out}
seeds: [0]
problems: {{source: agent, n: 8, per_problem: 2}}
labels: {{methods: []}}
train:
  pretrain: {{max_steps: 2, threads: 1, batch_size: 4, max_length: 1024,
             tiny: {{width: 16, heads: 2, max_length: 1024}}}}
  prm: {{max_steps: 2, threads: 1, head: likelihood, max_length: 1024}}
  prm_sources: [gold]
  orm: null
evaluate: {{problems: 3, per_problem: 8, heldout_problems: 1, bootstrap: 20, beam_problems: 0, seed: 1234,
           claims_seed: 7919, policy: {{systematic: 0.5, systematic_rate: 0.6, loophole: 0.2}},
           plots: false}}
"""
SETS = {"tuning": ("eval", 1234), "claims": ("claims", 7919)}
MODELS = {"prm-gold": "prm-gold", "pretrain": "lm (zero-shot)"}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-seed sweep of a tiny agent recipe (the gold PRM and the zero-shot LM), built once for this
    file (in place: its stage index names its folders by absolute path)."""
    from prmkit.pipeline import run

    folder = tmp_path_factory.mktemp("agent-aggregation")
    recipe = folder / "tiny-agent.yaml"
    recipe.write_text(RECIPE.format(out=folder / "out"))
    run(recipe)
    return folder / "out"


def _stage_rows(seed: Path, stage: str, folder: str) -> list[dict[str, str]]:
    index = json.loads((seed / "stages.json").read_text())["stages"]
    with open(Path(index[stage]["dir"]) / folder / "bon.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_min_last_mean_equal_the_stages_and_recover_is_measured_on_both_sets(tiny_run, tmp_path) -> None:
    exp = load_experiment("agent_aggregation")
    out = tmp_path / "agg.json"
    result = exp.main([str(tiny_run), "--ns", "4,8", "--resamples", "50", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert result["runs"] == [str(tiny_run / "seed-0")] and result["ns"] == [4, 8]
    assert result["command"].startswith("python experiments/agent_aggregation.py ")
    seed = tiny_run / "seed-0"
    gamed = 0
    for set_name, (prefix, evaluate_seed) in SETS.items():
        s = result[set_name]
        assert s["evaluate_seed"] == evaluate_seed
        assert s["draws"] == {"seeds": 1, "problems": 3, "samples": 8}
        for stage, model in MODELS.items():
            rows = _stage_rows(seed, f"{prefix}-{stage}", prefix)
            for how in ("min", "last", "mean"):
                for n in (4, 8):
                    theirs = next(r for r in rows if r["method"] == f"prm:{how}" and r["n"] == str(n))
                    mine = s["estimates"][f"{model} {how}"][f"N={n}"]
                    # one seed: the mean is the stage's accuracy (it rounds the mean, we the problems)
                    assert mine["accuracy"]["mean"] == pytest.approx(float(theirs["accuracy"]), abs=1e-6)
                    assert mine["honest"]["mean"] == pytest.approx(float(theirs["honest_accuracy"]), abs=1e-6)
                    gamed += theirs["honest_accuracy"] != theirs["accuracy"]
            majority = next(r for r in rows if r["method"] == "majority" and r["n"] == "8")
            assert s["estimates"]["majority vote"]["N=8"]["accuracy"]["mean"] == pytest.approx(
                float(majority["accuracy"]), abs=1e-6
            )
            for row in (f"{model} recover", f"{model} weighted vote"):
                est = s["estimates"][row]["N=4"]
                assert est["accuracy"]["draws"] == {"seed": 1, "problem": 3}
                assert 0 <= est["honest"]["mean"] <= est["accuracy"]["mean"] <= 1
            for a, b in ((f"{model} recover", f"{model} min"), (f"{model} recover", "majority vote")):
                diff = s["paired"][f"{a} − {b}"]["N=8"]["accuracy"]["mean"]
                by_n = s["estimates"]
                assert diff == pytest.approx(
                    by_n[a]["N=8"]["accuracy"]["mean"] - by_n[b]["N=8"]["accuracy"]["mean"]
                )
        assert s["intervals"] == 2 * (len(s["estimates"]) + len(s["paired"])) * 2
    assert gamed  # the honest reading was exercised: some pick gamed the task


def test_a_pool_that_differs_from_the_stage_is_refused(tiny_run, tmp_path) -> None:
    exp = load_experiment("agent_aggregation")
    assert exp.seed_folders([tiny_run]) == exp.seed_folders([tiny_run / "seed-0"]) == [tiny_run / "seed-0"]
    rows = _stage_rows(tiny_run / "seed-0", "eval-prm-gold", "eval")
    bon = tmp_path / "bon.csv"
    index = json.loads((tiny_run / "seed-0" / "stages.json").read_text())["stages"]
    shutil.copy(Path(index["eval-prm-gold"]["dir"]) / "eval" / "bon.csv", bon)
    exp.check_stage(rows, bon)  # the stage's own rows pass
    changed = [dict(r, accuracy="0.123") if r["method"] == "prm:last" else r for r in rows]
    with pytest.raises(ValueError, match="differs from the stage's"):
        exp.check_stage(changed, bon)


def test_the_view_shows_each_row_at_each_n_by_both_accuracies(tiny_run, tmp_path) -> None:
    """The ``agent-aggregation`` results view renders the script's file: every cell is the file's estimate,
    task accuracy then honest accuracy at each N, and ``models`` keeps those models' rows and majority's."""
    from prmkit.core.results import Block
    from prmkit.evaluation.views import agent_aggregation, aggregation_table
    from tests.markdown_tables import table_after

    exp = load_experiment("agent_aggregation")
    exp.main([str(tiny_run), "--ns", "4,8", "--resamples", "50", "--out", str(tmp_path / "agg.json")])
    result = json.loads((tmp_path / "agg.json").read_text())
    attrs = {"set": "claims", "table": "estimates", "models": "prm-gold", "ns": "8"}
    text = agent_aggregation(Block("agg.json", attrs, tmp_path))
    header, *rows = table_after(text, "1 seeds × 3 tasks × 8 samples (evaluate seed 7919)")
    assert header == ["best-of-N", "accuracy N = 8", "honest N = 8"]
    expected = ["majority vote", *(f"prm-gold {a}" for a in exp.AGGREGATIONS), "prm-gold weighted vote"]
    assert [r[0] for r in rows] == expected
    for row in rows:
        cell = result["claims"]["estimates"][row[0]]["N=8"]
        assert row[1:] == [
            f"{100 * cell[k]['mean']:.1f} [{100 * cell[k]['low']:.1f}, {100 * cell[k]['high']:.1f}]"
            for k in ("accuracy", "honest")
        ]
    paired = aggregation_table(result, "tuning", "paired")
    _, *prows = table_after(paired, "1 seeds")
    assert len(prows) == len(result["tuning"]["paired"]) and len(prows[0]) == 1 + 2 * 2
    assert all(c[0] in "+-" for r in prows for c in r[1:])
    with pytest.raises(ValueError, match="no rows of"):
        aggregation_table(result, "tuning", "paired", models=["prm-typo"])
    with pytest.raises(ValueError, match="unknown attributes"):
        agent_aggregation(Block("agg.json", {**attrs, "row": "x"}, tmp_path))
