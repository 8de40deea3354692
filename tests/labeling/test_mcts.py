"""OmegaPRM's tree search (prmkit.labeling.mcts): selection by Q + U, binary search inside the selected
rollout, tree reuse, the budget, resuming, and the command."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prmkit.core.dataset import write_traces
from prmkit.core.errors import ItemError
from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.formats.inputs import read_traces
from prmkit.labeling.jobs import prefix_key
from prmkit.labeling.mc import RolloutRun, label_mc
from prmkit.labeling.mcts import Rules, Tree, label_mcts, q_value, u_value
from prmkit.worlds.arithmetic import WorldPolicy

PROBLEM = Problem(id="p", text="2+2?", answer="4")


class ScriptedPolicy:
    """From a prefix without a step containing "bad", rollout i reaches the answer when i is even (one
    step "fine") and misses it when odd (one step "bad"): MC = 0.5. From a prefix with one: all miss."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def continue_from(self, problem, prefix, n=1, *, seed=None, max_steps=None):
        self.calls.append(tuple(s.text for s in prefix))
        if any("bad" in s.text for s in prefix):
            return [Continuation(steps=[Step(text="fine")], final_answer="5") for _ in range(n)]
        return [
            Continuation(
                steps=[Step(text="fine" if i % 2 == 0 else "bad")], final_answer="4" if i % 2 == 0 else "5"
            )
            for i in range(n)
        ]


def trace(tid: str, steps: list[str], answer: str) -> Trace:
    return Trace(id=tid, problem=PROBLEM, steps=[Step(text=s) for s in steps], final_answer=answer)


def three() -> list[Trace]:
    """t1: wrong from its third step; t2: right; t3: wrong from its second step (the root's MC is 1/3)."""
    return [
        trace("t1", ["a", "b", "bad c", "d"], "5"),
        trace("t2", ["a", "b2"], "4"),
        trace("t3", ["a", "bad"], "5"),
    ]


def test_q_and_u_are_omegaprms() -> None:
    rules = Rules()  # alpha 0.5, beta 0.9, L 500, c_puct 0.125
    assert q_value(1.0, 0, rules) == 1.0
    assert q_value(0.5, 0, rules) == pytest.approx(math.sqrt(0.5))
    assert q_value(0.0, 500, rules) == pytest.approx(0.5 * 0.9)
    assert u_value(0, 0, 0.125) == 0.0  # nothing visited yet: selection by Q alone
    assert u_value(0, 4, 0.125) == pytest.approx(0.25) and u_value(1, 4, 0.125) == pytest.approx(0.125)


def test_a_hand_checked_search(tmp_path: Path) -> None:
    policy = ScriptedPolicy()

    def probe(path: Trace, k: int) -> dict:  # a job's record: the draw, its key and whether it is good
        from prmkit.labeling.rollouts import draw

        rec = draw(policy, path.problem, path.steps[:k], 2, 0, True)
        return {"key": prefix_key("p", path.steps[:k]), **rec, "good": rec["correct"] > 0}

    tree = Tree(three(), Rules(rollouts=2), probe)
    root = 0.5 ** (2 / 3)  # MC(root) = 1/3: Q = alpha^(2/3) * beta^(words / 500)
    assert [tree.score(c) for c in tree.pool] == pytest.approx(
        [root * 0.9 ** (5 / 500), root * 0.9 ** (2 / 500)]
    )
    assert tree.step()  # t3 (shorter): its search probes ["a"] (MC 0.5), whose missed rollout joins
    assert tree.selected == ["t3"] and policy.calls == [("a",)] and tree.spent == 2
    scores = {c.path.id: tree.score(c) for c in tree.pool}  # visits: root 1 of 1
    key_a = prefix_key("p", [Step(text="a")])
    new = f"t3~{key_a}~1"
    assert scores == pytest.approx(
        {
            "t1": root * 0.9 ** (5 / 500) + 0.125 * 1 / 2,
            new: math.sqrt(0.5) * 0.9 ** (1 / 500) + 0.125 * 1 / 1,
        }
    )
    tree.run()
    # the new candidate ["a", "bad"] needs no probe (the state before it is known good); then t1:
    # ["a", "b"] is good, ["a", "b", "bad c"] is not; t1's probe of ["a", "b"] adds ["a", "b", "bad"]
    assert tree.selected == ["t3", new, "t1", f"t1~{prefix_key('p', [Step(text='a'), Step(text='b')])}~1"]
    assert policy.calls == [("a",), ("a", "b"), ("a", "b", "bad c")] and tree.spent == 6 and not tree.cut
    assert [tree.states[prefix_key("p", [])].visits, tree.states[key_a].visits] == [2, 1]


