from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.core import Label, Problem, Provenance, Registry, Step, Trace, UnknownNameError
from prmkit.core.model import MAX_NESTING

P = Problem(id="p1", text="2 + 3?", answer="5")


def lab(
    method: str, rating: int | None = None, score: float | None = None, actor: str | None = None
) -> Label:
    return Label(rating=rating, score=score, provenance=Provenance(method=method, actor=actor))


def make_trace() -> Trace:
    steps = [
        Step(text="a", labels=[lab("gold", 1), lab("human", 0, actor="ann")]),
        Step(text="b", labels=[lab("gold", -1), lab("mc_soft", score=0.2)]),
        Step(text="c", labels=[lab("gold", 1), lab("mc_soft", score=0.9), lab("human", -1, actor="ann")]),
    ]
    return Trace(id="t1", problem=P, steps=steps, final_answer="5")


def test_first_error_per_source_side_by_side():
    t = make_trace()
    assert t.first_error("gold") == 1
    assert t.first_error("human:ann") == 2
    assert t.first_error("human:bob") == -1  # that source labelled nothing
    assert t.first_error("mc_soft") == 1  # score 0.2 < 0.5
    assert t.first_error("mc_soft", threshold=0.1) == -1
    assert t.ratings("mc_soft") == [None, -1, 1]
    assert t.sources() == ["gold", "human:ann", "mc_soft"]


def test_actor_with_colons_is_selectable():
    t = make_trace()
    t.steps[0].labels.append(lab("model", score=0.1, actor="http://localhost:8000"))
    assert t.first_error("model:http://localhost:8000") == 0


def test_label_needs_a_value_and_ranges_are_checked():
    with pytest.raises(ValidationError, match="needs a rating"):
        lab("gold")
    with pytest.raises(ValidationError):
        lab("gold", rating=2)
    with pytest.raises(ValidationError):
        lab("mc_soft", score=1.5)
    with pytest.raises(ValidationError):
        Provenance(method="guess")


def test_add_and_drop_labels():
    t = make_trace().drop_labels("gold")
    assert t.first_error("gold") == -1
    t.add_labels([lab("gold", 1), None, lab("gold", -1)])
    assert t.ratings("gold") == [1, None, -1]
    with pytest.raises(ValueError, match="2 labels for 3 steps"):
        t.add_labels([None, None])


def test_registry_suggests_close_names():
    reg: Registry[object] = Registry("format")
    reg.register("math_shepherd", "json:dumps")
    assert reg.get("math_shepherd") is __import__("json").dumps
    with pytest.raises(UnknownNameError, match="Did you mean 'math_shepherd'"):
        reg.get("math_shepard")


@pytest.mark.parametrize(
    ("label", "field"),
    [
        ({"rating": False}, "steps.0.labels.0.rating"),
        ({"rating": 1.0}, "steps.0.labels.0.rating"),
        ({"score": "0.5"}, "steps.0.labels.0.score"),
    ],
)
def test_strict_validation_rejects_coercible_values(label, field):
    rec = {
        "id": "t",
        "problem": {"id": "p", "text": "x"},
        "steps": [{"text": "s", "labels": [{**label, "provenance": {"method": "human"}}]}],
    }
    with pytest.raises(ValidationError) as err:
        Trace.model_validate(rec, strict=True)
    assert [".".join(map(str, e["loc"])) for e in err.value.errors()] == [field]


def test_strict_validation_still_reads_iso_timestamps_and_rejects_garbage_ones():
    prov = Provenance.model_validate({"method": "human", "created_at": "2024-01-01T00:00:00Z"}, strict=True)
    assert prov.created_at is not None and prov.created_at.year == 2024
    with pytest.raises(ValidationError, match="an ISO 8601 date-time"):
        Provenance.model_validate({"method": "human", "created_at": "yesterday"}, strict=True)


def test_nan_in_metadata_is_written_as_nan_not_null():
    trace = Trace(id="t", problem=Problem(id="p", text="x"), metadata={"x": float("nan")})
    assert '"metadata":{"x":NaN}' in trace.model_dump_json()


def test_metadata_nested_past_the_limit_is_refused():
    deep: list = []
    for _ in range(MAX_NESTING):
        deep = [deep]
    with pytest.raises(ValidationError, match="nested at most"):
        Problem(id="p", text="x", metadata={"a": deep})


def test_a_deep_copy_equals_pydantics_and_shares_no_container():
    """``model_copy(deep=True)`` is prmkit's own (``_Model.__deepcopy__``, issue 65's labelling stages):
    equal to pydantic's generic copy, the same fields set, and no list, dict or model shared with the
    original, so a labeller that edits its copy never edits the trace it read."""
    import copy

    from pydantic import BaseModel

    shared = {"k": [1, {"deep": [2.5, None]}]}
    trace = make_trace().model_copy(
        update={
            "metadata": {"list": [shared, "x"]},
            "problem": Problem(id="p", text="x", metadata={"a": shared}),
        }
    )
    trace.steps[0].metadata = {"same": shared, "again": shared}
    ours = trace.model_copy(deep=True)
    theirs = BaseModel.__deepcopy__(trace, {})  # pydantic's own, walking with copy.deepcopy
    assert ours == theirs == trace and ours.model_dump_json() == trace.model_dump_json()
    assert ours.model_fields_set == trace.model_fields_set

    def containers(value, seen):
        if isinstance(value, BaseModel):
            seen.add(id(value))
            for v in value.__dict__.values():
                containers(v, seen)
        elif isinstance(value, dict | list):
            seen.add(id(value))
            for v in value.values() if isinstance(value, dict) else value:
                containers(v, seen)
        return seen

    assert not containers(ours, set()) & containers(trace, set())
    # what the original shared is shared once in the copy too (copy.deepcopy's memo)
    assert ours.steps[0].metadata["same"] is ours.steps[0].metadata["again"]
    ours.steps[0].metadata["same"]["k"][1]["deep"].append(3)
    assert trace.steps[0].metadata["same"]["k"][1]["deep"] == [2.5, None]
    assert copy.deepcopy(trace) == trace
