"""``train_policy(config, output_dir)``: GRPO (TRL) on a causal-LM policy against an outcome check, a
PRM or the world's gold checker, with hacking monitors, resumable after a kill, and a policy card.

Reads top to bottom: the prompts and rewards a config names, the trainer (TRL's ``GRPOTrainer`` for one
reward per completion, :class:`~prmkit.rl.trl.DenseGRPOTrainer` for ``dense`` / ``mixed`` /
``gold_process``), rollouts through prmkit's KV-cached sampler (:func:`~prmkit.rl.rollout.fast_rollout`),
monitors every ``monitor_every`` steps, then an ordinary HF folder with ``policy_card.json``.

Output folder: ``config.json`` + weights + tokenizer (load with ``AutoModelForCausalLM``), ``rl_config.json``
(the resolved config), ``monitors.jsonl`` / ``monitors.png``, ``train_log.jsonl`` (TRL's metrics per
step), ``policy_card.json`` / ``README.md``; ``trainer/checkpoint-*`` while it runs (a rerun resumes from
the last; removed when the run ends). A folder whose card shows the run finished is returned as is.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from prmkit.rl.card import POLICY_CARD, policy_card, uses_gold, write_policy_card
from prmkit.rl.config import RlConfig
from prmkit.rl.monitors import OUTCOME_FORMS, Monitor, MonitorCallback, PaidForm
from prmkit.rl.rewards import ProcessReward, outcome_reward, scorer_for, trl_reward
from prmkit.rl.rollout import WorldGold, fast_rollout, load_prompts
from prmkit.scoring.forms import oracle_world

log = logging.getLogger(__name__)
TRAINER_DIR = "trainer"
PROXY_AGGREGATION = "min"
"""The monitors' PRM reward (``prm_reward``) is the PRM's ``min`` in every run, whatever is paid, so runs
of every reward are read on one proxy; what a run pays is the monitors' ``paid_reward``."""


class _Counting:
    """A StepScorer that counts the steps it scored (the gold labels a run read), in ``path`` too, so a
    resumed run adds to the count of the killed one (steps redone after a resume are read twice)."""

    def __init__(self, scorer: Any, path: Path):
        self.scorer, self.path = scorer, path
        self.steps = json.loads(path.read_text())["steps"] if path.is_file() else 0

    def score(self, traces: Any) -> list[list[float]]:
        self.steps += sum(len(t.steps) for t in traces)
        self.path.write_text(json.dumps({"steps": self.steps}))
        return self.scorer.score(traces)


def _check_folder(out: Path, config: RlConfig) -> dict[str, Any] | None:
    """The card of a finished run of ``config`` in ``out`` (None: train); a folder holding another
    run's card or checkpoints is refused in one line rather than overwritten or mixed."""
    from prmkit.core.errors import InputError, Issue

    for name, key in ((POLICY_CARD, "config"), ("rl_config.json", None)):
        path = out / name
        if not path.is_file():
            continue
        found = json.loads(path.read_text(encoding="utf-8"))
        found = found[key] if key else found
        if found != config.model_dump(mode="json"):
            issue = Issue(str(path), None, "config", "the same RlConfig as this run", "another run's config",
                          "config", "pick another output folder")  # fmt: skip
            raise InputError([issue], skippable=False)
        if key:
            return json.loads(path.read_text(encoding="utf-8"))
    return None


def _summary(card: dict[str, Any], output_dir: Path) -> dict[str, Any]:
    return {
        "output_dir": str(output_dir),
        "reward": card["reward"]["kind"],
        "steps": card["budget"]["steps_taken"],
        "first": card["monitors"]["first"],
        "last": card["monitors"]["last"],
        "warnings": card["monitors"]["warnings"],
        "gold_use": card["gold_use"],
    }


def _rewards(config: RlConfig, gold: Any) -> tuple[list[Any], list[float], ProcessReward | None]:
    """TRL reward functions with their weights, and the dense process reward (None: one per completion).
    The outcome is always among the functions (weight 0 where it is not paid), so TRL logs accuracy."""
    outcome = outcome_reward("answer", unfinished_reward=config.unfinished_reward)
    if config.reward == "outcome":
        return [outcome], [1.0], None
    paid_by = gold or (scorer_for(config.prm, convention=config.prm_convention) if config.prm else None)
    if config.reward == "prm_aggregate":
        prm = trl_reward(paid_by, config.aggregation, unfinished_reward=config.unfinished_reward, name="prm")
        return [prm, outcome], [1.0, 0.0], None
    alpha = config.progress_alpha if config.reward == "progress" else None
    return (
        [outcome],
        [1.0],
        ProcessReward(paid_by, unfinished_reward=config.unfinished_reward, progress_alpha=alpha),
    )


def _device_args() -> dict[str, Any]:
    """Where TRL trains: the GPU in bf16 where CUDA has one that supports it (fp16 otherwise is left to
    the user: it needs a loss scaler TRL's defaults do not tune), else the CPU in fp32."""
    import torch

    if not torch.cuda.is_available():
        return {"use_cpu": True, "bf16": False}
    return {"use_cpu": False, "bf16": torch.cuda.is_bf16_supported()}


def _grpo_args(config: RlConfig, output_dir: Path) -> Any:
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(output_dir / TRAINER_DIR), max_steps=config.steps, seed=config.seed,
        per_device_train_batch_size=config.batch * config.group_size, num_generations=config.group_size,
        max_completion_length=config.max_completion_length, temperature=config.temperature,
        learning_rate=config.lr, lr_scheduler_type="constant", beta=config.kl_beta,
        save_strategy="steps", save_steps=config.save_every, logging_steps=1, report_to="none",
        disable_tqdm=True, log_completions=False, **_device_args(),
    )  # fmt: skip


