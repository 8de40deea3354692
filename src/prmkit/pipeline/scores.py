"""A run's store of scorer answers on disk, shared by its stages' processes.

Each model's evaluation scores the same pools with the run's ORM as its best-of-N baseline (the tuning
set's, then the claims set's). Under ``--jobs`` every stage runs in a process of its own, so an
in-process memory never hits: the first stage to need a pool's scores computes them in one call and
writes them here; the others read the very floats that call gave (JSON writes a float as its shortest
round-tripping text, so what is read back is bit-equal), never a regrouped or recomputed batch.

An entry is one file named by its key, written once to a temporary file and renamed into place, so a
reader sees a whole entry or none; two stages that race both compute the same floats and the second
rename replaces the first with the same content. A file that does not parse, names another key or holds
other than one row of floats per trace is not used: it is computed again and replaced.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write

Score = Callable[[Sequence[Any]], list[list[float]]]


def pool_key(*parts: str, traces: Sequence[Any]) -> str:
    """The key of ``traces`` scored by what ``parts`` name (a checkpoint and how it runs): a hash of the
    parts and of every trace as the scorer reads it (everything but its labels), in order."""
    digest = hashlib.sha256(json.dumps(parts).encode())
    for t in traces:
        digest.update(t.model_dump_json(exclude={"steps": {"__all__": {"labels"}}}).encode())
    return digest.hexdigest()


def _read(path: Path, key: str, count: int) -> list[list[float]] | None:
    """The rows of a whole entry for ``key`` holding ``count`` rows of floats, else None."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    rows = entry.get("rows") if isinstance(entry, dict) and entry.get("key") == key else None
    if not isinstance(rows, list) or len(rows) != count or entry.get("traces") != count:
        return None
    if not all(isinstance(row, list) and all(type(x) is float for x in row) for row in rows):
        return None
    return rows


def stored_scores(folder: Path, key: str, traces: Sequence[Any], score: Score) -> list[list[float]]:
    """``score(traces)``, read from ``folder``'s entry for ``key`` when a stage wrote it, else computed in
    one call and written there (only when every value is a float, which JSON gives back bit-equal)."""
    path = folder / f"{key}.json"
    found = _read(path, key, len(traces))
    if found is not None:
        return found
    rows = score(traces)
    if all(type(x) is float for row in rows for x in row):
        entry: dict[str, Any] = {"key": key, "traces": len(traces), "rows": [list(r) for r in rows]}
        with atomic_write(path) as fh:
            json.dump(entry, fh)
    return rows
