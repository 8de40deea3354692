"""Seeds as a sweep: one run per seed in its own folder, then a report of means and 95 % intervals."""

from __future__ import annotations

import json

import pytest

from prmkit.pipeline import run
from prmkit.pipeline.sweep import interval

RECIPE = """
name: sweep
output_dir: {out}
seeds: [0, 1]
problems: {{n: 16, per_problem: 4}}
labels: {{methods: [mc], rollouts: 2}}
train:
  pretrain: {{max_steps: 6, threads: 1, batch_size: 8, tiny: {{width: 32, heads: 2}}}}
  prm: {{max_steps: 4, threads: 1, head: likelihood}}
  prm_sources: [gold]
  orm: null
evaluate: {{problems: 6, per_problem: 4, heldout_problems: 3, bootstrap: 20, beam_problems: 0, claims_seed: 99,
           compare: [['lm (zero-shot)', prm-gold]], plots: false}}
"""
# A few steps a model: the test checks the sweep's folders, intervals and report, not what the models learn.


def test_interval_is_the_student_t_interval_of_the_mean() -> None:
    assert interval([0.5]) == (0.5, 0.5, 0.5)
    mean, lo, hi = interval([1.0, 2.0, 3.0])  # sd 1, n 3: half-width t(0.975, 2) / sqrt(3)
    assert mean == 2.0 and hi - mean == pytest.approx(4.303 / 3**0.5, abs=1e-3) and mean - lo == hi - mean


@pytest.mark.slow
def test_a_recipe_with_seeds_runs_once_per_seed_and_reports_intervals(tmp_path) -> None:
    recipe = tmp_path / "sweep.yaml"
    recipe.write_text(RECIPE.format(out=tmp_path / "out"))
    result = run(recipe)
    out = tmp_path / "out"
    for seed in (0, 1):
        resolved = json.loads((out / f"seed-{seed}" / "recipe.resolved.json").read_text())
        assert resolved["problems"]["seed"] == seed and resolved["train"]["prm"]["seed"] == seed
        assert resolved["evaluate"]["seed"] == 1234  # the evaluation data is the same for every seed
        assert (out / f"seed-{seed}" / "report.md").exists()
    sweep = json.loads((out / "sweep.json").read_text())
    f1 = sweep["metrics"]["first-error F1 world-heldout"]
    assert set(f1) == {"lm (zero-shot)", "prm-gold"} and all(len(v) == 2 for v in f1.values())
    assert len(sweep["metrics"]["best-of-4 accuracy"]["majority vote"]) == 2  # once per seed, not per model
    md = result.report_md.read_text()
    assert result.report_md == out / "report.md" and "## First-error F1" in md
    mean, lo, hi = interval([100 * v for v in f1["prm-gold"]])
    assert f"{mean:.1f} [{lo:.1f}, {hi:.1f}]" in md
    # the claims set: fresh problems, measured beside the tuning set, both in study.json and the report
    numbers = json.loads((out / "study.json").read_text())
    assert numbers["tuning"]["evaluate_seed"] == 1234 and numbers["claims"]["evaluate_seed"] == 99
    # where it ran: the same recipe trains other floats on another CPU type (README's ranges say so)
    assert numbers["machine"]["cpu"] and numbers["machine"]["torch_cpu_capability"]
    claims_dir = next((out / "seed-0" / "stages").glob("claims-prm-gold-*")) / "claims"
    tuning_dir = next((out / "seed-0" / "stages").glob("eval-prm-gold-*")) / "eval"
    problems = [
        {json.loads(x)["problem"] for x in (d / "predictions.jsonl").read_text().splitlines()}
        for d in (claims_dir, tuning_dir)
    ]
    assert problems[0].isdisjoint(problems[1])
    for set_name in ("tuning", "claims"):
        s = numbers[set_name]
        gold = s["first_error"]["prm-gold"]["F1 world-test"]
        assert gold["draws"]["seed"] == 2 and gold["low"] <= gold["mean"] <= gold["high"]
        assert gold["single_run"][0] <= gold["mean"] <= gold["single_run"][1]
        assert "AUROC world-heldout" in s["first_error"]["lm (zero-shot)"]
        assert "prm-gold − lm (zero-shot): AUROC world-test" in s["paired"]
        # the recipe's own comparison (evaluate.compare), on first errors and on best-of-N
        assert "lm (zero-shot) − prm-gold: F1 world-heldout" in s["paired"]
        assert "lm (zero-shot) best-of-N (min) − prm-gold best-of-N (min): N=4" in s["paired"]
        assert "majority vote" in s["bon"] and s["intervals"] > 10
        assert f"## Intervals over seeds and problems: the {set_name} set" in md


def _eval_summary(f1: float, gap: float, paid: float | None) -> dict:
    audits = {"outcome_shift_share": 0.4} | ({} if paid is None else {"loophole_rewarded_rate": paid})
    return {
        "summary": {
            "first_error": {"subsets": [{"name": "world-test", "f1": f1}]},
            "bon": {
                "rows": [
                    {"n": 16, "method": "prm:min", "accuracy": 0.6, "gap_vs_majority": gap},
                    {"n": 16, "method": "weighted:min", "accuracy": 0.7, "gap_vs_majority": 2 * gap},
                ]
            },
            "audits": audits,
        }
    }


def test_the_sweep_reads_paired_gains_and_the_loophole_audit_where_there_is_one(tmp_path) -> None:
    from prmkit.pipeline.recipe import Recipe
    from prmkit.pipeline.sweep import collect, sweep_report

    per_seed = {
        s: {
            "eval-prm-gold": _eval_summary(0.8, 0.05 + s / 100, 0.1 * s),
            "eval-orm": _eval_summary(0.3, 0.0, None),
        }
        for s in (0, 1, 2)
    }
    data = collect(per_seed)
    assert data["best-of-16 gain over majority vote"]["prm-gold"] == pytest.approx([0.05, 0.06, 0.07])
    assert data["best-of-16 gain over majority vote"]["prm-gold weighted vote"] == pytest.approx(
        [0.1, 0.12, 0.14]
    )
    assert data["best-of-16 accuracy"]["orm weighted vote"] == pytest.approx([0.7, 0.7, 0.7])
    assert data["loophole trajectories passed as error-free"] == {"prm-gold": [0.0, 0.1, 0.2]}
    titles = [s.title for s in sweep_report(Recipe(), per_seed, tmp_path).sections]
    assert (
        "Loophole audit" in titles and "Best-of-N gain over majority vote (paired within each seed)" in titles
    )
