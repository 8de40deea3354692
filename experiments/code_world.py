"""The code world's own tables (issue 41), from a finished ``prmkit run recipes/code.yaml`` (or ``code-visible.yaml``) sweep.

- **Labels by class**: where automated labels land on the code world's error classes: per class of the
  gold first error, the share of training trajectories whose first error a label source puts on the same
  step.
- **The loophole audit** of every model on the claims and the tuning set: how often it passes a loophole
  trajectory as error-free, prefers one to an honest right trajectory, and how often its best-of-N picks
  use one, against the loopholes' share of the pools (mean and range over seeds: each seed's audit is
  one number); and the same audit of **overfit fixes** (a fix fitted to weak visible tests, which CI
  passes and the hidden tests fail).

Reads a finished ``prmkit run recipes/code.yaml`` sweep: each seed's label files (the judge's file carries
Monte Carlo's labels too; progress and consensus have their own; consensus only on the trajectories it
kept) with the gold labels the problems stage wrote. Intervals: a nested bootstrap over seeds, then
problems within each seed (each seed draws its own training tasks). Gold is read only to evaluate.

``python experiments/code_world.py runs/code --out docs/results/code-world.json`` prints the tables
(``"hidden tests=runs/code" "CI=runs/code-visible"``: the audits of both runs, rows labelled; the labels
table of the first). ``--audits-only`` reads the audits alone, from any world whose evaluations audit a
gold class (the agent world's grader loophole: ``--audits-only runs/agent --out
docs/results/agent-audits.json``); docs
show them in ``code-world-labels`` and ``code-world-audit`` results blocks (:mod:`prmkit.evaluation.views`,
``python experiments/render_results.py``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from prmkit.core.stats import nested_bootstrap, ratio_stat
from prmkit.evaluation.views import AUDIT, CODE_CLASSES, code_audit_table, code_labels_table
from prmkit.formats.inputs import read_traces

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "mc_hard": ("judge", "mc"),
    "mc_soft": ("judge", "mc"),
    "progress_hard": ("progress",),
    "judge": ("judge",),
    "consensus": ("consensus",),
}
"""Label source -> the stages whose labels file holds it, the first the run has (MC's labels travel on in
the judge's file; recipes/code-visible.yaml runs MC alone); a source no stage of the run holds is left out."""
AUDITED = ("loophole", "overfit")
"""The gold classes audited: gaming the tests, and fixes fitted to weak visible tests."""
SETS = {"claims": "claims", "tuning": "eval"}
"""Evaluation set -> the stage prefix of its evaluations."""


def gold_class(trace: Any) -> str:
    """The class of the gold first error (``none`` for an error-free trajectory)."""
    first = trace.first_error("gold")
    return "none" if first == -1 else trace.steps[first].label("gold").metadata.get("class") or "other"


def counts(traces: list[Any], source: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per class: (matched, total) per problem, the problems sorted by id."""
    ids = sorted({t.problem.id for t in traces})
    index = {pid: i for i, pid in enumerate(ids)}
    out = {c: (np.zeros(len(ids)), np.zeros(len(ids))) for c in CODE_CLASSES}
    for t in traces:
        if not any(s.label(source) for s in t.steps):
            continue  # a filter's dropped trajectory, or one whose labels failed
        c = gold_class(t)
        if c in out:
            out[c][0][index[t.problem.id]] += t.first_error(source) == t.first_error("gold")
            out[c][1][index[t.problem.id]] += 1
    return out


def stage_file(seed_dir: Path, stages: tuple[str, ...]) -> Path | None:
    """The labels file of the first of ``stages`` one seed's run has (its one cached folder), or None."""
    for stage in stages:
        found = sorted((seed_dir / "stages").glob(f"{stage}-*"))
        if found:
            (folder,) = found
            return folder / "labels.jsonl"
    return None


def audits(seeds: list[Path]) -> dict[str, Any]:
    """Per evaluation set, model and audit metric: one value per seed (from each evaluation's summary)."""
    out: dict[str, Any] = {}
    for set_name, prefix in SETS.items():
        for seed in seeds:
            seen: set[str] = set()
            for done in sorted((seed / "stages").glob(f"{prefix}-*/DONE.json")):
                summary = json.loads(done.read_text(encoding="utf-8"))["summary"]
                model = (
                    done.parent.name.removeprefix(prefix + "-")
                    .rsplit("-", 1)[0]
                    .replace("pretrain", "lm (zero-shot)")
                )
                if model in seen:  # a stage of an earlier recipe beside this one's: which is meant?
                    raise SystemExit(f"{seed}: two {prefix} stages of {model}; keep one run's stages")
                seen.add(model)
                for key in (f"{c}_{m}" for c in AUDITED for m in AUDIT):
                    value = (summary.get("audits") or {}).get(key)
                    if value is not None:
                        out.setdefault(set_name, {}).setdefault(model, {}).setdefault(key, []).append(value)
    return out


def collect(run: Path) -> dict[str, Any]:
    """Labels by class (per source and class: the estimate over seeds × problems and how many trajectories
    it rests on) and the loophole audit per evaluation set and model."""
    seeds = sorted(run.glob("seed-*"))
    files: dict[Path, list[Any]] = {}
    per_source: dict[str, list[dict[str, tuple[np.ndarray, np.ndarray]]]] = {}
    for source, stages in SOURCES.items():
        for seed in seeds:
            path = stage_file(seed, stages)
            if path is None:
                continue
            if path not in files:
                files[path] = read_traces(path)
            per_source.setdefault(source, []).append(counts(files[path], source))
    out: dict[str, Any] = {"seeds": [s.name for s in seeds], "sources": {}, "audits": audits(seeds)}
    for source, runs in per_source.items():
        row = {}
        for c in CODE_CLASSES:
            # the seeds with a trajectory of this class (a rare class can miss a seed)
            have = [r for r in runs if r[c][1].sum() > 0]
            n = int(sum(r[c][1].sum() for r in have))
            if n == 0:
                continue
            stats = [ratio_stat([r[c][0]], [r[c][1]]) for r in have]
            draws = [([i], len(r[c][1])) for i, r in enumerate(have)]
            est = nested_bootstrap(
                lambda run_i, w, stats=stats: stats[run_i](0, w), draws, resamples=1000,
                counted={"seed": len(have), "trajectories": n},
            )  # fmt: skip
            row[c] = est.to_dict() | {"trajectories": n}
        out["sources"][source] = row
    return out


def side(arg: str) -> tuple[str | None, Path]:
    """``FOLDER`` or ``LABEL=FOLDER``: a run, and the label its models' audit rows carry (``orm (CI)``)."""
    label, _, folder = arg.rpartition("=")
    return (label or None), Path(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=side, metavar="[LABEL=]RUN")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "code-world.json")
    parser.add_argument("--audits-only", action="store_true", help="no label sources: any world's audits")
    args = parser.parse_args()
    (label, first), *others = args.runs
    if args.audits_only:
        seeds = sorted(first.glob("seed-*"))
        result: dict[str, Any] = {"seeds": [s.name for s in seeds], "audits": audits(seeds)}
    else:
        result = collect(first)
    if label is not None or others:  # several runs side by side (issue 61's two sides): rows labelled
        result["audits"] = {}
        for name, run in args.runs:
            for set_name, models in audits(sorted(run.glob("seed-*"))).items():
                for model, row in models.items():
                    result["audits"].setdefault(set_name, {})[f"{model} ({name})" if name else model] = row
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if "sources" in result:
        print(code_labels_table(result))
    for set_name in SETS:
        for audited in AUDITED:
            print(f"{set_name}, {audited}:\n\n{code_audit_table(result, set_name, audited)}")


if __name__ == "__main__":
    main()
