"""Monte Carlo labelling against an OpenAI-compatible server that answers at once: prmkit's own ceiling.

What it measures. ``label_mc(traces, EndpointPolicy(url, "stub", concurrency=C), rollouts=8,
concurrency=C)`` over world traces (a fresh job each run, ``work_dir=None``), against a stub server on
loopback in a *separate process* (so its CPU is not counted as prmkit's), at C = 16, 64 and 256, with
(a) numeric answers (``The answer is 42.``: compared exactly in the client) and (b) LaTeX answers
(``The answer is \\boxed{\\frac{84}{2}}.``: sent to math-verify in the answer-checking worker processes
by ``prmkit.core.answers.check_answers``), each cell with two clients side by side (``--clients``):
today's ``OpenAIClient`` (``http.client``) and the one before issue 65 (httpx), the file
``src/prmkit/policies/http.py`` as it was at commit :data:`BEFORE`, loaded from git; the ratio of their
rollouts/s in each cell is printed from the one run. Each cell runs ``--repeats`` times (passes over all
cells in turn) and every run is kept. Per run: rollouts/s, and CPU-seconds per rollout of the client process
(``RUSAGE_SELF``: all its threads), of the answer-checking workers (``/proc/<pid>/stat`` of
``prmkit.core.answers._POOL``'s processes) and of the server process.

Extra rows: one numeric cell with a ``work_dir`` (the resumable job's log, ``records.jsonl``) and one
under a per-thread ``cProfile`` timed by each thread's CPU clock (``time.thread_time``), whose top
functions by cumulative CPU and its own CPU by package are printed. Then the client path layer by layer
without a profiler (a plain ``http.client`` POST, ``OpenAIClient.post`` and the httpx one's,
``continue_from``, ``draw``, the traces' deep copy), each rung's client CPU per rollout. Last,
math-verify's own cost per check in this process (one thread, the same LaTeX pair, warm caches) gives the
LaTeX goal, 0.8 x cores / cost per check.

The stub answers each choice right or wrong by a hash of (prompt, seed, choice index), 60 % right, so a
run's labels do not depend on the order requests arrive in (tests/labeling/stub_endpoint.py's logic, no
FastAPI). It knows each problem's reference answer (problem text -> answer; the prompt starts with the
problem text). ``/latex/v1/completions`` answers in LaTeX, ``/v1/completions`` with plain numbers.
Servers (``--server``): ``raw`` (default), HTTP/1.1 keep-alive parsed by hand over an ``asyncio.Protocol``,
the cheapest on the server's CPU; ``asgi``, a raw ASGI app under uvicorn (h11, no uvloop/httptools in
this venv); ``threading``, ``http.server.ThreadingHTTPServer``.

    python bench/bench_rollouts.py [--server raw|asgi|threading] [--concurrency 16,64,256]
        [--clients http.client,httpx] [--traces 500] [--latex-traces 160] [--repeats 2]
        [--out bench/results/rollouts-cpu-DATE.json]

The server, the client and the workers share this machine's cores: rollouts/s moves with whatever else
runs (load average printed); CPU-seconds per rollout are steadier. Numbers: docs/labeling.md, Throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import functools
import gc
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import platform
import pstats
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import ClassVar

from benchlib import code_version

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
RIGHT_SHARE = 0.6
BEFORE = "6c47464"
"""The commit whose ``OpenAIClient`` (httpx, one ``httpx.Client`` per thread) the ``httpx`` cells run."""

# ---------------------------------------------------------------- the stub (server process)


def choices(answers: dict[str, int], prompt: str, seed: int, n: int, latex: bool) -> list[dict]:
    """``n`` choices for ``prompt``: right or wrong by a hash of (prompt, seed, index)."""
    head = prompt.split("\n", 1)[0]
    gold = answers.get(head)
    if gold is None:
        gold = next((a for text, a in answers.items() if prompt.startswith(text)), None)
    out = []
    for i in range(n):
        if gold is None:
            text = "I do not know this problem.\n"
        else:
            digest = hashlib.sha256(f"{prompt}\x00{seed}\x00{i}".encode()).digest()
            right = int.from_bytes(digest[:8], "big") / 2**64 < RIGHT_SHARE
            value = gold if right else gold + 1
            said = f"\\boxed{{\\frac{{{2 * value}}}{{2}}}}" if latex else str(value)
            text = f"Simplify the expression.\nThe answer is {said}.\n"
        out.append({"index": i, "text": text, "finish_reason": "stop"})
    return out


def answer(answers: dict[str, int], path: str, body: bytes) -> tuple[int, bytes]:
    """(status, JSON body) for one POST."""
    if not path.endswith("/v1/completions"):
        return 404, b'{"error": "not found"}'
    req = json.loads(body)
    n = int(req.get("n", 1))
    got = choices(answers, req["prompt"], int(req.get("seed", 0)), n, path.startswith("/latex/"))
    return 200, json.dumps({"choices": got, "usage": {"completion_tokens": 12 * n}}).encode()


class RawHTTP(asyncio.Protocol):
    """HTTP/1.1 keep-alive by hand: a request line, headers, a Content-Length body; nothing else."""

    answers: ClassVar[dict[str, int]] = {}

    def connection_made(self, transport) -> None:
        self.transport, self.buf = transport, b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (end := self.buf.find(b"\r\n\r\n")) >= 0:
            head, length = self.buf[:end].split(b"\r\n"), 0
            for line in head[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buf) < end + 4 + length:
                return
            body, self.buf = self.buf[end + 4 : end + 4 + length], self.buf[end + 4 + length :]
            status, out = answer(self.answers, head[0].split(b" ")[1].decode(), body)
            self.transport.write(
                b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                % (status, len(out), out)
            )


def serve(kind: str, port: int, answers: dict[str, int]) -> None:
    """The server process's body: serve ``answers`` on 127.0.0.1:``port`` until killed."""
    if kind == "raw":
        RawHTTP.answers = answers

        async def main() -> None:
            server = await asyncio.get_running_loop().create_server(RawHTTP, "127.0.0.1", port, backlog=2048)
            await server.serve_forever()

        asyncio.run(main())
    elif kind == "asgi":
        import uvicorn

        async def app(scope, receive, send) -> None:
            body, more = b"", True
            while more:
                msg = await receive()
                body, more = body + msg.get("body", b""), msg.get("more_body", False)
            status, out = answer(answers, scope["path"], body)
            headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(out))]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": out})

        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
                    lifespan="off", http="h11", loop="asyncio", backlog=2048)  # fmt: skip
    else:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                status, out = answer(answers, self.path, self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args) -> None:
                pass

        ThreadingHTTPServer.request_queue_size = 2048
        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def start_server(kind: str, answers: dict[str, int]) -> tuple[multiprocessing.Process, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = multiprocessing.get_context("spawn").Process(target=serve, args=(kind, port, answers), daemon=True)
    proc.start()
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline or not proc.is_alive():
                raise RuntimeError(f"the {kind} stub server did not start") from None
            time.sleep(0.05)


# ---------------------------------------------------------------- measuring (client process)


def world_traces(n_problems: int, per_problem: int, seed: int = 7) -> list:
    """Gold-labelled world traces with reference answers (as tests/labeling/conftest.py makes them)."""
    from prmkit.worlds.arithmetic import (
        PolicyConfig,
        WorldPolicy,
        generate_problems,
        gold_label,
        sample_traces,
    )

    problems = generate_problems(n_problems, seed=seed, split="test")
    policy = WorldPolicy(PolicyConfig(misconceptions=1.0))
    return gold_label(sample_traces(problems, per_problem, seed=seed, policy=policy))


def proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def worker_pids() -> list[int]:
    from prmkit.core import answers

    pool = answers._POOL
    return sorted(w.process.pid for w in pool.workers) if pool is not None else []


class ThreadProfiles:
    """cProfile in every thread started while it is on, each timed by its thread's CPU clock."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []

    def _hook(self, *args) -> None:
        sys.setprofile(None)
        prof = cProfile.Profile(time.thread_time)
        self.profiles.append(prof)
        prof.enable()

    def __enter__(self) -> ThreadProfiles:
        threading.setprofile(self._hook)
        self._hook()
        return self

    def __exit__(self, *exc) -> None:
        threading.setprofile(None)
        self.profiles[0].disable()

    def top(self, n: int, per: float) -> list[dict]:
        stats = pstats.Stats(self.profiles[0], stream=io.StringIO())
        for prof in self.profiles[1:]:
            stats.add(prof)
        rows = []
        for (file, line, func), (_, calls, tot, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
            where = f"{Path(file).name}:{line}({func})" if line else func
            rows.append(
                {"function": where, "calls": calls, "cum_us": 1e6 * cum / per, "tot_us": 1e6 * tot / per}
            )
        return sorted(rows, key=lambda r: -r["cum_us"])[:n]

    def by_package(self, per: float) -> dict[str, float]:
        """Own CPU (us per ``per``) by where the code lives: a package, prmkit's subpackage, or a builtin."""
        stats = pstats.Stats(*self.profiles, stream=io.StringIO())
        out: dict[str, float] = {}
        for (file, _, func), (_, _, tot, _, _) in stats.stats.items():  # type: ignore[attr-defined]
            if "site-packages/" in file:
                where = file.split("site-packages/")[1].split("/")[0]
            elif "/prmkit/" in file:
                where = "prmkit." + file.split("/prmkit/")[1].split("/")[0].removesuffix(".py")
            elif file == "~":
                where = "builtin " + builtin_name(func)
            else:
                where = "stdlib " + Path(file).stem
            out[where] = out.get(where, 0.0) + 1e6 * tot / per
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def builtin_name(func: str) -> str:
    """``<method 'get' of 'dict' objects>`` -> ``dict.get``; ``<built-in method time.sleep>`` -> ``time.sleep``."""
    if func.startswith("<method '") and " of '" in func:
        name, owner = func[9:].split("' of '", 1)
        return f"{owner.split(chr(39))[0]}.{name}"
    return func.removeprefix("<built-in method ").removesuffix(">")


class GCTime:
    """CPU time spent in the cyclic garbage collector while alive (the collecting thread's clock: it holds
    the GIL, so no other thread of the client runs meanwhile)."""

    def __init__(self) -> None:
        self.seconds, self.collections, self._t0 = 0.0, [0, 0, 0], 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._t0
            self.collections[info["generation"]] += 1

    def stop(self) -> None:
        gc.callbacks.remove(self._note)


@functools.cache
def httpx_client() -> type:
    """The ``OpenAIClient`` class of ``src/prmkit/policies/http.py`` at commit :data:`BEFORE` (httpx),
    loaded from git as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:src/prmkit/policies/http.py"], cwd=ROOT, capture_output=True, text=True
    )
    if source.returncode:
        raise SystemExit(
            f"cannot read the httpx client from git ({source.stderr.strip()}); --clients http.client"
        )
    module = types.ModuleType("prmkit_http_before")
    exec(compile(source.stdout, f"{BEFORE}:src/prmkit/policies/http.py", "exec"), module.__dict__)
    return module.OpenAIClient


def run_cell(
    url: str,
    traces: list,
    concurrency: int,
    latex: bool,
    work_dir: str | None = None,
    client: str = "http.client",
) -> dict:
    """One ``label_mc`` run, fresh job, with its rate and CPU shares; ``client`` ``httpx``: the policy's
    client is :func:`httpx_client`'s, with the same settings."""
    from prmkit.labeling.mc import label_mc
    from prmkit.policies.endpoint import EndpointPolicy

    server_pid = int(url.rsplit("#", 1)[1])
    base = url.split("#")[0] + ("/latex" if latex else "")
    policy = EndpointPolicy(base, "stub", concurrency=concurrency)
    if client == "httpx":
        policy.client.close()
        policy.client = httpx_client()(base, concurrency=concurrency, retries=3, timeout=120.0)
    pids = worker_pids()
    gc_time = GCTime()
    before = (time.perf_counter(), self_cpu(), sum(map(proc_cpu, pids)), proc_cpu(server_pid))
    _, summary = label_mc(traces, policy, rollouts=8, concurrency=concurrency, work_dir=work_dir)
    wall = time.perf_counter() - before[0]
    client_cpu, work = self_cpu() - before[1], sum(map(proc_cpu, pids)) - before[2]
    server = proc_cpu(server_pid) - before[3]
    gc_time.stop()
    policy.client.close()
    n = summary["rollouts"]
    if summary["failed"] or summary["unparseable"] or not 0.5 < summary["correct"] / max(1, n) < 0.7:
        raise RuntimeError(f"the run went wrong: {summary}")
    return {
        "answers": "latex" if latex else "numeric",
        "client": client,
        "concurrency": concurrency,
        "work_dir": work_dir is not None,
        "prefixes": summary["prefixes"],
        "rollouts": n,
        "wall_s": wall,
        "rollouts_per_s": n / wall,
        "client_cpu_us": 1e6 * client_cpu / n,
        "workers_cpu_us": 1e6 * work / n,
        "server_cpu_us": 1e6 * server / n,
        "client_gc_us": 1e6 * gc_time.seconds / n,
        "gc_collections": gc_time.collections,
        "workers_replaced": worker_pids() != pids,
        "load_avg": os.getloadavg()[0],
    }


def ladder(url: str, traces: list, concurrency: int, repeats: int = 2, with_httpx: bool = True) -> list[dict]:
    """Client CPU per rollout of each layer of the client path alone, no profiler: the same requests
    (numeric, 8 choices per prefix) on ``concurrency`` threads, each rung adding one layer (and, beside
    ``OpenAIClient.post``, the httpx client's before issue 65); the least CPU of ``repeats`` runs (load
    elsewhere only adds)."""
    import http.client
    from concurrent.futures import ThreadPoolExecutor
    from urllib.parse import urlsplit

    from prmkit.labeling.jobs import derive_seed
    from prmkit.labeling.mc import prefix_keys
    from prmkit.labeling.rollouts import draw
    from prmkit.policies.endpoint import EndpointPolicy

    base = url.split("#")[0]
    todo = {}
    for t in traces:
        for i, key in enumerate(prefix_keys(t)[:-1]):
            todo.setdefault(key, (t, i + 1))
    items = [(t.problem, t.steps[:k], derive_seed(0, "mc", key)) for key, (t, k) in todo.items()]
    policy = EndpointPolicy(base, "stub", concurrency=concurrency)
    before = httpx_client()(base, concurrency=concurrency, retries=3, timeout=120.0) if with_httpx else None
    payloads = [
        json.dumps({"model": "stub", **policy.request(p, s), "n": 8, "max_tokens": 512, "temperature": 1.0,
                    "top_p": 1.0, "seed": seed}).encode()
        for p, s, seed in items
    ]  # fmt: skip
    local = threading.local()

    def stdlib_post(i: int) -> None:  # the floor: http.client, one keep-alive connection per thread
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(urlsplit(base).netloc)
        local.conn.request("POST", "/v1/completions", payloads[i], {"Content-Type": "application/json"})
        json.loads(local.conn.getresponse().read())

    def post(i: int) -> None:
        policy.client.post("/v1/completions", json.loads(payloads[i]))

    def post_httpx(i: int) -> None:
        before.post("/v1/completions", json.loads(payloads[i]))

    def continue_from(i: int) -> None:
        policy.continue_from(items[i][0], items[i][1], 8, seed=items[i][2])

    def draw_one(i: int) -> None:
        draw(policy, items[i][0], items[i][1], 8, items[i][2])

    rungs = {
        "http.client POST + json.loads (floor)": stdlib_post,
        **({f"OpenAIClient.post before (httpx, {BEFORE})": post_httpx} if before else {}),
        "OpenAIClient.post (http.client)": post,
        "EndpointPolicy.continue_from": continue_from,
        "rollouts.draw (+ answer check)": draw_one,
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in rungs}
    for _ in range(repeats):  # rungs interleaved, so a burst of load elsewhere hits one run, not one rung
        for name, fn in rungs.items():
            with ThreadPoolExecutor(concurrency) as pool:
                for _ in pool.map(fn, range(min(64, len(items)))):  # warm: connections open
                    pass
                wall, cpu = time.perf_counter(), self_cpu()
                for _ in pool.map(fn, range(len(items))):  # results dropped as they come (no GC growth)
                    pass
                wall, cpu = time.perf_counter() - wall, self_cpu() - cpu
            runs[name].append((1e6 * cpu / (8 * len(items)), 8 * len(items) / wall))
    out = [
        {
            "layer": name,
            "client_cpu_us": min(cpu for cpu, _ in got),
            "rollouts_per_s": max(rate for _, rate in got),
            "runs_client_cpu_us": [cpu for cpu, _ in got],
        }
        for name, got in runs.items()
    ]
    copies = time.process_time()
    for t in traces:
        t.model_copy(deep=True)
    per_rollout = (time.process_time() - copies) / (8 * len(items))
    out.append(
        {
            "layer": "label_mc's deep copy of the traces",
            "client_cpu_us": 1e6 * per_rollout,
            "rollouts_per_s": None,
        }
    )
    policy.client.close()
    if before:
        before.close()
    return out


def math_verify_cost(golds: list[int], seconds: float = 2.4, windows: int = 4) -> dict:
    """CPU per check in this process, one thread, warm caches: the same LaTeX pair through prmkit's wrapper
    (the goal's cost) and through math-verify's defaults, and prmkit's wrapper over the LaTeX cells' pairs
    in turn (``golds``' right and wrong answers: sympy's caches help less)."""
    import logging

    import math_verify

    from prmkit.core.answers import _math_verify

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    gold, said = "42", r"\frac{84}{2}"
    gold_parsed = math_verify.parse("$42$")

    def bare() -> bool:
        return math_verify.verify(gold_parsed, math_verify.parse(f"${said}$"))

    pairs = [(str(g), f"\\frac{{{2 * v}}}{{2}}") for g in golds for v in (g, g + 1)]
    turn = itertools.cycle(pairs)

    def varied() -> bool:
        g, a = next(turn)
        return _math_verify(g, a) is not None

    checks = {
        "prmkit_math_verify_us": lambda: _math_verify(gold, said),
        "math_verify_defaults_us": bare,
        "prmkit_math_verify_varied_us": varied,
    }
    best = dict.fromkeys(checks, float("inf"))
    for check in checks.values():
        if not check():
            raise RuntimeError(f"{said} should equal {gold}")
        for _ in range(20):
            check()
    for _ in range(windows):  # interleaved windows, the least kept: load elsewhere only adds
        for name, check in checks.items():
            n, t0 = 0, time.thread_time()
            while time.thread_time() - t0 < seconds / (2 * windows):
                check()
                n += 1
            best[name] = min(best[name], 1e6 * (time.thread_time() - t0) / n)
    return best


def client_ratios(rows: list[dict], levels: list[int]) -> dict[str, dict]:
    """Per cell (answers x C) and over each kind of answers: the mean rollouts/s of each client and their
    ratio, http.client over httpx."""
    out = {}
    for answers in ("numeric", "latex"):
        for c in [*levels, None]:
            cell = [r for r in rows if r["answers"] == answers and c in (None, r["concurrency"])]
            mean = {
                k: sum(r["rollouts_per_s"] for r in cell if r["client"] == k)
                / max(1, sum(r["client"] == k for r in cell))
                for k in ("http.client", "httpx")
            }
            out[f"{answers} C={c or 'all'}"] = {**mean, "ratio": mean["http.client"] / mean["httpx"]}
    return out


def show(row: dict) -> None:
    tag = f"{row['answers']}{' +work_dir' if row['work_dir'] else ''}{' PROFILED' if row.get('profiled') else ''}"
    total = row["client_cpu_us"] + row["workers_cpu_us"] + row["server_cpu_us"]
    print(
        f"{tag:>17} {row['client']:>11} {row['concurrency']:>5} {row['rollouts']:>8} {row['wall_s']:>6.2f} "
        f"{row['rollouts_per_s']:>11,.0f} {row['client_cpu_us']:>12.1f} {row['workers_cpu_us']:>12.1f} "
        f"{row['server_cpu_us']:>12.1f} {total:>9.1f} {row['client_gc_us']:>8.1f} {row['load_avg']:>5.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=["raw", "asgi", "threading"], default="raw")
    parser.add_argument("--concurrency", default="16,64,256")
    parser.add_argument(
        "--clients",
        default="http.client,httpx",
        help=f"clients run in each cell, side by side: http.client (today's), httpx (before, {BEFORE})",
    )
    parser.add_argument("--traces", type=int, default=500, help="world traces of the numeric cells")
    parser.add_argument("--latex-traces", type=int, default=160, help="world traces of the LaTeX cells")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each cell (passes over all cells)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profiled and work_dir rows")
    parser.add_argument("--out", type=Path, help="default bench/results/rollouts-cpu-<date>.json")
    args = parser.parse_args()
    from prmkit.core import answers as answer_checks

    levels = [int(c) for c in args.concurrency.split(",")]
    clients = args.clients.split(",")
    if not set(clients) <= {"http.client", "httpx"} or "http.client" not in clients:
        raise SystemExit(f"--clients: http.client, optionally with httpx, not {args.clients!r}")
    if "httpx" in clients:
        httpx_client()  # read from git now: a checkout without the commit fails here, not mid-run
    traces = world_traces(max(1, args.traces // 4), 4)[: args.traces]
    latex_traces = world_traces(max(1, args.latex_traces // 4), 4, seed=8)[: args.latex_traces]
    golds = {t.problem.text: int(t.problem.answer) for t in traces + latex_traces}
    cores = answer_checks._cpus()
    load0, version = os.getloadavg()[0], code_version()
    proc, url = start_server(args.server, golds)
    url = f"{url}#{proc.pid}"
    print(
        f"{os.cpu_count()} CPU(s) ({cores} usable, so {cores} answer-checking workers), load average "
        f"{load0:.2f} at start (shared machine); {args.server} stub server in its own process; "
        f"rollouts=8 per prefix; {args.repeats} run(s) per cell, fresh job (work_dir=None) each"
    )
    rows: list[dict] = []
    try:
        run_cell(url, traces[:40], 16, False)  # warm-up: imports, connections, the workers' start
        run_cell(url, latex_traces[:40], 16, True)
        print(f"\n{'answers':>17} {'client':>11} {'C':>5} {'rollouts':>8} {'wall s':>6} {'rollouts/s':>11} "
              f"{'client us/r':>12} {'workers us/r':>12} {'server us/r':>12} {'sum us/r':>9} {'gc us/r':>8} {'load':>5}")  # fmt: skip
        for _ in range(args.repeats):
            for latex in (False, True):
                for c in levels:
                    for client in clients:  # side by side: load elsewhere hits both alike
                        rows.append(run_cell(url, latex_traces if latex else traces, c, latex, client=client))
                        show(rows[-1])
        profile: list[dict] = []
        layers: list[dict] = []
        packages: dict[str, float] = {}
        if not args.no_profile:
            with tempfile.TemporaryDirectory() as tmp:
                rows.append(run_cell(url, traces, 64, False, work_dir=str(Path(tmp) / "job")))
                show(rows[-1])
            with ThreadProfiles() as prof:
                row = run_cell(url, traces[: len(traces) // 4], 64, False)
            rows.append({**row, "profiled": True})
            show(rows[-1])
            profile = prof.top(25, row["rollouts"])
            packages = prof.by_package(row["rollouts"])
            layers = ladder(url, traces, 16, with_httpx="httpx" in clients)
    finally:
        proc.kill()
        proc.join()
    cost = math_verify_cost(sorted({int(t.problem.answer) for t in latex_traces}))
    latex_goal = 0.8 * cores / (cost["prmkit_math_verify_us"] / 1e6)
    plain = [r for r in rows if not r["work_dir"] and not r.get("profiled")]
    ratios = client_ratios(plain, levels) if "httpx" in clients else {}
    plain = [r for r in plain if r["client"] == "http.client"]
    best = {k: max(r["rollouts_per_s"] for r in plain if r["answers"] == k) for k in ("numeric", "latex")}
    goals = {
        "numeric_goal": 5000.0,
        "numeric_best": best["numeric"],
        "numeric_ratio": best["numeric"] / 5000.0,
        "latex_goal": latex_goal,
        "latex_best": best["latex"],
        "latex_ratio": best["latex"] / latex_goal,
    }
    print(
        f"\nmath-verify per check, in-process, one thread, warm: {cost['prmkit_math_verify_us']:.0f} us "
        f"through prmkit.core.answers._math_verify, {cost['math_verify_defaults_us']:.0f} us through "
        f"parse+verify with its defaults; {cost['prmkit_math_verify_varied_us']:.0f} us through prmkit's "
        "over the LaTeX cells' pairs in turn"
    )
    print(
        f"goals: numeric {best['numeric']:,.0f} / 5,000 rollouts/s = {goals['numeric_ratio']:.2f}; LaTeX "
        f"{best['latex']:,.0f} / {latex_goal:,.0f} (0.8 x {cores} cores / cost) = {goals['latex_ratio']:.2f}"
    )
    if ratios:
        print(f"\nhttp.client / httpx ({BEFORE}) rollouts/s, mean over the cell's runs, from this one run:")
        for cell, r in ratios.items():
            print(f"  {cell:>14}: {r['http.client']:>8,.0f} / {r['httpx']:>8,.0f} = {r['ratio']:.2f}")
    if profile:
        print("\nprofiled row: top functions by cumulative CPU (all threads, us per rollout, under cProfile)")
        skip = ("threading.py", "thread.py", "<built-in method _thread", "{method 'run' of '_contextvars")
        shown = [p for p in profile if not any(s in p["function"] for s in skip)][:10]
        for p in shown:
            print(f"  {p['cum_us']:8.1f} cum {p['tot_us']:8.1f} own {p['calls']:>8}  {p['function']}")
    if packages:
        total = sum(packages.values())
        print("  own CPU by where the code lives (share of the profiled client CPU):")
        for where, us in list(packages.items())[:12]:
            print(f"  {us:8.1f} us/rollout {100 * us / total:5.1f} %  {where}")
    if layers:
        print(
            "\nthe client path layer by layer (numeric, 16 threads, no profiler; client CPU us per rollout)"
        )
        for layer in layers:
            rate = f"{layer['rollouts_per_s']:>9,.0f} rollouts/s" if layer["rollouts_per_s"] else ""
            print(f"  {layer['client_cpu_us']:8.1f}  {layer['layer']:<40} {rate}")
    load1 = os.getloadavg()[0]
    print(f"\nload average {load1:.2f} at the end")
    out = args.out or ROOT / "bench" / "results" / f"rollouts-cpu-{datetime.date.today().isoformat()}.json"
    meta = {
        "cpus": os.cpu_count(),
        "answer_workers": cores,
        "python": platform.python_version(),
        "server": args.server,
        "shared_machine": True,
        "load_avg_start": load0,
        "load_avg_end": load1,
        "rollouts_per_prefix": 8,
        **version,
    }
    out.write_text(
        json.dumps(
            {
                **meta,
                **cost,
                **goals,
                "ratio_to_httpx_client": ratios,
                "rows": rows,
                "layers": layers,
                "profile": profile,
                "profile_by_package": packages,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
