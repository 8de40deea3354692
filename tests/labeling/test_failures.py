"""Long labelling jobs against an endpoint that misbehaves (issue 35): one bad item never stops the job.

A stub vLLM server on loopback (tests/labeling/stub_endpoint.py) refuses chosen prompts with vLLM's
context-length 400, cuts a share of rollouts at max_tokens and answers in LaTeX; other stubs break every
answer (null text, fewer choices, a huge body, an HTML page).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from prmkit.core.dataset import write_traces
from prmkit.core.steps import StepFormat
from prmkit.labeling.jobs import Job, JobLockedError, JobStoppedError
from prmkit.labeling.mc import label_mc, prefix_keys
from prmkit.policies.endpoint import EndpointPolicy
from prmkit.policies.http import BadAnswerError, OpenAIClient
from tests.labeling.conftest import world_traces
from tests.labeling.stub_endpoint import Stub, make_app
from tests.serving.conftest import run_server


@pytest.fixture(scope="module")
def traces():
    return world_traces(8, 2)


def stub_for(traces, **options) -> Stub:
    return Stub(answers={t.problem.text: t.problem.answer for t in traces}, **options)


def policy(url: str, **options) -> EndpointPolicy:
    return EndpointPolicy(url, "stub", retries=1, timeout=10, **options)


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ("null_text", r"choice 0 has text None, not a string"),
        ("few_choices", r"asked for n=2 choices, got 1 \(does the server take `n`"),
        ("html", r"answered with non-JSON: b'<html>"),
    ],
)
def test_an_answer_that_is_not_one_is_an_items_failure_with_its_reason(traces, broken, reason) -> None:
    with run_server(make_app(stub_for(traces, broken=broken, delay_s=0))) as url:
        with pytest.raises(BadAnswerError, match=reason):
            policy(url).continue_from(traces[0].problem, traces[0].steps[:1], 2, seed=0)
        with pytest.raises(JobStoppedError, match=rf"all \d+ items failed, the last: .*{reason}"):
            label_mc(traces[:2], policy(url), rollouts=2, concurrency=4)


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ("huge", r"answered with 3,145,755 bytes, over the bound of 1,048,576"),
        ("huge_stream", r"answered with over 1,048,576 bytes; stopped reading"),
    ],
)
def test_a_huge_answer_is_refused_at_the_bound_not_read_whole(traces, broken, reason) -> None:
    with run_server(make_app(stub_for(traces, broken=broken, delay_s=0))) as url:
        client = OpenAIClient(url, retries=0, max_response_bytes=2**20)
        with pytest.raises(BadAnswerError, match=reason):
            client.post("/v1/completions", {"prompt": "x", "n": 1})


def test_a_refused_prefix_is_recorded_and_the_job_goes_on_or_stops_when_asked(traces, tmp_path) -> None:
    fmt = StepFormat()
    bad = fmt.prompt(traces[0].problem, traces[0].steps[:1])
    stub = stub_for(traces, refuse={bad}, delay_s=0)
    with run_server(make_app(stub)) as url:
        labelled, summary = label_mc(
            traces, policy(url), rollouts=2, work_dir=str(tmp_path / "job"), concurrency=8
        )
        assert summary["failed"] == 1 and summary["failed_steps"] == 2  # both traces of problem 0 share it
        failure = summary["failures"][0]
        assert failure["prefix_len"] == 1 and failure["error"] == "RefusedError"
        assert "HTTP 400" in failure["reason"] and "maximum context length" in failure["reason"]
        assert (tmp_path / "job" / "failed.jsonl").read_text().count("\n") == 1
        assert (
            labelled[0].steps[0].label("mc_hard") is None
            and labelled[2].steps[0].label("mc_hard") is not None
        )
        with pytest.raises(JobStoppedError, match=r"first failure \(fail_fast\): .*HTTP 400"):
            label_mc(traces, policy(url), rollouts=2, work_dir=str(tmp_path / "other"), fail_fast=True)


def test_rollouts_cut_at_the_token_limit_are_truncated_not_failures(traces) -> None:
    with run_server(make_app(stub_for(traces, delay_s=0, truncated_share=0.4))) as url:
        skip, s_skip = label_mc(traces, policy(url), rollouts=4, concurrency=8)
        fail, s_fail = label_mc(traces, policy(url), rollouts=4, concurrency=8, truncated="fail")
    assert s_skip["truncated"] == s_fail["truncated"] > 0 and s_skip["no_answer"] == 0
    assert s_skip["unparseable"] == 0 and s_skip["correct"] > 0
    soft = [
        (a.score, b.score)
        for t, u in zip(skip, fail, strict=True)
        for a, b in zip(
            [s.label("mc_soft") for s in t.steps], [s.label("mc_soft") for s in u.steps], strict=True
        )
        if a and b
    ]
    assert all(b <= a for a, b in soft) and any(b < a for a, b in soft)  # counted as failures: lower
    label = skip[0].steps[0].label("mc_soft")
    assert label.provenance.params["truncated"] == "skip"
    assert label.score == label.metadata["correct"] / label.metadata["scored"]


def test_chat_mode_sends_the_body_vllm_documents_for_continuing_a_message(traces) -> None:
    stub = stub_for(traces)
    t = traces[0]
    with run_server(make_app(stub)) as url:
        chat = policy(url, chat=True, temperature=0.7, max_tokens=128)
        conts = chat.continue_from(t.problem, t.steps[:2], 2, seed=5)
        chat.continue_from(t.problem, [], 1, seed=6)
    assert [c.final_answer for c in conts] == ["4", "4"]
    assert stub.bodies[0] == {
        "model": "stub",
        "messages": [
            {"role": "user", "content": t.problem.text},
            {"role": "assistant", "content": f"{t.steps[0].text}\n{t.steps[1].text}\n"},
        ],
        "add_generation_prompt": False,
        "continue_final_message": True,
        "n": 2,
        "max_tokens": 128,
        "temperature": 0.7,
        "top_p": 1.0,
        "seed": 5,
    }
    assert stub.bodies[1]["messages"] == [{"role": "user", "content": t.problem.text}]
    assert stub.bodies[1]["add_generation_prompt"] is True and "continue_final_message" not in stub.bodies[1]


def test_several_urls_are_one_pool_and_a_retry_moves_off_a_dead_one(traces) -> None:
    a, b = stub_for(traces, delay_s=0), stub_for(traces, delay_s=0)
    with run_server(make_app(a)) as url_a, run_server(make_app(b)) as url_b:
        _, summary = label_mc(traces, policy(f"{url_a},{url_b}/v1"), rollouts=2, concurrency=4)
        assert summary["failed"] == 0 and len(a.prompts) > 5 and len(b.prompts) > 5
        dead = "http://127.0.0.1:9"  # nothing listens on the discard port
        _, summary = label_mc(traces, policy(f"{dead},{url_a}"), rollouts=2, concurrency=4)
        assert summary["failed"] == 0


def test_a_second_process_on_one_job_is_refused_in_one_line(tmp_path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from prmkit.labeling.jobs import Job
            with Job({str(tmp_path)!r}, "t", {{}}):
                print("locked", flush=True)
                sys.stdin.readline()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(
            JobLockedError, match=rf"being run by process {holder.pid} since .*another --work-dir"
        ):
            Job(tmp_path, "t", {})
    finally:
        holder.communicate("\n", timeout=30)
    with Job(tmp_path, "t", {}) as job:  # its lock went with it
        assert job.resumed == 0


def test_the_cli_reports_a_locked_job_without_a_traceback(traces, tmp_path) -> None:
    src = tmp_path / "t.jsonl"
    write_traces(src, traces)
    out = tmp_path / "o.jsonl"
    with Job(out.with_name(out.name + ".job"), "mc", {}):
        r = subprocess.run(
            [
                str(Path(sys.executable).parent / "prmkit"),
                "label",
                "mc",
                "--input",
                str(src),
                "--output",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    assert "is being run by process" in r.stdout + r.stderr
    assert httpx  # the module is imported for the stub's client side


@pytest.fixture
def slow_checks():
    """Answer checks in worker processes made to take 50 ms each, with a 1 s timeout per check: a
    timeout that counted time queued behind other checks would turn rollouts into "unparseable"."""
    from prmkit.core import answers

    answers.configure(timeout=1.0, initializer="tests.labeling.slow_checker:fifty_ms_per_check")
    yield
    answers.configure()


@pytest.fixture
def frozen_start(monkeypatch):
    """Every job starts at one moment (labels carry their job's start time; runs at other times differ
    there and only there)."""
    from datetime import UTC, datetime

    from prmkit.labeling import jobs

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 11, 26, 12, 0, tzinfo=UTC)

    monkeypatch.setattr(jobs, "datetime", Clock)


def test_a_job_against_a_loaded_endpoint_finishes_retries_its_failure_alone_and_shards_exactly(
    tmp_path, slow_checks, frozen_start
) -> None:
    """Issue 35's acceptance run: 20 ms per request, LaTeX answers, vLLM's 400 for one prefix,
    math-verify slowed to 50 ms, concurrency 64."""
    from prmkit.core import answers
    from prmkit.labeling.mc import MCConfig, run_mc
    from prmkit.labeling.merge import MergeConfig, run_merge

    traces = world_traces(12, 2)
    src = tmp_path / "in.jsonl"
    write_traces(src, traces)
    bad = StepFormat().prompt(traces[4].problem, traces[4].steps[:2])
    stub = stub_for(traces, refuse={bad}, delay_s=0.02)
    with run_server(make_app(stub)) as url:

        def mc(output: str, **options) -> dict:
            config = MCConfig(
                input=src, output=tmp_path / output, policy="endpoint", url=url, model="stub",
                rollouts=4, concurrency=64, **options,
            )  # fmt: skip
            return run_mc(config, show_progress=False)

        first = mc("all.jsonl")
        assert first["failed"] == 1 and first["failures"][0]["prefix"].startswith("2-")
        assert first["failures"][0]["trace"] == traces[4].id and "HTTP 400" in first["failures"][0]["reason"]
        assert first["unparseable"] == 0 and first["correct"] > 0 and first["wrong"] > 0
        assert first["truncated"] > 0 and first["no_answer"] == 0  # a cut rollout is not "no answer"
        # the checks queued far past the 1 s timeout: 50 ms each, all asked at once, on few workers
        assert (first["correct"] + first["wrong"]) * 0.05 / answers._cpus() > 3.0
        labelled = (tmp_path / "all.jsonl").read_bytes()

        asked = len(stub.prompts)
        again = mc("all.jsonl")
        assert stub.prompts[asked:] == [bad]  # the rerun retried the failed prefix, and only it
        assert again["failed"] == 1 and (tmp_path / "all.jsonl").read_bytes() == labelled

        answers.configure(timeout=1.0)  # the shards need no slow checks
        for i in (0, 1):
            mc(f"shard{i}.jsonl", shard=f"{i}/2")
        merged = tmp_path / "merged.jsonl"
        run_merge(
            MergeConfig(
                input=src, shards=[tmp_path / "shard0.jsonl", tmp_path / "shard1.jsonl"], output=merged
            )
        )
    assert merged.read_bytes() == labelled
    shard_traces = [(tmp_path / f"shard{i}.jsonl").read_text().count("\n") for i in (0, 1)]
    assert sum(shard_traces) == len(traces) and min(shard_traces) > 0


def test_a_rate_limited_endpoint_paces_the_job_and_no_item_fails(traces) -> None:
    """Issue 66: at a 20 req/s limit 21 % of the items failed, the 429s' Retry-After ignored."""
    stub = stub_for(traces, delay_s=0, rate_per_s=10)
    with run_server(make_app(stub)) as url:
        _, summary = label_mc(traces, policy(url), rollouts=2, concurrency=16)
    assert len(stub.prompts) > summary["prefixes"]  # it was paced: some requests got 429
    assert summary["failed"] == 0 and summary["items"] == summary["prefixes"] > 20


