"""The simulated policy: error rates match its settings, lucky traces, prefixes, determinism, protocol."""

from __future__ import annotations

import math

import pytest

from prmkit.core.model import Step
from prmkit.core.protocols import Policy
from prmkit.worlds.arithmetic import (
    PolicyConfig,
    WorldPolicy,
    check_trace,
    generate_problems,
    sample_traces,
    summarize,
)
from prmkit.worlds.arithmetic.checker import Chain, compute

SIGMAS = 4.0


def within(count: int, trials: int, p: float) -> bool:
    """``count`` successes in ``trials`` is within 4 binomial standard deviations of rate ``p``."""
    sd = math.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= SIGMAS * max(sd, 1.0)


@pytest.fixture(scope="module")
def problems():
    return generate_problems(1500, seed=3)


def _decisions(trace, check):
    """(op index k, step index, kind or None) of each decision the policy made while its prefix was right.

    Read from the gold checker only: a decision step is a computation or an early answer; counting stops
    at the first error, where the belief is still the truth (so availability can be recomputed).
    """
    out, k = [], 0
    last = check.first_error if check.first_error >= 0 else len(check.steps) - 1
    for i, sc in enumerate(check.steps[: last + 1]):
        if sc.op is not None or sc.kind == "early_answer":
            out.append((k, i, sc.kind))
            k += 1
    return out


def test_measured_error_rates_match_the_settings(problems) -> None:
    config = PolicyConfig(
        lucky=0.0, misconceptions=0.0
    )  # the independent errors alone (see test_misconceptions)
    traces = sample_traces(problems, 4, seed=1, policy=WorldPolicy(config))
    counts = dict.fromkeys(
        ("arithmetic", "wrong_quantity", "wrong_operation", "skipped_step", "early_answer", "neutral"), 0
    )
    trials = {"all": 0, "early_answer": 0, "skipped_step": 0}
    for trace in traces:
        check = check_trace(trace)
        chain = Chain.of(trace.problem)
        last = check.first_error if check.first_error >= 0 else len(check.steps)
        counts["neutral"] += sum(sc.status == "neutral" for sc in check.steps[:last])
        for k, _, kind in _decisions(trace, check):
            trials["all"] += 1
            trials["early_answer"] += k >= 1
            if k + 1 < len(chain.ops):
                (_, q), (op2, q2) = chain.ops[k], chain.ops[k + 1]
                r = chain.quantities[0] if k == 0 else chain.results[k - 1]
                trials["skipped_step"] += q2 != q and isinstance(compute(op2, r, q2), int)
            if kind is not None:
                counts[kind] += 1
    rates = {
        "arithmetic": config.arithmetic_slip,
        "wrong_quantity": config.wrong_quantity,
        "wrong_operation": config.wrong_operation,
        "skipped_step": config.dropped_step,
        "early_answer": config.early_answer,
        "neutral": config.irrelevant_step,
    }
    assert trials["all"] > 10_000
    for kind, p in rates.items():
        n = trials.get(kind, trials["all"])
        assert within(counts[kind], n, p), f"{kind}: {counts[kind]}/{n} = {counts[kind] / n:.4f}, set {p}"


def test_every_injected_error_is_what_the_checker_finds(problems) -> None:
    traces = sample_traces(problems[:300], 8, seed=2)
    for trace in traces:
        check = check_trace(trace)
        injected = {i: kind for i, kind in trace.metadata["injected"]}
        found = {i: sc.kind or sc.status for i, sc in enumerate(check.steps) if sc.status != "valid"}
        assert found == injected, [s.text for s in trace.steps]


def test_lucky_traces_occur_at_the_set_rate_and_are_flagged(problems) -> None:
    config = PolicyConfig()
    traces = sample_traces(problems[:1000], 4, seed=4, policy=WorldPolicy(config))
    checks = [check_trace(t) for t in traces]
    lucky = [c for t, c in zip(traces, checks, strict=True) if t.metadata["lucky"]]
    assert within(len(lucky), len(traces), config.lucky)
    assert all(c.lucky and c.answer_correct and c.first_error >= 0 for c in lucky)
    natural = sum(c.lucky for c in checks) - len(lucky)
    assert natural > 0  # errors that cancel by chance (2 + 2 for 2 * 2, truncations...) come on top
    assert {t.metadata["lucky"] for t in traces} == {None, "compensate", "misquote"}


def test_default_accuracy_makes_best_of_n_matter(problems) -> None:
    stats = summarize(sample_traces(problems[:300], 8, seed=5))
    assert 0.30 <= stats.accuracy <= 0.60
    assert stats.oracle_accuracy > stats.accuracy + 0.2
    hot = summarize(
        sample_traces(problems[:300], 8, seed=5, policy=WorldPolicy(PolicyConfig(temperature=2.0)))
    )
    assert hot.accuracy < stats.accuracy - 0.1


def test_temperature_zero_is_a_perfect_policy(problems) -> None:
    traces = sample_traces(problems[:300], 2, policy=WorldPolicy(PolicyConfig(temperature=0.0)))
    checks = [check_trace(t) for t in traces]
    assert all(c.answer_correct and c.first_error == -1 for c in checks)
    assert all(t.final_answer == t.problem.answer for t in traces)


def test_continue_from_carries_an_earlier_error_forward(problem) -> None:
    perfect = WorldPolicy(PolicyConfig(temperature=0.0))
    (cont,) = perfect.continue_from(problem, [Step(text="She gets 4 more, so 7 + 4 = 12 apples.")], seed=0)
    assert cont.finished and cont.final_answer == "9"  # 12 - 3, not the true 8
    assert "12 - 3 = 9" in cont.steps[0].text
    (clean,) = perfect.continue_from(problem, [Step(text="7 + 4 = 11")], seed=0)
    assert clean.final_answer == "8"


def test_continue_from_max_steps_and_answered_prefix(problem) -> None:
    policy = WorldPolicy()
    conts = policy.continue_from(problem, [], n=5, seed=1, max_steps=1)
    assert len(conts) == 5 and all(len(c.steps) == 1 for c in conts)
    assert all(not c.finished and c.final_answer is None for c in conts)
    done = policy.continue_from(
        problem, [Step(text="7 + 4 = 11"), Step(text="The answer is 11.")], n=2, seed=1
    )
    assert [(c.steps, c.final_answer, c.finished) for c in done] == [([], "11", True)] * 2


def test_same_seed_same_continuations(problem) -> None:
    policy = WorldPolicy()

    def texts(conts):
        return [[s.text for s in c.steps] for c in conts]

    a = texts(policy.continue_from(problem, [], n=20, seed=7))
    assert a == texts(WorldPolicy().continue_from(problem, [], n=20, seed=7))
    assert a != texts(policy.continue_from(problem, [], n=20, seed=8))
    assert texts(WorldPolicy(seed_offset=1).continue_from(problem, [], n=20, seed=7)) != a


def test_sample_traces_is_deterministic(problems) -> None:
    a = [t.model_dump() for t in sample_traces(problems[:50], 4, seed=0)]
    assert a == [t.model_dump() for t in sample_traces(problems[:50], 4, seed=0)]
    assert a != [t.model_dump() for t in sample_traces(problems[:50], 4, seed=1)]


def test_world_policy_implements_the_protocol() -> None:
    assert isinstance(WorldPolicy(), Policy)
