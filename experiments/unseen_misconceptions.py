"""Misconceptions held out of training (issue 40's transfer matrix): the demo's gold PRM trained again on
traces of the same policy with its misconceptions switched off (``misconceptions: 0``), so it never reads a
labelled misconception step, then measured where they occur.

Per seed ``s`` of ``runs/world-seeds``: 3,000 training problems × 4 traces of the arithmetic world's
policy at ``misconceptions: 0`` (seed ``s``, gold labels from the checker: this PRM is trained on gold,
as the demo's ``prm-gold`` is), and ``train_prm`` with that seed's own ``prm-gold`` settings (the
recipe's resolved ``train.prm``) from that seed's pretrained LM. The models are then read by ``prmkit eval
monitorability`` and ``prmkit eval transfer`` with the demo's configs, like the demo's models
(docs/evaluation.md, "Misconceptions held out of training").

``python experiments/unseen_misconceptions.py runs/world-seeds --out runs/unseen-misconceptions``, then
``--measure FILE.json``: both PRMs of every seed on the same fresh traces (the monitorability demo's: the
claims set's 48 test problems × 8 samples of the demo's evaluation policy, seed 5678), each at its own
threshold; per first-error class (misconception, or any other), the share of traces it flags and the
share whose first error it finds exactly, and the differences no-misconceptions − demo, paired by seed
and problem (crossed bootstrap over seeds × problems, 2,000 resamples).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def train_one(seeds_dir: Path, seed: int, out: Path) -> Path:
    """The no-misconception gold PRM of one seed (skipped when its folder is finished)."""
    from prmkit.training import PrmConfig, train_prm
    from prmkit.worlds.registry import world

    model = out / f"seed-{seed}"
    if (model / "process_card.json").is_file():
        return model
    run = seeds_dir / f"seed-{seed}"
    recipe = json.loads((run / "recipe.resolved.json").read_text())
    (pretrain,) = sorted((run / "stages").glob("pretrain-*/model"))
    arithmetic = world("arithmetic")
    policy = arithmetic.policy_config(**(recipe["problems"].get("policy") or {}) | {"misconceptions": 0.0})
    problems = recipe["problems"]
    traces = arithmetic.traces(problems["n"], problems["per_problem"], seed, "train", policy)
    settings = recipe["train"]["prm"] | {"base_model": str(pretrain), "seed": seed, "resume": False}
    train_prm(traces, str(model), PrmConfig(**settings))
    return model


MEASURED = {
    "problems": 48,
    "per_problem": 8,
    "seed": 5678,
    "policy": {"systematic": 0.5, "systematic_rate": 0.5},
}
"""The monitorability demo's traces (docs/results/monitorability/demo.yaml)."""


def counts(seeds_dir: Path, out: Path, seeds: list[int]) -> dict[str, np.ndarray]:
    """Per model, an (S, 6, P) array: per seed and problem, traces whose first error is a misconception,
    of them flagged, of them found exactly; the same for traces whose first error is of another class."""
    from prmkit.evaluation.processbench import resolve_threshold
    from prmkit.evaluation.visibility import view_predictions
    from prmkit.scoring import load_scorer
    from prmkit.worlds.registry import world

    arithmetic = world("arithmetic")
    m = MEASURED
    traces = arithmetic.traces(
        m["problems"], m["per_problem"], m["seed"], "test", arithmetic.policy_config(**m["policy"])
    )
    checks = [arithmetic.check_trace(t) for t in traces]
    index = {p: i for i, p in enumerate(dict.fromkeys(t.problem.id for t in traces))}
    models = {
        "demo": lambda s: next((seeds_dir / f"seed-{s}" / "stages").glob("prm-gold-*/model")),
        "no_misconceptions": lambda s: out / f"seed-{s}",
    }
    found = {}
    for name, path_of in models.items():
        table = np.zeros((len(seeds), 6, len(index)))
        for row, seed in enumerate(seeds):
            scorer = load_scorer(str(path_of(seed)))
            threshold, _ = resolve_threshold(scorer, None, None, "gold")
            read = view_predictions(traces, scorer, threshold, "raw")
            for t, k, (predicted, _) in zip(traces, checks, read.predictions, strict=True):
                if k.first_error < 0:
                    continue
                side = 0 if k.first_error_class == "misconception" else 3
                cell = table[row, :, index[t.problem.id]]
                cell[side] += 1
                cell[side + 1] += predicted is not None and predicted >= 0
                cell[side + 2] += predicted == k.first_error
        found[name] = table
    return found


def measure(seeds_dir: Path, out: Path, seeds: list[int]) -> dict:
    from prmkit.core.stats import crossed_bootstrap, paired, ratio_stat

    found = counts(seeds_dir, out, seeds)
    problems = found["demo"].shape[2]
    rates = {"misconception flagged": (0, 1), "misconception found exactly": (0, 2),
             "other class flagged": (3, 4), "other class found exactly": (3, 5)}  # fmt: skip
    result: dict = {"measured": MEASURED, "seeds": seeds, "draws": {"seed": len(seeds), "problem": problems}}
    for rate, (den, num) in rates.items():
        stats = {name: ratio_stat(list(t[:, num]), list(t[:, den])) for name, t in found.items()}
        stats["no_misconceptions − demo"] = paired(stats["no_misconceptions"], stats["demo"])
        result[rate] = {
            name: crossed_bootstrap(stat, len(seeds), problems, resamples=2000, rng=0).to_dict()
            for name, stat in stats.items()
        }
        result[rate]["traces"] = int(found["demo"][0, den].sum())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seeds_dir", type=Path, help="the demo's sweep (runs/world-seeds)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--measure", type=Path, help="measure both PRMs of every seed and write this file")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.measure:
        result = measure(args.seeds_dir, args.out, seeds)
        args.measure.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        for rate, cells in result.items():
            if isinstance(cells, dict) and "demo" in cells:
                from prmkit.core.stats import Estimate

                shown = {k: Estimate(**v).cell(signed="−" in k) for k, v in cells.items() if k != "traces"}
                print(rate, cells["traces"], shown)
        return
    for seed in seeds:
        print(train_one(args.seeds_dir, seed, args.out), flush=True)


if __name__ == "__main__":
    main()
