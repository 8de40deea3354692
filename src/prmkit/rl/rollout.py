"""What a GRPO run reads and samples: its prompts, the gold step scorer of world problems, and TRL's
rollouts through prmkit's KV-cached sampler.

- :func:`load_prompts`: the training and held-out problems of an :class:`~prmkit.rl.config.PromptSet`.
- :class:`WorldGold`: the world's checker as a :class:`~prmkit.core.protocols.StepScorer` for traces
  built from prompt text (``ProcessReward`` sees only the problem's text; the checker needs its graph,
  so the problem is looked up by text among the run's known problems).
- :func:`fast_rollout`: a TRL ``rollout_func`` (TRL 1.16.0's documented hook) sampling with
  :func:`prmkit.policies.hf.sample_continuations`: the prompt once, its cache copied to the group, stop
  checked on token ids at separator tokens (a completion ends after its answer step), finished rows
  dropped. transformers ``generate`` with prmkit's old stopping rule was the RL loop's main cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Problem, Trace
from prmkit.core.steps import StepFormat
from prmkit.policies.hf import StepStop, sample_continuations, separator_token_ids
from prmkit.rl.config import PromptSet
from prmkit.worlds.registry import DEFAULT_WORLD, is_world_name, world, world_of


def load_prompts(prompts: PromptSet) -> tuple[list[Problem], list[Problem]]:
    """(training problems, held-out monitor problems) of ``prompts``; a short file is refused in one line."""
    if is_world_name(prompts.source):
        generate = world(prompts.source).generate_problems
        train = generate(prompts.n, seed=prompts.seed, split=prompts.split)
        held = generate(prompts.monitor_n, seed=prompts.seed + 1000, split="test")
        return train, held
    from prmkit.core.errors import InputError, Issue
    from prmkit.formats.inputs import read_problems

    problems = read_problems(Path(prompts.source))
    need = prompts.n + prompts.monitor_n
    if len(problems) < need:
        issue = Issue(
            prompts.source, None, "problems", f"at least n + monitor_n = {need} problems",
            f"{len(problems)}", "prompts", "lower prompts.n or prompts.monitor_n",
        )  # fmt: skip
        raise InputError([issue], skippable=False)
    return problems[: prompts.n], problems[prompts.n : need]


def is_world(problem: Problem) -> bool:
    """Whether an embedded world's checker can judge traces of ``problem`` (it carries the checker's data)."""
    return world_of(problem) is not None


class WorldGold:
    """Each problem's world checker as a StepScorer over the run's problems (1.0 up to the first error,
    then 0.0, as ``NAME-oracle``), for traces whose problem is known only by its text."""

    name = "world-gold"

    def __init__(self, problems: Sequence[Problem]):
        self.by_text = {p.text.strip(): p for p in problems}

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        known = [
            t.model_copy(update={"problem": self.by_text.get(t.problem.text.strip(), t.problem)})
            for t in traces
        ]
        scores: list[list[float]] = [[] for _ in known]
        by_world: dict[str, list[int]] = {}
        for i, t in enumerate(known):
            w = world_of(t.problem)
            by_world.setdefault(w.name if w else "", []).append(i)
        for name, rows in by_world.items():  # a problem no world owns: its oracle says so in one line
            scored = (world(name) if name else world(DEFAULT_WORLD)).oracle().score([known[i] for i in rows])
            for i, s in zip(rows, scored, strict=True):
                scores[i] = s
        return scores


def fast_rollout(step_format: StepFormat, max_steps: int | None = None) -> Callable[[list[Any], Any], dict]:
    """A TRL ``rollout_func``: each run of equal consecutive prompts (TRL's sampler repeats a prompt
    ``num_generations`` times) is sampled as one batch with the trainer's temperature, top-p and
    ``max_completion_length``; the model is in eval mode while it samples."""
    cache: dict[int, frozenset[int]] = {}

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        key = id(tokenizer)
        if key not in cache:
            cache[key] = separator_token_ids(tokenizer, step_format.step_separator)
        eos = tokenizer.eos_token_id
        eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        args = trainer.args
        prompt_ids, completion_ids = [], []
        was_training = model.training
        model.eval()
        try:
            for prompt, count in _runs(prompts):
                ids = tokenizer(prompt)["input_ids"]
                seed = int(trainer.state.global_step) * 1_000_003 + len(completion_ids) + args.seed
                rows = sample_continuations(
                    model, ids, count, args.max_completion_length, temperature=args.temperature,
                    top_p=args.top_p, seed=seed, eos_ids=eos_ids,
                    stop=StepStop(tokenizer, step_format, max_steps, cache[key]),
                )  # fmt: skip
                prompt_ids += [list(ids)] * count
                completion_ids += rows
        finally:
            model.train(was_training)
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}

    return rollout


def _runs(prompts: list[Any]) -> list[tuple[Any, int]]:
    """Consecutive equal prompts as (prompt, how many)."""
    out: list[tuple[Any, int]] = []
    for p in prompts:
        if out and out[-1][0] == p:
            out[-1] = (p, out[-1][1] + 1)
        else:
            out.append((p, 1))
    return out
