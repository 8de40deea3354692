"""Which process of a launch this is, read from the variables every launcher sets (``accelerate launch``,
``torchrun``, ``deepspeed``: ``RANK``, ``WORLD_SIZE``), so code that writes or prints can ask without
starting a process group; the trainer's ``process_index`` is the same number."""

from __future__ import annotations

import os


def rank() -> int:
    """This process's place among the launch's (0 when not launched)."""
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """How many processes the launch started (1 when not launched)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Whether this process is the one that writes shared files and prints results."""
    return rank() == 0
