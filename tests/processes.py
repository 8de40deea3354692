"""Stopping a server a test started as a real process: SIGTERM, and SIGKILL if it has not exited within
``grace`` seconds (a server stuck in a request must not hang the suite or outlive it)."""

from __future__ import annotations

import subprocess


def stop(proc: subprocess.Popen, grace: float = 10) -> None:
    """Terminate ``proc`` and wait for it; kill it if it is still running after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
