"""``pretrain_lm``: a tiny causal LM trained from scratch on trace text, saved as an ordinary
``AutoModelForCausalLM`` folder with its tokenizer.

It is the backbone the world's PRM and ORM start from (a verifier that already knows what a right step
looks like learns to spot a wrong one in minutes), and a small neural policy: its text layout is the
policies' (``problem``, newline, one step per line), so ``prmkit.policies.hf`` can sample from it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.cards.process_card import ProcessCard, gold_use, write_process_card
from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.modeling.backbone import tiny_config
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from prmkit.training import loop
from prmkit.training.config import PretrainConfig
from prmkit.training.data import lm_examples, split_by_problem


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


def _valid(trace: Trace, source: str) -> bool:
    return trace.first_error(source) == -1 and trace.answer_correct is not False


def pretrain_lm(
    data: str | Path | Sequence[Trace], output_dir: str | Path, config: PretrainConfig | None = None
) -> dict[str, Any]:
    """Build a tokenizer on the data, train a tiny LM on it, save both; returns losses and timings."""
    import torch
    from transformers import AutoModelForCausalLM, Trainer

    from prmkit.formats.inputs import read_traces

    config = config or PretrainConfig()
    threads = loop.set_threads(config)
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
    args = loop.training_args(config, out, evaluate=False)
    budget = loop.time_budget(config.max_minutes, config.budget_clock, schedule=config.max_steps is None)
    trainer = loop.budgeted(Trainer)(
        model=model, args=args, train_dataset=lm_examples(train, tok, config.tiny.max_length, config.loss_on_problem),
        data_collator=LMCollator(tok.pad_token_id), callbacks=[budget],
    )  # fmt: skip
    wall, cpu = time.monotonic(), time.process_time()
    trainer.train(resume_from_checkpoint=loop.last_checkpoint(out, config.resume))
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    run = loop.run_record(trainer, config, budget, threads, wall, cpu)
    dev_loss = (
        trainer.evaluate(lm_examples(dev, tok, config.tiny.max_length, config.loss_on_problem))["eval_loss"]
        if dev
        else None
    )
    model.config.use_cache = True  # a policy generates; training turned the cache off
    model.save_pretrained(str(out), safe_serialization=True)
    tok.save_pretrained(str(out))
    from prmkit.training.heads import _write_logs

    _write_logs(trainer.state.log_history, out, "LM pretraining")
    shutil.rmtree(out / loop.CHECKPOINTS, ignore_errors=True)
    with atomic_write(out / "training.json") as fh:  # what the run did, beside the model
        record = {"config": config.model_dump(mode="json"), **run, "dev_loss": dev_loss,
                  "gold_use": [g.model_dump(mode="json") for g in gold]}  # fmt: skip
        json.dump(record, fh, indent=2)
    card = ProcessCard(  # the LM is a model too: what it read, and whether gold chose its corpus
        kind="lm",
        data={
            "traces": len(traces),
            "train_traces": len(train),
            "dev_traces": len(dev),
            "only_valid": config.only_valid,
        },
        metrics={"dev_loss": dev_loss},
        training=record,
        gold_use=gold,
    )
    write_process_card(out, card)
    return {"output_dir": str(out), "dev_loss": dev_loss, "training": run, "traces": len(train),
            "gold_use": record["gold_use"]}  # fmt: skip
