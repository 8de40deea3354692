"""The ``critic`` convention on a saved critic-head checkpoint: it writes its own checks, reads the
verdict, and spends more verifier compute (``k`` sampled chains) deterministically under a seed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prmkit.core.errors import InputError
from prmkit.scoring import load_scorer
from prmkit.testing import make_random_prm
from prmkit.worlds.registry import world


@pytest.fixture(scope="module")
def critic(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_random_prm(
        tmp_path_factory.mktemp("critic") / "prm", layers=2, width=32, heads=2, head="critic"
    )


@pytest.fixture(scope="module")
def traces():
    return world("arithmetic").traces(3, 2, 0, "test")


def test_a_critic_checkpoint_is_read_by_the_checks_it_writes(critic, traces):
    scorer = load_scorer(critic, verify_tokens=6)
    assert scorer.convention.name == "critic" and scorer.convention.options.k == 1
    rows = scorer.score(traces)
    assert [len(r) for r in rows] == [len(t.steps) for t in traces]
    assert all(0 < s < 1 for r in rows for s in r)
    alone = [scorer.score([t])[0] for t in traces]  # left-padded generation: the batch changes nothing
    assert [s for r in alone for s in r] == pytest.approx([s for r in rows for s in r], abs=1e-5)


def test_k_sampled_chains_are_combined_and_reproducible_under_a_seed(critic, traces):
    options = {"verify_k": 4, "verify_temperature": 1.0, "verify_tokens": 6}
    first = load_scorer(critic, verify_seed=3, **options).score(traces)
    assert load_scorer(critic, verify_seed=3, **options).score(traces) == first
    assert load_scorer(critic, verify_seed=4, **options).score(traces) != first
    greedy = load_scorer(critic, verify_tokens=6).score(traces)
    assert first != greedy  # the mean over 4 sampled chains, not the greedy chain's read-out
    votes = load_scorer(critic, verify_seed=3, verify_combine="vote", **options).score(traces)
    assert {round(4 * s, 6) for r in votes for s in r} <= {0.0, 1.0, 2.0, 3.0, 4.0}  # shares of 4 chains


def test_verify_options_are_refused_where_they_cannot_apply(critic, tmp_path):
    with pytest.raises(ValueError, match="identical greedy chains"):
        load_scorer(critic, verify_k=4)  # k > 1 at temperature 0
    classifier = make_random_prm(tmp_path / "classifier", layers=2, width=32, heads=2)
    with pytest.raises(InputError, match="only the critic head writes verifications"):
        load_scorer(classifier, verify_k=2)
    with pytest.raises(ValueError, match="less than or equal to 64"):  # the cost is bounded before any work
        load_scorer(critic, verify_k=65, verify_temperature=1.0)


def test_the_model_cards_transformers_recipe_scores_as_the_scorer_does(critic, traces, tmp_path):
    from prmkit.cards import write_model_card

    scorer = load_scorer(critic)
    trace = traces[0]
    ours = scorer.score([trace])[0]
    write_model_card(critic, scorer.convention.spec, None)
    snippet = re.search(r"```python\n(.*?)```", (Path(critic) / "README.md").read_text(), re.S).group(1)
    scope = {"problem": trace.problem.text, "steps": [s.text for s in trace.steps]}
    exec(snippet.replace('problem, steps = "...", ["step one", "step two"]', ""), scope)
    assert scope["step_scores"] == pytest.approx(ours, abs=1e-5)
