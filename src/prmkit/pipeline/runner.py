"""``prmkit run``: execute a recipe's stages in order, skipping those already done, then write the report.

Each stage's key hashes its settings, the keys of the stages it reads and prmkit's version, so a
rerun skips finished stages, a changed setting reruns exactly the stages it affects, and a crash
resumes at the stage that broke (whose own jobs resume from their logs and checkpoints).

Under ``accelerate launch`` (several processes) the training stages run on every process, as the trainer
expects, and every other stage (problems, labelling, judging, evaluation) on the main process alone,
the others waiting for its ``DONE.json`` before they read what it wrote: a recipe labels once however
many processes run it. They wait on the file, not in a collective, since a labelling stage may take
longer than a process group's timeout; if the main process fails, the launcher stops the others.

A recipe with ``study: rl`` is an RL study (``recipes/rl.yaml``): its own typed recipe
(:mod:`prmkit.pipeline.rl_recipe`), stages (:mod:`prmkit.pipeline.rl_stages`) and report, run by this same
loop; :func:`load_recipe` tells the two apart and :func:`plan_of` plans either.

``--jobs N`` runs up to N stages whose inputs are done at once, each in a process of its own
(:mod:`prmkit.pipeline.parallel`); the stages, their keys, folders and results are the same as one at a
time (each stage is deterministic given its settings and inputs). It needs a single process (no launch).

One run writes an output folder at a time (:func:`output_lock`): a second one started on it is refused
in one line naming the first, instead of redoing its stages into the same folders.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from prmkit.core.errors import InputError
from prmkit.core.files import FolderLockedError, atomic_write, file_issue, lock_folder
from prmkit.core.ranks import is_main_process, world_size
from prmkit.pipeline.cache import StageDir, find_done, stage_dir, stage_key
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.rl_recipe import RlStudy
from prmkit.pipeline.stages import Stage, plan
from prmkit.pipeline.yamlconf import load_yaml_config

AnyRecipe = Recipe | RlStudy
"""What ``prmkit run`` runs: the world loop, or an RL study."""
STUDIES = {"rl": RlStudy}
"""A recipe's ``study`` key -> its typed recipe (none: the world loop's :class:`Recipe`)."""


class _Kind(BaseModel):
    """The one key :func:`load_recipe` reads first: which typed recipe the file is."""

    model_config = ConfigDict(extra="ignore")
    study: str | None = None


@dataclass
class RunResult:
    output_dir: Path
    report_md: Path
    report_html: Path
    stages: dict[str, dict[str, Any]]
    """Per stage: key, folder, seconds, whether it was cached this time, and its summary."""


def load_recipe(path: str | Path, overrides: dict[str, Any] | None = None) -> AnyRecipe:
    """Read and validate a recipe (every mistake reported at once, with its line): an RL study where its
    ``study`` key says ``rl``, else the world loop's recipe (which refuses any other ``study``)."""
    kind = load_yaml_config(path, _Kind).study
    return load_yaml_config(path, STUDIES.get(kind or "", Recipe), overrides)


def plan_of(recipe: AnyRecipe) -> list[Stage]:
    """The stages ``recipe`` runs: an RL study's (:func:`prmkit.pipeline.rl_stages.plan`) or the loop's."""
    from prmkit.pipeline import rl_stages

    return rl_stages.plan(recipe) if isinstance(recipe, RlStudy) else plan(recipe)


