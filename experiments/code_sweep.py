"""The code world's knob sweep (issue 61): how the PRM-over-ORM gap at equal information moves with
``weak_tests`` and ``symptom_patch``.

docs/codeworld.md, "Process against outcome at equal information", compares ``prm-mc_hard`` with ``orm``
on two sides: both see the hidden tests (recipes/code.yaml) or both see CI (recipes/code-visible.yaml,
``--reuse`` of the hidden run). This script runs that comparison at other values of one knob at a time:

- ``weak_tests`` (:class:`~prmkit.worlds.code.config.CodeWorldConfig`): the share of tasks with one visible
  test. It shapes the tasks, so it is set for the training tasks (``problems.world``) and for the fresh
  evaluation tasks (``evaluate.generator``): models are measured on tasks of the kind they learned on.
- ``symptom_patch`` (:class:`~prmkit.worlds.code.config.CodeAgentConfig`): the agent patches the symptom
  so CI passes and the hidden tests fail. It is set for the agent that writes the training trajectories
  (``problems.policy``), the one Monte Carlo's rollouts continue them with
  (``labels.rollout_policy.policy_knobs``) and the one whose samples are judged (``evaluate.policy``).

``python experiments/code_sweep.py commands [--seeds 0,1]`` prints both runs of every point (the hidden
side into ``RUNS/<point>``, the CI side into ``RUNS/<point>-visible``); each is resumable, so the lead
runs one point at a time. ``python experiments/code_sweep.py collect`` reads the points whose two runs
wrote their ``study.json`` and the default point's committed study files, and writes
docs/results/code-sweep.json: per point, side and evaluation set, the paired differences PRM − ORM that
the ``equal-information`` view shows, as each study computed them (:func:`prmkit.evaluation.study.summarize`:
a crossed bootstrap over seeds × tasks; with one seed, over tasks only, and the file says so). Docs show
it in a ``code-sweep`` results block (:func:`prmkit.evaluation.views.code_sweep`).
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from prmkit.evaluation.views import SWEEP_DIFFERENCES, sweep_paired_key
from prmkit.worlds.code.config import CodeAgentConfig, CodeWorldConfig

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = Path("recipes/code.yaml")
VISIBLE = Path("recipes/code-visible.yaml")
RUNS = Path("/work/runs/code-sweep")
PRM = "mc_hard"
"""The PRM both sides train (its model: ``prm-mc_hard``), against each side's ORM."""
KNOBS: dict[str, tuple[str, ...]] = {
    "weak_tests": ("problems.world.weak_tests", "evaluate.generator.weak_tests"),
    "symptom_patch": (
        "problems.policy.symptom_patch",
        "labels.rollout_policy.policy_knobs.symptom_patch",
        "evaluate.policy.symptom_patch",
    ),
}
"""Knob -> every recipe key it is set at (the same value at each), on both sides."""
DEFAULTS = {
    "weak_tests": CodeWorldConfig().weak_tests,
    "symptom_patch": CodeAgentConfig().symptom_patch,
}
"""Each knob's default: the point the committed equal-information runs measured."""
POINTS: dict[str, tuple[str, float]] = {
    "weak_tests-0": ("weak_tests", 0.0),
    "weak_tests-0.6": ("weak_tests", 0.6),
    "symptom_patch-0": ("symptom_patch", 0.0),
    "symptom_patch-0.4": ("symptom_patch", 0.4),
}
"""Point (its run folder's name) -> knob and value: 0 and one above the default of each knob."""
DEFAULT_STUDIES = {
    "hidden": ROOT / "docs" / "results" / "code-hidden-seeds.json",
    "CI": ROOT / "docs" / "results" / "code-visible-seeds.json",
}
"""The default point: the committed study files of both sides (each run's ``study.json``, copied)."""
SETS = ("tuning", "claims")
NS = ("N=4", "N=16")


def overrides(knob: str, value: float) -> list[str]:
    """The ``--set`` items that put ``knob`` at ``value`` everywhere it acts (:data:`KNOBS`)."""
    return [f"{key}={value}" for key in KNOBS[knob]]


def commands(point: str, seeds: str, runs: Path, jobs: int = 1) -> list[list[str]]:
    """The two ``prmkit run`` command lines of ``point``: the hidden side (the PRM on Monte Carlo labels
    alone, as the default point's runs), then the CI side reusing its problems and pretrained LM."""
    knob, value = POINTS[point]
    sets = [a for item in overrides(knob, value) for a in ("--set", item)]
    tail = ["--seeds", seeds, *(["--jobs", str(jobs)] if jobs > 1 else [])]
    hidden = runs / point
    return [
        [
            "prmkit",
            "run",
            str(HIDDEN),
            "--set",
            f"train.prm_sources=[{PRM}]",
            *sets,
            "-o",
            str(hidden),
            *tail,
        ],
        ["prmkit", "run", str(VISIBLE), *sets, "--reuse", str(hidden), "-o", f"{hidden}-visible", *tail],
    ]


