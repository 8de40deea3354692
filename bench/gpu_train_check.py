"""GPU check: prmkit's PRM training of a 1.5B model at 4,096 tokens per trace, against a plain Trainer.

What it measures. A random-weight model shaped as Qwen2.5-Math-1.5B (``Qwen2Config``: hidden 1536, 28
layers, 12 heads, 2 KV heads, intermediate 8960, vocab 151936, tied embeddings, 4,096 positions; built
from the config on the device, saved once in bfloat16 as such checkpoints ship; nothing downloaded) is
trained as a step classifier by ``prmkit.training.train_prm(traces, out, PrmConfig(base_model=folder,
max_length=4096, ...))``, the path ``prmkit train prm`` takes, in four configurations:

- ``plain``: every weight trained, float32 master weights, bf16 autocast (``mixed_precision="auto"``);
- ``gc``: the same with ``gradient_checkpointing``;
- ``lora``: ``lora_r`` adapters on every linear layer of the frozen bf16 backbone, the ``score`` head and
  the step tag's embedding row trained in full (prmkit's ``training/memory.py``);
- ``lora+gc``: both.

Each against a plain ``transformers.Trainer`` (its own ``compute_loss``: the model's token-classification
loss on ``labels``) on the very batches prmkit's trainer collated (recorded as it trained), with the same
model class (``AutoModelForTokenClassification``), precision (float32 weights, bf16 autocast; LoRA: the
same peft config, frozen weights bf16, trained ones float32), checkpointing, optimiser and schedule.

The traces are random digits (not text: the speed does not depend on it) laid out to exactly
``--tokens`` tokens each by prmkit's own template (BOS, problem, ``<|step|>`` after each step), with
random step labels, tokenized by a small BPE built on them (the model keeps its 151,936-row embedding).
Dev evaluation is off on the prmkit side (a ``dev_label_source`` no trace has). Per run:

- tokens/s: non-pad tokens of optimiser steps ``warmup+1 .. warmup+steps`` / wall seconds from the end of
  step ``warmup`` to the end of the last (``torch.cuda.synchronize`` at each step's end): batch fetch,
  collation, forward, backward, clipping, optimiser and scheduler steps;
- peak GPU memory: ``torch.cuda.max_memory_allocated`` from the start of training (reset there) to its
  end, and what was allocated before the run (the same process runs all of them: a leak would show);
- seconds from the last step's end to the end of ``train()`` (prmkit: the final checkpoint its
  ``save_strategy="steps"`` writes, with the optimiser's state, about 18 GB for this model trained in
  full; the plain Trainer saves nothing), and prmkit's end-to-end seconds of ``train_prm`` (loading,
  that checkpoint, the saved model and card), beside the loop.

The ratio prmkit / Trainer tokens/s per configuration has the goal >= 0.95. A time guard skips the
configurations that would end past ``--budget-s`` (default 540 s: the whole script under 9 minutes on one
H100 or H200), estimated from the slowest configuration run so far; the JSON (``--out``, default
``bench/results/train-gpu-<date>.json``) says which ran and is printed at the end.

    python bench/gpu_train_check.py [--configs plain,gc,lora,lora+gc] [--steps 4] [--warmup 2]
        [--batch-size 1] [--tokens 4096] [--lora-r 16] [--budget-s 540] [--out PATH]
    python bench/gpu_train_check.py --smoke    # the same code paths on the CPU, tiny: under a minute
                                               # (2 layers x 64, 256 tokens, 1 + 2 steps, one thread)

Not a ``bench_*.py``: ``make bench`` does not run it (it needs a GPU and minutes of one).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {
    "plain": {},
    "gc": {"gradient_checkpointing": True},
    "lora": {"lora": True},
    "lora+gc": {"lora": True, "gradient_checkpointing": True},
}
QWEN_MATH_15B = {"hidden_size": 1536, "num_hidden_layers": 28, "num_attention_heads": 12,
                 "num_key_value_heads": 2, "intermediate_size": 8960, "vocab_size": 151936,
                 "max_position_embeddings": 4096, "rope_theta": 10000.0}  # fmt: skip
"""Qwen2.5-Math-1.5B's shape (its config.json); ``--smoke`` uses 2 layers of 64 and 256 tokens."""
SMOKE = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 128, "vocab_size": 512, "max_position_embeddings": 256,
         "rope_theta": 10000.0}  # fmt: skip
