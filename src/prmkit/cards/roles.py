"""The card's roles: every model and person whose judgement shaped a PRM, named and linked.

A process reward model is made by several actors, which a claim about it must keep apart: the base model
it starts from, the policy that wrote the traces it learnt from, an outcome model beside it, the PRM
itself, the automated judge and the humans who labelled steps, the tool scaffold an agent's steps ran in,
and the gate it is deployed behind. :class:`Roles` names each (``None`` or an empty list: none declared).

Training fills what its traces show (:func:`trace_roles`: generators and their ``metadata["sampling"]``,
judges with their accuracy as ``prmkit label report`` measures it, annotators with their agreement as the
annotation app measures it, the tools); ``prmkit card`` completes the models and the gate
(:func:`card_roles`; :class:`DeploymentMonitor` from ``--monitor``, read by :func:`read_monitor`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from prmkit.core.config import Config
from prmkit.core.files import read_json_as
from prmkit.core.model import Trace, matches
from prmkit.core.registry import RegistryError
from prmkit.core.render import CALL_CLOSE, CALL_OPEN, RESPONSE_CLOSE, RESPONSE_OPEN, is_agentic, step_inputs
from prmkit.labeling.agreement import agreement_from, human_ratings
from prmkit.labeling.report import score_source
from prmkit.scoring.aggregate import AGGREGATIONS

NONE_DECLARED = "none declared"
LAYOUT = (
    f"each step's input is the tool results that came back before it ({RESPONSE_OPEN} ... {RESPONSE_CLOSE}), "
    f'then its text, then its calls ({CALL_OPEN}{{"name": ..., "arguments": ...}}{CALL_CLOSE}): the Hermes / '
    "Qwen chat templates' markup (prmkit.core.render)"
)
"""How an agent trace is laid out for the model, in words (what ``prmkit.core.render.step_inputs`` does)."""
EXAMPLE_CHARS = 600


class DeploymentMonitor(Config):
    """The gate a model is deployed behind: the card's monitor role."""

    rule: str
    """The gate's rule in words, e.g. "flag a trace whose min step score is below the threshold"."""
    aggregation: str
    """How step scores become the gate's one number: a name in ``prmkit.scoring.AGGREGATIONS`` (``min``)."""
    threshold: float
    """The aggregated score below which a trace is doubtful."""
    action: Literal["flag", "resample"]
    """What the gate does with a doubtful trace: ``flag`` it for a person, or ``resample`` it."""
    measured_on: str | None = None
    """The labelled set the rates were measured on (a path or a name); None: not measured."""
    traces: int | None = Field(default=None, ge=0)
    """How many traces of ``measured_on`` the rates count."""
    positives: int | None = Field(default=None, ge=0)
    """Traces among them with a gold first error (the ones the gate should flag)."""
    tpr: float | None = Field(default=None, ge=0, le=1)
    """True positive rate: doubtful traces flagged / traces with an error."""
    tnr: float | None = Field(default=None, ge=0, le=1)
    """True negative rate: error-free traces accepted / error-free traces."""
    g_mean2: float | None = Field(default=None, ge=0, le=1)
    """``tpr * tnr``: high only when the gate both catches errors and lets good work through."""

    @field_validator("aggregation")
    @classmethod
    def _known_aggregation(cls, name: str) -> str:
        try:
            AGGREGATIONS.get(name)
        except RegistryError as err:
            raise ValueError(str(err)) from None
        return name


def read_monitor(path: str | Path) -> DeploymentMonitor:
    """The :class:`DeploymentMonitor` in the JSON file ``path``; a bad file raises one line naming the file
    and the field (every bad field, joined with ``;``)."""
    return read_json_as(path, DeploymentMonitor)


class ModelRole(Config):
    """A model the card names (base model, ORM, PRM) and where to find it."""

    name: str
    link: str | None = None
    """Its checkpoint: a folder, or the Hub page of a Hub id; None: none known."""
    card: str | None = None
    """Its own process card or model card, when one is beside the checkpoint."""


class PolicyRole(Config):
    """One generator of the training traces (``Trace.generator``) and how it sampled them."""

    name: str
    """``Trace.generator`` (``unknown`` for traces that do not say)."""
    traces: int
    sampling: list[dict[str, Any]] = Field(default_factory=list)
    """The distinct ``metadata["sampling"]`` of its traces (seed, samples per problem, the policy's knobs);
    empty: the traces do not record how they were sampled."""


class Accuracy(Config):
    """A label source against a reference source, as ``prmkit label report`` measures it
    (:func:`prmkit.labeling.report.score_source`), on the training traces both labelled."""

    reference: str
    traces: int
    first_error_accuracy: float | None = None
    processbench_f1: float | None = None
    """Harmonic mean of first-error accuracy on traces with and without a reference error."""
    step_error_f1: float | None = None


class JudgeRole(Config):
    """An automated judge whose labels the model learnt from."""

    source: str
    """Its label source (``judge:endpoint:MODEL``)."""
    version: str | None = None
    labels: int
    traces: int
    accuracy: Accuracy | None = None
    """Against gold, else human labels on the same traces; None: neither is there to measure it."""


class Annotator(Config):
    """One person's labels among the training traces."""

    name: str
    labels: int
    traces: int
    gold_accuracy: Accuracy | None = None
    """Against gold on the same traces; None: no gold labels there."""


class HumanRole(Config):
    """The human labels the model learnt from: who, how much, how far they agree and with gold."""

    annotators: list[Annotator]
    made_with: list[str] = Field(default_factory=list)
    """Provenance versions of the labels (``prmkit.annotate/1``: the annotation app)."""
    agreement: dict[str, Any] | None = None
    """The app's agreement numbers (:class:`prmkit.labeling.agreement.Agreement`) over steps two or more
    annotators rated; None: no step was."""
    unmeasured: list[str] = Field(default_factory=list)
    """What the labels do not let the card measure, and why."""


class ToolScaffold(Config):
    """The tools an agent's steps ran in and how a trace is laid out for the model."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The problems' tool schemas (``Problem.tools``), one per name."""
    calls: dict[str, int] = Field(default_factory=dict)
    """Calls per tool name in the traces' steps."""
    layout: str = LAYOUT
    example: str | None = None
    """The input of one tool-calling step as the model reads it (cut to a few hundred characters)."""


class Roles(Config):
    """Every role of the card; ``None`` or an empty list: none declared."""

    traces: int | None = None
    """Training traces the trace-derived roles summarise; None: training did not summarise them (a card
    written before roles), so policy, judge, human labels and tools are unknown, not absent."""
    base_model: ModelRole | None = None
    policy: list[PolicyRole] = Field(default_factory=list)
    orm: ModelRole | None = None
    prm: ModelRole | None = None
    judge: list[JudgeRole] = Field(default_factory=list)
    human: HumanRole | None = None
    tool_scaffold: ToolScaffold | None = None
    monitor: DeploymentMonitor | None = None


def trace_roles(traces: Sequence[Trace], sources: Sequence[str]) -> Roles:
    """The roles the training traces show: who wrote them, which judges and people labelled what the model
    learnt from (``sources``), and the tools. Models and the gate are :func:`card_roles`'."""
    return Roles(
        traces=len(traces),
        policy=policy_roles(traces),
        judge=judge_roles(traces, sources),
        human=human_role(traces, sources),
        tool_scaffold=tool_scaffold(traces),
    )


def policy_roles(traces: Sequence[Trace]) -> list[PolicyRole]:
    """One entry per generator, with its trace count and distinct sampling settings."""
    count: Counter[str] = Counter()
    settings: dict[str, dict[str, dict[str, Any]]] = {}
    for t in traces:
        name = t.generator or "unknown"
        count[name] += 1
        sampling = t.metadata.get("sampling")
        if isinstance(sampling, dict):
            settings.setdefault(name, {}).setdefault(json.dumps(sampling, sort_keys=True), sampling)
    return [
        PolicyRole(name=n, traces=c, sampling=list(settings.get(n, {}).values())) for n, c in count.items()
    ]


def _selectors(traces: Sequence[Trace], sources: Sequence[str]) -> list[str]:
    """``sources`` plus those each consensus among them combined (its actor names them: ``MC+JUDGE``)."""
    out = list(sources)
    for t in traces:
        for step in t.steps:
            for lab in step.labels:
                p = lab.provenance
                if p.method == "consensus" and p.actor and any(matches(p, s) for s in sources):
                    out.extend(part for part in p.actor.split("+") if part not in out)
    return out


def _labelled_by(traces: Sequence[Trace], method: str, sources: Sequence[str]) -> dict[str, list[Any]]:
    """Per ``method:actor`` source whose labels reached the model: [labels, traces, versions]."""
    selectors = _selectors(traces, sources)
    out: dict[str, list[Any]] = {}
    for t in traces:
        seen: set[str] = set()
        for step in t.steps:
            for lab in step.labels:
                p = lab.provenance
                if p.method != method or not any(matches(p, s) for s in selectors):
                    continue
                row = out.setdefault(p.source, [0, 0, {}])
                row[0] += 1
                row[1] += p.source not in seen
                row[2].setdefault(p.version, None)
                seen.add(p.source)
    return out


def accuracy(traces: Sequence[Trace], source: str, reference: str) -> Accuracy | None:
    """``source`` against ``reference`` by the label report's metrics; None when no trace has both."""
    m = score_source(traces, source, reference)
    if not m["first_error"]["traces"]:
        return None
    return Accuracy(
        reference=reference,
        traces=m["first_error"]["traces"],
        first_error_accuracy=m["first_error"]["accuracy"],
        processbench_f1=m["first_error"]["processbench_f1"],
        step_error_f1=m["step_error"]["f1"],
    )


def judge_roles(traces: Sequence[Trace], sources: Sequence[str]) -> list[JudgeRole]:
    """Every judge whose labels reached the model, with its accuracy against gold (else human labels)."""
    out = []
    for source, (labels, n, versions) in _labelled_by(traces, "judge", sources).items():
        acc = accuracy(traces, source, "gold") or accuracy(traces, source, "human")
        version = ", ".join(v for v in versions if v) or None
        out.append(JudgeRole(source=source, version=version, labels=labels, traces=n, accuracy=acc))
    return out


def human_role(traces: Sequence[Trace], sources: Sequence[str]) -> HumanRole | None:
    """The human labels that reached the model: annotators, agreement as the annotation app measures it,
    and accuracy against gold (None: no human labels did)."""
    found = _labelled_by(traces, "human", sources)
    if not found:
        return None
    annotators = [
        Annotator(name=s.partition(":")[2], labels=n, traces=k, gold_accuracy=accuracy(traces, s, "gold"))
        for s, (n, k, _) in found.items()
    ]
    names = {a.name for a in annotators}
    rated = {
        item: {u: r for u, r in per.items() if u in names} for item, per in human_ratings(traces).items()
    }
    agreed = agreement_from(rated)
    unmeasured = []
    if not agreed.steps_double_labelled:
        unmeasured.append("agreement: no step was rated by two annotators")
    elif not agreed.first_error_pairs:
        unmeasured.append("first-error agreement: no two annotators finished a trace in the annotation app")
    if all(a.gold_accuracy is None for a in annotators):
        unmeasured.append("gold accuracy: no gold labels on the traces the annotators rated")
    return HumanRole(
        annotators=annotators,
        made_with=sorted({v for _, _, versions in found.values() for v in versions if v}),
        agreement=agreed.to_dict() if agreed.steps_double_labelled else None,
        unmeasured=unmeasured,
    )


def tool_scaffold(traces: Sequence[Trace]) -> ToolScaffold | None:
    """The tools of agent traces (schemas, calls) and one rendered step; None for plain reasoning traces."""
    tools: dict[str, dict[str, Any]] = {}
    calls: Counter[str] = Counter()
    example = None
    for t in traces:
        for schema in t.problem.tools:
            tools.setdefault(tool_name(schema), schema)
        calls.update(c.name for s in t.steps for c in s.tool_calls)
        if example is None and is_agentic(t.steps):
            i = next(i for i, s in enumerate(t.steps) if s.tool_calls or s.observations)
            example = step_inputs(t.steps[: i + 2])[-1][:EXAMPLE_CHARS]
    if not tools and not calls:
        return None
    return ToolScaffold(tools=list(tools.values()), calls=dict(calls), example=example)


def tool_name(schema: dict[str, Any]) -> str:
    """A tool schema's name (OpenAI's ``{"function": {"name": ...}}`` or a bare ``{"name": ...}``)."""
    inner = schema.get("function") if isinstance(schema.get("function"), dict) else schema
    return str(inner.get("name", json.dumps(schema, sort_keys=True)))


def model_role(name: str | Path | None) -> ModelRole | None:
    """A model named by a folder or a Hub id, with its link and card when they are found."""
    if name is None:
        return None
    path = Path(name)
    if path.exists():
        card = next((path / f for f in ("process_card.json", "README.md") if (path / f).is_file()), None)
        return ModelRole(
            name=path.name or str(path), link=str(path), card=None if card is None else str(card)
        )
    text = str(name)
    hub = text.count("/") == 1 and not text.startswith((".", "/"))
    link = f"https://huggingface.co/{text}" if hub else None
    return ModelRole(name=text, link=link, card=link)


def card_roles(
    recorded: Roles | None,
    *,
    kind: str,
    base_model: str | None,
    model: str | Path | None = None,
    orm: str | Path | None = None,
    monitor: DeploymentMonitor | None = None,
) -> Roles:
    """The full roles: what training ``recorded`` (None: it recorded none), the base model, this model (a
    PRM, or an ORM by ``kind``), the ``orm`` baseline given to ``prmkit card`` and the ``monitor``."""
    roles = (recorded or Roles()).model_copy(deep=True)
    this = model_role(model) if model is not None else None
    this = this or ModelRole(name="this model")
    this.card = "this card"
    roles.base_model = model_role(base_model) or ModelRole(name="none: trained from scratch")
    if kind == "orm":
        roles.orm = this
    else:
        roles.prm, roles.orm = this, model_role(orm)
    roles.monitor = monitor or roles.monitor
    return roles
