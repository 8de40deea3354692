"""Stage outputs cached by a hash of their inputs and settings, so reruns skip finished work.

A stage's folder is ``<out>/stages/<name>-<key>``; its ``DONE.json`` marker is written last (atomically),
so a stage that crashed is simply run again (its own jobs may resume from their append-only logs).
Changing a setting of a stage changes its key, and the keys of every stage downstream.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write


def stage_key(name: str, settings: Any, inputs: dict[str, str], version: str) -> str:
    """A short, stable hash of what determines a stage's output."""
    blob = json.dumps(
        {"stage": name, "settings": settings, "inputs": inputs, "version": version}, sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass
class StageDir:
    """Where one stage writes, and whether it finished before."""

    name: str
    key: str
    path: Path

    @property
    def done_marker(self) -> Path:
        return self.path / "DONE.json"

    def is_done(self) -> bool:
        return self.done_marker.exists()

    def mark_done(self, summary: dict[str, Any], seconds: float) -> None:
        with atomic_write(self.done_marker) as fh:
            json.dump(
                {
                    "stage": self.name,
                    "key": self.key,
                    "seconds": seconds,
                    "summary": summary,
                    "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
                },
                fh,
                indent=2,
            )

    def summary(self) -> dict[str, Any]:
        return json.loads(self.done_marker.read_text())


def stage_dir(out: Path, name: str, key: str) -> StageDir:
    path = out / "stages" / f"{name}-{key}"
    path.mkdir(parents=True, exist_ok=True)
    return StageDir(name, key, path)


def find_done(name: str, key: str, places: Sequence[Path], outputs: Sequence[str] = ()) -> StageDir | None:
    """A finished stage ``name-key`` with every one of ``outputs`` under one of ``places`` (output folders
    of other runs), the first found, or None: the same key is the same work, so its results can be taken."""
    for place in places:
        path = place / "stages" / f"{name}-{key}"
        if (path / "DONE.json").is_file() and all((path / o).exists() for o in outputs):  # not a FIFO
            return StageDir(name, key, path)
    return None
