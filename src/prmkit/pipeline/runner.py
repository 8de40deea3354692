"""``prmkit run``: execute a recipe's stages in order, skipping those already done, then write the report.

Each stage's key hashes its settings, the keys of the stages it reads and prmkit's version, so a
rerun skips finished stages, a changed setting reruns exactly the stages it affects, and a crash
resumes at the stage that broke (whose own jobs resume from their logs and checkpoints).

Under ``accelerate launch`` (several processes) the training stages run on every process, as the trainer
expects, and every other stage (problems, labelling, judging, evaluation) on the main process alone,
the others waiting for its ``DONE.json`` before they read what it wrote: a recipe labels once however
many processes run it. They wait on the file, not in a collective, since a labelling stage may take
longer than a process group's timeout; if the main process fails, the launcher stops the others.

One run writes an output folder at a time (:func:`output_lock`): a second one started on it is refused
in one line naming the first, instead of redoing its stages into the same folders.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError
from prmkit.core.files import FolderLockedError, file_issue, lock_folder
from prmkit.core.ranks import is_main_process, world_size
from prmkit.pipeline.cache import StageDir, find_done, stage_dir, stage_key
from prmkit.pipeline.recipe import Recipe
from prmkit.pipeline.stages import Stage, plan
from prmkit.pipeline.yamlconf import load_yaml_config


@dataclass
class RunResult:
    output_dir: Path
    report_md: Path
    report_html: Path
    stages: dict[str, dict[str, Any]]
    """Per stage: key, folder, seconds, whether it was cached this time, and its summary."""


def load_recipe(path: str | Path, overrides: dict[str, Any] | None = None) -> Recipe:
    """Read and validate a recipe (every mistake reported at once, with its line)."""
    return load_yaml_config(path, Recipe, overrides)


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


def _taken(recipe: Recipe, out: Path, st: Stage, key: str) -> StageDir | None:
    """Another run's finished ``st`` with this key (``recipe.reuse``), unless this run's folder has its
    own: a stage done here is never replaced by one from elsewhere."""
    if (out / "stages" / f"{st.name}-{key}" / "DONE.json").exists():
        return None
    return find_done(st.name, key, recipe.reuse, st.outputs)


def stage_states(recipe: Recipe) -> list[tuple[Stage, str]]:
    """Each stage of ``recipe`` (one run, not a sweep) with what a run would do with it: ``done`` (in
    its own folder), ``reused from <folder>`` (``recipe.reuse``) or ``to run``; nothing is written."""
    from prmkit import __version__

    keys: dict[str, str] = {}
    states = []
    for st in plan(recipe):
        key = keys[st.name] = stage_key(st.name, st.settings, {d: keys[d] for d in st.deps}, __version__)
        own = recipe.output_dir / "stages" / f"{st.name}-{key}"
        taken = _taken(recipe, recipe.output_dir, st, key)
        if taken is not None:
            states.append((st, f"reused from {taken.path.parent.parent}"))
        else:
            done = (own / "DONE.json").exists() and all((own / o).exists() for o in st.outputs)
            states.append((st, "done" if done else "to run"))
    return states


def run_stages(recipe: Recipe, stages: list[Stage], out: Path) -> dict[str, dict[str, Any]]:
    from prmkit import __version__

    dirs: dict[str, StageDir] = {}
    results: dict[str, dict[str, Any]] = {}
    for i, st in enumerate(stages, start=1):
        key = stage_key(st.name, st.settings, {d: dirs[d].key for d in st.deps}, __version__)
        head = f"[{i}/{len(stages)}] {st.name}"
        taken = _taken(recipe, out, st, key)
        if taken is not None:  # another run's identical stage: read where it is
            dirs[st.name], done = taken, taken.summary()
            log(f"[green]{head}[/green]: reused ({taken.path}, took {done['seconds']:.0f}s when run)")
            results[st.name] = {"key": key, "dir": str(taken.path), "cached": True, "reused": True}
            results[st.name].update({**done, **_outputs(st, taken)})
            continue
        sd = dirs[st.name] = stage_dir(out, st.name, key)
        if sd.is_done() and all((sd.path / o).exists() for o in st.outputs):  # else made before it wrote them
            done = sd.summary()
            log(f"[green]{head}[/green]: cached ({sd.path.name}, took {done['seconds']:.0f}s when run)")
            results[st.name] = {"key": key, "dir": str(sd.path), "cached": True, **done, **_outputs(st, sd)}
            continue
        if not is_main_process() and st.kind not in EVERY_PROCESS:
            done = _wait_for(sd)
            results[st.name] = {"key": key, "dir": str(sd.path), "cached": False, **done, **_outputs(st, sd)}
            continue
        log(f"[bold]{head}[/bold] -> {sd.path}")
        start = time.perf_counter()
        summary = st.run(recipe, sd.path, {d: dirs[d].path for d in st.deps})
        seconds = time.perf_counter() - start
        missing = [o for o in st.outputs if not (sd.path / o).exists()]
        if missing and is_main_process():
            raise RuntimeError(f"stage {st.name} finished without writing {', '.join(missing)} in {sd.path}")
        summary = json.loads(json.dumps(summary, default=str))
        if is_main_process():
            sd.mark_done(summary, seconds)
        log(f"[green]{head}[/green]: done in {seconds:.0f}s")
        results[st.name] = {
            "key": key,
            "dir": str(sd.path),
            "cached": False,
            "seconds": seconds,
            "summary": summary,
            **_outputs(st, sd),
        }
    return results


def run_once(recipe: Recipe, source: str | None = None) -> RunResult:
    """Run the whole loop of ``recipe`` once (its ``seeds`` are the sweep's business, not read here) and
    write ``report.md`` / ``report.html`` in its output folder; ``source`` names the recipe file there."""
    from prmkit.pipeline.report import write_report
    from prmkit.pipeline.summary import build_report

    out = recipe.output_dir
    stages = plan(recipe)
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
    results = run_stages(recipe, stages, out)
    md, page = out / "report.md", out / "report.html"
    if is_main_process():  # the others have nothing left to do: every stage they read is done
        md, page = write_report(build_report(recipe, results, out, source), out)
        log(f"report: {page}")
    return RunResult(out, md, page, results)
