"""One-pass step scoring vs per-prefix scoring, and prmkit's overhead over the raw forward pass.

Both measured in one run on the same tiny PRM (random weights: speed does not depend on them) and the
same world traces:

1. one pass: every step of a trace read at its tag in one forward pass; per prefix: one forward pass
   per step prefix (how an ORM or a chat-turn PRM without the one-pass trick scores). Reported as a
   speed ratio (goal: well above 1, growing with steps per trace).
2. prmkit's ``ModelScorer.score`` (tokenizing, length bucketing, padding, read-out) against the raw
   backbone forward on the very same padded batches, pre-built. Reported as throughput ratio
   prmkit / raw (goal >= 0.9).

    python bench/bench_scoring.py [--problems 100] [--per-problem 4] [--layers 2] [--width 128] [--repeats 3]

Timings on a shared CPU are noisy: the median of ``--repeats`` runs is shown.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from prmkit.modeling import PrmSpec, StepTemplate, TinyConfig, build_tokenizer, tiny_config, token_classifier
from prmkit.modeling.tokenizer import trace_texts
from prmkit.scoring.conventions import PrmkitConvention
from prmkit.scoring.scorer import ModelScorer
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--per-problem", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    traces = gold_label(
        sample_traces(generate_problems(a.problems, seed=0, split="test"), a.per_problem, seed=0)
    )
    tok = build_tokenizer(trace_texts(traces))
    spec = PrmSpec(tag_id=StepTemplate().tag_id(tok))
    model = token_classifier(
        tiny_config(tok, TinyConfig(layers=a.layers, width=a.width)), 2, id2label=spec.id2label()
    )
    model.config.prmkit = spec.model_dump(mode="json")
    scorer = ModelScorer(model, PrmkitConvention(tok, model.config), name="bench")
    steps = sum(len(t.steps) for t in traces)
    prefixes = [t.model_copy(update={"steps": t.steps[: k + 1]}) for t in traces for k in range(len(t.steps))]
    print(
        f"{len(traces)} traces, {steps} steps, {a.layers}x{a.width} model, {a.threads} threads, median of {a.repeats}"
    )

    scorer.score(traces[:8])  # warm-up
    ones, pers = [], []
    for _ in range(a.repeats):
        ones.append(median_seconds(lambda: scorer.score(traces), 1))
        pers.append(median_seconds(lambda: scorer.score(prefixes), 1))
    one, per = statistics.median(ones), statistics.median(pers)
    print(f"one pass     {one:7.3f} s  {steps / one:8.0f} steps/s")
    print(f"per prefix   {per:7.3f} s  {steps / per:8.0f} steps/s")
    print(f"speed ratio one-pass / per-prefix: {per / one:.2f}x")

    encoded = scorer.encode(traces)
    batches = [scorer.pad([encoded[i] for i in group]) for group in scorer.batches(encoded)]

    def raw() -> None:
        with torch.inference_mode():
            for batch in batches:
                model(**batch)

    raw_times, our_times = [], []
    for _ in range(a.repeats):  # interleaved, so a change in machine load hits both alike
        raw_times.append(median_seconds(raw, 1))
        our_times.append(median_seconds(lambda: scorer.score(traces), 1))
    raw_s, ours = statistics.median(raw_times), statistics.median(our_times)
    print(f"raw forward  {raw_s:7.3f} s  {steps / raw_s:8.0f} steps/s (same padded batches, pre-built)")
    print(
        f"prmkit score {ours:7.3f} s  {steps / ours:8.0f} steps/s (tokenize + bucket + pad + forward + read)"
    )
    print(f"throughput ratio prmkit / raw forward: {raw_s / ours:.3f} (goal >= 0.9)")


if __name__ == "__main__":
    main()