def test_labels_are_mc_values_along_the_states() -> None:
    policy = ScriptedPolicy()
    (t1, t2, t3), summary = label_mcts(three(), policy, rules=Rules(rollouts=2))
    assert [s.label("mcts").score for s in t1.steps] == [0.5, 0.5, 0.0, 0.0]  # the last: its stated answer
    assert [s.label("mcts").rating for s in t1.steps] == [1, 1, -1, -1] and t1.first_error("mcts") == 2
    assert [s.label("mcts").metadata["from"] for s in t1.steps] == ["state", "state", "state", "final_answer"]
    assert [s.label("mcts").score for s in t2.steps] == [0.5, 1.0] and t3.first_error("mcts") == 1
    assert (
        summary["rollouts"] == 6 == t1.metadata["rollouts"]["mcts"] and t2.metadata["rollouts"]["mcts"] == 0
    )
    assert summary["states"] == 3 and summary["searches"] == 4 and summary["budget_cut"] == 0
    prov = t1.steps[0].label("mcts").provenance
    assert prov.method == "mcts" and prov.params["c_puct"] == 0.125 and prov.params["budget"] == 200


def test_the_tree_is_reused_not_resampled() -> None:
    # ["a"] is the prefix of all three traces and of every rollout searched: it is rolled out once
    policy = ScriptedPolicy()
    label_mcts([*three(), trace("t4", ["a", "bad"], "5")], policy, rules=Rules(rollouts=2))
    assert Counter(policy.calls) == {("a",): 1, ("a", "b"): 1, ("a", "b", "bad c"): 1}
    # on the world too: one policy call per state, and a state's MC is Monte Carlo's soft label there
    from tests.labeling.conftest import world_traces

    traces = world_traces(15, 4, seed=3)
    counted = CountingPolicy(WorldPolicy())
    labelled, summary = label_mcts(traces, counted, rules=Rules(rollouts=4, budget=1000), seed=2)
    assert len(counted.calls) == len(set(counted.calls)) == summary["states"] > 0
    assert summary["candidates_left"] == 0 and summary["budget_cut"] == 0
    mc, _ = label_mc(traces, WorldPolicy(), rollouts=4, seed=2)
    pairs = [
        (a.label("mcts").score, b.label("mc_soft").score)
        for t, u in zip(labelled, mc, strict=True)
        for a, b in zip(t.steps, u.steps, strict=True)
        if a.label("mcts") is not None and a.label("mcts").metadata["from"] == "state"
    ]
    assert pairs and all(x == y for x, y in pairs)


class CountingPolicy:
    """A policy that records the prefix of every call, and can fail from its ``fail_after``-th call."""

    def __init__(self, inner, fail_after: int | None = None, error: type[Exception] = RuntimeError):
        self.inner, self.name, self.fail_after, self.error = inner, inner.name, fail_after, error
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def continue_from(self, problem, prefix, n=1, *, seed=None, max_steps=None):
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise self.error(f"refused {problem.id}")
        self.calls.append((problem.id, tuple(s.text for s in prefix)))
        return self.inner.continue_from(problem, prefix, n, seed=seed, max_steps=max_steps)


