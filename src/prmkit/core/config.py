"""``Config``: the one base of prmkit's typed configs (a command's options, a recipe's sections).

Two settings every config shares, kept in one place instead of retyped in every package:

- ``extra="forbid"``: recipes are strict. An unknown key is an error (``core.yamlconf`` names its file
  line and the closest valid key), never silently ignored: a misspelt ``rollout: 16`` would otherwise
  run the default and report it as the setting asked for.
- ``use_attribute_docstrings=True``: the docstring under each field is its ``description``, which
  ``prmkit.cli.config`` turns into that flag's ``--help``. A parameter is documented once, beside it.

A model that must differ (frozen value objects, data records that keep unknown keys, wire schemas) keeps
its own ``model_config`` on ``pydantic.BaseModel``. This module imports nothing from prmkit.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Config(BaseModel):
    """Base of prmkit's typed configs: unknown keys are refused, field docstrings are the fields' help."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
