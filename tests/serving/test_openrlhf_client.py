"""Issue 36's acceptance test: OpenRLHF's own remote-reward client code against a real prmkit server.

The client code is OpenRLHF's, copied verbatim (``tests/serving/openrlhf_client.py`` names the
releases, files and lines): 0.11.2's ``SingleTurnAgentExecutor`` (``aiohttp``, one sample per call, the
newest) and 0.9.0's ``RemoteRewardModel`` (``requests``, a batch split over the URLs). Where
``.openrlhf-0.11.2`` holds the wheel (``pip install --no-deps --target .openrlhf-0.11.2 openrlhf==0.11.2
pylatexenc==2.11``), the executor tests also run the real module. The server is ``prmkit serve
arithmetic-oracle`` on loopback, fed OpenRLHF's README input template, so every reward is a gold one. Each
case lost every reward of its batch before: an empty list for a second reward URL (422), a key
(401: OpenRLHF sends no header, only URL userinfo), a response of more than 256 steps (422).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import torch

from prmkit.scoring.aggregate import aggregate
from prmkit.serving.reward_server import ServerConfig, create_app
from prmkit.worlds.arithmetic import generate_problems, sample_traces
from prmkit.worlds.arithmetic.oracle import OracleScorer
from tests.serving import openrlhf_client as openrlhf
from tests.serving.conftest import run_server
from tests.serving.test_metrics import metric_value, request_counts
from tests.worlds.arithmetic.test_parse import OPENRLHF_INPUT_TEMPLATE

KEY = "s3cret-key"
REAL = Path(__file__).resolve().parents[2] / ".openrlhf-0.11.2"
MAX_LEN = 100_000
"""OpenRLHF's ``max_length`` (prompt + response tokens): room for a 300-step response."""


