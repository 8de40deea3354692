"""One-pass batched step scoring with any convention: the :class:`~prmkit.core.protocols.StepScorer`.

Traces are encoded once, sorted by length and cut into batches under a token budget, so padding stays
small; right padding with an attention mask keeps a causal model's scores independent of the batch.
Every batch runs under ``torch.inference_mode``; only the rows at read positions leave the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.model import Trace
from prmkit.modeling.template import Encoded


class ModelScorer:
    """A step scorer around a loaded model and a convention instance (see ``load_scorer``)."""

    def __init__(
        self,
        model: Any,
        convention: Any,
        name: str,
        batch_tokens: int = 16384,
        max_batch: int = 64,
        device: str | None = None,
    ):
        import torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device).eval()
        self.convention = convention
        self.name = name
        self.batch_tokens, self.max_batch = batch_tokens, max_batch
        self.pad_id = convention.tokenizer.pad_token_id or 0

    @property
    def threshold(self) -> float | None:
        """The first-error threshold the checkpoint stores (tuned on dev when it was trained), or None."""
        spec = self.convention.spec
        return None if spec is None else spec.threshold

    def encode(self, traces: Sequence[Trace]) -> list[Encoded]:
        """Every trace's ids and read positions; a trace longer than the model takes is an error."""
        out = []
        for t in traces:
            enc = self.convention.encode(t.problem.text, [s.text for s in t.steps])
            if len(enc.tag_positions) != len(t.steps):
                raise ValueError(
                    f"trace {t.id}: {len(t.steps)} steps but {len(enc.tag_positions)} read positions "
                    "(a step text contains the step tag, or the template lost a step)"
                )
            if len(enc.input_ids) > self.convention.max_length:
                raise ValueError(
                    f"trace {t.id}: {len(enc.input_ids)} tokens, more than max_length "
                    f"{self.convention.max_length}"
                )
            out.append(enc)
        return out

    def batches(self, encoded: Sequence[Encoded]) -> list[list[int]]:
        """Indices grouped by length (longest first) under the token budget (padded size)."""
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i].input_ids))
        groups: list[list[int]] = []
        for i in order:
            longest = len(encoded[groups[-1][0]].input_ids) if groups else 0
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
        """The model's per-token logits (B, L, C or V): the one thing a convention reads."""
        out = self.model(**batch)
        return out[0] if isinstance(out, tuple) else out.logits

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        """One score in [0, 1] per step of every trace (higher = more likely correct)."""
        import torch

        encoded = self.encode(traces)
        result: list[list[float]] = [[] for _ in traces]
        with torch.inference_mode():
            for group in self.batches(encoded):
                rows = [encoded[i] for i in group]
                batch = self.pad(rows)
                for i, scores in zip(
                    group, self.convention.read(self.forward(batch), batch, rows), strict=True
                ):
                    result[i] = scores
        return result


def load_scorer(
    path_or_name: str | Path,
    convention: str | None = None,
    *,
    trust_remote_code: bool = False,
    device: str | None = None,
    batch_tokens: int = 16384,
) -> ModelScorer:
    """A step scorer for a checkpoint folder; ``convention`` defaults to what the folder declares."""
    from prmkit.scoring.conventions import load_convention

    model, conv = load_convention(path_or_name, convention, trust_remote_code)
    return ModelScorer(model, conv, name=str(path_or_name), device=device, batch_tokens=batch_tokens)


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