RUN_LOCK = "run.lock"
"""The lock file of a run in its output folder (the label jobs' mechanism: :func:`~prmkit.core.files.lock_folder`)."""


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold ``out`` for this run while the block runs; a folder another live run holds is an
    :class:`InputError` naming it (pid, start, host). Only the main process of a launch takes it: the
    others follow its stages, they do not compete with it. A lock left by a killed run is taken over."""
    if not is_main_process():
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    try:
        fd = lock_folder(out, RUN_LOCK)
    except FolderLockedError as err:
        fix = "wait for it to finish, or give this run another --output-dir"
        found = f"one being run by {err.holder}"
        issue = file_issue(out, "an output folder no other run is writing", found, fix, "(output)")
        raise InputError([issue], skippable=False) from None
    try:
        yield
    finally:
        os.close(fd)  # releases the lock


EVERY_PROCESS = ("train",)
"""Stage kinds every process of a launch runs (the trainer's ranks); the rest run on the main one."""
WAIT_POLL_S = 1.0


def log(message: str) -> None:
    """One line of the run's progress on the console, from the main process only."""
    from prmkit.core.progress import console

    if is_main_process():
        console.print(message)


def _wait_for(sd: StageDir) -> dict[str, Any]:
    """On a process other than the main one: the summary of a stage the main process runs, once done."""
    while not sd.is_done():
        time.sleep(WAIT_POLL_S)
    return sd.summary()


def _outputs(st: Stage, sd: StageDir) -> dict[str, list[str]]:
    """The paths of what the stage declares it writes, for the readers of its results (the report)."""
    return {"outputs": [str(sd.path / o) for o in st.outputs]}


def _taken(recipe: AnyRecipe, out: Path, st: Stage, key: str) -> StageDir | None:
    """Another run's finished ``st`` with this key (``recipe.reuse``), unless this run's folder has its
    own: a stage done here is never replaced by one from elsewhere."""
    if (out / "stages" / f"{st.name}-{key}" / "DONE.json").exists():
        return None
    return find_done(st.name, key, recipe.reuse, st.outputs)


def stage_states(recipe: AnyRecipe) -> list[tuple[Stage, str]]:
    """Each stage of ``recipe`` (one run, not a sweep) with what a run would do with it: ``done`` (in
    its own folder), ``reused from <folder>`` (``recipe.reuse``) or ``to run``; nothing is written."""
    from prmkit import __version__

    keys: dict[str, str] = {}
    states = []
    for st in plan_of(recipe):
        key = keys[st.name] = stage_key(st.name, st.settings, {d: keys[d] for d in st.deps}, __version__)
        own = recipe.output_dir / "stages" / f"{st.name}-{key}"
        taken = _taken(recipe, recipe.output_dir, st, key)
        if taken is not None:
            states.append((st, f"reused from {taken.path.parent.parent}"))
        else:
            done = (own / "DONE.json").exists() and all((own / o).exists() for o in st.outputs)
            states.append((st, "done" if done else "to run"))
    return states


Planner = Callable[[Any], list[Stage]]
"""What plans a recipe's stages (:func:`plan_of`); a module-level function, so a stage's own process
(``--jobs``) can plan again and find its stage."""
STAGE_INDEX = "stages.json"
"""The run's stage index in its output folder: each stage's name -> its key and folder (its own or
another run's it reused), for readers of a run's outputs (e.g. experiments/rl_faithfulness.py)."""


def _found(
    recipe: AnyRecipe, out: Path, st: Stage, key: str, head: str
) -> tuple[StageDir, dict[str, Any]] | None:
    """``st`` done before, here or in a run ``recipe.reuse`` names: its folder and result, or None."""
    taken = _taken(recipe, out, st, key)
    if taken is not None:  # another run's identical stage: read where it is
        done = taken.summary()
        log(f"[green]{head}[/green]: reused ({taken.path}, took {done['seconds']:.0f}s when run)")
        result = {"key": key, "dir": str(taken.path), "cached": True, "reused": True}
        return taken, {**result, **done, **_outputs(st, taken)}
    sd = StageDir(st.name, key, out / "stages" / f"{st.name}-{key}")
    if sd.is_done() and all((sd.path / o).exists() for o in st.outputs):  # else made before it wrote them
        done = sd.summary()
        log(f"[green]{head}[/green]: cached ({sd.path.name}, took {done['seconds']:.0f}s when run)")
        return sd, {"key": key, "dir": str(sd.path), "cached": True, **done, **_outputs(st, sd)}
    return None


def _finish(st: Stage, sd: StageDir, summary: Any, seconds: float, head: str) -> dict[str, Any]:
    """A stage that returned: its declared outputs checked, then (main process) its ``DONE.json``."""
    missing = [o for o in st.outputs if not (sd.path / o).exists()]
    if missing and is_main_process():
        raise RuntimeError(f"stage {st.name} finished without writing {', '.join(missing)} in {sd.path}")
    summary = json.loads(json.dumps(summary, default=str))
    if is_main_process():
        sd.mark_done(summary, seconds)
    log(f"[green]{head}[/green]: done in {seconds:.0f}s")
    result = {"key": sd.key, "dir": str(sd.path), "cached": False, "seconds": seconds, "summary": summary}
    return {**result, **_outputs(st, sd)}


def run_stages(recipe: AnyRecipe, stages: list[Stage], out: Path, jobs: int = 1,
               planner: Planner = plan_of) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Run ``stages`` (``planner(recipe)``'s) into ``out``, taking those done before; their results in
    plan order. ``jobs`` > 1: that many at once, each whose inputs are done, in processes of their own
    (:mod:`prmkit.pipeline.parallel`); 1: one after another, in this process."""
    from prmkit import __version__

    if jobs > 1 and world_size() > 1:
        raise ValueError(f"--jobs {jobs} under a launch of {world_size()} processes: run it with --jobs 1")
    dirs: dict[str, StageDir] = {}
    results: dict[str, dict[str, Any]] = {}
    todo: dict[str, tuple[Stage, StageDir, str]] = {}
    for i, st in enumerate(stages, start=1):
        key = stage_key(st.name, st.settings, {d: dirs[d].key for d in st.deps}, __version__)
        head = f"[{i}/{len(stages)}] {st.name}"
        found = _found(recipe, out, st, key, head)
        if found is not None:
            dirs[st.name], results[st.name] = found
            continue
        if jobs > 1:  # its folder made when it starts, as one at a time
            dirs[st.name] = StageDir(st.name, key, out / "stages" / f"{st.name}-{key}")
            todo[st.name] = (st, dirs[st.name], head)
            continue
        sd = dirs[st.name] = stage_dir(out, st.name, key)
        if not is_main_process() and st.kind not in EVERY_PROCESS:
            done = _wait_for(sd)
            results[st.name] = {"key": key, "dir": str(sd.path), "cached": False, **done, **_outputs(st, sd)}
        else:
            log(f"[bold]{head}[/bold] -> {sd.path}")
            start = time.perf_counter()
            summary = st.run(recipe, sd.path, {d: dirs[d].path for d in st.deps})
            results[st.name] = _finish(st, sd, summary, time.perf_counter() - start, head)
    if todo:
        results |= _side_by_side(recipe, todo, dirs, jobs, planner)
    return {st.name: results[st.name] for st in stages}


def _side_by_side(recipe: AnyRecipe, todo: dict[str, tuple[Stage, StageDir, str]], dirs: dict[str, StageDir],
                  jobs: int, planner: Planner) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The stages of ``todo`` (name -> stage, folder, log head), ``jobs`` at a time in processes of their
    own, each once the stages it reads are done; their results."""
    from prmkit.pipeline.parallel import Job, run_jobs, run_planned

    results: dict[str, dict[str, Any]] = {}

    def started(job: Job) -> None:
        _, sd, head = todo[job.name]
        sd.path.mkdir(parents=True, exist_ok=True)
        log(f"[bold]{head}[/bold] -> {sd.path}")

    def finished(job: Job, summary: Any, seconds: float) -> None:
        st, sd, head = todo[job.name]
        results[job.name] = _finish(st, sd, summary, seconds, head)

    calls = [
        Job(name, [d for d in st.deps if d in todo],
            partial(run_planned, planner, recipe, name, sd.path, {d: dirs[d].path for d in st.deps}))
        for name, (st, sd, _) in todo.items()
    ]  # fmt: skip
    longest = critical_paths({name: st for name, (st, _, _) in todo.items()})
    calls.sort(key=lambda job: -longest[job.name])  # stable: plan order among equals
    run_jobs(calls, jobs, started, finished, log)
    return results


HEAVY = {"train": 10, "rl": 10}
"""A stage's weight by kind when ``--jobs`` orders what to start: a training or RL stage costs minutes, the
others seconds (the demo's measured 360 s pretraining, 136-154 s each PRM or ORM, 6-34 s every other)."""


def critical_paths(stages: dict[str, Stage]) -> dict[str, int]:
    """Each stage's weight plus that of the heaviest chain of stages that read it, directly or not: the
    order ``--jobs`` starts ready stages in (the heaviest first), so pretraining, which every model waits
    for, starts beside the labellers instead of after them. Only the order changes, never a result."""
    readers: dict[str, list[str]] = {name: [] for name in stages}
    for name, st in stages.items():
        for dep in st.deps:
            if dep in readers:
                readers[dep].append(name)
    longest: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in longest:
            longest[name] = HEAVY.get(stages[name].kind, 1) + max(map(of, readers[name]), default=0)
        return longest[name]

    return {name: of(name) for name in stages}


def write_stage_index(out: Path, results: dict[str, dict[str, Any]]) -> Path:
    """:data:`STAGE_INDEX`: each stage's name -> its key and folder (written by every run)."""
    index = {name: {"key": r["key"], "dir": r["dir"]} for name, r in results.items()}
    with atomic_write(out / STAGE_INDEX) as fh:
        json.dump({"stages": index}, fh, indent=1)
    return out / STAGE_INDEX


def stage_index(out: Path) -> dict[str, Path]:
    """The stage folders a run into ``out`` used, by stage name (its :data:`STAGE_INDEX`)."""
    path = out / STAGE_INDEX
    if not path.is_file():
        issue = file_issue(
            path,
            "the stage index a prmkit run writes",
            "no such file",
            "run its recipe into this folder (again: its finished stages are cached), which writes it",
        )
        raise InputError([issue], skippable=False)
    return {name: Path(s["dir"]) for name, s in json.loads(path.read_text())["stages"].items()}


def run_once(recipe: AnyRecipe, source: str | None = None, jobs: int = 1) -> RunResult:
    """Run the whole loop of ``recipe`` once (its ``seeds`` are the sweep's business, not read here),
    ``jobs`` stages at a time (:func:`run_stages`), and write ``report.md`` / ``report.html`` and the stage
    index in its output folder; ``source`` names the recipe file (and its ``--set`` items) there."""
    from prmkit.pipeline.report import write_report
    from prmkit.pipeline.rl_stages import study_report
    from prmkit.pipeline.summary import build_report

    out = recipe.output_dir
    stages = plan_of(recipe)
    launched = [s.name for s in stages if s.kind == "rl"] if world_size() > 1 else []
    if launched:
        raise ValueError(
            f"the recipe's RL stages ({', '.join(launched)}) do not run under a launch of {world_size()} "
            "processes yet: run the recipe without its rl section under accelerate, then the RL stages "
            "in one process (prmkit run reuses the finished stages)"
        )
    out.mkdir(parents=True, exist_ok=True)
    if is_main_process():
        (out / "recipe.resolved.json").write_text(recipe.model_dump_json(indent=2))
    results = run_stages(recipe, stages, out, jobs)
    md, page = out / "report.md", out / "report.html"
    if is_main_process():  # the others have nothing left to do: every stage they read is done
        write_stage_index(out, results)
        if isinstance(recipe, RlStudy):
            report = study_report(recipe, results, out, source)
        else:
            report = build_report(recipe, results, out, source)
        md, page = write_report(report, out)
        log(f"report: {page}")
    return RunResult(out, md, page, results)
