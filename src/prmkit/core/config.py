"""``Config``: the one base of prmkit's typed configs (a command's options, a recipe's sections).

Three settings every config shares, kept in one place instead of retyped in every package:

- ``extra="forbid"``: recipes are strict. An unknown key is an error (``core.yamlconf`` names its file
  line and the closest valid key), never silently ignored: a misspelt ``rollout: 16`` would otherwise
  run the default and report it as the setting asked for.
- ``use_attribute_docstrings=True``: the docstring under each field is its ``description``, which
  ``prmkit.cli.config`` turns into that flag's ``--help``. A parameter is documented once, beside it.
- ``QUIET``: fields added after recipes' stage keys were recorded, left out of a dump while at their
  default, so a run that leaves them alone keeps every stage key (and its cached stages) as before.

A model that must differ (frozen value objects, data records that keep unknown keys, wire schemas) keeps
its own ``model_config`` on ``pydantic.BaseModel``. This module imports nothing from prmkit.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

MAX_SEED = 2**31 - 1
"""Every seed of a config is from 0 to 2**31 - 1: numpy and torch refuse larger or negative ones, and
they would say so only when the code that seeds them runs, maybe hours in."""
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
"""A seed, bounded when the config is read (:data:`MAX_SEED`)."""
MAX_STEPS = 10_000_000
"""Most optimiser steps (and step intervals) a config may ask for: a bound on the work that follows, far
past any real run, checked before any of it starts (a recipe's ``--check`` says it)."""
MAX_BATCH = 65_536
"""Most items per batch, group or accumulation a config may ask for."""
MAX_TOKENS = 1 << 20
"""Most tokens of one input or completion a config may ask for."""
MAX_THREADS = 1024
"""Most CPU threads a config may ask for."""


class Config(BaseModel):
    """Base of prmkit's typed configs: unknown keys are refused, field docstrings are the fields' help."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    QUIET: ClassVar[tuple[str, ...]] = ()
    """Fields added after recipes' stage keys were recorded: left out of a dump while at their default."""

    @model_serializer(mode="wrap")
    def _quiet_defaults(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for name in self.QUIET:
            if isinstance(data, dict) and getattr(self, name) == type(self).model_fields[name].default:
                data.pop(name, None)
        return data
