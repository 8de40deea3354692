"""The RL study's stages (``prmkit run recipes/rl.yaml``): per draw π0 and its PRMs, one stage per cell,
then the report; each cached by a hash of its settings and inputs, as a world recipe's stages are.

Per draw d (stage names end in ``-d<d>``): ``problems`` (``prmkit arithmetic generate`` and ``sample``:
the simulated policy's own samples, no gold), ``pi0`` (``prmkit pretrain`` on them), ``mc`` (``prmkit
label mc`` on them) and ``prm`` (``prmkit train prm`` from π0 on the MC labels); where a cell of the draw
names them, ``votes`` / ``mc_majority`` / ``prm_majority`` (the majority PRM) and ``orm``. Then one
``rl-<name>-<seed>-d<draw>`` stage per cell (``prmkit rl``, resumed from its checkpoints after a kill), seed
by seed across the draws, so a study stopped part-way holds every draw's first seeds. Last, ``report``:
``results.json``, ``report.md`` and ``curves.png`` (:func:`prmkit.rl.study_report.write_study`).

A cell is one torch thread (``rl.threads``): ``prmkit run recipes/rl.yaml --jobs 2`` runs two stages at
a time on 2 cores, each in a process of its own (both draws' π0, then cells as their π0 and PRM are done),
with the same stage keys and results as one at a time. A run writes ``stages.json`` (stage name ->
folder, :func:`prmkit.pipeline.runner.stage_index`): where a reader finds a cell's ``policy/`` or a
draw's π0 ``model/`` (``experiments/rl_faithfulness.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from prmkit.pipeline.report import Report, Table, relpath
from prmkit.pipeline.rl_recipe import Cell, RlStudy
from prmkit.pipeline.stages import MODEL, Run, Stage
from prmkit.pipeline.summary import _reproduce_section, _timing_section

PROBLEMS = "problems.jsonl"
TRACES = "traces.jsonl"
LABELS = "labels.jsonl"
POLICY = "policy"
PRM_STAGES = {"prm": "prm", "majority": "prm_majority", "orm": "orm"}
"""The stage (before its ``-d<draw>``) of each PRM a cell may name; ``pi0`` is π0's own stage."""


def stage_of(stage: str, draw: int) -> str:
    """The name of draw ``draw``'s stage ``stage`` (``pi0``, ``prm``, ...): ``<stage>-d<draw>``; a cell's
    stage is :attr:`Cell.stage <prmkit.pipeline.rl_recipe.Cell.stage>`."""
    return f"{stage}-d{draw}"


def _problems(draw: int) -> Run:
    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.worlds.registry import world

        p, w = r.for_draw(draw).pi0, world(r.pi0.world)
        w.generate(p.problems, out / PROBLEMS, seed=p.seed, split="train")
        w.sample(out / PROBLEMS, out / TRACES, per_problem=p.per_problem, seed=p.seed)
        return {"problems": p.problems, "traces": p.problems * p.per_problem}

    return run


def _pi0(draw: int) -> Run:
    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.training import pretrain_lm

        return pretrain_lm(
            deps[stage_of("problems", draw)] / TRACES, out / MODEL, r.for_draw(draw).pi0.pretrain
        )

    return run


def _mc(draw: int, traces: str) -> Run:
    """MC labels of the traces stage ``traces`` wrote."""

    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.labeling.labellers import labeller

        files = {"input": deps[traces] / TRACES, "output": out / LABELS, "work_dir": out / "job"}
        return labeller("mc").run(labeller("mc").config(**r.for_draw(draw).prm.label, **files))

    return run


def _prm(draw: int, labels: str) -> Run:
    """A PRM from π0 on the labels stage ``labels`` wrote."""

    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.training import train_prm

        base = {"base_model": str(deps[stage_of("pi0", draw)] / MODEL)}
        return train_prm(
            deps[labels] / LABELS, out / MODEL, r.for_draw(draw).prm.train.model_copy(update=base)
        )

    return run


def majority_answers(votes: Path) -> dict[str, str]:
    """Each problem's most common final answer among its samples (a tie goes to the answer sampled
    first); samples with no final answer do not vote."""
    counts: dict[str, Counter[str]] = {}
    with votes.open() as f:
        for line in f:
            trace = json.loads(line)
            if trace.get("final_answer") is not None:
                counts.setdefault(trace["problem"]["id"], Counter())[trace["final_answer"]] += 1
    return {pid: c.most_common(1)[0][0] for pid, c in counts.items()}


