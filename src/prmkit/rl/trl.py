"""TRL's GRPOTrainer with dense (per-token) advantages from step rewards: :class:`DenseGRPOTrainer`.

TRL (1.16.0, the version pinned in ``pyproject.toml``'s ``rl`` extra) computes one advantage per
completion in ``_generate_and_score_completions`` and hands the batch to ``_compute_loss``, which
already accepts a ``(batch, tokens)`` advantage tensor (it unsqueezes only a 1-D one). So the override
is one method: call TRL's, then replace ``output["advantages"]`` with
``(1 - process_weight) * TRL's advantage + process_weight * process advantage`` (token by token, see
:mod:`prmkit.rl.advantages`). Everything else (generation, reward functions and their logging, KL,
clipping, the loss types, checkpoints and resume) is TRL's own.

What it relies on in TRL 1.16.0, checked by ``tests/rl/test_trl.py`` (one process) and
``tests/rl/test_trl_distributed.py`` (two, a group spanning both): the method name and its output keys
``completion_ids``, ``completion_mask``, ``advantages``; completions of one prompt lying next to each
other (``num_generations`` at a time) in the gathered batch, each process holding the slice
``process_index * len(inputs)`` onwards; ``_compute_loss`` reading ``inputs["advantages"]`` of shape
``(B, T)``; ``self._metrics[mode]`` for extra metrics. Generation through vLLM (``use_vllm``, server or
colocate) and a ``rollout_func`` hand their completions to the same method as token ids, so the override
does not depend on how completions were made.

:class:`PrimeGRPOTrainer` overrides the same method for PRIME: its process rewards come from an implicit
PRM that it updates online on the same batch (:mod:`prmkit.rl.prime`); it adds the PRM to TRL's
checkpoints (``_save_checkpoint``, ``_load_optimizer_and_scheduler``, as TRL's own adaptive-entropy state).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from trl import GRPOTrainer

from prmkit.rl.advantages import mixed_advantages, spread, standardized, step_advantages, to_tensor
from prmkit.rl.credits import CREDITS, Rollouts, check_params, credit_advantages
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.paid import PaidForm
from prmkit.rl.prime import (
    PRIME_DIR,
    implicit_token_rewards,
    label_accuracy,
    step_rewards,
    update_implicit_prm,
)
from prmkit.rl.rewards import ProcessReward

TRL_VERSION = "1.16.0"
"""The TRL release :class:`DenseGRPOTrainer` was written and tested against."""


class _Paid(NamedTuple):
    """What every process needs of one completion to compute its group's advantages and the batch's
    metrics: gathered from all processes, since a group may span them."""

    rewards: list[float]
    unpaid: bool
    steps: int
    finished: bool
    overlong: bool
    ends: list[int]
    length: int
    key: str


def _standardized(per_step: Sequence[Sequence[float]]) -> list[list[float]]:
    """:func:`~prmkit.rl.advantages.standardized` over per-step values, a completion with no step
    counting as first value 0 (what its tokens get), as the same function over token rows counts it."""
    scaled = standardized([list(row) or [0.0] for row in per_step])
    return [s if row else [] for s, row in zip(scaled, per_step, strict=True)]


class DenseGRPOTrainer(GRPOTrainer):
    """A ``trl.GRPOTrainer`` whose advantages are per token: process-supervised GRPO from step rewards.

    Takes every ``GRPOTrainer`` argument, plus:

    - ``process_reward``: a :class:`~prmkit.rl.rewards.ProcessReward` (a PRM, a server, or
      ``arithmetic-oracle``) paying each completion's steps (nothing for an unfinished one by default).
    - ``process_weight``: ``w`` in ``advantage = (1 - w) * outcome + w * process``; the outcome part is
      TRL's own advantage from ``reward_funcs`` (e.g. :func:`prmkit.rl.rewards.outcome_reward`). 1.0
      (default) trains on step rewards alone (``reward_funcs`` are then only logged).
    - ``credit``: a credit form of :mod:`prmkit.rl.credits`: ``"pure"`` (default: PURE's code,
      ``temperature`` 0.1; a completion is paid near its worst step, less a leave-one-out baseline of its
      group), ``"min"`` (prmkit's earlier min credit, the default until issue 60: not centred, so it can
      push whole groups negative; kept for past runs), ``"sum"`` (DeepSeekMath's process supervision,
      which pays padding with correct-looking steps), ``"pav"``, or one that also reads the outcome
      (``"anchor"``, ``"first_error"``, ``"papo"``, ``"prof"``, ``"prime"``): TRL's rewards of
      ``reward_funcs``, weighted and summed, 1.0 read as correct (use
      :func:`prmkit.rl.rewards.outcome_reward`; ``process_weight`` 1.0, since the form mixes them itself).
      Only those forms see the outcome: ``"pure"`` is PURE's PRM-only setting, as verl's ``prmkit_pure``
      (PURE's verifiable reward on every prompt is ``"anchor"`` with ``{"share": 1.0}``).
    - ``credit_params``: the form's keywords (e.g. ``{"baseline": "step"}`` for ``pure``; a
      ``temperature`` among them overrides ``temperature``), checked against the form's signature at
      construction.
    - ``temperature``: ``T`` of PURE's weights under ``min`` (and of ``process/paid`` under ``min``,
      ``pure`` and ``anchor``) where ``credit_params`` names none.

    Under ``sum``, ``min`` and ``pav`` a completion paid the unfinished rule (``StepRewards.unpaid``) is
    capped at the worst finished one of its group (:func:`~prmkit.rl.advantages.cap_unpaid`; PURE's code,
    ``pure``, has no such cap). Logged beside TRL's metrics, over the
    whole batch of every process: ``process/paid`` (the mean of what a completion is paid before group
    normalisation from its step rewards, :meth:`~prmkit.rl.paid.PaidForm.process`: their sum under
    ``sum``, their min-form sum under ``min``, PURE's pay on the PRM's 0-1 scale under ``pure``; the
    process part of the monitors' ``paid_reward``),
    ``process/step_reward`` (mean paid step reward), ``process/steps_per_completion``,
    ``process/unfinished`` (share with no final answer) and ``process/overlong``.
    """

    def __init__(
        self,
        *args: Any,
        process_reward: ProcessReward,
        process_weight: float = 1.0,
        credit: str = "pure",
        temperature: float = 0.1,
        credit_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        import trl

        if trl.__version__ != TRL_VERSION:
            warnings.warn(
                f"DenseGRPOTrainer was tested with trl=={TRL_VERSION}, found {trl.__version__}; "
                "check that GRPOTrainer._generate_and_score_completions still returns per-completion "
                "advantages and _compute_loss accepts (batch, tokens) ones",
                stacklevel=2,
            )
        if not 0.0 <= process_weight <= 1.0:
            raise ValueError(f"process_weight: expected a number in [0, 1], found {process_weight}")
        # an unknown name or keyword answers "Did you mean ...?" before any model loads
        self.credit_params = dict(credit_params or {})
        check_params(credit, self.credit_params)
        self.reads_outcome = CREDITS.get(credit).needs_outcome
        super().__init__(*args, **kwargs)
        self.process_reward = process_reward
        self.process_weight, self.credit = process_weight, credit
        self.temperature = self.credit_params.get("temperature", temperature)
        self._outcome: list[float] | None = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
        """TRL's rewards of every reward function (already gathered over processes), kept as each
        completion's outcome: their weighted sum, what TRL's own advantage is computed from."""
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._outcome = (rewards * self.reward_weights.to(rewards.device)).nansum(dim=1).tolist()
        return rewards

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        output["advantages"] = self.dense_advantages(inputs, output)
        return output

    def dense_advantages(self, inputs: list[dict[str, Any]], output: dict[str, Any]) -> Any:
        """The ``(B, T)`` advantages of this process's completions (``T`` = ``completion_ids``' width)."""
        from accelerate.utils import gather_object

        mode = "train" if self.model.training else "eval"
        group = self.num_generations if mode == "train" else self.num_generations_eval
        tokenizer = getattr(self.processing_class, "tokenizer", self.processing_class)
        ids = [
            row[mask.bool()].tolist()
            for row, mask in zip(output["completion_ids"].cpu(), output["completion_mask"].cpu(), strict=True)
        ]
        texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
        paid = self.process_reward.score([x.get("prompt", "") for x in inputs], texts)
        # groups may span processes: every process needs the whole batch's rewards and flags (one gather)
        ends = [step_token_ends(row, tokenizer, p.char_ends) for row, p in zip(ids, paid, strict=True)]
        mine = [
            _Paid(p.rewards, p.unpaid, len(p.parsed.steps), p.parsed.finished, p.overlong, e, len(row),
                  str(x.get("prompt", "")))
            for p, e, row, x in zip(paid, ends, ids, inputs, strict=True)
        ]  # fmt: skip
        batch: list[_Paid] = gather_object(mine)
        start = self.accelerator.process_index * len(inputs)
        if self.credit in ("sum", "min"):  # step-level: one value per step, spread over its tokens
            per_step = step_advantages(
                [b.rewards for b in batch], group, self.credit, unpaid=[b.unpaid for b in batch],
                **{**self.credit_params, "temperature": self.temperature},
            )  # fmt: skip
            if 0.0 < self.process_weight < 1.0:  # mixed: the process part on outcome's scale, whole groups
                per_step = _standardized(per_step)
            process = [
                spread(per_step[start + i], e, len(row))
                for i, (row, e) in enumerate(zip(ids, ends, strict=True))
            ]
        else:
            process = self.credit_rows(batch, group)[start : start + len(inputs)]
        rows = mixed_advantages(output["advantages"].tolist(), process, self.process_weight)
        self._log_process(self._metrics[mode], batch)
        width = output["completion_ids"].shape[1]
        return to_tensor(rows, width).to(output["advantages"].device)

    def credit_rows(self, batch: list[_Paid], group: int) -> list[list[float]]:
        """Token advantages of the whole gathered batch under a credit form of :mod:`prmkit.rl.credits`."""
        rollouts = Rollouts.consecutive(
            [b.rewards for b in batch], [b.ends for b in batch], [b.length for b in batch], group,
            outcome=self._outcome if self.reads_outcome else None, unpaid=[b.unpaid for b in batch],
            keys=[b.key for b in batch[::group]],
        )  # fmt: skip
        rows = credit_advantages(self.credit, rollouts, **self.credit_params)
        return standardized(rows) if 0.0 < self.process_weight < 1.0 else rows

    def _log_process(self, metrics: dict[str, list[float]], batch: list[_Paid]) -> None:
        """The process metrics of the whole (gathered) batch, so every process logs the same numbers."""
        n = len(batch)
        flat = [r for b in batch for r in b.rewards]
        metrics["process/step_reward"].append(sum(flat) / len(flat) if flat else 0.0)
        pay = PaidForm("dense", credit=self.credit, temperature=self.temperature)
        metrics["process/paid"].append(sum(pay.process(b.rewards) for b in batch) / n)
        metrics["process/steps_per_completion"].append(sum(b.steps for b in batch) / n)
        metrics["process/unfinished"].append(sum(not b.finished for b in batch) / n)
        metrics["process/overlong"].append(sum(b.overlong for b in batch) / n)


PRIME_GRAD_CLIP = 10.0
"""The norm PRIME's recipe clips the implicit PRM's gradient at
(``reward_model.prime_model.optim.grad_clip``)."""


def joined(output: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Prompt and completion of TRL's batch as one sequence: token ids, attention mask, and the mask of
    the completion's tokens (the response the implicit PRM's rewards are read at)."""
    import torch

    ids = torch.cat([output["prompt_ids"], output["completion_ids"]], dim=1)
    attention = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
    response = torch.cat([torch.zeros_like(output["prompt_mask"]), output["completion_mask"]], dim=1)
    return ids, attention, response


