"""Reward-server throughput: dynamic batching vs one forward pass per request, in one run.

Serves a PRM checkpoint (by default a randomly initialised tiny prmkit PRM built here: real model,
real tokenizer, untrained weights, so the forward-pass cost is real) with uvicorn on loopback, twice:
``batching=True`` and ``batching=False``. Closed-loop clients (each sends its next request when the
previous answer arrives, one world trace per request) run at 1, 8 and 32 concurrent clients for a fixed
time, from separate processes. Prints requests/second and p50/p99 latency for each, and the batched/unbatched ratio.

A second section serves a *simulated accelerator*: a scorer whose forward pass costs a fixed
``--simulated-ms`` (20 and 100 ms by default) whatever the batch size (roughly what a GPU does with small batches; on a CPU a real
model's cost grows with the batch, so batching mainly saves per-call overhead there). It shows what the
server's batching machinery itself delivers; it is labelled as a simulation in the output.

    python bench/bench_serving.py [--model CHECKPOINT] [--seconds 4] [--simulated-ms 20,100] [--out results.json]

The server and the clients share this process and the machine's cores, so absolute numbers are
noisy on a shared machine; the ratio is what this benchmark is for.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import multiprocessing
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx


def random_prm(directory: Path, layers: int = 2, width: int = 64) -> str:
    """A randomly initialised prmkit PRM checkpoint (tokenizer trained on world text)."""
    import torch

    from prmkit.modeling.backbone import TinyConfig, tiny_config, token_classifier
    from prmkit.modeling.checkpoint import save_checkpoint
    from prmkit.modeling.spec import PrmSpec
    from prmkit.modeling.template import StepTemplate
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.world import WorldPolicy, generate_problems

    problems = generate_problems(20, seed=0)
    texts = [p.text for p in problems]
    for p in problems:
        (cont,) = WorldPolicy().continue_from(p, [], n=1, seed=0)
        texts += [s.text for s in cont.steps]
    tokenizer = build_tokenizer(texts, vocab_size=300)
    torch.manual_seed(0)
    model = token_classifier(tiny_config(tokenizer, TinyConfig(layers=layers, width=width, heads=2)), 2)
    template = StepTemplate()
    save_checkpoint(
        model, tokenizer, PrmSpec(template=template, tag_id=template.tag_id(tokenizer)), directory
    )
    return str(directory)


class FixedCostScorer:
    """Simulated accelerator: each forward pass sleeps ``ms`` (any batch size); scores are a text hash."""

    name = "simulated-accelerator"

    def __init__(self, ms: float):
        self.seconds = ms / 1000.0

    def score(self, traces):
        import zlib

        time.sleep(self.seconds)
        return [[zlib.crc32(s.text.encode()) / 2**32 for s in t.steps] for t in traces]


def payloads(n: int) -> list[dict]:
    """``n`` one-trace requests drawn from the world policy's traces."""
    from prmkit.world import WorldPolicy, generate_problems

    out = []
    for p in generate_problems(max(1, n // 4), seed=11, split="test"):
        for cont in WorldPolicy().continue_from(p, [], n=4, seed=1):
            out.append({"traces": [{"problem": p.text, "steps": [s.text for s in cont.steps]}]})
    return out[:n]


@contextlib.contextmanager
def serving(app):
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


async def load(url: str, clients: int, seconds: float, bodies: list[dict], offset: int = 0) -> dict:
    """Closed-loop load: ``clients`` tasks send requests back to back for ``seconds``; raw latencies."""
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def one(k: int) -> None:
            nonlocal errors
            i = k
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                r = await client.post("/score", json=bodies[i % len(bodies)])
                if r.status_code == 200:
                    latencies.append(time.perf_counter() - t0)
                else:
                    errors += 1
                    if errors == 1:
                        print(f"first error: HTTP {r.status_code}: {r.text[:300]}")
                i += clients

        started = time.perf_counter()  # after the client exists: its TLS setup can take a second
        stop = started + seconds
        await asyncio.gather(*(one(offset + k) for k in range(clients)))
        wall = time.perf_counter() - started
    return {"latencies": latencies, "errors": errors, "wall": wall}


def load_elsewhere(pool, procs: int, url: str, clients: int, seconds: float, bodies: list[dict]) -> dict:
    """Run the clients in ``procs`` other processes, so client-side HTTP work (httpx is CPU-hungry) does
    not share the server's interpreter nor cap the load one client process can generate."""
    procs = max(1, min(procs, clients))
    shares = [clients // procs + (k < clients % procs) for k in range(procs)]
    futures = [
        pool.submit(_load_sync, url, n, seconds, bodies, sum(shares[:k])) for k, n in enumerate(shares)
    ]
    parts = [f.result() for f in futures]
    latencies = [x for p in parts for x in p["latencies"]]
    errors = sum(p["errors"] for p in parts)
    if not latencies:
        raise RuntimeError(f"no request succeeded in {seconds} s ({errors} errors)")
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return {
        "requests": len(latencies),
        "errors": errors,
        "rps": len(latencies) / max(p["wall"] for p in parts),
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * q[98],
    }


def _load_sync(url: str, clients: int, seconds: float, bodies: list[dict], offset: int) -> dict:
    return asyncio.run(load(url, clients, seconds, bodies, offset))


def run_section(scorer, clients: list[int], seconds: float, bodies: list[dict], procs: int) -> dict:
    from prmkit.serving.config import ServerConfig
    from prmkit.serving.reward_server import create_app

    results = {}
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=procs, mp_context=spawn) as pool:
        for batching in (True, False):
            app = create_app(scorer, ServerConfig(batching=batching, max_wait_ms=2.0, max_batch_traces=64))
            with serving(app) as url:
                load_elsewhere(pool, procs, url, 2 * procs, 1.0, bodies)  # warm-up (starts every worker)
                for c in clients:
                    stats = app.state.batcher.stats
                    before = (stats.traces, stats.batches)
                    results[(batching, c)] = load_elsewhere(pool, procs, url, c, seconds, bodies)
                    done = (stats.traces - before[0], stats.batches - before[1])
                    results[(batching, c)]["mean_batch"] = done[0] / max(1, done[1])
    return results


def report(title: str, results: dict, clients: list[int]) -> list[dict]:
    print(f"\n== {title}")
    print(
        f"{'clients':>7} {'mode':>10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'traces/pass':>11}"
    )
    rows = []
    for c in clients:
        for batching in (True, False):
            r = results[(batching, c)]
            mode = "batched" if batching else "unbatched"
            print(
                f"{c:>7} {mode:>10} {r['rps']:8.1f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} {r['errors']:>6} "
                f"{r['mean_batch']:>11.1f}"
            )
            rows.append({"section": title, "clients": c, "mode": mode, **r})
        ratio = results[(True, c)]["rps"] / results[(False, c)]["rps"]
        print(f"{c:>7} {'ratio':>10} {ratio:8.2f}x requests/s (batched / unbatched)")
    return rows


def main() -> None:
    import torch

    from prmkit.scoring import load_scorer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="PRM checkpoint folder (default: a random tiny prmkit PRM)")
    parser.add_argument("--no-model", action="store_true", help="run only the simulated section")
    parser.add_argument("--seconds", type=float, default=4.0, help="load time per (mode, concurrency)")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--simulated-ms", default="20,100", help="forward-pass costs to simulate ('' skips)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 is steadiest when shared)"
    )
    parser.add_argument("--client-procs", type=int, default=4, help="processes the clients are spread over")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clients = [int(c) for c in args.clients.split(",")]
    bodies = payloads(256)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_model:
            model = args.model or random_prm(Path(tmp) / "prm")
            name = args.model or "random tiny prmkit PRM (2 layers, width 64)"
            title = f"PRM on CPU: {name}, {args.threads} torch thread(s)"
            rows += report(
                title,
                run_section(load_scorer(model), clients, args.seconds, bodies, args.client_procs),
                clients,
            )
    for ms in [float(x) for x in args.simulated_ms.split(",") if x]:
        title = f"SIMULATED accelerator: {ms:g} ms per forward pass, any batch size"
        rows += report(
            title, run_section(FixedCostScorer(ms), clients, args.seconds, bodies, args.client_procs), clients
        )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
