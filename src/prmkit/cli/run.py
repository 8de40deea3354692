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
        check: bool = typer.Option(
            False, "--check", help="Validate the recipe and list its stages, run nothing."
        ),
    ) -> None:
        """Run problems -> traces -> labels -> PRMs/ORM -> evaluation -> audits -> cards -> report."""
        from prmkit.pipeline import load_recipe, run
        from prmkit.pipeline.stages import plan

        overrides: dict[str, object] = {"output_dir": str(output_dir)} if output_dir else {}
        if seeds is not None:
            from prmkit.cli.common import fail

            try:
                overrides["seeds"] = [int(s) for s in seeds.split(",") if s.strip()]
            except ValueError:
                fail(f"--seeds: expected comma-separated integers such as 0,1,2, found {seeds!r}")
        config = load_recipe(recipe, overrides or None)
        if check:
            if config.seeds:
                typer.echo(f"once per seed {config.seeds}, into {config.output_dir}/seed-<s>:")
            for st in plan(config):
                typer.echo(f"{st.name:<20} reads {', '.join(st.deps) or '-'}")
            return
        from prmkit.training.pretrain import CopyCheckError

        try:
            run(config, source=str(recipe))
        except CopyCheckError as err:  # the recipe's backbone was refused: say why, no traceback
            from prmkit.cli.common import fail

            fail(str(err))
