"""Reward functions in the shapes RL trainers call, backed by a local PRM or a prmkit server.

- TRL ``GRPOTrainer`` / ``RLOOTrainer``: :func:`trl_reward` returns ``f(prompts, completions,
  completion_ids, **kwargs) -> list[float | None]`` (``async def`` with ``asynchronous=True``); per-step
  scores go to TRL's completions table through ``log_extra``.
- verl: :func:`compute_score` (``custom_reward_function``) and :class:`PrmkitRewardManager`, a dense
  reward manager putting each step's score at the token where the step ends.
- OpenRLHF: the server's ``POST /get_reward``, or :func:`reward_func` for ``--reward.remote_url file.py``.

``model`` is anything :func:`prmkit.serving.remote.load_any_scorer` takes: a checkpoint folder, a server
URL, ``world-oracle`` or a StepScorer object. Scorers are built once per (model, api_key) and reused.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from prmkit.core.protocols import StepScorer
from prmkit.scoring.aggregate import aggregate
from prmkit.serving.remote import RemoteScorer, load_any_scorer
from prmkit.serving.steps import StepSplit, make_trace, message_text, problem_text, split_query


@functools.lru_cache(maxsize=8)
def _cached_scorer(model: str, api_key: str | None) -> StepScorer:
    return load_any_scorer(model, api_key=api_key)


def _scorer(model: str | StepScorer, api_key: str | None = None) -> StepScorer:
    return _cached_scorer(model, api_key) if isinstance(model, str) else model


def _traces(
    prompts: Sequence[Any], completions: Sequence[Any], split: StepSplit, answers: Sequence[Any] | None
):
    out = []
    for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
        answer = None if answers is None or answers[i] is None else str(answers[i])
        problem = problem_text(message_text(prompt, "user"), split)
        out.append(make_trace(problem, split.split(message_text(completion, "assistant")), answer, str(i)))
    return out


def _rewards(rows: list[list[float]], how: str, name: str, kwargs: dict[str, Any]) -> list[float | None]:
    """Aggregate; log per-step scores to TRL when it offers ``log_extra``/``log_metric``, under ``name``
    (TRL appends every function's ``log_extra`` values to one list per column name, so a shared column
    would interleave two functions' scores)."""
    rewards = [aggregate(r, how) if r else None for r in rows]
    if callable(kwargs.get("log_extra")):
        kwargs["log_extra"](f"{name}/step_scores", [[round(s, 4) for s in r] for r in rows])
    if callable(kwargs.get("log_metric")) and rows:
        kwargs["log_metric"](f"{name}/steps_per_completion", sum(map(len, rows)) / len(rows))
    return rewards


def reward_name(model: str | StepScorer, aggregation: str) -> str:
    """``prm_<model>_<aggregation>``: the default name of a TRL reward function.

    TRL keys ``rewards/<name>/mean``, the completions table's reward column and nothing else by the
    function's ``__name__`` (``trl.trainer.utils.get_callable_name``), so two PRM rewards with one name
    would merge their metrics. The model part is the checkpoint folder's or URL path's last part (or the
    scorer's class name), reduced to ``[A-Za-z0-9_.-]``.
    """
    stem = model.rstrip("/").rsplit("/", 1)[-1] if isinstance(model, str) else type(model).__name__
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_") or "model"
    return f"prm_{stem}_{aggregation}"


def trl_reward(
    model: str | StepScorer,
    aggregation: str = "min",
    split: StepSplit | None = None,
    asynchronous: bool = False,
    api_key: str | None = None,
    answer_column: str | None = None,
    name: str | None = None,
) -> Callable[..., Any]:
    """A TRL reward function scoring completions with a PRM (``None`` for a completion with no steps).

    ``answer_column`` names a dataset column (e.g. ``"solution"``) copied into each trace's problem
    answer, for scorers that read it; PRMs do not. ``name`` becomes the function's ``__name__``, the key
    TRL logs its rewards under (``rewards/<name>/mean``), and prefixes its per-step log column
    (``<name>/step_scores``) and metric (``<name>/steps_per_completion``); by default
    :func:`reward_name` of the model and aggregation. Give ``name`` when two functions share both.
    """
    split = split or StepSplit()
    scorer = _scorer(model, api_key)
    name = name or reward_name(model, aggregation)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"trl_reward: name: expected letters, digits, '_', '.' or '-', found {name!r}")

    def build(prompts: Sequence[Any], completions: Sequence[Any], kwargs: dict[str, Any]):
        answers = kwargs.get(answer_column) if answer_column else None
        return _traces(prompts, completions, split, answers)

    if asynchronous:

        async def prm_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
            traces = build(prompts, completions, kwargs)
            if isinstance(scorer, RemoteScorer):
                rows = await scorer.ascore(traces)
            else:
                rows = await asyncio.to_thread(scorer.score, traces)
            return _rewards(rows, aggregation, name, kwargs)

        prm_reward.__name__ = prm_reward.__qualname__ = name
        return prm_reward

    def prm_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float | None]:
        return _rewards(scorer.score(build(prompts, completions, kwargs)), aggregation, name, kwargs)

    prm_reward.__name__ = prm_reward.__qualname__ = name
    return prm_reward