def test_an_answer_past_what_was_asked_fails_its_item_unread_and_the_job_goes_on(traces) -> None:
    """Issue 66: a 63 MB answer (under the old 64 MiB bound) took the client to 2.7 GB. An answer is
    read only as far as n choices of max_tokens tokens can fill."""
    from prmkit.policies.http import answer_bound

    bad = StepFormat().prompt(traces[0].problem, traces[0].steps[:1])
    stub = stub_for(traces, oversize={bad}, delay_s=0)
    bound = answer_bound(2, 16)
    with run_server(make_app(stub)) as url:
        small = policy(url, max_tokens=16)
        with pytest.raises(
            BadAnswerError, match=rf"answered with 2,\d+,\d+ bytes, over the bound of {bound:,}"
        ):
            small.continue_from(traces[0].problem, traces[0].steps[:1], 2, seed=0)
        _, summary = label_mc(traces, small, rollouts=2, concurrency=4)
    assert summary["failed"] == 1 and f"over the bound of {bound:,}" in summary["failures"][0]["reason"]
    assert summary["items"] > 10 and bound < 2**20


def test_the_cli_exits_3_with_one_line_when_items_failed_and_keeps_the_output(traces, tmp_path) -> None:
    """Issue 66: a job that left items failed exited 0, so scripts took a partial output for a whole."""
    src, out = tmp_path / "t.jsonl", tmp_path / "o.jsonl"
    write_traces(src, traces[:4])
    bad = StepFormat().prompt(traces[0].problem, traces[0].steps[:1])
    with run_server(make_app(stub_for(traces, refuse={bad}, delay_s=0))) as url:
        args = ["label", "mc", "--policy", "endpoint", "--url", url, "--model", "stub"]
        args += ["--input", str(src), "--output", str(out), "--rollouts", "2", "--retries", "0"]
        r = subprocess.run(
            [str(Path(sys.executable).parent / "prmkit"), *args], capture_output=True, text=True, timeout=120
        )
    assert r.returncode == 3, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    items = len({k for t in traces[:4] for k in prefix_keys(t)[:-1]})
    failed = f"{out}.job/failed.jsonl"
    assert f"1 of {items} items failed; rerun to retry them (listed in {failed})" in r.stderr
    assert out.exists() and "failed: 1" in r.stdout
