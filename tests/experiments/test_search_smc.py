"""experiments/search_smc.py: a small run compares SMC with beam and best-of-N with paired intervals, its
judge scorer is a prefix-correctness PRM in [0, 1], and docs/search.md shows what the committed file
renders."""

from __future__ import annotations

from prmkit.search.common import Compute, sample_candidates
from prmkit.search.views import search_smc
from prmkit.worlds.arithmetic import WorldPolicy, check_trace, generate_problems
from tests.experiments import load_experiment, shown


def test_the_judge_scorer_is_a_noisy_prefix_correctness_prm() -> None:
    exp = load_experiment("search_smc")
    problems = generate_problems(6, seed=2, split="test")
    traces = [t for k, p in enumerate(problems) for t in sample_candidates(WorldPolicy(), p, 4, k, Compute())]
    rows = exp.JudgeScorer().score(traces)
    agree = 0
    for trace, row in zip(traces, rows, strict=True):
        assert len(row) == len(trace.steps) and all(0.0 <= s <= 1.0 for s in row)
        assert row == sorted(row, reverse=True)  # a judge that rejects a step rejects every later prefix
        first = check_trace(trace).first_error
        agree += (row[-1] == 1.0) == (first < 0)
    assert agree >= 0.6 * len(traces)  # noisy, but mostly the gold verdict


def test_a_small_run_reports_every_method_paired_with_smc() -> None:
    exp = load_experiment("search_smc")
    result = exp.run_set(7, problems=6, seeds=2, sizes=[4])
    for key in ("judge/4", "oracle/4"):
        rows = result["rows"][key]
        assert set(rows) == {*exp.METHODS, exp.EQUAL_STEPS} and rows[exp.EQUAL_STEPS]["n"] >= 1
        for method, row in rows.items():
            assert row["accuracy"]["low"] <= row["accuracy"]["mean"] <= row["accuracy"]["high"]
            assert 0.0 <= row["accuracy"]["mean"] <= 1.0  # the interval, widened for 2 seeds, may pass 1
            assert row["accuracy"]["draws"] == {"seed": 2, "problem": 6}
            assert row["steps_generated"] > 0 and row["steps_scored"] > 0
            assert ("smc_minus" in row) == (method != exp.REFERENCE)


def test_the_docs_tables_are_what_the_committed_file_gives() -> None:
    tables = shown("docs/search.md", "search-smc")
    assert [(block.file, block.attrs["set"]) for block, _ in tables] == [
        ("docs/results/search-smc.json", "claims"),
        ("docs/results/search-smc.json", "tuning"),
    ]
    assert all(search_smc(block) == body for block, body in tables)
