"""``prmkit eval processbench`` on each released family's stand-in (tests/scoring/standins.py, built once
per test run and shared with tests/scoring/test_families.py's card tests): the command's plumbing read
through each family as released. A file of its own, so ``--dist loadfile`` can run it beside the card
tests on another worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scoring.standins import standin

GSM8K = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "processbench" / "gsm8k.json"

STANDINS = {
    "qwen": lambda: (str(standin("qwen")), []),
    "skywork": lambda: (str(standin("skywork")), []),
    "math-shepherd": lambda: (f"math-shepherd:{standin('math-shepherd')}", []),
    "rlhflow": lambda: (f"rlhflow:{standin('rlhflow')}", []),
    "implicit": lambda: (f"implicit:{standin('implicit')[0]}", ["--reference", str(standin("implicit")[1])]),
    "trl": lambda: (str(standin("trl")), []),
    "likelihood": lambda: (f"likelihood:{standin('likelihood')}", []),
}


@pytest.mark.parametrize(
    "family", [pytest.param(f, marks=[pytest.mark.slow] if f == "implicit" else []) for f in sorted(STANDINS)]
)
def test_eval_processbench_runs_end_to_end_for_each_family(family: str, tmp_path: Path) -> None:
    """``prmkit eval processbench`` on ProcessBench's own GSM8K records, each family's stand-in read as
    released, real tokenizers (a prmkit checkpoint: tests/cli/test_overlong.py). The implicit one, two
    LMs over a 152k vocabulary read in full on the CPU, is ``slow``."""
    from typer.testing import CliRunner

    from prmkit.cli import app

    spec, extra = STANDINS[family]()
    # ProcessBench's four shortest GSM8K records, as the file has them (three correct, one with an error):
    # a 152k-token vocabulary's head costs per token, and the run's plumbing is the same for any four
    shortest = sorted(
        json.loads(GSM8K.read_text()), key=lambda r: len(r["problem"]) + len("".join(r["steps"]))
    )
    records = tmp_path / "gsm8k.json"
    records.write_text(json.dumps(shortest[:4]))
    args = ["eval", "processbench", str(records), "--model", spec, *extra, "-o", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "out" / "processbench.json").read_text())
    (subset,) = saved["subsets"]
    assert subset["traces"] == 4 and subset["no_prediction"] == 0
    assert saved["params"]["files"] == [str(records)]