def paid_form(config: RlConfig) -> PaidForm | None:
    """What ``config``'s reward pays a completion, for the monitors (``mixed``: its process weight); None
    under a credit form whose pay :class:`~prmkit.rl.monitors.PaidForm` cannot state (the monitors then
    watch the PRM's ``min`` alone): a plugin's form.

    ``pav`` pays what the ``progress`` reward pays under ``sum``; ``prof`` and ``first_error`` pay the
    outcome (the PRM filters or spreads it); ``sum``, ``min``, ``pure``, ``anchor``, ``papo`` and ``prime``
    are stated by :class:`~prmkit.rl.monitors.PaidForm` itself (``credit_params``: their keywords)."""
    weight = config.process_weight if config.reward == "mixed" else 1.0
    reward, credit = config.reward, config.credit
    if config.dense() and credit not in ("sum", "min", "pure", *OUTCOME_FORMS):
        if credit == "pav":
            reward, credit = "progress", "sum"
        elif credit in ("prof", "first_error"):
            reward = "outcome"
        else:
            return None
    params = config.credit_params() if credit in OUTCOME_FORMS else {}
    return PaidForm(
        reward, config.aggregation, credit, config.credit_temperature, weight,
        progress_alpha=config.progress_alpha, credit_params=params,
    )  # fmt: skip


def _trainer(
    config: RlConfig, output_dir: Path, policy: Any, tokenizer: Any, dataset: Any, gold: Any, callback: Any
):
    from trl import GRPOTrainer

    from prmkit.core.steps import StepFormat
    from prmkit.rl.trl import DenseGRPOTrainer

    funcs, weights, process = _rewards(config, gold if uses_gold(config) else None)
    args = _grpo_args(config, output_dir)
    args.reward_weights = weights
    common = {
        "model": policy, "processing_class": tokenizer, "train_dataset": dataset, "reward_funcs": funcs,
        "args": args, "callbacks": [callback], "rollout_func": fast_rollout(StepFormat()),
    }  # fmt: skip
    if process is None:
        return GRPOTrainer(**common)
    weight = config.process_weight if config.reward == "mixed" else 1.0
    return DenseGRPOTrainer(
        **common, process_reward=process, process_weight=weight, credit=config.credit,
        credit_params=config.credit_params(),
    )  # fmt: skip


def train_policy(config: RlConfig, output_dir: str | Path) -> dict[str, Any]:
    """Train ``config.policy`` with GRPO into ``output_dir``; returns the run's summary (see the module
    docstring for what the folder holds). A killed run called again resumes from its last checkpoint."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.trainer_utils import get_last_checkpoint

    from prmkit.core.steps import StepFormat

    out = Path(output_dir)
    if not Path(config.policy, "config.json").is_file():
        from prmkit.core.errors import InputError, Issue

        issue = Issue(config.policy, None, "policy", "a causal-LM folder (config.json, weights, tokenizer)",
                      "no such folder" if not Path(config.policy).is_dir() else "a folder without config.json",
                      "config", "pretrain one: prmkit pretrain TRACES -o DIR")  # fmt: skip
        raise InputError([issue], skippable=False)
    finished = _check_folder(out, config)
    if finished is not None:
        return _summary(finished, out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rl_config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    train, held = load_prompts(config.prompts)
    # a world's checker pays the steps: a gold_process run, or NAME-oracle named as the PRM (it needs
    # the problems' graphs, which a trace rebuilt from prompt text lacks, so they are looked up by text)
    gold = _Counting(WorldGold(train + held), out / "gold_labels_read.json") if uses_gold(config) else None
    tokenizer = AutoTokenizer.from_pretrained(config.policy)
    policy = AutoModelForCausalLM.from_pretrained(config.policy)
    fmt = StepFormat()
    dataset = Dataset.from_dict(
        {"prompt": [fmt.prompt(p, []) for p in train], "answer": [p.answer for p in train]}
    )
    checker = oracle_world(config.prm) is not None or config.reward == "gold_process"  # no gold to monitor
    proxy = (
        WorldGold(train + held)
        if checker
        else scorer_for(config.prm, convention=config.prm_convention)
        if config.prm
        else None
    )
    monitor = Monitor(
        held, samples=config.prompts.monitor_samples, temperature=config.temperature,
        max_new_tokens=config.max_completion_length, prm=proxy, aggregation=PROXY_AGGREGATION,
        unfinished_reward=config.unfinished_reward, seed=config.seed, paid=paid_form(config),
        faithfulness=config.prompts.monitor_faithfulness,
    )  # fmt: skip
    monitors = MonitorCallback(monitor, config.monitor_every, out)
    trainer = _trainer(config, out, policy, tokenizer, dataset, gold, monitors.as_callback())
    checkpoint = get_last_checkpoint(str(out / TRAINER_DIR)) if (out / TRAINER_DIR).is_dir() else None
    trainer.train(resume_from_checkpoint=checkpoint)
    policy.config.use_cache = True
    policy.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    with open(out / "train_log.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(h) + "\n" for h in trainer.state.log_history)
    gold_steps = gold.steps if gold is not None else 0
    card = policy_card(config, trainer.state.global_step, monitors.points, monitors.warnings, gold_steps)
    write_policy_card(out, card)
    shutil.rmtree(out / TRAINER_DIR, ignore_errors=True)
    (out / "gold_labels_read.json").unlink(missing_ok=True)
    return _summary(card, out)
