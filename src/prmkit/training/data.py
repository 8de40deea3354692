"""Training examples from traces: split by problem, per-step targets, padding-aware batches.

A PRM example is ``input_ids`` plus one target per step tag: a class index (hard) or a probability of
"correct" (soft); ``-100`` marks a tag with no target. The collator turns these into a ``(B, L)``
``step_targets`` tensor aligned with the tokens, so the loss reads the logits exactly where scoring does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.modeling.template import Encoded, StepTemplate, encode_trace
from prmkit.scoring.scorer import LengthCounts, Overlong, fit

IGNORE = -100.0


def split_by_problem(
    traces: Sequence[Trace], dev_fraction: float, seed: int
) -> tuple[list[Trace], list[Trace]]:
    """(train, dev): every trace of a problem lands on the same side, so dev measures unseen problems."""
    problems = sorted({t.problem.id for t in traces})
    random.Random(seed).shuffle(problems)
    n_dev = max(1, round(len(problems) * dev_fraction)) if len(problems) > 1 else 0
    dev_ids = set(problems[:n_dev])
    return [t for t in traces if t.problem.id not in dev_ids], [t for t in traces if t.problem.id in dev_ids]


def step_targets(
    trace: Trace,
    source: str,
    scale: str,
    num_classes: int,
    neutral_as: str,
    after_first_error: str,
    last_step_only: bool,
) -> list[float]:
    """One target per step (``IGNORE`` where unlabelled or masked), from the labels of ``source``."""
    out: list[float] = []
    first = trace.first_error(source)
    for i, step in enumerate(trace.steps):
        lab = step.label(source)
        if lab is None or (after_first_error == "mask" and first != -1 and i > first):
            out.append(IGNORE)
        elif scale == "soft":
            out.append(lab.score if lab.score is not None else float(lab.verdict() >= 0))
        elif num_classes == 3:
            out.append(float(lab.verdict() + 1))  # -1, 0, +1 -> classes 0, 1, 2
        else:
            v = lab.verdict()
            out.append(1.0 if v == 1 or (v == 0 and neutral_as == "positive") else 0.0)
    if last_step_only:
        out = [IGNORE] * (len(out) - 1) + out[-1:]
    return out


def outcome_of(trace: Trace, outcome: str = "answer") -> bool | None:
    """A trace's outcome: ``answer`` is ``answer_correct``; another name a boolean the environment
    reported in ``metadata["outcomes"]`` (None where the trace has none)."""
    if outcome == "answer":
        return trace.answer_correct
    value = (trace.metadata.get("outcomes") or {}).get(outcome)
    return value if isinstance(value, bool) else None


def outcome_targets(trace: Trace, outcome: str = "answer") -> list[float]:
    """ORM: the trace's ``outcome`` (:func:`outcome_of`) at the last step only."""
    value = outcome_of(trace, outcome)
    if not trace.steps or value is None:
        return [IGNORE] * len(trace.steps)
    return [IGNORE] * (len(trace.steps) - 1) + [float(value)]


def make_examples(
    traces: Sequence[Trace],
    targets: Sequence[list[float]],
    tokenizer: Any,
    template: StepTemplate,
    max_length: int,
    overlong: Overlong = "error",
    counts: LengthCounts | None = None,
    skip_context: bool = False,
) -> list[dict[str, Any]]:
    """Encode traces; drop those with no usable target (nothing to learn from). A trace longer than
    ``max_length`` follows ``overlong`` (see :func:`prmkit.scoring.scorer.fit`): refused, left out, or cut
    after the last step that fits (the rest unlabelled); ``counts`` records what was left out or cut.
    ``skip_context`` keeps each step's count of tool-result tokens (``context_tokens``), which the
    likelihood objective leaves out of its read-out (``PrmSpec.min_over``)."""
    out = []
    counts = counts if counts is not None else LengthCounts(overlong, max_length)
    sep = template.separator_ids(tokenizer)
    for trace, tgt in zip(traces, targets, strict=True):
        steps = step_inputs(trace.steps)
        full = encode_trace(tokenizer, template, trace.problem.text, steps, separator=sep)
        enc = fit(trace, full, max_length, overlong, counts, "--max-length", "training trace")
        if enc is None:
            continue
        kept = tgt[: len(enc.tag_positions)]
        if all(t == IGNORE for t in kept):
            continue
        row = {"input_ids": enc.input_ids, "tag_positions": enc.tag_positions, "targets": kept,
               "prompt_length": enc.prompt_length or 0}  # fmt: skip
        if skip_context and enc.context_tokens:
            row["context_tokens"] = enc.context_tokens[: len(kept)]
        out.append(row)
    return out


