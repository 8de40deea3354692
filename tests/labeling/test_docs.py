"""docs/labeling.md's examples are programs: the Python block runs, the shell block runs through the CLI."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "labeling.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_python_example_runs(capsys):
    (code,) = _blocks("python")
    exec(compile(code, str(DOC), "exec"), {})
    out = capsys.readouterr().out
    assert "binary search" in out and "consensus kept" in out and "mc_hard:world" in out


@pytest.mark.slow
def test_quick_start_runs(tmp_path):
    bin_dir = Path(sys.executable).parent
    quick = _blocks("bash")[0].replace("--n 200", "--n 30")  # the same commands, a smaller world
    for line in quick.splitlines():
        cmd = shlex.split(line.split("  #")[0])
        r = subprocess.run(
            [str(bin_dir / cmd[0]), *cmd[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, f"{line}\n{r.stderr}"
    assert (tmp_path / "report.png").exists() and (tmp_path / "clean.jsonl").exists()
