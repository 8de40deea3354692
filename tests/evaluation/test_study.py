"""A study's numbers over seeds and problems (prmkit.evaluation.study) from evaluation records."""

from __future__ import annotations

import numpy as np
import pytest

from prmkit.core.results import render_blocks
from prmkit.evaluation.processbench import subset_metrics
from prmkit.evaluation.study import (
    Measured,
    auroc_stat,
    f1_stat,
    markdown,
    summarize,
    widened,
)


def _measured(rng: np.random.Generator, skill: float, problems: int = 12) -> Measured:
    """Traces of ``problems`` problems (3 each, half with an error at step 1); a model that scores the
    first-error step low with probability ``skill``; best-of-N accuracies per problem."""
    preds = []
    for p in range(problems):
        for k in range(3):
            gold = 1 if (p + k) % 2 else -1
            scores = [float(rng.uniform(0.6, 1.0)) for _ in range(3)]
            if gold == 1 and rng.random() < skill:
                scores[1] = float(rng.uniform(0.0, 0.4))
            predicted = next((i for i, s in enumerate(scores) if s < 0.5), -1)
            preds.append(
                {
                    "problem": f"p{p}",
                    "subset": "world-test",
                    "gold": gold,
                    "predicted": predicted,
                    "scores": scores,
                }
            )
    bon = {
        "problems": [f"p{p}" for p in range(problems)],
        "ns": [4, 16],
        "accuracy": {
            "majority": [[0.5] * problems, [0.5] * problems],
            "oracle": [[1.0] * problems, [1.0] * problems],
            "prm:min": [list(rng.uniform(0.4, 1.0, problems)), list(rng.uniform(0.5, 1.0, problems))],
            "weighted:min": [[0.6] * problems, [0.7] * problems],
        },
    }
    return Measured(preds, bon)


def test_the_point_estimates_are_the_plain_metrics_averaged_over_seeds() -> None:
    rng = np.random.default_rng(0)
    runs = [_measured(rng, 0.8) for _ in range(3)]
    index = {f"p{p}": p for p in range(12)}
    ones = np.ones((1, 12))
    for s, run in enumerate(runs):
        gold = [r["gold"] for r in run.predictions]
        plain = subset_metrics("world-test", gold, [r["predicted"] for r in run.predictions]).f1
        assert f1_stat(runs, "world-test", index)(s, ones)[0] == pytest.approx(plain)
        # AUROC by brute force over the steps up to the first error
        pos, neg = [], []
        for r in run.predictions:
            last = 2 if r["gold"] == -1 else r["gold"]
            for i in range(last + 1):
                (pos if i == r["gold"] else neg).append(1 - r["scores"][i])
        brute = np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])
        assert auroc_stat(runs, "world-test", index)(s, ones)[0] == pytest.approx(brute)


def test_summary_pairs_models_and_counts_every_interval() -> None:
    rng = np.random.default_rng(1)
    per_seed = [{"good": _measured(rng, 0.9), "weak": _measured(rng, 0.2)} for _ in range(4)]
    numbers = summarize(per_seed, pairs=[("good", "weak")], resamples=300)
    good = numbers["first_error"]["good"]["AUROC world-test"]
    assert good["draws"] == {"seed": 4, "problem": 12}
    assert good["low"] <= good["mean"] <= good["high"] and good["single_run"][0] <= good["mean"]
    diff = numbers["paired"]["good − weak: AUROC world-test"]
    assert diff["low"] > 0  # a model that finds the error 90 % of the time against one that finds it 20 %
    weighted = numbers["paired"]["good weighted vote − majority vote: N=16"]
    assert weighted["mean"] == pytest.approx(0.2) and weighted["low"] == pytest.approx(0.2)
    assert numbers["intervals"] == sum(map(len, numbers["first_error"].values())) + len(
        numbers["paired"]
    ) + sum(map(len, numbers["bon"].values()))
    assert str(numbers["intervals"]) in numbers["multiplicity"]
    table = markdown({"tuning": numbers}, "tuning")
    assert "| good | " in table and good["cell"] in table and "4 seeds (training runs) × 12" in table
    first_only = markdown({"tuning": numbers}, "tuning", tables=["first_error"])
    assert "| good | " in first_only and "best-of-N accuracy" not in first_only and "paired" not in first_only
    assert "4 seeds (training runs) × 12" in first_only  # what was drawn comes with any table
    with pytest.raises(ValueError, match="unknown tables"):
        markdown({"tuning": numbers}, "tuning", tables=["first_eror"])


