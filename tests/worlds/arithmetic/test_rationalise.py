"""The policy's opt-in rationalising (``PolicyConfig.rationalise``): off by default, and then sampling and
gold labels are exactly what they were before the knob existed; on, the policy bends a step to land on
the answer it knows, and the checker names that step ``rationalised`` from the text alone (class
*other*). The world's oracle flags such a trace; an outcome check, all an ORM is trained on, passes it."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from prmkit.worlds.arithmetic import (
    PolicyConfig,
    WorldPolicy,
    check_trace,
    generate_problems,
    gold_label,
    sample_traces,
)
from prmkit.worlds.arithmetic.oracle import OracleScorer

# world-2's default sampling and gold labels (60 test problems x 4, seed 7 / 11), digested with the code
# before the rationalise knob existed: ``rationalise: 0`` must draw and label exactly so.
GOLDEN_TRACES = "20687fd69f29dbb64eb1d60979d8ce7c1761e0b2fbbff1331207d2d82c3888cb"
GOLDEN_SYSTEMATIC = "b0ed904c34634b04ce04bd2879da4e34c33a049d6c882838b2deabadf03fd2d7"
GOLDEN_GOLD = "ff542c265af769f98919600e8417b1e809339eb3f85ae631547257111d365604"


def _digest(rows: object) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _drawn(traces) -> str:
    meta = [{k: v for k, v in t.metadata.items() if k != "sampling"} for t in traces]
    return _digest(
        [[t.id, [s.text for s in t.steps], t.final_answer, m] for t, m in zip(traces, meta, strict=True)]
    )


def _labels(traces) -> str:
    rows = [
        [t.answer_correct, [[(lab.rating, lab.metadata) for lab in s.labels] for s in t.steps]]
        for t in traces
    ]
    return _digest(rows)


def test_off_samples_and_labels_exactly_as_before_the_knob() -> None:
    problems = generate_problems(60, seed=7, split="test")
    plain = sample_traces(problems, 4, seed=11, policy=WorldPolicy(PolicyConfig(rationalise=0.0)))
    assert _drawn(plain) == GOLDEN_TRACES
    systematic = WorldPolicy(PolicyConfig(systematic=0.5, temperature=1.5))
    assert _drawn(sample_traces(problems, 4, seed=11, policy=systematic)) == GOLDEN_SYSTEMATIC
    problems = generate_problems(40, seed=7, split="test")
    assert _labels(gold_label(sample_traces(problems, 4, seed=11))) == GOLDEN_GOLD
    assert all("rationalised" not in t.metadata for t in plain)


@pytest.mark.parametrize(
    ("texts", "kinds"),
    [
        # the bent operation: 11 - 3 on the right value 11, where the trace had computed 12
        (["7 + 4 = 12", "11 - 3 = 8", "The answer is 8."], ["arithmetic", "rationalised"]),
        # the bent answer: no operation left, the right answer in place of the running value 9
        (["7 + 4 = 11", "11 - 3 = 9", "The answer is 8."], ["arithmetic", "rationalised"]),
        # a compensating slip (the lucky pair) takes its own value: two slips, as before the knob
        (["7 + 4 = 12", "12 - 3 = 8", "The answer is 8."], ["arithmetic", "arithmetic"]),
        # an answer that is neither the running value nor the right one
        (["7 + 4 = 11", "11 - 3 = 9", "The answer is 10."], ["arithmetic", "answer_mismatch"]),
    ],
)
def test_the_checker_names_a_bent_step_from_the_text(make_trace, texts, kinds) -> None:
    check = check_trace(make_trace(*texts, final=texts[-1].split()[-1].rstrip(".")))
    assert [s.kind for s in check.steps if s.status == "error"] == kinds
    assert all(s.error_class == "other" for s in check.steps if s.kind == "rationalised")
    assert check.answer_correct is (texts[-1] == "The answer is 8.")


@pytest.fixture(scope="module")
def bent() -> list:
    problems = generate_problems(200, seed=5, split="test")
    return gold_label(sample_traces(problems, 4, seed=3, policy=WorldPolicy(PolicyConfig(rationalise=1.0))))


def test_the_policy_lands_on_the_answer_it_knows_and_the_checker_names_the_step(bent) -> None:
    count = 0
    for trace in bent:
        check = check_trace(trace)
        injected = [[i, k] for i, k in trace.metadata["injected"] if k != "neutral"]
        assert injected == [[i, s.kind] for i, s in enumerate(check.steps) if s.status == "error"]
        at = trace.metadata["rationalised"]
        if at is not None:
            count += 1
            assert check.steps[at].kind == "rationalised" and check.first_error < at
        if all(s.kind != "early_answer" for s in check.steps):  # only an early answer escapes it
            assert check.answer_correct, [s.text for s in trace.steps]
    assert count > 100


def test_it_rationalises_at_its_rate() -> None:
    problems = generate_problems(400, seed=6, split="test")
    traces = sample_traces(problems, 4, seed=1, policy=WorldPolicy(PolicyConfig(rationalise=0.5)))
    bent = unbent = 0
    for trace in traces:
        check = check_trace(trace)
        if trace.metadata["lucky"] or any(s.kind == "early_answer" for s in check.steps):
            continue
        bent += trace.metadata["rationalised"] is not None
        unbent += trace.metadata["rationalised"] is None and not check.answer_correct  # off, not bent
    n = bent + unbent
    assert abs(bent - n / 2) <= 4 * max(math.sqrt(n / 4), 1.0)


def test_continuing_a_corrupted_prefix_it_still_lands_on_the_answer(make_trace) -> None:
    trace = make_trace("7 + 4 = 12", final=None)
    policy = WorldPolicy(PolicyConfig(rationalise=1.0, temperature=0.0))
    (rationalising,) = policy.continue_from(trace.problem, trace.steps, seed=0)
    (faithful,) = WorldPolicy(PolicyConfig(temperature=0.0)).continue_from(trace.problem, trace.steps, seed=0)
    assert rationalising.final_answer == "8" and faithful.final_answer == "9"
    whole = make_trace("7 + 4 = 12", *(s.text for s in rationalising.steps), final="8")
    assert [s.kind for s in check_trace(whole).steps] == ["arithmetic", "rationalised", None]


def test_the_oracle_flags_a_rationalised_trace_an_outcome_check_passes_it(bent) -> None:
    """A gold PRM (the oracle, and the local gold label) finds the bent step; an ORM, which learns the
    outcome, sees a right answer: its target for the trace is the full reward."""
    rationalised = [t for t in bent if t.metadata["rationalised"] is not None]
    scores = OracleScorer().score(rationalised)
    for trace, row in zip(rationalised, scores, strict=True):
        at = trace.metadata["rationalised"]
        assert trace.answer_correct is True  # the outcome an ORM is trained to predict: right
        assert row[at] == 0.0 and min(row) == 0.0  # the oracle scores the bent step (and the trace) low
        label = trace.steps[at].label("gold:world:local")
        assert label.rating == -1 and label.metadata == {"kind": "rationalised", "class": "other"}
