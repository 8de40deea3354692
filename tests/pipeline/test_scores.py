"""The run's store of the ORM's answers (``pipeline/scores.py``): the evaluation stages of ``prmkit run
--jobs`` share one scoring of each pool across their processes, so what a stage reads must be the very
floats the one call gave, and an entry that is not whole or not this pool's must never be used."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.pipeline.scores import pool_key, stored_scores


def _traces(n: int = 5) -> list[Trace]:
    gold = Provenance(method="gold")
    return [
        Trace(
            id=f"t{i}",
            problem=Problem(id=f"p{i // 2}", text=f"{i} + 1"),
            steps=[
                Step(text=f"step {k} of {i}", labels=[Label(rating=1, provenance=gold)]) for k in range(3)
            ],
        )
        for i in range(n)
    ]


def _floats(traces: list[Trace]) -> list[list[float]]:
    """Scores with every bit in use (thirds, a negative zero, NaN), so a lossy round trip would show."""
    rows = [[(len(s.text) + i) / 3.0 for s in t.steps] for i, t in enumerate(traces)]
    rows[0][0], rows[1][1] = -0.0, float("nan")
    return rows


def _same(a: list[list[float]], b: list[list[float]]) -> bool:
    """Bit-equal rows (NaN equal to itself, -0.0 apart from 0.0)."""
    return json.dumps([[x.hex() for x in r] for r in a]) == json.dumps([[x.hex() for x in r] for r in b])


def _racer(folder: str, key: str, barrier: object, calls: str, out: str) -> None:
    """One stage's process: wait for the other, then ask the store; record what it got."""
    traces = _traces()

    def score(ts: list[Trace]) -> list[list[float]]:
        with open(calls, "a") as fh:
            fh.write("scored\n")
        time.sleep(0.3)  # both are inside the scoring at once: both miss, both write
        return _floats(ts)

    barrier.wait()  # type: ignore[attr-defined]
    rows = stored_scores(Path(folder), key, traces, score)
    Path(out).write_text(json.dumps([[x.hex() for x in r] for r in rows]))


def test_two_processes_racing_read_the_same_floats(tmp_path):
    """Two stage processes that miss the store at once both score, both write (temp file + rename), and
    get bit-equal floats; the entry left behind is whole and a third reader takes it without scoring."""
    traces = _traces()
    key = pool_key("orm-abc", "model.safetensors:10:1", traces=traces)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    calls = tmp_path / "calls.txt"
    procs = [
        ctx.Process(
            target=_racer, args=(str(tmp_path / "store"), key, barrier, str(calls), str(tmp_path / f"{i}"))
        )
        for i in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert calls.read_text() == "scored\n" * 2  # a real race: neither found the other's entry
    got = [json.loads((tmp_path / f"{i}").read_text()) for i in range(2)]
    expected = [[x.hex() for x in r] for r in _floats(traces)]
    assert got[0] == got[1] == expected
    assert [p.name for p in (tmp_path / "store").iterdir()] == [f"{key}.json"]  # no temporary file left

    def must_not_score(ts: list[Trace]) -> list[list[float]]:
        raise AssertionError("the whole entry should have been read")

    assert _same(stored_scores(tmp_path / "store", key, traces, must_not_score), _floats(traces))


def test_an_entry_not_whole_or_not_this_pools_is_scored_again(tmp_path):
    """A truncated file, one written for another key, or one with another count of rows or a non-float
    is not used: the pool is scored and the entry replaced by a whole one."""
    traces = _traces()
    key = pool_key("orm-abc", traces=traces)
    path = tmp_path / f"{key}.json"
    whole = {"key": key, "traces": len(traces), "rows": _floats(traces)}
    text = json.dumps(whole)
    bad = [
        text[: len(text) // 2],  # cut short (not written through the store)
        json.dumps({**whole, "key": pool_key("orm-other", traces=traces)}),  # another checkpoint's
        json.dumps({**whole, "traces": 4, "rows": _floats(traces)[:4]}),  # another pool's size
        json.dumps({**whole, "rows": [[1, 0.5, 0.5], *_floats(traces)[1:]]}),  # an int is not a float
        "[]",
    ]
    scored: list[int] = []

    def score(ts: list[Trace]) -> list[list[float]]:
        scored.append(len(ts))
        return _floats(ts)

    for content in bad:
        path.write_text(content)
        scored.clear()
        assert _same(stored_scores(tmp_path, key, traces, score), _floats(traces))
        assert scored == [len(traces)]
        assert json.loads(path.read_text())["key"] == key  # replaced by the whole entry
        assert _same(json.loads(path.read_text())["rows"], _floats(traces))


def test_the_key_is_the_checkpoint_and_the_pool_as_the_scorer_reads_it():
    """Another checkpoint, another trace or another order is another entry; labels are not read by the
    scorer, so they do not change the key."""
    traces = _traces()
    key = pool_key("orm-abc", "threads=2", traces=traces)
    relabelled = [t.model_copy(deep=True) for t in traces]
    relabelled[0].steps[0].labels = []
    assert pool_key("orm-abc", "threads=2", traces=relabelled) == key
    assert pool_key("orm-abd", "threads=2", traces=traces) != key
    assert pool_key("orm-abc", "threads=1", traces=traces) != key
    assert pool_key("orm-abc", "threads=2", traces=traces[::-1]) != key
    assert pool_key("orm-abc", "threads=2", traces=traces[:-1]) != key
