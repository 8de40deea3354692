"""Load a YAML (or JSON) file into a typed config, with errors that point at the file's line.

``recipe.yaml:12: labels.mc.rollouts: expected a valid integer, found 'eight'`` — every mistake at once,
before any work starts; unknown keys suggest the closest valid one. The one loader of config files:
``prmkit run`` reads recipes with it and every command's ``--config`` (``prmkit.cli.config``) too. It sits
in ``core`` so every layer may read a config file the same way.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from prmkit.core.errors import InputError, Issue, short

C = TypeVar("C", bound=BaseModel)

MAX_FILE_BYTES = 1 << 20
"""A config file is read only up to 1 MiB: a recipe is a few kilobytes, and a device or a huge file named
by mistake must be refused before it is read, not after it filled the memory."""
MAX_DEPTH = 64
"""Levels of nesting a config may have (a recipe has about six). Deeper is refused while the document is
composed, before Python's recursion limit turns it into a traceback."""
MAX_EXPANDED = 1_000_000
"""Size of the document once every alias is expanded: a node counts 1 and a scalar its characters too.
An alias is cheap to write but every reader after the YAML parser (the validation, the resolved config
written beside the output, the stage keys) walks it expanded, so a "billion laughs" of nested aliases is
refused here, while its expanded size is only counted."""
MAX_INT_CHARS = 40
"""Characters of an integer literal: a seed of 2**64 has 20 digits. Python refuses to convert more than
4,300 digits (a traceback) and spends quadratic time below that."""


class LimitError(yaml.MarkedYAMLError):
    """A config past one of the bounds above, located at the node where it went past."""

    def __init__(self, expected: str, found: str, mark: yaml.Mark | None):
        super().__init__(problem=found, problem_mark=mark)
        self.expected = expected


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with the bounds above counted as the document is composed.

    Composing shares an aliased node rather than copying it, so composing stays as cheap as the text; the
    expanded size of each node (its own, plus its children's, an alias's counted again where it is used)
    is kept beside it, so a bomb is found in time linear in the text, before any Python object is built.
    """

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._size: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            node = super().compose_node(parent, index)
            if id(node) not in self._size:  # an alias inside the collection it names: a cycle
                raise LimitError(
                    "an alias to a finished node", "an alias to a collection containing it", mark
                )
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise LimitError(f"at most {MAX_DEPTH} levels of nesting", "deeper nesting", mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if isinstance(node, yaml.ScalarNode):
            size = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            size = 1 + sum(self._size[id(item)] for item in node.value)
        else:
            size = 1 + sum(self._size[id(k)] + self._size[id(v)] for k, v in node.value)
        if size > MAX_EXPANDED:
            expected = f"at most {MAX_EXPANDED:,} nodes and characters with aliases expanded"
            raise LimitError(expected, "more (aliases that expand too far)", node.start_mark)
        self._size[id(node)] = size
        return node

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        if len(node.value) > MAX_INT_CHARS:
            expected = f"an integer of at most {MAX_INT_CHARS} characters"
            raise LimitError(expected, f"one of {len(node.value)}", node.start_mark)
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _read_config_text(path: Path) -> str:
    """The text of a config file: a regular file of at most :data:`MAX_FILE_BYTES` in UTF-8, else a
    one-line located error (a device, a pipe or a folder is refused before a byte is read)."""

    def refuse(line: int | None, expected: str, found: str) -> InputError:
        return InputError([Issue(str(path), line, "(file)", expected, found, "file")], skippable=False)

    try:  # without O_NONBLOCK, opening a FIFO waits for a writer before anything can be checked
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            found = "a directory" if stat.S_ISDIR(mode) else "a device, pipe or socket"
            raise refuse(None, "a regular file", found)
        with open(fd, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise refuse(None, "a readable file", (err.strerror or str(err)).lower()) from None
    if len(raw) > MAX_FILE_BYTES:
        raise refuse(None, f"a config of at most {MAX_FILE_BYTES:,} bytes", "a larger file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        found = f"byte {raw[err.start]:#04x} at offset {err.start}"
        raise InputError(
            [Issue(str(path), line, "(encoding)", "UTF-8 text", found, "encoding")], False
        ) from None


def _parse(path: Path, text: str) -> tuple[yaml.Node | None, Any]:
    """The composed document (for line numbers) and its Python value, within the bounds above; a YAML
    mistake or a bound passed is a one-line located error."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        expected = getattr(err, "expected", "valid YAML")
        issue = Issue(str(path), line, "(yaml)", expected, str(getattr(err, "problem", err)), "yaml")
        raise InputError([issue], skippable=False) from None
    finally:
        loader.dispose()


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
    node, data = _parse(path, _read_config_text(path))
    data = data or {}
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
            field = ".".join(str(p) for p in (*prefix, *loc)) or "(recipe)"  # a check of the whole file
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
