"""``pretrain_lm``: a tiny causal LM trained from scratch on trace text, saved as an ordinary
``AutoModelForCausalLM`` folder with its tokenizer.

It is the backbone the world's PRM and ORM start from (a verifier that already knows what a right step
looks like learns to spot a wrong one in minutes), and a small neural policy: its text layout is the
policies' (``problem``, newline, one step per line), so ``prmkit.policies.hf`` can sample from it.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.cards.process_card import ProcessCard, gold_use, write_process_card
from prmkit.core.files import atomic_write, remove_partial_writes
from prmkit.core.model import Trace
from prmkit.core.ranks import is_main_process
from prmkit.core.render import context_length, step_inputs
from prmkit.modeling.backbone import tiny_config
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from prmkit.training import loop
from prmkit.training.config import PretrainConfig
from prmkit.training.data import lm_examples, lm_text, split_by_problem

logger = logging.getLogger(__name__)


class LMCollator:
    """Right-pads token ids; labels are the ids with padding ignored."""

    def __init__(self, pad_id: int):
        self.pad_id = pad_id

    def __call__(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        import torch

        width = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for k, r in enumerate(rows):
            ids[k, : len(r["input_ids"])] = torch.tensor(r["input_ids"])
            mask[k, : len(r["input_ids"])] = 1
        labels = ids.masked_fill(mask == 0, -100)
        for k, r in enumerate(rows):
            labels[k, : r.get("prompt_len", 0)] = -100
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


NUMBER = re.compile(r"\d+")


class CopyCheckError(RuntimeError):
    """A pretrained LM that still does not copy tool values after its extra rounds (``min_copy_rate``)."""


def restated_numbers(trace: Trace) -> list[tuple[int, int]]:
    """Character spans, in :func:`lm_text`, of the numbers a step writes that the tool results it just
    read also hold (``The population of Tolbin is 412.`` after a result saying 412).

    Read from the text alone, no label: a number the agent misread is not in the result and is not
    counted, so these are the places where writing anything but the result's digits would be an error.
    """
    spans: list[tuple[int, int]] = []
    at = len(trace.problem.text) + 1
    for text in step_inputs(trace.steps):
        n = context_length(text)
        if n:
            read = set(NUMBER.findall(text[:n]))
            spans += [(at + m.start(), at + m.end()) for m in NUMBER.finditer(text, n) if m.group() in read]
        at += len(text) + 1
    return spans


def copy_rate(model: Any, tokenizer: Any, traces: Sequence[Trace], max_length: int) -> dict[str, Any]:
    """How well a causal LM copies a value from a tool result into the step that restates it.

    For every restated number (:func:`restated_numbers`) in ``traces``, teacher-forced: whether the LM's
    most likely next token is the right digit at each of its digits (``copy_rate``: the share of numbers
    with every digit right) and the mean log-probability of those digits. A likelihood PRM sees a misread
    only where its backbone is sure of the right digit, so this is what an agent PRM needs of its LM;
    it reads no label. ``numbers`` is 0 (rate None) for traces without tool results (math).
    """
    import torch

    hits = total = digits = 0
    logp_sum = 0.0
    model.eval()
    for trace in traces:
        spans = restated_numbers(trace)
        if not spans:
            continue
        enc = tokenizer(lm_text(trace), return_offsets_mapping=True)  # as lm_examples encodes it
        ids, offsets = enc["input_ids"][:max_length], enc["offset_mapping"][:max_length]
        with torch.no_grad():
            logp = torch.log_softmax(
                model(torch.tensor([ids], device=model.device)).logits[0].float(), -1
            ).cpu()
        for start, end in spans:
            where = [t for t, (a, b) in enumerate(offsets) if a >= start and b <= end and t > 0]
            if not where or offsets[where[-1]][1] != end:  # cut off by max_length
                continue
            rows = logp[[t - 1 for t in where]]  # position t-1 predicts token t
            right = torch.tensor([ids[t] for t in where])
            total += 1
            hits += int(bool((rows.argmax(-1) == right).all()))
            logp_sum += float(rows.gather(1, right[:, None]).sum())
            digits += len(where)
    return {"numbers": total, "copy_rate": hits / total if total else None,
            "digit_logp": logp_sum / digits if digits else None}  # fmt: skip


def _train(
    model: Any, tok: Any, examples: list[dict[str, Any]], config: PretrainConfig, out: Path
) -> tuple[Any, dict]:
    """One scheduled run (warm-up, cosine) of ``config``'s steps on ``model``, checkpoints under ``out``
    (resumed from the newest after a crash); returns the trainer and what the run did."""
    from transformers import Trainer

    threads = loop.set_threads(config)
    args = loop.training_args(config, out, evaluate=False)
    budget = loop.time_budget(config.max_minutes, config.budget_clock, schedule=config.max_steps is None)
    trainer = loop.budgeted(Trainer)(model=model, args=args, train_dataset=examples,
                                     data_collator=LMCollator(tok.pad_token_id), callbacks=[budget])  # fmt: skip
    wall, cpu = loop.train_from(trainer, loop.last_checkpoint(out, config.resume, args), budget)
    return trainer, loop.run_record(trainer, config, budget, threads, wall, cpu)


def _write(out: Path, model: Any, tok: Any, history: list[dict], record: dict, card: ProcessCard) -> None:
    """The pretrained LM's folder: weights, tokenizer, logs, what the run did, its process card."""
    from prmkit.training.heads import _write_logs

    remove_partial_writes(out)  # a run killed while writing its final model left these
    model.save_pretrained(str(out), safe_serialization=True)
    tok.save_pretrained(str(out))
    _write_logs(history, out, "LM pretraining")
    with atomic_write(out / "training.json") as fh:  # what the run did, beside the model
        json.dump(record, fh, indent=2)
    write_process_card(out, card)
    shutil.rmtree(out / loop.CHECKPOINTS, ignore_errors=True)  # written whole: resume state no longer needed


