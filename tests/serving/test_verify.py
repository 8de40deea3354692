"""``POST /verify`` over real HTTP on loopback: the gate accepts, flags at the first doubtful step, and
resamples through prmkit's own policy server; hostile input and a failing policy get defined answers.

The scorer is the world's oracle (``arithmetic-oracle``): deterministic, 1.0 up to a trace's gold first
error and 0.0 from it, so a trace with a wrong step is doubtful at exactly that step; the policy behind
``prmkit serve-policy``'s app is the world's, which can continue any prefix of a world problem.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from prmkit.core.model import Step, Trace
from prmkit.policies import load_policy
from prmkit.serving.config import GateOptions
from prmkit.serving.policy_server import PolicyService
from prmkit.serving.policy_server import create_app as policy_app
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.arithmetic import OracleScorer, check_trace, generate_problems, gold_label, sample_traces
from tests.serving.conftest import HashScorer, free_port, run_server
from tests.serving.test_metrics import metric_value, request_counts

PROBLEMS = generate_problems(6, seed=4, split="test")
TRACES = gold_label(sample_traces(PROBLEMS, 2, seed=4))
RIGHT = next(t for t in TRACES if t.first_error("gold") == -1)
WRONG = next(t for t in TRACES if t.id == "world-test-4-000003-s4-1")
"""A trace whose gold first error is step 1 (a wrong operation, which the world policy does not always
repeat, so a continuation from step 1 can pass)."""


def _body(trace: Trace, **extra: object) -> dict:
    return {"problem": trace.problem.text, "steps": [s.text for s in trace.steps], **extra}


@contextlib.contextmanager
def _servers(**gate: object) -> Iterator[str]:
    """prmkit's policy server (the world policy, the world problems) and a reward server whose gate
    resamples through it; yields the reward server's URL."""
    service = PolicyService(load_policy("arithmetic"), PROBLEMS)
    with run_server(policy_app(service)) as policy_url:
        options = GateOptions(**{"threshold": 0.5, "action": "resample", "policy_url": policy_url, **gate})
        with run_server(create_app(OracleScorer(), ServerConfig(gate=options))) as url:
            yield url


def test_the_gate_accepts_a_right_trace_and_flags_a_wrong_one_at_its_first_error() -> None:
    assert WRONG.first_error("gold") == 1
    config = ServerConfig(gate=GateOptions(threshold=0.5))
    with run_server(create_app(OracleScorer(), config)) as url, httpx.Client(base_url=url) as c:
        ok = c.post("/verify", json=_body(RIGHT))
        bad = c.post("/verify", json=_body(WRONG))
        text = c.post(
            "/verify",
            json={"problem": WRONG.problem.text, "completion": "\n".join(s.text for s in WRONG.steps)},
        )
        metrics = c.get("/metrics").text
    assert ok.status_code == 200 and bad.status_code == 200, (ok.text, bad.text)
    ok, bad = ok.json(), bad.json()
    assert ok["decision"] == "accept" and ok["score"] == 1.0 and ok["first_doubtful_step"] is None
    assert ok["step_scores"] == [1.0] * len(RIGHT.steps) and ok["resampled"] is None
    assert bad["decision"] == "flag" and bad["first_doubtful_step"] == 1 and bad["score"] == 0.0
    assert bad["step_scores"] == [1.0] + [0.0] * (len(WRONG.steps) - 1)
    assert bad["resamples"] == 0 and bad["resampled"] is None
    assert bad["rule"] == "a trace whose min step score is below 0.5 is doubtful: flag it"
    assert "first doubtful step 1" in bad["reason"]
    assert text.json() == bad  # a completion is cut into the same steps
    assert decisions(metrics) == {"flag": 2, "accept": 1}


def test_a_doubtful_trace_is_resampled_through_the_policy_server_to_a_right_one() -> None:
    expected = _first_passing_seed(WRONG, kept=1, seeds=range(8)) + 1  # continuations the gate must ask
    assert 1 < expected <= 8  # the first continuation fails: the loop is exercised
    with _servers(max_resamples=8) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.post("/verify", json=_body(WRONG, seed=0))
        ok = c.post("/verify", json=_body(RIGHT, seed=0))
        metrics = c.get("/metrics").text
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["decision"] == "resampled" and body["first_doubtful_step"] == 1
    assert body["resamples"] == expected
    new = body["resampled"]
    assert new["kept_steps"] == 1 and new["steps"][0] == WRONG.steps[0].text
    assert new["steps"][1] != WRONG.steps[1].text
    assert new["step_scores"] == [1.0] * len(new["steps"]) and new["first_doubtful_step"] is None
    gold = check_trace(_trace(WRONG, new["steps"], new["final_answer"]))
    assert gold.first_error == -1 and new["final_answer"] == WRONG.problem.answer  # right by the checker
    assert ok.json()["decision"] == "accept" and ok.json()["resamples"] == 0  # nothing asked for a pass
    assert decisions(metrics) == {"resampled": 1, "accept": 1}
    assert metric_value(metrics, "prmkit_gate_resamples_total") == expected


