"""What a test run builds once for all its processes: a folder per key in the run's shared cache
(``PRMKIT_TEST_RUN_CACHE``, made by tests/conftest.py and inherited by xdist's workers), built by the first
process that asks, under a file lock, and read by the others. Nothing in it outlives the run."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

RUN_CACHE = "PRMKIT_TEST_RUN_CACHE"
"""The environment variable naming the run's cache folder: tests/conftest.py sets it in the controller
(or the one process of a run without ``-n``), and removes the folder when the run ends."""


@functools.cache
def _root() -> Path:
    """The run's cache; a process's own folder where no test run made one (a script importing a helper)."""
    return Path(os.environ.get(RUN_CACHE) or tempfile.mkdtemp(prefix="prmkit-test-run-"))


def once(key: str, build: Callable[[Path], Any]) -> Path:
    """The folder ``key`` (a relative path), ``build(folder)`` filling it (made, empty) the first time any
    process of the run asks; a build that fails (or skips) leaves nothing behind, so the next asker builds again."""
    folder = _root() / key
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        if not folder.is_dir():
            partial = folder.with_name(f"{folder.name}.partial")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            try:
                build(partial)
            except BaseException:
                shutil.rmtree(partial, ignore_errors=True)
                raise
            partial.rename(folder)
    return folder
