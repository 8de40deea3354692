"""Training amounts that do not depend on the machine: step budgets, a time cap that says when it cut a run
short, dev evaluation outside the time budget, threads recorded."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest
from transformers import TrainerControl

from prmkit.cards import read_process_card, training_warnings
from prmkit.cards.card import full_card
from prmkit.cards.render import render_markdown
from prmkit.modeling import TinyConfig
from prmkit.training import PrmConfig, loop, train_prm

from .conftest import world_traces

TINY = TinyConfig(layers=1, width=32, heads=2, max_length=256, positions="rope")


def test_time_budget_counts_only_time_inside_optimiser_steps(monkeypatch):
    """Each step costs 10 s of the budget clock and a dev evaluation between steps 100 s: a one-minute cap
    must stop the run at its seventh step (the first past 60 s of training), whatever the evaluations cost."""
    now = [0.0]
    monkeypatch.setattr(loop, "clock", lambda kind: now[0])
    budget = loop.time_budget(1.0, "cpu", schedule=False)
    args, control = SimpleNamespace(eval_strategy="steps"), TrainerControl()
    state = SimpleNamespace(global_step=0, max_steps=100)
    for step in range(1, 20):
        budget.on_step_begin(args, state, control)
        now[0] += 10.0
        state.global_step = step
        budget.on_step_end(args, state, control)
        if control.should_training_stop:
            break
        now[0] += 100.0  # a dev evaluation: not training time
    assert state.global_step == 7 and budget.stopped
    assert budget.spent == pytest.approx(70.0)
    assert control.should_save and control.should_evaluate


def test_time_budget_that_is_not_reached_does_not_stop():
    budget = loop.time_budget(60.0, "wall", schedule=False)
    args, control = SimpleNamespace(eval_strategy="no"), TrainerControl()
    state = SimpleNamespace(global_step=1, max_steps=1)
    budget.on_step_begin(args, state, control)
    budget.on_step_end(args, state, control)
    assert not control.should_training_stop and not budget.stopped


def test_run_planned_in_steps_takes_exactly_those_steps_and_records_them(tmp_path):
    traces = world_traces(24, 2, seed=0)
    cfg = PrmConfig(tiny=TINY, max_steps=7, batch_size=8, eval_every=5, threads=1, resume=False)
    result = train_prm(traces, tmp_path / "prm", cfg)
    run = result["training"]
    assert (run["steps"], run["planned_steps"], run["stopped_by"]) == (7, 7, "max_steps")
    assert run["threads"] == 1 and run["stopped_early"] is False
    card = json.loads((tmp_path / "prm" / "process_card.json").read_text())
    assert card["training"]["steps"] == 7 and card["training"]["threads"] == 1
    history = [
        json.loads(line) for line in (tmp_path / "prm" / "training_log.jsonl").read_text().splitlines()
    ]
    assert max(r["step"] for r in history) == 7


def test_time_cap_that_cuts_a_run_short_says_so_in_log_card_and_result(tmp_path, caplog):
    traces = world_traces(24, 2, seed=0)
    cfg = PrmConfig(tiny=TINY, max_steps=10_000, max_minutes=1e-4, batch_size=8, eval_every=1000,
                    threads=1, resume=False)  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="prmkit.training.loop"):
        result = train_prm(traces, tmp_path / "prm", cfg)
    run = result["training"]
    assert run["stopped_early"] and run["stopped_by"] == "time cap"
    assert run["steps"] < run["planned_steps"] == 10_000
    assert any("stopped early by its time cap" in r.getMessage() for r in caplog.records)
    card = read_process_card(tmp_path / "prm")
    assert card.training["stopped_early"] and card.training["steps"] == run["steps"]
    shown = render_markdown(full_card(card, evaluation=None))  # the README `prmkit card` writes
    assert f"> **Warning:** training stopped early: {run['steps']} of 10000 planned" in shown


def test_training_warnings_name_a_run_that_did_not_improve_on_dev():
    metrics = {"dev": {"eval_first_error_f1": 0.935}, "dev_at_start": {"eval_first_error_f1": 0.938}}
    (warning,) = training_warnings({"steps": 50, "planned_steps": 50, "stopped_early": False}, metrics)
    assert "no better on dev than it started" in warning and "0.938" in warning and "0.935" in warning
    better = {"dev": {"eval_first_error_f1": 0.95}, "dev_at_start": {"eval_first_error_f1": 0.938}}
    assert training_warnings({"stopped_early": False}, better) == []
