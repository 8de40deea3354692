"""`prmkit eval processbench` shows how far it got: a bar over the traces it predicts, per subset."""

from __future__ import annotations

from prmkit.evaluation.processbench import CHUNK, evaluate_first_error
from prmkit.evaluation.suite import world_traces


class CountingScorer:
    """Scores every step 0.9 and records the size of every call."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def score(self, traces):
        self.calls.append(len(traces))
        return [[0.9] * len(t.steps) for t in traces]


def test_a_progress_bar_counts_every_trace_and_scores_in_chunks(capsys) -> None:
    traces = world_traces(40, 4, seed=1, split="test")  # 160 traces: more than two chunks
    scorer = CountingScorer()
    quiet = evaluate_first_error({"world": traces}, scorer, threshold=0.5)
    assert "eval: world" not in capsys.readouterr().err
    loud = evaluate_first_error({"world": traces}, scorer, threshold=0.5, show_progress=True)
    err = capsys.readouterr().err
    assert "eval: world" in err and f"{len(traces)}/{len(traces)}" in err
    assert scorer.calls == [CHUNK, CHUNK, len(traces) - 2 * CHUNK] * 2  # the same calls, bar or not
    assert loud.to_dict()["subsets"] == quiet.to_dict()["subsets"]  # chunking changes nothing