def test_every_picker_is_paired_with_the_orm_at_each_n_when_there_is_one() -> None:
    rng = np.random.default_rng(2)
    per_seed = []
    for _ in range(3):
        good, orm = _measured(rng, 0.9), _measured(rng, 0.1)
        for run in (good, orm):  # the ORM's picks are the evaluation's shared "orm" row
            run.bon["accuracy"]["orm"] = [[0.4] * 12, [0.45] * 12]
        per_seed.append({"good": good, "orm": orm})
    numbers = summarize(per_seed, pairs=[("good", "orm")], outcome_models=["orm"], resamples=200)
    vs_orm = numbers["paired"]["good weighted vote − ORM best-of-N: N=16"]
    assert vs_orm["mean"] == pytest.approx(0.7 - 0.45) and vs_orm["low"] == pytest.approx(0.25)
    assert "good − orm: F1 world-test" in numbers["paired"]
    assert "ORM best-of-N − majority vote: N=4" in numbers["paired"]  # the ORM against majority, once
    assert not any(
        k.startswith(("majority vote −", "oracle (pass@N) −", "ORM best-of-N − ORM"))
        for k in numbers["paired"]
    )
    assert "orm best-of-N (min)" not in numbers["bon"]  # an ORM picks by its last step: the shared row


def test_the_studys_own_comparisons_difference_two_pickers_on_the_same_problems() -> None:
    rng = np.random.default_rng(3)
    per_seed = [{"good": _measured(rng, 0.9), "weak": _measured(rng, 0.2)} for _ in range(3)]
    numbers = summarize(per_seed, pairs=[("good", "weak")], compare=[("good", "weak")], resamples=200)
    diff = numbers["paired"]["good best-of-N (min) − weak best-of-N (min): N=4"]
    expected = np.mean([
        np.mean(s["good"].bon["accuracy"]["prm:min"][0]) - np.mean(s["weak"].bon["accuracy"]["prm:min"][0])
        for s in per_seed
    ])  # fmt: skip
    assert diff["mean"] == pytest.approx(expected) and diff["low"] <= diff["mean"] <= diff["high"]
    assert "good best-of-N (min) − weak best-of-N (min): N=16" in numbers["paired"]
    assert not any("weak best-of-N (min) − good" in k for k in numbers["paired"])
    without = summarize(per_seed, pairs=[("good", "weak")], resamples=200)
    assert numbers["intervals"] == without["intervals"] + 2  # one per N
    assert numbers["compare"] == [["good", "weak"]] and without["compare"] == []
    table = markdown({"tuning": numbers}, "tuning", tables=["compare"])
    head, _, row = table.splitlines()[1:4]
    assert head.endswith("| F1 test | AUROC test | best-of-4 | best-of-16 |")
    assert row.startswith("| good − weak | " + numbers["paired"]["good − weak: F1 world-test"]["cell"])
    assert row.endswith(
        diff["cell"]
        + " | "
        + numbers["paired"]["good best-of-N (min) − weak best-of-N (min): N=16"]["cell"]
        + " |"
    )
    assert "| good − weak |" not in markdown({"tuning": without}, "tuning", tables=["compare"])


def test_ranges_span_runs_on_other_machines_and_say_so(tmp_path) -> None:
    """A study's single-run ranges stretched by another machine's run of the same recipe: the means and
    intervals stay the study's own, the ranges grow to hold the other run's values (never shrink), and
    the line under the table names both machines. A results block names the other file with ``also=``."""
    import json

    rng = np.random.default_rng(3)
    per_seed = [{"good": _measured(rng, 0.9), "weak": _measured(rng, 0.2)} for _ in range(3)]
    numbers = {"seeds": [0, 1, 2], "machine": {"cpu": "CPU A", "torch_cpu_capability": "AVX512"}}
    numbers["tuning"] = summarize(per_seed, resamples=100)
    other_run = summarize([{"good": _measured(rng, 0.3), "weak": _measured(rng, 0.2)}], resamples=100)
    other = {"seeds": [0], "machine": {"cpu": "CPU B", "torch_cpu_capability": "AVX2"}, "tuning": other_run}
    wide = widened(numbers, [other])
    for row, metric in [("good", "F1 world-test"), ("good", "AUROC world-test")]:
        mine, theirs = numbers["tuning"]["first_error"][row][metric], other_run["first_error"][row][metric]
        got = wide["tuning"]["first_error"][row][metric]
        assert {k: got[k] for k in ("mean", "low", "high")} == {k: mine[k] for k in ("mean", "low", "high")}
        assert got["single_run"] == [
            min(mine["single_run"][0], theirs["single_run"][0]),
            max(mine["single_run"][1], theirs["single_run"][1]),
        ]
    bon = wide["tuning"]["bon"]["good best-of-N (min)"]["N=16"]["single_run"]
    assert bon[0] <= other_run["bon"]["good best-of-N (min)"]["N=16"]["mean"] <= bon[1]
    assert (
        numbers["tuning"]["first_error"]["good"]["F1 world-test"]
        is not wide["tuning"]["first_error"]["good"]["F1 world-test"]
    )
    table = markdown(numbers, "tuning", ["first_error"], also=[other])
    assert (
        "span seeds 0, 1, 2 on CPU A, torch kernels AVX512 and seed 0 on CPU B, torch kernels AVX2" in table
    )
    assert "CPU B" not in markdown(numbers, "tuning", ["first_error"])
    (tmp_path / "a.json").write_text(json.dumps(numbers))
    (tmp_path / "b.json").write_text(json.dumps(other))
    doc = "<!-- results: a.json set=tuning tables=first_error also=b.json -->\nold\n<!-- /results -->\n"
    assert render_blocks(doc, tmp_path) == doc.replace("old", table)


