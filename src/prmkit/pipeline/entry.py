"""``prmkit run``'s entry: a recipe without ``seeds`` runs once (runner.py); with ``seeds``, once per seed
and then the sweep report (sweep.py). Kept apart from both so that the sweep can call the single run
without the single run knowing about sweeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.runner import RunResult, load_recipe, output_lock, run_once
from prmkit.pipeline.sweep import run_sweep


def run(
    recipe: str | Path | Recipe, overrides: dict[str, Any] | None = None, source: str | None = None
) -> RunResult:
    """Run the whole loop of ``recipe`` and write ``report.md`` / ``report.html`` in its output folder,
    which it holds for the whole run (a sweep's seed folders are inside it)."""
    if not isinstance(recipe, Recipe):
        source = source or str(recipe)
        recipe = load_recipe(recipe, overrides)
    with output_lock(recipe.output_dir):
        return run_sweep(recipe, source) if recipe.seeds else run_once(recipe, source)
