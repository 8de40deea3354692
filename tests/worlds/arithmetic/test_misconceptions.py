"""The policy's misconceptions (world-2): triggered only by their context, followed at their strength,
named by the checker, and, because every sample shares them, able to defeat majority vote."""

from __future__ import annotations

import math
import statistics
from collections import Counter

import pytest

from prmkit.worlds.arithmetic import (
    CATALOGUE,
    PolicyConfig,
    WorldPolicy,
    check_trace,
    generate_problems,
    sample_traces,
)
from prmkit.worlds.arithmetic.checker import Chain, compute
from prmkit.worlds.arithmetic.misconceptions import BY_NAME, error_class, explain, triggered
from tests.worlds.arithmetic.test_systematic import NO_OTHER_ERRORS as SILENT

NO_OTHER_ERRORS = {k: v for k, v in SILENT.items() if k != "misconceptions"}
"""No independent errors and no lucky traces (the misconceptions are what each test sets)."""


def within(count: int, trials: int, p: float, sigmas: float = 4.0) -> bool:
    sd = math.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= sigmas * max(sd, 1.0)


@pytest.fixture(scope="module")
def problems():
    return generate_problems(1500, seed=7, split="train")


def test_the_catalogue_writes_the_examples_it_documents() -> None:
    assert triggered("*", 7, 8) == (BY_NAME["times_table"], ("*", 8, 54))
    assert triggered("*", 8, 7) == (BY_NAME["times_table"], ("*", 7, 54))
    assert triggered("-", 13, 7) == (BY_NAME["borrow"], ("-", 7, 14))
    assert triggered("*", 5, 2) == (BY_NAME["times_as_more"], ("+", 2, 7))
    # no trigger: a right fact, a subtraction with no borrow, 2 * 2 (2 + 2 is the same number)
    assert triggered("*", 7, 9) is None and triggered("-", 17, 3) is None and triggered("*", 2, 2) is None
    assert triggered("+", 7, 8) is None and triggered("/", 56, 8) is None


def test_misconceptions_fire_only_where_their_trigger_is(problems) -> None:
    policy = WorldPolicy(PolicyConfig(misconceptions=1.0))
    traces = sample_traces(problems[:600], 4, seed=3, policy=policy)
    fired = Counter()
    for t in traces:
        check = check_trace(t)
        for index, name in t.metadata.get("misconceptions", []):
            step = check.steps[index]
            assert step.status == "error" and step.kind == BY_NAME[name].kind
            assert step.misconception == name  # the checker names it from the text alone
            assert step.error_class == "misconception"
            fired[name] += 1
    assert set(fired) == {m.name for m in CATALOGUE}
    # problems whose chain never triggers a belief (on the right values) are never hit by one
    policy_free = WorldPolicy(PolicyConfig(misconceptions=1.0, **NO_OTHER_ERRORS))
    quiet = [p for p in problems if not _triggers(p)]
    assert len(quiet) > 100
    for t in sample_traces(quiet, 4, seed=3, policy=policy_free):
        assert "misconceptions" not in t.metadata and check_trace(t).first_error == -1


def _triggers(problem) -> list[tuple[int, str]]:
    """(operation index, belief) where the problem's right chain triggers a misconception."""
    chain = Chain.of(problem)
    out = []
    for k, (op, q) in enumerate(chain.ops):
        r = chain.quantities[0] if k == 0 else chain.results[k - 1]
        hit = triggered(op, r, q)
        if hit is not None:
            out.append((k, hit[0].name))
    return out


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_each_misconception_is_followed_at_its_strength(problems, scale: float) -> None:
    """With no other errors a sample follows the right chain until a belief fires; at each triggered
    operation reached on the right values, the belief fires with its strength times the scale."""
    policy = WorldPolicy(PolicyConfig(misconceptions=scale, **NO_OTHER_ERRORS))
    traces = sample_traces(problems, 4, seed=11, policy=policy)
    trials, hits = Counter(), Counter()
    for t in traces:
        chain = Chain.of(t.problem)
        believed = {i: name for i, name in t.metadata.get("misconceptions", [])}
        # without other errors, step k performs operation k until the first belief (then values differ)
        for k, name in _triggers(t.problem):
            if any(i < k for i in believed):
                break
            trials[name] += 1
            if believed.get(k) == name:
                hits[name] += 1
                break
        assert len(t.steps) == len(chain.ops) + 1
    for m in CATALOGUE:
        p = min(1.0, m.strength * scale)
        assert trials[m.name] > 200, trials
        assert within(hits[m.name], trials[m.name], p), (m.name, hits[m.name], trials[m.name], p)


