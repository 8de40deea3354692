"""The reward server over real HTTP on loopback: scores equal offline scoring, overload, bad input."""

from __future__ import annotations

import asyncio
import concurrent.futures

import httpx
import pytest

from prmkit.core.steps import make_trace
from prmkit.scoring.aggregate import aggregate
from prmkit.scoring.remote import RemoteScorer, RemoteScoringError
from prmkit.serving.reward_server import ServerConfig, create_app
from tests.serving.conftest import HashScorer, run_server
from tests.serving.test_metrics import metric_value, request_counts


def _traces(k: int) -> list[dict]:
    return [{"problem": f"problem {k}", "steps": [f"step {k}.{j}" for j in range(1 + k % 4)]}]


def test_concurrent_clients_get_offline_scores() -> None:
    scorer = HashScorer(delay=0.01)
    config = ServerConfig(max_wait_ms=20)
    with run_server(create_app(scorer, config)) as url:

        async def main() -> list[dict]:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                responses = await asyncio.gather(
                    *(client.post("/score", json={"traces": _traces(k)}) for k in range(24))
                )
            assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
            return [r.json() for r in responses]

        bodies = asyncio.run(main())
        metrics = httpx.get(f"{url}/metrics").text
    for k, body in enumerate(bodies):
        (item,) = _traces(k)
        offline = HashScorer().score([make_trace(item["problem"], item["steps"])])[0]
        assert body["results"][0]["step_scores"] == offline
        assert body["results"][0]["score"] == aggregate(offline, "min")
    assert max(scorer.calls) > 1, f"no request shared a forward pass: {scorer.calls}"
    assert len(scorer.calls) < 24
    assert request_counts(metrics)[("/score", "200")] == 24
    assert "prmkit_batch_traces_count" in metrics


def test_overload_answers_503_and_keeps_serving() -> None:
    scorer = HashScorer(delay=0.2)
    config = ServerConfig(max_queue_traces=4, max_batch_traces=2, max_wait_ms=0)
    with run_server(create_app(scorer, config)) as url:

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                return await asyncio.gather(
                    *(client.post("/score", json={"traces": _traces(k)}) for k in range(30))
                )

        responses = asyncio.run(burst())
        codes = [r.status_code for r in responses]
        busy = [r for r in responses if r.status_code == 503]
        assert busy and codes.count(200) >= 4, codes
        assert set(codes) <= {200, 503}
        assert busy[0].headers["retry-after"] == "1"
        assert "queue holds at most 4" in busy[0].json()["detail"]
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
        again = httpx.post(f"{url}/score", json={"traces": _traces(1)}, timeout=30)
        assert again.status_code == 200
        assert "prmkit_rejected_requests_total" in httpx.get(f"{url}/metrics").text


def test_malformed_requests_get_4xx_with_messages() -> None:
    config = ServerConfig(max_body_bytes=2000, max_steps_per_trace=3, max_traces_per_request=2, api_key="k3y")
    auth = {"Authorization": "Bearer k3y"}
    with run_server(create_app(HashScorer(), config)) as url, httpx.Client(base_url=url, timeout=30) as c:
        r = c.post("/score", json={"traces": _traces(1)})
        assert r.status_code == 401 and "API key" in r.json()["detail"]
        assert c.post("/score", json={"traces": _traces(1)}, headers={"X-API-Key": "k3y"}).status_code == 200
        r = c.post("/score", content=b"{not json", headers={**auth, "content-type": "application/json"})
        assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid"
        r = c.post("/score", json={"traces": [{"problem": "p", "steps": "not a list"}]}, headers=auth)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "traces", 0, "steps"]
        r = c.post("/score", json={"traces": [{"problem": "p"}]}, headers=auth)
        assert r.status_code == 422 and "exactly one of 'steps'" in r.json()["detail"]
        r = c.post("/score", json={"traces": [{"problem": "p", "steps": list("abcd")}]}, headers=auth)
        assert (
            r.status_code == 422
            and "4 steps" in r.json()["detail"]
            and "--max-steps-per-trace" in r.json()["detail"]
        )
        r = c.post("/score", json={"traces": _traces(1) * 3}, headers=auth)
        assert r.status_code == 413 and "3 traces" in r.json()["detail"]
        r = c.post("/score", json={"traces": [{"problem": "x" * 5000, "steps": ["a"]}]}, headers=auth)
        assert r.status_code == 413 and "--max-body-bytes" in r.json()["detail"]
        chunked = c.post("/score", content=iter([b"{" + b" " * 1500, b" " * 1500 + b"}"]), headers=auth)
        assert chunked.status_code == 413 and "exceeds 2000 bytes" in chunked.json()["detail"]
        small = c.post(
            "/score",
            content=iter([b'{"traces": [{"problem": "p", ', b'"steps": ["a"]}]}']),
            headers={**auth, "content-type": "application/json"},
        )
        assert small.status_code == 200, small.text  # a chunked body under the limit is replayed intact
        r = c.post("/score", json={"traces": _traces(1), "aggregation": "median-ish"}, headers=auth)
        assert r.status_code == 422 and "median-ish" in r.json()["detail"]
        r = c.post("/get_reward", json={"query": ["a", "b"], "prompts": ["a"]}, headers=auth)
        assert r.status_code == 422 and "'prompts' has 1 items" in r.json()["detail"]
        assert c.get("/health").status_code == 200  # open without a key
        assert c.get("/docs").status_code == 200
        assert "/get_reward" in c.get("/openapi.json").json()["paths"]


