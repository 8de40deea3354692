"""The backbone's copy check: which numbers count as restated tool values, and what ``min_copy_rate``
does when a pretrained LM does not copy them."""

from __future__ import annotations

import json

import pytest

from prmkit.core.model import Observation, Problem, Step, ToolCall, Trace
from prmkit.training.data import lm_text
from prmkit.training.pretrain import CopyCheckError, restated_numbers


def _trace() -> Trace:
    call = ToolCall(name="lookup", arguments='{"entity": "Tolbin", "attribute": "population"}', id="c1")
    calc = ToolCall(name="calculator", arguments='{"expression": "412 + 34"}', id="c2")
    return Trace(
        id="t",
        problem=Problem(id="p", text="What is the population of Tolbin plus 34?"),
        steps=[
            Step(text="", tool_calls=[call], observations=[Observation(content='{"value": 412}', call_id="c1")]),
            Step(text="The population of Tolbin is 412.", tool_calls=[calc],
                 observations=[Observation(content='{"result": 446}', call_id="c2")]),
            Step(text="412 + 34 = 464. The answer is 464."),  # a misread: 446 was read back as 464
        ],
    )  # fmt: skip


def test_restated_numbers_are_the_ones_the_result_just_read_holds():
    trace = _trace()
    text = lm_text(trace)
    found = [text[a:b] for a, b in restated_numbers(trace)]
    # step 1 restates 412 twice (its sentence and its call); step 2 read 446, wrote 464: not a copy, so
    # not counted; 412 and 34 in step 2 were not in the result step 2 read
    assert found == ["412", "412"]
    assert all(text[a - 1] not in "0123456789" for a, _ in restated_numbers(trace))


def test_math_traces_have_nothing_to_copy(small_world):
    assert all(restated_numbers(t) == [] for t in small_world[:20])


def test_a_backbone_that_does_not_copy_trains_on_then_is_refused(tmp_path, caplog):
    from prmkit.modeling import TinyConfig
    from prmkit.training import PretrainConfig, pretrain_lm
    from prmkit.worlds.registry import world

    traces = world("agentworld").traces(12, 2, 0, "train", None)
    tiny = TinyConfig(layers=1, width=32, heads=2, max_length=1024, positions="rope")
    base = {"tiny": tiny, "max_steps": 2, "batch_size": 4, "dev_fraction": 0.25, "threads": 1}
    result = pretrain_lm(traces, tmp_path / "measured", PretrainConfig(**base))
    copy = result["copy"]  # two steps from scratch: it restates no value right
    assert copy["numbers"] > 0 and copy["copy_rate"] == 0.0 and copy["digit_logp"] < -1
    record = json.loads((tmp_path / "measured" / "training.json").read_text())
    assert record["copy"] == copy == record["copy_after_max_steps"] and record["copy_rounds"] == []
    card = json.loads((tmp_path / "measured" / "process_card.json").read_text())
    assert card["metrics"]["copy_rate"] == 0.0

    strict = PretrainConfig(**base, min_copy_rate=0.9, copy_steps=3, copy_rounds=1)
    with pytest.raises(
        CopyCheckError, match=r"copies 0\.0% of the \d+ tool values .* after 2 \+ 1 x 3 steps"
    ):
        pretrain_lm(traces, tmp_path / "strict", strict)
    assert "extra round 1 of 3 steps" in caplog.text
    kept = tmp_path / "strict" / "checkpoints"
    assert (kept / "checkpoint-2").is_dir() and (kept / "round-1" / "checkpoints" / "checkpoint-3").is_dir()
    assert not (tmp_path / "strict" / "model.safetensors").exists()  # a refused backbone is not saved


def test_a_backbone_that_copies_after_a_round_is_saved_with_every_round_logged(tmp_path, monkeypatch):
    from prmkit.modeling import TinyConfig
    from prmkit.training import PretrainConfig, pretrain
    from prmkit.training.pretrain import pretrain_lm
    from prmkit.worlds.registry import world

    rates = iter([0.1, 0.6])  # the measured rate after max_steps, then after the first extra round
    monkeypatch.setattr(
        pretrain, "copy_rate", lambda *a: {"numbers": 10, "copy_rate": next(rates), "digit_logp": -1.0}
    )
    traces = world("agentworld").traces(12, 2, 0, "train", None)
    tiny = TinyConfig(layers=1, width=32, heads=2, max_length=1024, positions="rope")
    cfg = PretrainConfig(tiny=tiny, max_steps=2, batch_size=4, dev_fraction=0.25, threads=1, eval_every=1,
                         min_copy_rate=0.5, copy_steps=3, copy_rounds=2)  # fmt: skip
    result = pretrain_lm(traces, tmp_path / "lm", cfg)
    record = json.loads((tmp_path / "lm" / "training.json").read_text())
    assert record["copy_after_max_steps"]["copy_rate"] == 0.1 and result["copy"]["copy_rate"] == 0.6
    assert [(r["round"], r["steps"], r["copy_rate"]) for r in record["copy_rounds"]] == [(1, 3, 0.6)]
    logged = [json.loads(line) for line in (tmp_path / "lm" / "training_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in logged if "loss" in r] == [1, 2, 3, 4, 5]  # the round's 3 steps follow on
    assert (tmp_path / "lm" / "model.safetensors").exists() and not (tmp_path / "lm" / "checkpoints").exists()


def test_the_cli_says_why_a_backbone_was_refused(tmp_path):
    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.dataset import write_traces
    from prmkit.worlds.registry import world

    write_traces(tmp_path / "traces.jsonl", world("agentworld").traces(8, 2, 0, "train", None))
    args = ["pretrain", str(tmp_path / "traces.jsonl"), "-o", str(tmp_path / "lm"), "--max-steps", "2",
            "--batch-size", "4", "--threads", "1", "--tiny-layers", "1", "--tiny-width", "32",
            "--tiny-max-length", "1024", "--tiny-positions", "rope", "--min-copy-rate", "0.5", "--copy-rounds", "0"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "below min_copy_rate 50%, after 2 + 0 x 400 steps" in result.output
    assert "Traceback" not in result.output


def test_the_run_report_shows_how_well_an_agent_backbone_copies():
    from prmkit.pipeline.summary import _training_rows

    run = {"steps": 800, "planned_steps": 800, "stopped_by": "max_steps", "threads": 2, "wall_seconds": 600}
    copy = {"numbers": 1926, "copy_rate": 0.7373, "digit_logp": -0.32}
    rows = _training_rows({
        "pretrain": {"training": {**run, "copy_rounds": [{"round": 1, **copy}]}, "copy": copy},
        "orm": {"training": run},
        "math-lm": {"training": run, "copy": {"numbers": 0, "copy_rate": None, "digit_logp": None}},
    })  # fmt: skip
    assert rows[0]["tool values copied (dev)"] == "73.7 % of 1,926 after 1 extra round"
    assert "tool values copied (dev)" not in rows[1] and "tool values copied (dev)" not in rows[2]