NO_DEV = "human:gpu-check-no-dev"
"""A label source no trace has: prmkit's dev split is then empty and its trainer evaluates nothing."""


class Meter:
    """``transformers.Trainer`` patched once (prmkit's trainer and the plain one both inherit these
    methods): each batch's tokens counted (and, while ``keep``, the batch kept on the CPU), each optimiser
    step's end stamped, the peak GPU memory of the training loop taken."""

    def __init__(self) -> None:
        import torch
        from transformers import Trainer, TrainerCallback

        self.cuda = torch.cuda.is_available()
        meter = self
        self.reset(keep=False)

        class Stamp(TrainerCallback):
            def on_train_begin(self, args, state, control, **kw):
                if meter.cuda:
                    torch.cuda.reset_peak_memory_stats()

            def on_step_end(self, args, state, control, **kw):
                if meter.cuda:
                    torch.cuda.synchronize()
                meter.ends.append(time.perf_counter())

            def on_train_end(self, args, state, control, **kw):
                meter.peak_mb = torch.cuda.max_memory_allocated() / 2**20 if meter.cuda else None
                meter.train_end = time.perf_counter()

        train, training_step = Trainer.train, Trainer.training_step

        def stamped_train(trainer, *args, **kwargs):
            trainer.add_callback(Stamp())
            return train(trainer, *args, **kwargs)

        def counted_step(trainer, model, inputs, *args, **kwargs):
            self.batches.append((trainer.state.global_step, inputs["attention_mask"].sum()))
            if self.keep:
                self.kept.append(
                    {k: inputs[k].detach().cpu() for k in ("input_ids", "attention_mask", "step_targets")}
                )
            return training_step(trainer, model, inputs, *args, **kwargs)

        Trainer.train, Trainer.training_step = stamped_train, counted_step

    def reset(self, keep: bool) -> None:
        self.keep, self.kept, self.batches, self.ends, self.peak_mb, self.train_end = (
            keep,
            [],
            [],
            [],
            None,
            0.0,
        )

    def result(self, warmup: int) -> dict[str, Any]:
        if len(self.ends) <= warmup:
            raise RuntimeError(f"{len(self.ends)} optimiser steps ran, fewer than --warmup {warmup} + 1")
        tokens = sum(int(n) for step, n in self.batches if step >= warmup)
        wall = self.ends[-1] - self.ends[warmup - 1]
        timed = len(self.ends) - warmup
        return {"steps": len(self.ends), "timed_steps": timed, "timed_seconds": wall, "tokens": tokens,
                "tokens_per_s": tokens / wall, "seconds_per_step": wall / timed, "peak_gpu_mb": self.peak_mb,
                "after_last_step_seconds": self.train_end - self.ends[-1]}  # fmt: skip


def allocated_mb() -> float | None:
    import torch

    gc.collect()
    if not torch.cuda.is_available():
        return None
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated() / 2**20


# ---------------------------------------------------------------- the model and the traces


