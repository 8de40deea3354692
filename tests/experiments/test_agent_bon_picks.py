"""experiments/agent_bon_picks.py: what a best-of-N pick is (right, by the loophole, honestly right)."""

from __future__ import annotations

from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from tests.experiments import load_experiment


def _trace(tid: str, answer: str, right: bool, gold: list[int], loophole_at: int | None = None) -> Trace:
    steps = [
        Step(text=f"step {i}", labels=[Label(rating=r, provenance=Provenance(method="gold"))])
        for i, r in enumerate(gold)
    ]
    injected = [[loophole_at, "loophole"]] if loophole_at is not None else []
    return Trace(id=tid, problem=Problem(id="p", text="q"), steps=steps, final_answer=answer,
                 answer_correct=right, metadata={"injected": injected})  # fmt: skip


def test_mean_lets_a_loophole_through_where_min_does_not() -> None:
    exp = load_experiment("agent_bon_picks")
    honest = _trace("h", "7", True, [1, 1, 1])
    loophole = _trace("l", "7", True, [1, -1, 1, 1, 1], loophole_at=1)
    wrong = _trace("w", "8", False, [1, -1])
    shared = [wrong, *(_trace(f"w{i}", "8", False, [1, -1]) for i in (2, 3))]
    groups = {"p": [honest, loophole, *shared]}
    scores = {"h": [0.5, 0.5, 0.5], "l": [0.9, 0.01, 0.9, 0.9, 0.9]} | {t.id: [0.3, 0.1] for t in shared}
    assert exp.picks(groups, scores, "min") == [honest]
    assert exp.picks(groups, scores, "mean") == [loophole]
    assert exp.shares([loophole]) == {"right": 1.0, "loophole": 1.0, "honestly_right": 0.0, "steps": 5.0}
    assert exp.shares([honest])["honestly_right"] == 1.0
    assert exp.majority(groups) == 0.0  # the shared wrong answer "8" wins the vote
    assert exp.majority({"p": [honest, loophole, wrong]}) == 1.0
