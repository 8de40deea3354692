"""The reward server's limits that need no tokenizer, checked before a request costs any work.

:mod:`~prmkit.serving.guard` has already bounded the body (size, strict JSON, API key); what is left
is counted here on the request's own text: traces per request, steps per trace, characters per step
and per trace, and the request's estimated cost against the queue. The raw texts are checked before
they are split into steps, so a hostile request is refused before any parsing, and the split traces
again, so every limit holds whatever shape the steps came in. Each refusal names the place, the limit
and the option that sets it (docs/serving.md lists them), so a client knows what to change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fastapi import HTTPException

from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.serving.batching import STEP_COST, TRACE_COST, trace_cost
from prmkit.serving.config import ServerConfig
from prmkit.serving.schemas import TraceIn


def check_text(where: str, text: str, limit: int, option: str, what: str) -> None:
    """One text against one character limit; the message names the option that raises it."""
    if len(text) > limit:
        raise HTTPException(
            413,
            f"{where}: {len(text)} characters; this server takes at most {limit} per {what} "
            f"({option}); shorten it or raise the limit",
        )


def check_count(n: int, config: ServerConfig) -> None:
    """Traces per request, the first limit every endpoint checks (a count costs nothing to read)."""
    if n > config.max_traces_per_request:
        raise HTTPException(
            413,
            f"request holds {n} traces; this server takes at most "
            f"{config.max_traces_per_request} per request (--max-traces-per-request); split the batch",
        )


def check_raw(texts: Sequence[str], config: ServerConfig) -> None:
    """Count and length of the raw texts a request holds, checked before they are split into steps."""
    check_count(len(texts), config)
    for i, text in enumerate(texts):
        check_text(f"trace {i}", text, config.max_trace_chars, "--max-trace-chars", "trace")


def raw_text(item: TraceIn) -> str:
    """What a trace of a request holds, as text, for the size check before any parsing."""
    raw = (item.problem or "") + (item.completion or "")
    if item.messages is not None or item.tools is not None:
        raw += json.dumps([item.messages, item.tools], ensure_ascii=False, default=str)
    return raw


def check_sizes(traces: Sequence[Trace], config: ServerConfig) -> None:
    """Every limit that can be checked without tokenizing, so an oversized request costs microseconds."""
    check_count(len(traces), config)
    cost = 0
    for i, trace in enumerate(traces):
        if len(trace.steps) > config.max_steps_per_trace:
            raise HTTPException(
                422,
                f"trace {i} has {len(trace.steps)} steps; this server scores at most "
                f"{config.max_steps_per_trace} steps per trace (--max-steps-per-trace)",
            )
        texts = [trace.problem.text, *step_inputs(trace.steps)]  # an agent's calls and results count
        for j, text in enumerate(texts):
            where = f"trace {i} problem" if j == 0 else f"trace {i} step {j - 1}"
            check_text(where, text, config.max_step_chars, "--max-step-chars", "step or problem")
        check_text(f"trace {i}", "".join(texts), config.max_trace_chars, "--max-trace-chars", "trace")
        cost += trace_cost(trace)
    if cost > config.max_queue_chars:
        raise HTTPException(
            413,
            f"request costs {cost} characters (text plus {TRACE_COST} per trace and {STEP_COST} per step); "
            f"the queue holds at most {config.max_queue_chars} (--max-queue-chars); split the batch",
        )