def _votes(draw: int) -> Run:
    """The PRM of a user without reference answers starts here: ``votes`` fresh samples per problem, and
    π0's training samples with each problem's majority answer as its reference (self-consistency as the
    reference, as label-free RL uses it; where the policy's misconceptions are its majority, the MC
    labels that follow call them right)."""

    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.worlds.registry import world

        spec, source = r.for_draw(draw).prm.majority, deps[stage_of("problems", draw)]
        world(r.pi0.world).sample(
            source / PROBLEMS, out / "votes.jsonl", per_problem=spec.votes, seed=spec.seed
        )
        majority = majority_answers(out / "votes.jsonl")
        with (source / TRACES).open() as src, (out / TRACES).open("w") as dst:
            for line in src:
                trace = json.loads(line)
                trace["problem"]["answer"] = majority.get(trace["problem"]["id"], trace["problem"]["answer"])
                dst.write(json.dumps(trace) + "\n")
        return {"problems": len(majority), "votes": spec.votes}

    return run


def _orm(draw: int) -> Run:
    """An outcome verifier from π0: the same samples, each marked by its final answer against the
    reference (``prmkit convert --grade``; no step labels); paid with ``aggregation: last`` it is an ORM
    used as the PRM."""

    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.formats import convert
        from prmkit.training import train_orm

        graded = out / "graded.jsonl"
        convert(deps[stage_of("problems", draw)] / TRACES, graded, grade=True)
        base = {"base_model": str(deps[stage_of("pi0", draw)] / MODEL)}
        return train_orm(graded, out / MODEL, r.for_draw(draw).prm.orm.model_copy(update=base))

    return run


def _draw_stages(r: RlStudy, draw: int, named: set[str]) -> list[Stage]:
    """Draw ``draw``'s π0 and PRM, and the weak PRMs ``named`` by its cells."""
    spec = r.for_draw(draw)
    p, prm = spec.pi0, spec.prm
    problems, pi0 = stage_of("problems", draw), stage_of("pi0", draw)
    stages = [
        Stage(problems, [], p.model_dump(mode="json", exclude={"pretrain"}), _problems(draw), outputs=(TRACES,)),
        Stage(pi0, [problems], p.pretrain.model_dump(mode="json"), _pi0(draw), "train", outputs=(MODEL,)),
        Stage(stage_of("mc", draw), [problems], prm.label, _mc(draw, problems), "label", outputs=(LABELS,)),
        Stage(stage_of("prm", draw), [pi0, stage_of("mc", draw)], prm.train.model_dump(mode="json"),
              _prm(draw, stage_of("mc", draw)), "train", outputs=(MODEL,)),
    ]  # fmt: skip
    if "majority" in named:
        votes, labels = stage_of("votes", draw), stage_of("mc_majority", draw)
        stages += [
            Stage(votes, [problems], prm.majority.model_dump(mode="json"), _votes(draw), outputs=(TRACES,)),
            Stage(labels, [votes], prm.label, _mc(draw, votes), "label", outputs=(LABELS,)),
            Stage(stage_of("prm_majority", draw), [pi0, labels], prm.train.model_dump(mode="json"),
                  _prm(draw, labels), "train", outputs=(MODEL,)),
        ]  # fmt: skip
    if "orm" in named:
        settings = prm.orm.model_dump(mode="json")
        stages.append(
            Stage(stage_of("orm", draw), [pi0, problems], settings, _orm(draw), "train", outputs=(MODEL,))
        )
    return stages


