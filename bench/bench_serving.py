"""Reward-server throughput: dynamic batching vs one forward pass per request, in one run.

What it measures. For each model it serves the same scorer twice with uvicorn on loopback, once with
``batching=True`` and once with ``batching=False`` (``ServerConfig`` defaults otherwise: 5 ms window,
64 traces per pass), built the way ``prmkit serve`` builds it (on a CPU a checkpoint gets
``batch_tokens=1024``, see ``ServerConfig.batch_tokens``). Closed-loop clients (each sends its next
``POST /score`` when the previous answer arrives; one world trace of ~220 tokens per request) run at 1,
8 and 32 concurrent clients for ``--seconds`` each, from ``--client-procs`` other processes; the two
modes alternate at each concurrency so a change in machine load hits both. Per row it prints
requests/s, p50/p99 latency, mean traces per forward pass, and where the CPU went: the server
process's CPU per request (HTTP, validation, batching and the scorer) and, within it, the scorer's
(tokenizing plus the forward pass), and the client processes' CPU per request.

Models (``--model-size``, default ``2x64,2x128x4,4x256x4``): randomly initialised prmkit PRMs made by
``prmkit.testing.make_random_prm`` (real tiny backbone of ``TinyConfig``'s default layout, tokenizer and spec, untrained weights, so the
forward-pass cost is real): LAYERSxWIDTH[xHEADS], 2 heads when not given. 2x128x4 is what
``prmkit train`` builds by default. ``--model CHECKPOINT`` measures a checkpoint instead.

A last section serves a *simulated accelerator*: a scorer whose forward pass costs a fixed
``--simulated-ms`` (20 and 100 ms by default) whatever the batch size, roughly what a GPU does with
small batches. It shows what the batching machinery itself delivers and is labelled SIMULATED.

    nice -n 10 python bench/bench_serving.py [--model-size 2x64,4x256x4] [--seconds 4] [--repeats 1]
        [--threads 1] [--client raw|httpx] [--simulated-ms 20,100] [--out results.json]

Clients: ``raw`` (default) is a minimal keep-alive HTTP/1.1 client over asyncio streams (pre-encoded
requests; status and result count checked) costing ~0.1-0.4 ms of CPU per request; ``httpx`` costs
~1.2-1.9 ms per request here, CPU the server under test then does not get (real clients run on other
machines). Server and clients share this machine's cores, so requests/s move with whatever else runs
(the load average is printed); the CPU-per-request columns are steadier than requests/s there.

Why batching gains little on a CPU (measured; docs/serving.md has the profile): the forward pass over a
~220-token trace is already matrix work at batch 1. Per trace it costs about the same in a pass of a
few length-sorted traces (0.9x for 2x64, 0.95x for 2x128x4, 1.0x for 4x256x4) and 1.6-1.9x more in
one padded pass of 32 (padding, an attention mask over it, activations that outgrow the cache), so
batching shares only per-call Python and tokenizer overhead; of the HTTP work (0.4-2 ms per request)
it shares the loop wake-ups and the hop to the scorer thread, not parsing or serializing. A fixed-cost
accelerator (or a GPU at small batches) is where batching multiplies requests/s; see SIMULATED.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from prmkit.testing import make_random_prm

DEFAULT_SIZES = "2x64,2x128x4,4x256x4"


class FixedCostScorer:
    """Simulated accelerator: each forward pass sleeps ``ms`` (any batch size); scores are a text hash."""

    name = "simulated-accelerator"

    def __init__(self, ms: float):
        self.seconds = ms / 1000.0

    def score(self, traces):
        import zlib

        time.sleep(self.seconds)
        return [[zlib.crc32(s.text.encode()) / 2**32 for s in t.steps] for t in traces]


class Metered:
    """A scorer wrapper that adds up the CPU time of its ``score`` calls (on the calling thread, which is
    all of it with one torch thread) and otherwise behaves as the scorer it wraps."""

    def __init__(self, inner):
        self.inner = inner
        self.cpu_seconds = 0.0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def score(self, traces):
        started = time.thread_time()
        try:
            return self.inner.score(traces)
        finally:
            self.cpu_seconds += time.thread_time() - started


def parse_size(text: str) -> tuple[int, int, int]:
    """``"4x256"`` -> (4, 256, 2); ``"2x128x4"`` -> (2, 128, 4): layers, width, heads."""
    parts = [int(x) for x in text.lower().split("x")]
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"model size {text!r}: write LAYERSxWIDTH or LAYERSxWIDTHxHEADS")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else 2


def payloads(n: int) -> list[dict]:
    """``n`` one-trace requests drawn from the world policy's traces."""
    from prmkit.worlds.arithmetic import WorldPolicy, generate_problems

    out = []
    for p in generate_problems(max(1, n // 4), seed=11, split="test"):
        for cont in WorldPolicy().continue_from(p, [], n=4, seed=1):
            out.append({"traces": [{"problem": p.text, "steps": [s.text for s in cont.steps]}]})
    return out[:n]


@contextlib.contextmanager
def serving(app):
    """``app`` served as ``prmkit serve`` serves it (its connection bounds included) on a free port."""
    import uvicorn

    from prmkit.serving.reward_server import uvicorn_config

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = app.state.config.model_copy(update={"port": port})
    server = uvicorn.Server(uvicorn_config(app, config, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class RawConnection:
    """One keep-alive HTTP/1.1 connection that sends pre-encoded requests (cheap on the client's CPU)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, raw: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        try:
            self.writer.write(raw)
            head = await self.reader.readuntil(b"\r\n\r\n")
            status, length, close = int(head.split(b" ", 2)[1]), 0, False
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and value.strip().lower() == b"close":
                    close = True
            body = await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError):
            await self.close()
            raise
        if close:
            await self.close()
        return status, body

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


def encode_request(netloc: str, path: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


async def load(
    url: str, clients: int, seconds: float, bodies: list[dict], offset: int = 0, kind: str = "raw"
) -> dict:
    """Closed-loop load: ``clients`` tasks send requests back to back for ``seconds``; raw latencies.

    A response counts when it is 200 and holds one result per trace sent."""
    latencies: list[float] = []
    errors = 0
    parts = urlsplit(url)
    raws = [encode_request(parts.netloc, "/score", b) for b in bodies]
    async with contextlib.AsyncExitStack() as stack:
        client = None
        if kind == "httpx":
            import httpx

            limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
            client = httpx.AsyncClient(base_url=url, timeout=120, limits=limits)
            await stack.enter_async_context(client)

        async def post(conn: RawConnection | None, i: int) -> tuple[int, bytes]:
            if client is not None:
                r = await client.post("/score", json=bodies[i])
                return r.status_code, r.content
            assert conn is not None
            return await conn.post(raws[i])

        async def one(k: int) -> None:
            nonlocal errors
            conn = RawConnection(parts.hostname or "127.0.0.1", parts.port or 80) if kind == "raw" else None
            i = k
            try:
                while time.perf_counter() < stop:
                    t0 = time.perf_counter()
                    j = i % len(bodies)
                    try:
                        status, body = await post(conn, j)
                    except (OSError, asyncio.IncompleteReadError) as err:
                        status, body = 0, repr(err).encode()
                    ok = status == 200 and len(json.loads(body)["results"]) == len(bodies[j]["traces"])
                    if ok:
                        latencies.append(time.perf_counter() - t0)
                    else:
                        errors += 1
                        if errors == 1:
                            print(f"first error: HTTP {status}: {body[:300]!r}")
                    i += clients
            finally:
                if conn is not None:
                    await conn.close()

        cpu = time.process_time()
        started = time.perf_counter()
        stop = started + seconds
        await asyncio.gather(*(one(offset + k) for k in range(clients)))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
    return {"latencies": latencies, "errors": errors, "wall": wall, "cpu": cpu}


def _load_sync(url: str, clients: int, seconds: float, bodies: list[dict], offset: int, kind: str) -> dict:
    return asyncio.run(load(url, clients, seconds, bodies, offset, kind))


def load_elsewhere(
    pool, procs: int, url: str, clients: int, seconds: float, bodies: list[dict], kind: str
) -> dict:
    """Run the clients in ``procs`` other processes, so their HTTP work does not share the server's
    interpreter nor cap the load one client process can generate."""
    procs = max(1, min(procs, clients))
    shares = [clients // procs + (k < clients % procs) for k in range(procs)]
    futures = [
        pool.submit(_load_sync, url, n, seconds, bodies, sum(shares[:k]), kind) for k, n in enumerate(shares)
    ]
    parts = [f.result() for f in futures]
    return {
        "latencies": [x for p in parts for x in p["latencies"]],
        "errors": sum(p["errors"] for p in parts),
        "wall": max(p["wall"] for p in parts),
        "client_cpu": sum(p["cpu"] for p in parts),
    }


def summarize(runs: list[dict]) -> dict:
    """Requests/s and latency quantiles over the repeats of one (mode, clients) cell."""
    latencies = [x for r in runs for x in r["latencies"]]
    errors = sum(r["errors"] for r in runs)
    if not latencies:
        raise RuntimeError(f"no request succeeded ({errors} errors)")
    n = len(latencies)
    q = statistics.quantiles(latencies, n=100) if n > 1 else [latencies[0]] * 99
    traces = sum(r["traces"] for r in runs)
    return {
        "requests": n,
        "errors": errors,
        "rps": n / sum(r["wall"] for r in runs),
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * q[98],
        "mean_batch": traces / max(1, sum(r["batches"] for r in runs)),
        "server_cpu_ms": 1000 * sum(r["server_cpu"] for r in runs) / n,
        "scorer_cpu_ms": 1000 * sum(r["scorer_cpu"] for r in runs) / n,
        "client_cpu_ms": 1000 * sum(r["client_cpu"] for r in runs) / n,
    }


def run_section(
    scorer, clients: list[int], seconds: float, bodies: list[dict], procs: int, repeats: int, kind: str
) -> dict:
    """Both servers up at once; at each concurrency the modes alternate (A B, then B A, ...)."""
    from prmkit.serving.config import ServerConfig
    from prmkit.serving.reward_server import create_app

    metered = {b: Metered(scorer) for b in (True, False)}
    apps = {b: create_app(metered[b], ServerConfig(batching=b)) for b in (True, False)}
    runs: dict = {(b, c): [] for b in (True, False) for c in clients}
    spawn = multiprocessing.get_context("spawn")
    with (
        concurrent.futures.ProcessPoolExecutor(max_workers=procs, mp_context=spawn) as pool,
        serving(apps[True]) as url_batched,
        serving(apps[False]) as url_unbatched,
    ):
        urls = {True: url_batched, False: url_unbatched}
        for b in (True, False):  # warm-up: starts every client process, runs each model shape once
            load_elsewhere(pool, procs, urls[b], 2 * procs, 1.0, bodies, kind)
        turn = 0
        for c in clients:
            for _ in range(repeats):
                for b in (True, False) if turn % 2 == 0 else (False, True):
                    stats, meter = apps[b].state.batcher.stats, metered[b]
                    before = (stats.traces, stats.batches, meter.cpu_seconds, time.process_time())
                    r = load_elsewhere(pool, procs, urls[b], c, seconds, bodies, kind)
                    r["server_cpu"] = time.process_time() - before[3]
                    r["traces"], r["batches"] = stats.traces - before[0], stats.batches - before[1]
                    r["scorer_cpu"] = meter.cpu_seconds - before[2]
                    runs[(b, c)].append(r)
                turn += 1
    return {key: summarize(rs) for key, rs in runs.items()}


def report(title: str, results: dict, clients: list[int]) -> list[dict]:
    print(f"\n== {title}")
    print(
        f"{'clients':>7} {'mode':>10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} "
        f"{'traces/pass':>11} {'server CPU ms/req':>17} {'of it scorer':>12} {'client CPU ms/req':>17}"
    )
    rows = []
    for c in clients:
        for batching in (True, False):
            r = results[(batching, c)]
            mode = "batched" if batching else "unbatched"
            print(
                f"{c:>7} {mode:>10} {r['rps']:8.1f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} {r['errors']:>6} "
                f"{r['mean_batch']:>11.1f} {r['server_cpu_ms']:>17.2f} {r['scorer_cpu_ms']:>12.2f} "
                f"{r['client_cpu_ms']:>17.2f}"
            )
            rows.append({"section": title, "clients": c, "mode": mode, **r})
        ratio = results[(True, c)]["rps"] / results[(False, c)]["rps"]
        print(f"{c:>7} {'ratio':>10} {ratio:8.2f}x requests/s (batched / unbatched)")
    return rows


def main() -> None:
    import torch

    from prmkit.scoring import load_scorer
    from prmkit.serving.config import ServerConfig
    from prmkit.serving.reward_server import serving_batch_tokens

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a PRM checkpoint folder to measure instead of random models")
    parser.add_argument(
        "--model-size",
        default=DEFAULT_SIZES,
        help="random PRMs to measure, LAYERSxWIDTH[xHEADS] comma-separated ('' skips)",
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="load time per (mode, concurrency)")
    parser.add_argument("--repeats", type=int, default=1, help="alternating runs per (mode, concurrency)")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--simulated-ms", default="20,100", help="forward-pass costs to simulate ('' skips)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 is steadiest when shared)"
    )
    parser.add_argument(
        "--batch-tokens", type=int, help="tokens per forward pass (default: what prmkit serve picks)"
    )
    parser.add_argument("--client", choices=["raw", "httpx"], default="raw", help="HTTP client of the load")
    parser.add_argument("--client-procs", type=int, default=2, help="processes the clients are spread over")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clients = [int(c) for c in args.clients.split(",")]
    bodies = payloads(256)
    print(
        f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f} at start; {args.threads} torch "
        f"thread(s); {args.client} client in {args.client_procs} process(es); {args.seconds:g} s x "
        f"{args.repeats} per cell; one world trace per request"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        models = []
        if args.model:
            models.append((args.model, args.model))
        else:
            for size in [s for s in args.model_size.split(",") if s]:
                layers, width, heads = parse_size(size)
                path = make_random_prm(Path(tmp) / size, layers=layers, width=width, heads=heads)
                models.append((path, f"random prmkit PRM {layers} layers x width {width}, {heads} heads"))
        for path, name in models:
            config = ServerConfig(batch_tokens=args.batch_tokens)
            tokens = serving_batch_tokens(path, config)
            scorer = load_scorer(path, batch_tokens=tokens)
            title = (
                f"PRM on {getattr(scorer, 'device', 'cpu')}: {name}, "
                f"batch_tokens {getattr(scorer, 'batch_tokens', tokens)}, "
                f"{args.threads} torch thread(s)"
            )
            results = run_section(
                scorer, clients, args.seconds, bodies, args.client_procs, args.repeats, args.client
            )
            rows += report(title, results, clients)
    for ms in [float(x) for x in args.simulated_ms.split(",") if x]:
        title = f"SIMULATED accelerator: {ms:g} ms per forward pass, any batch size"
        results = run_section(
            FixedCostScorer(ms), clients, args.seconds, bodies, args.client_procs, args.repeats, args.client
        )
        rows += report(title, results, clients)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
