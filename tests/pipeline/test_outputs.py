"""Stages declare what they write, and a model's evaluation is a stage of its own: its card stage reads
what the evaluation wrote and measures nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from prmkit.pipeline import load_recipe
from prmkit.pipeline.runner import run_stages
from prmkit.pipeline.stages import EVAL, MODEL, Stage, plan

REPO = Path(__file__).resolve().parents[2]


def test_every_stage_declares_its_outputs_and_each_card_reads_its_models_evaluation() -> None:
    stages = {s.name: s for s in plan(load_recipe(REPO / "recipes" / "world.yaml"))}
    assert all(s.outputs for s in stages.values())
    models = [n.removeprefix("eval-") for n in stages if n.startswith("eval-")]
    assert models and all(stages[f"eval-{m}"].outputs == (EVAL,) for m in models)
    for m in models:
        card = stages[f"card-{m}"]
        orm = ["orm"] if m != "orm" else []  # the card links the ORM beside the model (its roles)
        assert card.deps == [m, f"eval-{m}", *orm] and card.outputs == (MODEL,) and card.settings == {}
        assert list(stages).index(card.name) > list(stages).index(f"eval-{m}")


def test_a_stage_that_does_not_write_what_it_declares_fails_and_is_not_marked_done(tmp_path: Path) -> None:
    recipe = load_recipe(REPO / "recipes" / "world.yaml")

    def writes_nothing(r, out: Path, deps: dict[str, Path]) -> dict:
        return {}

    def writes(r, out: Path, deps: dict[str, Path]) -> dict:
        (out / "made.txt").write_text("x")
        return {"n": 1}

    good = Stage("good", [], {"a": 1}, writes, outputs=("made.txt",))
    results = run_stages(recipe, [good], tmp_path)
    assert results["good"]["outputs"] == [str(Path(results["good"]["dir"]) / "made.txt")]
    with pytest.raises(RuntimeError, match=r"stage bad finished without writing model"):
        run_stages(recipe, [Stage("bad", [], {}, writes_nothing, outputs=(MODEL,))], tmp_path)
    assert not any((tmp_path / "stages").glob("bad-*/DONE.json"))


def test_a_cached_stage_without_its_declared_outputs_runs_again(tmp_path: Path) -> None:
    """A stage done by an older layout (an evaluation written beside the model, not in ``eval/``) is not
    taken from the cache: it runs again and writes what it declares."""
    recipe = load_recipe(REPO / "recipes" / "world.yaml")
    calls = []

    def writes(r, out: Path, deps: dict[str, Path]) -> dict:
        calls.append(out)
        (out / "made.txt").write_text("x")
        return {}

    stage = Stage("s", [], {}, writes, outputs=("made.txt",))
    first = run_stages(recipe, [stage], tmp_path)
    (Path(first["s"]["dir"]) / "made.txt").unlink()
    again = run_stages(recipe, [stage], tmp_path)
    assert len(calls) == 2 and not again["s"]["cached"]
    assert run_stages(recipe, [stage], tmp_path)["s"]["cached"]


def test_a_run_takes_another_runs_identical_stages_and_runs_the_rest(tmp_path: Path) -> None:
    """``reuse``: a stage whose name and key are done in another run's folder is read there, not run; a
    stage with other settings, and every stage that reads it, runs in this run's folder."""
    from prmkit.pipeline.sweep import for_seed

    calls: list[str] = []

    def writes(r, out: Path, deps: dict[str, Path]) -> dict:
        calls.append(out.name.rsplit("-", 1)[0])
        text = "".join((d / "made.txt").read_text() for d in deps.values()) + out.name
        (out / "made.txt").write_text(text)
        return {"n": len(calls)}

    def stages(b: int) -> list[Stage]:
        return [
            Stage("a", [], {"x": 1}, writes, outputs=("made.txt",)),
            Stage("b", ["a"], {"x": b}, writes, outputs=("made.txt",)),
            Stage("c", ["b"], {}, writes, outputs=("made.txt",)),
        ]

    recipe = load_recipe(REPO / "recipes" / "world.yaml")
    first = run_stages(recipe, stages(1), tmp_path / "first")
    assert calls == ["a", "b", "c"]
    taking = recipe.model_copy(update={"reuse": [tmp_path / "nowhere", tmp_path / "first"]})
    same = run_stages(taking, stages(1), tmp_path / "second")
    assert calls == ["a", "b", "c"] and all(r["reused"] and r["cached"] for r in same.values())
    assert same["c"]["dir"] == first["c"]["dir"] and not (tmp_path / "second" / "stages").exists()
    other = run_stages(taking, stages(2), tmp_path / "second")
    assert calls == ["a", "b", "c", "b", "c"] and other["a"]["reused"] and "reused" not in other["b"]
    assert Path(other["c"]["dir"]).parent == tmp_path / "second" / "stages"
    assert (Path(other["c"]["dir"]) / "made.txt").read_text().startswith(Path(first["a"]["dir"]).name)
    # a stage done in this run's own folder is its own, whatever the other folder holds
    assert "reused" not in run_stages(taking, stages(2), tmp_path / "second")["b"]
    # a sweep's seed looks in the other run's folder of that seed, then in the folder itself
    swept = for_seed(taking.model_copy(update={"seeds": [3]}), 3)
    assert swept.reuse == [
        tmp_path / "nowhere" / "seed-3",
        tmp_path / "nowhere",
        tmp_path / "first" / "seed-3",
        tmp_path / "first",
    ]