def _with_honest(run: Measured, lower: float) -> Measured:
    """``run`` as an evaluation in a world with loopholes records it: its honest accuracies are its
    accuracies, except the PRM's picks, ``lower`` points fewer (gamed picks counted wrong)."""
    honest = {m: [list(row) for row in acc] for m, acc in run.bon["accuracy"].items()}
    honest["prm:min"] = [[a - lower for a in row] for row in honest["prm:min"]]
    return Measured(run.predictions, run.bon | {"honest": honest})


def test_honest_best_of_n_is_estimated_and_paired_only_when_the_runs_record_it() -> None:
    rng = np.random.default_rng(4)
    plain = [{"good": _measured(rng, 0.9), "weak": _measured(rng, 0.2)} for _ in range(3)]
    gaming = [{m: _with_honest(run, 0.1) for m, run in seed.items()} for seed in plain]
    del gaming[2]["weak"].bon["honest"]  # a seed whose pools held no gamed trace: honest = accuracy
    without = summarize(plain, resamples=200)
    numbers = summarize(gaming, resamples=200)
    honest = numbers["bon_honest"]["good best-of-N (min)"]["N=4"]
    expected = np.mean([np.mean(s["good"].bon["accuracy"]["prm:min"][0]) - 0.1 for s in plain])
    assert honest["mean"] == pytest.approx(expected) and honest["low"] <= honest["mean"] <= honest["high"]
    weak = numbers["bon_honest"]["weak best-of-N (min)"]["N=16"]["mean"]
    weak_plain = numbers["bon"]["weak best-of-N (min)"]["N=16"]["mean"]
    assert weak == pytest.approx(weak_plain - 0.1 * 2 / 3)  # two seeds of three lowered, one as recorded
    assert numbers["bon_honest"]["majority vote"] == numbers["bon"]["majority vote"]  # no vote was gamed
    gap = numbers["paired"]["good best-of-N (min) − majority vote (honest): N=4"]
    plain_gap = numbers["paired"]["good best-of-N (min) − majority vote: N=4"]
    assert gap["mean"] == pytest.approx(plain_gap["mean"] - 0.1)
    assert numbers["bon"] == without["bon"]  # the task-accuracy numbers are untouched
    assert {k: v for k, v in numbers["paired"].items() if "(honest)" not in k} == without["paired"]
    assert "bon_honest" not in without and not any("(honest)" in k for k in without["paired"])
    extra = sum(map(len, numbers["bon_honest"].values())) + sum("(honest)" in k for k in numbers["paired"])
    assert numbers["intervals"] == without["intervals"] + extra
    table = markdown({"tuning": numbers}, "tuning")
    assert table.index("| best-of-N accuracy |") < table.index("| honest best-of-N accuracy |")
    assert table.index("| honest best-of-N accuracy |") < table.index("| paired difference")
    assert f"| good best-of-N (min) − majority vote (honest): N=4 | {gap['cell']} |" in table
    assert "honest" not in markdown({"tuning": without}, "tuning")
    assert "honest" not in markdown({"tuning": numbers}, "tuning", tables=["first_error", "compare"])
    # another machine's run stretches the honest ranges as it does the others
    other = summarize([{m: _with_honest(run, 0.3) for m, run in plain[0].items()}], resamples=100)
    wide = widened({"tuning": numbers}, [{"tuning": other}])["tuning"]["bon_honest"]
    theirs = other["bon_honest"]["good best-of-N (min)"]["N=4"]["single_run"][0]
    assert theirs < honest["single_run"][0]  # their run lies below every one of ours
    assert wide["good best-of-N (min)"]["N=4"]["single_run"] == [theirs, honest["single_run"][1]]
