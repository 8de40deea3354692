"""Run by test_distributed.py under ``accelerate launch``: ``prmkit``'s own command line (``argv[2:]``),
each rank recording every file it writes, renames or removes under the output folder into
``<argv[1]>.rank<N>.json``, so the test can tell which rank wrote what.

Python's audit hooks see ``open`` for writing, renames, removals and ``shutil.rmtree``; the weights and
``tokenizer.json`` are written by native code (safetensors, tokenizers), so their writers are wrapped
before transformers imports them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import safetensors.torch

RANK = int(os.environ.get("RANK", "0"))
OUT = Path(sys.argv[1]).resolve()
WRITES: list[list[str]] = []
EVENTS = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "shutil.rmtree", "os.truncate"}


def _inside(path: object) -> str | None:
    try:
        resolved = Path(os.fsdecode(path)).resolve()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return str(resolved.relative_to(OUT)) if resolved.is_relative_to(OUT) else None


def _hook(event: str, args: tuple) -> None:
    if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        writing = any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing and (where := _inside(args[0])) is not None:
            WRITES.append([event, where])
    elif event in EVENTS and args:
        for path in args[:2]:
            if isinstance(path, str | bytes | os.PathLike) and (where := _inside(path)) is not None:
                WRITES.append([event, where])


def _recorded(write):  # wraps a native writer
    def save(tensors, filename, *args, **kwargs):
        if (where := _inside(filename)) is not None:
            WRITES.append(["safetensors", where])
        return write(tensors, filename, *args, **kwargs)

    return save


safetensors.torch.save_file = _recorded(safetensors.torch.save_file)
sys.addaudithook(_hook)

if __name__ == "__main__":
    from prmkit.cli import main

    sys.argv = ["prmkit", *sys.argv[2:]]
    try:
        main()
    finally:
        record = OUT.with_name(f"{OUT.name}.rank{RANK}.json")
        record.write_text(json.dumps(WRITES))
