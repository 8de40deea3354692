"""Registries where backends plug in: formats, policies, judges, labellers, aggregators, conventions.

Targets may be given lazily as ``"module:attr"`` strings so heavy imports (torch, transformers) load only
when that backend is used. An unknown name answers with the closest known ones.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """A registry was asked for a name it does not hold; the message suggests the closest ones."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class Registry(Generic[T]):
    """A named set of backends of one kind (e.g. ``"policy"``)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._targets: dict[str, T | str] = {}

    def register(self, name: str, target: T | str | None = None) -> Callable[[T], T] | None:
        """Register ``target`` under ``name``; without a target, act as a decorator."""
        if target is not None:
            self._targets[name] = target
            return None

        def decorator(obj: T) -> T:
            self._targets[name] = obj
            return obj

        return decorator

    def get(self, name: str) -> T:
        if name not in self._targets:
            close = difflib.get_close_matches(name, self._targets, n=3, cutoff=0.5)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}.{hint} Known: {', '.join(sorted(self._targets))}."
            )
        target = self._targets[name]
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(importlib.import_module(module), attr)
            self._targets[name] = target
        return target  # type: ignore[return-value]

    def names(self) -> list[str]:
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets
