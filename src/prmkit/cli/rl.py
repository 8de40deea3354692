"""CLI command ``prmkit rl``: GRPO on a policy against an outcome check, a PRM or gold (prmkit.rl.train).

Flags come from :class:`prmkit.rl.config.RlConfig` (one per field, nested ones as ``--prompts-n``, the
field's docstring as its help) with the helpers ``prmkit train`` uses; ``--config RECIPE.yaml`` is read
first (its ``rl`` section when it has one, e.g. ``recipes/rl.yaml``) and flags override it.
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import fail
from prmkit.cli.models import _fields, _plain, _set


def _params(config_cls: type) -> tuple[list[inspect.Parameter], dict[str, str]]:
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("output", kw, annotation=Path, default=typer.Option(..., "-o", "--output", help="Output folder.")),
        inspect.Parameter("config", kw, annotation=typing.Optional[Path],  # noqa: UP045 - typer reads it
                          default=typer.Option(None, "--config", help="A YAML recipe (its `rl` section); flags override it.")),
    ]  # fmt: skip
    names = {}
    for dotted, field in _fields(config_cls):
        arg = dotted.replace(".", "__")
        names[arg] = dotted
        flag = "--" + dotted.replace(".", "-").replace("_", "-")
        kind = _plain(field.annotation)
        decls = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag]
        default = "required" if field.is_required() else repr(field.default)
        help_ = f"{field.description or ''} (default: {default})"
        params.append(inspect.Parameter(arg, kw, annotation=typing.Optional[kind],  # noqa: UP045
                                        default=typer.Option(None, *decls, help=help_, show_default=False)))  # fmt: skip
    return params, names


def register(app: typer.Typer) -> None:
    from prmkit.rl.config import RlConfig

    params, names = _params(RlConfig)

    def rl(**kwargs: Any) -> None:
        import yaml
        from pydantic import ValidationError

        output, recipe = kwargs.pop("output"), kwargs.pop("config")
        tree: dict[str, Any] = {}
        if recipe:
            loaded = yaml.safe_load(Path(recipe).read_text(encoding="utf-8")) or {}
            tree = dict(loaded.get("rl", loaded)) if isinstance(loaded, dict) else {}
        for arg, value in kwargs.items():
            if value is not None:
                _set(tree, names[arg], value)
        try:
            config = RlConfig(**tree)
        except ValidationError as err:
            where = f"{recipe}: " if recipe else ""
            lines = [f"--{'-'.join(map(str, e['loc'])).replace('_', '-')}: {e['msg']}" for e in err.errors()]
            fail(f"{where}rl: invalid options\n  " + "\n  ".join(lines))
        from prmkit.rl.train import train_policy

        result = train_policy(config, output)
        typer.echo(yaml.safe_dump(result, sort_keys=False).rstrip())

    rl.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    rl.__annotations__ = {p.name: p.annotation for p in params}
    rl.__doc__ = " ".join((RlConfig.__doc__ or "").split())
    app.command("rl")(rl)
