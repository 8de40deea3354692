"""Any number of traces scored through a reward server within its default limits (issue 35, scoring).

``RemoteScorer`` posted every trace in one request, so more than 512 traces got a 413 from ``prmkit
serve``'s own ``--max-traces-per-request``: ``prmkit score http://...``, the ``bon``/``audit`` pools and
``eval processbench`` with a server all failed on real data sizes. It now asks in chunks (256 traces or
1 MB of JSON at most), one after another from ``score``, four at a time from ``ascore``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from prmkit.core.dataset import write_traces
from prmkit.core.steps import make_trace
from prmkit.scoring.remote import RemoteScorer
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server


def _traces(n: int) -> list:
    return [
        make_trace(f"Tom has {k} apples and buys 4 more.", [f"{k} + 4 = {k + 4}", "done"]) for k in range(n)
    ]


def test_prmkit_score_on_2000_traces_against_default_limits(tmp_path: Path) -> None:
    traces = _traces(2000)
    write_traces(tmp_path / "traces.jsonl", traces)
    scorer = HashScorer()
    prmkit = str(Path(sys.executable).with_name("prmkit"))
    app = create_app(scorer, ServerConfig())
    with run_server(app) as url:
        done = subprocess.run(
            [prmkit, "score", url, str(tmp_path / "traces.jsonl"), "--output", str(tmp_path / "scored.jsonl")],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert asyncio.run(RemoteScorer(url).ascore(traces[:700])) == HashScorer().score(traces[:700])
    scored = [json.loads(line) for line in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert len(scored) == 2000
    expected = HashScorer().score(traces)
    got = [[lab["score"] for step in t["steps"] for lab in step.get("labels", [])] for t in scored]
    assert got == expected
    assert app.state.batcher.stats.requests == 8 + 3  # 2000 / 256 and 700 / 256, rounded up


def test_a_trace_the_server_refuses_is_left_unscored_and_listed_and_the_rest_scored(tmp_path: Path) -> None:
    """One trace of 300 steps (past the default --max-steps-per-trace 256) used to fail the whole
    `prmkit score`; its chunk is now halved until it stands alone, and it alone is left unscored."""
    traces = _traces(40)
    traces[23] = make_trace("A long one.", [f"step {k}" for k in range(300)])
    write_traces(tmp_path / "traces.jsonl", traces)
    prmkit = str(Path(sys.executable).with_name("prmkit"))
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        args = [prmkit, "score", url, str(tmp_path / "traces.jsonl"), "--output", str(tmp_path / "s.jsonl")]
        done = subprocess.run(args, capture_output=True, text=True, timeout=300)
        stopped = subprocess.run([*args, "--fail-fast"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "scored 39 of 40 traces (78 of 378 steps)" in said
    assert f"left unscored: 1 trace(s), e.g. {traces[23].id}: " in said and "HTTP 422" in said
    scored = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    got = [[lab["score"] for step in t["steps"] for lab in step.get("labels", [])] for t in scored]
    expected = HashScorer().score(traces)
    assert got[23] == [] and got[:23] + got[24:] == expected[:23] + expected[24:]
    assert stopped.returncode == 2 and "HTTP 422" in stopped.stdout + stopped.stderr
    assert "Traceback" not in stopped.stdout + stopped.stderr
