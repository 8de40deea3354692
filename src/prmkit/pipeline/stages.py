"""The stages of ``prmkit run``: each calls the public function of one prmkit command.

A stage gets the recipe, its own folder and the folders of the stages it reads, and returns a summary
(JSON-able) that the report reads. Stages never reach into each other's internals: they pass files, and
each declares the files it writes (``Stage.outputs``; the runner checks them), so a stage reads another's
output by that declaration. A model is measured by its ``eval-`` stage (the evaluation, nothing else)
and its ``card-`` stage writes the process card beside a copy of the checkpoint from what that
evaluation wrote: the card measures nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prmkit.pipeline.recipe import Recipe

if TYPE_CHECKING:
    from prmkit.core.model import Trace

TRACES = "traces.jsonl"
LABELS = "labels.jsonl"
MODEL = "model"
EVAL = "eval"
"""The evaluation's folder (its summary, per-trace predictions, plots: :func:`evaluate_world`'s files)."""

Run = Callable[[Recipe, Path, dict[str, Path]], dict[str, Any]]


@dataclass
class Stage:
    name: str
    deps: list[str]
    settings: Any
    """What determines the output besides the inputs (hashed into the stage key)."""
    run: Run
    kind: str = "data"
    extra: dict[str, Any] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    """The files and folders it writes in its own folder (checked when it is done)."""

    def output(self, folder: Path) -> Path:
        """Its main output in ``folder`` (the first it declares): what a stage reading it opens."""
        return folder / self.outputs[0]


def _problems(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
    from prmkit.core.dataset import write_traces
    from prmkit.formats.inputs import read_traces

    p = r.problems
    if p.world_name is None:
        traces = read_traces(p.source)
        write_traces(out / TRACES, traces)
        return {
            "traces": len(traces),
            "problems": len({t.problem.id for t in traces}),
            "source": str(p.source),
        }
    from prmkit.worlds.registry import world

    w = world(p.world_name)
    w.generate(p.n, out / "problems.jsonl", seed=p.seed, split="train", config=p.world)
    w.sample(
        out / "problems.jsonl",
        out / "sampled.jsonl",
        per_problem=p.per_problem,
        seed=p.seed,
        policy_config=p.policy,
    )
    stats = w.check(out / "sampled.jsonl", out / TRACES)
    (out / "sampled.jsonl").unlink()
    return {"problems": p.n, "traces": p.n * p.per_problem, "world_stats": stats.model_dump(mode="json")}


def _label(name: str) -> Run:
    """The stage of labeller ``name``: it labels the file of the first method it reads that ran (the judge
    adds its labels to MC's file), else the sampled traces."""

    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.labeling.labellers import labeller

        read = next((m for m in labeller(name).reads if m in deps), None)
        src = deps[read] / LABELS if read is not None else deps["problems"] / TRACES
        files = {"input": src, "output": out / LABELS, "work_dir": out / "job"}
        cfg = r.labels.config(name, files)
        return labeller(name).run(cfg)

    return run


def _label_report(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
    from prmkit.formats.inputs import read_traces
    from prmkit.labeling.labellers import labeller
    from prmkit.labeling.report import label_report, plot_report

    merged: dict[str, Any] = {}
    report: dict[str, Any] = {}
    traces = 0
    for name, folder in deps.items():
        if name == "problems":
            continue
        read = read_traces(folder / LABELS)
        report = label_report(read, sources=list(labeller(name).produces), reference="gold")
        merged.update(report["sources"])
        traces = max(traces, report["traces"])
    report = {**report, "sources": merged, "traces": traces}  # all traces (consensus keeps fewer)
    plot_report(report, out / "label_quality.png")
    return report


def data_for(source: str, available: list[str]) -> str:
    """Which stage's file carries the labels of ``source``: the latest labelling stage that read the file
    of the one that made them (MC's labels travel on in the judge's file), else that stage; sources no
    labeller makes (gold, human, imported) are on every file: the one that carries most."""
    from prmkit.labeling.labellers import LABELLERS, labeller, producer

    methods = [n for n in available if n in LABELLERS]  # in the recipe's order

    def carried(stage: str) -> str:  # follow the files that copy this stage's labels forward
        later = [n for n in methods if labeller(n).keeps_all and labeller(n).reads[:1] == (stage,)]
        return carried(later[0]) if later else stage

    method = producer(source)
    if method is not None:
        return carried(method) if method in methods else method
    starts = [n for n in methods if not labeller(n).reads]
    return carried(starts[0]) if starts else "problems"


def _pretrain(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
    from prmkit.training import pretrain_lm

    assert r.train.pretrain is not None  # the stage exists only when the recipe pretrains
    return pretrain_lm(deps["problems"] / TRACES, out / MODEL, r.train.pretrain)


def _base(deps: dict[str, Path]) -> dict[str, str]:
    """The pretrained backbone, when this run pretrains one (else the head config's own base_model)."""
    return {"base_model": str(deps["pretrain"] / MODEL)} if "pretrain" in deps else {}


def data_file(stage: str, folder: Path) -> Path:
    """The traces a data stage wrote, by what the stage declares (never its folder's name): the problems
    stage's sampled traces, a labeller's labelled ones."""
    return folder / (TRACES if stage == "problems" else LABELS)


def _prm(source: str) -> Run:
    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.training import train_prm

        stage, data = next((name, d) for name, d in deps.items() if name != "pretrain")
        path = data_file(stage, data)
        cfg = r.train.prm.model_copy(update={"label_source": source, **_base(deps)})
        return train_prm(path, out / MODEL, cfg)

    return run


def _prm_run(index: int, data_stage: str, size_stage: str | None) -> Run:
    """A ``train.prm_runs`` entry: its own settings; with ``size_of`` a random subset of its source's
    traces as large as that other source's, with ``traces_of`` the traces that source labelled, with
    ``fraction`` that share of them (a label budget); the stages
    whose files carry them are the plan's choice."""

    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        import random

        from prmkit.formats.inputs import read_traces
        from prmkit.training import train_prm

        spec = r.train.prm_runs[index]
        cfg = r.train.prm_config(spec).model_copy(update=_base(deps))
        traces = read_traces(data_file(data_stage, deps[data_stage]))
        other_source = spec.size_of or spec.traces_of
        if other_source is None and spec.fraction is None:
            return train_prm(traces, out / MODEL, cfg)
        labelled = [t for t in traces if any(s.label(spec.source) for s in t.steps)]
        if spec.fraction is not None:  # a label budget: nested, a smaller one inside every larger one
            order = random.Random(cfg.seed).sample(labelled, len(labelled))
            subset = order[: max(1, round(spec.fraction * len(labelled)))]
            return {
                **train_prm(subset, out / MODEL, cfg),
                "subset": {"traces": len(subset), "of": len(labelled)},
            }
        other = deps[size_stage or data_stage]
        chosen = {t.id for t in read_traces(other / LABELS) if any(s.label(other_source) for s in t.steps)}
        if spec.traces_of:
            subset = [t for t in labelled if t.id in chosen]
        else:
            subset = random.Random(cfg.seed).sample(labelled, min(len(chosen), len(labelled)))
        return {**train_prm(subset, out / MODEL, cfg), "subset": {"traces": len(subset), "of": len(labelled)}}

    return run


def _orm(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
    from prmkit.training import train_orm

    assert r.train.orm is not None  # the stage exists only when the recipe asks for an ORM
    cfg = r.train.orm.model_copy(update=_base(deps))
    return train_orm(deps["problems"] / TRACES, out / MODEL, cfg)


SCORES = "scores"
"""The run's folder (beside ``stages/``) of the ORM's answers that its evaluations share
(:mod:`prmkit.pipeline.scores`)."""


class _OrmBaseline:
    """The ORM as the evaluation stages read it: each model's best-of-N baseline scores the same pools
    (the tuning set's for every model, then the claims set's), so the ORM scores a pool once per run and
    every other stage, in its own process or not, gets the very floats that one call gave (read from the
    run's :data:`SCORES` folder); the checkpoint is loaded only by a stage that scores."""

    def __init__(self, folder: Path, store: Path):
        self.folder, self.store = folder, store
        self.name = str(folder)  # the name load_scorer gives a checkpoint's scorer: its path
        stamp = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(folder.iterdir())]
        self.parts = (folder.parent.name, *stamp)  # the ORM stage's name-key, and this very checkpoint

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        import torch

        from prmkit.pipeline.scores import pool_key, stored_scores

        # the thread count is in the key: a run resumed with other --jobs never mixes in other sums
        key = pool_key(*self.parts, f"threads={torch.get_num_threads()}", traces=traces)
        return stored_scores(self.store, key, traces, self._score)

    def _score(self, traces: Sequence[Trace]) -> list[list[float]]:
        from prmkit.scoring import load_scorer

        return load_scorer(self.folder).score(traces)


def _orm_baseline(r: Recipe, deps: dict[str, Path], model_stage: str) -> _OrmBaseline | None:
    """The run's ORM as the baseline of ``model_stage``'s evaluation, None without one or for the ORM."""
    if "orm" not in deps or model_stage == "orm":
        return None
    return _OrmBaseline(deps["orm"] / MODEL, r.output_dir / SCORES)


def _evaluate(model_stage: str) -> Run:
    """The model measured on the tuning set (``evaluate.seed``), and on ProcessBench files at the
    threshold tuned there; everything it measured lands in ``eval/``."""

    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.evaluation.suite import evaluate_world, processbench_at_threshold
        from prmkit.scoring import load_scorer

        model = deps[model_stage] / MODEL
        orm = _orm_baseline(r, deps, model_stage)
        # the pretrained LM declares no PRM convention: read it zero-shot, by its own likelihood
        convention = "likelihood" if model_stage == "pretrain" else None
        e = r.evaluate
        evaluation = evaluate_world(
            load_scorer(model, convention),
            out / EVAL,
            e,
            orm=orm,
            policy_config=e.policy,
            world_config=e.generator,
        )
        if e.processbench:
            evaluation = processbench_at_threshold(model, e.processbench, evaluation, out / EVAL, convention)
        return evaluation

    return run


def _card(model_stage: str) -> Run:
    """The process card beside a copy of the checkpoint, from what its ``eval-`` stage wrote."""

    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        import json

        from prmkit.cards.card import EVAL_DIR, write_card
        from prmkit.evaluation.suite import SUMMARY_FILE

        model_dir = out / MODEL
        if model_dir.exists():
            shutil.rmtree(model_dir)
        shutil.copytree(deps[model_stage] / MODEL, model_dir)
        shutil.copytree(deps[f"eval-{model_stage}"] / EVAL, model_dir / EVAL_DIR)
        evaluation = json.loads((model_dir / EVAL_DIR / SUMMARY_FILE).read_text())
        orm = deps["orm"] / MODEL if "orm" in deps and model_stage != "orm" else None  # the card's ORM role
        return {"card": str(write_card(model_dir, evaluation, orm=orm))}

    return run


def _claims(model_stage: str) -> Run:
    """The model measured once more on the claims set (``evaluate.claims_seed``): fresh problems no
    development step has seen; no card, only the evaluation (``claims/summary.json``)."""

    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.evaluation.suite import evaluate_world
        from prmkit.scoring import load_scorer

        assert r.evaluate.claims_seed is not None  # the stage exists only when the recipe sets one
        orm = _orm_baseline(r, deps, model_stage)
        scorer = load_scorer(deps[model_stage] / MODEL, "likelihood" if model_stage == "pretrain" else None)
        e = r.evaluate
        claims = e.model_copy(update={"seed": e.claims_seed})
        return evaluate_world(
            scorer, out / "claims", claims, orm=orm, policy_config=e.policy, world_config=e.generator
        )

    return run


def _rl(reward: str) -> Run:
    def run(r: Recipe, out: Path, deps: dict[str, Path]) -> dict[str, Any]:
        from prmkit.rl.train import train_policy

        assert r.rl is not None  # the stage exists only when the recipe asks for RL
        prm = next((d / MODEL for name, d in deps.items() if name.startswith("prm-")), None)
        cfg = r.rl.run_config(reward, str(deps["pretrain"] / MODEL), None if prm is None else str(prm))
        return train_policy(cfg, out / "policy")

    return run


def plan(r: Recipe) -> list[Stage]:
    """The stages this recipe runs, in order, with what each reads."""
    stages = _data_stages(r)
    models = _model_stages(r, stages)
    if r.train.pretrain is not None and r.evaluate.zero_shot:
        models.insert(0, "pretrain")
    stages += _measure_stages(r, models)
    if r.rl is not None:
        prm = "prm-" + r.rl.prm_source.replace(":", "-")
        reads = ["pretrain", *([prm] if prm in models else [])]
        for reward in r.rl.rewards:
            settings = r.rl.model_dump(mode="json", exclude={"rewards"}) | {"reward": reward}
            run, extra = _rl(reward), {"reward": reward}
            stages.append(Stage(f"rl-{reward}", reads, settings, run, "rl", extra, outputs=("policy",)))
    return stages


def _data_stages(r: Recipe) -> list[Stage]:
    """Problems and traces, each labeller, and the labels' report against gold (a world's traces)."""
    from prmkit.labeling.labellers import labeller

    stages = [Stage("problems", [], r.problems.model_dump(mode="json"), _problems, outputs=(TRACES,))]
    methods = r.labels.methods
    label_settings = r.labels.model_dump(mode="json", exclude={"methods"})
    for name in methods:
        reads = [m for m in labeller(name).reads if m in methods][:1] or ["problems"]
        stages.append(Stage(name, reads, label_settings, _label(name), "label", outputs=(LABELS,)))
    labelled = [s.name for s in stages if s.kind == "label"]
    if r.problems.world_name and labelled:
        reads = ["problems", *labelled]
        stages.append(
            Stage("label_report", reads, {}, _label_report, "report", outputs=("label_quality.png",))
        )
    return stages


def _model_stages(r: Recipe, stages: list[Stage]) -> list[str]:
    """Appends the training stages (pretraining, every PRM, the ORM) to ``stages``; returns the models."""
    backbone: list[str] = []
    if r.train.pretrain is not None:
        settings = r.train.pretrain.model_dump(mode="json")
        stages.append(Stage("pretrain", ["problems"], settings, _pretrain, "train", outputs=(MODEL,)))
        backbone = ["pretrain"]
    available = [s.name for s in stages]
    models = []
    for source in r.train.prm_sources:
        name = "prm-" + source.replace(":", "-")
        settings = r.train.prm.model_dump(mode="json") | {"label_source": source}
        data = data_for(source, available)
        stages.append(Stage(name, [*backbone, data], settings, _prm(source), "train", outputs=(MODEL,)))
        models.append(name)
    for i, spec in enumerate(r.train.prm_runs):
        name = "prm-" + spec.name
        data = data_for(spec.source, available)
        other_source = spec.size_of or spec.traces_of
        sized = data_for(other_source, available) if other_source else None
        reads = [*backbone, data] + ([sized] if sized and sized != data else [])
        settings = {"prm": r.train.prm_config(spec).model_dump(mode="json"), "size_of": spec.size_of}
        for key in ("traces_of", "fraction"):  # only when set: older runs' keys stay the same
            if getattr(spec, key) is not None:
                settings[key] = getattr(spec, key)
        stages.append(Stage(name, reads, settings, _prm_run(i, data, sized), "train", outputs=(MODEL,)))
        models.append(name)
    if r.train.orm is not None:
        settings = r.train.orm.model_dump(mode="json")
        stages.append(Stage("orm", [*backbone, "problems"], settings, _orm, "train", outputs=(MODEL,)))
        models.append("orm")
    return models


def _measure_stages(r: Recipe, models: list[str]) -> list[Stage]:
    """Each model's evaluation on the tuning set, its card, then its evaluation on the claims set."""
    # claims_seed and compare are left out of the evaluation stages' keys: adding them reruns nothing
    ev = r.evaluate.model_dump(mode="json", exclude={"claims_seed", "compare"})
    stages = []
    for m in models:
        deps = [m, "orm"] if r.train.orm is not None and m != "orm" else [m]
        stages.append(Stage(f"eval-{m}", deps, ev, _evaluate(m), "eval", {"model": m}, outputs=(EVAL,)))
    for m in models:
        reads = [m, f"eval-{m}", *(["orm"] if r.train.orm is not None and m != "orm" else [])]
        stages.append(Stage(f"card-{m}", reads, {}, _card(m), "card", {"model": m}, outputs=(MODEL,)))
    if r.evaluate.claims_seed is not None:
        claims = ev | {"seed": r.evaluate.claims_seed, "processbench": []}
        for m in models:
            deps = [m, "orm"] if r.train.orm is not None and m != "orm" else [m]
            run, extra = _claims(m), {"model": m}
            stages.append(Stage(f"claims-{m}", deps, claims, run, "claims", extra, outputs=("claims",)))
    return stages
