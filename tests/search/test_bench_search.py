"""bench/bench_search.py runs end to end and its numbers mean what its table says."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_search.py"


def test_bench_search_with_the_oracle(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_search", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "search.json"
    result = bench.main(["--problems", "8", "--beam-problems", "2", "--systematic", "1.0", "--out", str(out)])
    assert json.loads(out.read_text())["selection"]["16"] == result["selection"][16]
    for n in (16, 64):
        rows = result["selection"][n]
        assert max(rows.values()) <= rows["pass@N (oracle)"]  # no selection beats having a right answer
        # every sample shares the problem's misconception half the time: the exact step oracle sees it,
        # counting answers does not (seeded, so this compares fixed pools)
        assert rows["PRM best-of-N (min)"] > rows["majority vote"]
    assert set(result["search"]) == {"beam (n=16, M=4)", "DVTS (n=16, M=4)"}
    assert all(r["steps"] > 0 and 1 <= r["bon_n"] <= 64 for r in result["search"].values())
    assert "| majority vote |" in capsys.readouterr().out
