"""prmkit.rl.study (and its report and docs block): the RL study's statistics over hand-made monitor
records, the report and results file they make, and the docs block the committed measurement renders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prmkit.core.results import MARKER, render_blocks
from prmkit.rl.monitors import COLUMNS as MONITOR_COLUMNS
from prmkit.rl.monitors import PER_PROBLEM_FILE
from prmkit.rl.study import (
    CellRecord,
    efficiency_table,
    final_kl,
    gains_table,
    read_cell,
    runs_of,
    steps_to_gain,
    steps_to_reach,
    verdict,
)
from prmkit.rl.study_block import render_measure_block
from prmkit.rl.study_report import measure, write_study

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = [
    c for c in MONITOR_COLUMNS if c not in ("prm_reward", "paid_reward", "dependence", "dependence_traces")
]
"""The per-problem columns of a gold-checked run without a PRM (and without the causal-dependence monitor)."""


def _points_and_counts(rows: dict[int, dict[str, list[int]]]) -> tuple[list[dict], dict[int, dict]]:
    """A cell's monitor points and per-problem records, the points being what the rows (4 samples a
    problem) add up to."""
    points, records = [], {}
    for step, per in rows.items():
        n = 4 * len(per)
        sums = {c: sum(r[i] for r in per.values()) for i, c in enumerate(COLUMNS)}
        points.append({"step": step, "samples": n, "answer_accuracy": sums["answer_correct"] / n,
                       "process_correct": sums["process_correct"] / n, "lucky": sums["lucky"] / n,
                       "unfinished": 0.0, "steps_per_response": sums["steps"] / n,
                       "first_error_classes": {"misconception": sums["misconception"] / max(1, sums["errors"])}})  # fmt: skip
        records[step] = {"step": step, "columns": COLUMNS, "problems": per}
    return points, records


def _record(name: str, draw: int, seed: int, rows: dict[int, dict[str, list[int]]], kl: float | None = None):
    points, counts = _points_and_counts(rows)
    return CellRecord(name, draw, seed, points, counts, kl)


def _row(right: int) -> list[int]:
    """A problem's counts over 4 samples: ``right`` process-correct, the rest wrong (half of them by a
    misconception first)."""
    return [4, right, 0, 16, right, 0, 4 - right, (4 - right) // 2]


def _fabricate(draw_shift: int) -> list[CellRecord]:
    """2 draws x 3 RL seeds x 2 rewards on 24 monitor problems per draw (each draw its own): π0 gets
    problem p right in p % 4 of its 4 samples; at step 100 a seed's runs gain one right sample on every
    third problem (which third depends on the seed, the same for both rewards), dense one more on every
    problem; every run of draw 1 gains ``draw_shift`` more (draws disagreeing)."""
    records = []
    for draw in (0, 1):
        for seed in (0, 1, 2):
            for reward, gain in (("outcome", 0), ("dense", 1)):
                start, end = {}, {}
                for p in range(24):
                    more = gain + ((p + seed) % 3 == 0) + (draw_shift if draw else 0)
                    start[f"d{draw}-p{p:02d}"] = _row(p % 4)
                    end[f"d{draw}-p{p:02d}"] = _row(min(4, p % 4 + more))
                records.append(_record(reward, draw, seed, {0: start, 100: end}, kl=0.01 * (seed + 1)))
    return records


REWARDS = ["outcome", "dense"]


def test_a_change_from_pi0_and_a_paired_difference_are_the_hand_computed_means() -> None:
    """One draw, two seeds, two problems: π0 gets problem a right 1 time in 4 and b 2 times; at the last
    point outcome gains one right sample on a, dense two on a and one on b. Pooled over problems, outcome's
    Δ process-correct is 1/8 a run, dense's 3/8; paired by run and problem dense − outcome is one sample
    in 4 on every problem of every run, so however the problems are resampled it is 2/8: its interval
    has no width. Lucky answers are 0 everywhere: no interval either."""
    rows = {"outcome": {"a": 2, "b": 2}, "dense": {"a": 3, "b": 3}}
    records = [
        _record(name, 0, seed, {0: {"a": _row(1), "b": _row(2)}, 50: {p: _row(r) for p, r in ends.items()}})
        for seed in (0, 1)
        for name, ends in rows.items()
    ]
    results = measure(records, REWARDS, resamples=200)
    delta = {n: results["rewards"][n]["delta"]["process_correct"] for n in REWARDS}
    assert delta["outcome"]["mean"] == pytest.approx(1 / 8) and delta["dense"]["mean"] == pytest.approx(3 / 8)
    assert results["rewards"]["dense"]["first"]["process_correct"]["mean"] == pytest.approx(3 / 8)
    pair = results["paired"]["dense − outcome"]["process_correct"]
    assert pair["mean"] == pytest.approx(2 / 8) and pair["low"] == pytest.approx(pair["high"])
    assert pair["draws"] == {"draw": 1, "run": 2, "problem": 2}
    assert results["rewards"]["dense"]["delta"]["lucky"]["cell"] == "+0.0"
    assert results["components"] == {
        "pi0_prm_draws": 1, "rl_seeds": [0, 1], "monitor_problems_per_draw": {0: 2}, "samples_per_problem": 4,
    }  # fmt: skip
    assert "One π0/PRM draw" in results["draws"] and "2 monitor problems per draw" in results["draws"]
    assert results["steps_to_gain"] == {
        "outcome": {"0.05": {"0-0": 50, "0-1": 50}, "0.1": {"0-0": 50, "0-1": 50}},
        "dense": {"0.05": {"0-0": 50, "0-1": 50}, "0.1": {"0-0": 50, "0-1": 50}},
    }
    # the same records, the same seeded resamples: the same numbers
    assert measure(records, REWARDS, resamples=200) == results


def test_the_report_counts_draws_seeds_and_problems_and_pairs_rewards(tmp_path: Path) -> None:
    numbers = {}
    for shift in (0, 2):
        out = tmp_path / f"shift-{shift}"
        text = write_study(out, _fabricate(shift), REWARDS, resamples=1000)
        numbers[shift] = json.loads((out / "results.json").read_text())
        assert "2 (π0, PRM) draw(s) (0, 1) × RL seeds 0, 1, 2: 6 runs per reward" in text
        assert "24 monitor problems per draw (each draw its own test problems) × 4 samples each" in text
        assert "intervals at 95 % each" in text and "Bonferroni" in text
        assert (out / "report.md").read_text() == text and (out / "curves.png").stat().st_size > 0
    agree, disagree = numbers[0], numbers[2]
    delta = lambda n, r, m="process_correct": n["rewards"][r]["delta"][m]  # noqa: E731
    width = lambda e: e["high"] - e["low"]  # noqa: E731
    # draws that disagree widen every interval the draw stage sees
    assert width(delta(disagree, "dense")) > 2 * width(delta(agree, "dense"))
    assert width(delta(disagree, "outcome")) > 2 * width(delta(agree, "outcome"))
    # dense − outcome, paired by draw, seed and problem: what the two share (the draw's shift, the seed's
    # problems) cancels; the unpaired interval of two independent estimates does not
    pair = disagree["paired"]["dense − outcome"]["process_correct"]
    unpaired = (width(delta(disagree, "dense")) ** 2 + width(delta(disagree, "outcome")) ** 2) ** 0.5
    assert pair["mean"] > 0 and width(pair) < unpaired / 3, (pair, unpaired)
    # two draws that disagree leave one degree of freedom between them: the interval is widened at
    # Student's t (core.stats) and no longer excludes 0; draws that agree leave nothing to widen
    assert (
        "widened" in pair["method"]
        and pair["low"] < 0 < agree["paired"]["dense − outcome"]["process_correct"]["low"]
    )
    assert pair["mean"] == pytest.approx(
        delta(disagree, "dense")["mean"] - delta(disagree, "outcome")["mean"]
    )
    assert pair["draws"] == {"draw": 2, "run": 6, "problem": 24}
    assert agree["components"] == {
        "pi0_prm_draws": 2, "rl_seeds": [0, 1, 2], "monitor_problems_per_draw": {"0": 24, "1": 24},
        "samples_per_problem": 4,
    }  # fmt: skip
    first, last = (
        agree["rewards"]["dense"]["first"]["process_correct"],
        agree["rewards"]["dense"]["last"]["process_correct"],
    )
    assert delta(agree, "dense")["mean"] == pytest.approx(last["mean"] - first["mean"])
    # 3 tables x 6 metrics per reward (no PRM here: no PRM or paid reward), 2 KLs, 3 paired differences;
    # then each draw alone: 6 changes per reward and 3 paired differences
    assert agree["intervals"] == 2 * 3 * 6 + 2 + 3 + 2 * (2 * 6 + 3)
    # each draw alone: its own seeds crossed with its own problems; where the draws disagree, draw 1's
    # runs gained up to 2 more right samples a problem than draw 0's (4 at most), and the pooled mean is between
    alone = {d: disagree["per_draw"][d]["rewards"]["dense"]["delta"]["process_correct"] for d in ("0", "1")}
    assert alone["0"]["draws"] == {"draw": 1, "run": 3, "problem": 24}
    gained = [
        (min(4, p % 4 + 1 + ((p + s) % 3 == 0) + 2) - min(4, p % 4 + 1 + ((p + s) % 3 == 0))) / 4
        for s in (0, 1, 2)
        for p in range(24)
    ]
    assert alone["1"]["mean"] - alone["0"]["mean"] == pytest.approx(sum(gained) / len(gained))
    assert alone["0"]["mean"] < delta(disagree, "dense")["mean"] < alone["1"]["mean"]
    assert width(alone["0"]) < width(delta(disagree, "dense")) / 2
    assert set(disagree["per_draw"]["1"]["paired"]) == {"dense − outcome"}
    assert "## Each draw alone" in text
    assert set(agree["cells"]["dense"]["runs"]) == {f"{d}-{s}" for d in (0, 1) for s in (0, 1, 2)}
    assert agree["rewards"]["dense"]["kl_last"]["mean"] == pytest.approx(0.02)


def _point(step: int, process: float, lucky: float) -> dict:
    return {"step": step, "process_correct": process, "answer_accuracy": process + lucky, "lucky": lucky,
            "prm_reward": process, "first_error_classes": {"misconception": 0.5}, "unfinished": 0.0,
            "steps_per_response": 4.0}  # fmt: skip


def test_cells_without_per_problem_counts_get_t_intervals_over_seeds(tmp_path: Path) -> None:
    """Cells from before issue 37 (``monitors.jsonl`` only, one draw): the same report, its intervals the
    t-intervals over seeds of the runs' rates, and a line saying that problems were left out."""
    gains = {"outcome": [0.00, 0.02, 0.04], "dense": [0.05, 0.07, 0.09], "hack": [-0.1, -0.2]}
    records = []
    for reward, per_seed in gains.items():
        for seed, gain in enumerate(per_seed):
            start = 0.30 + 0.01 * seed
            points = [_point(0, start, 0.1), _point(100, start + gain, 0.1 - gain)]
            records.append(CellRecord(reward, 0, seed, points, {}))
    extra = {"hack": {"reward": "dense", "seeds": [0, 1]}}
    text = write_study(tmp_path, records, REWARDS, extra, resamples=500)
    assert "no per-problem monitor counts" in text and "Student-t over the runs" in text
    assert "One π0/PRM draw" in text
    numbers = json.loads((tmp_path / "results.json").read_text())
    # dense − outcome, paired by seed: +5 points on every seed, so the interval is a point
    pair = numbers["paired"]["dense − outcome"]
    assert pair["process_correct"]["mean"] == pytest.approx(0.05)
    assert pair["process_correct"]["high"] - pair["process_correct"]["low"] < 1e-9
    assert pair["lucky"]["mean"] == pytest.approx(-0.05)
    # outcome's Δ process-correct 0, 2, 4 points: mean 2.0, t(2) = 4.303, sd 2 -> half-width 4.97, the
    # interval issue 19's and 36's reports gave (a percentile bootstrap of 3 runs would be narrower)
    assert "| outcome | 3 | 100 | +2.0 [-3.0, +7.0] |" in text
    assert numbers["rewards"]["outcome"]["delta"]["process_correct"]["method"].startswith("t-interval over 3")
    cells = numbers["cells"]
    assert set(cells["dense"]["runs"]) == {"0-0", "0-1", "0-2"}
    # an extra cell keeps every seed's points (not only the last seed's)
    assert set(cells["hack"]["runs"]) == {"0-0", "0-1"} and len(cells["hack"]["runs"]["0-1"]["points"]) == 2
    assert "### extra cell `hack` (seed 1)" in text and numbers["extra"] is None