def test_get_reward_and_pooling_shapes() -> None:
    with (
        run_server(create_app(HashScorer(), ServerConfig(aggregation="last"))) as url,
        httpx.Client(base_url=url) as c,
    ):
        prompt = "<|im_start|>user\nTom has 3 apples.<|im_end|>\n<|im_start|>assistant\n"
        query = prompt + "3 + 4 = 7\nThe answer is 7.<|im_end|>"
        body = c.post(
            "/get_reward", json={"query": [query, prompt], "prompts": [prompt, prompt], "labels": ["7", "7"]}
        ).json()
        expected = HashScorer().score([make_trace("Tom has 3 apples.", ["3 + 4 = 7", "The answer is 7."])])[0]
        assert body["rewards"] == [expected[-1], 0.0]
        assert body["scores"] == body["rewards"]
        assert body["extra_logs"]["prm_num_steps"] == [2.0, 0.0]

        text = "<|im_start|>user\nTom has 3 apples.<|im_end|>\n<|im_start|>assistant\n3 + 4 = 7<extra_0>The answer is 7.<extra_0>"
        pool = c.post("/pooling", json={"model": "m", "input": [text], "task": "token_classify"}).json()
        assert pool["object"] == "list" and pool["model"] == "m" and pool["id"].startswith("pool-")
        (item,) = pool["data"]
        assert item["object"] == "pooling" and item["index"] == 0
        assert [pair[1] for pair in item["data"]] == expected
        assert all(abs(sum(pair) - 1.0) < 1e-9 for pair in item["data"])


@pytest.mark.parametrize("unfinished_reward", [0.0, -1.0, None])
def test_get_reward_pays_an_unfinished_response_as_prmkit_rl_does(unfinished_reward) -> None:
    """A response that never states an answer earns ``unfinished_reward`` (so a policy paid by ``min``
    gains nothing by stopping before its risky step); text after the answer step is not scored."""
    config = ServerConfig(aggregation="min", unfinished_reward=unfinished_reward)
    with run_server(create_app(HashScorer(), config)) as url, httpx.Client(base_url=url) as c:
        prompt = "<|im_start|>user\nTom has 3 apples.<|im_end|>\n<|im_start|>assistant\n"
        stopped = prompt + "3 + 4 = 7<|im_end|>"
        rambling = prompt + "3 + 4 = 7\nThe answer is 7.\nI could also say 8.<|im_end|>"
        body = c.post("/get_reward", json={"query": [stopped, rambling], "prompts": [prompt, prompt]}).json()
    score = HashScorer().score
    answered = min(score([make_trace("Tom has 3 apples.", ["3 + 4 = 7", "The answer is 7."])])[0])
    (alone,) = score([make_trace("Tom has 3 apples.", ["3 + 4 = 7"])])
    first = min(alone) if unfinished_reward is None else unfinished_reward
    assert body["rewards"] == [first, answered]
    assert body["extra_logs"]["prm_unfinished"] == [float(unfinished_reward is not None), 0.0]
    assert body["extra_logs"]["prm_num_steps"] == [1.0, 2.0]  # the steps read, scored or not


