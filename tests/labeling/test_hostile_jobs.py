"""Labelling jobs against hostile input and a silent endpoint (issue 42): one located line, no traceback,
no unbounded work.

Each of these was a traceback or an unbounded wait on the commit before: a lone surrogate in a step
(valid JSON that ``validate`` passed and ``label mc`` crashed on with UnicodeEncodeError), a job log
record with a key and no fields (KeyError in the summary), ``--rollouts 0``/``-1`` (ValueError),
``--rollouts 100000000`` (memory growing ~65 MB/s with no output) and an endpoint that accepts and never
answers (reported after 4 tries x 120 s, with no flag to set the timeout).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from prmkit.core.dataset import write_traces
from tests.labeling.conftest import world_traces

PRMKIT = str(Path(sys.executable).parent / "prmkit")


def prmkit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([PRMKIT, *args], capture_output=True, text=True, timeout=timeout)


def one_line_error(r: subprocess.CompletedProcess) -> str:
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert "Traceback" not in out, out
    return out


@pytest.fixture
def traces_file(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    write_traces(path, world_traces(4, 2))
    return path


def test_a_lone_surrogate_is_refused_where_it_is_read_naming_line_and_field(traces_file, tmp_path) -> None:
    lines = traces_file.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["steps"][1]["text"] += "\ud800"  # json.dumps escapes it as \ud800: valid JSON, not text
    bad = tmp_path / "surrogate.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(rec), *lines[2:]]) + "\n")
    place = f"{bad}:2: steps[1].text: expected Unicode text"
    out = one_line_error(prmkit("validate", str(bad)))
    assert place in out and "lone surrogate \\ud800" in out
    for args in (
        ["inspect", str(bad)],
        ["label", "mc", "--input", str(bad), "--output", str(tmp_path / "mc.jsonl"), "--rollouts", "2"],
        ["convert", str(bad), str(tmp_path / "out.parquet")],
    ):
        assert place in one_line_error(prmkit(*args)), args
    # --skip-invalid skips and counts it like any other bad record
    r = prmkit(
        "label",
        "mc",
        "--input",
        str(bad),
        "--output",
        str(tmp_path / "mc.jsonl"),
        "--rollouts",
        "2",
        "--skip-invalid",
    )
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr


@pytest.mark.parametrize("rollouts", ["0", "-1", "100000000"])
def test_rollouts_out_of_range_is_refused_before_any_work(traces_file, tmp_path, rollouts) -> None:
    for method in ("mc", "binary_search"):
        started = time.monotonic()
        out = one_line_error(
            prmkit(
                "label",
                method,
                "--input",
                str(traces_file),
                "--output",
                str(tmp_path / "o.jsonl"),
                "--rollouts",
                rollouts,
                timeout=60,
            )
        )
        assert "--rollouts: Input should be" in out and f"found {rollouts}" in out, out
        assert time.monotonic() - started < 30


def test_a_job_record_without_its_fields_is_refused_with_its_place(traces_file, tmp_path) -> None:
    out = tmp_path / "mc.jsonl"
    args = ["label", "mc", "--input", str(traces_file), "--output", str(out), "--rollouts", "2"]
    assert prmkit(*args).returncode == 0
    log = tmp_path / "mc.jsonl.job" / "records.jsonl"
    records = log.read_text().splitlines()
    key = json.loads(records[0])["key"]
    log.write_text("\n".join([json.dumps({"key": key}), *records[1:]]) + "\n")
    message = one_line_error(prmkit(*args))
    assert f"{log}:1: n: expected a int" in message and "--restart" in message, message
    assert prmkit(*args, "--restart").returncode == 0


def _silent_server() -> tuple[int, threading.Event]:
    """A TCP server on loopback that accepts every connection, reads, and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    done = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        sock.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            held.append(conn)
        for conn in held:
            conn.close()
        sock.close()

    threading.Thread(target=accept, daemon=True).start()
    return sock.getsockname()[1], done


def test_an_endpoint_that_never_answers_is_reported_within_the_request_timeout(traces_file, tmp_path) -> None:
    port, done = _silent_server()
    try:
        started = time.monotonic()
        r = prmkit(
            "label",
            "mc",
            "--policy",
            "endpoint",
            "--url",
            f"http://127.0.0.1:{port}",
            "--model",
            "m",
            "--input",
            str(traces_file),
            "--output",
            str(tmp_path / "o.jsonl"),
            "--rollouts",
            "2",
            "--concurrency",
            "8",
            "--request-timeout-s",
            "1",
            "--retries",
            "1",
        )
        took = time.monotonic() - started
    finally:
        done.set()
    message = one_line_error(r)
    assert "the endpoint is silent" in message and "Finished work is kept" in message, message
    # the first wave of timeouts (1 s) and one retry's: silent, the job stops
    assert took < 15, f"took {took:.1f} s"
    out = one_line_error(
        prmkit(
            "label",
            "mc",
            "--input",
            str(traces_file),
            "--output",
            str(tmp_path / "o.jsonl"),
            "--retries",
            "1",
        )
    )
    assert "only used by policy 'endpoint'" in out


