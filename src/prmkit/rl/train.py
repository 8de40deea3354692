"""``train_policy(config, output_dir)``: GRPO (TRL) on a causal-LM policy against an outcome check, a
PRM or the world's gold checker, with hacking monitors, resumable after a kill, and a policy card.

Reads top to bottom: the prompts and rewards a config names, the trainer (TRL's ``GRPOTrainer`` for one
reward per completion, :class:`~prmkit.rl.trl.DenseGRPOTrainer` for ``dense`` / ``mixed`` /
``gold_process``, :class:`~prmkit.rl.trl.PrimeGRPOTrainer` for ``credit: prime``, which trains PRIME's
implicit PRM online), rollouts through prmkit's KV-cached sampler (:func:`~prmkit.rl.rollout.fast_rollout`),
monitors every ``monitor_every`` steps, then an ordinary HF folder with ``policy_card.json``.

Output folder: ``config.json`` + weights + tokenizer (load with ``AutoModelForCausalLM``), ``rl_config.json``
(the resolved config), ``monitors.jsonl`` / ``monitors.png``, ``train_log.jsonl`` (TRL's metrics per
step), ``policy_card.json`` / ``README.md``; under ``credit: prime``, ``implicit_prm/`` (the implicit PRM
as it ended, an HF causal-LM folder read against π0); ``trainer/checkpoint-*`` while it runs (a rerun
resumes from the last; removed when the run ends). A folder whose card shows the run finished is returned
as is.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from prmkit.rl.card import POLICY_CARD, policy_card, uses_gold, write_policy_card
from prmkit.rl.config import RlConfig
from prmkit.rl.monitors import Monitor, MonitorCallback
from prmkit.rl.paid import OUTCOME_FORMS, PaidForm
from prmkit.rl.prime import PRIME_DIR
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


def _check_inputs(config: RlConfig) -> None:
    """Refuse, before any model loads and all at once, a policy that is not a causal-LM folder and, under
    ``credit: prime``, what its implicit PRM cannot be trained from (:func:`_prime_issues`)."""
    from prmkit.core.errors import InputError, Issue

    issues = []
    if not Path(config.policy, "config.json").is_file():
        expected = "a causal-LM folder (config.json, weights, tokenizer)"
        found = "no such folder" if not Path(config.policy).is_dir() else "a folder without config.json"
        fix = "pretrain one: prmkit pretrain TRACES -o DIR"
        issues.append(Issue(config.policy, None, "policy", expected, found, "config", fix))
    if config.credit == "prime":
        issues += _prime_issues(config)
    if issues:
        raise InputError(issues, skippable=False)


def _prime_issues(config: RlConfig) -> list[Any]:
    """``credit: prime`` trains an implicit PRM on the policy's tokens: it needs ``reward: dense`` (its
    token rewards are what is paid), and ``prm`` either unset (a copy of π0) or a causal-LM folder over
    π0's vocabulary; no ``prm_convention`` (the PRM is read against π0, PRIME's way)."""
    from transformers import AutoConfig

    from prmkit.core.errors import Issue

    fix = "set credit to another form, or"
    issues = []
    if config.reward != "dense":
        expected = "dense (credit prime pays its implicit PRM's token rewards)"
        issues.append(Issue("rl config", None, "reward", expected, repr(config.reward), "config",
                            f"{fix} reward: dense"))  # fmt: skip
    if config.prm_convention is not None:
        expected = "none (credit prime reads its PRM against π0)"
        issues.append(Issue("rl config", None, "prm_convention", expected, repr(config.prm_convention),
                            "config", f"{fix} leave prm_convention out"))  # fmt: skip
    if config.prm is None:
        return issues
    expected = "a causal-LM folder over π0's vocabulary (the implicit PRM's start), or none (a copy of π0)"
    found = None
    if oracle_world(config.prm) is not None or "://" in config.prm:
        found = "a scorer (the world's checker, a server), not a causal LM it can train"
    elif not Path(config.prm, "config.json").is_file():
        found = "no such folder" if not Path(config.prm).is_dir() else "a folder without config.json"
    else:
        prm = AutoConfig.from_pretrained(config.prm)
        if not any(a.endswith("ForCausalLM") for a in prm.architectures or []):
            found = f"a {', '.join(prm.architectures or ['model'])}, not a causal LM"
        elif Path(config.policy, "config.json").is_file():
            vocab = AutoConfig.from_pretrained(config.policy).vocab_size
            found = f"a vocabulary of {prm.vocab_size}, π0's {vocab}" if prm.vocab_size != vocab else None
    if found is not None:
        issues.append(Issue(config.prm, None, "prm", expected, found, "config", f"{fix} leave prm out"))
    return issues


def _implicit_prm(config: RlConfig) -> Any:
    """PRIME's pair: the PRM (``prm``, or π0's weights) trained, π0 its frozen reference, ``prime_beta``."""
    from transformers import AutoModelForCausalLM

    from prmkit.modeling.released import ImplicitPair

    reference = AutoModelForCausalLM.from_pretrained(config.policy).eval().requires_grad_(False)
    prm = AutoModelForCausalLM.from_pretrained(config.prm or config.policy)
    return ImplicitPair(prm, reference, beta=config.prime_beta)


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


def _rewards(
    config: RlConfig, gold: Any, prime: bool = False
) -> tuple[list[Any], list[float], ProcessReward | None]:
    """TRL reward functions with their weights, and the dense process reward (None: one per completion,
    or ``prime``, whose implicit PRM pays). The outcome is always among the functions (weight 0 where it is
    not paid), so TRL logs accuracy."""
    outcome = outcome_reward("answer", unfinished_reward=config.unfinished_reward)
    if config.reward == "outcome" or prime:
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


def _proxy(config: RlConfig, problems: list[Any]) -> Any:
    """The monitors' PRM: the world's checker where it pays (no gold to monitor then), the run's PRM, or
    none: without a PRM, and under ``prime``, whose PRM changes every step (the monitors' gold still
    measures the policy; ``train_log.jsonl`` follows the PRM)."""
    if oracle_world(config.prm) is not None or config.reward == "gold_process":
        return WorldGold(problems)
    if config.prm and config.credit != "prime":
        return scorer_for(config.prm, convention=config.prm_convention)
    return None


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
        disable_tqdm=True, log_completions=False, activation_checkpointing=config.activation_checkpointing,
        **_device_args(),
    )  # fmt: skip


def paid_form(config: RlConfig) -> PaidForm | None:
    """What ``config``'s reward pays a completion, for the monitors (``mixed``: its process weight); None
    under a credit form whose pay :class:`~prmkit.rl.paid.PaidForm` cannot state (the monitors then
    watch the PRM's ``min`` alone): a plugin's form.

    ``pav`` pays what the ``progress`` reward pays under ``sum``; ``prof`` and ``first_error`` pay the
    outcome (the PRM filters or spreads it); ``sum``, ``min``, ``pure``, ``anchor``, ``papo`` and ``prime``
    are stated by :class:`~prmkit.rl.paid.PaidForm` itself (``credit_params``: their keywords)."""
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
    from prmkit.rl.trl import DenseGRPOTrainer, PrimeGRPOTrainer

    prime = config.credit == "prime"  # the implicit PRM pays: the outcome is its labels and the form's
    funcs, weights, process = _rewards(config, gold if uses_gold(config) else None, prime)
    args = _grpo_args(config, output_dir)
    args.reward_weights = weights
    common = {
        "model": policy, "processing_class": tokenizer, "train_dataset": dataset, "reward_funcs": funcs,
        "args": args, "callbacks": [callback], "rollout_func": fast_rollout(StepFormat()),
    }  # fmt: skip
    if prime:
        return PrimeGRPOTrainer(
            **common, implicit_prm=_implicit_prm(config), prm_lr=config.prime_lr,
            credit_params=config.credit_params(),
        )  # fmt: skip
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
    _check_inputs(config)
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
    proxy = _proxy(config, train + held)
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
    if config.credit == "prime":
        trainer.save_implicit_prm(out / PRIME_DIR, tokenizer)
    with open(out / "train_log.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(h) + "\n" for h in trainer.state.log_history)
    gold_steps = gold.steps if gold is not None else 0
    card = policy_card(config, trainer.state.global_step, monitors.points, monitors.warnings, gold_steps)
    write_policy_card(out, card)
    shutil.rmtree(out / TRAINER_DIR, ignore_errors=True)
    (out / "gold_labels_read.json").unlink(missing_ok=True)
    return _summary(card, out)
