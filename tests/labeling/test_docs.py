"""docs/labeling.md's shell block runs through the CLI (its Python block: tests/test_docs_blocks.py)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs_blocks import fenced_blocks

DOC = Path(__file__).resolve().parents[2] / "docs" / "labeling.md"


@pytest.mark.slow
def test_quick_start_runs(tmp_path):
    bin_dir = Path(sys.executable).parent
    # the same commands, a smaller world
    quick = fenced_blocks(DOC, "bash")[0].code.replace("--n 200", "--n 30")
    for line in quick.splitlines():
        cmd = shlex.split(line.split("  #")[0])
        r = subprocess.run(
            [str(bin_dir / cmd[0]), *cmd[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, f"{line}\n{r.stderr}"
    assert (tmp_path / "report.png").exists() and (tmp_path / "clean.jsonl").exists()
