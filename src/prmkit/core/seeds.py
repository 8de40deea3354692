"""Seeds derived from names, so every random draw of a world or a job is reproducible anywhere."""

from __future__ import annotations

import hashlib


def derive_seed(*parts: object) -> int:
    """A 64-bit integer seed from any parts, the same on every machine and Python run.

    Why not ``hash()``: Python salts string hashes per process, so a seed built from a problem id would
    change between runs; BLAKE2 of the parts' text does not.
    """
    text = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")
