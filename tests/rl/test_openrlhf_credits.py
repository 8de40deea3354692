"""Why OpenRLHF 0.11.2 takes none of prmkit's credit forms (docs/rl.md, "Credit forms"), checked on
OpenRLHF's own code in ``.openrlhf-0.11.2`` (``make openrlhf-client``; skipped without it).

Two facts decide it, and both are OpenRLHF's: an experience's ``rewards`` is an episode field, one number
per response (``Experience``), so no per-token credit can reach its advantages; and the rollout asks a
reward function about one response at a time (``SingleTurnAgentExecutor.execute``, run ``num_samples``
times per prompt by ``vllm_engine.generate_responses``), so no group-relative form can be computed where
prmkit's reward function runs. What OpenRLHF does take, one aggregate per response, is what prmkit's
``reward_func`` returns through that same executor.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from prmkit.core.registry import Registry
from prmkit.rl.openrlhf import reward_func
from prmkit.scoring.aggregate import aggregate
from prmkit.worlds.arithmetic import generate_problems, sample_traces
from prmkit.worlds.arithmetic.oracle import OracleScorer
from tests.serving.test_openrlhf_client import REAL, CharTokenizer
from tests.worlds.arithmetic.test_parse import OPENRLHF_INPUT_TEMPLATE

GROUP = 4


@pytest.fixture(scope="module")
def openrlhf() -> Iterator[ModuleType]:
    """OpenRLHF 0.11.2's own package, from the folder ``make openrlhf-client`` fills."""
    if not (REAL / "openrlhf").is_dir():
        pytest.skip(f"no OpenRLHF 0.11.2 in {REAL.name}: `make openrlhf-client`")
    pytest.importorskip("aiohttp")  # openrlhf.utils.agent imports it
    sys.path.insert(0, str(REAL))
    try:
        import openrlhf
        import openrlhf.trainer.ppo_utils.experience
        import openrlhf.utils.agent
    finally:
        sys.path.remove(str(REAL))
    assert Path(openrlhf.__file__).is_relative_to(REAL)
    yield openrlhf


def test_openrlhf_rewards_are_one_number_per_response(openrlhf: ModuleType) -> None:
    """``rewards`` is an episode tensor, (B,), and ``advantages`` a step tensor, (B, A), that OpenRLHF
    computes itself from the rewards (``RemoteExperienceMaker.compute_advantages_and_returns``)."""
    experience = openrlhf.trainer.ppo_utils.experience.Experience
    assert experience.is_episode_tensor_field("rewards") and not experience.is_step_tensor_field("rewards")
    assert experience.is_step_tensor_field("advantages")


class GroupEngine:
    """vLLM's engine as the executor calls it: the ``k``-th call answers with the ``k``-th response."""

    def __init__(self, responses: list[str]):
        self.responses = iter(responses)

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data=None):
        text = next(self.responses)
        out = SimpleNamespace(
            token_ids=[ord(c) for c in text], text=text, finish_reason="stop", logprobs=None
        )
        return SimpleNamespace(outputs=[out])


def test_the_reward_function_sees_one_response_of_its_group_at_a_time(
    openrlhf: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group of four responses to one prompt, rolled out as ``generate_responses`` does (``num_samples``
    executions gathered): prmkit's ``reward_func`` (re-exported from a file, as ``--reward.remote_url
    reward.py`` loads it) is called once per response with one query, and pays each its aggregate."""
    traces = sample_traces(generate_problems(1, seed=11, split="test"), GROUP, seed=3)
    prompt = OPENRLHF_INPUT_TEMPLATE.format(traces[0].problem.text)
    responses = ["\n".join(s.text for s in t.steps) for t in traces]
    golds = [aggregate(row, "min") for row in OracleScorer().score(traces)]
    path = tmp_path / "reward.py"
    path.write_text(
        "from prmkit.rl.openrlhf import reward_func as prmkit_reward\n"
        "CALLS = []\n"
        "def reward_func(queries, prompts, labels, **kwargs):\n"
        "    CALLS.append(len(queries))\n"
        "    return prmkit_reward(queries, prompts, labels, **kwargs)\n"
    )
    monkeypatch.setenv("PRMKIT_REWARD_MODEL", "arithmetic-oracle")
    executor = openrlhf.utils.agent.SingleTurnAgentExecutor(str(path))
    engine, params = GroupEngine(responses), SimpleNamespace(max_tokens=4096, logprobs=None)

    async def generate_responses() -> list[dict]:  # vllm_engine.generate_responses, num_samples = GROUP
        runs = [executor.execute(prompt, "", params, 8192, CharTokenizer(), engine) for _ in range(GROUP)]
        return await asyncio.gather(*runs)

    outputs = asyncio.run(generate_responses())
    assert executor.reward_func.__globals__["CALLS"] == [1] * GROUP  # never the group
    assert [o["reward"].tolist() for o in outputs] == [[g] for g in golds]
    assert len(set(golds)) > 1  # the group has right and wrong answers: a group form would differ
    query = prompt + responses[0]
    assert reward_func([query], [prompt], [""])["rewards"].tolist() == [golds[0]]


def test_reward_threads_that_look_up_a_scorer_first_all_find_it() -> None:
    """OpenRLHF calls ``reward_func`` from several threads at once (``asyncio.to_thread``, one per sample),
    so the first scorer lookups of a run race: a registry whose derived entries (the worlds' oracles) were
    still being added answered "unknown 'arithmetic-oracle'. Did you mean 'arithmetic-oracle'?" to the
    others, and OpenRLHF logged the sample's reward as failed. Every thread now waits for the one scan."""
    worlds: Registry[tuple[str, ...]] = Registry("world")
    worlds.register("arithmetic", ("world", "arithmetic"))
    scorers: Registry[tuple[str, ...]] = Registry("scorer form")
    entered = threading.Event()

    def slow_make(name: str) -> tuple[str, ...]:  # the scan takes a while, as importing a world does
        entered.set()
        time.sleep(0.2)
        return ("oracle", name)

    scorers.derive(worlds, lambda n: f"{n}-oracle", slow_make)
    with ThreadPoolExecutor(GROUP) as pool:
        first = pool.submit(scorers.get, "arithmetic-oracle")
        assert entered.wait(5)  # the first lookup is scanning: the others ask meanwhile
        rest = [pool.submit(scorers.get, "arithmetic-oracle") for _ in range(GROUP - 1)]
        assert [f.result(timeout=5) for f in (first, *rest)] == [("oracle", "arithmetic")] * GROUP
