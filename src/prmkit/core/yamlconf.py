"""Load a YAML (or JSON) file into a typed config, with errors that point at the file's line.

``recipe.yaml:12: labels.mc.rollouts: expected a valid integer, found 'eight'`` — every mistake at once,
before any work starts; unknown keys suggest the closest valid one. The one loader of config files:
``prmkit run`` reads recipes with it and every command's ``--config`` (``prmkit.cli.config``) too. It sits
in ``core`` so every layer may read a config file the same way.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from prmkit.core.errors import InputError, Issue, short

C = TypeVar("C", bound=BaseModel)


def validate_at(config: type[C], value: Any, *where: str) -> C:
    """``value`` read as ``config`` (e.g. a world's own config class, chosen at run time), its errors
    located at ``where`` in the enclosing config (``problems.policy.misconceptons``), as a field's own
    errors are, so the loader can name the file's line."""
    if isinstance(value, config):
        return value
    try:
        return config.model_validate(value or {})
    except ValidationError as err:
        errors = [{**e, "loc": (*where, *e["loc"])} for e in err.errors(include_url=False)]
        raise ValidationError.from_exception_data(config.__name__, errors) from None  # type: ignore[arg-type]


def _line_map(node: yaml.Node, path: tuple = (), out: dict | None = None) -> dict[tuple, int]:
    """Map each key path in a YAML document to its 1-based line number."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = (*path, key.value)
            out[sub] = key.start_mark.line + 1
            _line_map(value, sub, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, (*path, i), out)
    return out


def _fields_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The field names valid at the parent of ``loc`` (for "did you mean" on unknown keys)."""
    current: Any = model
    for part in loc[:-1]:
        if (
            not (isinstance(current, type) and issubclass(current, BaseModel))
            or part not in current.model_fields
        ):
            return []
        current = current.model_fields[part].annotation
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def load_yaml_config(
    path: str | Path, model: type[C], overrides: dict[str, Any] | None = None, section: str | None = None
) -> C:
    """Read ``path`` as ``model``; ``overrides`` (dotted keys) win over the file, like CLI flags.

    ``section``: read only that top-level key of the file when it has one (a recipe's ``rl:`` section for
    ``prmkit rl --config recipe.yaml``); a file without it is read whole. Lines still point into the file.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(
            [Issue(str(path), None, "(file)", "a recipe file", "no such file", "missing")], skippable=False
        )
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        issue = Issue(str(path), line, "(yaml)", "valid YAML", str(getattr(err, "problem", err)), "yaml")
        raise InputError([issue], skippable=False) from None
    if not isinstance(data, dict):
        raise InputError(
            [Issue(str(path), 1, "(recipe)", "a mapping of settings", short(data), "type")], skippable=False
        )
    lines = _line_map(node) if node is not None else {}
    prefix: tuple = ()
    if section is not None and isinstance(data.get(section), dict):
        data, prefix = data[section], (section,)
        lines = {key[1:]: line for key, line in lines.items() if key[:1] == (section,)}
    for dotted, value in (overrides or {}).items():
        target = data
        *parents, last = dotted.split(".")
        for p in parents:
            if not isinstance(target.get(p), dict):  # absent, or an empty ``key:`` in the file
                target[p] = {}
            target = target[p]
        target[last] = value
    try:
        return model.model_validate(data)
    except ValidationError as err:
        issues = []
        for e in err.errors():
            loc = tuple(e["loc"])
            field = ".".join(str(p) for p in (*prefix, *loc))
            line = next((lines[loc[:i]] for i in range(len(loc), -1, -1) if loc[:i] in lines), None)
            if e["type"] == "extra_forbidden":
                close = difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc), n=1)
                expected = "a known setting" + (f" (did you mean {close[0]!r}?)" if close else "")
                issues.append(Issue(str(path), line, field, expected, "an unknown key", "unknown"))
            elif e["type"] == "missing":
                issues.append(Issue(str(path), line, field, "this setting", "nothing", "missing"))
            else:
                issues.append(Issue(str(path), line, field, e["msg"].lower(), short(e.get("input")), "type"))
        raise InputError(issues, skippable=False) from None