def make_traces(n: int, tokens: int, steps: int, seed: int) -> tuple[list, Any]:
    """``n`` traces of random digits, each exactly ``tokens`` long in prmkit's default template (a distinct
    problem each, so the dev split takes one), random gold labels; and a BPE tokenizer built on them."""
    from prmkit.core.model import Label, Problem, Provenance, Step, Trace
    from prmkit.modeling import build_tokenizer
    from prmkit.modeling.template import StepTemplate, encode_trace

    rng = random.Random(seed)
    gold = Provenance(method="gold", actor="gpu-check")

    def digits(k: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(k))

    per_step = max(1, (tokens - 64) // steps - 2)  # a step's digits, then the tag and a newline
    raw = [(digits(48), [digits(per_step) for _ in range(steps)]) for _ in range(n)]
    tok = build_tokenizer([p for p, _ in raw] + [s for _, ss in raw for s in ss], vocab_size=300)
    template = StepTemplate()
    traces = []
    for i, (problem, texts) in enumerate(raw):
        short = tokens - len(encode_trace(tok, template, problem, texts).input_ids)
        problem = problem + digits(short) if short >= 0 else problem[:short]  # one digit = one token
        if len(encode_trace(tok, template, problem, texts).input_ids) != tokens:
            raise RuntimeError(f"could not lay a trace out to {tokens} tokens")
        error = rng.randrange(steps + 1)  # the first wrong step (steps: none)
        labels = [Label(rating=1 if k < error else -1, provenance=gold) for k in range(steps)]
        body = [Step(text=t, labels=[lab]) for t, lab in zip(texts, labels, strict=True)]
        traces.append(Trace(id=f"t{i}", problem=Problem(id=f"p{i}", text=problem), steps=body))
    return traces, tok


def save_backbone(folder: Path, shape: dict[str, Any], tok: Any) -> None:
    """A random Qwen2 causal LM of ``shape``, built on the device and saved in bfloat16, with ``tok``."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    config = Qwen2Config(**shape, tie_word_embeddings=True, rms_norm_eps=1e-6, use_cache=False,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    del model


# ---------------------------------------------------------------- the two trainers


def run_prmkit(meter: Meter, traces: list, base: Path, out: Path, setup: dict[str, Any], a: Any) -> dict:
    from prmkit.training import PrmConfig, train_prm

    lora = {"lora_r": a.lora_r, "lora_alpha": 2.0 * a.lora_r} if setup.get("lora") else {}
    config = PrmConfig(
        base_model=str(base), max_length=a.tokens, max_steps=a.warmup + a.steps, batch_size=a.batch_size,
        lr=a.lr, seed=0, dev_fraction=0.01, dev_label_source=NO_DEV, resume=False, eval_every=10_000,
        gradient_checkpointing=setup.get("gradient_checkpointing", False), **lora,
    )  # fmt: skip
    meter.reset(keep=True)
    t0 = time.perf_counter()
    result = train_prm(traces, out, config)
    seconds = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return {**meter.result(a.warmup), "end_to_end_seconds": seconds, "precision": result["training"]["precision"],
            "lora": result["training"]["lora"]}  # fmt: skip


def run_plain(
    meter: Meter, batches: list[dict], base: Path, out: Path, setup: dict[str, Any], a: Any
) -> dict:
    """``transformers.Trainer`` over prmkit's collated ``batches`` in its own loop and loss."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer, Trainer, TrainingArguments

    tag = AutoTokenizer.from_pretrained(str(base)).convert_tokens_to_ids("<|step|>")
    model = AutoModelForTokenClassification.from_pretrained(str(base), num_labels=2)
    if setup.get("lora"):
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=a.lora_r, lora_alpha=2.0 * a.lora_r, target_modules="all-linear",
                          exclude_modules=["score"], modules_to_save=["score"],
                          trainable_token_indices=[tag])  # fmt: skip
        with warnings.catch_warnings():  # peft 0.21 reads transformers 5.23's is_gradient_checkpointing
            warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated", FutureWarning)
            model = get_peft_model(model, lora, autocast_adapter_dtype=True)
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
        if not torch.cuda.is_available():
            model.float()  # no autocast on the CPU: float32 throughout, as prmkit does there
    else:
        model.float()
    rows = []
    for b in batches:  # labels: the class at each step tag (hard targets 0. / 1.), -100 elsewhere
        labels = b["step_targets"].long()
        rows.append({"input_ids": b["input_ids"], "attention_mask": b["attention_mask"], "labels": labels})
    name = (
        "activation" if "activation_checkpointing" in TrainingArguments.__dataclass_fields__ else "gradient"
    )
    checkpointing = {f"{name}_checkpointing": True, f"{name}_checkpointing_kwargs": {"use_reentrant": False}}
    cuda = torch.cuda.is_available()
    bf16 = cuda and torch.cuda.is_bf16_supported()  # prmkit's mixed_precision="auto"
    args = TrainingArguments(
        output_dir=str(out), max_steps=len(rows), per_device_train_batch_size=1, learning_rate=a.lr,
        weight_decay=0.01, warmup_steps=0.05, lr_scheduler_type="cosine", save_strategy="no",
        eval_strategy="no", report_to="none", disable_tqdm=True, dataloader_num_workers=0, seed=0,
        remove_unused_columns=False, dataloader_pin_memory=cuda, use_cpu=not cuda, bf16=bf16,
        fp16=cuda and not bf16, **(checkpointing if setup.get("gradient_checkpointing") else {}),
    )  # fmt: skip
    meter.reset(keep=False)
    trainer = Trainer(model=model, args=args, train_dataset=rows, data_collator=lambda got: got[0])
    trainer.train()
    del trainer, model
    shutil.rmtree(out, ignore_errors=True)
    return meter.result(a.warmup)