def side_numbers(study: dict[str, Any], source: Path) -> dict[str, Any]:
    """One side's differences PRM − ORM per evaluation set, as the study file holds them, with the seeds
    and task counts they rest on and what their intervals are over."""
    seeds = list(study["seeds"])
    out: dict[str, Any] = {
        "study": str(source.relative_to(ROOT) if source.is_relative_to(ROOT) else source),
        "seeds": seeds,
        "intervals": "seeds × tasks" if len(seeds) > 1 else "tasks only (one seed)",
    }
    for set_name in SETS:
        s = study[set_name]
        differences = {name: s["paired"][sweep_paired_key(f"prm-{PRM}", name)] for name in SWEEP_DIFFERENCES}
        tasks = {name: e["draws"]["problem"] for name, e in differences.items()}
        out[set_name] = {
            "evaluate_seed": s["evaluate_seed"],
            "tasks": {
                "first error (test + held-out)": tasks["F1 test"],
                "best-of-N (test)": tasks["best-of-4"],
            },
            "differences": differences,
        }
    return out


def point_studies(runs: Path) -> dict[tuple[str, float], dict[str, Path]]:
    """(knob, value) -> side -> its study file: the default point (once per knob) and each point both of
    whose runs are done. The default point is ``runs/default`` and ``runs/default-visible`` where both
    are done (the committed runs' stages reused for the points' seeds, so every row rests on the same
    seeds: ``prmkit run ... --reuse <committed run> -o runs/default --seeds 0``), else the committed
    three-seed studies."""
    default = {"hidden": runs / "default" / "study.json", "CI": runs / "default-visible" / "study.json"}
    if not all(f.exists() for f in default.values()):  # the committed three-seed studies
        default = dict(DEFAULT_STUDIES)
    found = {(knob, value): default for knob, value in DEFAULTS.items()}
    for point, knob_value in POINTS.items():
        files = {"hidden": runs / point / "study.json", "CI": runs / f"{point}-visible" / "study.json"}
        if all(f.exists() for f in files.values()):
            found[knob_value] = files
    return found


def collect(runs: Path) -> dict[str, Any]:
    """Every point found (:func:`point_studies`), each knob's values in order, as code-sweep.json holds
    them; the points not run yet are listed under ``missing``."""
    studies = point_studies(runs)
    points = []
    for knob, value in sorted(studies, key=lambda kv: (list(KNOBS).index(kv[0]), kv[1])):
        files = studies[(knob, value)]
        sides = {
            side: side_numbers(json.loads(f.read_text(encoding="utf-8")), f) for side, f in files.items()
        }
        points.append({"knob": knob, "value": value, "default": value == DEFAULTS[knob], "sides": sides})
    missing = [p for p, kv in POINTS.items() if kv not in studies]
    return {
        "prm": f"prm-{PRM}",
        "against": "orm",
        "defaults": DEFAULTS,
        "set_at": {knob: list(keys) for knob, keys in KNOBS.items()},
        "points": points,
        "missing": missing,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("commands", help="print both prmkit run lines of every point")
    cmd.add_argument("--seeds", default="0", help="comma-separated seeds of every run (default 0)")
    cmd.add_argument("--jobs", type=int, default=1, help="prmkit run --jobs")
    cmd.add_argument("--points", default=",".join(POINTS), help=f"some of {', '.join(POINTS)}")
    got = sub.add_parser("collect", help="write docs/results/code-sweep.json from the finished points")
    got.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "code-sweep.json")
    for p in (cmd, got):
        p.add_argument("--runs", type=Path, default=RUNS, help=f"the points' run folders (default {RUNS})")
    args = parser.parse_args()
    if args.command == "commands":
        for point in args.points.split(","):
            if point not in POINTS:
                parser.error(f"unknown point {point!r}; expected some of {', '.join(POINTS)}")
            print(f"# {point}")
            print("\n".join(shlex.join(line) for line in commands(point, args.seeds, args.runs, args.jobs)))
        return
    result = collect(args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    from prmkit.evaluation.views import code_sweep_table

    for set_name in SETS:
        print(f"{set_name}:\n\n{code_sweep_table(result, set_name)}")
    if result["missing"]:
        print(f"not run yet: {', '.join(result['missing'])}")


if __name__ == "__main__":
    main()
