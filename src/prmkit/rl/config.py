"""``RlConfig``: one typed config for ``prmkit rl`` / :func:`prmkit.rl.train.train_policy` (each field
documented once, here; ``prmkit rl --help`` and the recipe's ``rl`` section read it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from prmkit.core.config import MAX_BATCH, MAX_STEPS, MAX_THREADS, MAX_TOKENS, Config, Seed
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS, is_world_name

Reward = Literal["outcome", "prm_aggregate", "dense", "mixed", "progress", "gold_process"]
REWARDS_NEEDING_PRM = ("prm_aggregate", "dense", "mixed", "progress")


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
    QUIET = ("progress_alpha",)  # added after recipes' RL stages were keyed (core.config.Config)

    progress_alpha: float = Field(1.0, ge=0.0, le=100.0)
    """``progress`` only: the weight ``alpha`` of a step's progress ``A`` beside its value ``Q``."""
    credit: Literal["sum", "min"] = "min"
    """Dense credit: ``min`` (prmkit's earlier min credit: group-normalised step rewards reweighted toward
    the worst step, so a completion's advantage is near its worst step's and cannot be raised by adding
    correct-looking steps; not centred, and not PURE's code, which is :mod:`prmkit.rl.credits`' ``pure``)
    or ``sum`` (DeepSeekMath: a token's advantage sums its step's and every later step's normalised
    reward, which pays padding). The other forms of :mod:`prmkit.rl.credits` are taken by
    ``DenseGRPOTrainer`` directly; a run of ``prmkit rl`` does not offer them yet (issue 60)."""
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

    @model_validator(mode="after")
    def _needs(self) -> RlConfig:
        if self.reward in REWARDS_NEEDING_PRM and not self.prm:
            raise ValueError(f"reward {self.reward!r} needs a PRM: set prm (a checkpoint, a server URL)")
        if self.reward == "gold_process" and not is_world_name(self.prompts.source):
            raise ValueError(
                f"reward 'gold_process' needs an embedded world's problems (prompts.source: {DEFAULT_WORLD})"
            )
        return self

    def dense(self) -> bool:
        """Whether the run trains on token-level advantages (DenseGRPOTrainer)."""
        return self.reward in ("dense", "mixed", "progress", "gold_process")
