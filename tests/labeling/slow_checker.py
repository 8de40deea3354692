"""Run in each answer-checking worker (``prmkit.core.answers.configure(initializer=...)``): math-verify
made to take 50 ms per comparison, as a loaded machine or a hard expression does."""

from __future__ import annotations

import time


def fifty_ms_per_check() -> None:
    import math_verify

    real = math_verify.verify

    def slow(*args, **kwargs):
        time.sleep(0.05)
        return real(*args, **kwargs)

    math_verify.verify = slow
