"""Random core-model data sets round-tripped through every format that can hold them.

What each format holds (and so what each property compares):

- prmkit:        everything (the traces compare equal).
- prm800k:       problem text and answer; step texts; one source's rating per step (-1, 0, +1 or none).
- processbench:  id, generator, problem text, step texts, answer_correct, the first error.
- math_shepherd: problem text, step texts (stripped, without the tag or a "Step k:" prefix), one
                 +/- per step, task (= Problem.source).
- trl:           prompt, step texts, one boolean per step, soft scores.

Every format is also a fixed point after one write: write(read(write(x))) == write(x), byte for byte.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prmkit.core import Label, Problem, Provenance, Step, Trace
from prmkit.formats import read, write

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_TEXT = st.text(min_size=0, max_size=12)
PLAIN = st.text(alphabet="abcxyz019 +-=$\\{}.?é∑\n", min_size=1, max_size=12).filter(
    lambda s: s == s.strip() and s != ""
)
RATING = st.sampled_from([-1, 0, 1, None])


def _fixed_point(traces: list[Trace], fmt: str, suffix: str = ".jsonl") -> list[Trace]:
    """Write, read, write again: the two files must be identical; returns what was read."""
    # hypothesis calls this once per example: a directory that is removed after each, not pytest's tmp_path
    with tempfile.TemporaryDirectory(prefix="prmkit-prop-") as name:
        first, second = Path(name) / f"a{suffix}", Path(name) / f"b{suffix}"
        write(first, traces, fmt)
        back = list(read(first, fmt))
        write(second, back, fmt)
        assert first.read_bytes() == second.read_bytes()
    return back


@st.composite
def core_traces(draw) -> list[Trace]:
    prov = st.builds(
        Provenance,
        method=st.sampled_from(["human", "mc_soft", "judge", "gold"]),
        actor=st.one_of(st.none(), st.sampled_from(["a", "b:c"])),
        params=st.dictionaries(
            st.sampled_from(["k", "seed"]), st.one_of(st.integers(), ANY_TEXT, st.none()), max_size=2
        ),
    )
    label = st.builds(
        Label,
        rating=st.sampled_from([-1, 0, 1]),
        score=st.one_of(st.none(), st.floats(0, 1)),
        provenance=prov,
        metadata=st.dictionaries(ANY_TEXT, st.integers(), max_size=1),
    )
    step = st.builds(
        Step,
        text=ANY_TEXT,
        kind=st.sampled_from(["reasoning", "tool_call"]),
        labels=st.lists(label, max_size=2),
    )
    problem = st.builds(Problem, id=ANY_TEXT, text=ANY_TEXT, answer=st.one_of(st.none(), ANY_TEXT))
    trace = st.builds(
        Trace,
        id=ANY_TEXT,
        problem=problem,
        steps=st.lists(step, max_size=4),
        final_answer=st.one_of(st.none(), ANY_TEXT),
        answer_correct=st.one_of(st.none(), st.booleans()),
        generator=st.one_of(st.none(), ANY_TEXT),
        metadata=st.dictionaries(ANY_TEXT, st.lists(st.integers(), max_size=2), max_size=2),
    )
    return draw(st.lists(trace, min_size=1, max_size=3))


@SETTINGS
@given(core_traces())
def test_prmkit_holds_everything(traces):
    assert _fixed_point(traces, "prmkit") == traces


@pytest.mark.slow
@settings(SETTINGS, max_examples=8)  # each example goes through `datasets` and Parquet (~0.3 s)
@given(core_traces())
def test_prmkit_parquet_holds_everything(traces):
    assert _fixed_point(traces, "prmkit", ".parquet") == traces


def _rated(texts: list[str], ratings: list[int | None], prov: Provenance) -> list[Step]:
    return [
        Step(text=t, labels=[] if r is None else [Label(rating=r, provenance=prov)])
        for t, r in zip(texts, ratings, strict=True)
    ]


@SETTINGS
@given(st.data())
def test_prm800k_holds_texts_answer_and_ratings(data):
    labeler = data.draw(st.sampled_from(["e90a38f3", "x"]))
    prov = Provenance(method="human", actor=labeler)
    n = data.draw(st.integers(1, 4))
    texts = data.draw(st.lists(ANY_TEXT, min_size=n, max_size=n))
    ratings = data.draw(st.lists(RATING, min_size=n, max_size=n))
    problem = Problem(id="p", text=data.draw(ANY_TEXT), answer=data.draw(st.one_of(st.none(), ANY_TEXT)))
    trace = Trace(id="t", problem=problem, steps=_rated(texts, ratings, prov))
    (back,) = _fixed_point([trace], "prm800k")
    assert back.problem.text == problem.text and back.problem.answer == problem.answer
    assert [s.text for s in back.steps] == texts
    assert back.ratings(f"human:{labeler}") == ratings


@SETTINGS
@given(st.data())
def test_processbench_holds_its_fields_and_the_first_error(data):
    prov = Provenance(method="judge", actor="j")
    n = data.draw(st.integers(1, 5))
    texts = data.draw(st.lists(ANY_TEXT, min_size=n, max_size=n))
    # a trace nobody labelled is not written (ProcessBench's -1 would claim every step correct)
    ratings = data.draw(st.lists(RATING, min_size=n, max_size=n).filter(lambda r: r != [None] * n))
    trace = Trace(
        id=data.draw(ANY_TEXT),
        problem=Problem(id="p", text=data.draw(ANY_TEXT)),
        steps=_rated(texts, ratings, prov),
        answer_correct=data.draw(st.booleans()),
        generator=data.draw(ANY_TEXT),
    )
    (back,) = _fixed_point([trace], "processbench")
    assert (back.id, back.generator, back.answer_correct) == (trace.id, trace.generator, trace.answer_correct)
    assert back.problem.text == trace.problem.text and [s.text for s in back.steps] == texts
    assert back.first_error("human:processbench") == trace.first_error("judge:j")


@SETTINGS
@given(st.data())
def test_math_shepherd_holds_texts_and_signs(data):
    prov = Provenance(method="mc_hard", actor="world-policy")
    n = data.draw(st.integers(1, 5))
    texts = data.draw(st.lists(PLAIN, min_size=n, max_size=n))
    ratings = data.draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    problem = Problem(id="p", text=data.draw(PLAIN), source=data.draw(st.sampled_from(["GSM8K", "MATH"])))
    trace = Trace(id="t", problem=problem, steps=_rated(texts, ratings, prov))
    (back,) = _fixed_point([trace], "math_shepherd")
    assert back.problem.text == problem.text and back.problem.source == problem.source
    assert [s.text for s in back.steps] == texts
    assert back.ratings("mc_hard:math-shepherd") == ratings


@SETTINGS
@given(st.data())
def test_trl_holds_prompt_texts_booleans_and_scores(data):
    prov = Provenance(method="mc_soft", actor="p")
    n = data.draw(st.integers(1, 5))
    texts = data.draw(st.lists(ANY_TEXT, min_size=n, max_size=n))
    scores = data.draw(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=n, max_size=n))
    ratings = data.draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    steps = [
        Step(text=t, labels=[Label(rating=r, score=s, provenance=prov)])
        for t, r, s in zip(texts, ratings, scores, strict=True)
    ]
    trace = Trace(id="t", problem=Problem(id="p", text=data.draw(ANY_TEXT)), steps=steps)
    (back,) = _fixed_point([trace], "trl")
    assert back.problem.text == trace.problem.text and [s.text for s in back.steps] == texts
    assert back.ratings("imported:trl") == ratings
    assert [s.labels[0].score for s in back.steps] == (
        scores if any(x is not None for x in scores) else [None] * n
    )