def _valid(trace: Trace, source: str) -> bool:
    return trace.first_error(source) == -1 and trace.answer_correct is not False


def pretrain_lm(
    data: str | Path | Sequence[Trace], output_dir: str | Path, config: PretrainConfig | None = None
) -> dict[str, Any]:
    """Build a tokenizer on the data, train a tiny LM on it, save both; returns losses and timings."""
    import torch
    from transformers import AutoModelForCausalLM

    from prmkit.formats.inputs import read_traces

    config = config or PretrainConfig()
    loop.set_threads(config)
    torch.manual_seed(config.seed)
    out = Path(output_dir)
    traces = read_traces(data) if isinstance(data, str | Path) else list(data)
    gold = gold_use("corpus_filter", config.label_source, traces) if config.only_valid else []
    if config.only_valid:
        traces = [t for t in traces if _valid(t, config.label_source)]
    if not traces:
        raise ValueError("no traces to pretrain on (with only_valid, none had a valid process)")
    train, dev = split_by_problem(traces, config.dev_fraction, config.seed)
    tok = build_tokenizer(trace_texts(train), vocab_size=config.vocab_size)
    model = AutoModelForCausalLM.from_config(tiny_config(tok, config.tiny))
    examples = lm_examples(train, tok, config.tiny.max_length, config.loss_on_problem)
    trainer, run = _train(model, tok, examples, config, out)
    copy = copy_rate(model, tok, dev, config.tiny.max_length)
    run["copy_after_max_steps"], rounds = copy, []
    history = list(trainer.state.log_history)  # every round's log, its steps counted on from the last
    while config.min_copy_rate is not None and copy["numbers"] and copy["copy_rate"] < config.min_copy_rate:
        if len(rounds) == config.copy_rounds:
            raise CopyCheckError(
                f"{out}: the pretrained LM copies {copy['copy_rate']:.1%} of the {copy['numbers']} tool values "
                f"its dev traces restate, below min_copy_rate {config.min_copy_rate:.0%}, after "
                f"{run['steps']} + {len(rounds)} x {config.copy_steps} steps: raise max_steps or copy_rounds "
                "(its checkpoints are kept)"
            )
        k = len(rounds) + 1
        logger.warning("the LM copies %.1f%% of restated tool values (min_copy_rate %.0f%%): extra round %d of "
                       "%d steps", 100 * copy["copy_rate"], 100 * config.min_copy_rate, k, config.copy_steps)  # fmt: skip
        extra = config.model_copy(
            update={"max_steps": config.copy_steps, "max_minutes": None, "seed": config.seed + k}
        )
        trainer, more = _train(model, tok, examples, extra, out / loop.CHECKPOINTS / f"round-{k}")
        done = run["steps"] + sum(r["steps"] for r in rounds)
        history += [
            {**h, "step": h["step"] + done, "round": k} for h in trainer.state.log_history if "step" in h
        ]
        copy = copy_rate(model, tok, dev, config.tiny.max_length)
        rounds.append({"round": k, "steps": more["steps"], "wall_seconds": more["wall_seconds"], **copy})
    run["copy_rounds"] = rounds
    dev_loss = (
        trainer.evaluate(lm_examples(dev, tok, config.tiny.max_length, config.loss_on_problem))["eval_loss"]
        if dev
        else None
    )
    model.config.use_cache = True  # a policy generates; training turned the cache off
    record = {"config": config.model_dump(mode="json"), **run, "dev_loss": dev_loss, "copy": copy,
              "gold_use": [g.model_dump(mode="json") for g in gold]}  # fmt: skip
    card = ProcessCard(  # the LM is a model too: what it read, and whether gold chose its corpus
        kind="lm",
        data={
            "traces": len(traces),
            "train_traces": len(train),
            "dev_traces": len(dev),
            "only_valid": config.only_valid,
        },
        metrics={"dev_loss": dev_loss, "copy_rate": copy["copy_rate"]},
        training=record,
        gold_use=gold,
    )
    if is_main_process():  # every process trained; one writes
        _write(out, model, tok, history, record, card)
    loop.finish_together(trainer)
    return {"output_dir": str(out), "dev_loss": dev_loss, "copy": copy, "training": run, "traces": len(train),
            "gold_use": record["gold_use"]}  # fmt: skip
