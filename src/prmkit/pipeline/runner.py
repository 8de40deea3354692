"""``prmkit run``: execute a recipe's stages in order, skipping those already done, then write the report.

Each stage's key hashes its settings, the keys of the stages it reads and prmkit's version, so a
rerun skips finished stages, a changed setting reruns exactly the stages it affects, and a crash
resumes at the stage that broke (whose own jobs resume from their logs and checkpoints).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prmkit.pipeline.cache import StageDir, stage_dir, stage_key
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import Stage, plan
from prmkit.pipeline.yamlconf import load_yaml_config


@dataclass
class RunResult:
    output_dir: Path
    report_md: Path
    report_html: Path
    stages: dict[str, dict[str, Any]]
    """Per stage: key, folder, seconds, whether it was cached this time, and its summary."""


def load_recipe(path: str | Path, overrides: dict[str, Any] | None = None) -> Recipe:
    """Read and validate a recipe (every mistake reported at once, with its line)."""
    return load_yaml_config(path, Recipe, overrides)


def _log(message: str) -> None:
    from prmkit.core.progress import console

    console.print(message)


def run_stages(recipe: Recipe, stages: list[Stage], out: Path) -> dict[str, dict[str, Any]]:
    from prmkit import __version__

    dirs: dict[str, StageDir] = {}
    results: dict[str, dict[str, Any]] = {}
    for i, st in enumerate(stages, start=1):
        key = stage_key(st.name, st.settings, {d: dirs[d].key for d in st.deps}, __version__)
        sd = dirs[st.name] = stage_dir(out, st.name, key)
        head = f"[{i}/{len(stages)}] {st.name}"
        if sd.is_done():
            done = sd.summary()
            _log(f"[green]{head}[/green]: cached ({sd.path.name}, took {done['seconds']:.0f}s when run)")
            results[st.name] = {"key": key, "dir": str(sd.path), "cached": True, **done}
            continue
        _log(f"[bold]{head}[/bold] -> {sd.path}")
        start = time.perf_counter()
        summary = st.run(recipe, sd.path, {d: dirs[d].path for d in st.deps})
        seconds = time.perf_counter() - start
        summary = json.loads(json.dumps(summary, default=str))
        sd.mark_done(summary, seconds)
        _log(f"[green]{head}[/green]: done in {seconds:.0f}s")
        results[st.name] = {
            "key": key,
            "dir": str(sd.path),
            "cached": False,
            "seconds": seconds,
            "summary": summary,
        }
    return results


def run(
    recipe: str | Path | Recipe, overrides: dict[str, Any] | None = None, source: str | None = None
) -> RunResult:
    """Run the whole loop of ``recipe`` and write ``report.md`` / ``report.html`` in its output folder."""
    from prmkit.pipeline.report import write_report
    from prmkit.pipeline.summary import build_report

    if not isinstance(recipe, Recipe):
        source = source or str(recipe)
        recipe = load_recipe(recipe, overrides)
    if recipe.seeds:
        from prmkit.pipeline.sweep import run_sweep

        return run_sweep(recipe, source)
    out = recipe.output_dir
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.resolved.json").write_text(recipe.model_dump_json(indent=2))
    stages = plan(recipe)
    results = run_stages(recipe, stages, out)
    report = build_report(recipe, results, out, source)
    md, page = write_report(report, out)
    _log(f"report: {page}")
    return RunResult(out, md, page, results)