def _cell(cell: Cell) -> Run:
    """One ``prmkit rl`` run from its draw's π0, paid by (or monitored with) the PRM it names."""

    def run(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.rl.train import train_policy

        pi0 = deps[stage_of("pi0", cell.draw)] / MODEL
        prm = pi0 if cell.prm == "pi0" else deps[stage_of(PRM_STAGES[cell.prm], cell.draw)] / MODEL
        return train_policy(cell.config(str(pi0), str(prm)), out / POLICY)

    return run


def _report(r: RlStudy, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
    """The study's results file, report and curves from every cell's monitors."""
    from prmkit.rl.study import read_cell
    from prmkit.rl.study_report import RESULTS, write_study

    grid = r.grid()
    records = [read_cell(deps[c.stage] / POLICY, c.name, c.draw, c.seed) for c in r.cells()]
    write_study(out, records, grid.grid_names(), grid.extra, grid.resamples, f"prmkit run: {r.name}",
                claims=grid.claims_draws)  # fmt: skip
    results = json.loads((out / RESULTS).read_text())
    return {"draws": results["draws"], "intervals": results["intervals"], "cells": len(records)}


def plan(r: RlStudy) -> list[Stage]:
    """The study's stages, in order, with what each reads."""
    cells = r.cells()
    stages: list[Stage] = []
    for draw in sorted({c.draw for c in cells}):
        stages += _draw_stages(r, draw, {c.prm for c in cells if c.draw == draw})
    for cell in sorted(cells, key=lambda c: c.seed):  # seed by seed across the draws
        pi0 = stage_of("pi0", cell.draw)
        reads = [pi0] if cell.prm == "pi0" else [pi0, stage_of(PRM_STAGES[cell.prm], cell.draw)]
        settings = cell.config("pi0", cell.prm).model_dump(mode="json")
        stages.append(Stage(cell.stage, reads, settings, _cell(cell), "rl", {"cell": cell.name}, (POLICY,)))
    grid = r.grid()
    settings = {
        "recipe": r.name,
        "rewards": grid.grid_names(),
        "extra": grid.extra,
        "resamples": grid.resamples,
    }
    if grid.claims_draws:  # only then: a study without claims draws keeps its report's key
        settings["claims_draws"] = grid.claims_draws
    stages.append(Stage("report", [c.stage for c in cells], settings, _report, "report",
                        outputs=("results.json", "report.md")))  # fmt: skip
    return stages


def study_report(r: RlStudy, results: dict[str, dict[str, Any]], out: Path, source: str | None) -> Report:
    """The run's report: the study's headline (each reward's change from π0 and its difference from
    outcome, over every draw; with claims draws, the claims side's differences and verdicts), where its
    full report and curves are, the stages' times, the command."""
    folder = Path(results["report"]["dir"])
    numbers = json.loads((folder / "results.json").read_text())
    report = Report(f"prmkit run: {r.name}")
    head = report.section("What this study shows")
    head.text.append(numbers["draws"])
    keys = {"process-correct": "process_correct", "answer accuracy": "answer_accuracy", "lucky": "lucky"}
    rows = [
        {"reward": name, **{f"Δ {k}": row["delta"].get(m, {}).get("cell", "–") for k, m in keys.items()},
         "KL to π0": row.get("kl_last", {}).get("cell", "–")}
        for name, row in numbers["rewards"].items()
    ]  # fmt: skip
    head.tables.append(Table(rows, "Change from π0 (last point − step 0), mean over runs [95 % interval], %"))
    pairs = [{"comparison": p, **{k: row.get(m, {}).get("cell", "–") for k, m in keys.items()}}
             for p, row in numbers["paired"].items()]  # fmt: skip
    if pairs:
        head.tables.append(Table(pairs, "Paired differences (same draw, seed and problems), %"))
    claims = numbers.get("sides", {}).get("claims")
    if claims:  # what a claim is read off: the draws no development run read
        from prmkit.rl.study import verdict_cell

        rows = [{"comparison": p, **{k: row.get(m, {}).get("cell", "–") for k, m in keys.items()},
                 "verdict": verdict_cell(claims["verdicts"][p])} for p, row in claims["paired"].items()]  # fmt: skip
        drawn = ", ".join(map(str, claims["draws"]))
        head.tables.append(Table(rows, f"Claims side (draw(s) {drawn}): difference from outcome's Δ, %"))
    head.text.append(
        f"Every table, each draw alone, the extra cells and the monitors' warnings: "
        f"{relpath(folder / 'report.md', out)}; the numbers: {relpath(folder / 'results.json', out)}."
    )
    if (folder / "curves.png").is_file():
        head.images.append((relpath(folder / "curves.png", out), "held-out monitors, change from π0 by step"))
    report.sections += [_timing_section(results), _reproduce_section(out, source)]
    return report
