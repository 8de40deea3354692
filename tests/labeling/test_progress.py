"""Progress labels: each step's change in a prover's success chance (prmkit.labeling.progress)."""

from __future__ import annotations

import pytest

from prmkit.core.model import Continuation, Problem, Step, Trace
from prmkit.labeling.mc import label_mc
from prmkit.labeling.progress import ProgressConfig, label_progress, run_progress, step_label

SUCCESSES = {0: 6, 1: 6, 2: 2, 3: 2}
"""Rollouts (of 8) reaching the answer from the first k steps of the trace below: step 3 (index 2) is
the one that hurts; the trace ends with a wrong answer."""


class ScriptedProver:
    """A policy whose success chance from a prefix is set by its length (SUCCESSES), exactly."""

    name = "scripted"

    def continue_from(self, problem, prefix, n=1, *, seed=None, max_steps=None):
        wins = SUCCESSES[len(prefix)] * n // 8
        return [Continuation(steps=[Step(text="x")], final_answer="4" if i < wins else "5") for i in range(n)]


def scripted_trace(tid: str = "t") -> Trace:
    steps = [Step(text=f"step {i}") for i in range(4)]
    return Trace(id=tid, problem=Problem(id="p", text="2+2?", answer="4"), steps=steps, final_answer="3")


def test_the_two_rules() -> None:
    assert step_label(0.75, 0.75, "advantage", 0.25, 0.8) == (1, 0.5)
    assert step_label(0.25, 0.75, "advantage", 0.25, 0.8) == (-1, 0.25)
    assert step_label(0.5, 0.75, "advantage", 0.25, 0.8) == (1, 0.375)  # -0.25 is not below -0.25
    assert step_label(0.25, 0.75, "rpe", 0.25, 0.8) == (-1, pytest.approx(1 / 3))
    assert step_label(0.7, 0.8, "rpe", 0.25, 0.8) == (1, pytest.approx(0.875))
    assert step_label(0.0, 0.0, "rpe", 0.25, 0.8) == (1, 1.0)  # nothing left to lose: the error lies earlier
    assert step_label(1.0, 0.5, "rpe", 0.25, 0.8) == (1, 1.0)


def test_advantages_from_the_empty_prefix_to_the_stated_answer() -> None:
    (t,), summary = label_progress([scripted_trace()], ScriptedProver(), rollouts=8)
    q = [s.label("progress_hard").metadata["q"] for s in t.steps]
    assert q == [0.75, 0.25, 0.25, 0.0]  # the last step's Q is its answer's correctness, no rollouts
    assert [s.label("progress_hard").metadata["q_prev"] for s in t.steps] == [0.75, 0.75, 0.25, 0.25]
    assert [s.label("progress_hard").rating for s in t.steps] == [1, -1, 1, 1]  # last: A = -0.25, not below
    assert [s.label("progress_soft").score for s in t.steps] == [0.5, 0.25, 0.5, 0.375]
    assert t.first_error("progress_hard") == 1
    assert summary["rollouts"] == 8 * 4 == t.metadata["rollouts"]["progress"]  # prefixes 0..3, answer free
    assert summary["negative_steps"] == 1 and summary["steps"] == 4


def test_rpe_and_a_best_of_k_prover() -> None:
    (t,), _ = label_progress([scripted_trace()], ScriptedProver(), rollouts=8, rule="rpe")
    assert [s.label("progress_hard").rating for s in t.steps] == [1, -1, 1, -1]  # 0 / 0.25 < 0.8
    (t,), _ = label_progress([scripted_trace()], ScriptedProver(), rollouts=8, best_of=2, prover={"note": 1})
    q = [s.label("progress_hard").metadata["q"] for s in t.steps]
    assert q == [0.9375, 0.4375, 0.4375, 0.0]  # 1 - (1 - q)^2; a stated answer stays what it is
    params = t.steps[0].label("progress_hard").provenance.params
    assert (
        params["prover"] == {"policy": "scripted", "best_of": 2, "note": 1} and params["rule"] == "advantage"
    )


