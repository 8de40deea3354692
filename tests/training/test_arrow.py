"""Cached Arrow examples: the same rows and batches as the list path, written once, loaded memory-mapped,
never from a half-written folder, and never through the ``datasets`` global cache."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from prmkit.core.model import Observation, Problem, Step, ToolCall, Trace
from prmkit.modeling import StepTemplate, build_tokenizer
from prmkit.modeling.tokenizer import trace_texts
from prmkit.scoring.scorer import LengthCounts, OverlongError
from prmkit.training import arrow
from prmkit.training.arrow import (
    cached_examples,
    example_rows,
    key_digest,
    row_lengths,
    tokenizer_digest,
    traces_digest,
)
from prmkit.training.data import IGNORE, StepCollator, make_examples, step_targets
from tests.training.conftest import world_traces

MAX_LENGTH = 96


@pytest.fixture(autouse=True)
def global_cache(tmp_path, monkeypatch) -> Path:
    """Point the ``datasets`` global cache at a temporary folder, and check nothing was written there."""
    import datasets.config

    home = tmp_path / "hf-global"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(home))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", home)
    monkeypatch.setattr(datasets.config, "DOWNLOADED_DATASETS_PATH", home / "downloads")
    monkeypatch.setattr(datasets.config, "EXTRACTED_DATASETS_PATH", home / "downloads" / "extracted")
    yield home
    assert not home.exists() or not any(home.iterdir())


def _agent_trace() -> Trace:
    call = ToolCall(name="lookup", arguments='{"crate": 7}', id="c1")
    seen = [Observation(content="crate 7: 9 apples", call_id="c1")]
    steps = [Step(text="Look it up.", tool_calls=[call], observations=seen), Step(text="The answer is 9.")]
    return Trace(id="agent", problem=Problem(id="agent", text="Crate 7?"), steps=steps)


@pytest.fixture(scope="module")
def inputs():
    """World traces (some longer than MAX_LENGTH, so truncation shows in the counts) and one agent trace
    (so ``context_tokens`` is set); soft targets that float32 cannot hold exactly."""
    traces = [*world_traces(8, 2, seed=0), _agent_trace()]
    tok = build_tokenizer(list(trace_texts(traces)), vocab_size=300)
    soft = [
        [(k + j) % 4 / 3 if (k + j) % 5 else IGNORE for j in range(len(t.steps))]
        for k, t in enumerate(traces)
    ]
    hard = [step_targets(t, "gold", "hard", 2, "positive", "mask", False) for t in traces[:-1]] + [[1.0, 0.0]]
    return traces, tok, StepTemplate.named("newline"), {"soft": soft, "hard": hard}


def _build(inputs, tmp_path, scale="soft", skip_context=True, calls=None, key_extra=None):
    traces, tok, template, targets = inputs
    counts = LengthCounts("truncate", MAX_LENGTH)

    def rows():
        if calls is not None:
            calls.append(1)
        return example_rows(
            traces, targets[scale], tok, template, MAX_LENGTH, "truncate", counts, skip_context
        )

    key = {"scale": scale, "skip_context": skip_context, "max_length": MAX_LENGTH, **(key_extra or {})}
    return cached_examples(rows, key, tmp_path / "cache", meta=lambda: {"counts": counts.to_dict()})


def _listed(inputs, scale="soft", skip_context=True):
    traces, tok, template, targets = inputs
    counts = LengthCounts("truncate", MAX_LENGTH)
    return make_examples(
        traces, targets[scale], tok, template, MAX_LENGTH, "truncate", counts, skip_context
    ), counts


@pytest.mark.parametrize(("scale", "skip_context"), [("soft", True), ("hard", False)])
def test_rows_and_batches_are_the_list_paths(inputs, tmp_path, monkeypatch, scale, skip_context):
    """Row for row what make_examples gives (targets as float32, ``context_tokens`` [] where absent,
    plus ``length``), and StepCollator batches equal to the bit; several chunks of example_rows."""
    monkeypatch.setattr(arrow, "CHUNK", 3)
    listed, counts = _listed(inputs, scale, skip_context)
    ds, meta = _build(inputs, tmp_path, scale, skip_context)
    assert counts.truncated > 0 and meta == {"counts": counts.to_dict()}
    assert any(r.get("context_tokens") for r in listed) == skip_context
    assert len(ds) == len(listed)
    for row, want in zip(ds, listed, strict=True):
        f32 = torch.tensor(want["targets"], dtype=torch.float).tolist()
        assert row == {**want, "targets": f32, "context_tokens": want.get("context_tokens", []),
                       "length": len(want["input_ids"])}  # fmt: skip
    collate = StepCollator(inputs[1].pad_token_id)
    for start in range(0, len(listed), 4):
        batch = range(start, min(start + 4, len(listed)))
        got, want = collate([ds[i] for i in batch]), collate([listed[i] for i in batch])
        assert got.keys() == want.keys()
        for name in want:
            assert got[name].dtype == want[name].dtype and torch.equal(got[name], want[name]), name
    assert row_lengths(ds) == row_lengths(listed) == [len(r["input_ids"]) for r in listed]


def test_example_rows_is_make_examples_streamed(inputs):
    traces, tok, template, targets = inputs
    counts = LengthCounts("truncate", MAX_LENGTH)
    streamed = list(
        example_rows(iter(traces), iter(targets["soft"]), tok, template, MAX_LENGTH, "truncate", counts)
    )
    listed, want = _listed(inputs, skip_context=False)
    assert streamed == listed and counts == want


def test_second_call_loads_the_cache_without_encoding(inputs, tmp_path):
    calls: list[int] = []
    first, meta = _build(inputs, tmp_path, calls=calls)
    again, meta_again = _build(inputs, tmp_path, calls=calls)
    assert calls == [1] and meta_again == meta and meta["counts"]["truncated"] > 0
    assert again[:] == first[:]
    folders = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert folders == [
        f"examples-{key_digest({'scale': 'soft', 'skip_context': True, 'max_length': MAX_LENGTH})[:16]}"
    ]
    folder = tmp_path / "cache" / folders[0]
    assert {p.name for p in folder.iterdir()} == {"data", "key.json", "meta.json"}
    assert json.loads((folder / "key.json").read_text())["key"]["scale"] == "soft"
    # memory-mapped from that folder
    assert again.cache_files and all(Path(f["filename"]).parent == folder / "data" for f in again.cache_files)


def test_a_different_key_writes_a_new_folder(inputs, tmp_path):
    calls: list[int] = []
    _build(inputs, tmp_path, calls=calls)
    _build(inputs, tmp_path, calls=calls, key_extra={"tokenizer": "other"})
    assert calls == [1, 1]
    assert len(list((tmp_path / "cache").glob("examples-*"))) == 2
    # key order does not matter; a value JSON cannot write is refused
    assert key_digest({"a": 1, "b": 2}) == key_digest({"b": 2, "a": 1})
    with pytest.raises(TypeError, match="JSON values"):
        key_digest({"path": Path("x")})


def test_a_crashed_write_is_never_taken_for_the_cache(inputs, tmp_path):
    """A temporary folder a killed writer left is not loaded (the rows are encoded again); a dead local
    writer's leftover is removed, one of another host kept; an error in the rows leaves nothing."""
    digest = key_digest({"scale": "soft", "skip_context": True, "max_length": MAX_LENGTH})[:16]
    cache = tmp_path / "cache"
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    leftovers = [cache / f".examples-{digest}.tmp-{host}-{pid}-0bad" for host, pid in
                 [(socket.gethostname(), dead.pid), ("elsewhere", 1)]]  # fmt: skip
    for left in leftovers:
        (left / "data").mkdir(parents=True)
        (left / "key.json").write_text("{}")
    calls: list[int] = []
    ds, _ = _build(inputs, tmp_path, calls=calls)
    assert calls == [1] and len(ds) == len(_listed(inputs)[0])
    assert not leftovers[0].exists() and leftovers[1].exists()

    def failing():
        yield from example_rows(*_args(inputs), overlong="error")

    with pytest.raises(OverlongError):  # the rows' own error, not datasets' wrapper
        cached_examples(failing, {"fails": True}, cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted([f"examples-{digest}", leftovers[1].name])


def _args(inputs):
    traces, tok, template, targets = inputs
    return traces, targets["soft"], tok, template, MAX_LENGTH


def test_no_rows_is_an_empty_cached_dataset(tmp_path):
    calls: list[int] = []

    def rows():
        calls.append(1)
        return iter(())

    for _ in range(2):
        ds, meta = cached_examples(rows, {"empty": True}, tmp_path, meta=lambda: {"n": 0})
        assert len(ds) == 0 and meta == {"n": 0} and set(ds.column_names) == set(arrow.features())
    assert calls == [1]


def test_the_loser_of_a_race_loads_the_winners_folder(inputs, tmp_path):
    """Two writers of one key (ranks that did not wait): the one that renames second drops its copy."""
    calls: list[int] = []
    key = {"race": True}

    def rows():
        calls.append(1)
        if len(calls) == 1:  # while this writer encodes, another finishes the same key
            cached_examples(rows, key, tmp_path, meta=lambda: {"writer": "winner"})
        return example_rows(*_args(inputs), overlong="truncate")

    ds, meta = cached_examples(rows, key, tmp_path, meta=lambda: {"writer": "loser"})
    assert calls == [1, 1] and meta == {"writer": "winner"} and len(ds) == len(_listed(inputs)[0])
    assert [p.name for p in tmp_path.iterdir()] == [f"examples-{key_digest(key)[:16]}"]


def test_the_key_digests_follow_what_the_rows_read(inputs):
    traces, tok, _, targets = inputs
    soft = targets["soft"]
    assert traces_digest(traces, soft) == traces_digest(list(traces), [list(t) for t in soft])
    changed = [list(t) for t in soft]
    changed[0][0] = 0.5 if changed[0][0] != 0.5 else 0.25
    assert traces_digest(traces, changed) != traces_digest(traces, soft)
    other = build_tokenizer(list(trace_texts(traces)), vocab_size=280)
    assert tokenizer_digest(tok) == tokenizer_digest(tok) != tokenizer_digest(other)
