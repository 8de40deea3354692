"""What every world's two configs share: the generator's per-split ranges and the policy's error rates.

A world documents its own knobs (each field once, in its own config); these bases hold only the rules
its knobs follow, and declare no fields, so a world's fields keep their order in files and ``--help``:

- :class:`GeneratorConfig`: a length knob ``X`` of train / test problems has a twin ``heldout_X`` for
  held-out problems; each ``(fewest, most)`` pair of :attr:`GeneratorConfig.ORDERED` must be in order
  in both splits' knobs.
- :class:`SimulatedPolicyConfig`: the simulated policy draws one event per decision among its
  :attr:`~SimulatedPolicyConfig.EVENTS`, each at its field's rate times ``temperature``, scaled down
  together if they would sum past 1; a knob added later and listed in :attr:`~SimulatedPolicyConfig.QUIET`
  is left out of a dump at its default.
"""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import model_validator

from prmkit.core.config import Config


class GeneratorConfig(Config):
    """Base of a world's generator knobs (no fields of its own)."""

    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = ()
    """``(fewest, most)`` field pairs that must be in order, for train / test and (``heldout_``) held-out."""

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        for fewest, most in self.ORDERED:
            for lo, hi in ((fewest, most), (f"heldout_{fewest}", f"heldout_{most}")):
                if getattr(self, lo) > getattr(self, hi):
                    raise ValueError(f"{lo} ({getattr(self, lo)}) must be <= {hi} ({getattr(self, hi)})")
        return self

    def for_split(self, split: str, *names: str) -> tuple[int, ...]:
        """The knobs ``names`` of a problem in ``split`` (their ``heldout_`` twins for held-out problems)."""
        prefix = "heldout_" if split == "heldout" else ""
        return tuple(getattr(self, prefix + name) for name in names)


class SimulatedPolicyConfig(Config):
    """Base of a world's simulated-policy knobs (no fields of its own; a subclass has ``temperature``)."""

    EVENTS: ClassVar[tuple[str, ...]] = ()
    """The per-decision events, each a field holding its rate, in the order they are drawn."""

    def rates(self) -> dict[str, float]:
        """The per-decision error rates after ``temperature``, scaled down together if they exceed 1."""
        out = {k: getattr(self, k) * self.temperature for k in self.EVENTS}  # type: ignore[attr-defined]
        total = sum(out.values())
        if total > 1.0:
            out = {k: v / total for k, v in out.items()}
        return out
