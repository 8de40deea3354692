"""Helpers of the formats tests."""

from __future__ import annotations

import json
from pathlib import Path


def real_lines(path: Path) -> list[dict]:
    """The records of a real JSONL sample, decoded."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, records: list) -> Path:
    """A JSONL file of ``records`` (dicts are dumped, strings written as they are)."""
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8"
    )
    return path
