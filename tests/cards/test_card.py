"""The full process card, built on the training-time card, measured on fresh world data.

The fast test uses a stand-in scorer (noisy gold) so it runs in seconds; test_card_world_model.py
does the same with a tiny PRM really trained on the world (slow)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from prmkit.cards.card import full_card, write_card
from prmkit.cards.process_card import ProcessCard, read_process_card, summarize_sources, write_process_card
from prmkit.cards.render import render_markdown
from prmkit.cards.roles import trace_roles
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.evaluation.suite import evaluation_of, world_traces
from prmkit.worlds.arithmetic import gold_label

SECTIONS = (
    "## What process was supervised",
    "## How the labels were made",
    "## Roles: who made the traces, the labels and the gate",
    "## Base model, training data and split",
    "## Where it was tested",
    "## What failures remain",
    "## What it was not tested on",
    "## How to use",
)


class NoisyGold:
    """Scores steps like a decent PRM would: gold prefix validity plus noise (gold from the world's
    checker, so it also scores the unlabelled prefixes beam search asks about)."""

    name = "noisy-gold"

    def score(self, traces):
        rng = np.random.default_rng(0)
        out = []
        for t in gold_label([t.model_copy(deep=True) for t in traces]):
            fe = t.first_error("gold")
            out.append(
                [
                    float(np.clip((0.2 if fe != -1 and i >= fe else 0.85) + rng.normal(0, 0.15), 0, 1))
                    for i in range(len(t.steps))
                ]
            )
        return out


def training_card(tmp_path):
    train = world_traces(8, 4, seed=5, split="train")
    base = ProcessCard(
        kind="prm",
        base_model="tiny-world-lm",
        model={
            "kind": "prm",
            "template": {"prompt_template": "{problem}\n", "separator": "<step>\n", "tag": "<step>"},
            "tag_id": 7,
            "num_labels": 2,
            "positive_labels": [1],
            "label_scale": "hard",
            "aggregation": "min",
        },
        labels=summarize_sources(train, ["gold:world:prefix"]),
        roles=trace_roles(train, ["gold:world:prefix"]),
        data={
            "file": "train.jsonl",
            "traces": len(train),
            "split": "by problem",
            "dev_fraction": 0.1,
            "seed": 0,
        },
        metrics={"dev_step_accuracy": 0.91},
        training={"epochs": 1, "lr": 3e-4},
    )
    write_process_card(tmp_path, base)


def check_filled(readme: str, saved: dict) -> None:
    for section in SECTIONS:
        assert section in readme
    body = readme.split("\n## ")
    assert all(len(part.strip().splitlines()) > 1 for part in body[1:]), "a section is empty"
    assert "not recorded" not in readme and "No audit" not in readme and "Not evaluated" not in readme
    for key in ("process", "base", "evaluation", "audits", "not_tested", "plots", "labels", "data"):
        assert saved[key], f"card section {key!r} is empty"
    assert all(v is not None for v in saved["audits"].values())
    assert all(v is not None for k, v in saved["process"].items() if k != "classes")


def test_card_every_section_measured(tmp_path, capsys):
    training_card(tmp_path)
    settings = WorldEvalSettings(
        problems=9, per_problem=8, heldout_problems=4, bootstrap=100, beam_problems=4
    )
    readme_path = write_card(tmp_path, evaluation_of(NoisyGold(), tmp_path / "card", settings))
    assert "evaluate: done" in capsys.readouterr().err  # the minute-long measurement shows its progress
    readme = readme_path.read_text()
    saved = json.loads((tmp_path / "process_card.json").read_text())
    check_filled(readme, saved)
    assert readme.startswith("---\nlibrary_name: transformers")
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme):
        assert (tmp_path / target).stat().st_size > 5000  # every plot the card shows exists
    assert read_process_card(tmp_path).labels[0].source == "gold:world:prefix"  # training's fields kept
    fe = saved["evaluation"]["first_error"]
    assert fe["threshold_from"] == "dev" and [s["name"] for s in fe["subsets"]] == [
        "world-test",
        "world-heldout",
    ]
    assert "mean of subset F1s (headline)" in readme
    # a second call reuses the measurements instead of rerunning them
    before = (tmp_path / "card" / "eval_summary.json").stat().st_mtime_ns
    evaluation_of(NoisyGold(), tmp_path / "card", settings)
    assert (tmp_path / "card" / "eval_summary.json").stat().st_mtime_ns == before


def test_card_without_measurements_says_so(tmp_path):
    training_card(tmp_path)
    card = full_card(read_process_card(tmp_path), None)
    text = render_markdown(card)
    for section in SECTIONS:
        assert section in text
    assert "Not evaluated" in text and "No audit was run" in text
    assert card.not_tested and "no evaluation was run" in card.not_tested[0]
    assert card.process["separator"] == "<step>\n" and card.process["supervised_at"] == "every step"


def test_likelihood_head_card_says_where_the_score_is_read(tmp_path):
    training_card(tmp_path)
    base = read_process_card(tmp_path)
    base = base.model_copy(update={"model": {**base.model, "head": "likelihood"}})
    card = full_card(base, None)
    text = render_markdown(card)
    assert card.process["head"] == "likelihood" and "lowest probability" in card.process["step_definition"]
    assert "pipeline_tag: text-generation" in text and "tag (score read here)" not in text
    assert "| head | likelihood" in text
    classifier = render_markdown(full_card(read_process_card(tmp_path), None))
    assert "pipeline_tag: token-classification" in classifier and "tag (score read here)" in classifier


def test_how_to_use_shell_command_runs_as_written(tmp_path, monkeypatch):
    """The card's shell line is a complete command (it once lacked the required ``-o``)."""
    import shlex

    from typer.testing import CliRunner

    from prmkit.cli import app
    from prmkit.core.dataset import write_traces
    from prmkit.testing import make_random_prm
    from prmkit.worlds.arithmetic import generate_problems, sample_traces

    model = make_random_prm(tmp_path / "prm")
    training_card(tmp_path)
    text = render_markdown(full_card(read_process_card(tmp_path), None))
    (command,) = re.findall(r"`(prmkit score [^`]+)`", text)
    write_traces(tmp_path / "traces.jsonl", sample_traces(generate_problems(2, seed=0), 1, seed=0))
    args = [
        {"MODEL": model, "traces.jsonl": str(tmp_path / "traces.jsonl")}.get(a, a)
        for a in shlex.split(command)
    ]
    monkeypatch.chdir(tmp_path)  # the command writes relative to where it runs
    result = CliRunner().invoke(app, args[1:])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "scored.jsonl").stat().st_size > 0


