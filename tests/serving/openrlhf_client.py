"""OpenRLHF's own remote-reward client code, copied verbatim, so the tests speak to prmkit's server
exactly as OpenRLHF does. OpenRLHF does not install beside prmkit with its dependencies (0.11.2 pins
transformers 5.15.0 where prmkit is tested with 5.23, and needs deepspeed, flash-attn and ray).
``pip download openrlhf==0.11.2 --no-deps`` works, and its ``openrlhf.utils.agent`` then imports with
``aiohttp`` and ``pylatexenc`` added (``openrlhf/utils/__init__.py`` pulls in ``math_utils``), but a test
must not download, so the code is copied here; tests/serving/test_openrlhf_client.py also runs the
real module where ``.openrlhf-0.11.2`` holds the wheel.

Source: https://github.com/OpenRLHF/OpenRLHF, Apache License 2.0 (Copyright the OpenRLHF authors).
Nothing below the marked imports is changed. Two clients:

- **OpenRLHF 0.11.2**, the newest release (PyPI wheel ``openrlhf-0.11.2-cp311-cp311-manylinux1_x86_64.whl``,
  sha256 c969d70db03a70724c3d8a5a01186c6e0728bce624fb3dff95e39b5396acefa6), ``openrlhf/utils/agent.py``
  lines 13-16 and 188-365: ``AgentExecutorBase`` and ``SingleTurnAgentExecutor``. From 0.9.1 on the
  remote reward is fetched here, one sample at a time, posted with ``aiohttp`` and no header of its own.
  0.11.2 rotates the reward URLs across calls and sends no empty shard; 0.9.1 to 0.11.1 (e.g. v0.11.0,
  commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7) split each one-sample call over every URL, so the
  second of two got ``{"query": []}`` every time.
- **OpenRLHF 0.9.0** (tag v0.9.0, commit 06ab51e75c0e8c5b4d6b66912996b2a611e3dc2f; the PyPI wheel's files
  are the same), the last release with ``openrlhf/utils/remote_rm_utils.py`` (deleted in 6298708, before
  0.9.1), lines 10-83: ``request_api_wrapper``, ``remote_rm_fn_ray`` and ``RemoteRewardModel`` (a whole
  batch split over the URLs, empty shards included, posted with ``requests``); and lines 208-244 of
  ``openrlhf/trainer/ppo_utils/experience_maker.py``: ``update_samples_with_rewards``, which puts the
  URLs' answers back together key by key with ``torch.cat``.

Adapted imports: ``init_logger`` (``openrlhf.utils.logging_utils``) is a plain ``logging`` logger;
``ray`` is :class:`_InProcessRay`, which runs a ``@ray.remote`` function or class at once when
``.remote(...)`` is called and whose ``get`` returns what it is given (the copied code needs no more
of Ray); ``aiohttp`` is None where it is not installed (the 0.11.2 tests then skip).
"""

# ruff: noqa
# fmt: off
# (verbatim third-party code: prmkit's lint and format rules are not applied to it)

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from copy import deepcopy
from itertools import cycle

import requests
import torch

try:
    import aiohttp
except ImportError:  # adapted: the 0.11.2 client's tests skip without it
    aiohttp = None


def init_logger(name):  # adapted: openrlhf.utils.logging_utils.init_logger
    return logging.getLogger(name)


class _InProcessRay:  # adapted: `import ray`
    """``@ray.remote`` and ``ray.get`` as the copied code uses them, run in this process."""

    @staticmethod
    def remote(obj):
        obj.remote = obj
        return obj

    @staticmethod
    def get(refs):
        return refs


ray = _InProcessRay()

logger = init_logger(__name__)


# ---- OpenRLHF 0.11.2, openrlhf/utils/agent.py, lines 13-16 ----


class AgentExecutorBase(ABC):
    @abstractmethod
    async def execute(self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None):
        raise NotImplementedError("AgentExecutorBase.execute is not implemented")

# ---- OpenRLHF 0.11.2, openrlhf/utils/agent.py, lines 188-365 ----


