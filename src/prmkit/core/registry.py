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

Two more ways a name gets in. An *alias* keeps a renamed backend's old name readable (old recipes and
cards still load; ``names()`` lists only the new one). A registry may *derive* entries from another: the
policies, judges and oracle scorers of the embedded worlds follow from the one ``WORLDS`` record of each
world (:mod:`prmkit.worlds.registry`), so registering a world registers all of them.
"""

from __future__ import annotations

import difflib
import importlib
import threading
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
        self._aliases: dict[str, str] = {}
        self._sources: list[tuple[Registry, Callable[[str], str], Callable[[str], T]]] = []
        self._derived: set[str] = set()
        self._scanned = self._ready = False
        self._lock = threading.RLock()

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

    def alias(self, old: str, new: str) -> None:
        """Read ``old`` as ``new`` from now on (a renamed backend); ``names()`` does not list it."""
        if old in self._targets or old in self._aliases:
            raise DuplicateNameError(f"{self.kind} {old!r} cannot become an alias: it is already a name")
        self._aliases[old] = new

    def derive(self, source: Registry, name: Callable[[str], str], make: Callable[[str], T]) -> None:
        """Hold ``make(n)`` under ``name(n)`` for every name ``n`` of ``source`` (its plugins and aliases
        included), read when this registry is first looked up."""
        self._sources.append((source, name, make))
        self._scanned = self._ready = False

    def aliases(self) -> dict[str, str]:
        """Old name -> the name it is read as."""
        self._scan()
        return dict(self._aliases)

    def canonical(self, name: str) -> str:
        """The name ``name`` is read as: itself, or the new name of an alias."""
        self._scan()
        return self._aliases.get(name, name)

    def _scan(self) -> None:
        """Add the entry points of ``self.group`` and the derived entries once, lazily (a plugin's module
        loads only when used)."""
        if self._ready:
            return
        # threads that look a registry up first at the same moment (a trainer's reward workers) wait for
        # one scan; a lookup made during the scan by the scanning thread itself sees what is in so far
        with self._lock:
            if self._scanned:
                return
            self._scanned = True
            try:
                self._scan_entries()
            finally:
                self._ready = True

    def _scan_entries(self) -> None:
        for ep in entry_points(group=self.group) if self.group else ():
            dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "an unnamed distribution"
            self._add(
                ep.name, ep.value, f"entry point {ep.name} = {ep.value!r} of {dist} (group {self.group})"
            )
            self._plugins.add(ep.name)
        for source, name, make in self._sources:
            for n in source.names():
                self._add(name(n), make(n), f"the {source.kind} {n!r}")
                self._derived.add(name(n))
            for old, new in source._aliases.items():
                self._aliases.setdefault(name(old), name(new))

    def refresh(self) -> None:
        """Read the entry points again: a plugin installed (or removed) after the first lookup counts."""
        for name in self._plugins | self._derived:
            del self._targets[name], self._origins[name]
        self._plugins.clear()
        self._derived.clear()
        for source, _, _ in self._sources:
            source.refresh()
        self._scanned = self._ready = False
        self._scan()

    def get(self, name: str) -> T:
        self._scan()
        name = self._aliases.get(name, name)
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
        return name in self._targets or name in self._aliases


def suggest(name: str, known: object, prefix: str = " ") -> str:
    """``" Did you mean 'a' or 'b'?"`` for the names in ``known`` closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)  # type: ignore[call-overload]
    return f"{prefix}Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