class PrimeGRPOTrainer(DenseGRPOTrainer):
    """:class:`DenseGRPOTrainer` under PRIME (Cui et al. 2025, arXiv 2502.01456): the process rewards are
    an online implicit PRM's, which learns from the outcome labels of the policy's own samples.

    Takes every ``GRPOTrainer`` argument (``reward_funcs``: the outcome, 1.0 read as correct, as for the
    other forms that read it), plus:

    - ``implicit_prm``: a :class:`~prmkit.modeling.released.ImplicitPair`, the PRM (a causal LM, trained)
      and its reference (frozen), and ``beta``;
    - ``prm_lr``: the PRM's AdamW learning rate (constant; gradients clipped at :data:`PRIME_GRAD_CLIP`);
    - ``credit_params``: the ``prime`` form's keywords (``process_coef``, ``outcome_coef``).

    Each generation round, in this order (PRIME's default, scoring before updating): the PRM's token
    rewards ``beta * (log pi_prm - log pi_ref)`` of every completion token (under ``no_grad``,
    :func:`~prmkit.rl.prime.implicit_token_rewards`), every token a step; the advantages of the ``prime``
    credit form over them and the outcome (:func:`prmkit.rl.credits.prime`); then one
    :func:`~prmkit.rl.prime.update_implicit_prm` step on the same samples, labelled 1 where the outcome is
    at least 0.5. Logged beside TRL's metrics: ``prime/accuracy`` (:func:`~prmkit.rl.prime.label_accuracy`
    of the scores that paid the round, before the PRM saw its labels), ``prime/loss`` (the PRM's loss on
    the round, before its update) and ``process/step_reward`` (the mean token reward). A checkpoint holds
    the PRM (``implicit_prm/``) and its optimiser's state, and a resumed run reads both back.

    One process only: the PRM is updated where it scores, and copies in several processes would part.
    """

    def __init__(
        self,
        *args: Any,
        implicit_prm: Any,
        prm_lr: float,
        credit_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        import torch

        # the implicit PRM pays instead of a ProcessReward: dense_advantages, the only reader, is overridden
        super().__init__(
            *args,
            process_reward=None,  # type: ignore[arg-type]
            credit="prime",
            credit_params=credit_params,
            **kwargs,
        )
        if self.accelerator.num_processes > 1:
            raise ValueError(
                "PrimeGRPOTrainer updates its implicit PRM in one process; found "
                f"{self.accelerator.num_processes}: run it in one"
            )
        self.implicit_prm = implicit_prm.to(self.accelerator.device)
        self.implicit_prm.reference.eval().requires_grad_(False)
        self.prm_optimizer = torch.optim.AdamW(self.implicit_prm.policy.parameters(), lr=prm_lr)

    def dense_advantages(self, inputs: list[dict[str, Any]], output: dict[str, Any]) -> Any:
        """Score with the implicit PRM, the ``prime`` form's ``(B, T)`` advantages, then (training) update
        the PRM on the same samples (the class docstring)."""
        import torch

        mode = "train" if self.model.training else "eval"
        group = self.num_generations if mode == "train" else self.num_generations_eval
        pair, metrics = self.implicit_prm, self._metrics[mode]
        ids, attention, response = joined(output)
        pair.policy.eval()
        with torch.no_grad():
            tokens = implicit_token_rewards(pair, ids, attention, response)
        rewards, ends = step_rewards(tokens, response, pair.beta)
        outcome = list(self._outcome) if self._outcome is not None else [0.0] * len(rewards)
        rollouts = Rollouts.consecutive(rewards, ends, [len(e) for e in ends], group, outcome=outcome)
        rows = credit_advantages("prime", rollouts, **self.credit_params)
        labels = torch.tensor([float(o >= 0.5) for o in outcome], device=ids.device)
        metrics["prime/accuracy"].append(label_accuracy(tokens, labels, pair.beta))
        if mode == "train":
            loss = update_implicit_prm(
                pair, self.prm_optimizer, ids, attention, response, labels, PRIME_GRAD_CLIP
            )
            metrics["prime/loss"].append(loss)
        flat = [r for row in rewards for r in row]
        metrics["process/step_reward"].append(sum(flat) / len(flat) if flat else 0.0)
        return to_tensor(rows, output["completion_ids"].shape[1]).to(output["advantages"].device)

    def save_implicit_prm(self, folder: str | Path, tokenizer: Any = None) -> None:
        """The PRM as an ordinary HF folder (safetensors weights, ``config.json``, the tokenizer if given)."""
        self.implicit_prm.policy.save_pretrained(str(folder), safe_serialization=True)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(folder))

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        """TRL's checkpoint, plus the implicit PRM (``implicit_prm/``) and its optimiser's state
        (``implicit_prm/optimizer.pt``, as TRL keeps its own ``optimizer.pt``): a resumed run goes on with
        the PRM it had, not a fresh copy of π0."""
        import torch
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            checkpoint = Path(
                self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            )
            self.save_implicit_prm(checkpoint / PRIME_DIR)
            torch.save(self.prm_optimizer.state_dict(), checkpoint / PRIME_DIR / "optimizer.pt")

    def _load_optimizer_and_scheduler(self, checkpoint: str | None) -> None:
        """TRL's, then the implicit PRM and its optimiser's state where the checkpoint holds them."""
        import torch
        from transformers import AutoModelForCausalLM

        super()._load_optimizer_and_scheduler(checkpoint)
        folder = Path(checkpoint, PRIME_DIR) if checkpoint is not None else None
        if folder is None or not folder.is_dir():
            return
        saved = AutoModelForCausalLM.from_pretrained(str(folder))
        self.implicit_prm.policy.load_state_dict(saved.state_dict())
        state = torch.load(folder / "optimizer.pt", map_location=self.accelerator.device, weights_only=True)
        self.prm_optimizer.load_state_dict(state)