class SingleTurnAgentExecutor(AgentExecutorBase):
    """Single-turn agent executor with optional reward post-processing."""

    def __init__(self, remote_rm_url=None):
        reward_endpoints = [remote_rm_url] if isinstance(remote_rm_url, str) else remote_rm_url
        self.reward_endpoints = reward_endpoints or []
        self._reward_endpoint_cycle = cycle(self.reward_endpoints)

        # Optional user-provided reward_func from a Python file.
        self.reward_func = None
        if self.reward_endpoints and self.reward_endpoints[0].endswith(".py"):
            logger.info(f"Loading custom `reward_func(queries, prompts, labels)` from {self.reward_endpoints[0]}")
            import importlib.util

            spec = importlib.util.spec_from_file_location("reward_func", self.reward_endpoints[0])
            reward_module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(reward_module)
            self.reward_func = reward_module.reward_func

    async def execute(self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None):
        # Tokenize — for VLM the processor inserts image tokens and returns pixel tensors.
        pil_images = []
        mm_train_inputs = None
        if images and hasattr(hf_tokenizer, "image_processor"):
            from openrlhf.utils.vlm_utils import process_prompt_with_images

            prompt_token_ids, mm_train_inputs, pil_images = process_prompt_with_images(hf_tokenizer, prompt, images)
        else:
            prompt_token_ids = hf_tokenizer(text=prompt, add_special_tokens=False, return_tensors="pt")["input_ids"][
                0
            ].tolist()

        # Compute dynamic max_tokens when not explicitly set (prompt + response share max_length budget)
        effective_params = sampling_params
        if sampling_params.max_tokens is None:
            effective_params = deepcopy(sampling_params)
            effective_params.max_tokens = max(1, max_length - len(prompt_token_ids))

        # Truncate prompt if it's too long to leave room for generation
        max_prompt_length = max_length - effective_params.max_tokens
        if len(prompt_token_ids) > max_prompt_length:
            if pil_images:
                raise ValueError(
                    f"VLM prompt length ({len(prompt_token_ids)}) exceeds max_prompt_length ({max_prompt_length}). "
                    f"Truncating VLM prompts would break image token alignment with pixel_values. "
                    f"Please increase --max_len or decrease --max_new_tokens."
                )
            logger.warning(
                f"Prompt length ({len(prompt_token_ids)}) exceeds max_prompt_length ({max_prompt_length}). "
                f"Truncating to fit within max_length ({max_length}) with max_tokens ({effective_params.max_tokens})."
            )
            prompt_token_ids = prompt_token_ids[-max_prompt_length:]

        # Reuse already-loaded PIL images for vLLM generation.
        mm_data = {"image": pil_images} if pil_images else None

        # Generate one continuation from the engine.
        request_output = await llm_engine.generate(
            prompt_token_ids, deepcopy(effective_params), multi_modal_data=mm_data
        )
        generation_output = request_output.outputs[0]
        action_token_ids = generation_output.token_ids

        # Check if response was truncated (hit max_tokens length limit)
        is_truncated = generation_output.finish_reason == "length"

        # Stitch prompt + action together for downstream consumers.
        observation_token_ids = prompt_token_ids + action_token_ids
        action_ranges = [(len(prompt_token_ids), len(observation_token_ids))]

        # Calculate rollout log probs.
        rollout_log_probs = None
        if sampling_params.logprobs is not None and generation_output.logprobs is not None:
            rollout_log_probs = [0.0] * len(prompt_token_ids)
            for token_id, logprob_dict in zip(action_token_ids, generation_output.logprobs):
                token_logprob = logprob_dict.get(token_id)
                rollout_log_probs.append(token_logprob.logprob if token_logprob is not None else 0.0)

        # Store the final response.
        output = {
            # Original prompt/label/images are echoed for convenience.
            "prompt": prompt,
            "label": label,
            "images": images,
            "mm_train_inputs": mm_train_inputs,
            # Token/text observations and action span.
            "observation_tokens": observation_token_ids,
            "action_ranges": action_ranges,
            "rollout_log_probs": rollout_log_probs,
            # Truncation flag (finish_reason == "length")
            "truncated": is_truncated,
            # Reward-related fields (filled by reward/agent variants).
            "reward": None,
            "scores": None,
            "extra_logs": {},
        }

        # Compute reward/score after generation.
        if self.reward_endpoints:
            try:
                query = hf_tokenizer.decode(output["observation_tokens"], skip_special_tokens=False)
                if self.reward_func:
                    rewards_info_list = await self._fetch_rewards_via_func([query], [prompt], [label])
                else:
                    rewards_info_list = await self._fetch_rewards_via_http([query], [prompt], [label])
                rewards_info = rewards_info_list[0] if rewards_info_list else None
                if rewards_info:
                    score_value = rewards_info.get("scores")
                    if score_value is None:
                        score_value = rewards_info.get("rewards")
                    output.update(
                        reward=rewards_info.get("rewards"),
                        scores=score_value,
                        extra_logs=rewards_info.get("extra_logs") or {},
                    )
            except Exception as e:
                logger.info(f"[SingleTurnExecutor] Failed to fetch reward from remote RM: {e}")

        return output

    async def _fetch_rewards_via_func(self, queries_list, prompts_list, labels_list):
        """Compute rewards via user-provided Python function (thread offload)."""
        batch_size = 1
        num_chunks = (len(queries_list) + batch_size - 1) // batch_size

        tasks = []
        for i in range(num_chunks):
            start_idx = i * batch_size
            end_idx = min((i + 1) * batch_size, len(queries_list))
            tasks.append(
                asyncio.to_thread(
                    self.reward_func,
                    queries_list[start_idx:end_idx],
                    prompts_list[start_idx:end_idx],
                    labels_list[start_idx:end_idx],
                )
            )
        return await asyncio.gather(*tasks)

    async def _fetch_rewards_via_http(self, queries_list, prompts_list, labels_list):
        """HTTP fallback: shard requests across servers."""
        num_servers = len(self.reward_endpoints)
        batch_size = (len(queries_list) + num_servers - 1) // num_servers
        timeout = aiohttp.ClientTimeout(total=180)

        tasks = []
        for i in range(num_servers):
            start_idx = i * batch_size
            if start_idx >= len(queries_list):
                break
            # Rollouts usually send one query, so rotate across calls as well as shards.
            rm = next(self._reward_endpoint_cycle)
            end_idx = min((i + 1) * batch_size, len(queries_list))
            payload = {
                "query": queries_list[start_idx:end_idx],
                "prompts": prompts_list[start_idx:end_idx],
                "labels": labels_list[start_idx:end_idx],
            }

            async def _post_request(url, data, try_max_times=5):
                for _ in range(try_max_times):
                    try:
                        async with aiohttp.ClientSession(timeout=timeout) as session:
                            async with session.post(url, json=data) as response:
                                response.raise_for_status()
                                return await response.json()
                    except aiohttp.ClientError as e:
                        logger.info(f"Request error, please check: {e}")
                    except Exception as e:  # pragma: no cover - defensive
                        logger.info(f"Unexpected error, please check: {e}")
                    await asyncio.sleep(1)

                raise RuntimeError(
                    f"Request error for {try_max_times} times, returning None. Please check the API server."
                )

            tasks.append(asyncio.create_task(_post_request(rm, payload)))
        return await asyncio.gather(*tasks)


