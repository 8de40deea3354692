"""The process card: what a checkpoint learned from, in one JSON file a person or a script can read."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prmkit.cards.roles import Roles
from prmkit.core.files import atomic_write
from prmkit.core.model import Provenance, Trace, matches
from prmkit.evaluation.overlap import CARD_FILE, TRAINING_PARTS, overlaps

CARD_VERSION = "card-1"


class LabelSourceSummary(BaseModel):
    """One label source: how many steps it labelled, with which values, made how."""

    model_config = ConfigDict(extra="forbid")

    source: str
    steps: int = 0
    ratings: dict[str, int] = Field(default_factory=dict)
    """Count per rating (-1, 0, 1) as strings, JSON keys being strings."""
    soft: int = 0
    """Labels that carry a soft score."""
    provenance: list[dict[str, Any]] = Field(default_factory=list)
    """The distinct (method, actor, version, params) seen, so the labeller can be rerun: one entry per
    source identity (:meth:`~prmkit.core.model.Provenance.identity`, per-label params dropped), with
    ``labels``, how many labels it made on these steps (a step two annotators rated counts for each), and
    ``per_label``, the params dropped (when any were)."""


def is_gold(source: str) -> bool:
    """Whether a label source is gold (the world's checker, or any ``gold:...`` source a user declares)."""
    return source.partition(":")[0] == "gold"


class GoldUse(BaseModel):
    """One way gold labels reached a model. Gold is for evaluation: a model that uses it elsewhere says
    so here, with how much, so no reader mistakes a result for one a user without gold could reproduce."""

    model_config = ConfigDict(extra="forbid")

    use: Literal["corpus_filter", "training_labels", "dev_selection", "rl_reward", "chain_filter"]
    """``corpus_filter``: the LM was pretrained only on traces gold passed; ``training_labels``: the
    model learned from gold step labels; ``dev_selection``: the best checkpoint and the score threshold
    were chosen by first-error F1 against gold on dev traces (like a small hand-labelled dev set);
    ``rl_reward``: a policy was trained against a reward the gold checker paid; ``chain_filter``: a
    critic head's teacher chains were kept only where they agreed with gold on these traces (its
    labelled filter set)."""
    source: str
    """The label source read (``gold``, ``gold:world:prefix``...)."""
    traces: int
    """Traces whose gold labels were read for this use."""
    labels: int
    """Gold step labels on those traces."""
    via: str | None = None
    """``backbone`` when the use was the base model's (its pretraining), inherited by this model."""

    def line(self) -> str:
        """One plain sentence for cards and reports."""
        what = {
            "corpus_filter": "pretraining corpus filtered on",
            "training_labels": "trained on",
            "dev_selection": "checkpoint and threshold chosen on",
            "rl_reward": "RL reward paid by",
            "chain_filter": "teacher chains filtered on",
        }[self.use]
        via = " (its backbone's pretraining)" if self.via == "backbone" else ""
        return f"{what} {self.source} labels: {self.labels:,} step labels on {self.traces:,} traces{via}"


def gold_use(use: str, source: str, traces: Sequence[Trace], via: str | None = None) -> list[GoldUse]:
    """The record of ``traces``' ``source`` labels read for ``use``; empty when the source is not gold."""
    if not is_gold(source):
        return []
    labels = sum(1 for t in traces for s in t.steps if s.label(source) is not None)
    return [GoldUse(use=use, source=source, traces=len(traces), labels=labels, via=via)]  # type: ignore[arg-type]


def inherited_gold_use(base_model: str | Path | None) -> list[GoldUse]:
    """The gold uses a base model declares (``training.json`` of ``prmkit pretrain``, or its process
    card), marked ``via="backbone"``: a model built on a gold-filtered LM has used gold too."""
    if base_model is None:
        return []
    base = Path(base_model)
    for name, key in (("training.json", "gold_use"), (CARD_FILE, "gold_use")):
        path = base / name
        if path.is_file():
            found = json.loads(path.read_text()).get(key) or []
            return [GoldUse.model_validate({**g, "via": "backbone"}) for g in found]
    return []


class ProcessCard(BaseModel):
    """Beside every checkpoint: the model's reading conventions, its labels, its data, its dev results."""

    model_config = ConfigDict(extra="allow")  # other areas add sections (evaluation, audits)

    card_version: str = CARD_VERSION
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    kind: str
    base_model: str | None = None
    model: dict[str, Any] = Field(default_factory=dict)
    """Separator, tag and tag id, label scale and classes, input template, aggregation."""
    labels: list[LabelSourceSummary] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    """Input file, counts, and the train/dev split by problem (seed, sizes)."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    training: dict[str, Any] = Field(default_factory=dict)
    """What the run did: its config, optimiser steps taken and planned, what stopped it, threads, clocks."""
    gold_use: list[GoldUse] = Field(default_factory=list)
    """Every way gold labels reached this model (empty: none did). Written by training from what it read."""
    roles: Roles | None = None
    """Who made what (:class:`~prmkit.cards.roles.Roles`): training records what its traces show (their
    generators, judges, annotators, tools), ``prmkit card`` adds the models and the deployment gate. None:
    a card written before roles."""

    def warnings(self) -> list[str]:
        """What a reader must know before trusting this model's numbers (see :func:`training_warnings`),
        and the benchmarks its training data overlaps (:mod:`prmkit.evaluation.overlap`)."""
        card = self.model_dump(mode="json", include=set(TRAINING_PARTS))
        return training_warnings(self.training, self.metrics) + [o.line() for o in overlaps(card)]


def training_warnings(training: dict[str, Any], metrics: dict[str, Any] | None = None) -> list[str]:
    """Plain-language warnings about a training run: it stopped before the steps it planned (a time cap
    cut it, so the model is not the one its config describes, and a slower machine would get another),
    or it ended no better on dev than it started (its labels taught nothing dev can measure), or traces
    longer than its limit were left out or cut (``training["overlong"]``). Read by the card and the run
    report, so both say the same."""
    out = []
    if training.get("stopped_early"):
        out.append(
            f"training stopped early: {training.get('steps')} of {training.get('planned_steps')} planned "
            "optimiser steps (its max_minutes time cap ran out), so this is not the model its config describes "
            "and another machine would get another one"
        )
    dev, start = (metrics or {}).get("dev") or {}, (metrics or {}).get("dev_at_start") or {}
    best, first = dev.get("eval_first_error_f1"), start.get("eval_first_error_f1")
    if best is not None and first is not None and best <= first:
        out.append(
            f"training ended no better on dev than it started (first-error F1 {first:.3f} at step 0, "
            f"{best:.3f} at the best checkpoint): its labels taught nothing dev can measure"
        )
    for split, counts in (training.get("overlong") or {}).items():
        if counts.get("skipped") or counts.get("truncated"):
            out.append(
                f"{split} traces longer than its {counts['limit']} tokens (--overlong {counts['policy']}): "
                f"{counts['skipped']} left out, {counts['truncated']} cut short ({counts['steps_cut']} steps "
                f"unread), so it learnt from (or was tuned on) fewer traces than it was given"
            )
    return out


def summarize_sources(traces: Sequence[Trace], sources: Sequence[str]) -> list[LabelSourceSummary]:
    """Count each selected source's labels and group their provenances by source identity: a judge's raw
    answers or an annotator's per-rating times (:data:`~prmkit.core.model.PER_LABEL_PARAMS`) do not make
    one entry per label."""
    out = []
    for source in sources:
        ratings: Counter[str] = Counter()
        steps = soft = 0
        seen: dict[str, dict[str, Any]] = {}
        for trace in traces:
            for step in trace.steps:
                lab = step.label(source)
                if lab is None:
                    continue
                steps += 1
                if lab.rating is not None:
                    ratings[str(lab.rating)] += 1
                soft += lab.score is not None
                for each in step.labels:  # every label of the source: two annotators of a step both count
                    if matches(each.provenance, source):
                        _count(seen, each.provenance)
        out.append(
            LabelSourceSummary(
                source=source, steps=steps, ratings=dict(ratings), soft=soft, provenance=list(seen.values())
            )
        )
    return out


def _count(seen: dict[str, dict[str, Any]], provenance: Provenance) -> None:
    """Count one label under its source identity in ``seen``, noting the per-label params it dropped."""
    prov = provenance.identity()
    entry = seen.setdefault(json.dumps(prov, sort_keys=True), {**prov, "labels": 0})
    entry["labels"] += 1
    dropped = set(provenance.params) - set(prov["params"])
    if dropped:
        entry["per_label"] = sorted({*entry.get("per_label", ()), *dropped})


def write_process_card(directory: str | Path, card: ProcessCard) -> Path:
    """Write ``process_card.json`` into ``directory`` atomically; returns its path."""
    path = Path(directory) / CARD_FILE
    with atomic_write(path) as fh:
        fh.write(card.model_dump_json(indent=2) + "\n")
    return path


def read_process_card(directory: str | Path) -> ProcessCard:
    return ProcessCard.model_validate_json((Path(directory) / CARD_FILE).read_text(encoding="utf-8"))
