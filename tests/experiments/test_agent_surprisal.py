"""experiments/agent_surprisal.py: AUC by gold class, and the vote with loophole trajectories left out."""

from __future__ import annotations

import pytest

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from tests.experiments import load_experiment


def _trace(tid: str, answer: str, right: bool, gold: list[tuple[int, str]]) -> Trace:
    steps = []
    for i, (rating, kind) in enumerate(gold):
        metadata = {"class": kind} if rating == -1 else {}
        label = Label(rating=rating, provenance=Provenance(method="gold"), metadata=metadata)
        steps.append(Step(text=f"step {i}", labels=[label]))
    return Trace(id=tid, problem=Problem(id="p", text="q", answer="7"), steps=steps, final_answer=answer,
                 answer_correct=right)  # fmt: skip


def test_auc_counts_ties_half_and_classes_pool_into_errors() -> None:
    exp = load_experiment("agent_surprisal")
    assert exp.auc([0.9, 0.5], [0.1, 0.5]) == pytest.approx((2 + 1.5) / 4)
    traces = [
        _trace("a", "7", True, [(1, ""), (1, ""), (0, "")]),
        _trace("b", "8", False, [(1, ""), (-1, "observation"), (-1, "premise")]),
    ]
    scores = [[0.9, 0.8, 0.1], [0.7, 0.2, 0.95]]
    aucs = exp.class_aucs(traces, scores)
    assert aucs["observation"] == (1, 1.0) and aucs["premise"] == (1, 0.0)
    assert aucs["errors"] == (2, 0.5) and "neutral" not in aucs and "right" not in aucs


def test_a_loophole_vote_is_left_out_of_the_honest_comparison() -> None:
    exp = load_experiment("agent_surprisal")
    # honest samples: two wrong "8"s outvote one right "7", unless the PRM weighs them down
    traces = [
        _trace("l", "7", True, [(-1, "loophole")]),  # gold marks its step a loophole
        _trace("w1", "8", False, [(-1, "observation")]),
        _trace("w2", "8", False, [(-1, "observation")]),
        _trace("h", "7", True, [(1, "")]),
    ]
    scores = [[1.0], [0.1], [0.1], [0.5]]
    gains = exp.vote_gains(traces, scores, 3)
    honest = gains["no loophole"]  # exactly w1, w2, h: with the loophole's "7" the vote could go either way
    assert honest["majority"]["accuracy"] == 0.0 and honest["weighted"]["accuracy"] == 1.0
    assert gains["all"]["weighted"]["accuracy"] == 1.0 and gains["all"]["majority"]["accuracy"] < 1.0