# ---- OpenRLHF 0.9.0, openrlhf/utils/remote_rm_utils.py, lines 10-83 ----


def request_api_wrapper(url, data, try_max_times=5):
    """Synchronous request API wrapper"""
    headers = {
        "Content-Type": "application/json",
    }
    for _ in range(try_max_times):
        try:
            response = requests.post(url=url, json=data, headers=headers, timeout=180)
            response.raise_for_status()  # Raise an HTTPError for bad responses
            response = response.json()
            return response
        except requests.RequestException as e:
            logger.info(f"Request error, please check: {e}")
        except Exception as e:
            logger.info(f"Unexpected error, please check: {e}")
        time.sleep(1)

    raise Exception(f"Request error for {try_max_times} times, returning None. Please check the API server.")


@ray.remote
def remote_rm_fn_ray(api_url, queries, prompts, labels):
    return request_api_wrapper(api_url, {"query": queries, "prompts": prompts, "labels": labels})


@ray.remote
class RemoteRewardModel:
    def __init__(self, args, remote_rm_url):
        self.args = args
        self.remote_rm_url = [remote_rm_url] if isinstance(remote_rm_url, str) else remote_rm_url
        self.custom_reward_func = None

        if self.remote_rm_url and self.remote_rm_url[0].endswith(".py"):
            print(f"Loading custom `reward_func(queries, prompts, labels)` from {self.remote_rm_url[0]}")
            import importlib.util

            spec = importlib.util.spec_from_file_location("reward_func", self.remote_rm_url[0])
            reward_module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(reward_module)
            self.custom_reward_func = ray.remote(reward_module.reward_func)

    def get_rewards(self, queries_list, prompts_list, labels_list):
        if self.custom_reward_func:
            # Let Ray automatically distribute the workload across available resources
            batch_size = self.args.micro_rollout_batch_size
            num_chunks = (len(queries_list) + batch_size - 1) // batch_size
            r_refs = []
            for i in range(num_chunks):
                start_idx = i * batch_size
                end_idx = min((i + 1) * batch_size, len(queries_list))
                r = self.custom_reward_func.remote(
                    queries_list[start_idx:end_idx],
                    prompts_list[start_idx:end_idx],
                    labels_list[start_idx:end_idx],
                )
                r_refs.append(r)
        else:
            # Distribute data across different remote reward function servers
            num_servers = len(self.remote_rm_url)
            batch_size = (len(queries_list) + num_servers - 1) // num_servers
            r_refs = []
            for i in range(num_servers):
                start_idx = i * batch_size
                end_idx = min((i + 1) * batch_size, len(queries_list))
                rm = self.remote_rm_url[i]
                r = remote_rm_fn_ray.remote(
                    rm,
                    queries=queries_list[start_idx:end_idx],
                    prompts=prompts_list[start_idx:end_idx],
                    labels=labels_list[start_idx:end_idx],
                )
                r_refs.append(r)

        return ray.get(r_refs)