def fit_traces(
    traces: Sequence[Trace],
    encode: Callable[[str, list[str]], Encoded],
    max_length: int,
    overlong: Overlong,
    counts: LengthCounts,
    what: str = "dev trace",
) -> list[Trace]:
    """Traces that fit in ``max_length`` tokens as ``encode`` (a convention's) lays them out, under the
    same policy as :func:`make_examples`: a cut trace becomes its first steps (a prefix has its own first
    error), a skipped one is left out. Dev evaluation scores these, so it never meets a trace too long."""
    out = []
    for t in traces:
        enc = fit(t, encode(t.problem.text, step_inputs(t.steps)), max_length, overlong, counts,
                  "--max-length", what)  # fmt: skip
        if enc is None:
            continue
        kept = len(enc.tag_positions)
        out.append(t if kept == len(t.steps) else t.model_copy(update={"steps": t.steps[:kept]}))
    return out


class ReplayableLengthSampler:
    """Training order for a ``Trainer``: transformers' length-grouped shuffle (batches of similar lengths,
    the longest first, so padding stays small), drawn as its ``LengthGroupedSampler`` draws it (from the
    global torch RNG as each pass starts, so a run's order is what it always was), keeping the RNG state
    each pass drew from (:attr:`drawn_from`), which is saved with every checkpoint.

    A run resumed mid-pass used to draw that pass anew from its fresh process's RNG (the trainer
    restores the saved RNG state only after the pass has started) and so trained on other batches than
    the run it continued (0.128 apart after 400 steps). Given the state the interrupted pass drew from
    (:attr:`replay`), the first pass of a resumed run draws exactly that pass again.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, replay: Any = None):
        self.lengths, self.batch_size = list(lengths), batch_size
        self.replay = replay
        """The RNG state (a uint8 tensor) the resumed pass drew its order from; used once."""
        self.drawn_from: Any = None

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Any:
        import torch
        from transformers.trainer_pt_utils import get_length_grouped_indices

        if self.replay is not None:
            state, self.replay = self.replay, None
            generator = torch.Generator()
            generator.set_state(state)
        else:
            state, generator = torch.get_rng_state(), None  # None: the global RNG, as transformers draws
        self.drawn_from = state
        return iter(get_length_grouped_indices(self.lengths, self.batch_size, generator=generator))


class StepCollator:
    """Right-pads a batch; places each step target at its tag position in ``step_targets``;
    ``tag_mask`` marks the tags, ``prompt_length`` where the steps begin, ``solution_mask`` the tokens
    after the prompt and ``context_mask`` the tool-result tokens a step reads (for the likelihood head)."""

    def __init__(self, pad_id: int):
        self.pad_id = pad_id

    def __call__(self, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        import torch

        width = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        targets = torch.full((len(rows), width), IGNORE, dtype=torch.float)
        solution = torch.zeros((len(rows), width), dtype=torch.bool)
        tags = torch.zeros((len(rows), width), dtype=torch.bool)
        prompt = torch.zeros(len(rows), dtype=torch.long)
        context = torch.zeros((len(rows), width), dtype=torch.bool)
        for k, r in enumerate(rows):
            n = len(r["input_ids"])
            ids[k, :n] = torch.tensor(r["input_ids"])
            mask[k, :n] = 1
            kept = r["tag_positions"][: len(r["targets"])]
            targets[k, kept] = torch.tensor(r["targets"], dtype=torch.float)
            tags[k, kept] = True
            prompt[k] = r.get("prompt_length", n)
            solution[k, max(1, int(prompt[k])) : n] = True
            starts = [int(prompt[k]), *(p + 1 for p in kept)]
            for start, count in zip(starts, r.get("context_tokens", ()), strict=False):
                context[k, start : start + count] = True
        return {"input_ids": ids, "attention_mask": mask, "step_targets": targets, "solution_mask": solution,
                "tag_mask": tags, "prompt_length": prompt, "context_mask": context}  # fmt: skip


def lm_text(trace: Trace) -> str:
    """The causal-LM text of a trace: ``problem\\n`` then one step input per line."""
    return trace.problem.text + "\n" + "".join(s + "\n" for s in step_inputs(trace.steps))


def lm_examples(
    traces: Sequence[Trace], tokenizer: Any, max_length: int, loss_on_problem: bool = True
) -> list[dict[str, Any]]:
    """Causal-LM text of each trace in the policy layout: ``problem\\n`` + one step per line + EOS.

    A step is its input text (:func:`~prmkit.core.render.step_inputs`): an agent's tool calls and the
    results it read are part of what the LM learns from, as they are of what its PRM scores, so the LM
    can learn to copy a looked-up value (math steps are their text, unchanged). ``prompt_len`` is the
    number of tokens of ``problem\\n``; without ``loss_on_problem`` the collator masks them out of the
    loss, so the gradient goes to the solution (copying and arithmetic).
    """
    out = []
    for t in traces:
        prompt = tokenizer(t.problem.text + "\n").input_ids
        ids = [*tokenizer(lm_text(t)).input_ids, tokenizer.eos_token_id][:max_length]
        out.append({"input_ids": ids, "prompt_len": 0 if loss_on_problem else min(len(prompt), len(ids))})
    return out
