"""CLI commands of the label area: ``prmkit label mc | search | judge | consensus | report``.

Each command is generated from its typed config (``prmkit.labeling.*Config``): one flag per field, the
field's docstring as its help, ``--config RECIPE.yaml`` read first and flags overriding it. The command
then calls the same public function a Python user calls (``run_mc(MCConfig(...))``...).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import fail

_SIMPLE = (str, int, float, bool, Path)


def _cli_type(annotation: Any) -> Any:
    """The type typer should parse a config field as (Literal and unions become their plain type)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union) and len(args) == 1:
        return _cli_type(args[0])
    if origin is typing.Literal:
        return str
    if origin is list:
        return list[_cli_type(args[0])] if args else list[str]
    return annotation if annotation in _SIMPLE else str


def config_command(group: typer.Typer, name: str, config_cls: type, run: Callable[[Any], Any]) -> None:
    """Add command ``name`` to ``group``: flags from ``config_cls``'s fields, then ``run(config)``."""
    from pydantic import ValidationError

    params = [
        inspect.Parameter(
            "config",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=typing.Optional[Path],  # noqa: UP045 - typer reads it
            default=typer.Option(
                None, "--config", help="A YAML recipe with these options; flags override it."
            ),
        )
    ]
    for fname, field in config_cls.model_fields.items():
        flag = "--" + fname.replace("_", "-")
        kind = _cli_type(field.annotation)
        decls = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag]
        required = field.is_required()
        value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
        default = "" if required else f" (default: {value!r})"
        help_ = (field.description or "") + (" (required)" if required else default)
        params.append(
            inspect.Parameter(
                fname,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=typing.Optional[kind],  # noqa: UP045
                default=typer.Option(None, *decls, help=help_, show_default=False),
            )
        )

    def command(**kwargs: Any) -> None:
        import yaml

        recipe_path = kwargs.pop("config")
        given = {k: v for k, v in kwargs.items() if v is not None}
        if recipe_path:  # located errors (recipe.yaml:3: rollouts: expected ...), flags overriding the file
            from prmkit.pipeline.yamlconf import load_yaml_config

            cfg = load_yaml_config(recipe_path, config_cls, overrides=given)
        else:
            try:
                cfg = config_cls(**given)
            except ValidationError as err:
                lines = [
                    f"--{'.'.join(map(str, e['loc'])).replace('_', '-')}: {e['msg']}" for e in err.errors()
                ]
                fail(f"{name}: invalid options\n  " + "\n  ".join(lines))
        check_outputs(cfg)
        result = run(cfg)
        if isinstance(result, dict):
            typer.echo(yaml.safe_dump(result, sort_keys=False).rstrip())

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    summary = (config_cls.__doc__ or "").strip().split("\n")[0].split(": ", 1)[-1]
    command.__doc__ = summary[:1].upper() + summary[1:]
    group.command(name)(command)


OUTPUT_FIELDS = ("output", "keep_rollouts")
"""Config fields naming files a command writes when it finishes."""


def check_outputs(cfg: Any) -> None:
    """Refuse an output path that cannot be written (a folder, read-only...) before the work, not after
    hours of rollouts; the input must be a file too."""
    from prmkit.core.files import check_input_file, check_output_path

    if isinstance(getattr(cfg, "input", None), Path):
        check_input_file(cfg.input)
    for field in OUTPUT_FIELDS:
        path = getattr(cfg, field, None)
        if isinstance(path, Path):
            check_output_path(path)


def _guarded(run: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``run`` with the labelling errors a user can cause (a changed job, a dead endpoint, a judge for
    world problems on other traces) as one line each."""

    def guarded(cfg: Any) -> Any:
        from prmkit.labeling.jobs import JobMismatchError
        from prmkit.policies.http import EndpointError
        from prmkit.world.judge import NotAWorldProblemError

        try:
            return run(cfg)
        except (JobMismatchError, EndpointError, NotAWorldProblemError) as err:
            fail(str(err))

    return guarded


def register(app: typer.Typer) -> None:
    """Add ``prmkit label NAME`` for every registered labeller (plugins too), and ``label report``."""
    from prmkit.labeling.labellers import LABELLERS, labeller
    from prmkit.labeling.report import ReportConfig, run_report

    group = typer.Typer(
        help="Automated step labels: one command per labeller (" + ", ".join(LABELLERS.names()) + "), and report.",
        no_args_is_help=True,
    )
    for name in LABELLERS.names():
        method = labeller(name)
        config_command(group, name, method.config, _guarded(method.run))
    config_command(group, "report", ReportConfig, _guarded(run_report))
    app.add_typer(group, name="label")
