"""The optimisation loop both heads share: HF Trainer with a step-target loss, dev first-error model
selection, a wall-clock budget, crash resume and a loss-curve PNG.

Built on ``transformers.Trainer`` so ``accelerate launch`` runs it on several GPUs unchanged, mixed
precision and gradient accumulation come from its arguments, and resuming restores optimiser, scheduler,
RNG and data position from the newest ``checkpoints/checkpoint-N``.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.core.ranks import is_main_process
from prmkit.training.arrow import row_lengths
from prmkit.training.config import _Config
from prmkit.training.data import ReplayableLengthSampler
from prmkit.training.heap import kept_heap

CHECKPOINTS = "checkpoints"
ORDER_FILE = "prmkit_order_rng_{}.safetensors"
"""Written into every checkpoint by each process: the RNG state its current pass's data order was drawn
from (safetensors, no pickle), so a resumed run draws that pass's order again."""
RUN_FILE = "prmkit_run.json"
"""Written into every checkpoint: the time the run had spent when it was saved, and (at the end of
training) the trainer's closing summary, so a run resumed after a crash reports its whole cost."""
logger = logging.getLogger(__name__)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _no_accelerator() -> bool:
    """No GPU (or other torch accelerator) here: the trainer is told to use the CPU, which is also what
    makes ``accelerate launch --multi_gpu`` on a CPU machine a gloo process group (accelerate's
    ``PartialState(cpu=True)``) rather than one process group the trainer does not train in."""
    import torch

    return not torch.accelerator.is_available()


def clock(kind: str) -> float:
    """Seconds on the budget clock: wall time, or process CPU time per torch thread (``cpu``), which on
    a machine shared with other jobs estimates the wall time the run would take with its cores alone."""
    import torch

    if kind == "cpu":
        return time.process_time() / max(1, torch.get_num_threads())
    return time.monotonic()


def precision_flags(choice: str) -> dict[str, bool]:
    """TrainingArguments flags for ``mixed_precision`` (``auto``: the best the hardware has)."""
    import torch

    if choice == "auto":
        if not torch.cuda.is_available():
            return {}
        choice = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return {"bf16": choice == "bf16", "fp16": choice == "fp16"}