@pytest.mark.parametrize("concurrency", ["1", "64"])
def test_a_silent_endpoint_stops_the_job_within_two_timeouts_at_any_concurrency(
    traces_file, tmp_path, concurrency
) -> None:
    """Issue 66: with the default --retries (3), a job at concurrency 1 waited 64 items x 4 timeouts
    (8.6 h at the default 120 s) before saying the endpoint was down; now two timeouts in a row with no
    answer for a whole timeout stop it (here 1 s timeouts: about 2.5 s of waiting)."""
    port, done = _silent_server()
    out = tmp_path / "o.jsonl"
    try:
        started = time.monotonic()
        r = prmkit(
            "label", "mc", "--policy", "endpoint", "--url", f"http://127.0.0.1:{port}", "--model", "m",
            "--input", str(traces_file), "--output", str(out), "--rollouts", "2",
            "--concurrency", concurrency, "--request-timeout-s", "1", timeout=60,
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        done.set()
    message = one_line_error(r)
    assert "the endpoint is silent: " in message and "answered none for" in message, message
    assert "raise --request-timeout-s" in message and f"Finished work is kept in {out}.job" in message
    assert took < 20, f"took {took:.1f} s"


@pytest.mark.parametrize(
    ("damage", "place"),
    [
        ({"correct": 10**9}, "correct: expected at most n = 2 (a count of its rollouts), found 1000000000"),
        ({"wrong": -1}, "wrong: expected a count of 0 or more, found -1"),
        ({"n": 8, "correct": 8}, "n: expected 2 (the job's rollouts), found 8"),
        (
            dict.fromkeys(("correct", "wrong", "no_answer", "unparseable", "truncated"), 0),
            "correct/wrong/no_answer/unparseable/truncated: expected counts adding up to n = 2, found 0",
        ),
    ],
)
def test_a_resumed_job_refuses_a_record_whose_values_cannot_be_true(tmp_path, damage, place) -> None:
    """Issue 66: a logged correct of 10^9 from 8 rollouts was accepted and turned four soft labels from
    0.125 into 1.0. Refused with its file:line; deleting that line redoes its work, and only its."""
    from prmkit.core.errors import InputError
    from prmkit.labeling.mc import label_mc
    from prmkit.worlds.arithmetic import WorldPolicy

    traces = world_traces(3, 2)
    job = tmp_path / "job"
    first, _ = label_mc(traces, WorldPolicy(), rollouts=2, work_dir=str(job))
    log = job / "records.jsonl"
    lines = log.read_text().splitlines()
    rec = json.loads(lines[1])
    log.write_text("\n".join([lines[0], json.dumps(rec | damage), *lines[2:]]) + "\n")
    with pytest.raises(InputError, match=r"records\.jsonl:2: ") as err:
        label_mc(traces, WorldPolicy(), rollouts=2, work_dir=str(job))
    assert place in str(err.value) and "delete that line of records.jsonl" in str(err.value)
    log.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    again, summary = label_mc(traces, WorldPolicy(), rollouts=2, work_dir=str(job))
    assert summary["prefixes_resumed"] == summary["prefixes"] - 1
    assert [t.model_dump() for t in again] == [t.model_dump() for t in first]


def test_resumed_binary_search_and_judge_jobs_check_their_records_values(tmp_path) -> None:
    from prmkit.core.errors import InputError
    from prmkit.labeling.binary_search import label_binary_search
    from prmkit.labeling.judge import label_judge
    from prmkit.worlds.arithmetic import SimulatedJudge, WorldPolicy

    traces = world_traces(3, 2)
    cases = [
        (lambda d: label_binary_search(traces, WorldPolicy(), rollouts=4, work_dir=d), "prefix_len", 99,
         "prefix_len: expected "),
        (lambda d: label_judge(traces, SimulatedJudge(), work_dir=d), "verdict", {"ratings": [1],
         "first_error": -1}, "verdict.ratings: expected "),
    ]  # fmt: skip
    for i, (run, field, value, place) in enumerate(cases):
        job = tmp_path / str(i)
        run(str(job))
        log = job / "records.jsonl"
        lines = log.read_text().splitlines()
        log.write_text("\n".join([json.dumps(json.loads(lines[0]) | {field: value}), *lines[1:]]) + "\n")
        with pytest.raises(InputError, match=f"records.jsonl:1: {place}"):
            run(str(job))
