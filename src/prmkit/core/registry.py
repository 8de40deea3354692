"""Registries where backends plug in: formats, policies, judges, labellers, aggregators, conventions,
scorer forms.

Targets may be given lazily as ``"module:attr"`` strings so heavy imports (torch, transformers) load only
when that backend is used. An unknown name answers with the closest known ones; a name registered twice
is refused, because which of two backends a name means would otherwise depend on import order.

Third-party packages add backends without touching prmkit: a registry built with ``entry_points=GROUP``
also holds every entry point of that group (``name = "module:attr"``), read on its first lookup and
imported only when used. In a plugin's ``pyproject.toml``::

    [project.entry-points."prmkit.scorers"]
    my-scorer = "my_package.scorer:FORM"

(the groups are named where each registry is made: ``prmkit.scorers``, ``prmkit.conventions``,
``prmkit.aggregations`` ...).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """A registry refused a lookup or a registration; the message says what to do."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class UnknownNameError(RegistryError):
    """A registry was asked for a name it does not hold; the message suggests the closest ones."""


class DuplicateNameError(RegistryError):
    """A name was registered twice (in prmkit, or by a plugin's entry point); the message names both."""


class PluginError(RegistryError):
    """A plugin's entry point names a module or attribute that cannot be imported."""


def resolve(target: str) -> object:
    """The object a lazy ``"module:attr"`` (or ``"module:attr.sub"``, or ``"module"``) target names."""
    module, _, attr = target.partition(":")
    obj: object = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """A named set of backends of one kind (e.g. ``"policy"``); ``entry_points`` names the entry-point
    group third-party plugins register into (None: built-ins only)."""

    def __init__(self, kind: str, entry_points: str | None = None):
        self.kind = kind
        self.group = entry_points
        self._targets: dict[str, T | str] = {}
        self._origins: dict[str, str] = {}
        self._plugins: set[str] = set()
        self._scanned = entry_points is None

    def register(self, name: str, target: T | str | None = None) -> Callable[[T], T] | None:
        """Register ``target`` under ``name``; without a target, act as a decorator. A name already
        taken raises :class:`DuplicateNameError`."""
        if target is not None:
            self._add(name, target, "prmkit")
            return None

        def decorator(obj: T) -> T:
            self._add(name, obj, "prmkit")
            return obj

        return decorator

    def _add(self, name: str, target: T | str, origin: str) -> None:
        if name in self._targets:
            raise DuplicateNameError(
                f"{self.kind} {name!r} is registered twice: by {self._origins[name]} and by {origin}; "
                "rename one of them"
            )
        self._targets[name] = target
        self._origins[name] = origin

    def _scan(self) -> None:
        """Add the entry points of ``self.group`` once, lazily (a plugin's module loads only when used)."""
        if self._scanned:
            return
        self._scanned = True
        for ep in entry_points(group=self.group):
            dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "an unnamed distribution"
            self._add(
                ep.name, ep.value, f"entry point {ep.name} = {ep.value!r} of {dist} (group {self.group})"
            )
            self._plugins.add(ep.name)

    def refresh(self) -> None:
        """Read the entry points again: a plugin installed (or removed) after the first lookup counts."""
        for name in self._plugins:
            del self._targets[name], self._origins[name]
        self._plugins.clear()
        self._scanned = self.group is None
        self._scan()

    def get(self, name: str) -> T:
        self._scan()
        if name not in self._targets:
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}.{suggest(name, self._targets)} Known: {', '.join(sorted(self._targets))}."
            )
        target = self._targets[name]
        if isinstance(target, str):
            try:
                target = resolve(target)  # type: ignore[assignment]
            except (ImportError, AttributeError) as err:
                if name not in self._plugins:
                    raise  # a built-in target that does not import is prmkit's bug: keep the traceback
                raise PluginError(
                    f"{self.kind} {name!r} ({self._origins[name]}) cannot be loaded: {err}"
                ) from None
            self._targets[name] = target
        return target  # type: ignore[return-value]

    def names(self) -> list[str]:
        self._scan()
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        self._scan()
        return name in self._targets


def suggest(name: str, known: object, prefix: str = " ") -> str:
    """``" Did you mean 'a' or 'b'?"`` for the names in ``known`` closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)  # type: ignore[call-overload]
    return f"{prefix}Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