def test_remote_scorer_retries_busy_server_and_raises_4xx() -> None:
    config = ServerConfig(max_queue_traces=1, max_wait_ms=0, max_steps_per_trace=3)
    with run_server(create_app(HashScorer(delay=0.05), config)) as url:
        remote = RemoteScorer(url, retries=20)
        traces = [make_trace(f"p{k}", [f"s{k}"]) for k in range(6)]
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            rows = list(pool.map(lambda t: remote.score([t])[0], traces))
        assert rows == [HashScorer().score([t])[0] for t in traces]  # every 503 was retried to success
        with pytest.raises(RemoteScoringError, match="--max-steps-per-trace"):
            remote.score([make_trace("p", list("abcd"))])


def test_an_empty_batch_gets_an_empty_answer() -> None:
    """OpenRLHF splits a batch over its reward URLs (``--reward.remote_url a,b``) and sends the last an
    empty list when the batch is smaller; a 422 there cost every sample of the batch its reward."""
    with run_server(create_app(HashScorer())) as url, httpx.Client(base_url=url) as c:
        r = c.post("/get_reward", json={"query": [], "prompts": [], "labels": []})
        assert r.status_code == 200, r.text
        logs = {"prm_unfinished", "prm_overlong", "prm_num_steps", "prm_min_step", "prm_last_step"}
        assert r.json() == {"rewards": [], "scores": [], "extra_logs": {k: [] for k in logs}}
        assert c.post("/get_reward", json={"query": []}).json()["rewards"] == []  # no prompts at all
        r = c.post("/score", json={"traces": []})
        assert r.status_code == 200, r.text
        assert r.json() == {"model": "hash", "aggregation": "min", "results": []}


@pytest.mark.parametrize("unfinished_reward", [-0.5, None])
def test_get_reward_pays_an_overlong_response_by_the_unfinished_rule(unfinished_reward) -> None:
    """More steps than ``--max-steps-per-trace`` (counted up to and with the answer step) is paid as
    an unfinished response (0.0 where ``unfinished_reward`` is None) and counted, never a 422 that
    costs the batch; ``/score``, a scoring API, still refuses the same steps sent explicitly."""
    config = ServerConfig(max_steps_per_trace=3, unfinished_reward=unfinished_reward)
    problem = "Tom has 3 apples."
    long_answer = "a\nb\nc\nThe answer is 7."  # 4 steps with the answer step
    short_answer = "a\nb\nThe answer is 7.\nd\ne\nf"  # 3 steps: what follows the answer is not counted
    with run_server(create_app(HashScorer(), config)) as url, httpx.Client(base_url=url) as c:
        body = {
            "query": [problem + "\n" + x for x in (long_answer, short_answer)],
            "prompts": [problem + "\n"] * 2,
        }
        r = c.post("/get_reward", json=body)
        assert r.status_code == 200, r.text
        scored = c.post("/score", json={"traces": [{"problem": problem, "completion": long_answer}]})
        page = c.get("/metrics").text
        health = c.get("/health").json()
    (short,) = HashScorer().score([make_trace(problem, ["a", "b", "The answer is 7."])])
    rule = 0.0 if unfinished_reward is None else unfinished_reward
    assert r.json()["rewards"] == [rule, min(short)]
    assert r.json()["extra_logs"]["prm_overlong"] == [1.0, 0.0]
    assert r.json()["extra_logs"]["prm_unfinished"] == [0.0, 0.0]  # both state an answer
    # the steps it read, not 0 for the over-long one it paid without scoring (issue 66, item 4)
    assert r.json()["extra_logs"]["prm_num_steps"] == [4.0, 3.0]
    assert metric_value(page, "prmkit_overlong_responses_total") == 1.0
    assert scored.status_code == 422 and "4 steps" in scored.json()["detail"]
    assert health["max_steps_per_trace"] == 3  # a client that cuts steps itself applies the rule first


def test_health_reports_what_a_client_needs() -> None:
    with run_server(create_app(HashScorer())) as url:
        health = httpx.get(f"{url}/health").json()
        schema = httpx.get(f"{url}/openapi.json").json()
    assert health == {
        "status": "ok",
        "model": "hash",
        "queued_traces": 0,
        "threshold": None,
        "max_steps_per_trace": ServerConfig().max_steps_per_trace,
    }
    assert "max_steps_per_trace" in schema["components"]["schemas"]["HealthResponse"]["required"]