def test_the_same_rollouts_as_monte_carlo(traces) -> None:
    """With one policy and seed, progress reads Monte Carlo's very rollouts: its Q of a step's prefix is
    MC's soft label of that step, and only the rule differs."""
    from prmkit.worlds.arithmetic import WorldPolicy

    some = traces[:30]
    mc, mc_summary = label_mc(some, WorldPolicy(), rollouts=4, seed=5)
    progress, summary = label_progress(some, WorldPolicy(), rollouts=4, seed=5)
    for a, b in zip(mc, progress, strict=True):
        for sa, sb in zip(a.steps, b.steps, strict=True):
            assert sb.label("progress_hard").metadata["q"] == pytest.approx(sa.label("mc_soft").score)
    # the same prefixes, and the problem alone once per problem
    assert summary["prefixes"] == mc_summary["prefixes"] + len({t.problem.id for t in some})


def test_progress_finds_more_recoverable_agent_errors_than_monte_carlo() -> None:
    """The agent world's errors are often recoverable: MC's hard label ("can it still win?") stays +1 on
    them, while the step's advantage drops. Measured on 100 tasks x 4 trajectories (seed 11)."""
    from prmkit.worlds.registry import world

    w = world("agent")
    traces = w.gold_label(
        w.sample_traces(w.generate_problems(100, seed=11), 4, seed=11, policy=w.policy(None))
    )
    policy = w.make_policy()
    mc, _ = label_mc(traces, policy, seed=11)
    progress, _ = label_progress(traces, policy, seed=11)

    def on_error_traces(labelled: list[Trace], source: str) -> float:
        errors = [t for t in labelled if t.first_error("gold") != -1]
        return sum(t.first_error(source) == t.first_error("gold") for t in errors) / len(errors)

    assert on_error_traces(progress, "progress_hard") > on_error_traces(mc, "mc_hard") + 0.1


def test_the_config_checks_the_prover_knobs(tmp_path) -> None:
    with pytest.raises(ValueError, match="only used by an embedded world's policy"):
        ProgressConfig(
            input=tmp_path / "a", output=tmp_path / "b", policy="hf", model="m", policy_knobs={"x": 1}
        )
    with pytest.raises(ValueError, match="not_a_knob"):
        ProgressConfig(input=tmp_path / "a", output=tmp_path / "b", policy_knobs={"not_a_knob": 1})
    config = ProgressConfig(
        input=tmp_path / "a", output=tmp_path / "b", policy_knobs={"misconceptions": 0.0}, temperature=0.7
    )
    prover = config.build_policy()
    assert prover.config.misconceptions == 0.0 and prover.config.temperature == 0.7
    assert config.prover() == {
        "policy": "arithmetic",
        "temperature": 0.7,
        "best_of": 1,
        "knobs": {"misconceptions": 0.0},
    }


def test_run_progress_writes_labels_and_resumes(traces, tmp_path) -> None:
    from prmkit.core.dataset import write_traces
    from prmkit.formats.inputs import read_traces

    src = tmp_path / "in.jsonl"
    write_traces(src, traces[:20])
    config = ProgressConfig(input=src, output=tmp_path / "out.jsonl", rollouts=4, rule="rpe")
    first = run_progress(config, show_progress=False)
    again = run_progress(config, show_progress=False)
    assert again["prefixes_resumed"] == again["prefixes"] == first["prefixes"]
    out = read_traces(tmp_path / "out.jsonl")
    assert all(s.label("progress_soft") is not None for t in out for s in t.steps)
    assert (tmp_path / "out.jsonl.summary.yaml").exists()


def test_a_recipe_sets_progress_up_as_it_sets_monte_carlo(tmp_path) -> None:
    """The labels section's shared settings (rollouts, seed, rollout policy) reach progress, and its own
    options through ``labels.options.progress``; consensus's ``mode`` is not progress's ``rule``."""
    from prmkit.pipeline.recipe import LabelsSection

    section = LabelsSection(
        methods=["mc", "progress", "judge", "consensus"],
        rollouts=4,
        seed=3,
        options={"progress": {"rule": "rpe", "policy_knobs": {"misconceptions": 0.0}}},
    )
    config = section.config("progress", {"input": tmp_path / "a", "output": tmp_path / "b"})
    assert (config.rollouts, config.seed, config.policy, config.rule) == (4, 3, "arithmetic", "rpe")
    assert config.policy_knobs == {"misconceptions": 0.0}
