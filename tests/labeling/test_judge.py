from __future__ import annotations

import pytest

from prmkit.core.model import Problem, Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.evaluation.processbench import evaluate_first_error
from prmkit.labeling.judge import label_judge
from prmkit.policies.critic import parse_first_error, verdict_from_first_error
from prmkit.worlds.arithmetic import SimulatedJudge


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


class _CriticJudge:
    """A critic whose every answer is the same text, read as the endpoint judge reads it."""

    def __init__(self, raw: str):
        self.raw, self.name = raw, "critic"

    def judge(self, problem: Problem, steps: list[Step]) -> JudgeVerdict:
        return verdict_from_first_error(parse_first_error(self.raw), len(steps), self.raw)


@pytest.mark.parametrize(
    ("raw", "status"),
    [("I'm sorry, I can't help with that.", "unparseable"), ("Paragraph 99: \\boxed{99}", "out_of_range")],
)
def test_answers_without_a_verdict_are_never_labelled_no_error(traces, raw, status):
    """Labelling follows ProcessBench's rule for a critique without a usable index (QwenLM/ProcessBench
    ``code/run_eval.py`` @ e8024636bcabdf8bd514440551b531d3f90dd18b: ``pred = None``, and
    ``match = (pred == label)`` is False even for label -1): nothing is labelled, the answer is counted
    under its status, and reading the labels back as a predictor gives "no prediction", not -1."""
    some = traces[:12]
    labelled, summary = label_judge(some, _CriticJudge(raw))
    assert summary[status] == len(some) and summary["ok"] == 0
    assert all(r is None for t in labelled for r in t.ratings("judge"))
    result = evaluate_first_error({"w": labelled}, "judge")
    s = result.subsets[0]
    assert s.error_free > 0 and s.acc_correct == 0.0 and s.acc_error == 0.0
    assert s.unlabelled == len(some)


class _BareJudge:
    """A third-party judge that says "no verdict" with first_error None and no status."""

    name = "bare"

    def judge(self, problem: Problem, steps: list[Step]) -> JudgeVerdict:
        return JudgeVerdict(ratings=[None] * len(steps), first_error=None)


def test_a_verdict_without_first_error_labels_nothing(traces):
    labelled, summary = label_judge(traces[:5], _BareJudge())
    assert summary["unparseable"] == 5 and summary["ok"] == 0
    assert all(r is None for t in labelled for r in t.ratings("judge"))
