"""The run report and the sweep report show honest best-of-N accuracy (issue 61) beside accuracy where the
evaluations measured one (a world with loopholes); a run on a world without loopholes reports as before."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prmkit.core.results import percent
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.evaluation.study import with_range
from prmkit.evaluation.suite import evaluate_world
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.report import to_html, to_markdown
from prmkit.pipeline.summary import BON_METHODS, BON_NAMES, BON_NS, build_report
from prmkit.pipeline.sweep import sweep_report
from prmkit.scoring import load_scorer
from tests.markdown_tables import table_after

HONEST_TITLE = "*Honest best-of-N accuracy (%) with prm-gold: a pick that games the task counts as wrong"


def _stage(folder: Path, world: str) -> dict[str, Any]:
    """An ``eval-prm-gold`` stage as the pipeline records it, its evaluation a real one on ``world``'s
    fresh data scored by the world's oracle (its checker's verdicts as step scores)."""
    settings = WorldEvalSettings(
        world=world, problems=9, per_problem=8, heldout_problems=4, beam_problems=0, bootstrap=100
    )
    summary = evaluate_world(load_scorer(f"{world}-oracle"), folder, settings)
    return {"cached": False, "seconds": 1.0, "dir": str(folder), "outputs": [str(folder)], "summary": summary}


def _recipe(world: str) -> Recipe:
    """A recipe whose problems, policy, judge and evaluation are all ``world``'s."""
    labels = {"rollout_policy": {"policy": world}, "judge": {"judge": world}}
    return Recipe.model_validate(
        {"problems": {"source": world}, "labels": labels, "evaluate": {"world": world}}
    )


def test_the_run_report_shows_honest_accuracy_where_the_world_has_loopholes(tmp_path: Path) -> None:
    stage = _stage(tmp_path / "eval-prm-gold", "agent")
    bon = stage["summary"]["bon"]
    assert bon["params"]["gaming_traces"] > 0  # the agent policy sometimes takes the grader's tool
    assert any(r["honest_accuracy"] < r["accuracy"] for r in bon["rows"])  # so the tables differ
    report = build_report(_recipe("agent"), {"eval-prm-gold": stage}, tmp_path, None)
    md = to_markdown(report)
    header, *body = table_after(md, HONEST_TITLE)
    assert header == ["method", *(f"N={n}" for n in BON_NS)]
    rows = {(r["method"], r["n"]): r for r in bon["rows"]}
    measured = [m for m in BON_METHODS if any(m == k for k, _ in rows)]
    assert [r[0] for r in body] == [BON_NAMES[m] for m in measured]
    for method, (_, *cells) in zip(measured, body, strict=True):
        for n, text in zip(BON_NS, cells, strict=True):
            if (method, n) not in rows:
                assert text == "–"
                continue
            found = re.fullmatch(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", text)
            assert found, text
            expected = [100 * rows[method, n][k] for k in ("honest_accuracy", "honest_lo", "honest_hi")]
            assert [float(x) for x in found.groups()] == pytest.approx(expected, abs=0.05)
    assert f"traces in the test pools that do: {bon['params']['gaming_traces']})" in md
    assert md.index("*Best-of-N accuracy (%) with prm-gold") < md.index(HONEST_TITLE)
    assert "Honest best-of-N accuracy (%) with prm-gold" in to_html(report)


def test_a_run_on_a_world_without_loopholes_reports_as_before(tmp_path: Path) -> None:
    stage = _stage(tmp_path / "eval-prm-gold", "arithmetic")
    assert "gaming_traces" not in stage["summary"]["bon"]["params"]
    md = to_markdown(build_report(_recipe("arithmetic"), {"eval-prm-gold": stage}, tmp_path, None))
    assert "Honest" not in md and "honest accuracy" not in md.lower()
    header, *body = table_after(md, "*Best-of-N accuracy (%) with prm-gold")
    rows = stage["summary"]["bon"]["rows"]
    assert header == ["method", *(f"N={n}" for n in BON_NS)]
    by_name = {b[0]: dict(zip(header, b, strict=True)) for b in body}
    shown = (r for r in rows if r["n"] in BON_NS and r["method"] in BON_METHODS)
    for row in shown:  # each cell is the row's task accuracy and band
        cell = by_name[BON_NAMES.get(row["method"], row["method"])][f"N={row['n']}"]
        assert cell == f"{percent(row['accuracy'])} [{percent(row['lo'])}, {percent(row['hi'])}]"


@pytest.mark.parametrize("world", ["agent", "arithmetic"])
def test_the_sweep_report_shows_the_studys_honest_table_only_where_it_has_one(
    tmp_path: Path, world: str
) -> None:
    per_seed = {seed: {"eval-prm-gold": _stage(tmp_path / f"seed-{seed}", world)} for seed in (0, 1)}
    md = to_markdown(sweep_report(_recipe(world), per_seed, tmp_path))
    tuning = json.loads((tmp_path / "study.json").read_text(encoding="utf-8"))["tuning"]
    title = "*Honest best-of-N accuracy: a pick that games the task counts as wrong (single-run range)*"
    assert ("bon_honest" in tuning) is (world == "agent") and (title in md) is (world == "agent")
    if world == "arithmetic":
        assert "Honest" not in md
        return
    header, *body = table_after(md, title)
    assert [row[0] for row in body] == list(tuning["bon_honest"])
    for (_, *cells), by_n in zip(body, tuning["bon_honest"].values(), strict=True):
        assert header[1:] == list(by_n) and cells == [with_range(e) for e in by_n.values()]
    assert md.index("*Best-of-N accuracy (single-run range)*") < md.index(title)
