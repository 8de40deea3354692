"""The layers contract of pyproject.toml ([tool.importlinter]), run with import-linter's own command, so
an import from a lower layer into a higher one fails the suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PENDING: set[tuple[str, str]] = {
    # Upward imports in files other sessions are editing (issue 17); each line goes when its import does.
    ("prmkit.serving.rl", "prmkit.rl.openrlhf"),  # serving/rl.py: the old import path of the RL adapters
    ("prmkit.serving.rl", "prmkit.rl.rewards"),
    ("prmkit.serving.rl", "prmkit.rl.verl"),
}
"""Known violations, listed here (never in the contract) so that any *new* one fails at once."""

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
    found = set(_HOP.findall(run.stdout))
    assert run.returncode == 0 or found, (
        f"lint-imports could not check the contract:\n{run.stdout}{run.stderr}"
    )
    new = sorted(found - PENDING)
    assert not new, "upward imports (see [tool.importlinter] in pyproject.toml):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in new
    )
    fixed = sorted(PENDING - found)
    assert not fixed, "fixed, so delete from PENDING: " + ", ".join(f"{a} -> {b}" for a, b in fixed)
