"""The import contracts of pyproject.toml ([tool.importlinter]: the packages' layers and the layers of the
modules inside evaluation, pipeline, formats, rl and search), run with import-linter's own command, so
an import from a lower layer into a higher one fails the suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_HOP = re.compile(r"^- (prmkit[\w.]*) -> (prmkit[\w.]*) \(l\.[\d, ]+\)$", re.M)


def test_packages_import_only_the_layers_below_them() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run(
        [str(lint), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = sorted(set(_HOP.findall(run.stdout)))
    assert not found, "upward imports (see [tool.importlinter] in pyproject.toml):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in found
    )
    assert run.returncode == 0, f"lint-imports could not check the contract:\n{run.stdout}{run.stderr}"
