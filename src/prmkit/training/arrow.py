"""Training examples as a memory-mapped Arrow dataset, tokenised once and cached on disk.

:func:`~prmkit.training.data.make_examples` returns a Python list of rows, which every process of a
run builds for itself: for the 445k traces of Math-Shepherd that is minutes of tokenising and gigabytes
of Python ints per rank. :func:`cached_examples` instead streams the rows (:func:`example_rows`) into
an Arrow file once, keeps it under a folder named by the hash of what determined the rows (the caller's
``key``), and from then on every process memory-maps that file: the pages are shared through the OS
page cache, and a rerun with the same inputs does not tokenise again.

The on-disk protocol, safe for several processes (ranks, or two runs sharing a cache):

- ``<cache_dir>/examples-<digest>/`` holds ``data/`` (``Dataset.save_to_disk``), ``key.json`` and
  ``meta.json``; it only ever appears by one ``os.rename`` of a finished temporary sibling, so a folder
  with that name is complete, and a crash mid-write leaves only a temporary folder, which no reader
  takes for the cache;
- a writer works in ``<cache_dir>/.examples-<digest>.tmp-<host>-<pid>-<random>/`` (its own, so writers
  never share files); a leftover of a dead process on this host is removed by the next writer, one of
  another host is left alone (its process may be alive) and ignored;
- two writers racing on one key both finish; the second rename fails (the folder exists), and the
  loser drops its copy and loads the winner's. A distributed caller therefore lets the main process
  build first and the others then only load, but nothing breaks if they do not wait.

The ``datasets`` global cache (``~/.cache/huggingface/datasets``) is never touched: the generator's
scratch files live inside the temporary folder, and an explicit fingerprint spares ``datasets`` from
hashing (pickling) the generator's closure, which holds every trace.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.modeling.template import StepTemplate
from prmkit.scoring.scorer import LengthCounts, Overlong
from prmkit.training.data import make_examples

if TYPE_CHECKING:
    import datasets

FORMAT = 1
"""Version of the cached layout (columns, types); part of every digest, so a change never reads old folders."""

CHUNK = 256
"""Traces encoded per :func:`make_examples` call in :func:`example_rows`: few enough that the rows in
flight stay small, enough to spread the per-call cost (the separator's encoding)."""

_PREFIX = "examples-"


def features() -> datasets.Features:
    """The columns of a cached example. Token ids and counts fit int32; targets are float32 because the
    collator makes a ``torch.float`` of them anyway (class indices 0..2 and -100 are exact, soft scores
    round exactly as ``torch.tensor(..., dtype=torch.float)`` rounds them). ``context_tokens`` is ``[]``
    where a row has none; ``length`` (``len(input_ids)``) lets a length-grouped sampler read lengths
    without decoding rows (transformers' ``length_column_name`` default)."""
    from datasets import Features, List, Value

    ints = List(Value("int32"))
    return Features({"input_ids": ints, "tag_positions": ints, "targets": List(Value("float32")),
                     "prompt_length": Value("int32"), "context_tokens": ints,
                     "length": Value("int32")})  # fmt: skip


def example_rows(
    traces: Iterable[Trace],
    targets: Iterable[list[float]],
    tokenizer: Any,
    template: StepTemplate,
    max_length: int,
    overlong: Overlong = "error",
    counts: LengthCounts | None = None,
    skip_context: bool = False,
    make: Callable[..., list[dict[str, Any]]] = make_examples,
) -> Iterator[dict[str, Any]]:
    """The rows :func:`make_examples` (or a head's own ``make``, with its signature) returns for the
    same arguments, in order, one at a time.

    It calls ``make`` itself, :data:`CHUNK` traces at a time, so the two can never drift apart;
    ``counts`` (one shared :class:`LengthCounts`) records what every chunk left out or cut.
    """
    counts = counts if counts is not None else LengthCounts(overlong, max_length)
    pairs = zip(traces, targets, strict=True)
    while chunk := list(islice(pairs, CHUNK)):
        yield from make([t for t, _ in chunk], [y for _, y in chunk], tokenizer, template, max_length,
                        overlong, counts, skip_context)  # fmt: skip


def key_digest(key: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``key`` (with :data:`FORMAT`): sorted keys, no spaces, so equal
    keys written in any order name one folder. Refuses a value JSON cannot write (a ``Path``, a set)
    rather than guess how to spell it."""
    try:
        text = json.dumps({"format": FORMAT, "key": key}, sort_keys=True, separators=(",", ":"))
    except TypeError as err:
        raise TypeError(
            f"cache key must hold only JSON values (str, int, float, bool, None, list, dict): {err}"
        ) from err
    return hashlib.sha256(text.encode()).hexdigest()


def traces_digest(traces: Iterable[Trace], targets: Iterable[list[float]]) -> str:
    """sha256 of exactly what :func:`example_rows` reads of each trace: its id (``meta`` reports ids),
    problem text, step inputs and targets. A key built on it does not depend on where the traces were
    read from, how they were split or which options made the targets, only on the result."""
    h = hashlib.sha256()
    for trace, tgt in zip(traces, targets, strict=True):
        line = [trace.id, trace.problem.text, step_inputs(trace.steps), list(tgt)]
        h.update(json.dumps(line, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def tokenizer_digest(tokenizer: Any) -> str:
    """sha256 of a tokenizer's whole definition (vocabulary, merges, added tokens, normaliser and
    post-processor, so a changed BOS rule counts too); for a slow tokenizer, its class and vocabulary."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        text = type(tokenizer).__name__ + backend.to_str()
    else:
        text = json.dumps([type(tokenizer).__name__, sorted(tokenizer.get_vocab().items())])
    return hashlib.sha256(text.encode()).hexdigest()


def cached_examples(
    rows: Callable[[], Iterator[dict[str, Any]]],
    key: Mapping[str, Any],
    cache_dir: str | Path,
    meta: Callable[[], dict[str, Any]] | None = None,
) -> tuple[datasets.Dataset, dict[str, Any]]:
    """The rows ``rows()`` yields, as a memory-mapped ``datasets.Dataset``, and the ``meta()`` of the
    run that wrote them (e.g. the :class:`LengthCounts` of what was cut, which a cache hit must report
    too). ``meta`` is called after ``rows()`` is exhausted, so it sees the whole pass.

    ``key`` must name everything the rows depend on: a second call with an equal key loads
    ``<cache_dir>/examples-<digest[:16]>`` and never calls ``rows``. ``dataset[i]`` is a dict of lists
    and ints that :class:`~prmkit.training.data.StepCollator` pads as it pads a :func:`make_examples` row.
    """
    cache_dir = Path(cache_dir)
    digest = key_digest(key)[:16]
    final = cache_dir / f"{_PREFIX}{digest}"
    if not final.is_dir():
        cache_dir.mkdir(parents=True, exist_ok=True)
        _remove_dead_leftovers(cache_dir, digest)
        _write(rows, key, meta, cache_dir, digest, final)
    return _load(final, key)


def row_lengths(data: Sequence[dict[str, Any]] | datasets.Dataset) -> list[int]:
    """Token count of every row, for a length-grouped sampler: from the ``length`` column of a cached
    dataset (no row is decoded) or ``len(input_ids)`` of each row of a list (a ``Dataset`` is not a
    ``Sequence``, so a list never costs the import of ``datasets``)."""
    if isinstance(data, Sequence):
        return [len(row["input_ids"]) for row in data]
    return list(data["length"][:])


def _write(
    rows: Callable[[], Iterator[dict[str, Any]]],
    key: Mapping[str, Any],
    meta: Callable[[], dict[str, Any]] | None,
    cache_dir: Path,
    digest: str,
    final: Path,
) -> None:
    """Build the folder in a temporary sibling and rename it into place; the temporary one goes either way."""
    import datasets

    tmp = cache_dir / f".{_PREFIX}{digest}.tmp-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
    bars = not datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # "Generating train split", "Saving the dataset": noise in a training log
    try:
        dataset = _build(rows, tmp / ".build", digest)
        # one shard at least: datasets writes none for an empty table, and then cannot load it
        dataset.save_to_disk(str(tmp / "data"), num_shards=None if len(dataset) else 1)
        del dataset  # it maps files under .build, removed next
        shutil.rmtree(tmp / ".build", ignore_errors=True)
        (tmp / "key.json").write_text(json.dumps({"format": FORMAT, "key": key}, sort_keys=True, indent=1))
        info = meta() if meta is not None else {}
        (tmp / "meta.json").write_text(json.dumps(info, sort_keys=True, indent=1))
        try:
            tmp.rename(final)
        except OSError:
            if not final.is_dir():  # not another writer's finished folder: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if bars:
            datasets.enable_progress_bars()


def _build(rows: Callable[[], Iterator[dict[str, Any]]], scratch: Path, digest: str) -> datasets.Dataset:
    """Stream ``rows()`` into Arrow under ``scratch``. An error inside the generator comes back as
    itself (an ``OverlongError`` stays one), not as ``datasets``' wrapper."""
    from datasets import Dataset
    from datasets.exceptions import DatasetGenerationError

    it = iter(rows())
    first = next(it, None)
    if first is None:  # from_generator refuses an empty split; an empty table is still a valid cache
        return Dataset.from_dict({name: [] for name in features()}, features=features())

    def generate() -> Iterator[dict[str, Any]]:
        for row in chain([first], it):
            yield {**row, "context_tokens": row.get("context_tokens", []), "length": len(row["input_ids"])}

    try:
        return Dataset.from_generator(generate, features=features(), cache_dir=str(scratch),
                                      fingerprint=f"prmkit-examples-{digest}")  # fmt: skip
    except DatasetGenerationError as err:
        if err.__cause__ is None:
            raise
        raise err.__cause__.with_traceback(err.__cause__.__traceback__) from None


def _load(final: Path, key: Mapping[str, Any]) -> tuple[datasets.Dataset, dict[str, Any]]:
    from datasets import load_from_disk

    stored = json.loads((final / "key.json").read_text())
    if stored != json.loads(json.dumps({"format": FORMAT, "key": key})):
        raise RuntimeError(
            f"{final} holds examples of another key than asked for (a digest collision, or a folder edited "
            f"by hand): remove it and rerun; stored {stored['key']!r}"
        )
    dataset = load_from_disk(str(final / "data"), keep_in_memory=False)
    return dataset, json.loads((final / "meta.json").read_text())


def _remove_dead_leftovers(cache_dir: Path, digest: str) -> None:
    """Remove temporary folders of ``digest`` left by a process of this host that no longer runs (a
    crash mid-write); those of live processes or other hosts are left alone."""
    host = socket.gethostname()
    for path in cache_dir.glob(f".{_PREFIX}{digest}.tmp-*"):
        owner = path.name.split(".tmp-", 1)[1].rsplit("-", 2)
        if len(owner) == 3 and owner[0] == host and owner[1].isdigit() and not _alive(int(owner[1])):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