# ---------------------------------------------------------------- verl


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str | None,
    extra_info: dict[str, Any] | None = None,
    *,
    model: str | None = None,
    aggregation: str = "min",
    step_separator: str = "\n",
    api_key: str | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl ``custom_reward_function``: ``{"score": aggregate, "prm_num_steps", "prm_min_step"}``.

    Set ``custom_reward_function.reward_kwargs.model`` to a checkpoint or server URL (or the environment
    variable ``PRMKIT_REWARD_MODEL``). The problem text is read from ``extra_info["question"]`` (or
    ``"problem"``) when present. The keys are the same for every sample, as verl's logging requires.
    """
    model = model or os.environ.get("PRMKIT_REWARD_MODEL")
    if not model:
        raise ValueError("compute_score: set reward_kwargs.model (checkpoint or URL) or PRMKIT_REWARD_MODEL")
    split = StepSplit(separator=step_separator)
    info = extra_info or {}
    problem = str(info.get("question") or info.get("problem") or "")
    trace = make_trace(problem, split.split(solution_str), ground_truth)
    (row,) = _scorer(model, api_key).score([trace]) if trace.steps else ([],)
    return {
        "score": aggregate(row, aggregation) if row else 0.0,
        "prm_num_steps": float(len(row)),
        "prm_min_step": min(row) if row else 0.0,
    }


def step_end_tokens(token_ids: Sequence[int], tokenizer: Any, steps_text: str, split: StepSplit) -> list[int]:
    """For each step of ``steps_text`` (the decoded response), the index of the token where it ends."""
    ends, at = [], 0
    cleaned = steps_text
    for step in split.split(cleaned):
        found = cleaned.find(step, at)
        at = (found if found >= 0 else at) + len(step)
        ends.append(at)
    prefix_lengths = [
        len(tokenizer.decode(token_ids[: j + 1], skip_special_tokens=True)) for j in range(len(token_ids))
    ]
    out, j = [], 0
    for end in ends:
        while j < len(prefix_lengths) - 1 and prefix_lengths[j] < end:
            j += 1
        out.append(j)
    return out


class PrmkitRewardManager:
    """verl reward manager with dense step rewards: ``reward_tensor[i, t] = score of the step ending at t``.

    Implements verl's ``AbstractRewardManager`` call shape (``__call__(data, return_dict=False)``), reading
    ``data.batch["prompts" | "responses" | "attention_mask"]`` as verl's ``naive`` manager does. All
    responses of a batch are scored in one scorer call. ``dense=False`` writes only the aggregate at the
    last response token (what the naive manager does with a scalar). See docs/serving.md for the verl
    settings it needs (legacy reward path, a token-level advantage estimator).
    """

    def __init__(
        self,
        tokenizer: Any,
        num_examine: int = 0,
        compute_score: Callable[..., Any] | None = None,
        reward_fn_key: str = "data_source",
        *,
        model: str | StepScorer | None = None,
        aggregation: str = "min",
        step_separator: str = "\n",
        dense: bool = True,
        api_key: str | None = None,
        **kwargs: Any,
    ):
        model = model or os.environ.get("PRMKIT_REWARD_MODEL")
        if model is None:
            raise ValueError("PrmkitRewardManager: pass reward_kwargs model=... or set PRMKIT_REWARD_MODEL")
        self.tokenizer = tokenizer
        self.scorer = _scorer(model, api_key)
        self.aggregation = aggregation
        self.split = StepSplit(separator=step_separator)
        self.dense = dense

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        import torch

        responses = data.batch["responses"]
        reward = torch.zeros_like(responses, dtype=torch.float32)
        prompt_len = data.batch["prompts"].shape[-1]
        mask = data.batch["attention_mask"]
        items, traces = [], []
        for i in range(responses.shape[0]):
            valid = int(mask[i, prompt_len:].sum())
            n_prompt = int(mask[i, :prompt_len].sum())
            ids = responses[i, :valid].tolist()
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            prompt = self.tokenizer.decode(
                data.batch["prompts"][i, prompt_len - n_prompt :].tolist(), skip_special_tokens=True
            )
            items.append((ids, text, valid))
            traces.append(
                make_trace(problem_text(prompt, self.split), self.split.split(text), trace_id=str(i))
            )
        rows = self.scorer.score(traces)
        for i, ((ids, text, valid), row) in enumerate(zip(items, rows, strict=True)):
            if not row or valid == 0:
                continue
            if self.dense:
                for end, value in zip(
                    step_end_tokens(ids, self.tokenizer, text, self.split), row, strict=True
                ):
                    reward[i, end] += value
            else:
                reward[i, valid - 1] = aggregate(row, self.aggregation)
        extra = {
            "prm_score": [aggregate(r, self.aggregation) if r else 0.0 for r in rows],
            "prm_num_steps": [float(len(r)) for r in rows],
        }
        return {"reward_tensor": reward, "reward_extra_info": extra} if return_dict else reward


try:  # registered under "prmkit" when verl is installed (reward_model.reward_manager=prmkit)
    from verl.workers.reward_manager import register as _verl_register

    _verl_register("prmkit")(PrmkitRewardManager)
except Exception:  # verl absent or its registry API moved: import by path instead (see docs/serving.md)
    pass


# ---------------------------------------------------------------- OpenRLHF


def openrlhf_rewards(
    queries: Sequence[str],
    prompts: Sequence[str],
    model: str | StepScorer,
    aggregation: str = "min",
    split: StepSplit | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """The body of OpenRLHF's reward answer for ``queries`` (prompt + response with template tokens)."""
    split = split or StepSplit()
    traces = []
    for i, (query, prompt) in enumerate(zip(queries, prompts, strict=True)):
        head, response = split_query(query, prompt)
        traces.append(make_trace(problem_text(head, split), split.split(response), trace_id=str(i)))
    rows = _scorer(model, api_key).score(traces) if traces else []
    rewards = [aggregate(r, aggregation) if r else 0.0 for r in rows]
    return {
        "rewards": rewards,
        "scores": [min(1.0, max(0.0, r)) for r in rewards],
        "extra_logs": {"prm_num_steps": [float(len(r)) for r in rows]},
    }


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any
) -> dict[str, Any]:
    """OpenRLHF local reward (``--reward.remote_url reward.py`` whose file re-exports this function).

    Configured by environment, since OpenRLHF passes no options: ``PRMKIT_REWARD_MODEL`` (checkpoint or
    server URL), ``PRMKIT_AGGREGATION`` (default min), ``PRMKIT_STEP_SEPARATOR`` (default newline).
    Returns torch tensors, as OpenRLHF's own examples do.
    """
    import torch

    model = os.environ.get("PRMKIT_REWARD_MODEL")
    if not model:
        raise ValueError("reward_func: set PRMKIT_REWARD_MODEL to a prmkit checkpoint folder or server URL")
    split = StepSplit(separator=os.environ.get("PRMKIT_STEP_SEPARATOR", "\n"))
    body = openrlhf_rewards(queries, prompts, model, os.environ.get("PRMKIT_AGGREGATION", "min"), split)
    return {
        "rewards": torch.tensor(body["rewards"], dtype=torch.float32),
        "scores": torch.tensor(body["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in body["extra_logs"].items()},
    }
