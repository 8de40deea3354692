"""verl adapters that score in this process (any prmkit scorer: a checkpoint, ``arithmetic-oracle``, a URL).

These score in the verl process itself (a checkpoint there would load a second copy of the PRM beside
the policy). **From verl, use** :mod:`prmkit.rl.verl_client` (its ``PrmkitRewardManager`` is verl's
reward-loop manager, and its ``compute_score`` the scalar reward, both paid by a ``prmkit serve``
server; docs/rl.md has the verl config). prmkit installs beside verl 0.9.1 (``make verl-env``).

- :func:`compute_score`: verl's ``custom_reward_function`` shape, one aggregate per response.
- :class:`PrmkitRewardManager`: verl's legacy ``AbstractRewardManager`` call shape
  (``__call__(data, return_dict=False)``), each step's reward at the token where it ends
  (:func:`prmkit.rl.emitters.verl_reward_tensor`). verl 0.9's trainer no longer calls this shape.

The problem comes from verl's row fields as in the client (:func:`prmkit.rl.verl_client.problem_of`);
a response scored with no problem text is logged (the first as a warning) and counted
(:func:`prmkit.rl.verl_client.empty_problems`). Both pay ``unfinished_reward`` (default 0.0) for a
response with no final answer; see :mod:`prmkit.rl.rewards`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from prmkit.core.protocols import StepScorer
from prmkit.core.steps import StepSplit, parse_completion
from prmkit.rl.emitters import step_token_ends, verl_reward_tensor
from prmkit.rl.rewards import ProcessReward
from prmkit.rl.verl_client import note_empty_problem, problem_of, template_user_turn
from prmkit.scoring.aggregate import aggregate


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str | None,
    extra_info: dict[str, Any] | None = None,
    *,
    model: str | StepScorer | None = None,
    aggregation: str = "min",
    step_separator: str = "\n",
    api_key: str | None = None,
    unfinished_reward: float | None = 0.0,
    **kwargs: Any,
) -> dict[str, float]:
    """verl ``custom_reward_function``: ``{"score", "prm_num_steps", "prm_min_step", "prm_finished"}``.

    Set ``reward_kwargs.model`` to a checkpoint or server URL (or the environment variable
    ``PRMKIT_REWARD_MODEL``). The problem is ``extra_info["question"]`` (verl's gsm8k preprocessing
    writes it) or ``"problem"``; verl gives a custom function no prompt, so rows without either (verl's
    MATH preprocessing) are scored with an empty problem, logged and counted. The keys are the same for
    every sample, as verl's logging requires.
    """
    model = model or os.environ.get("PRMKIT_REWARD_MODEL")
    if not model:
        raise ValueError("compute_score: set reward_kwargs.model (checkpoint or URL) or PRMKIT_REWARD_MODEL")
    problem = problem_of(extra_info)
    process = ProcessReward(
        model,
        split=StepSplit(step_separator=step_separator),
        unfinished_reward=unfinished_reward,
        api_key=api_key,
    )
    (paid,) = process.score([problem], [solution_str])
    finished = paid.parsed.finished
    if not problem and paid.parsed.steps and (finished or unfinished_reward is None):
        note_empty_problem("compute_score")
    if not finished and unfinished_reward is not None:
        score = float(unfinished_reward)
    else:
        score = aggregate(paid.rewards, aggregation) if paid.rewards else 0.0
    return {
        "score": score,
        "prm_num_steps": float(len(paid.parsed.steps)),
        "prm_min_step": min(paid.rewards)
        if paid.rewards and (finished or unfinished_reward is None)
        else 0.0,
        "prm_finished": float(finished),
    }


def step_end_tokens(token_ids: Sequence[int], tokenizer: Any, steps_text: str, split: StepSplit) -> list[int]:
    """For each step of ``steps_text`` (the decoded response), the index of the token where it ends."""
    return step_token_ends(token_ids, tokenizer, parse_completion(steps_text, split).char_ends)


class PrmkitRewardManager:
    """verl reward manager with dense step rewards: ``reward_tensor[i, t] = reward of the step ending at t``.

    Implements verl's legacy ``AbstractRewardManager`` call shape (``__call__(data, return_dict=False)``),
    reading ``data.batch["prompts" | "responses" | "attention_mask"]`` as verl's ``naive`` manager does;
    the problem from ``non_tensor_batch`` (``extra_info``, ``raw_prompt``), else the prompt decoded with
    its special tokens and cut to its user turn.
    All responses of a batch are scored in one scorer call. ``dense=False`` writes only the aggregate at
    the last response token (what the naive manager does with a scalar). A response with no final answer
    gets ``unfinished_reward`` at its last token. See docs/rl.md for the verl settings.
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
        unfinished_reward: float | None = 0.0,
        **kwargs: Any,
    ):
        model = model or os.environ.get("PRMKIT_REWARD_MODEL")
        if model is None:
            raise ValueError("PrmkitRewardManager: pass reward_kwargs model=... or set PRMKIT_REWARD_MODEL")
        self.tokenizer = tokenizer
        self.process = ProcessReward(
            model,
            split=StepSplit(step_separator=step_separator),
            unfinished_reward=unfinished_reward,
            api_key=api_key,
        )
        self.aggregation = aggregation
        self.dense = dense

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        responses = data.batch["responses"]
        prompt_len = data.batch["prompts"].shape[-1]
        mask = data.batch["attention_mask"]
        extras = getattr(data, "non_tensor_batch", None) or {}
        ids, prompts, texts = [], [], []
        for i in range(responses.shape[0]):
            valid = int(mask[i, prompt_len:].sum())
            ids.append(responses[i, :valid].tolist())
            texts.append(self.tokenizer.decode(ids[-1], skip_special_tokens=True))
            info = extras["extra_info"][i] if "extra_info" in extras else None
            raw = extras["raw_prompt"][i] if "raw_prompt" in extras else None
            problem = problem_of(info if isinstance(info, dict) else None, raw)
            if not problem:  # decoded with its markers: skipping them leaves the roles' words in the text
                prompt_ids = data.batch["prompts"][i][mask[i, :prompt_len].bool()].tolist()
                problem = template_user_turn(self.tokenizer.decode(prompt_ids, skip_special_tokens=False))
            prompts.append(problem)
        paid = self.process.score(prompts, texts)
        for problem, p in zip(prompts, paid, strict=True):
            if (
                not problem
                and p.parsed.steps
                and (p.parsed.finished or self.process.unfinished_reward is None)
            ):
                note_empty_problem("PrmkitRewardManager")
        rewards, ends = [], []
        for row_ids, p in zip(ids, paid, strict=True):
            at = step_token_ends(row_ids, self.tokenizer, p.char_ends)
            if not row_ids:
                rewards.append([]), ends.append([])
            elif self.dense:
                rewards.append(p.rewards), ends.append(at)
            else:
                rewards.append([aggregate(p.rewards, self.aggregation)] if p.rewards else [])
                ends.append([len(row_ids) - 1] if p.rewards else [])
        reward = verl_reward_tensor(rewards, ends, responses.shape[-1])
        extra = {
            "prm_score": [aggregate(p.rewards, self.aggregation) if p.rewards else 0.0 for p in paid],
            "prm_num_steps": [float(len(p.parsed.steps)) for p in paid],
            "prm_finished": [float(p.parsed.finished) for p in paid],
        }
        return {"reward_tensor": reward, "reward_extra_info": extra} if return_dict else reward