def training_args(config: _Config, output_dir: Path, evaluate: bool, **extra: Any) -> Any:
    """The run's ``TrainingArguments``. Making them starts a launch's process group; on every process
    but the first, prmkit's warnings are then silenced (the trainer does the same for its own logs), so
    a launch of 8 warns once."""
    from transformers import TrainingArguments

    every = config.eval_every
    args = TrainingArguments(
        output_dir=str(output_dir / CHECKPOINTS),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps or -1,
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.lr,
        weight_decay=config.weight_decay,
        warmup_steps=0.05,
        lr_scheduler_type="cosine",  # by steps; a run planned by time only, by time (see time_budget)
        logging_steps=max(1, min(10, every // 5)),
        eval_strategy="steps" if evaluate else "no",
        eval_steps=every,
        save_strategy="steps",
        save_steps=every,
        save_total_limit=2,
        load_best_model_at_end=evaluate,
        metric_for_best_model="first_error_f1" if evaluate else None,
        greater_is_better=True,
        train_sampling_strategy="group_by_length",
        remove_unused_columns=False,
        report_to="none",
        seed=config.seed,
        disable_tqdm=True,
        dataloader_num_workers=0,
        dataloader_pin_memory=_cuda(),
        use_cpu=_no_accelerator(),
        **precision_flags(config.mixed_precision),
        **extra,
    )
    if not is_main_process():
        logging.getLogger("prmkit").setLevel(logging.ERROR)
    return args


def without_dev(args: Any) -> None:
    """Turn dev evaluation off in ``args`` made with it on (the dev traces all turned out too long to
    score, which is known only once the model's convention has laid them out)."""
    from transformers.trainer_utils import IntervalStrategy

    args.eval_strategy, args.load_best_model_at_end = IntervalStrategy.NO, False
    args.metric_for_best_model, args.eval_on_start = None, False


def time_budget(minutes: float | None, kind: str = "wall", schedule: bool = True) -> Any:
    """A callback that stops training (saving and evaluating once more) after ``minutes`` of *training*
    time on the ``kind`` clock: only the time inside optimiser steps counts, so dev evaluations and
    checkpoint saves are outside the budget and a slow evaluation never takes steps away.

    With ``schedule`` (a run planned by time, no ``max_steps``), trainers made by :func:`budgeted` also
    take their learning-rate schedule from it: 5 % linear warm-up, then cosine to zero over the *elapsed
    share of the budget*, so a run cut by time ends annealed however fast the machine is. Without it the
    budget is only a cap on a run planned in steps, and ``stopped`` records that it cut the run short.
    """
    from transformers import TrainerCallback

    class Budget(TrainerCallback):
        def __init__(self) -> None:
            self.minutes, self.schedule = minutes, schedule and minutes is not None
            self.spent, self.begin, self.stopped = 0.0, None, False

        def elapsed(self) -> float:
            return self.spent + (clock(kind) - self.begin if self.begin is not None else 0.0)

        def scale(self) -> float:
            frac = min(1.0, self.elapsed() / (self.minutes * 60))
            return min(1.0, (frac + 1e-3) / 0.05) * 0.5 * (1 + math.cos(math.pi * frac))

        def on_step_begin(self, args, state, control, **kw):
            self.begin = clock(kind)

        def on_step_end(self, args, state, control, **kw):
            self.spent, self.begin = self.elapsed(), None
            if (
                self.minutes is not None
                and self.spent > self.minutes * 60
                and state.global_step < state.max_steps
            ):
                self.stopped = True
                control.should_training_stop = True
                control.should_save = True
                control.should_evaluate = args.eval_strategy != "no"
            return control

    return Budget()


def budgeted(trainer_cls: type) -> type:
    """``trainer_cls`` as prmkit trains with it (every trainer here is made by this function):

    - its scheduler follows a time-budget callback among its callbacks when that budget plans the run
      (``schedule``); a run planned in steps keeps the trainer's own cosine;
    - each checkpoint keeps the RNG state its pass's length-grouped order was drawn from
      (:class:`ReplayableLengthSampler`, ``ORDER_FILE``), and a run resumed from it draws that order
      again (:func:`train_from`), so it trains on the batches the run it continues would have. The other
      draws of a run are the global RNG's (dropout), which the trainer saves with each checkpoint and
      restores on resuming; nothing else draws at random (:func:`binary_loss`'s label noise is modelled,
      not sampled), so a run killed after a checkpoint resumes to the uninterrupted run's model, bit for
      bit (``tests/training/test_resume.py``). A run planned by time (``max_minutes``, no ``max_steps``)
      is not reproducible even uninterrupted: its learning rate follows the clock.
    """

    class Budgeted(trainer_cls):
        def create_scheduler(self, num_training_steps, optimizer=None):
            budget = next((c for c in self.callback_handler.callbacks if hasattr(c, "scale")), None)
            if budget is None or not budget.schedule:
                return super().create_scheduler(num_training_steps, optimizer)
            if self.lr_scheduler is None:
                from torch.optim.lr_scheduler import LambdaLR

                self.lr_scheduler = LambdaLR(optimizer or self.optimizer, lambda _step: budget.scale())
            return self.lr_scheduler

        def _get_train_sampler(self, train_dataset=None):
            data = self.train_dataset if train_dataset is None else train_dataset
            rows = isinstance(data, Sequence) or "length" in getattr(data, "column_names", ())
            if self.args.train_sampling_strategy != "group_by_length" or not rows:
                return super()._get_train_sampler(train_dataset)
            self.order = ReplayableLengthSampler(
                row_lengths(data),
                # one group per optimiser step of every rank (transformers groups per rank): each rank draws
                # this order from the same seed and accelerate deals its batches out in turn, so n ranks
                # train on the batches one process accumulating n times as many would
                self.args.train_batch_size * self.args.gradient_accumulation_steps * self.args.world_size,
                replay=getattr(self, "order_replay", None),
            )
            return self.order

        def _save_rng_state(self, output_dir: str) -> None:
            super()._save_rng_state(output_dir)
            order = getattr(self, "order", None)
            if order is not None and order.drawn_from is not None:
                from safetensors.torch import save_file

                name = ORDER_FILE.format(self.args.process_index)
                save_file({"rng_state": order.drawn_from}, str(Path(output_dir) / name))

    return Budgeted


def set_threads(config: _Config) -> int:
    """Apply ``config.threads`` (torch's default when None) and return the count in use: recorded with
    the run, since a different count changes float rounding and, on a shared machine, the speed."""
    import torch

    if config.threads:
        torch.set_num_threads(config.threads)
    return torch.get_num_threads()


def sharded(args: Any) -> bool:
    """Whether each rank holds only a shard of the weights (FSDP, DeepSpeed, set in the arguments or by
    ``accelerate launch``'s config): then every rank takes part in each forward pass, and the weights
    are gathered before they are saved (:func:`full_state_dict`)."""
    import os

    launched = ("ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED")
    return (
        bool(args.fsdp)
        or bool(args.deepspeed)
        or any(os.environ.get(v, "").lower() == "true" for v in launched)
    )


def full_state_dict(trainer: Any) -> dict[str, Any] | None:
    """The whole model's weights gathered from every rank's shard (None when unsharded: the model holds
    them). Every rank must call it, since the gathering is collective; the main process saves them."""
    if not sharded(trainer.args):
        return None
    return trainer.accelerator.get_state_dict(trainer.model_wrapped)


def finish_together(trainer: Any) -> None:
    """Every process trains; the main one (:func:`~prmkit.core.ranks.is_main_process`) writes the model,
    the cards, the logs and removes the checkpoints. Hold every rank here until it has, so no rank returns
    (and, under ``prmkit run``, starts the next stage) before the model it trained is on disk."""
    trainer.accelerator.wait_for_everyone()


def scored_on_every_rank(trainer: Any, scorer: Any, traces: Sequence[Trace]) -> list:
    """``scorer.score(traces)``, the work split across the launch's ranks and the scores gathered back
    in order on every rank (each then computes the same metrics and picks the same best checkpoint).
    With sharded weights every rank must run every forward pass, so each scores them all."""
    world, rank = trainer.args.world_size, trainer.args.process_index
    if world == 1 or sharded(trainer.args):
        return scorer.score(list(traces))
    from accelerate.utils import gather_object

    size = -(-len(traces) // world)  # contiguous shards: gathered in rank order, they are in order
    mine = scorer.score(list(traces[rank * size : (rank + 1) * size]))
    return [score for part in gather_object([mine]) for score in part]  # one list per rank, in rank order


def run_record(trainer: Any, config: _Config, budget: Any, threads: int, wall: float, cpu: float) -> dict:
    """What a finished run actually did, for its card and the report: optimiser steps taken against the
    steps planned, what stopped it, its threads and clocks. A time cap that cut the run short is logged
    as a warning here, since the model is then not the one the config describes."""
    state, args = trainer.state, trainer.args
    planned, steps = state.max_steps, state.global_step
    stopped_by = "time cap" if budget.stopped else ("max_steps" if config.max_steps else "epochs")
    if budget.stopped:
        logger.warning(
            "training stopped early by its time cap (max_minutes=%s on the %s clock) after %d of %d planned "
            "optimiser steps: this model is not the one its config describes; plan the run in max_steps",
            config.max_minutes, config.budget_clock, steps, planned,
        )  # fmt: skip
    return {
        "steps": steps,
        "planned_steps": planned,
        "stopped_early": bool(budget.stopped),
        "stopped_by": stopped_by,
        "threads": threads,
        "world_size": args.world_size,
        "effective_batch": args.per_device_train_batch_size
        * args.gradient_accumulation_steps
        * args.world_size,
        "train_clock_minutes": round(budget.spent / 60, 3),
        "wall_seconds": wall,
        "cpu_seconds": cpu,
    }


def step_loss(logits: Any, targets: Any, num_classes: int, noise: tuple[float, float] = (0.0, 0.0)) -> Any:
    """Loss at the tagged positions: :func:`binary_loss` on the 2-class softmax (exactly cross-entropy for
    hard 0/1 targets and no noise), or plain cross-entropy for 3 classes."""
    import torch.nn.functional as F

    mask = targets != -100
    rows, t = logits[mask].float(), targets[mask]
    if rows.numel() == 0:
        return logits.sum() * 0.0
    if num_classes == 2:
        logp = F.log_softmax(rows, dim=-1)
        return binary_loss(logp[:, 1], logp[:, 0], t, noise)[0].mean()
    return F.cross_entropy(rows, t.long())


def binary_loss(log_good: Any, log_bad: Any, y: Any, noise: tuple[float, float]) -> tuple[Any, Any]:
    """Per-step binary cross-entropy of targets ``y`` (1 = correct, soft allowed) given the model's log
    probabilities that each step is correct / wrong, and each step's posterior probability of being
    correct given a "correct" label (detached; 1 without noise).

    ``noise = (missed, false)`` models labels that call a wrong step correct with probability ``missed``
    and a correct step wrong with probability ``false``: the label's likelihood is then
    ``P(said correct) = P(correct) (1 - false) + P(wrong) missed`` (forward loss correction, Patrini et
    al. 2017). Why it matters: a step the model is sure about but labelled the other way costs at most
    about ``-log rate`` and barely pulls, where plain cross-entropy gives it the largest gradient in the
    batch, so a few flipped labels can outweigh thousands of right ones."""
    import torch

    missed, false = noise
    if missed <= 0 and false <= 0:
        return -(y * log_good + (1 - y) * log_bad), torch.ones_like(log_good)

    def log(p: float) -> float:
        return math.log(p) if p > 0 else -math.inf

    kept_good = log_good + math.log1p(-false)
    said_good = torch.logaddexp(kept_good, log_bad + log(missed))
    said_bad = torch.logaddexp(log_bad + math.log1p(-missed), log_good + log(false))
    return -(y * said_good + (1 - y) * said_bad), (kept_good - said_good).exp().detach()


def make_trainer(
    model: Any,
    args: Any,
    train: list,
    collator: Any,
    num_classes: int,
    dev: tuple[Sequence[Trace], str],
    convention: Any,
    callbacks: list,
    objective: Any = None,
    noise: tuple[float, float] = (0.0, 0.0),
) -> Any:
    """A Trainer whose loss is ``objective(logits, batch)`` (default: :func:`step_loss` at the step tags),
    and whose evaluation is first-error F1 on dev traces against ``dev``'s label source."""
    from transformers import Trainer

    from prmkit.scoring.scorer import ModelScorer
    from prmkit.training.metrics import first_error_report

    started = (time.monotonic(), clock("cpu"))
    dev_traces, dev_source = dev

    class StepTrainer(budgeted(Trainer)):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            out = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
            if objective is None:
                loss = step_loss(out.logits, inputs["step_targets"], num_classes, noise)
            else:
                loss = objective(out.logits, inputs)
            return (loss, out) if return_outputs else loss

        def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
            scorer = ModelScorer(self.model, convention, name="dev", device=str(self.args.device))
            scores = scored_on_every_rank(self, scorer, dev_traces)
            report = first_error_report(dev_traces, scores, source=dev_source)
            p = metric_key_prefix
            metrics = {f"{p}_first_error_f1": report["f1"], f"{p}_acc_error": report["acc_error"] or 0.0,
                       f"{p}_acc_correct": report["acc_correct"] or 0.0, f"{p}_threshold": report["threshold"],
                       f"{p}_minutes": (time.monotonic() - started[0]) / 60,
                       f"{p}_cpu_minutes": (clock("cpu") - started[1]) / 60}  # fmt: skip
            metrics.update({f"{p}_f1_{k}": v["f1"] or 0.0 for k, v in report["by_kind"].items()})
            self.log(metrics)
            self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
            self.model.train()
            return metrics

    return StepTrainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=[train[0]] if dev_traces else None,  # a stand-in: evaluate scores the dev traces
        data_collator=collator,
        callbacks=callbacks,
    )


def run_clock(budget: Any) -> Any:
    """A callback that carries the run's clocks through its checkpoints (:data:`RUN_FILE`).

    Without it a run killed while writing its final model, then resumed from its last checkpoint,
    came back with a card saying it took 0.003 s and a training log one entry short (the trainer's
    closing summary is logged after the last checkpoint is saved)."""
    from transformers import TrainerCallback
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    class RunClock(TrainerCallback):
        def __init__(self) -> None:
            self.prior = {"wall_seconds": 0.0, "cpu_seconds": 0.0}
            self.started = (time.monotonic(), time.process_time())
            self.summary: dict[str, Any] | None = None

        def resume(self, checkpoint: str | None) -> None:
            """Take the clocks (and the budget's spent time) saved with ``checkpoint``."""
            path = Path(checkpoint or "") / RUN_FILE
            if checkpoint is None or not path.is_file():
                return
            saved = json.loads(path.read_text())
            self.prior = {k: float(saved.get(k, 0.0)) for k in self.prior}
            if hasattr(budget, "spent") and "train_seconds" in saved:  # the time cap goes on where it was
                budget.spent = float(saved["train_seconds"])
            self.summary = saved.get("summary")

        def totals(self) -> tuple[float, float]:
            """(wall, CPU) seconds spent on the run by every process that worked on it."""
            return (
                self.prior["wall_seconds"] + time.monotonic() - self.started[0],
                self.prior["cpu_seconds"] + time.process_time() - self.started[1],
            )

        def _write(self, args: Any, state: Any, **more: Any) -> None:
            folder = Path(args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"
            if not folder.is_dir() or not state.is_world_process_zero:
                return
            wall, cpu = self.totals()
            record = {"wall_seconds": wall, "cpu_seconds": cpu, **more}
            if hasattr(budget, "spent"):
                record["train_seconds"] = budget.spent
            with atomic_write(folder / RUN_FILE) as fh:
                json.dump(record, fh)

        def on_save(self, args, state, control, **kw):
            self._write(args, state)

        def on_train_end(self, args, state, control, **kw):
            closing = state.log_history[-1] if state.log_history else {}
            if "train_runtime" in closing:
                self._write(args, state, summary=closing)

    return RunClock()


def train_from(trainer: Any, checkpoint: str | None, budget: Any) -> tuple[float, float]:
    """``trainer.train`` resumed from ``checkpoint``, except that a checkpoint already holding every
    planned step is loaded, not trained on; returns the (wall, CPU) seconds the run took, counting the
    processes before a crash (:func:`run_clock`).

    transformers' Trainer resumed at its last step takes one optimiser step more (and saves
    ``checkpoint-N+1``), so a run that crashed after its final checkpoint but before the model was
    written would come back as a model one step past the one it had finished.
    """
    clock = run_clock(budget)
    clock.resume(checkpoint)
    trainer.add_callback(clock)
    if checkpoint is not None and trainer.args.max_steps > 0:
        from transformers import TrainerState

        state = TrainerState.load_from_json(str(Path(checkpoint) / "trainer_state.json"))
        if state.global_step >= trainer.args.max_steps:
            trainer._load_from_checkpoint(checkpoint)
            trainer.state = state
            if clock.summary is not None:  # logged after this checkpoint was saved: restored from RUN_FILE
                state.log_history.append(clock.summary)
            if trainer.args.load_best_model_at_end and state.best_model_checkpoint:
                trainer._load_best_model()
            return clock.totals()
    if checkpoint is not None:
        order = Path(checkpoint) / ORDER_FILE.format(trainer.args.process_index)
        if order.exists():
            from safetensors.torch import load_file

            trainer.order_replay = load_file(str(order))["rng_state"]
    with kept_heap(trainer.args.device.type == "cpu"):  # CPU steps reuse the last step's pages
        trainer.train(resume_from_checkpoint=checkpoint)
    return clock.totals()


def last_checkpoint(output_dir: Path, resume: bool, args: Any = None) -> str | None:
    """The newest whole ``checkpoints/checkpoint-N`` to resume from, when resuming and one exists.

    transformers writes a checkpoint in place, its ``trainer_state.json`` last; resuming from one a kill
    cut off before that goes on without the optimiser or RNG state it lacks (it only logs that they are
    missing), so a folder whose state does not read is removed and the run resumes from the one before.
    Given the run's training ``args``, the main process looks (and removes) first and the others after
    it, so every rank of a launch resumes from the same checkpoint."""
    if args is not None and args.world_size > 1:
        with args.main_process_first(desc="finding the checkpoint to resume from", local=False):
            return last_checkpoint(output_dir, resume)
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    folder = output_dir / CHECKPOINTS
    if not resume or not folder.is_dir():
        return None
    prefix = f"{PREFIX_CHECKPOINT_DIR}-"
    found = [p for p in folder.glob(prefix + "*") if p.is_dir() and p.name[len(prefix) :].isdigit()]
    for path in sorted(found, key=lambda p: int(p.name[len(prefix) :]), reverse=True):
        try:
            json.loads((path / "trainer_state.json").read_text())
            return str(path)
        except (OSError, ValueError):
            logger.warning("%s was cut off while being saved: removed; resuming from the one before", path)
            shutil.rmtree(path, ignore_errors=True)
    return None


def loss_curve(log_history: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Training loss (and dev first-error F1 when logged) against optimiser steps, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loss = [(r["step"], r["loss"]) for r in log_history if "loss" in r]
    f1 = [(r["step"], r["eval_first_error_f1"]) for r in log_history if "eval_first_error_f1" in r]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if loss:
        ax.plot(*zip(*loss, strict=True), label="train loss", color="tab:blue")
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("loss")
    if f1:
        ax2 = ax.twinx()
        ax2.plot(*zip(*f1, strict=True), "o-", label="dev first-error F1", color="tab:orange")
        ax2.set_ylabel("dev first-error F1")
        ax2.set_ylim(0, 1)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
