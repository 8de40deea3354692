"""The policy's opt-in correlated errors (``PolicyConfig.systematic``): off by default, shared by the samples
of a problem at the set rates, labelled by the checker like any error, and they make majority vote fail."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter

import pytest

from prmkit.core.model import Step, Trace
from prmkit.worlds.arithmetic import PolicyConfig, WorldPolicy, check_trace, generate_problems, sample_traces
from prmkit.worlds.arithmetic.checker import EQUATION, Chain, compute

# world-1's default sampling (world-2's with misconceptions off), digested with the code before the
# systematic mode existed: it must never change.
GOLDEN_TEST = "299ced6d0ef79e1290ca40a535639b123bdd53dba670b511427a316ff529e28a"
GOLDEN_HELDOUT = "e2679e1c29f6e4cff00062902176d5fd9f07a953df1f3951e7b640616046fd1e"
NO_OTHER_ERRORS = dict(
    arithmetic_slip=0.0,
    wrong_quantity=0.0,
    wrong_operation=0.0,
    dropped_step=0.0,
    irrelevant_step=0.0,
    early_answer=0.0,
    lucky=0.0,
    misconceptions=0.0,
)
WORLD_1 = PolicyConfig(misconceptions=0.0)


def _digest(traces) -> str:
    """The draws: ids, steps, answers and what the policy meant to do (not ``metadata["sampling"]``, the
    record of the settings, which differs between two configs that draw alike)."""
    meta = [{k: v for k, v in t.metadata.items() if k != "sampling"} for t in traces]
    rows = [[t.id, [s.text for s in t.steps], t.final_answer, m] for t, m in zip(traces, meta, strict=True)]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def within(count: int, trials: int, p: float, sigmas: float = 4.0) -> bool:
    sd = math.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= sigmas * max(sd, 1.0)


def _pools(traces, per_problem: int):
    return [traces[i : i + per_problem] for i in range(0, len(traces), per_problem)]


def _equation(problem, m) -> tuple[str, str, str, str]:
    """The misconception's equation after a right prefix, as the checker's EQUATION regex reads it."""
    chain = Chain.of(problem)
    r = chain.quantities[0] if m.op == 0 else chain.results[m.op - 1]
    c = compute(m.operation, r, m.operand)
    c = c + m.offset if m.exact else int(c)
    return str(r), m.operation, str(m.operand), str(c)


@pytest.fixture(scope="module")
def problems():
    return generate_problems(400, seed=21, split="test")


def test_default_and_zero_systematic_sample_exactly_as_before() -> None:
    test = generate_problems(40, seed=0, split="test")
    heldout = generate_problems(20, seed=0, split="heldout")
    assert _digest(sample_traces(test, 8, seed=0, policy=WorldPolicy(WORLD_1))) == GOLDEN_TEST
    off = WorldPolicy(PolicyConfig(systematic=0.0, systematic_rate=0.9, misconceptions=0.0))
    assert _digest(sample_traces(test, 8, seed=0, policy=off)) == GOLDEN_TEST
    w1 = WorldPolicy(WORLD_1, seed_offset=2)
    assert _digest(sample_traces(heldout, 4, seed=3, policy=w1)) == GOLDEN_HELDOUT
    assert off.systematic_error(test[0]) is None
    # a problem may have a systematic error, but a rate of 0 never repeats it: the same texts and answers
    never = sample_traces(
        test, 8, seed=0, policy=WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=0.0))
    )
    default = sample_traces(test, 8, seed=0)
    assert [[s.text for s in t.steps] for t in never] == [[s.text for s in t.steps] for t in default]
    assert all(t.metadata["systematic"] is None for t in never)
    assert all("systematic" not in t.metadata for t in default)


def test_rate_one_every_sample_makes_the_same_first_error_at_the_same_step(problems) -> None:
    policy = WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=1.0, **NO_OTHER_ERRORS))
    traces = sample_traces(problems[:150], 8, seed=5, policy=policy)
    for pool in _pools(traces, 8):
        m = policy.systematic_error(pool[0].problem)
        assert m is not None and m.kind in ("arithmetic", "wrong_quantity", "wrong_operation")
        checks = [check_trace(t) for t in pool]
        firsts = {
            (c.first_error, c.first_error_kind, t.steps[c.first_error].text)
            for t, c in zip(pool, checks, strict=True)
        }
        assert len(firsts) == 1
        ((index, kind, text),) = firsts
        assert index == m.op and kind == m.kind and checks[0].steps[index].op == m.op
        assert EQUATION.findall(text) == [_equation(pool[0].problem, m)]
        assert all(t.metadata["systematic"] == index for t in pool)


def test_the_misconception_belongs_to_the_problem_not_the_seed(problems) -> None:
    config = PolicyConfig(systematic=1.0, systematic_rate=1.0, **NO_OTHER_ERRORS)
    a, b = WorldPolicy(config), WorldPolicy(config, seed_offset=9)
    assert [a.systematic_error(p) for p in problems[:50]] == [b.systematic_error(p) for p in problems[:50]]
    texts = [[s.text for s in t.steps] for t in sample_traces(problems[:50], 2, seed=0, policy=a)]
    assert texts == [[s.text for s in t.steps] for t in sample_traces(problems[:50], 2, seed=7, policy=b)]
    for p in problems[:50]:
        (cont,) = a.continue_from(p, [], seed=3)
        assert [s.text for s in cont.steps] == texts[2 * problems.index(p)]
    # the chance picks which problems have one; a problem's misconception does not depend on it
    half = WorldPolicy(PolicyConfig(systematic=0.5))
    drawn = [half.systematic_error(p) for p in problems]
    assert within(sum(m is not None for m in drawn), len(problems), 0.5)
    assert all(m is None or m == a.systematic_error(p) for p, m in zip(problems, drawn, strict=True))
    assert Counter(a.systematic_error(p).kind for p in problems).keys() == {  # type: ignore[union-attr]
        "arithmetic",
        "wrong_quantity",
        "wrong_operation",
    }


@pytest.mark.parametrize(("rate", "temperature"), [(0.3, 1.0), (0.25, 2.0)])
def test_share_of_samples_repeating_the_misconception_matches_the_rate(problems, rate, temperature) -> None:
    config = PolicyConfig(systematic=1.0, systematic_rate=rate, temperature=temperature, **NO_OTHER_ERRORS)
    traces = sample_traces(problems, 8, seed=6, policy=WorldPolicy(config))
    wrong = sum(check_trace(t).first_error >= 0 for t in traces)
    assert within(wrong, len(traces), min(1.0, rate * temperature)), wrong / len(traces)


def test_temperature_zero_is_still_a_perfect_policy(problems) -> None:
    policy = WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=1.0, temperature=0.0))
    assert all(policy.systematic_error(p) is not None for p in problems[:100])
    checks = [check_trace(t) for t in sample_traces(problems[:100], 2, policy=policy)]
    assert all(c.answer_correct and c.first_error == -1 for c in checks)


def _reached_and_shared(policy, traces) -> tuple[int, int]:
    """(samples whose prefix was right up to the misconception's operation, those that made it there)."""
    reached = shared = 0
    for trace in traces:
        m = policy.systematic_error(trace.problem)
        check = check_trace(trace)
        last = check.first_error if check.first_error >= 0 else len(check.steps) - 1
        k = 0
        for i, sc in enumerate(check.steps[: last + 1]):
            if sc.op is None and sc.kind != "early_answer":
                continue  # a neutral side step
            if k == m.op:
                reached += 1
                found = EQUATION.findall(trace.steps[i].text)
                shared += sc.kind == m.kind and found == [_equation(trace.problem, m)]
                break
            k += 1
    return reached, shared


def test_with_the_independent_errors_too_the_shared_error_comes_at_its_rate(problems) -> None:
    rate = 0.4
    on = WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=rate, lucky=0.0))
    reached, shared = _reached_and_shared(on, sample_traces(problems, 8, seed=8, policy=on))
    # the independent errors sometimes make the very same wrong step by chance: measure how often
    off = WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=0.0, lucky=0.0))
    reached0, shared0 = _reached_and_shared(off, sample_traces(problems, 8, seed=8, policy=off))
    chance = shared0 / reached0
    assert 0.0 < chance < 0.05
    assert reached > 1500
    assert within(shared, reached, rate + (1 - rate) * chance), (shared / reached, chance)


