"""Sampling tokens/s of prmkit's HF policy against the forward bound of the same model and batch.

Measured side by side in one run, on the world's tiny LM shape (``TinyConfig()``: 2 layers x 128,
local+nope with a 16-token window, the tokenizer ``pretrain_lm`` builds; random weights: speed does not
depend on them) and the same world prompts:

1. ``HFPolicy.continue_from(problem, [], n)``: prmkit's sampler (KV cache, n rows batched, stop rule
   checked on token ids, finished rows dropped), tokens counted as written.
2. the bound: the prompt once, its cache copied to n rows, then one cached forward step per token of the
   same model and batch (``max_new_tokens`` steps of n rows; no sampling, no stop checks).
3. for reference, transformers ``generate`` with the stopping criterion prmkit used before (it decoded
   every sequence at every token).

Ratios are tokens/s over the bound's (goal for 1: >= 0.5). Random weights rarely write EOS or a newline,
so rows run to ``max_new_tokens``, as long as the bound's.

    OMP_NUM_THREADS=1 python bench/bench_sampling.py [--threads 1] [--n 16] [--tokens 70] [--prompts 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch


def interleaved_medians(fns: dict[str, Any], repeats: int) -> dict[str, float]:
    """Median seconds of each function, the functions taking turns in every repeat so that a busy
    machine slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm-up
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def bound(model: Any, prompt: list[int], n: int, steps: int) -> int:
    """One cached forward step per token for n rows: what sampling cannot beat."""
    with torch.inference_mode():
        first = model(input_ids=torch.tensor([prompt]), use_cache=True)
        cache = first.past_key_values
        cache.batch_repeat_interleave(n)
        tokens = first.logits[:, -1, :].argmax(-1).expand(n)
        for _ in range(steps):
            logits = model(input_ids=tokens[:, None], past_key_values=cache, use_cache=True).logits
            tokens = logits[:, -1, :].argmax(-1)
    return n * steps


def legacy_generate(model: Any, tok: Any, prompt: list[int], n: int, steps: int) -> int:
    """transformers ``generate`` with the old criterion decoding every row at every token."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    from prmkit.core.steps import StepFormat

    fmt, plen = StepFormat(), len(prompt)

    class DecodeAll(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tok.batch_decode(input_ids[:, plen:], skip_special_tokens=True)
            done = [any(fmt.answer_in(p) for p in t.split("\n")[:-1] if p.strip()) for t in texts]
            return torch.tensor(done, dtype=torch.bool)

    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([prompt]), max_new_tokens=steps, num_return_sequences=n, do_sample=True,
            pad_token_id=tok.pad_token_id, stopping_criteria=StoppingCriteriaList([DecodeAll()]),
        )  # fmt: skip
    return int((out[:, plen:] != tok.pad_token_id).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=16, help="samples per prompt (the batch)")
    ap.add_argument("--tokens", type=int, default=70, help="max new tokens per sample")
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    from transformers import AutoModelForCausalLM

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
    from prmkit.policies.hf import HFPolicy
    from prmkit.worlds.arithmetic import generate_problems, sample_traces

    problems = generate_problems(a.prompts, seed=0, split="test")
    tok = build_tokenizer(
        trace_texts(sample_traces(generate_problems(200, seed=1), 2, seed=1)), vocab_size=1024
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(tiny_config(tok, TinyConfig())).eval()
    model.generation_config.use_cache = True
    policy = HFPolicy(model, tok, temperature=1.0, max_new_tokens=a.tokens, device="cpu")
    prompts = [tok(policy.format.prompt(p, []))["input_ids"] for p in problems]
    counts: dict[str, int] = {}

    def run_policy() -> None:
        counts["prmkit sampler"] = sum(
            c.num_tokens or 0 for p in problems for c in policy.continue_from(p, [], a.n, seed=0)
        )

    def run_bound() -> None:
        counts["bound (cached forwards)"] = sum(bound(model, q, a.n, a.tokens) for q in prompts)

    def run_legacy() -> None:
        counts["transformers generate (old stopper)"] = sum(
            legacy_generate(model, tok, q, a.n, a.tokens) for q in prompts
        )

    seconds = interleaved_medians(
        {
            "bound (cached forwards)": run_bound,
            "prmkit sampler": run_policy,
            "transformers generate (old stopper)": run_legacy,
        },
        a.repeats,
    )
    rate = {k: counts[k] / seconds[k] for k in seconds}
    ref = rate["bound (cached forwards)"]
    params = sum(p.numel() for p in model.parameters())
    print(
        f"{params / 1e6:.2f} M parameters, {a.threads} thread(s), {a.prompts} prompts x {a.n} samples x "
        f"<= {a.tokens} tokens, median of {a.repeats}, interleaved"
    )
    print(f"{'path':<38}{'tokens':>8}{'seconds':>10}{'tokens/s':>11}{'x bound':>9}")
    for name in seconds:
        print(f"{name:<38}{counts[name]:>8}{seconds[name]:>10.3f}{rate[name]:>11.0f}{rate[name] / ref:>9.2f}")


if __name__ == "__main__":
    main()
