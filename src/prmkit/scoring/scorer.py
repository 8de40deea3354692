"""One-pass batched step scoring with any convention: the :class:`~prmkit.core.protocols.StepScorer`.

Traces are encoded once, sorted by length and cut into batches under a token budget, so padding stays
small; right padding with an attention mask keeps a causal model's scores independent of the batch.
Every batch runs under ``torch.inference_mode``; only the rows at read positions leave the model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Trace
from prmkit.core.render import step_inputs
from prmkit.modeling.backbone import hard_position_limit, position_limit
from prmkit.modeling.loading import Dtype
from prmkit.modeling.template import Encoded

Overlong = Literal["error", "skip", "truncate"]
"""What to do with a trace longer than the model takes (the one length policy of score, eval and train):
``error`` refuses it with its id, its length, the model's limit and the flag to pass; ``skip`` leaves it
unscored (or out of training); ``truncate`` keeps the steps that fit (scores for those only; in training,
the steps cut off go unlabelled). Skipped and cut traces are counted in :class:`LengthCounts`."""

OVERLONG_HELP = (
    "A trace longer than a checkpoint takes: error (the default: stop and name it), skip (leave it "
    "unscored / out), truncate (keep the steps that fit; the rest stay unscored). Counts are printed."
)


@contextmanager
def overlong_policy(scorer: Any, policy: Overlong) -> Iterator[Any]:
    """``scorer`` with its length policy set to ``policy`` inside the block, restored after.

    For callers that make their own inputs and must not stop on one that grew too long: beam search
    extends candidates step by step and drops those the model can no longer read whole. A scorer with no
    token limit of its own (the world's checker, labels, a server) has no policy and is left as it is."""
    if not hasattr(scorer, "overlong"):
        yield scorer
        return
    before = scorer.overlong
    scorer.overlong = policy
    try:
        yield scorer
    finally:
        scorer.overlong = before


class OverlongError(ValueError):
    """A trace longer than the model takes under ``overlong="error"``; its message names the fix."""


@dataclass
class LengthCounts:
    """What the length policy did: traces skipped, traces cut and the steps those lost (unscored or
    unlabelled), against ``limit`` tokens; ``first`` holds the first few affected trace ids."""

    policy: str = "error"
    limit: int | None = None
    skipped: int = 0
    truncated: int = 0
    steps_cut: int = 0
    first: list[str] = field(default_factory=list)

    def note(self, trace_id: str, kept: int, steps: int) -> None:
        if kept == 0 or self.policy == "skip":
            self.skipped += 1
        else:
            self.truncated += 1
        self.steps_cut += steps - kept if self.policy == "truncate" else steps
        if len(self.first) < 5:
            self.first.append(trace_id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """One plain sentence for a command's output ('' when nothing was over the limit)."""
        if not (self.skipped or self.truncated):
            return ""
        return (
            f"overlong (longer than {self.limit} tokens, --overlong {self.policy}): {self.skipped} trace(s) "
            f"skipped, {self.truncated} truncated, {self.steps_cut} step(s) left without a score or label "
            f"(first: {', '.join(self.first)})"
        )


def overlong_message(trace_id: str, tokens: int, limit: int, whose: str, what: str = "trace") -> str:
    """The refusal of ``overlong="error"``: the trace, its length, the limit and whose it is, the flags."""
    return (
        f"{what} {trace_id}: {tokens} tokens, more than the limit of {limit} ({whose}); pass --overlong "
        "skip to leave such traces out, or --overlong truncate to keep the steps that fit"
    )


def fit(
    trace: Trace,
    enc: Encoded,
    limit: int,
    policy: Overlong,
    counts: LengthCounts,
    whose: str,
    what: str = "trace",
) -> Encoded | None:
    """``enc`` when it fits in ``limit`` tokens; else per ``policy``: raise, None (skip), or the encoding
    cut after the last step whose read position fits (None when not even the first step fits)."""
    if len(enc.input_ids) <= limit:
        return enc
    if policy == "error":
        raise OverlongError(overlong_message(trace.id, len(enc.input_ids), limit, whose, what))
    kept = [p for p in enc.tag_positions if p < limit] if policy == "truncate" else []
    counts.note(trace.id, len(kept), len(trace.steps))
    if not kept:
        return None
    cut = {"input_ids": enc.input_ids[: kept[-1] + 1], "tag_positions": kept,
           "context_tokens": enc.context_tokens[: len(kept)]}  # fmt: skip
    return enc.model_copy(update=cut)  # a family's own fields kept (per-prefix inputs: the kept ones read)


class ModelScorer:
    """A step scorer around a loaded model and a convention instance (see ``load_checkpoint``)."""

    def __init__(
        self,
        model: Any,
        convention: Any,
        name: str,
        batch_tokens: int = 16384,
        max_batch: int = 64,
        device: str | None = None,
        overlong: Overlong = "error",
    ):
        from prmkit.modeling.loading import default_device

        if getattr(model, "hf_device_map", None):  # placed across devices by device_map: inputs go first
            self.device, self.model = str(model.device), model.eval()
        else:
            self.device = default_device(device)
            self.model = model.to(self.device).eval()
        self.convention = convention
        hard = hard_position_limit(model)
        if hard is not None and hard < convention.max_length:
            # a checkpoint that declares more tokens than its position table holds: the length policy
            # applies at the table's size instead of an IndexError inside the forward pass
            convention.max_length = hard
            convention.length_source = f"{position_limit(model.config)[1]}, the size of its position table"  # type: ignore[index]
        self.name = name
        self.batch_tokens, self.max_batch = batch_tokens, max_batch
        self.pad_id = convention.tokenizer.pad_token_id or 0
        self.overlong: Overlong = overlong
        self.length_counts = LengthCounts(policy=overlong, limit=convention.max_length)
        """What the length policy did, summed over every ``score`` call of this scorer."""

    @property
    def threshold(self) -> float | None:
        """The first-error threshold the checkpoint stores (tuned on dev when it was trained), or None."""
        spec = self.convention.spec
        return None if spec is None else spec.threshold

    def encode(self, traces: Sequence[Trace]) -> list[Encoded | None]:
        """Every trace's ids and read positions, fitted to the model's limit by ``self.overlong``
        (None: skipped); see :func:`fit`."""
        out: list[Encoded | None] = []
        items = [(self.convention.problem_text(t.problem), step_inputs(t.steps)) for t in traces]
        for t, enc in zip(traces, self.convention.encode_many(items), strict=True):
            if len(enc.tag_positions) != len(t.steps):
                raise ValueError(
                    f"trace {t.id}: {len(t.steps)} steps but {len(enc.tag_positions)} read positions "
                    "(a step text contains the step tag, or the template lost a step)"
                )
            limit = self.convention.max_length
            whose = f"{getattr(self.convention, 'length_source', 'max_length')} of {self.name}"
            out.append(fit(t, enc, limit, self.overlong, self.length_counts, whose))
        return out

    def batches(self, encoded: Sequence[Encoded | None]) -> list[list[int]]:
        """Indices grouped by length (longest first) under the token budget (padded size); skipped
        (None) traces are in no batch."""
        live = [i for i, e in enumerate(encoded) if e is not None]
        order = sorted(live, key=lambda i: -len(encoded[i].input_ids))  # type: ignore[union-attr]
        groups: list[list[int]] = []
        for i in order:
            longest = len(encoded[groups[-1][0]].input_ids) if groups else 0  # type: ignore[union-attr]
            if (
                groups
                and len(groups[-1]) < self.max_batch
                and longest * (len(groups[-1]) + 1) <= self.batch_tokens
            ):
                groups[-1].append(i)
            else:
                groups.append([i])
        return groups

    def pad(self, rows: Sequence[Encoded]) -> dict[str, Any]:
        import torch

        width = max(len(r.input_ids) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, : len(r.input_ids)] = torch.tensor(r.input_ids)
            mask[k, : len(r.input_ids)] = 1
        return {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}

    def forward(self, batch: dict[str, Any]) -> Any:
        """The model's per-token logits (B, L, C or V), as ``/pooling`` returns them."""
        out = self.model(**batch)
        return out[0] if isinstance(out, tuple) else out.logits

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """One score in [0, 1] per step of every trace (higher = more likely correct).

        Under ``overlong="truncate"`` a cut trace's row holds scores for its first steps only (the ones
        that fit), and under ``skip`` an overlong trace's row is empty; ``length_counts`` counts both."""
        import torch

        encoded = self.encode(traces)
        result: list[list[float]] = [[] for _ in traces]
        with torch.inference_mode():
            for group in self.batches(encoded):
                rows = [encoded[i] for i in group]  # batches() leaves out the skipped
                batch = self.pad(rows)
                outputs = self.convention.forward(self.model, batch, rows)
                for i, scores in zip(group, self.convention.read(outputs, batch, rows), strict=True):
                    result[i] = scores
        return result


def load_checkpoint(
    spec: str | Path,
    convention: str | None = None,
    *,
    dtype: Dtype | None = None,
    device: str | None = None,
    device_map: str | None = None,
    attn_implementation: str | None = None,
    trust_remote_code: bool | None = None,
    reference: str | None = None,
    beta: float | None = None,
    verify_k: int | None = None,
    verify_temperature: float | None = None,
    verify_seed: int | None = None,
    verify_tokens: int | None = None,
    verify_combine: Literal["mean", "vote"] | None = None,
    batch_tokens: int = 16384,
    overlong: Overlong = "error",
) -> ModelScorer:
    """The checkpoint scorer form: a step scorer for ``[CONVENTION:]PATH``, a checkpoint folder or Hub
    id read by the convention the spec names, else ``convention``, else the one the folder declares.
    The loading options are :class:`~prmkit.modeling.loading.LoadOptions`'; ``overlong`` is the length
    policy (see :data:`Overlong`). Reach it through :func:`prmkit.scoring.load_scorer`, which reads every
    scorer form."""
    from prmkit.modeling.loading import LoadOptions
    from prmkit.scoring.conventions import load_convention, split_convention

    named, path = split_convention(str(spec))
    if named is not None and convention is not None and named != convention:
        issue = Issue(str(spec), None, "convention", f"one convention ({named}, as the spec names it)",
                      f"--convention {convention} too", "scorer", "leave out --convention")  # fmt: skip
        raise InputError([issue], skippable=False)
    options = LoadOptions(dtype=dtype, device=device, device_map=device_map, reference=reference, beta=beta,
                          attn_implementation=attn_implementation, trust_remote_code=trust_remote_code,
                          verify_k=verify_k, verify_temperature=verify_temperature, verify_seed=verify_seed,
                          verify_tokens=verify_tokens, verify_combine=verify_combine)  # fmt: skip
    model, conv = load_convention(path, named or convention, options)
    return ModelScorer(
        model, conv, name=str(spec), device=device, batch_tokens=batch_tokens, overlong=overlong
    )


def pick_threshold(given: float | None, scorer: Any = None) -> tuple[float, str]:
    """The first-error threshold to use and where it came from: ``given`` (a flag), else the one the
    checkpoint stores (``checkpoint``: a PRM's dev-tuned value, far from 0.5 for a likelihood head), else
    0.5 (``default``). Every command that cuts step scores into right / wrong uses this one rule."""
    if given is not None:
        return given, "given"
    stored = getattr(scorer, "threshold", None)  # a remote or oracle scorer stores none
    if isinstance(stored, float):
        return stored, "checkpoint"
    return 0.5, "default"