# ---------------------------------------------------------------- the check


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument(
        "--steps", type=int, help="timed optimiser steps per run, after the warm-up (4; --smoke 2)"
    )
    ap.add_argument("--warmup", type=int, help="untimed optimiser steps first, at least 1 (2; --smoke 1)")
    ap.add_argument("--batch-size", type=int, default=1, help="traces per optimiser step")
    ap.add_argument("--tokens", type=int, help="tokens per trace (default 4096; --smoke 256)")
    ap.add_argument("--trace-steps", type=int, default=32, help="steps per trace (labels at their tags)")
    ap.add_argument("--lora-r", type=int, default=16, help="LoRA rank (alpha = 2 x rank)")
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--budget-s", type=float, default=540.0, help="skip configurations that would end later")
    ap.add_argument(
        "--smoke", action="store_true", help="CPU, 2 layers x 64, 256 tokens: the code paths only"
    )
    ap.add_argument("--out", type=Path, help="default bench/results/train-gpu-<date>.json (--smoke: none)")
    a = ap.parse_args()
    a.configs = a.configs.split(",")
    unknown = [n for n in a.configs if n not in CONFIGS]
    if unknown:
        ap.error(f"unknown configurations {unknown} (known: {', '.join(CONFIGS)})")
    a.tokens = a.tokens or (256 if a.smoke else 4096)
    a.steps = a.steps or (2 if a.smoke else 4)
    a.warmup = a.warmup if a.warmup is not None else (1 if a.smoke else 2)
    if a.warmup < 1:
        ap.error("--warmup must be at least 1 (the timing starts at a step's end)")
    return a


def run_all(
    a: argparse.Namespace, meter: Meter, base: Path, traces: list, start: float
) -> list[dict[str, Any]]:
    """Each configuration: prmkit, then the plain Trainer on the batches prmkit collated. A configuration
    is skipped when the slowest one so far would take it past ``--budget-s``."""
    rows: list[dict[str, Any]] = []
    slowest = 0.0
    for name in a.configs:
        elapsed = time.perf_counter() - start
        if rows and elapsed + slowest > a.budget_s:
            guard = f"time guard: {elapsed:.0f} s + {slowest:.0f} s > {a.budget_s:.0f} s"
            rows.append({"config": name, "skipped": guard})
            print(f"{name:>8}  skipped ({guard})", flush=True)
            continue
        t0, before = time.perf_counter(), allocated_mb()
        ours = run_prmkit(meter, traces, base, base.with_name(f"prm-{name}"), CONFIGS[name], a)
        ours["allocated_before_mb"], before = before, allocated_mb()
        plain = run_plain(meter, meter.kept, base, base.with_name(f"plain-{name}"), CONFIGS[name], a)
        plain["allocated_before_mb"] = before
        seconds = time.perf_counter() - t0
        slowest = max(slowest, seconds)
        ratio = ours["tokens_per_s"] / plain["tokens_per_s"]
        rows.append({"config": name, "prmkit": ours, "trainer": plain, "ratio": ratio, "seconds": seconds})
        show(rows[-1])
    return rows