def test_when_no_continuation_passes_the_answer_is_flag_with_the_best_one() -> None:
    with _servers(threshold=1.5, max_resamples=3) as url:  # the oracle never scores 1.5: nothing passes
        r = httpx.post(f"{url}/verify", json=_body(WRONG, seed=0), timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["decision"] == "flag" and body["resamples"] == 3
    assert body["first_doubtful_step"] == 0  # 1.0 < 1.5: the first step is already doubtful
    assert body["resampled"]["kept_steps"] == 0 and body["resampled"]["score"] <= 1.0
    assert "none of 3 continuations passed" in body["reason"]


def test_a_policy_endpoint_that_is_down_or_refuses_is_a_502_naming_it() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    options = GateOptions(threshold=0.5, action="resample", policy_url=down, policy_model="m")
    with (
        run_server(create_app(OracleScorer(), ServerConfig(gate=options))) as url,
        httpx.Client(base_url=url) as c,
    ):
        r = c.post("/verify", json=_body(WRONG), timeout=60)
        fine = c.post("/verify", json=_body(RIGHT))  # a trace that passes never needs the policy
        metrics = c.get("/metrics").text
    assert r.status_code == 502, r.text
    assert down in r.json()["detail"] and "first doubtful step 1" in r.json()["detail"]
    assert fine.status_code == 200 and fine.json()["decision"] == "accept"
    assert metric_value(metrics, "prmkit_gate_policy_errors_total") == 1
    assert request_counts(metrics)[("/verify", "502")] == 1
    other = generate_problems(1, seed=99, split="test")[0]  # a problem the policy server does not know
    wrong = _trace(WRONG, ["3 + 4 = 8.", "The answer is 8."], "8").model_copy(update={"problem": other})
    with _servers() as url:
        r = httpx.post(f"{url}/verify", json=_body(wrong), timeout=60)
    assert r.status_code == 502 and "does not start with a problem this server knows" in r.json()["detail"]


@contextlib.contextmanager
def _hung_policy() -> Iterator[str]:
    """An endpoint that accepts every connection and never answers (a hung vLLM); yields its URL."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)
    listener.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for sock in [*held, listener]:
            sock.close()


def test_a_hung_policy_neither_stalls_pooling_nor_holds_verify_past_its_deadline(random_prm: str) -> None:
    """Issue 66, item 1: resampling waited on the policy in asyncio's default thread pool, where
    ``/pooling`` tokenizes; a few /verify calls on a hung policy stalled ``/pooling`` for a minute and
    were answered after twice their bound. Now continuations have threads of their own and /verify an
    overall deadline of ``max_resamples`` x ``policy_timeout_s`` (here 2 x 1.5 s)."""
    from prmkit.scoring import load_scorer

    scorer = load_scorer(random_prm, batch_tokens=1024)
    callers = min(32, (os.cpu_count() or 1) + 4) + 2  # more than asyncio's default pool has threads
    with _hung_policy() as policy:
        options = GateOptions(
            threshold=2.0,  # every trace is doubtful: every request resamples
            action="resample",
            policy_url=policy,
            policy_model="hung",
            policy_timeout_s=1.5,
            max_resamples=2,
            policy_concurrency=callers,
        )
        with run_server(create_app(scorer, ServerConfig(gate=options))) as url:
            bound = options.max_resamples * options.policy_timeout_s

            def verify(_: int) -> tuple[int, float]:
                start = time.monotonic()
                r = httpx.post(f"{url}/verify", json={"problem": "p", "steps": ["1 + 1 = 2."]}, timeout=60)
                return r.status_code, time.monotonic() - start

            with concurrent.futures.ThreadPoolExecutor(callers) as pool:
                answers = pool.map(verify, range(callers))
                time.sleep(0.5)  # every /verify is waiting on the policy
                start = time.monotonic()
                pooled = httpx.post(f"{url}/pooling", json={"input": "Ann has 3.\n1 + 1 = 2."}, timeout=60)
                pooling_s = time.monotonic() - start
                answers = list(answers)
    assert pooled.status_code == 200, pooled.text
    assert pooling_s < 1.5, f"/pooling took {pooling_s:.1f} s while /verify waited on a hung policy"
    assert {status for status, _ in answers} == {502}, answers
    slowest = max(took for _, took in answers)
    assert slowest < bound + 1.5, f"/verify answered after {slowest:.1f} s; its bound is {bound:g} s"


def test_hostile_or_impossible_requests_are_4xx_before_any_work() -> None:
    scorer = HashScorer()
    config = ServerConfig(max_steps_per_trace=4, max_step_chars=50, gate=GateOptions(threshold=0.5))
    with run_server(create_app(scorer, config)) as url, httpx.Client(base_url=url) as c:
        empty = c.post("/verify", json={"problem": "p", "steps": []})
        blank = c.post("/verify", json={"problem": "p", "completion": "\n\n"})
        many = c.post("/verify", json={"problem": "p", "steps": ["s"] * 5})
        long = c.post("/verify", json={"problem": "p", "steps": ["x" * 51]})
        both = c.post("/verify", json={"problem": "p", "steps": ["s"], "completion": "s"})
        seed = c.post("/verify", json={"problem": "p", "steps": ["s"], "seed": -1})
        extra = c.post("/verify", json={"problem": "p", "steps": ["s"], "threshold": 0.1})
    assert scorer.calls == []  # nothing was scored
    assert empty.status_code == 422 and "no steps to verify" in empty.json()["detail"]
    assert blank.status_code == 422 and "no steps to verify" in blank.json()["detail"]
    assert many.status_code == 422 and "--max-steps-per-trace" in many.json()["detail"]
    assert long.status_code == 413 and "--max-step-chars" in long.json()["detail"]
    assert both.status_code == 422 and "exactly one of" in both.json()["detail"]
    assert (
        seed.status_code == 422 and extra.status_code == 422
    )  # the threshold is the server's, not the client's
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        none = httpx.post(f"{url}/verify", json={"problem": "p", "steps": ["s"]})
    assert none.status_code == 404 and "--gate-threshold" in none.json()["detail"]


def test_an_agent_trajectory_is_flagged_not_resampled() -> None:
    messages = [
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "2 + 2 = 5. The answer is 5."},
    ]
    options = GateOptions(threshold=1.1, action="resample", policy_url=f"http://127.0.0.1:{free_port()}")
    with run_server(create_app(HashScorer(), ServerConfig(gate=options))) as url:
        r = httpx.post(f"{url}/verify", json={"messages": messages})
    assert r.status_code == 200, r.text
    assert r.json()["decision"] == "flag" and r.json()["resamples"] == 0
    assert "flagged, not resampled" in r.json()["reason"]


def test_gate_options_that_cannot_work_are_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="--gate-policy-url"):
        GateOptions(threshold=0.5, action="resample")
    with pytest.raises(ValidationError, match="threshold once"):
        GateOptions(threshold=0.5, monitor="monitor.json")
    with pytest.raises(KeyError, match="Did you mean 'min'"):
        create_app(HashScorer(), ServerConfig(gate=GateOptions(threshold=0.5, aggregation="mni")))


def decisions(page: str) -> dict[str, float]:
    """``prmkit_gate_decisions_total`` by decision, parsed as Prometheus parses it."""
    return {
        sample.labels["decision"]: sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == "prmkit_gate_decisions_total"
    }


def _trace(like: Trace, steps: list[str], answer: str | None) -> Trace:
    return Trace(id="new", problem=like.problem, steps=[Step(text=s) for s in steps], final_answer=answer)


def _first_passing_seed(trace: Trace, kept: int, seeds: range) -> int:
    """The first seed whose world-policy continuation from ``trace``'s first ``kept`` steps is right by the
    gold checker, computed in process (the gate reaches the policy over HTTP)."""
    policy = load_policy("arithmetic")
    for seed in seeds:
        (cont,) = policy.continue_from(trace.problem, trace.steps[:kept], 1, seed=seed)
        new = Trace(id="c", problem=trace.problem, steps=[*trace.steps[:kept], *cont.steps])
        if check_trace(new).first_error == -1 and cont.final_answer is not None:
            return seed
    raise AssertionError(f"no seed in {seeds} continues {trace.id} rightly")
