"""tests/run_cache.py: a folder built once for a whole test run, by whichever process asks first."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.run_cache import once


def test_concurrent_askers_get_one_build_and_the_same_folder(tmp_path: Path) -> None:
    builds: list[Path] = []

    def build(folder: Path) -> None:
        builds.append(folder)
        time.sleep(0.2)  # long enough for the other askers to arrive while it builds
        (folder / "made").write_text("once")

    key = f"check/{tmp_path.name}"
    got: list[Path] = []
    askers = [threading.Thread(target=lambda: got.append(once(key, build))) for _ in range(3)]
    for a in askers:
        a.start()
    for a in askers:
        a.join()
    assert len(builds) == 1 and len(set(got)) == 1 and len(got) == 3
    assert (got[0] / "made").read_text() == "once" and not builds[0].exists()  # built aside, then renamed


def test_a_failed_build_leaves_nothing_and_the_next_asker_builds(tmp_path: Path) -> None:
    key = f"check/{tmp_path.name}"

    def broken(folder: Path) -> None:
        (folder / "half").write_text("")
        raise RuntimeError("half-built")

    with pytest.raises(RuntimeError, match="half-built"):
        once(key, broken)
    folder = once(key, lambda f: None)
    assert folder.is_dir() and list(folder.iterdir()) == []
