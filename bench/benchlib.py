"""What the benchmarks share: the code a result was measured on (imported as a sibling module, since
each benchmark runs as a script: ``python bench/bench_x.py``)."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_version() -> dict[str, object]:
    """The commit measured, and the files of src/ that differ from it (others edit this tree too)."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    return {
        "commit": git("rev-parse", "HEAD"),
        "src_changed": git("status", "--porcelain", "src").splitlines(),
    }


def versions(*names: str) -> dict[str, str | None]:
    """The installed version of each package named (None where it is missing), and Python's."""
    from importlib.metadata import PackageNotFoundError, version

    def found(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {**{name: found(name) for name in names}, "python": platform.python_version()}