@pytest.mark.parametrize("budget", [4, 12, 40])
def test_the_budget_is_never_exceeded(budget: int) -> None:
    from tests.labeling.conftest import world_traces

    traces = world_traces(20, 4, seed=5)
    labelled, summary = label_mcts(traces, WorldPolicy(), rules=Rules(rollouts=4, budget=budget))
    spent = Counter()
    for t in labelled:
        spent[t.problem.id] += t.metadata["rollouts"]["mcts"]
    assert max(spent.values()) <= budget and sum(spent.values()) == summary["rollouts"]
    if budget == 4:
        assert summary["budget_cut"] > 0 and summary["unlabelled_steps"] > 0
    (t1, *_), cut = label_mcts(three(), ScriptedPolicy(), rules=Rules(rollouts=2, budget=4))
    assert cut["rollouts"] == 4 and cut["budget_cut"] == 1  # t1's second probe would spend 6
    assert [s.label("mcts") and s.label("mcts").metadata["from"] for s in t1.steps] == [
        "state", "state", None, "final_answer",
    ]  # fmt: skip


def test_a_stopped_job_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    from tests.labeling.conftest import world_traces

    traces = world_traces(12, 3, seed=9)
    rules = Rules(rollouts=4, budget=30)
    full, _ = label_mcts(traces, WorldPolicy(), rules=rules, seed=1, run=RolloutRun(str(tmp_path / "a")))
    states = len((tmp_path / "a" / "records.jsonl").read_text().splitlines())
    with pytest.raises(RuntimeError, match="refused"):  # a crash, not one item's failure: the job stops
        run = RolloutRun(str(tmp_path / "b"), concurrency=1)
        label_mcts(
            traces, CountingPolicy(WorldPolicy(), fail_after=states // 2), rules=rules, seed=1, run=run
        )
    again = CountingPolicy(WorldPolicy())
    resumed, summary = label_mcts(traces, again, rules=rules, seed=1, run=RolloutRun(str(tmp_path / "b")))
    assert summary["states_resumed"] == states // 2 and len(again.calls) == states - states // 2
    assert undated(resumed) == undated(full)  # the two jobs started at other times


def undated(traces: list[Trace]) -> list[dict]:
    out = [t.model_dump() for t in traces]
    for t in out:
        for s in t["steps"]:
            for lab in s["labels"]:
                lab["provenance"]["created_at"] = None
    return out


def test_a_failed_problem_is_isolated_and_retried(tmp_path: Path) -> None:
    from tests.labeling.conftest import world_traces

    traces = world_traces(6, 3, seed=9)
    flaky = CountingPolicy(WorldPolicy(), fail_after=3, error=ItemError)
    run = RolloutRun(str(tmp_path / "w"), concurrency=1)
    labelled, summary = label_mcts(traces, flaky, rules=Rules(rollouts=4), run=run)
    assert summary["failed"] >= 1 and summary["failed_steps"] > 0 and "problem" in summary["failures"][0]
    failed = {f["problem"] for f in summary["failures"]}
    assert all(s.label("mcts") is None for t in labelled if t.problem.id in failed for s in t.steps)
    redone, summary = label_mcts(traces, WorldPolicy(), rules=Rules(rollouts=4), run=run)
    assert summary["failed"] == 0 and all(s.label("mcts") for t in redone for s in t.steps[:1])


def test_the_command(tmp_path: Path) -> None:
    from prmkit.cli import app
    from tests.labeling.conftest import world_traces

    write_traces(tmp_path / "in.jsonl", world_traces(8, 3, seed=4))
    out = tmp_path / "out.jsonl"
    args = ["label", "mcts", "--input", str(tmp_path / "in.jsonl"), "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--rollouts", "4", "--budget", "24", "--c-puct", "0.5"])
    assert result.exit_code == 0, result.output
    summary = yaml.safe_load((tmp_path / "out.jsonl.summary.yaml").read_text())
    assert summary["method"] == "mcts" and 0 < summary["rollouts"] <= 24 * 8
    config = yaml.safe_load((tmp_path / "out.jsonl.config.yaml").read_text())
    assert config["budget"] == 24 and config["c_puct"] == 0.5 and config["alpha"] == 0.5
    labels = [s.label("mcts") for t in read_traces(out) for s in t.steps]
    assert any(lab is not None and lab.provenance.params["rollouts"] == 4 for lab in labels)
    assert "--length-scale" in CliRunner().invoke(app, ["label", "mcts", "--help"]).output