def _samples(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` world problems in OpenRLHF's README template with a sampled response each, right and wrong
    ones in turn, and the gold reward (the oracle's ``min``) each should get."""
    traces = sample_traces(generate_problems(8 * n, seed=seed, split="test"), 1, seed=seed)
    golds = [aggregate(row, "min") for row in OracleScorer().score(traces)]
    right = [t for t, g in zip(traces, golds, strict=True) if g == 1.0]
    wrong = [t for t, g in zip(traces, golds, strict=True) if g == 0.0]
    picked = [(right if k % 2 else wrong)[k // 2] for k in range(n)]
    return [
        {
            "prompt": OPENRLHF_INPUT_TEMPLATE.format(t.problem.text),
            "response": "\n".join(s.text for s in t.steps),
            "label": t.problem.answer,
            "gold": float(k % 2),
        }
        for k, t in enumerate(picked)
    ]


def _overlong(sample: dict[str, Any], steps: int = 300) -> dict[str, Any]:
    """``sample`` with a response of ``steps`` steps, its first repeated before the answer step."""
    first, *_, answer = sample["response"].split("\n")
    return {**sample, "response": "\n".join([first] * (steps - 1) + [answer])}


class CharTokenizer:
    """One token per character, so ``decode`` of prompt + response ids gives their text back exactly,
    as a chat tokenizer does for the text OpenRLHF decodes into ``query``."""

    def __call__(self, text: str, add_special_tokens: bool = False, return_tensors: str = "pt") -> dict:
        return {"input_ids": torch.tensor([[ord(c) for c in text]])}

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(map(chr, ids))


class ScriptedEngine:
    """vLLM's async engine as the executor calls it: ``generate`` answers a prompt with its response."""

    def __init__(self, samples: list[dict[str, Any]]):
        self.responses = {s["prompt"]: s["response"] for s in samples}

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data=None):
        text = self.responses["".join(map(chr, prompt_token_ids))]
        out = SimpleNamespace(
            token_ids=[ord(c) for c in text], text=text, finish_reason="stop", logprobs=None
        )
        return SimpleNamespace(outputs=[out])


def _executor_class(source: str) -> type:
    if openrlhf.aiohttp is None:
        pytest.skip("aiohttp is not installed: OpenRLHF 0.11.2's client posts with it")
    if source == "copied":
        return openrlhf.SingleTurnAgentExecutor
    if not (REAL / "openrlhf").is_dir():
        pytest.skip(f"no OpenRLHF 0.11.2 wheel in {REAL.name} (see this file's docstring)")
    sys.path.insert(0, str(REAL))
    try:
        from openrlhf.utils.agent import SingleTurnAgentExecutor
    finally:
        sys.path.remove(str(REAL))
    return SingleTurnAgentExecutor


def _execute(executor_class: type, urls: list[str], samples: list[dict[str, Any]]) -> list[dict]:
    """OpenRLHF 0.11.2's rollout of each sample: generate, decode prompt + response into ``query``, fetch
    its reward over HTTP (``--reward.remote_url`` split at commas, as ``train_ppo_ray`` does)."""
    executor = executor_class(urls)
    engine, params = ScriptedEngine(samples), SimpleNamespace(max_tokens=MAX_LEN // 2, logprobs=None)

    async def rollouts() -> list[dict]:
        outputs = []
        for s in samples:  # one at a time, so the URLs take turns in a known order
            outputs.append(
                await executor.execute(s["prompt"], s["label"], params, MAX_LEN, CharTokenizer(), engine)
            )
        return outputs

    return asyncio.run(rollouts())


def _batch(urls: list[str], samples: list[dict[str, Any]], group: int = 2) -> list[SimpleNamespace]:
    """OpenRLHF 0.9.0's reward step: one batch split over the URLs (``RemoteRewardModel.get_rewards``),
    the answers put back on the experience groups (``update_samples_with_rewards``)."""
    model = openrlhf.RemoteRewardModel.remote(SimpleNamespace(micro_rollout_batch_size=group), urls)
    queries = [s["prompt"] + s["response"] for s in samples]
    prompts, labels = [s["prompt"] for s in samples], [s["label"] for s in samples]
    rewards_info = openrlhf.ray.get(model.get_rewards(queries, prompts, labels))
    sizes = [min(group, len(samples) - i) for i in range(0, len(samples), group)]
    groups = [SimpleNamespace(sequences=[None] * k, info={}) for k in sizes]
    return openrlhf.update_samples_with_rewards(rewards_info, groups)


def _per_sample(groups: list[SimpleNamespace], key: str) -> list[float]:
    """``key`` (``rewards``, or an ``extra_logs`` key) of every sample, group after group."""
    return [float(x) for g in groups for x in (g.rewards if key == "rewards" else g.info[key])]


@pytest.fixture
def two_servers() -> Iterator[tuple[str, str]]:
    with run_server(create_app(OracleScorer())) as a, run_server(create_app(OracleScorer())) as b:
        yield a, b


@pytest.mark.parametrize("source", ["copied", "real"])
def test_two_reward_urls_openrlhf_0_11(two_servers: tuple[str, str], source: str) -> None:
    """0.11.2 rotates the URLs across one-sample calls: every rollout gets its reward from either."""
    a, b = two_servers
    samples = _samples(6, seed=5)
    outputs = _execute(_executor_class(source), [f"{a}/get_reward", f"{b}/get_reward"], samples)
    assert [o["reward"] for o in outputs] == [[s["gold"]] for s in samples]
    assert all(o["extra_logs"]["prm_overlong"] == [0.0] for o in outputs)
    for url in two_servers:  # three calls each
        assert request_counts(httpx.get(f"{url}/metrics").text)[("/get_reward", "200")] == 3


def test_two_reward_urls_openrlhf_0_9_with_an_empty_shard(two_servers: tuple[str, str]) -> None:
    """0.9.0 splits a batch in ceil(n / URLs) pieces, so a URL can get ``{"query": []}`` (and 0.9.1 to
    0.11.1 split each one-sample call so, sending the second URL an empty list every time): that answer
    is empty lists with the same ``extra_logs`` keys, which ``torch.cat`` joins to the others."""
    a, b = (f"{u}/get_reward" for u in two_servers)
    samples = _samples(3, seed=6)
    one = _batch([a, b], samples[:1], group=1)  # 1 sample over 2 URLs: b gets []
    three = _batch([a, b, a, b], samples)  # 3 samples over 4 URLs: 1, 1, 1, 0
    assert _per_sample(one, "rewards") == [samples[0]["gold"]]
    assert _per_sample(three, "rewards") == [s["gold"] for s in samples]
    assert _per_sample(three, "prm_overlong") == [0.0, 0.0, 0.0]
    page = httpx.get(f"{two_servers[1]}/metrics").text
    assert request_counts(page)[("/get_reward", "200")] == 3  # two empty lists and one sample
    assert metric_value(page, "prmkit_scored_traces_total") == 1.0


@pytest.mark.parametrize("source", ["copied", "real"])
def test_a_key_in_the_url_reaches_a_server_with_a_key(source: str) -> None:
    """OpenRLHF sends no header of its own: ``http://prmkit:KEY@host:port/get_reward`` becomes Basic auth
    in ``aiohttp`` (0.11) and ``requests`` (0.9), and the server takes the key as its password."""
    executor_class = _executor_class(source)
    samples = _samples(4, seed=7)
    with run_server(create_app(OracleScorer(), ServerConfig(api_key=KEY))) as url:
        keyed = url.replace("http://", f"http://prmkit:{KEY}@") + "/get_reward"
        outputs = _execute(executor_class, [keyed], samples)
        groups = _batch([keyed], samples)

        async def wrong_key() -> int:
            async with (
                openrlhf.aiohttp.ClientSession() as session,
                session.post(keyed.replace(KEY, "wrong"), json={"query": []}) as response,
            ):
                return response.status

        assert asyncio.run(wrong_key()) == 401
    assert [o["reward"] for o in outputs] == [[s["gold"]] for s in samples]
    assert _per_sample(groups, "rewards") == [s["gold"] for s in samples]


@pytest.mark.parametrize("source", ["copied", "real"])
def test_a_300_step_response_gets_the_unfinished_rule(source: str) -> None:
    """More steps than ``--max-steps-per-trace`` (256) is paid ``unfinished_reward`` (here -0.5; 0.0
    where it is None), marked ``prm_overlong`` and counted; the rest of the batch is scored as usual."""
    executor_class = _executor_class(source)
    short, other = _samples(2, seed=8)
    samples = [_overlong(short), other]
    assert len(samples[0]["response"].split("\n")) == 300
    with run_server(create_app(OracleScorer(), ServerConfig(unfinished_reward=-0.5))) as url:
        outputs = _execute(executor_class, [f"{url}/get_reward"], samples)
        groups = _batch([f"{url}/get_reward"], samples)
        overlong = metric_value(httpx.get(f"{url}/metrics").text, "prmkit_overlong_responses_total")
    assert [o["reward"] for o in outputs] == [[-0.5], [other["gold"]]]
    assert outputs[0]["scores"] == [0.0]  # OpenRLHF's ``scores`` (dynamic filtering) are clipped to [0, 1]
    assert [o["extra_logs"]["prm_overlong"] for o in outputs] == [[1.0], [0.0]]
    assert _per_sample(groups, "rewards") == [-0.5, other["gold"]]
    assert _per_sample(groups, "prm_overlong") == [1.0, 0.0]
    assert overlong == 2.0  # once per client
