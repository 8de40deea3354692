"""The critic head's training: supervised fine-tuning on a teacher's verification chains (ThinkPRM).

The training text of a trace is :mod:`prmkit.modeling.critic`'s layout: the problem, then each step
followed by the teacher's check of it and its verdict. The loss is the causal LM's mean negative
log-likelihood of what the critic *writes* (each check, `` \\boxed{``, the verdict), not of what it reads:
the problem and the steps, which include the policy's errors, are context. Training on the steps too
would teach the verifier to write the errors it must catch, and spend its small capacity on the policy's
distribution instead of on checking.

The chains come from a label source whose provenance holds them (a teacher judge's answers), filtered by
:func:`prmkit.labeling.chains.process_filter` against ``filter_source``; what the filter read and kept
goes into the process card (``training.critic``; ``gold_use`` when the filter set is gold).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from prmkit.cards.process_card import GoldUse, is_gold
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.labeling.chains import process_filter
from prmkit.modeling.critic import encode_chain
from prmkit.modeling.template import StepTemplate
from prmkit.scoring.scorer import LengthCounts, Overlong, fit
from prmkit.training.data import IGNORE
from prmkit.training.likelihood import step_min_logp

CHECKS = "critic_checks"
"""``Trace.metadata`` key of a training trace's kept chain: one ``[check, correct]`` per step."""
MARGIN = 8
"""Tokens a scored check may take beyond the longest one trained on (``PrmSpec.verify_tokens``)."""


def critic_traces(
    traces: Sequence[Trace],
    teacher: str,
    filter_source: str | None,
    size: int | None,
    seed: int,
    where: str = "the training traces",
) -> tuple[list[Trace], dict[str, Any]]:
    """Copies of the traces whose ``teacher`` chain the process filter keeps, each carrying it under
    :data:`CHECKS`, and the filter's summary. Refused in one located line (an :class:`InputError`, a
    user's data and not a bug) when no trace of ``where`` carries a chain, naming the commands that
    write chains."""
    kept, summary = process_filter(traces, teacher, filter_source, size, seed)
    if not summary["chains"]:
        issue = Issue(
            where, None, "label_source",
            f"traces whose {teacher!r} labels carry a verification chain (a judge's answer in ThinkPRM's "
            "format, kept in the labels' provenance), which the critic head is trained on",
            f"none of {len(traces)} traces", "critic",
            "write chains with `prmkit label judge FILE --judge arithmetic-teacher` (a world's teacher) or "
            "`--judge endpoint --judge-format thinkprm`, and pass the source it writes as --label-source "
            "(judge:arithmetic-teacher for the first)",
        )  # fmt: skip
        raise InputError([issue], skippable=False)
    out = []
    for trace, checks in kept:
        copy = trace.model_copy()
        copy.metadata = {**trace.metadata, CHECKS: [[text, ok] for text, ok in checks]}
        out.append(copy)
    return out, summary


def filter_gold_use(summary: dict[str, Any]) -> list[GoldUse]:
    """The card's record of a gold filter set (none for another source: a hand-labelled set is named in
    ``training.critic``, with its size, but is not gold)."""
    source = summary.get("filter_source")
    if source is None or not is_gold(source):
        return []
    return [GoldUse(use="chain_filter", source=source, traces=summary["filter_traces"],
                    labels=summary["filter_labels"])]  # fmt: skip


def verdict_targets(trace: Trace) -> list[float]:
    """The kept chain's verdicts, 1.0 = correct (what the process card counts; the loss reads the text)."""
    return [float(ok) for _, ok in trace.metadata.get(CHECKS, [])] or [IGNORE] * len(trace.steps)


def check_tokens(traces: Sequence[Trace], tokenizer: Any) -> int:
    """The longest check of the chains, in tokens, plus :data:`MARGIN`: the scorer's default budget."""
    checks = [text for t in traces for text, _ in t.metadata.get(CHECKS, [])]
    longest = max((len(ids) for ids in tokenizer(checks, add_special_tokens=False).input_ids), default=0)
    return longest + MARGIN


def chains_digest(traces: Sequence[Trace]) -> str:
    """sha256 of the chains (the examples' cache key must change with them, not only with the steps)."""
    text = json.dumps([t.metadata.get(CHECKS) for t in traces], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def critic_examples(
    traces: Sequence[Trace],
    targets: Sequence[list[float]],
    tokenizer: Any,
    template: StepTemplate,
    max_length: int,
    overlong: Overlong = "error",
    counts: LengthCounts | None = None,
    skip_context: bool = False,
) -> list[dict[str, Any]]:
    """:func:`prmkit.training.data.make_examples` for the critic head: each trace with its chain
    (:data:`CHECKS`) in the critic's layout, ``context_tokens`` the tokens each unit reads (left out of
    the loss). ``template`` and ``skip_context`` are the other heads' and unused here."""
    out = []
    counts = counts if counts is not None else LengthCounts(overlong, max_length)
    for trace, tgt in zip(traces, targets, strict=True):
        checks = [(text, bool(ok)) for text, ok in trace.metadata[CHECKS]]
        full = encode_chain(tokenizer, trace.problem.text, step_inputs(trace.steps), checks)
        enc = fit(trace, full, max_length, overlong, counts, "--max-length", "training trace")
        if enc is None:
            continue
        out.append({"input_ids": enc.input_ids, "tag_positions": enc.tag_positions,
                    "targets": tgt[: len(enc.tag_positions)], "prompt_length": enc.prompt_length or 0,
                    "context_tokens": enc.context_tokens})  # fmt: skip
    return out


def critic_loss(
    logits: Any,
    batch: dict[str, Any],
    lm_weight: float = 1.0,
    noise: tuple[float, float] = (0.0, 0.0),
    surprisal: str = "raw",
) -> Any:
    """Mean negative log-likelihood of the tokens the critic writes (each unit's tokens after what it
    reads, up to its verdict). The head table's keywords are taken and not used: the process filter, not
    the loss, answers the teacher's noise, and the LM loss is the whole objective."""
    _, sums, counts = step_min_logp(logits, batch)
    return -sums.sum() / counts.sum().clamp(min=1)
