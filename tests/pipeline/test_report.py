"""The run report puts what a reader must know first: models that stopped early or did not improve."""

from __future__ import annotations

from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.report import to_html, to_markdown
from prmkit.pipeline.summary import build_report


def _trained(steps: int, planned: int, stopped: bool, start: float | None = None, best: float | None = None):
    run = {"steps": steps, "planned_steps": planned, "stopped_early": stopped, "threads": 2,
           "stopped_by": "time cap" if stopped else "max_steps", "wall_seconds": 90.0}  # fmt: skip
    summary = {"training": run}
    if best is not None:
        summary |= {"dev": {"eval_first_error_f1": best}, "dev_at_start": {"eval_first_error_f1": start}}
    return {"cached": False, "seconds": 1.0, "dir": "x", "summary": summary}


def test_report_opens_with_warnings_and_lists_steps_taken_against_planned(tmp_path):
    results = {
        "pretrain": _trained(1200, 1200, False),
        "prm-gold": _trained(114, 500, True, start=0.61, best=0.457),
        "prm-mc_hard": _trained(500, 500, False, start=0.938, best=0.935),
        "orm": _trained(400, 400, False),
    }
    report = build_report(Recipe(), results, tmp_path, "recipes/world.yaml")
    assert report.sections[0].title == "Warnings"
    warnings = report.sections[0].text
    assert len(warnings) == 3  # prm-gold: stopped early and worse than its start; prm-mc_hard: not better
    assert warnings[0].startswith("**Warning (prm-gold):** training stopped early: 114 of 500 planned")
    assert any(
        w.startswith("**Warning (prm-mc_hard):**") and "93.8" not in w and "0.938" in w for w in warnings
    )
    md = to_markdown(report)
    assert md.index("## Warnings") < md.index("## What this run shows")
    assert "| prm-gold | 114 / 500 | time cap | 2 | 61.0 → 45.7 |" in md
    assert "| lm (zero-shot) | 1,200 / 1,200 | max_steps | 2 | – |" in md
    page = to_html(report)
    assert "<div class='table'><table>" in page  # wide tables scroll instead of overflowing
    assert "<p><strong>Warning (prm-gold):</strong> training stopped early" in page  # Markdown rendered
    assert "**" not in page


def test_report_has_no_warnings_section_when_every_run_went_as_planned(tmp_path):
    results = {"prm-gold": _trained(500, 500, False, start=0.6, best=0.9)}
    report = build_report(Recipe(), results, tmp_path, None)
    assert "Warnings" not in [s.title for s in report.sections]


def test_report_warns_when_training_traces_were_too_long(tmp_path):
    over = {"policy": "skip", "limit": 512, "skipped": 7, "truncated": 0, "steps_cut": 0, "first": ["t1"]}
    fine = {**over, "skipped": 0}
    run = _trained(500, 500, False, start=0.6, best=0.9)
    run["summary"]["overlong"] = {"train": over, "dev": fine}
    report = build_report(Recipe(), {"prm-gold": run}, tmp_path, None)
    (warning,) = report.sections[0].text
    assert warning.startswith("**Warning (prm-gold):** train traces longer than its 512 tokens")
    assert "7 left out" in warning and "--overlong skip" in warning


def test_report_without_rl_points_to_the_rl_experiment(tmp_path):
    """The demo recipe has no RL stage (it would not fit 15 minutes): its report says where RL is run."""
    md = to_markdown(build_report(Recipe(), {"prm-gold": _trained(500, 500, False)}, tmp_path, None))
    section = md[md.index("## RL against the PRM") :]
    assert "prmkit run recipes/rl.yaml" in section and "docs/rl.md" in section
    agent = Recipe.model_validate({
        "problems": {"source": "agentworld"},
        "labels": {"rollout_policy": {"policy": "agentworld"}, "judge": {"judge": "agentworld"}},
    })  # fmt: skip
    assert "RL against the PRM" not in to_markdown(build_report(agent, {}, tmp_path, None))
