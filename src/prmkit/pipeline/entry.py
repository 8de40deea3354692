"""``prmkit run``'s entry: a recipe without ``seeds`` runs once (runner.py); with ``seeds``, once per seed
and then the sweep report (sweep.py). Kept apart from both so that the sweep can call the single run
without the single run knowing about sweeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.runner import AnyRecipe, RunResult, load_recipe, output_lock, run_once
from prmkit.pipeline.sweep import run_sweep


def run(
    recipe: str | Path | AnyRecipe,
    overrides: dict[str, Any] | None = None,
    source: str | None = None,
    jobs: int = 1,
) -> RunResult:
    """Run the whole loop of ``recipe`` (a world recipe, or an RL study: ``study: rl``) and write
    ``report.md`` / ``report.html`` in its output folder, which it holds for the whole run (a sweep's seed
    folders are inside it); ``overrides``: dotted keys over the file's; ``jobs``: stages at once, each
    in its own process (:func:`prmkit.pipeline.runner.run_stages`)."""
    if isinstance(recipe, (str, Path)):
        source = source or str(recipe)
        recipe = load_recipe(recipe, overrides)
    with output_lock(recipe.output_dir):
        if isinstance(recipe, Recipe) and recipe.seeds:
            return run_sweep(recipe, source, jobs)
        return run_once(recipe, source, jobs)
