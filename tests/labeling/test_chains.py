"""ThinkPRM's process-based filtering: a teacher's chain is kept only where its verdicts agree with a
small labelled set, and what the filter read is counted."""

from __future__ import annotations

import pytest

from prmkit.labeling.chains import agrees, process_filter, teacher_chain
from prmkit.labeling.judge import label_judge
from prmkit.policies import load_judge
from prmkit.training.critic import filter_gold_use
from prmkit.worlds.registry import world

TEACHER = "judge:arithmetic-teacher"


@pytest.fixture(scope="module")
def labelled():
    traces = world("arithmetic").traces(60, 2, 0, "train")
    out, _ = label_judge(
        traces, load_judge("arithmetic-teacher", seed=0, miss_rate=0.3, false_alarm_rate=0.1)
    )
    return out


def _disagrees_before_the_first_error(trace, checks) -> bool:
    """The rule written out step by step: some gold-labelled step up to gold's first error is judged the
    other way by the chain."""
    first = trace.first_error("gold")
    last = len(trace.steps) - 1 if first == -1 else first
    return any(checks[i][1] != (trace.steps[i].label("gold").verdict() != -1) for i in range(last + 1))


def test_the_filter_keeps_exactly_the_chains_that_agree_with_the_labelled_set(labelled):
    kept, summary = process_filter(labelled, TEACHER, "gold")
    assert summary["chains"] == summary["filter_traces"] == len(labelled)
    assert summary["filter_labels"] == sum(len(t.steps) for t in labelled)
    assert 0 < summary["kept"] == len(kept) < len(labelled)  # a noisy teacher: some chains go
    kept_ids = {t.id for t, _ in kept}
    for trace in labelled:
        checks = teacher_chain(trace, TEACHER)
        assert (trace.id in kept_ids) == (not _disagrees_before_the_first_error(trace, checks))
        assert agrees(checks, trace, "gold") == (trace.id in kept_ids)


def test_a_filter_set_of_a_given_size_is_drawn_by_the_seed_and_counted(labelled):
    kept, summary = process_filter(labelled, TEACHER, "gold", size=20, seed=3)
    again, _ = process_filter(labelled, TEACHER, "gold", size=20, seed=3)
    other, _ = process_filter(labelled, TEACHER, "gold", size=20, seed=4)
    assert summary["filter_traces"] == 20 and len(kept) <= 20
    assert [t.id for t, _ in kept] == [t.id for t, _ in again] != [t.id for t, _ in other]
    uses = filter_gold_use(summary)
    assert [(u.use, u.source, u.traces, u.labels) for u in uses] == [
        ("chain_filter", "gold", 20, summary["filter_labels"])
    ]
    assert filter_gold_use({**summary, "filter_source": "human"}) == []  # named in the card, not gold


def test_without_a_filter_every_whole_chain_is_kept_and_traces_without_one_are_not(labelled):
    bare = world("arithmetic").traces(3, 1, 9, "train")
    kept, summary = process_filter([*labelled, *bare], TEACHER, None)
    assert summary["chains"] == summary["kept"] == len(kept) == len(labelled)
    assert "filter_traces" not in summary
    assert teacher_chain(bare[0], TEACHER) is None