# ---- OpenRLHF 0.9.0, openrlhf/trainer/ppo_utils/experience_maker.py, lines 208-244 ----


def update_samples_with_rewards(rewards_info, samples_list):
    """Process rewards info and update samples with rewards, scores and extra logs.

    Args:
        rewards_info: List of reward information dictionaries
        samples_list: List of Experience objects to update
    """
    # Process rewards and scores
    samples_len = [len(sample.sequences) for sample in samples_list]

    rewards_list = torch.cat([torch.as_tensor(info["rewards"]) for info in rewards_info], dim=0).split(samples_len)
    if "scores" in rewards_info[0]:
        scores_list = torch.cat([torch.as_tensor(info["scores"]) for info in rewards_info], dim=0).split(samples_len)
    else:
        scores_list = rewards_list

    # Process extra_logs if present
    if "extra_logs" in rewards_info[0]:
        # Merge all extra_logs tensors first
        merged_logs = {
            key: torch.cat(
                [torch.as_tensor(logs[key]) for logs in [info["extra_logs"] for info in rewards_info]], dim=0
            ).split(samples_len)
            for key in rewards_info[0]["extra_logs"].keys()
        }

    # Update samples with rewards, scores and extra logs
    for i, samples in enumerate(samples_list):
        samples.rewards = rewards_list[i]
        samples.scores = scores_list[i]
        samples.info["score"] = scores_list[i]
        samples.info["reward"] = rewards_list[i]
        if "extra_logs" in rewards_info[0]:
            for key, values in merged_logs.items():
                samples.info[key] = values[i]

    return samples_list
