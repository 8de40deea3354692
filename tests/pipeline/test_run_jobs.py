"""``prmkit run --jobs N``: stages whose inputs are done run side by side, each in its own process, with
the results of one at a time; a failing stage stops the run (the running ones finish, their work kept);
a killed run leaves no stage process behind and its rerun goes on where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.errors import InputError, Issue
from prmkit.pipeline import load_recipe
from prmkit.pipeline.runner import run_stages, stage_index
from prmkit.pipeline.stages import Stage
from tests.pipeline.test_run import numbers

REPO = Path(__file__).resolve().parents[2]
HOLD_S = 2.0
"""How long the two first stages of the diamond hold: longer than starting a stage's process on a loaded
machine, so they overlap only if they run side by side."""
RELEASE = "release"
"""A file in the run's folder that lets the killed run's stages finish (its rerun creates it)."""


def _stage(name: str, deps: list[str], action: str = "hold") -> Stage:
    def run(r: Any, out: Path, inputs: dict[str, Path]) -> dict[str, Any]:
        start = time.time()
        (out / "pid").write_text(str(os.getpid()))
        if action == "hold":
            time.sleep(HOLD_S)
        elif action == "fail":
            time.sleep(0.3)
            raise InputError([Issue("data.jsonl", 3, "steps", "a list", "a number")], skippable=False)
        elif action == "wait":  # until the rerun releases it (the killed run never does)
            while not (out.parent.parent / RELEASE).exists():
                time.sleep(0.1)
        read = "".join((inputs[d] / "made.txt").read_text() for d in deps)
        (out / "made.txt").write_text(read + name)
        return {"made": read + name, "start": start, "end": time.time(), "pid": os.getpid()}

    return Stage(name, deps, {"action": action}, run, outputs=("made.txt",))


SCENARIOS = {
    "diamond": [_stage("a", []), _stage("b", []), _stage("c", ["a", "b"], "quick"), _stage("d", ["c"], "quick")],
    "fails": [_stage("slow", []), _stage("bad", [], "fail"), _stage("after_bad", ["bad"], "quick"),
              _stage("later", [], "quick")],
    "killed": [_stage("w1", [], "wait"), _stage("w2", [], "wait"), _stage("end", ["w1", "w2"], "quick")],
}  # fmt: skip


def scenario(recipe: Any) -> list[Stage]:
    """The planner of these tests (a stage's process plans again by it): the scenario the recipe names."""
    return SCENARIOS[recipe.name]


def _recipe(name: str) -> Any:
    return load_recipe(REPO / "recipes" / "world.yaml").model_copy(update={"name": name})


def _run(name: str, out: Path, jobs: int) -> dict[str, dict[str, Any]]:
    recipe = _recipe(name)
    return run_stages(recipe, scenario(recipe), out, jobs, scenario)


def test_stages_whose_inputs_are_done_run_side_by_side_with_the_results_of_one_at_a_time(
    tmp_path: Path,
) -> None:
    side = _run("diamond", tmp_path / "two", jobs=2)
    one = _run("diamond", tmp_path / "one", jobs=1)
    assert list(side) == list(one) == ["a", "b", "c", "d"]  # in plan order, whatever order they ended in
    assert [side[s]["key"] for s in side] == [one[s]["key"] for s in one]
    assert {s: r["summary"]["made"] for s, r in side.items()} == {
        s: r["summary"]["made"] for s, r in one.items()
    }
    a, b, c = (side[s]["summary"] for s in "abc")
    assert a["start"] < b["end"] and b["start"] < a["end"]  # a and b overlapped
    assert c["start"] >= max(a["end"], b["end"])  # c read both, so it waited for both
    assert len({a["pid"], b["pid"], c["pid"], os.getpid()}) == 4  # a process of its own each
    assert {s: r["summary"]["pid"] for s, r in one.items()} == dict.fromkeys("abcd", os.getpid())
    for r in side.values():  # marked done by the runner, after the stage wrote what it declares
        assert json.loads((Path(r["dir"]) / "DONE.json").read_text())["summary"] == r["summary"]
        assert 0 < r["seconds"] < 60
    again = _run("diamond", tmp_path / "two", jobs=2)
    assert all(r["cached"] for r in again.values())


def test_a_failing_stage_stops_the_run_and_the_running_ones_finish(tmp_path: Path) -> None:
    """``bad`` fails while ``slow`` runs: ``slow`` finishes and is marked done (its rerun is cached),
    nothing else starts (neither ``bad``'s reader nor ``later``, which had not started), and the error is
    the stage's own, as one at a time raises it, its process's traceback in a note."""
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        _run("fails", out, jobs=2)
    assert str(caught.value) == "data.jsonl:3: steps: expected a list, found a number"
    assert caught.value.issues == [Issue("data.jsonl", 3, "steps", "a list", "a number")]
    assert any("stage bad, in its own process" in note for note in caught.value.__notes__)
    assert sorted(p.parent.name.rsplit("-", 1)[0] for p in (out / "stages").glob("*/DONE.json")) == ["slow"]
    assert sorted(p.name.rsplit("-", 1)[0] for p in (out / "stages").iterdir()) == ["bad", "slow"]


KILLED = """
import sys
from pathlib import Path
from tests.pipeline.test_run_jobs import _run
_run("killed", Path(sys.argv[1]), jobs=2)
"""


def _gone(pid: int) -> bool:
    """The process ``pid`` has exited (gone, or a zombie its new parent has not reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.mark.slow  # a second interpreter and its own stage server: ~15 s on a loaded 2-core machine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_killed_run_leaves_no_stage_running_and_its_rerun_finishes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(out)], cwd=REPO, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(out.glob("stages/w*/pid"))) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    pids = [int(p.read_text()) for p in out.glob("stages/w*/pid")]
    assert len(pids) == 2 and proc.poll() is None, "both waiting stages should be running"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in pids), "a stage's process outlived its run"
    assert not list(out.glob("stages/*/DONE.json"))
    (out / RELEASE).write_text("")
    resumed = _run("killed", out, jobs=2)
    assert not any(r["cached"] for r in resumed.values()) and resumed["end"]["summary"]["made"] == "w1w2end"


RECIPE = """
name: jobs
output_dir: {out}
problems: {{n: 8, per_problem: 2}}
labels: {{methods: [mc, judge], rollouts: 1}}
train:
  pretrain: {{max_steps: 3, threads: 1, batch_size: 4, tiny: {{layers: 1, width: 16, heads: 2, positions: rope}}}}
  prm: {{max_steps: 2, threads: 1}}
  prm_sources: [gold, mc_hard]
  orm: null
evaluate: {{problems: 3, per_problem: 2, heldout_problems: 2, bootstrap: 20, beam_problems: 0, zero_shot: false,
           plots: false}}
"""
"""A world recipe cut to seconds a stage, with stages that can run side by side (labels beside the
pretraining, the two PRMs, their evaluations)."""


TIMED = ("Training: what each model actually did", "Where the time went", "Reproduce")
"""The report's sections that hold wall times (or the recipe's path), which differ between runs by design."""


def _report(out: Path) -> list[str]:
    """The report's sections without the timed ones, paths made relative to the run's folder."""
    sections = (out / "report.md").read_text().replace(str(out), "OUT").split("\n## ")
    return [s for s in sections if not s.startswith(TIMED)]


@pytest.mark.slow
def test_a_world_recipe_with_two_jobs_gives_the_numbers_and_report_of_one(tmp_path: Path) -> None:
    """The same numbers and report under ``--jobs 2`` as one job. With an ORM and a claims set, every
    model's evaluation and claims stage takes the ORM as its best-of-N baseline: under ``--jobs 2`` each
    runs in a process of its own, and they share one scoring of each pool (issue 65) through the run's
    ``scores/`` folder, one entry a pool (the tuning set's, the claims set's)."""
    recipe = tmp_path / "jobs.yaml"
    text = RECIPE.format(out=tmp_path / "one").replace("orm: null", "orm: {max_steps: 2, threads: 1}")
    recipe.write_text(text.replace("zero_shot: false,", "zero_shot: true, claims_seed: 9,"))
    for out, jobs in ((tmp_path / "one", "1"), (tmp_path / "two", "2")):
        command = ["run", str(recipe), "-o", str(out), "--jobs", jobs, "--set", "evaluate.bootstrap=12"]
        ran = CliRunner().invoke(app, command)
        assert ran.exit_code == 0, ran.output
        assert len(list((out / "scores").iterdir())) == 2  # the tuning pool's entry, the claims pool's
    one, two = numbers(tmp_path / "one"), numbers(tmp_path / "two")
    assert two == one
    assert {"eval-pretrain", "claims-prm-gold", "claims-orm"} <= set(two)
    assert two["eval-prm-gold"]["bon"]["orm"] == "OUT/" + next(
        p.relative_to(tmp_path / "two").as_posix() + "/model"
        for p in (tmp_path / "two" / "stages").glob("orm-*")
    )
    assert _report(tmp_path / "two") == _report(tmp_path / "one")
    # the --set item is in the resolved recipe beside the output and in the report's command
    assert json.loads((tmp_path / "two" / "recipe.resolved.json").read_text())["evaluate"]["bootstrap"] == 12
    assert f"prmkit run {recipe} --set=evaluate.bootstrap=12" in (tmp_path / "two" / "report.md").read_text()
    index = stage_index(tmp_path / "two")
    assert set(index) == {p.name.rsplit("-", 1)[0] for p in (tmp_path / "two" / "stages").iterdir()}


def test_jobs_start_the_heaviest_chain_first_so_pretraining_runs_beside_the_labellers() -> None:
    """The demo's plan lists the labellers before pretraining; with two jobs pretraining, on which every
    model waits, must start as soon as the problems are done, not after four labelling stages."""
    from prmkit.pipeline.runner import critical_paths
    from prmkit.pipeline.stages import plan

    recipe = load_recipe(Path(__file__).parents[2] / "recipes" / "world.yaml")
    stages = {st.name: st for st in plan(recipe)}
    longest = critical_paths(stages)
    # pretrain (10) -> a PRM (10) -> its evaluation (1) -> its card (1)
    assert longest["pretrain"] == 22 and longest["prm-gold"] == 12 and longest["card-orm"] == 1
    assert longest["problems"] == 23 and longest["mc"] == longest["judge"] + 1 == 14
    ready = sorted((n for n in stages if stages[n].deps == ["problems"]), key=lambda n: -longest[n])
    assert ready[0] == "pretrain" and set(ready[1:]) == {"mc", "binary_search"}