def main() -> None:
    sys.path.insert(0, str(ROOT / "bench"))  # benchlib, a sibling module of this script
    from benchlib import versions

    a = parse_args()
    start = time.perf_counter()
    if a.smoke:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch: the CPU even on a GPU machine
    else:
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")  # one GPU (several: Trainer would DataParallel)
    os.environ.update({"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1",
                       "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                       "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})  # fmt: skip
    import torch
    import transformers

    transformers.utils.logging.set_verbosity_error()
    if a.smoke:
        torch.set_num_threads(1)  # a tiny model: one thread is as fast, and steadier on a shared machine
    if not torch.cuda.is_available() and not a.smoke:
        raise SystemExit("no CUDA device: this check needs one GPU (or pass --smoke for the CPU code paths)")
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"
    shape = SMOKE if a.smoke else QWEN_MATH_15B
    shape = {**shape, "max_position_embeddings": max(shape["max_position_embeddings"], a.tokens)}
    meter = Meter()
    with tempfile.TemporaryDirectory(prefix="gpu-train-check-") as tmp:
        base = Path(tmp) / "base"
        traces, tok = make_traces(a.batch_size * (a.warmup + a.steps) + 2, a.tokens, a.trace_steps, seed=0)
        save_backbone(base, shape, tok)
        print(f"{device}; Qwen2 {shape['num_hidden_layers']} x {shape['hidden_size']} (random weights), "
              f"{a.tokens} tokens per trace, batch {a.batch_size}, {a.warmup} + {a.steps} optimiser steps per run; "
              f"set up in {time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
        rows = run_all(a, meter, base, traces, start)
    record = {
        "device": device,
        "smoke": a.smoke,
        "versions": versions("prmkit", "torch", "transformers", "accelerate", "peft"),
        "model": {
            "class": "Qwen2ForTokenClassification",
            **shape,
            "tie_word_embeddings": True,
            "weights": "random",
        },
        "data": f"random digit traces, {a.tokens} tokens each, {a.trace_steps} steps, random step labels",
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(a).items()},
        "measured": "non-pad tokens of optimiser steps warmup+1.. / wall seconds from the end of step warmup "
        "to the end of the last (synchronised); peak = torch.cuda.max_memory_allocated over the training loop",
        "goal": "prmkit / Trainer tokens/s >= 0.95",
        "configs": rows,
        "allocated_after_mb": allocated_mb(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "seconds": time.perf_counter() - start,
    }
    text = json.dumps(record, indent=2)
    print(text)
    if a.smoke and a.out is None:
        print(f"smoke run: {record['seconds']:.0f} s; no results file (pass --out to keep one)")
        return
    out = a.out or ROOT / "bench" / "results" / f"train-gpu-{datetime.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(f"wrote {out}; {record['seconds']:.0f} s in all")


def show(row: dict[str, Any]) -> None:
    def mb(v: float | None) -> str:
        return f"{v:,.0f} MB" if v is not None else "n/a (CPU)"

    ours, plain = row["prmkit"], row["trainer"]
    print(
        f"{row['config']:>8}  prmkit {ours['tokens_per_s']:9,.0f} tok/s peak {mb(ours['peak_gpu_mb']):>10} | Trainer "
        f"{plain['tokens_per_s']:9,.0f} tok/s peak {mb(plain['peak_gpu_mb']):>10} | ratio {row['ratio']:.3f} "
        f"(goal >= 0.95) | train_prm {ours['end_to_end_seconds']:.0f} s end to end ({ours['after_last_step_seconds']:.0f} "
        f"after its last step), {row['seconds']:.0f} s both",
        flush=True,
    )


if __name__ == "__main__":
    main()
