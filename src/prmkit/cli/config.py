"""The one record-to-command builder: a typer command made from a command record
(:class:`prmkit.core.commands.Command`), its flags the fields of the record's typed config.

Every command with a typed config is made here by :func:`add_command` (label, train/pretrain, serve,
bon/vote/beam/resample, eval, audit, card, world, serve-policy, gate, rl, run), so flags, ``--help`` and
errors read the same everywhere:

- one flag per field, ``--field-name``, the field's docstring as its help with the config's default;
  a nested config's fields as ``--parent-field`` (``--tiny-layers``), or unprefixed for the sections named
  ``flat`` (``prmkit arithmetic sample --temperature``); ``bool`` as ``--x/--no-x``, ``Literal`` as a choice,
  ``list`` as a repeated flag, ``Path`` as a path. Fields of other types are read from ``--config`` only.
- ``--config FILE``: a YAML (or JSON) file of the same fields, read first with the one loader that reports
  ``file:line: field: expected ..., found ...`` (:func:`prmkit.core.yamlconf.load_yaml_config`); flags given
  on the command line override it. ``section_files`` add options naming a file of one nested section
  (``--world-config``), laid between the two.
- Defaults are the config's: a flag not given is not passed, so nothing is retyped here.

The command then calls the record's ``run(config)``, the same plain function a Python user calls, and
prints its result the record's one way (:meth:`~prmkit.core.commands.Command.shown`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from prmkit.cli.common import fail, print_error
from prmkit.core.commands import Command, Layout

__all__ = ["Command", "Layout", "add_command", "config_flags", "resolve_config"]

_SIMPLE = (str, int, float, bool, Path)


@dataclass(frozen=True)
class Flag:
    """One command-line flag of a config field: its dotted field name and how typer reads it."""

    dotted: str
    decls: list[str]
    kind: Any
    choices: tuple[str, ...] | None
    help: str


def flag_type(annotation: Any) -> tuple[Any, tuple[str, ...] | None]:
    """(the type typer parses a field as, its choices) — or (None, None) for a field no flag can carry."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (types.UnionType, typing.Union):
        return flag_type(args[0]) if len(args) == 1 else (str, None) if str in args else (None, None)
    if origin is typing.Literal:
        if all(isinstance(a, str) for a in args):
            return str, tuple(args)
        return (type(args[0]), None) if len({type(a) for a in args}) == 1 else (None, None)
    if origin in (list, tuple, Sequence):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return None, None  # a fixed-length tuple: from --config only
        inner, _ = flag_type(args[0]) if args else (str, None)
        return (list[inner], None) if inner in _SIMPLE and inner is not bool else (None, None)
    return (annotation, None) if annotation in _SIMPLE else (None, None)


def nested_config(annotation: Any) -> type | None:
    from pydantic import BaseModel

    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (types.UnionType, typing.Union) and len(args) == 1:
        annotation = args[0]
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _default(info: Any) -> Any:
    return info.default_factory() if info.default_factory is not None else info.default


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        return repr(list(value))
    return repr(value)


def config_flags(config_cls: type, layout: Layout | None = None) -> list[Flag]:
    """The flags of ``config_cls`` (nested configs flattened) laid out by ``layout``."""
    layout = layout or Layout()
    out: list[Flag] = []

    def walk(cls: type, prefix: str, flag_prefix: str) -> None:
        for name, info in cls.model_fields.items():
            dotted = prefix + name
            if dotted in layout.hidden or dotted in layout.arguments:
                continue
            sub = nested_config(info.annotation)
            if sub is not None:
                walk(sub, dotted + ".", "" if dotted in layout.flat else f"{flag_prefix}{name}-")
                continue
            kind, choices = flag_type(info.annotation)
            if kind is None:
                continue
            flag = "--" + (flag_prefix + name).replace("_", "-")
            decls = layout.flags.get(dotted, [flag])
            decls = [decls] if isinstance(decls, str) else list(decls)
            if kind is bool:
                longest = max((d for d in decls if d.startswith("--")), key=len)
                decls = [f"{longest}/--no-{longest[2:]}", *[d for d in decls if d != longest]]
            shown = " (required)" if info.is_required() else f" (default: {_shown(_default(info))})"
            text = info.description or attribute_docs(cls).get(name, "")
            out.append(Flag(dotted, decls, kind, choices, " ".join(text.split()) + shown))

    walk(config_cls, "", "")
    return out


@functools.cache
def attribute_docs(cls: type) -> dict[str, str]:
    """Field name -> the docstring under it, for configs that do not set ``use_attribute_docstrings``
    (their ``description`` is empty, but the docstring is still where the field is documented)."""
    import ast
    import textwrap

    docs: dict[str, str] = {}
    from pydantic import BaseModel

    for klass in reversed(cls.__mro__):
        if not (issubclass(klass, BaseModel) and klass is not BaseModel):
            continue  # only the config classes themselves (pydantic's own source is large and slow to read)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, after in itertools.pairwise(body):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _argument(config_cls: type, name: str) -> inspect.Parameter:
    info = config_cls.model_fields[name]
    kind, _ = flag_type(info.annotation)
    text = info.description or attribute_docs(config_cls).get(name, "")
    required = info.is_required()  # an optional one (``prmkit annotate serve [DATA]``) may be left out
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=kind if required else typing.Optional[kind],  # noqa: UP045 - typer reads it
        default=typer.Argument(... if required else None, help=" ".join(text.split()), show_default=False),
    )


