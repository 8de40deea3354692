"""The typed core model every layer speaks: Problem, Trace, Step, Label, Provenance.

Formats are adapters around this model; labellers add Labels; models read Steps and write Labels with
provenance ``model``. A step may carry many labels from many sources side by side, because consensus
filtering and audits compare them. A *label source* is named by a selector string: ``"gold"`` (any
label whose method is gold) or ``"human:alice"`` (method and actor). Selectors never contain the actor's
own colons on the method side, so ``"model:http://host:8000"`` works.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

LabelMethod = Literal[
    "human",
    "mc_hard",
    "mc_soft",
    "progress_hard",
    "progress_soft",
    "binary_search",
    "mcts",
    "judge",
    "consensus",
    "gold",
    "model",
    "imported",
]
LABEL_METHODS: tuple[str, ...] = LabelMethod.__args__  # type: ignore[attr-defined]
StepKind = Literal["reasoning", "tool_call", "observation"]
Rating = Literal[-1, 0, 1]

MAX_NESTING = 100
"""How deep free-form metadata may nest: every writer (JSON, Parquet, HTTP) can serialise it, and a
hostile file nested thousands deep is refused where it is read, with its place, not where it is written."""


def _bounded_nesting(value: dict[str, Any]) -> dict[str, Any]:
    _check_nesting(value, 1)
    return value


_CONTAINERS = (dict, list, tuple)
"""What :func:`_check_nesting` descends into, as one tuple: ``dict | list | tuple`` written in the loop
would build a new union for every value of every file read (half the check's time, issue 65)."""


def _check_nesting(item: dict[str, Any] | list[Any] | tuple[Any, ...], depth: int) -> None:
    """Refuse a container at ``depth`` whose items would sit deeper than :data:`MAX_NESTING`; descends
    into containers only (every file read runs this on every metadata dict: scalars cost nothing), and
    stops at the limit, so a hostile file nested thousands deep never reaches Python's recursion limit."""
    values = item.values() if isinstance(item, dict) else item
    if depth >= MAX_NESTING and values:
        raise PydanticCustomError(
            "too_deep", "data nested at most {limit} levels deep", {"limit": MAX_NESTING}
        )
    for v in values:
        if isinstance(v, _CONTAINERS):
            _check_nesting(v, depth + 1)


Metadata = Annotated[dict[str, Any], AfterValidator(_bounded_nesting)]
"""Free-form JSON (metadata, provenance params), nested at most :data:`MAX_NESTING` deep."""


_IMMUTABLE = frozenset({str, int, float, bool, type(None), datetime})


def _deep_copy(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)`` for what models hold: JSON values and models (the rest: deepcopy)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if id(value) in memo:  # a container or model met before: one copy, as copy.deepcopy keeps it
        return memo[id(value)]
    if kind is list:
        memo[id(value)] = new = []
        new.extend(_deep_copy(v, memo) for v in value)
        return new
    if kind is dict:
        memo[id(value)] = new = {}
        new.update((k, _deep_copy(v, memo)) for k, v in value.items())
        return new
    if isinstance(value, _Model):
        return value.__deepcopy__(memo)
    return copy.deepcopy(value, memo)


class _Model(BaseModel):
    """Readers validate files with ``model_validate(record, strict=True)``: ``"score": "0.5"`` or
    ``"answer_correct": "yes"`` is an error with its place, never coerced (see prmkit.core.dataset)."""

    # extra="forbid": a misspelt field in a prmkit file is an error, never silently dropped.
    # ser_json_inf_nan="constants": NaN in metadata is written as NaN (as json.dumps writes and json.loads
    # reads it), not turned into null, so a round trip through prmkit's JSONL is lossless.
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Any:
        """``model_copy(deep=True)``, as pydantic's makes it, without ``copy.deepcopy`` walking every string
        and number of the tree: every labeller copies each trace it labels, and the generic walk was a
        large share of a labelling stage. Immutable values are shared, JSON containers and models copied
        (one copy of a model however often it is referenced, as ``copy.deepcopy`` keeps it)."""
        memo = {} if memo is None else memo
        if self.__pydantic_extra__ is not None or getattr(self, "__pydantic_private__", None) is not None:
            return super().__deepcopy__(memo)  # neither in prmkit's models (extra="forbid", no private)
        kind = type(self)
        new = kind.__new__(kind)
        memo[id(self)] = new
        fields = {name: _deep_copy(value, memo) for name, value in self.__dict__.items()}
        object.__setattr__(new, "__dict__", fields)
        object.__setattr__(new, "__pydantic_extra__", None)
        object.__setattr__(new, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        object.__setattr__(new, "__pydantic_private__", None)
        return new


PER_LABEL_PARAMS: dict[str, frozenset[str]] = {
    "judge": frozenset({"raw"}),
    "human": frozenset({"time_ms", "assignment", "status", "finish_reason", "total_time_ms"}),
}
"""Per method, the provenance params that differ label by label (what one judgement said or cost), not
settings of the source: ``judge``'s raw answer (``labeling/judge.py``), the annotation app's time on the
step and its assignment (``annotate/export.py``). The one list of them: a writer adding such a param adds
it here, and :meth:`Provenance.identity` drops them, so a summary groups labels by the source that made
them, not one entry per label."""


class Provenance(_Model):
    """Where a label came from, so every number can be traced back to the process that made it."""

    method: LabelMethod
    actor: str | None = None
    """Who or what made it: annotator id, policy or judge model, checkpoint path, source file."""
    params: Metadata = Field(default_factory=dict)
    """Settings that shape the label: rollouts, temperature, seed, neutral mapping, threshold..."""
    version: str | None = None
    """Version of the labeller, reader or world generator, so results stay comparable."""
    created_at: datetime | None = None

    @field_validator("created_at", mode="before")
    @classmethod
    def _iso_text(cls, value: Any) -> Any:
        # JSON has no date type: an ISO 8601 string is the one form a file can hold, read even in strict
        # mode (which otherwise wants a datetime object); anything else still fails the strict check.
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                raise PydanticCustomError("datetime_from_text", "an ISO 8601 date-time") from None
        return value

    @classmethod
    def now(cls, method: LabelMethod, actor: str | None = None, **kwargs: Any) -> Provenance:
        """A provenance stamped with the current UTC time."""
        return cls(method=method, actor=actor, created_at=datetime.now(UTC), **kwargs)

    @property
    def source(self) -> str:
        """The selector naming this source: ``method`` or ``method:actor``."""
        return self.method if self.actor is None else f"{self.method}:{self.actor}"

    def identity(self) -> dict[str, Any]:
        """The source that made the label, as JSON: method, actor, version and the params that are its
        settings (``created_at`` and :data:`PER_LABEL_PARAMS` dropped). Labels of one source made the same
        way have equal identities."""
        per_label = PER_LABEL_PARAMS.get(self.method, frozenset())
        data = self.model_dump(mode="json", exclude={"created_at"})
        data["params"] = {k: v for k, v in data["params"].items() if k not in per_label}
        return data


class Label(_Model):
    """One judgement of one step: a rating in {-1, 0, +1} and/or a soft score in [0, 1]."""

    rating: Rating | None = None
    """PRM800K's scale: -1 wrong, 0 neutral (true but no progress), +1 good."""
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    """Soft label: chance the step is right, or that it still leads to a right answer."""
    provenance: Provenance
    metadata: Metadata = Field(default_factory=dict)

    @field_validator("rating", mode="before")
    @classmethod
    def _integer_rating(cls, value: Any) -> Any:
        # A Literal compares by equality, so even strict mode takes false as 0 and 1.0 as 1: a step marked
        # wrong with `false` would silently become neutral. Only integers are ratings.
        if isinstance(value, bool | float):
            raise PydanticCustomError("rating_type", "an integer -1, 0 or 1")
        return value

    @model_validator(mode="after")
    def _has_a_value(self) -> Label:
        if self.rating is None and self.score is None:
            raise ValueError(
                "a label needs a rating (-1, 0, 1) or a score in [0, 1]; an unlabelled step has no Label"
            )
        return self

    def verdict(self, threshold: float = 0.5) -> int:
        """The rating, or for a score-only label +1 when ``score >= threshold`` else -1."""
        if self.rating is not None:
            return self.rating
        assert self.score is not None  # guaranteed by the validator
        return 1 if self.score >= threshold else -1


def matches(provenance: Provenance, source: str) -> bool:
    """Whether a provenance is selected by ``source`` (``"method"`` or ``"method:actor"``)."""
    method, _, actor = source.partition(":")
    if provenance.method != method:
        return False
    return not actor or provenance.actor == actor


class ToolCall(_Model):
    """One function call in an agent's step, as OpenAI-style chat logs hold it.

    ``arguments`` is the JSON text exactly as the agent wrote it, not a parsed object: malformed
    arguments are an agent's error to be judged (and written back byte for byte), not a file error.
    """

    name: str
    arguments: str = "{}"
    id: str | None = None
    """The call id that the tool's result names (``tool_call_id``)."""
    metadata: Metadata = Field(default_factory=dict)

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when they are not one (malformed, or a list)."""
        import json

        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class Observation(_Model):
    """What came back after a step and before the next: a tool's result, or another party's turn.

    Observations belong to the context of the *next* step: a model judges a step on what the agent knew
    when it took it, so a call is scored before its result is seen (see :mod:`prmkit.core.render`).
    """

    content: str
    role: Literal["tool", "user"] = "tool"
    """``tool``: a tool's result; ``user``: a user's turn (a simulated user in tau-bench style tasks)."""
    call_id: str | None = None
    """The id of the :class:`ToolCall` this result answers."""
    name: str | None = None
    """The tool's name, when the log records it."""
    metadata: Metadata = Field(default_factory=dict)


class Step(_Model):
    """One step of a trace: a reasoning step, or one assistant message of an agent trajectory.

    An agent's step may hold text and tool calls; the results that came back before its next step are
    its ``observations``. ``kind`` says which: ``tool_call`` when the step calls tools.
    """

    text: str
    kind: StepKind = "reasoning"
    labels: list[Label] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    metadata: Metadata = Field(default_factory=dict)

    def label(self, source: str) -> Label | None:
        """The first label from ``source``, or None when that source did not label this step."""
        return next((lab for lab in self.labels if matches(lab.provenance, source)), None)


class Problem(_Model):
    """A problem: id, text, the reference answer when known, and where it came from."""

    id: str
    text: str
    answer: str | None = None
    source: str | None = None
    tools: list[Metadata] = Field(default_factory=list)
    """The tools an agent may call, as JSON schemas (OpenAI's ``tools`` list); empty for math problems."""
    metadata: Metadata = Field(default_factory=dict)


class Trace(_Model):
    """One attempt at a problem: ordered steps and a final answer."""

    id: str
    problem: Problem
    steps: list[Step] = Field(default_factory=list)
    final_answer: str | None = None
    answer_correct: bool | None = None
    """Outcome: whether ``final_answer`` matches the problem's reference answer (None when unknown)."""
    generator: str | None = None
    """The policy or model that wrote the trace."""
    metadata: Metadata = Field(default_factory=dict)
    """Free-form; ``metadata["sampling"]`` holds the settings the generator sampled it with (seed, samples
    per problem, the policy's knobs), which the process card summarises per generator."""

    def sources(self) -> list[str]:
        """Every label source present on this trace, in first-seen order."""
        seen: dict[str, None] = {}
        for step in self.steps:
            for lab in step.labels:
                seen.setdefault(lab.provenance.source, None)
        return list(seen)

    def ratings(self, source: str, threshold: float = 0.5) -> list[int | None]:
        """Per-step verdicts from ``source`` (None where that source left a step unlabelled)."""
        out: list[int | None] = []
        for step in self.steps:
            lab = step.label(source)
            out.append(None if lab is None else lab.verdict(threshold))
        return out

    def first_error(self, source: str, threshold: float = 0.5) -> int:
        """Index of the earliest step ``source`` rated -1, or -1 when it rated none so.

        This is the quantity ProcessBench scores and binary search looks for. Unlabelled steps are
        skipped, not taken as correct or wrong.
        """
        for i, verdict in enumerate(self.ratings(source, threshold)):
            if verdict == -1:
                return i
        return -1

    def add_labels(self, labels: list[Label | None]) -> Trace:
        """Append one label per step (None leaves a step unlabelled); returns self for chaining."""
        if len(labels) != len(self.steps):
            raise ValueError(f"trace {self.id}: {len(labels)} labels for {len(self.steps)} steps")
        for step, lab in zip(self.steps, labels, strict=True):
            if lab is not None:
                step.labels.append(lab)
        return self

    def drop_labels(self, source: str) -> Trace:
        """Remove every label from ``source`` (used before relabelling); returns self."""
        for step in self.steps:
            step.labels = [lab for lab in step.labels if not matches(lab.provenance, source)]
        return self


class Continuation(_Model):
    """What a policy adds after a prefix: new steps, and the final answer when it reached one."""

    steps: list[Step] = Field(default_factory=list)
    final_answer: str | None = None
    finished: bool = True
    """False when generation stopped early (a step limit or a length limit), not at an answer."""
    truncated: bool = False
    """True when the backend cut generation at its token limit before an answer (``finish_reason`` is
    ``length``): the rollout says nothing about whether the prefix can still win, so labellers count it
    apart rather than as a failure."""
    num_tokens: int | None = None
    """Tokens generated, when the backend counts them; search methods report compute with it."""
    outcomes: dict[str, bool] = Field(default_factory=dict)
    """Checks the environment ran on the finished trajectory, by name, beside its answer (the code world:
    ``visible_pass``, what CI reports of the visible tests as the workspace holds them), as
    ``Trace.metadata["outcomes"]`` holds them for a sampled trace: what Monte Carlo grades a rollout by
    when told not to use the reference answer (``prmkit label mc --outcome``)."""
