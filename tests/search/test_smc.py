"""Particle filtering (``prmkit smc``): weights and resampling by hand, the search on the world with its
oracle, seeds, compute accounting, the length policy, and the CLI."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_jsonl
from prmkit.core.model import Continuation, Problem, Step
from prmkit.search.bon import best_of_n
from prmkit.search.config import SmcConfig
from prmkit.search.smc import particle_weights, resample, run_smc, smc
from prmkit.worlds.arithmetic import WorldPolicy, generate_problems
from prmkit.worlds.arithmetic.oracle import OracleScorer


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    return generate_problems(12, seed=3, split="test")


def _accuracy(results) -> float:
    return sum(bool(r.correct) for r in results) / len(results)


def test_weights_are_the_softmax_of_the_scores_logits() -> None:
    # logit(s) = log odds, so softmax(logits) is the odds normalised: 0.5, 0.8, 0.2 -> 1, 4, 1/4
    assert particle_weights([0.5, 0.8, 0.2]) == pytest.approx(np.array([1, 4, 0.25]) / 5.25)
    # temperature 2 takes the square root of the odds: 1, 2, 1/2
    assert particle_weights([0.5, 0.8, 0.2], temperature=2) == pytest.approx(np.array([1, 2, 0.5]) / 3.5)
    # 0 and 1 are clipped to 1e-7 and 1 - 1e-7 (its_hub's), so a certain step still leaves the other a chance
    w = particle_weights([1.0, 0.0])
    assert w[1] == pytest.approx(((1e-7) / (1 - 1e-7)) ** 2, rel=1e-6) and w.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\], found 1\.7"):
        particle_weights([0.5, 1.7])
    with pytest.raises(ValueError, match="temperature"):
        particle_weights([0.5], temperature=0)


def test_systematic_resampling_by_hand() -> None:
    # dyadic weights: every pointer (u + j) / 8 lands in a known bin, whatever u is
    for seed in range(5):
        drawn = resample([0.5, 0.25, 0.125, 0.125], 8, np.random.default_rng(seed), "systematic")
        assert drawn == [0, 0, 0, 0, 1, 1, 2, 3]
    # p = (0.3, 0.7), k = 4: u = 0.63696... from default_rng(0), pointers 0.159, 0.409, 0.659, 0.909;
    # the edge at 0.3 puts one pointer in bin 0 and three in bin 1
    assert np.random.default_rng(0).random() == pytest.approx(0.6369616873214543)
    assert resample([0.3, 0.7], 4, np.random.default_rng(0), "systematic") == [0, 1, 1, 1]
    # each count is within one of k * p (floor or ceil), for any seed
    p = particle_weights([0.5, 0.8, 0.2, 0.6, 0.9])
    for seed in range(20):
        counts = np.bincount(resample(p, 7, np.random.default_rng(seed), "systematic"), minlength=5)
        assert counts.sum() == 7 and np.all(np.abs(counts - 7 * p) < 1)
    with pytest.raises(ValueError, match="resampling must be one of"):
        resample(p, 3, np.random.default_rng(0), "stratified")


def test_multinomial_resampling_matches_its_probabilities() -> None:
    p = np.array([1, 4, 0.25]) / 5.25
    drawn = resample(p, 21_000, np.random.default_rng(7), "multinomial")
    counts = np.bincount(drawn, minlength=3)
    sd = np.sqrt(21_000 * p * (1 - p))
    assert np.all(np.abs(counts - 21_000 * p) < 4 * sd)  # expected 4000, 16000, 1000
    assert drawn == sorted(drawn)
    # seeded: the same generator state gives the same draw
    assert resample(p, 5, np.random.default_rng(3), "multinomial") == resample(
        p, 5, np.random.default_rng(3), "multinomial"
    )


class _Forking:
    """First step 'bad' for odd samples of a call, 'ok' otherwise; then 'ok'; answers '7' after 3 steps."""

    name = "forking"

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def continue_from(self, problem, prefix: Sequence[Step], n=1, *, seed=None, max_steps=None):
        self.calls.append((len(prefix), n))
        end = 3 if max_steps is None else min(3, len(prefix) + max_steps)
        out = []
        for i in range(n):
            steps = [Step(text="bad" if pos == 0 and i % 2 else "ok") for pos in range(len(prefix), end)]
            done = end >= 3
            out.append(
                Continuation(
                    steps=steps, final_answer="7" if done else None, finished=done, num_tokens=2 * len(steps)
                )
            )
        return out


class _PrefixScorer:
    """0.999 per step until a 'bad' step, 0.001 from it on (a prefix-correctness PRM)."""

    name = "prefix"

    def score(self, traces):
        out = []
        for t in traces:
            bad = next((i for i, s in enumerate(t.steps) if s.text == "bad"), len(t.steps))
            out.append([0.999 if i < bad else 0.001 for i in range(len(t.steps))])
        return out


def test_resampling_by_weight_removes_doubted_particles_and_accounts() -> None:
    problem = Problem(id="p", text="q", answer="7")
    policy = _Forking()
    (r,) = smc([problem], policy, _PrefixScorer(), n=4, seed=1)
    # round 1 draws two 'ok' and two 'bad' first steps; the odds 999 : 1/999 leave 'bad' ~1e-6 of the mass
    assert all(s.text == "ok" for c in r.candidates for s in c.steps)
    assert r.correct is True and r.score == pytest.approx(0.999)
    # three rounds of four one-step continuations; each round scores the four prefixes
    assert r.details["depth"] == 3 and r.details["finished"] == 4 and r.details["dropped_overlong"] == 0
    assert r.compute.steps_generated == 12 and r.compute.tokens_generated == 24
    assert r.compute.traces_scored == 12 and r.compute.steps_scored == 4 * 1 + 4 * 2 + 4 * 3
    assert policy.calls[0] == (0, 4)  # one call for the four particles of the empty prefix
    assert sum(n for _, n in policy.calls) == 12  # the copies of an ancestor share one call
    assert r.compute.policy_calls == len(policy.calls)


def test_a_high_temperature_flattens_the_weights() -> None:
    problem = Problem(id="p", text="q", answer="7")
    (r,) = smc([problem], _Forking(), _PrefixScorer(), n=4, temperature=1e4, resampling="systematic")
    # near-uniform weights and systematic resampling keep one copy of each of the four first steps
    firsts = Counter(c.steps[0].text for c in r.candidates)
    assert firsts == {"ok": 2, "bad": 2}


@pytest.mark.parametrize("keep_finished", [False, True])
@pytest.mark.parametrize("resampling", ["multinomial", "systematic"])
def test_smc_on_the_world_beats_one_sample(problems, keep_finished: bool, resampling: str) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    results = smc(problems, policy, oracle, n=8, keep_finished=keep_finished, resampling=resampling)
    assert _accuracy(results) > _accuracy(best_of_n(problems, policy, oracle, n=1))
    for r in results:
        assert r.method == "smc" and r.answer is not None and r.trace is not None
        assert r.details["finished"] == 8  # every slot ends as a finished particle (or a copy of one)
        assert 1 <= r.details["distinct_finished"] == len(r.candidates) <= 8
        assert r.compute.steps_generated >= len(r.trace.steps)
        assert r.compute.steps_scored >= r.compute.traces_scored >= r.details["depth"]


def test_seeded_and_independent_of_concurrency(problems) -> None:
    policy, oracle = WorldPolicy(), OracleScorer()
    a = smc(problems, policy, oracle, n=6, seed=5, concurrency=1)
    b = smc(problems, policy, oracle, n=6, seed=5, concurrency=4)
    c = smc(problems, policy, oracle, n=6, seed=6, concurrency=4)
    assert [r.summary() for r in a] == [r.summary() for r in b]
    assert [[t.steps for t in r.candidates] for r in a] == [[t.steps for t in r.candidates] for r in b]
    assert [[t.steps for t in r.candidates] for r in a] != [[t.steps for t in r.candidates] for r in c]
    assert all(r.answer is not None for r in smc(problems[:2], policy, oracle, n=4, seed=-7))  # any int


def test_max_depth_finishes_open_particles_by_rollout(problems) -> None:
    (r,) = smc(problems[:1], WorldPolicy(), OracleScorer(), n=4, max_depth=1)
    assert r.details["depth"] == 1 and r.answer is not None
    assert all(len(c.steps) > 1 for c in r.candidates)  # one step, then the rest in one rollout


class _Growing:
    """Even samples a short step, odd ones a step far too long for a small model; answers after 3."""

    name = "growing"

    def continue_from(self, problem, prefix: Sequence[Step], n=1, *, seed=None, max_steps=None):
        out = []
        for i in range(n):
            text = "add 2 and 3" if i % 2 == 0 else " ".join(["add 2 and 3"] * 40)
            steps = [Step(text=text)] * (1 if max_steps else 3 - len(prefix))
            done = len(prefix) + len(steps) >= 3
            out.append(
                Continuation(steps=steps, final_answer="5" if done else None, finished=done, num_tokens=9)
            )
        return out


def test_particles_the_model_cannot_read_are_dropped(tmp_path) -> None:
    from prmkit.scoring import load_scorer
    from prmkit.testing import make_random_prm

    scorer = load_scorer(make_random_prm(tmp_path / "prm"))
    scorer.convention.max_length = 96  # one long step does not fit
    problem = Problem(id="p", text="What is 2 + 3?", answer="5")
    (r,) = smc([problem], _Growing(), scorer, n=4)
    assert r.details["dropped_overlong"] > 0
    assert r.answer == "5" and all(len(s.text) < 20 for s in r.trace.steps)
    assert scorer.overlong == "error"  # the scorer's own policy is restored
    scorer.convention.max_length = 16  # not even the problem and one step fit: nothing to choose
    (none,) = smc([problem], _Growing(), scorer, n=4)
    assert none.trace is None and none.answer is None and none.details["dropped_overlong"] == 4


@pytest.fixture
def problem_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, generate_problems(5, seed=1, split="test"))
    return path


def test_cli_runs_smc_and_mirrors_the_api(problem_file: Path, tmp_path: Path) -> None:
    args = ["--scorer", "arithmetic-oracle", "--n", "4", "--resampling", "systematic", "--keep-finished"]
    out = tmp_path / "cli.jsonl"
    result = CliRunner().invoke(app, ["smc", str(problem_file), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["problems"] == 5 and summary["steps_generated_per_problem"] > 0
    config = SmcConfig(
        problems=problem_file,
        scorer="arithmetic-oracle",
        out=tmp_path / "api.jsonl",
        n=4,
        resampling="systematic",
        keep_finished=True,
    )
    assert run_smc(config, show_progress=False) == summary
    assert out.read_text() == (tmp_path / "api.jsonl").read_text()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {"answer", "correct", "steps_generated", "steps_scored", "dropped_overlong", "resampling"} <= set(
        rows[0]
    )
    assert rows[0]["resampling"] == "systematic" and rows[0]["aggregation"] == "last"
    bad = CliRunner().invoke(app, ["smc", str(problem_file), "-o", str(out), *args[:2], "--resampling", "x"])
    assert bad.exit_code == 2
