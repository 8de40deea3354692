"""``RlConfig``: one typed config for ``prmkit rl`` / :func:`prmkit.rl.train.train_policy` (each field
documented once, here; ``prmkit rl --help`` and the recipe's ``rl`` section read it)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from prmkit.core.config import MAX_BATCH, MAX_STEPS, MAX_THREADS, MAX_TOKENS, Config, Seed
from prmkit.core.registry import UnknownNameError
from prmkit.rl.credits import CREDITS
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS, is_world_name

Reward = Literal["outcome", "prm_aggregate", "dense", "mixed", "progress", "gold_process"]
REWARDS_NEEDING_PRM = ("prm_aggregate", "dense", "mixed", "progress")
CREDIT_PARAMS: dict[str, dict[str, str]] = {
    "min": {"credit_temperature": "temperature"},
    "pure": {"credit_temperature": "temperature", "pure_baseline": "baseline"},
    "anchor": {"credit_temperature": "temperature", "pure_baseline": "baseline", "anchor_share": "share",
               "anchor_coef": "verifiable_coef"},
    "first_error": {"first_error_threshold": "threshold", "first_error_prefix": "prefix_advantage"},
    "papo": {"papo_weight": "process_weight"},
    "prof": {"prof_keep": "keep", "prof_penalty": "penalty", "prof_max_steps": "max_steps"},
    "pav": {"progress_alpha": "alpha"},
    "prime": {"prime_process_coef": "process_coef", "prime_outcome_coef": "outcome_coef"},
}  # fmt: skip
"""Per credit form, the :class:`RlConfig` fields that are its parameters and the keyword of its function
(:mod:`prmkit.rl.credits`) each becomes; a form not named here (``sum``, a plugin's) runs with its own
defaults."""
CREDIT_FIELDS = tuple(
    dict.fromkeys(f for fields in CREDIT_PARAMS.values() for f in fields if f != "progress_alpha")
)
"""The fields that only credit forms read (``progress_alpha`` is also the ``progress`` reward's)."""
PRIME_FIELDS = ("prime_lr", "prime_beta")
"""The fields of ``prime``'s online implicit PRM (:mod:`prmkit.rl.prime`): read by the trainer, not
keywords of the credit form's function."""


class PromptSet(Config):
    """Where the training prompts come from, and the held-out prompts the monitors sample."""

    source: str = DEFAULT_WORLD
    """An embedded world's name (its generated problems, with gold for the monitors: ``arithmetic``,
    ``agent``) or a JSONL file of problems (``prmkit`` problem records: ``id``, ``text``, ``answer``; or
    any file ``prmkit convert`` reads)."""
    n: int = Field(512, ge=1, le=1_000_000)
    """Training problems (world: generated; a file: its first ``n``)."""
    seed: Seed = 0
    """World problems' seed (``generate_problems``)."""
    split: Literal["train", "test", "heldout"] = "train"
    """World split of the training problems; the monitors always use ``test`` problems of another seed."""
    monitor_n: int = Field(48, ge=1, le=100_000)
    """Held-out problems the monitors sample (world: ``test`` split, seed ``seed + 1000``; a file: the
    ``monitor_n`` problems after the first ``n``)."""
    monitor_samples: int = Field(4, ge=1, le=1024)
    """Samples per held-out problem at every monitor point."""
    monitor_faithfulness: int = Field(0, ge=0, le=100_000)
    """Held-out samples per monitor point whose causal dependence is measured (``causal_dependence``:
    ``prmkit eval faithfulness``'s interventions, continued by the policy as it is at that point; a fall
    from π0's warns). Half a second to a second a sample on one CPU thread for the embedded worlds'
    small policies; 0: off."""

    @field_validator("source")
    @classmethod
    def _current_name(cls, value: str) -> str:
        return WORLDS.canonical(value)  # a renamed world's old name reads as its new one


class RlConfig(Config):
    """Train a causal-LM policy with GRPO (TRL) against an outcome check, a PRM (aggregate or dense
    step rewards) or the world's gold checker, with hacking monitors every ``monitor_every`` steps."""

    policy: str
    """π0: a local causal-LM folder (``prmkit pretrain``'s output or any Hugging Face causal LM)."""
    prompts: PromptSet = PromptSet()
    """Training and monitor prompts (``--prompts-source``, ``--prompts-n`` ...)."""
    reward: Reward = "dense"
    """``outcome``: 1 for a right final answer; ``prm_aggregate``: the PRM's ``aggregation`` of a
    completion's step scores; ``dense``: every step paid its PRM score (process GRPO, ``credit``);
    ``mixed``: ``(1 - process_weight) * outcome + process_weight * dense`` advantages; ``progress``: every
    step paid ``Q + progress_alpha * A`` (PAV's effective reward, Setlur et al.), the PRM's step scores read
    as a prover's success chance ``Q`` (a PRM trained on ``mc_soft`` labels rolled out by the prover) and
    ``A`` the change from the step before (the first step's from its GRPO group's mean first value); pair
    it with ``credit: sum``, PAV's own: under ``min`` a completion is paid near its largest drop, and on
    the world it lost process-correct (docs/rl.md, "Progress rewards and faithfulness"); ``gold_process``:
    dense step rewards from the world's checker (world problems only; the ceiling, and a use of gold in
    training that the policy card records)."""
    prm: str | None = None
    """The PRM: a checkpoint folder, a prmkit server URL (``http://host:port``) or ``arithmetic-oracle``.
    Needed by ``prm_aggregate``, ``dense`` and ``mixed``; with another reward it is only the monitors'
    proxy (its mean reward on held-out samples), so runs of every reward are measured on one proxy."""
    prm_convention: str | None = None
    """How to read ``prm`` when it is a checkpoint folder (``prmkit score --convention``): None detects
    it; ``likelihood`` reads any causal LM as a zero-shot verifier (π0 itself: the weak PRM a policy
    is paid by when no step labels were bought)."""
    aggregation: str = "min"
    """How ``prm_aggregate`` reduces step scores: min, prod, last, mean, geomean, or sum (which pays
    more steps: the hack the monitors' ``paid_reward`` and length warning watch). The monitors' PRM
    reward is the ``min`` in every run."""
    process_weight: float = Field(0.5, ge=0.0, le=1.0)
    """``mixed`` only: the process part's weight ``w`` in the token advantages."""
    # added after recipes' RL stages were keyed (core.config)
    QUIET = ("progress_alpha", *CREDIT_FIELDS, *PRIME_FIELDS, "activation_checkpointing")

    progress_alpha: float = Field(1.0, ge=0.0, le=100.0)
    """``progress`` reward or ``pav`` credit: the weight ``alpha`` of a step's progress ``A`` beside its
    value ``Q``."""
    credit: str = "pure"
    """Dense credit: the credit form of :mod:`prmkit.rl.credits` (docs/rl.md, "Credit forms") that turns
    step rewards into token advantages; its parameters are the fields named after it below. ``pure``
    (the default: PURE's code, the PRM alone: each completion paid its steps' scores reweighted toward
    the worst, less a leave-one-out baseline of its group, whitened over the batch), ``min`` (prmkit's
    earlier min credit, the default until issue 60, kept for past runs: group-normalised step rewards
    reweighted toward the worst step; not centred, so whole groups can be pushed negative), ``sum``
    (DeepSeekMath: a token's advantage sums its step's and every later step's normalised reward, which
    pays padding), ``pav`` (PAV:
    each step paid ``Q + progress_alpha * A``, sum credit; not with ``reward: progress``, which pays that
    already), and the forms that also read each completion's outcome, its answer checked (not with
    ``reward: mixed``: they mix it themselves): ``anchor`` (``pure`` plus the verifiable reward on a share
    of the prompts), ``first_error`` (VPPO), ``papo`` (PAPO), ``prof`` (PROF: the PRM filters, the outcome
    pays) and ``prime`` (PRIME: ``prmkit rl`` trains an implicit PRM online, a causal LM read against π0
    and updated every step from the outcome labels of the policy's own samples, and pays its token
    rewards with PRIME's advantage; ``reward: dense``, ``prm`` a causal-LM folder or none, a copy of π0;
    ``prime_lr``, ``prime_beta``; docs/rl.md, "Credit forms")."""
    credit_temperature: float = Field(0.1, gt=0.0, le=100.0)
    """``min``, ``pure``, ``anchor``: ``T`` of PURE's weights ``softmax(-r / T) * r`` (smaller: nearer the
    worst step)."""
    pure_baseline: Literal["token", "step"] = "token"
    """``pure``, ``anchor``: PURE's leave-one-out baseline, ``token`` (its train script: the other
    completions' pay per token times the step's tokens) or ``step`` (its CLI default: their mean per step)."""
    anchor_share: float = Field(0.1, ge=0.0, le=1.0)
    """``anchor``: the share of prompts (chosen by a hash of the prompt) whose completions also get the
    verifiable reward (PURE §5: 10 %)."""
    anchor_coef: float = Field(1.0, ge=0.0, le=100.0)
    """``anchor``: the verifiable reward's weight (PURE's ``verifiable_reward_coef``)."""
    first_error_threshold: float = 0.5
    """``first_error``: a step scored below this is doubted; a wrong answer's tokens before its first
    doubted step (its verified prefix) are spared the outcome penalty."""
    first_error_prefix: float = 0.0
    """``first_error``: the advantage of a wrong answer's verified prefix (0: no gradient)."""
    papo_weight: float = Field(1.0, ge=0.0, le=100.0)
    """``papo``: ``w`` in ``A_outcome + w * A_process``."""
    prof_keep: int | None = Field(None, ge=1, le=1024)
    """``prof``: completions kept per group (None: half of ``group_size``); at most ``group_size``."""
    prof_penalty: float = Field(0.0, ge=0.0)
    """``prof``: taken from the score of a completion of one step, or of ``prof_max_steps`` or more."""
    prof_max_steps: int | None = Field(None, ge=1, le=MAX_TOKENS)
    """``prof``: the step count from which ``prof_penalty`` applies (None: one-step completions only)."""
    prime_process_coef: float = Field(5.0, ge=0.0, le=100.0)
    """``prime``: the weight of the leave-one-out process rewards (PRIME's default 5)."""
    prime_outcome_coef: float = Field(5.0, ge=0.0, le=100.0)
    """``prime``: the weight of the leave-one-out outcome (PRIME's default 5)."""
    prime_lr: float = Field(1e-6, gt=0.0, le=1.0)
    """``prime``: the implicit PRM's learning rate (AdamW, constant, gradients clipped at norm 10). The
    default is PRIME's recipe for its 7B model (``reward_model.prime_model.optim``); AdamW moves a weight
    by about the learning rate a step, so the embedded worlds' small LMs, whose policy trains at ``lr``
    3e-4, want a PRM rate of that order too (set it beside ``lr``)."""
    prime_beta: float = Field(0.05, gt=0.0, le=100.0)
    """``prime``: ``beta`` of the implicit PRM, a token's reward ``beta * (log pi_prm - log pi_0)``, in
    its loss and in the rewards it pays (PRIME's ``beta_train``, 0.05)."""
    unfinished_reward: float | None = 0.0
    """What a completion without a final answer earns (None: its steps are scored like any other's, the
    hackable setting)."""
    steps: int = Field(100, ge=1, le=MAX_STEPS)
    """GRPO optimiser steps: the run's budget (one generation round of ``batch`` prompts each)."""
    group_size: int = Field(8, ge=2, le=1024)
    """Completions per prompt (GRPO's group)."""
    batch: int = Field(4, ge=1, le=MAX_BATCH)
    """Prompts per optimiser step (``batch x group_size`` completions)."""
    lr: float = Field(3e-4, gt=0)
    """Learning rate (AdamW, constant; the pilots' setting for the world's 2 x 128 LM)."""
    kl_beta: float = Field(0.02, ge=0.0)
    """Weight of the KL penalty to π0 (TRL's ``beta``; 0 loads no reference model)."""
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature of the training rollouts and of the monitors' samples."""
    max_completion_length: int = Field(160, ge=8, le=MAX_TOKENS)
    """Token limit of one completion (a completion cut there is unfinished)."""
    seed: Seed = 0
    """Seed of the trainer's data order and of the rollouts' and monitors' sampling."""
    threads: int = Field(1, ge=1, le=MAX_THREADS)
    """Torch threads: one per job where several share a CPU (budgets are in steps, not minutes)."""
    monitor_every: int = Field(10, ge=1, le=MAX_STEPS)
    """Optimiser steps between monitor points (π0 is measured before the first step)."""
    save_every: int = Field(10, ge=1, le=MAX_STEPS)
    """Optimiser steps between TRL checkpoints (what a killed run resumes from)."""
    activation_checkpointing: bool = False
    """Recompute the policy's activations in the backward pass instead of keeping them (TRL's
    ``GRPOConfig`` turns this on by default): less memory for a large policy on a GPU, the same
    gradients, and a second forward pass in every backward pass (bench/bench_rl_step.py measures its
    cost). Off suits the worlds' small LMs, whose activations fit anyway."""

    @field_validator("credit")
    @classmethod
    def _registered(cls, value: str) -> str:
        try:
            CREDITS.get(value)
        except UnknownNameError as err:  # "Did you mean ...?", read as a field error
            raise ValueError(str(err)) from None
        return CREDITS.canonical(value)

    @model_validator(mode="after")
    def _needs(self) -> RlConfig:
        # credit prime trains its own PRM, by default a copy of π0
        if self.reward in REWARDS_NEEDING_PRM and not self.prm and self.credit != "prime":
            raise ValueError(f"reward {self.reward!r} needs a PRM: set prm (a checkpoint, a server URL)")
        if self.reward == "gold_process" and not is_world_name(self.prompts.source):
            raise ValueError(
                f"reward 'gold_process' needs an embedded world's problems (prompts.source: {DEFAULT_WORLD})"
            )
        self._check_credit()
        return self

    def _check_credit(self) -> None:
        """Refuse a credit parameter the run's credit form does not read (a setting that would be
        ignored), and the pairs of reward and credit that would pay one thing twice."""
        mine = CREDIT_PARAMS.get(self.credit, {})
        for name in CREDIT_FIELDS:
            if name not in mine and getattr(self, name) != type(self).model_fields[name].default:
                users = [c for c, fields in CREDIT_PARAMS.items() if name in fields]
                raise ValueError(
                    f"{name} is a parameter of credit {' / '.join(users)}; this run's credit is "
                    f"{self.credit!r}: set credit, or leave {name} out"
                )
        if self.reward == "progress" and self.credit == "pav":
            raise ValueError(
                "reward 'progress' already pays each step Q + progress_alpha * A, and credit 'pav' would "
                "apply it again: use reward dense with credit pav, or reward progress with credit sum"
            )
        if self.reward == "mixed" and CREDITS.get(self.credit).needs_outcome:
            raise ValueError(
                f"credit {self.credit!r} mixes in the outcome itself; reward 'mixed' would add it again: "
                "use reward dense"
            )
        for name in PRIME_FIELDS:
            if self.credit != "prime" and getattr(self, name) != type(self).model_fields[name].default:
                raise ValueError(f"{name} is a setting of credit prime's implicit PRM; this run's credit is "
                                 f"{self.credit!r}: set credit, or leave {name} out")  # fmt: skip
        if self.prof_keep is not None and self.prof_keep > self.group_size:
            raise ValueError(f"prof_keep {self.prof_keep}: at most group_size ({self.group_size})")

    def credit_params(self) -> dict[str, Any]:
        """The keywords of the credit form's function (:mod:`prmkit.rl.credits`), from this config."""
        return {keyword: getattr(self, name) for name, keyword in CREDIT_PARAMS.get(self.credit, {}).items()}

    def dense(self) -> bool:
        """Whether the run trains on token-level advantages (DenseGRPOTrainer)."""
        return self.reward in ("dense", "mixed", "progress", "gold_process")