def _option(arg: str, flag: Flag, envvar: str | None) -> inspect.Parameter:
    kind = typing.Literal[flag.choices] if flag.choices else flag.kind  # typer shows a Literal's choices
    return inspect.Parameter(
        arg,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=typing.Optional[kind],  # noqa: UP045 - typer reads it
        default=typer.Option(None, *flag.decls, help=flag.help, show_default=False, envvar=envvar),
    )


def set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """Put ``value`` at ``a.b.c`` in a nested dict (a flag of a nested config)."""
    *parents, leaf = dotted.split(".")
    for p in parents:
        tree = tree.setdefault(p, {})
    tree[leaf] = value


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The inverse: a nested dict's leaves as dotted keys (a section file's values as overrides)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            out |= _flatten(value, f"{prefix}{key}.")
        else:
            out[prefix + key] = value
    return out


def resolve_config(
    config_cls: type,
    given: Mapping[str, Any],
    recipe: Path | None = None,
    section_files: Mapping[str, Path] | None = None,
    *,
    flag_of: Mapping[str, str] | None = None,
    section: str | None = None,
) -> Any:
    """The config from ``recipe`` (file:line errors), then each section file, then the flags ``given``
    (dotted field -> value); a flag's mistake is reported under its flag name."""
    from pydantic import ValidationError

    from prmkit.core.yamlconf import load_yaml_config

    overrides: dict[str, Any] = {}
    for dotted, path in (section_files or {}).items():  # each file checked against its own section
        sub_cls = nested_config(config_cls.model_fields[dotted].annotation)
        sub = load_yaml_config(path, sub_cls)  # type: ignore[arg-type]
        overrides |= {f"{dotted}.{k}": v for k, v in _flatten(sub.model_dump(exclude_unset=True)).items()}
    overrides |= dict(given)
    if recipe is not None:
        return load_yaml_config(recipe, config_cls, overrides=overrides, section=section)
    tree: dict[str, Any] = {}
    for dotted, value in overrides.items():
        set_dotted(tree, dotted, value)
    try:
        return config_cls(**tree)
    except ValidationError as err:  # one line per mistake, named by its flag (as the root group does)
        flag_of = flag_of or {}
        for e in err.errors(include_url=False):
            dotted = ".".join(map(str, e["loc"]))
            where = flag_of.get(dotted) or dotted or "options"  # a section's own check: its name
            found = (
                "" if e["type"] == "missing" or isinstance(e["input"], dict) else f", found {e['input']!r}"
            )
            print_error(f"{where}: {e['msg']}{found}")
        raise typer.Exit(2) from None


def add_command(
    group: typer.Typer,
    record: Command,
    *,
    run: Callable[[Any], Any] | None = None,
) -> None:
    """Add ``record`` to ``group`` as command ``record.name``: flags from its config's fields laid out by
    its :class:`Layout` (see the module docstring), then ``record.run(config)`` (or ``run(config)``, the
    record's run behind an area's own checks), its :attr:`~Command.errors` one line each, and its result
    printed the record's one way (:meth:`Command.shown`) on stdout."""
    layout = record.layout
    params = [_argument(record.config, a) for a in layout.arguments]
    params += [_recipe_option()] if layout.config_file else []
    params += [_section_option(record.config, s, option) for s, option in layout.section_files.items()]
    arg_of: dict[str, str] = {}
    flag_of = {a: a.upper() for a in layout.arguments}
    for flag in config_flags(record.config, layout):
        arg = flag.dotted.replace(".", "__")
        arg_of[arg] = flag.dotted
        flag_of[flag.dotted] = max(flag.decls, key=len).split("/")[0]
        params.append(_option(arg, flag, layout.envvars.get(flag.dotted)))

    def command(**kwargs: Any) -> None:
        recipe = kwargs.pop("config", None)
        files = {s: kwargs.pop(f"_file_{s}") for s in layout.section_files}
        given = {a: v for a in layout.arguments if (v := kwargs.pop(a)) is not None}
        given |= {arg_of[a]: v for a, v in kwargs.items() if v is not None}
        files = {s: p for s, p in files.items() if p is not None}
        cfg = resolve_config(record.config, given, recipe, files, flag_of=flag_of, section=layout.section)
        try:
            result = (run or record.run)(cfg)
        except record.user_errors() as err:
            fail(str(err))
        _print(record.shown(result, cfg))

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = record.summary()
    command.record = record  # type: ignore[attr-defined]  # the record it was made from (tests walk them)
    group.command(record.name)(command)


def _recipe_option() -> inspect.Parameter:
    return inspect.Parameter(
        "config",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=typing.Optional[Path],  # noqa: UP045 - typer reads it
        default=typer.Option(
            None, "--config", help="A YAML file of these options (errors name its line); flags override it."
        ),
    )


def _section_option(config_cls: type, section: str, option: str) -> inspect.Parameter:
    sub = nested_config(config_cls.model_fields[section].annotation)
    return inspect.Parameter(
        f"_file_{section}",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=typing.Optional[Path],  # noqa: UP045
        default=typer.Option(
            None, option, help=f"YAML/JSON with {getattr(sub, '__name__', section)} fields."
        ),
    )


def _print(shown: Any) -> None:
    """A result's printed form on stdout, once when launched on several processes; a line is never
    wrapped (a path is never split)."""
    from prmkit.core.ranks import is_main_process

    if shown is None or not is_main_process():
        return
    if isinstance(shown, str):
        typer.echo(shown)  # as it is: no markup, no emoji codes
        return
    from rich.console import Console

    Console(soft_wrap=True).print(shown)
