"""The one command record: what every ``prmkit`` command is, whatever its area.

A command is a name, a typed config, ``run(config)`` (the plain function a Python user calls) and how
its result is shown. The CLI generates the command from the record alone (:mod:`prmkit.cli.config`:
one flag per config field, ``--config FILE`` of the same fields); recipes and pipeline stages name the
same record. The areas keep their own registries of records (labellers, searches, evaluations), each
free to extend the record with what only it needs (a labeller's ``produces``, ``reads``, ``needs``).

The run function may be given lazily as ``"module:attr"``, so a command whose module imports torch or
numpy costs nothing until it runs: ``prmkit --help`` builds every command from the configs alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prmkit.core.registry import resolve


@dataclass(frozen=True)
class Layout:
    """How a config's fields appear on the command line (everything not said here is the default:
    one ``--field-name`` flag per field)."""

    arguments: Sequence[str] = ()
    """Fields given positionally, in this order (they stay required on the command line)."""
    flags: Mapping[str, str | Sequence[str]] = field(default_factory=dict)
    """Dotted field -> flag declarations other than ``--field-name`` (``{"out": ["-o", "--out"]}``)."""
    flat: Sequence[str] = ()
    """Nested configs whose fields get no ``--parent-`` prefix."""
    section_files: Mapping[str, str] = field(default_factory=dict)
    """Nested config -> option naming a YAML/JSON file of its fields (``{"world": "--world-config"}``)."""
    envvars: Mapping[str, str] = field(default_factory=dict)
    """Field -> environment variable read when its flag is not given."""
    section: str | None = None
    """Read this top-level key of ``--config`` when the file has one (a recipe's ``rl:``)."""
    hidden: Sequence[str] = ()
    """Fields that are not flags (set by the command itself or from ``--config`` only)."""
    config_file: bool = True
    """Whether the command takes ``--config FILE`` (``prmkit run``'s RECIPE is such a file already)."""


Show = Callable[[Any, Any], Any]
"""``show(result, config)`` -> what is printed for a result on stdout: text, a ``rich`` renderable, or
None (nothing). The config is there for what the result does not repeat (where it was written)."""


@dataclass(frozen=True)
class Command:
    """One command: its name, its typed config, the function it runs and how its result is shown."""

    name: str
    """Its one name: the CLI command (``prmkit NAME``, or ``prmkit GROUP NAME``), the stage, the section."""
    config: type
    """Its typed config: the flags, the ``--config`` file and the ``--help`` are generated from it."""
    target: Callable[..., Any] | str
    """``run(config) -> result``, or where it lives (``"module:function"``), imported when it runs."""
    layout: Layout = field(default_factory=Layout, hash=False)
    """Which fields are positional arguments, other flag names, unprefixed nested sections."""
    help: str | None = None
    """One line for ``--help``; None: the first paragraph of the config's docstring."""
    show: Show | None = None
    """How the result is printed: ``show(result, config) -> text`` (or a ``rich`` table). None: a ``dict``
    result as YAML, else nothing (what the command writes is in its config's output fields)."""
    errors: tuple[type[BaseException] | str, ...] = ()
    """Exceptions the user's input causes (``"module:Class"`` loads lazily): shown as one line, exit 2."""

    def run(self, config: Any, **options: Any) -> Any:
        """Run the command on ``config``: the same call a Python user makes."""
        function = resolve(self.target) if isinstance(self.target, str) else self.target
        return function(config, **options)  # type: ignore[operator]

    def shown(self, result: Any, config: Any) -> Any:
        """The one printed form of a result of ``run(config)`` (see :attr:`show`)."""
        if self.show is not None:
            return self.show(result, config)
        if isinstance(result, dict):
            import yaml

            return yaml.safe_dump(result, sort_keys=False).rstrip()
        return None

    def summary(self) -> str:
        """The command's help line: :attr:`help`, else its config's first docstring paragraph."""
        return self.help if self.help is not None else summary_of(self.config)

    def user_errors(self) -> tuple[type[BaseException], ...]:
        """:attr:`errors` as classes (the lazy ones imported now, when the command runs)."""
        return tuple(resolve(e) if isinstance(e, str) else e for e in self.errors)  # type: ignore[misc]


def summary_of(config: type) -> str:
    """A config's first docstring paragraph, as its command's help line."""
    text = " ".join((config.__doc__ or "").split("\n\n")[0].split())
    return text[:1].upper() + text[1:]


def lead_summary(config: type) -> str:
    """The help of a config whose docstring opens with its command (``prmkit label mc: ...``): the
    first line after that lead."""
    summary = (config.__doc__ or "").strip().split("\n")[0].split(": ", 1)[-1]
    return summary[:1].upper() + summary[1:]


def fields_of(config: Any, cls: type) -> Any:
    """The part of ``config`` that ``cls`` (a config class it extends) holds, as a ``cls``: a command's
    config adds its paths to a library config, and the library gets the config it knows. Only fields
    set on ``config`` are passed, so defaults stay unset in ``cls``'s dump too."""
    given = config.model_fields_set & set(cls.model_fields)  # type: ignore[attr-defined]
    return cls.model_validate({name: getattr(config, name) for name in given})  # type: ignore[attr-defined]