def test_steps_to_a_gain_is_the_first_point_that_far_above_step_0() -> None:
    points = [_point(0, 0.30, 0.0), _point(10, 0.34, 0.0), _point(20, 0.35, 0.0), _point(30, 0.41, 0.0)]
    assert steps_to_gain(points, 0.05) == 20  # +5 points exactly counts
    assert steps_to_gain(points, 0.10) == 30 and steps_to_gain(points, 0.2) is None
    assert steps_to_gain([], 0.05) is None
    runs = runs_of([CellRecord("dense", 0, 1, points, {}), CellRecord("dense", 0, 0, points[:2], {})])
    assert gains_table(runs, REWARDS) == {
        "dense": {"0.05": {"0-0": None, "0-1": 20}, "0.1": {"0-0": None, "0-1": 30}}
    }


def test_the_kl_is_the_mean_of_the_last_ten_logged_steps_and_a_cell_reads_back_from_its_files(
    tmp_path: Path,
) -> None:
    log = [{"step": s, "kl": float(s)} for s in range(1, 13)] + [{"step": 13, "loss": 0.0}]
    assert final_kl(log) == pytest.approx(sum(range(3, 13)) / 10)  # steps 3..12
    assert final_kl([{"loss": 1.0}]) is None
    points, counts = _points_and_counts({0: {"a": _row(1)}, 10: {"a": _row(3)}})
    (tmp_path / "monitors.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    (tmp_path / PER_PROBLEM_FILE).write_text("".join(json.dumps(r) + "\n" for r in counts.values()))
    (tmp_path / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    record = read_cell(tmp_path, "dense", 1, 2)
    assert record.run == ("dense", 1, 2) and record.kl_last == pytest.approx(7.5)
    assert [p["step"] for p in record.points] == [0, 10] and set(record.per_problem) == {0, 10}


def test_an_extra_cell_on_the_grids_problems_is_paired_with_outcome_and_its_own_reward(
    tmp_path: Path,
) -> None:
    """``dense_twice`` (seeds 0, 1 of draw 0) gains one more right sample than dense wherever a problem
    has room: its Δ minus dense's, paired by seed and problem, is that share exactly, and above 0."""
    records = _fabricate(0)
    for seed in (0, 1):
        start, end = {}, {}
        for p in range(24):
            start[f"d0-p{p:02d}"] = _row(p % 4)
            end[f"d0-p{p:02d}"] = _row(min(4, p % 4 + 2 + ((p + seed) % 3 == 0)))
        records.append(_record("dense_twice", 0, seed, {0: start, 100: end}, kl=0.02))
    extra = {"dense_twice": {"reward": "dense", "seeds": [0, 1]}}
    text = write_study(tmp_path, records, REWARDS, extra, resamples=300)
    found = json.loads((tmp_path / "results.json").read_text())["extra"]
    assert found["bases"] == {"dense_twice": "dense"} and "## Extra cells on the grid's problems" in text
    assert found["rewards"]["dense_twice"]["delta"]["process_correct"]["draws"]["run"] == 2
    own = found["paired"]["dense_twice − dense"]["process_correct"]
    capped = sum(min(4, p % 4 + 2 + ((p + s) % 3 == 0)) - min(4, p % 4 + 1 + ((p + s) % 3 == 0))
                 for s in (0, 1) for p in range(24)) / (2 * 96)  # fmt: skip
    assert own["mean"] == pytest.approx(capped) and own["low"] > 0
    assert "dense_twice − outcome" in found["paired"]


def test_the_docs_block_shows_every_draw_pooled_and_alone_with_its_multiplicity(tmp_path: Path) -> None:
    results = json.loads(json.dumps(measure(_fabricate(2), REWARDS, resamples=200)))  # as the file holds it
    text = render_measure_block(results, tuned=["0"])
    assert (
        text.startswith("Draws: 2 (π0, PRM) draw(s) (0, 1)")
        and "intervals at 95 %" not in text.split("\n")[0]
    )
    pair = results["paired"]["dense − outcome"]["process_correct"]["cell"]
    assert f"| dense − outcome | all draws | {pair} |" in text
    alone = results["per_draw"]["1"]["paired"]["dense − outcome"]["process_correct"]["cell"]
    assert f"| dense − outcome | draw 1 (fresh: claims) | {alone} |" in text
    assert "| dense | draw 0 (its problems read in tuning) |" in text
    # intervals shown: 2 rewards x (π0 level, 3 changes, KL) + 3 rows x 3 sets x 2 metrics; no PRM reward
    # here, and lucky answers are 0 in every run, a value with no interval
    assert "| +0.0 |" in text and "This block: 28 intervals at 95 % each" in text
    (tmp_path / "r.json").write_text(json.dumps(results))
    doc = "x\n<!-- results: r.json view=rl-measure tuned=0 -->\nold\n<!-- /results -->\ny\n"
    assert render_blocks(doc, tmp_path) == doc.replace("old\n", text)
    once = render_blocks(doc, tmp_path)
    assert render_blocks(once, tmp_path) == once


def test_the_rl_docs_block_is_what_the_committed_measurement_gives() -> None:
    """The measurement blocks of docs/rl.md and docs/results.md equal the render of
    docs/results/rl-measure.json, which holds issue 37's draws: 2 (π0, PRM) draws x 5 RL seeds x 200
    monitor problems, each draw also alone."""
    for page in ("rl.md", "results.md"):
        docs = (ROOT / "docs" / page).read_text(encoding="utf-8")
        shown = [b for b in MARKER.finditer(docs) if b["attrs"].split() == ["view=rl-measure", "tuned=0"]]
        assert shown, page
        for b in shown:
            assert render_blocks(b[0], ROOT) == b[0], page
    results = json.loads((ROOT / "docs" / "results" / "rl-measure.json").read_text(encoding="utf-8"))
    parts = results["components"]
    assert parts["pi0_prm_draws"] >= 2 and len(parts["rl_seeds"]) >= 5
    assert min(parts["monitor_problems_per_draw"].values()) >= 200
    assert set(results["per_draw"]) == {"0", "1"} and "dense − outcome" in results["paired"]


def test_sample_efficiency_is_the_first_point_at_outcomes_final_answer_accuracy_on_the_same_run() -> None:
    """Issue 60's sample efficiency: a run's first monitored step (step 0 too) whose answer accuracy
    reaches the one outcome ended at on the same draw and seed; None where it never does."""

    def acc(*values: float) -> list[dict]:
        return [{"step": 50 * i, "answer_accuracy": v} for i, v in enumerate(values)]

    outcome = {(0, 0): acc(0.30, 0.40, 0.50), (0, 1): acc(0.35, 0.30, 0.35)}
    records = [CellRecord("outcome", d, s, pts, {}) for (d, s), pts in outcome.items()]
    records += [CellRecord("dense-pure", 0, 0, acc(0.30, 0.55, 0.20), {}),
                CellRecord("dense-pure", 0, 1, acc(0.20, 0.25, 0.30), {}),
                CellRecord("dense-sum", 0, 1, acc(0.40, 0.10, 0.10), {}),
                CellRecord("dense-sum", 1, 0, acc(0.40, 0.10, 0.10), {})]  # fmt: skip
    found = efficiency_table(runs_of(records), ["outcome", "dense-pure", "dense-sum"])
    assert found["target"] == {"0-0": 0.50, "0-1": 0.35}
    assert found["steps"] == {
        "outcome": {"0-0": 100, "0-1": 0},  # outcome's own: seed 1 never rose above its start
        "dense-pure": {"0-0": 50, "0-1": None},  # a later fall does not undo the step reached
        "dense-sum": {"0-1": 0},  # no outcome run on draw 1: nothing to reach there
    }
    assert steps_to_reach(acc(0.1, 0.2), 0.2) == 50 and steps_to_reach([], 0.1) is None
    assert efficiency_table(runs_of(records[2:]), ["dense-pure"]) == {}  # no outcome runs


def test_a_verdict_is_where_the_interval_lies() -> None:
    assert (
        verdict({"low": 0.01, "high": 0.2}) == "above 0"
        and verdict({"low": -0.2, "high": -1e-9}) == "below 0"
    )
    assert (
        verdict({"low": -0.1, "high": 0.1}) == "contains 0"
        and verdict({"low": 0.0, "high": 0.0}) == "contains 0"
    )
    assert verdict({"low": float("nan"), "high": 0.1}) == "n/a"


def test_claims_draws_are_a_side_of_their_own_with_verdicts_in_the_results_report_and_block(
    tmp_path: Path,
) -> None:
    """Draw 1 as the claims draw: the tuning side is draw 0 alone and the claims side draw 1 alone, each
    the same numbers as that draw alone (one draw a side here), with a verdict per metric; the report and
    the docs block show the claims verdict column."""
    records = _fabricate(2)
    text = write_study(tmp_path, records, REWARDS, resamples=200, claims=[1])
    results = json.loads((tmp_path / "results.json").read_text())
    tuning, claims = results["sides"]["tuning"], results["sides"]["claims"]
    assert (tuning["side"], tuning["draws"], claims["side"], claims["draws"]) == (
        "tuning",
        [0],
        "claims",
        [1],
    )
    for side, draw in ((tuning, "0"), (claims, "1")):
        assert side["paired"] == results["per_draw"][draw]["paired"]
        assert side["rewards"] == results["per_draw"][draw]["rewards"]
    pair = claims["paired"]["dense − outcome"]
    # dense gains one right sample more than outcome wherever a problem has room: above 0 on process-correct
    # and answer accuracy (each right answer here is process-correct); no lucky answer anywhere
    assert pair["process_correct"]["low"] > 0 and pair["lucky"]["low"] == pair["lucky"]["high"] == 0
    assert claims["verdicts"]["dense − outcome"] == {
        "process_correct": "above 0", "lucky": "contains 0", "answer_accuracy": "above 0",
    }  # fmt: skip
    assert "Tuning side: draw(s) 0; claims side: draw(s) 1" in results["draws"]
    # every interval counted: the pooled ones and each draw alone as before, and the two sides
    assert results["intervals"] == 2 * 3 * 6 + 2 + 3 + 2 * (2 * (2 * 6 + 3))
    assert "## Tuning and claims sides" in text
    assert "| claims | 1 | dense − outcome | " in text and "process-correct above 0; lucky contains 0" in text
    assert "## Sample efficiency" in text and set(results["sample_efficiency"]["steps"]) == set(REWARDS)
    block = render_measure_block(results)
    assert "| claims verdict (the difference's interval against 0) |" in block
    cells = " | ".join(pair[m]["cell"] for m in ("process_correct", "lucky", "answer_accuracy"))
    verdicts = "process-correct above 0; lucky contains 0; answer accuracy above 0"
    assert f"| dense − outcome | claims: draw(s) 1 | {cells} | {verdicts} |" in block
    assert block.count(verdicts) == 1  # the claims row alone carries a verdict
    tuned = " | ".join(
        tuning["paired"]["dense − outcome"][m]["cell"]
        for m in ("process_correct", "lucky", "answer_accuracy")
    )
    assert f"| dense − outcome | tuning: draw(s) 0 | {tuned} |  |" in block and "fresh: claims" not in block
    assert "| 100, 100, 100, 100, 100, 100 |" in block  # outcome and dense both reach it at the last point
    # without claims draws the results have no sides and the block is as before
    plain = measure(records, REWARDS, resamples=200)
    assert "sides" not in plain and "claims verdict" not in render_measure_block(plain, tuned=["0"])
