"""CLI command ``prmkit run``: the whole loop from one recipe (see prmkit.pipeline)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        recipe: Path = typer.Argument(..., help="Recipe YAML (see recipes/world.yaml)."),
        output_dir: Path | None = typer.Option(
            None, "--output-dir", "-o", help="Override the recipe's output_dir."
        ),
        seeds: str | None = typer.Option(
            None,
            "--seeds",
            help="Override the recipe's seeds, e.g. 0,1,2,3,4: the whole recipe once per seed, then one "
            "report with intervals over seeds and problems.",
        ),
        reuse: list[Path] = typer.Option(
            [],
            "--reuse",
            help="Another run's output folder whose finished stages are taken where their name and key "
            "match (identical settings and inputs): no work twice across recipes. Repeatable.",
        ),
        check: bool = typer.Option(
            False, "--check", help="Validate the recipe and list its stages, run nothing."
        ),
    ) -> None:
        """Run problems -> traces -> labels -> PRMs/ORM -> evaluation -> audits -> cards -> report."""
        from prmkit.pipeline import load_recipe, run

        overrides: dict[str, object] = {"output_dir": str(output_dir)} if output_dir else {}
        if reuse:
            overrides["reuse"] = [str(p) for p in reuse]
        if seeds is not None:
            from prmkit.cli.common import fail

            try:
                overrides["seeds"] = [int(s) for s in seeds.split(",") if s.strip()]
            except ValueError:
                fail(f"--seeds: expected comma-separated integers such as 0,1,2, found {seeds!r}")
        config = load_recipe(recipe, overrides or None)
        if check:
            from prmkit.pipeline.runner import stage_states
            from prmkit.pipeline.sweep import for_seed

            for one in [for_seed(config, s) for s in config.seeds] or [config]:
                states = stage_states(one)
                left = sum(state == "to run" for _, state in states)
                typer.echo(f"{one.output_dir}: {len(states)} stages, {left} to run")
                for st, state in states:
                    typer.echo(f"  {st.name:<20} reads {', '.join(st.deps) or '-'}; {state}")
            return
        from prmkit.training.pretrain import CopyCheckError

        try:
            run(config, source=str(recipe))
        except CopyCheckError as err:  # the recipe's backbone was refused: say why, no traceback
            from prmkit.cli.common import fail

            fail(str(err))
