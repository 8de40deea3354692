"""The few-shot curve: a real tiny PRM (40 optimiser steps on the arithmetic world's train split) fine-tuned
through ``train_prm`` on k = 4 and 16 gold-labelled traces of the held-out split (3 steps each), measured
on 8 held-out problems x 2 traces; k = 0 is the transfer matrix's held-out row, number for number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cards import read_process_card
from prmkit.cli import app
from prmkit.evaluation.config import FewShotConfig
from prmkit.evaluation.fewshot import PLOT_FILE, Copy, FewShotResult, fewshot_curve, read_fewshot
from prmkit.evaluation.transfer import Setting, transfer
from prmkit.modeling import TinyConfig
from prmkit.scoring import load_scorer
from prmkit.training import PrmConfig, train_prm
from prmkit.training.fewshot import run_fewshot
from prmkit.worlds.registry import world

ARITHMETIC = world("arithmetic")
SEED = 1234
"""The measured problems' seed (``FewShotConfig.seed``'s default); the pool's is ``SEED + 1``."""
CURVE = {"problems": 8, "per_problem": 2, "bootstrap": 50, "ks": [0, 4, 16], "train_problems": 16,
         "steps": 3, "batch_size": 4, "threads": 1}  # fmt: skip
"""The settings docs/evaluation.md, "Few-shot transfer", names: target ``heldout`` (the default)."""


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    tiny = TinyConfig(layers=1, width=64, heads=2, max_length=512, positions="rope")
    config = PrmConfig(tiny=tiny, max_steps=40, batch_size=8, eval_every=40, threads=1, resume=False)
    out = tmp_path_factory.mktemp("fewshot") / "prm"
    train_prm(ARITHMETIC.traces(40, 2, 0, "train"), out, config)
    return out


@pytest.fixture(scope="module")
def curve(checkpoint: Path) -> FewShotResult:
    return run_fewshot(FewShotConfig(model=str(checkpoint), out=checkpoint.parent / "out", **CURVE))


def test_k0_is_the_transfer_matrixs_row_of_the_target(checkpoint: Path, curve: FewShotResult) -> None:
    settings = {"source": Setting(), "heldout": Setting(split="heldout")}
    matrix = transfer(load_scorer(str(checkpoint)), ARITHMETIC, settings, 8, 2, SEED, resamples=50)
    row, k0 = matrix.setting("heldout"), curve.point(0)
    assert (curve.threshold, curve.threshold_from) == (matrix.threshold, matrix.threshold_from)
    assert k0.f1 == row.f1 and k0.auroc == row.auroc and curve.traces == row.traces == 16
    assert k0.gain_f1 is None and k0.threshold_from == "checkpoint" and k0.f1_own == k0.f1


def test_each_copy_gains_over_k0_paired_on_the_same_problems(curve: FewShotResult) -> None:
    assert [p.k for p in curve.points] == [0, 4, 16]
    base = curve.point(0)
    for k in (4, 16):
        p = curve.point(k)
        assert p.train_problems == k and p.threshold_from in ("dev", "source")
        assert p.gain_auroc.mean == pytest.approx(p.auroc.mean - base.auroc.mean)
        assert p.gain_f1.mean == pytest.approx(p.f1.mean - base.f1.mean)
    assert "| 16 |" in curve.table()


def test_the_training_traces_and_the_measured_problems_are_disjoint(curve: FewShotResult) -> None:
    measured = ARITHMETIC.traces(8, 2, SEED, "heldout")
    pool = ARITHMETIC.traces(16, 1, SEED + 1, "heldout")  # what the largest copy was fine-tuned on
    assert curve.params["train"]["seed"] == SEED + 1 and curve.params["train"]["pool_traces"] == 16
    assert not {t.problem.id for t in pool} & {t.problem.id for t in measured}
    assert not {t.problem.text for t in pool} & {t.problem.text for t in measured}
    cheat = Copy(4, load_scorer(curve.model), None, measured[:4])
    with pytest.raises(ValueError, match="fine-tuned on a measured problem"):
        fewshot_curve([Copy(0, cheat.scorer, None), cheat], measured, resamples=10)


def test_a_copys_card_declares_its_gold(curve: FewShotResult, checkpoint: Path) -> None:
    card = read_process_card(checkpoint.parent / "out" / "models" / "k4")
    own = [g for g in card.gold_use if g.via is None]
    assert {(g.use, g.source) for g in own} >= {("training_labels", "gold")}
    assert card.base_model == str(checkpoint) and card.data["traces"] == 4
    assert curve.point(4).gold_use == [g.model_dump(mode="json") for g in card.gold_use]


def test_the_json_round_trips_and_the_plot_is_written(curve: FewShotResult, checkpoint: Path) -> None:
    out = checkpoint.parent / "out"
    back = read_fewshot(out)
    assert json.dumps(back.to_dict()) == json.dumps(curve.to_dict())  # NaN-safe equality
    assert (out / PLOT_FILE).stat().st_size > 0


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--k", "-1"], "k = -1 is negative"),
        (["--k", "17"], "k = 17 is more than the 16 traces of the training pool"),
        (["--target", "hot"], "target: 'hot' is not a target setting"),
    ],
)
def test_bad_input_is_one_line_naming_it(checkpoint: Path, flags: list[str], named: str) -> None:
    args = ["eval", "fewshot", "--model", str(checkpoint), "--train-problems", "16", *flags]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)  # no traceback
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], result.output


def test_a_scorer_that_is_no_checkpoint_is_refused_in_one_line() -> None:
    result = CliRunner().invoke(app, ["eval", "fewshot", "--model", "arithmetic-oracle"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)  # no traceback
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "'arithmetic-oracle' is not a checkpoint folder" in lines[0], result.output
