"""CLI commands of the search area: ``bon``, ``vote``, ``beam``, ``resample`` and the reward server ``serve``.

Each command calls the function of the same name in :mod:`prmkit.search.jobs` (or
:func:`prmkit.serving.reward_server.serve`) with the same options; help texts come from the typed
options' docstrings, so each option is documented once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from prmkit.policies.options import PolicyOptions
from prmkit.scoring.forms import SCORER_HELP
from prmkit.serving.config import ServerConfig
from prmkit.serving.steps import StepSplit


def _h(model: type, name: str) -> str:
    return model.model_fields[name].description or ""


PROBLEMS = typer.Argument(..., help="Problem file (JSONL), or a trace file whose distinct problems are used.")
OUT = typer.Option(..., "--out", "-o", help="Per-problem results (JSONL): answer, correct, score, compute.")
SCORER = typer.Option(..., "--scorer", help=SCORER_HELP)
N = typer.Option(16, "--n", help="Samples per problem (beam: candidate steps per round).")
AGG = typer.Option(
    "min", "--aggregation", help="Per-step scores -> one number: min, prod, last, mean, geomean."
)
SEED = typer.Option(0, "--seed", help="Seed of problem 0; problem k uses seed + k.")
LIMIT = typer.Option(None, "--limit", help="Use only the first LIMIT problems.")
TRACES = typer.Option(None, "--traces-out", help="Also write the chosen traces here (JSONL or .parquet).")
POLICY = typer.Option("world", "--policy", help=_h(PolicyOptions, "policy"))
MODEL = typer.Option(None, "--policy-model", help=_h(PolicyOptions, "model"))
URL = typer.Option(None, "--url", help=_h(PolicyOptions, "url"))
TEMP = typer.Option(1.0, "--temperature", help=_h(PolicyOptions, "temperature"))


def _policy(policy: str, model: str | None, url: str | None, temperature: float) -> PolicyOptions:
    return PolicyOptions(policy=policy, model=model, url=url, temperature=temperature)


def _print(summary: dict[str, Any]) -> None:
    typer.echo(json.dumps(summary, indent=2))


def bon_cmd(
    problems: Path = PROBLEMS, out: Path = OUT, scorer: str = SCORER, n: int = N, aggregation: str = AGG,
    seed: int = SEED, limit: int | None = LIMIT, traces_out: Path | None = TRACES, policy: str = POLICY,
    policy_model: str | None = MODEL, url: str | None = URL, temperature: float = TEMP,
) -> None:  # fmt: skip
    """Best-of-N: sample N solutions per problem and keep the one with the best aggregated step score."""
    from prmkit.search.jobs import bon

    pol = _policy(policy, policy_model, url, temperature)
    _print(bon(problems, scorer, out, n, aggregation, seed, pol, limit, traces_out))


def vote_cmd(
    problems: Path = PROBLEMS, out: Path = OUT,
    scorer: str | None = typer.Option(None, "--scorer", help="Weight votes by this scorer (omit: plain majority). " + SCORER_HELP),
    n: int = N, aggregation: str = AGG, seed: int = SEED, limit: int | None = LIMIT,
    traces_out: Path | None = TRACES, policy: str = POLICY, policy_model: str | None = MODEL,
    url: str | None = URL, temperature: float = TEMP,
) -> None:  # fmt: skip
    """Majority vote over N samples (answers grouped by equivalence), PRM-weighted with --scorer."""
    from prmkit.search.jobs import vote

    pol = _policy(policy, policy_model, url, temperature)
    _print(vote(problems, out, scorer, n, aggregation, seed, pol, limit, traces_out))


def beam_cmd(
    problems: Path = PROBLEMS, out: Path = OUT, scorer: str = SCORER, n: int = N,
    beam_width: int = typer.Option(4, "--beam-width", help="Next steps sampled per kept prefix (M); N/M are kept."),
    max_depth: int = typer.Option(40, "--max-depth", help="Most rounds; open beams are then finished by rollout."),
    aggregation: str = AGG,
    diverse: bool = typer.Option(False, "--dvts", help="Diverse verifier tree search: N/M independent subtrees."),
    seed: int = SEED, limit: int | None = LIMIT, traces_out: Path | None = TRACES, policy: str = POLICY,
    policy_model: str | None = MODEL, url: str | None = URL, temperature: float = TEMP,
) -> None:  # fmt: skip
    """PRM-guided step-level beam search (or DVTS with --dvts)."""
    from prmkit.search.jobs import beam

    pol = _policy(policy, policy_model, url, temperature)
    _print(
        beam(
            problems,
            scorer,
            out,
            n,
            beam_width,
            max_depth,
            aggregation,
            diverse,
            seed,
            pol,
            limit,
            traces_out,
        )
    )


def resample_cmd(
    problems: Path = PROBLEMS, out: Path = OUT, scorer: str = SCORER,
    threshold: float | None = typer.Option(
        None, "--threshold", help="Steps scoring below it are resampled; default: the checkpoint's own, else 0.5."
    ),
    budget: int = typer.Option(64, "--budget", help="Most steps generated per problem."),
    aggregation: str = AGG, seed: int = SEED, limit: int | None = LIMIT, traces_out: Path | None = TRACES,
    policy: str = POLICY, policy_model: str | None = MODEL, url: str | None = URL, temperature: float = TEMP,
) -> None:  # fmt: skip
    """Reject-and-resample: regenerate from the first step the PRM doubts, within a step budget."""
    from prmkit.search.jobs import resample

    pol = _policy(policy, policy_model, url, temperature)
    _print(resample(problems, scorer, out, threshold, budget, aggregation, seed, pol, limit, traces_out))


S = ServerConfig


def _limit(name: str) -> Any:
    """A ``prmkit serve`` option whose default and help come from ``ServerConfig`` (no retyped default)."""
    return typer.Option(S.model_fields[name].default, help=_h(S, name))


def serve_cmd(
    model: str = typer.Argument(..., help=SCORER_HELP),
    host: str = typer.Option("127.0.0.1", help=_h(S, "host")),
    port: int = typer.Option(8000, help=_h(S, "port")),
    api_key: str | None = typer.Option(None, envvar="PRMKIT_API_KEY", help=_h(S, "api_key")),
    aggregation: str = typer.Option("min", help=_h(S, "aggregation")),
    step_separator: str = typer.Option("\n", help=_h(StepSplit, "separator"), show_default="\\n (a newline)"),
    step_pattern: str | None = typer.Option(None, help=_h(StepSplit, "pattern")),
    step_tag: str | None = typer.Option(None, help=_h(S, "step_tag")),
    batching: bool = typer.Option(True, "--batching/--no-batching", help=_h(S, "batching")),
    max_batch_traces: int = typer.Option(64, help=_h(S, "max_batch_traces")),
    max_wait_ms: float = typer.Option(5.0, help=_h(S, "max_wait_ms")),
    max_queue_traces: int = typer.Option(1024, help=_h(S, "max_queue_traces")),
    batch_tokens: int | None = typer.Option(None, help=_h(S, "batch_tokens")),
    max_body_bytes: int = typer.Option(4_000_000, help=_h(S, "max_body_bytes")),
    max_traces_per_request: int = typer.Option(512, help=_h(S, "max_traces_per_request")),
    max_steps_per_trace: int = typer.Option(256, help=_h(S, "max_steps_per_trace")),
    max_step_chars: int = _limit("max_step_chars"),
    max_trace_chars: int = _limit("max_trace_chars"),
    max_queue_chars: int = _limit("max_queue_chars"),
    max_queue_wait_s: float = _limit("max_queue_wait_s"),
    max_json_depth: int = _limit("max_json_depth"),
) -> None:
    """Serve a PRM over HTTP: /score, /get_reward (OpenRLHF), /pooling (vLLM), /health, /metrics, /docs."""
    from prmkit.serving.reward_server import serve

    split = StepSplit(separator=step_separator, pattern=step_pattern)
    config = ServerConfig(
        host=host, port=port, api_key=api_key, aggregation=aggregation, split=split, step_tag=step_tag,
        batching=batching, max_batch_traces=max_batch_traces, max_wait_ms=max_wait_ms,
        max_queue_traces=max_queue_traces, batch_tokens=batch_tokens, max_body_bytes=max_body_bytes,
        max_traces_per_request=max_traces_per_request, max_steps_per_trace=max_steps_per_trace,
        max_step_chars=max_step_chars, max_trace_chars=max_trace_chars, max_queue_chars=max_queue_chars,
        max_queue_wait_s=max_queue_wait_s, max_json_depth=max_json_depth,
    )  # fmt: skip
    serve(model, config)


def register(app: typer.Typer) -> None:
    """Add ``bon``, ``vote``, ``beam``, ``resample`` and ``serve`` to the root app."""
    app.command("bon")(bon_cmd)
    app.command("vote")(vote_cmd)
    app.command("beam")(beam_cmd)
    app.command("resample")(resample_cmd)
    app.command("serve")(serve_cmd)