def test_off_is_world_1_and_the_checker_tells_misconceptions_from_slips(problems) -> None:
    off = sample_traces(problems[:300], 4, seed=2, policy=WorldPolicy(PolicyConfig(misconceptions=0.0)))
    assert all("misconceptions" not in t.metadata for t in off)
    assert explain(None, 7, "*", 7, 8, 54) == "times_table"
    assert explain(None, 7, "*", 7, 8, 55) is None  # a slip next to a belief is a slip
    assert explain(("*", 2), 5, "+", 5, 2, 7) == "times_as_more"
    assert explain(("+", 2), 5, "+", 5, 2, 7) is None  # not a misreading where "+ 2" was asked
    assert error_class("arithmetic", None) == "slip" and error_class("wrong_quantity", None) == "other"
    assert error_class("arithmetic", "borrow") == "misconception" and error_class(None, None) is None


def test_default_world_has_about_a_third_misconceptions_and_they_defeat_majority_vote(problems) -> None:
    """Shared beliefs are what make a real policy's majority wrong: the same wrong step in most samples."""
    classes = Counter()
    for t in sample_traces(problems[:800], 4, seed=5):
        classes[check_trace(t).first_error_class] += 1
    errors = sum(v for k, v in classes.items() if k is not None)
    assert 0.22 < classes["misconception"] / errors < 0.42, classes
    majority = {}
    for scale in (0.0, 1.0):
        pools = sample_traces(
            problems[:200], 16, seed=10, policy=WorldPolicy(PolicyConfig(misconceptions=scale))
        )
        right = 0
        for j in range(0, len(pools), 16):
            pool = pools[j : j + 16]
            votes = Counter(t.final_answer for t in pool if t.final_answer is not None)
            right += check_trace(
                next(t for t in pool if t.final_answer == votes.most_common(1)[0][0])
            ).answer_correct
        majority[scale] = right / 200
    assert majority[0.0] - majority[1.0] > 0.15, majority


def test_in_the_policys_samples_a_misconception_is_as_likely_as_the_truth_and_a_slip_is_not(problems) -> None:
    """What an LM trained on the policy's samples converges to: the frequency of each written result
    given the equation's left side. A belief's result is about as frequent as the right one (its strength);
    any one slip's result is rare. (The real LM's numbers are in docs/world.md, "Misconceptions".)"""
    import re

    results: dict[str, Counter] = {}
    for t in sample_traces(problems, 4, seed=13):
        for step in t.steps:
            m = re.search(r"(\d+) ([-+*/]) (\d+) = (\d+)", step.text)
            if m:
                results.setdefault(f"{m[1]} {m[2]} {m[3]}", Counter())[int(m[4])] += 1

    def share(value: int, *lefts: str) -> float:
        seen = sum((results.get(left, Counter()) for left in lefts), Counter())
        return seen[value] / max(1, sum(seen.values()))

    assert 0.55 < share(54, "7 * 8", "8 * 7") < 0.8  # strength 0.7, before other errors
    assert 0.4 < share(14, "13 - 7") < 0.75  # borrow, strength 0.6
    slips = []
    for left, seen in results.items():
        a, op, b = left.split()
        if sum(seen.values()) >= 40 and triggered(op, int(a), int(b)) is None:
            slips += [share(wrong, left) for wrong in seen if wrong != compute(op, int(a), int(b))]
    assert len(slips) > 50 and statistics.fmean(slips) < 0.05