def test_the_card_says_what_a_step_is_in_the_world_the_labels_came_from() -> None:
    from prmkit.cards.card import process_section
    from prmkit.cards.process_card import ProcessCard, summarize_sources
    from prmkit.worlds.agent import generate_problems as agent_problems
    from prmkit.worlds.agent import gold_label as agent_gold
    from prmkit.worlds.agent import sample_traces as agent_traces

    agent = agent_gold(agent_traces(agent_problems(2, seed=0), 2, seed=0))
    math = world_traces(2, 2, seed=0, split="train")
    for traces, says in (
        (agent, "agent data: one assistant message"),
        (math, "arithmetic data: one sentence"),
    ):
        card = ProcessCard(kind="prm", labels=summarize_sources(traces, ["gold"]))
        assert says in process_section(card)["step_definition"]
    assert "data:" not in process_section(ProcessCard(kind="prm"))["step_definition"]


def test_card_config_reads_the_policy_as_its_worlds_config(tmp_path):
    """``prmkit card``'s ``policy`` is a recipe's ``evaluate.policy``: typed by ``world``, refused early."""
    import pytest
    from pydantic import ValidationError

    from prmkit.cards.card import CardConfig
    from prmkit.worlds.agent.config import AgentConfig

    config = CardConfig(
        model=tmp_path, world="agentworld", policy={"systematic": 0.5, "systematic_rate": 0.6}
    )
    policy = config.policy_config()
    assert isinstance(policy, AgentConfig) and (policy.systematic, policy.systematic_rate) == (0.5, 0.6)
    assert (
        type(CardConfig(model=tmp_path).policy_config()).__name__ == "PolicyConfig"
    )  # the arithmetic world's
    with pytest.raises(ValidationError, match="misread") as err:
        CardConfig(model=tmp_path, world="world", policy={"misread": 0.1})  # an agent-world field
    assert err.value.errors()[0]["loc"] == ("policy", "misread")  # where in the --config file


def test_card_scores_processbench_files_at_the_world_tuned_threshold(tmp_path):
    """``prmkit card --processbench`` (and a recipe's ``evaluate.processbench``): the checkpoint scores the
    real files at the threshold the world evaluation tuned, and a file it cannot read is said on the card;
    either lands in the evaluation's summary file, which the card reads."""
    from prmkit.evaluation.suite import SUMMARY_FILE, processbench_at_threshold
    from prmkit.testing import make_random_prm

    real = Path(__file__).resolve().parents[3] / "shared" / "data" / "real" / "processbench" / "gsm8k.json"
    records = json.loads(real.read_text())[:4]  # short enough for the tiny model: problem and 3 steps
    for r in records:
        r["problem"], r["steps"] = r["problem"][:300], [step[:200] for step in r["steps"][:3]]
        r["label"] = r["label"] if r["label"] < 3 else -1
    short = tmp_path / "gsm8k.json"
    short.write_text(json.dumps(records))
    prm = make_random_prm(tmp_path / "prm")
    evaluation = {"first_error": {"threshold": 0.25}}
    measured = processbench_at_threshold(prm, [short], evaluation, tmp_path / "card")["processbench"]
    assert measured["threshold"] == 0.25 and measured["threshold_from"] == "given"
    assert [s["name"] for s in measured["subsets"]] == ["gsm8k"]
    assert (tmp_path / "card" / "processbench_real" / "processbench.json").exists()
    broken = tmp_path / "broken.json"
    broken.write_text("[{}]")
    said = processbench_at_threshold(prm, [broken], evaluation, tmp_path / "card")
    assert set(said) == {"first_error", "processbench_error"} and said["processbench_error"]
    assert json.loads((tmp_path / "card" / SUMMARY_FILE).read_text()) == said
