from __future__ import annotations

from prmkit.core.model import Problem, Step
from prmkit.labeling.judge import label_judge
from prmkit.policies.critic import parse_first_error, verdict_from_first_error
from prmkit.world import SimulatedJudge


def test_world_judge_labels_agree_with_gold(traces, fe_accuracy):
    labelled, summary = label_judge(traces, SimulatedJudge(seed=0))
    acc = fe_accuracy(labelled, "judge")
    assert acc >= 0.75, acc  # measured 0.77 with the default miss 0.15 / false alarm 0.05
    assert summary["ok"] == len(traces)


class _JunkJudge:
    """A judge whose answers are sometimes junk, as real LLM critics' are."""

    name = "junk"

    def judge(self, problem: Problem, steps: list[Step]):
        raw = (
            "I think paragraph 1 is off... \\boxed{1}"
            if "1" in problem.id
            else "Let me think. The answer is unclear"
        )
        return verdict_from_first_error(parse_first_error(raw), len(steps), raw)


def test_unparseable_answers_label_nothing_and_are_counted(traces):
    labelled, summary = label_judge(traces[:30], _JunkJudge())
    bad = [t for t in labelled if "1" not in t.problem.id]
    good = [t for t in labelled if "1" in t.problem.id and len(t.steps) > 1]
    assert summary["unparseable"] == len(bad) > 0
    assert all(r is None for t in bad for r in t.ratings("judge"))
    assert all(t.first_error("judge") == 1 for t in good)
    assert good[0].steps[0].label("judge").provenance.params["raw"].endswith("\\boxed{1}")