def test_the_checker_labels_every_systematic_error_as_injected(problems) -> None:
    configs = [
        PolicyConfig(systematic=1.0, systematic_rate=1.0),
        PolicyConfig(systematic=0.7, systematic_rate=0.6, temperature=2.0, lucky=0.2),
    ]
    for config in configs:
        policy = WorldPolicy(config)
        made = 0
        for trace in sample_traces(problems[:200], 6, seed=9, policy=policy):
            check = check_trace(trace)
            injected = {i: kind for i, kind in trace.metadata["injected"]}
            found = {i: sc.kind or sc.status for i, sc in enumerate(check.steps) if sc.status != "valid"}
            assert found == injected, [s.text for s in trace.steps]
            at = trace.metadata["systematic"]
            if at is not None:
                made += 1
                assert injected[at] == policy.systematic_error(trace.problem).kind  # type: ignore[union-attr]
        assert made > 200


def test_continuing_past_the_misconception_does_not_make_it(problem) -> None:
    policy = WorldPolicy(PolicyConfig(systematic=1.0, systematic_rate=1.0, **NO_OTHER_ERRORS))
    m = policy.systematic_error(problem)
    assert m is not None
    right = [Step(text="7 + 4 = 11"), Step(text="11 - 3 = 8")]
    (cont,) = policy.continue_from(problem, right[: m.op + 1], seed=0)
    assert cont.final_answer == "8"
    (cont,) = policy.continue_from(problem, right[: m.op], seed=0)
    trace = Trace(id="t", problem=problem, steps=right[: m.op] + cont.steps, final_answer=cont.final_answer)
    check = check_trace(trace)
    assert check.first_error == m.op and check.first_error_kind == m.kind
    assert EQUATION.findall(trace.steps[m.op].text) == [_equation(problem, m)]


def _majority_correct(pool) -> bool:
    """Plain majority vote over final answers (ties: the answer seen first), as prmkit.search.vote does."""
    counts = Counter(t.final_answer for t in pool if t.final_answer is not None)
    best = max(counts.values())
    winner = next(t for t in pool if t.final_answer is not None and counts[t.final_answer] == best)
    return bool(check_trace(winner).answer_correct)


def test_correlated_errors_defeat_majority_vote_but_not_the_oracle(problems) -> None:
    rows = {}
    for systematic in (0.0, 0.5):
        policy = WorldPolicy(PolicyConfig(systematic=systematic, systematic_rate=0.5, misconceptions=0.0))
        pools = _pools(sample_traces(problems[:200], 16, seed=10, policy=policy), 16)
        majority = sum(_majority_correct(pool) for pool in pools) / len(pools)
        oracle = sum(any(check_trace(t).answer_correct for t in pool) for pool in pools) / len(pools)
        rows[systematic] = majority, oracle
    assert rows[0.0][0] > 0.93
    assert rows[0.0][0] - rows[0.5][0] > 0.12, rows
    assert rows[0.5][1] > 0.95, rows  # the right answer is still in the pool: a verifier can find it
