"""``prmkit card --transfer``: the settings ``prmkit eval transfer`` measured a model in become the card's
*Where it transfers* rows and leave its "not tested" lines; another checkpoint's matrix is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cards.card import full_card, not_tested, transfer_of
from prmkit.cards.process_card import ProcessCard
from prmkit.cards.render import render_markdown
from prmkit.core.errors import InputError
from prmkit.evaluation.transfer import read_transfer

DEMO = Path(__file__).resolve().parent / "data" / "transfer-prm-gold.json"
"""A real matrix: one training seed of the demo's gold PRM by ``prmkit eval transfer`` (an earlier sweep's
model, ``docs/results/transfer/demo.yaml``'s settings)."""
SEEDS = Path(__file__).resolve().parents[2] / "docs" / "results" / "transfer" / "demo-seeds" / "prm-gold"
EVALUATION = {
    "data": {"policies": ["world-policy"], "steps_min": 2, "steps_max": 9, "step_kinds": ["reasoning"]},
    "bon": {"rows": [{"n": 16}], "orm": None},
}


def _moved(tmp_path: Path, model: Path) -> Path:
    """The demo's matrix as if it had measured ``model``."""
    data = json.loads(DEMO.read_text())
    data["model"] = str(model)
    out = tmp_path / "transfer.json"
    out.write_text(json.dumps(data))
    return out


def test_the_card_shows_the_settings_and_stops_calling_them_untested(tmp_path: Path) -> None:
    result = read_transfer(DEMO)
    names = [s.name for s in result.settings]
    assert names[0] == "source" and len(names) > 2
    card = full_card(ProcessCard(kind="prm", model={}), None, transfer=result)
    readme = render_markdown(card)
    section = readme.split("## Where it transfers")[1].split("\n## ")[0]
    for s in result.settings[1:]:
        row = next(line for line in section.splitlines() if line.startswith(f"| {s.name} |"))
        assert f"{100 * s.f1.mean:.1f} [" in row and f"{100 * s.gap_auroc.mean:+.1f} [" in row
    assert '{"temperature": 1.5}' in section.replace("\\\\", "")  # what the setting changes
    lines = not_tested(ProcessCard(kind="prm", model={}), EVALUATION, result.to_dict())
    other = next(x for x in lines if x.startswith("traces from other policies"))
    assert all(name in other for name in names[1:]) and "Where it transfers" in other
    plain = not_tested(ProcessCard(kind="prm", model={}), EVALUATION)
    assert "prmkit card --transfer" in plain[-1]  # where to measure it, when it was not


def test_another_checkpoints_matrix_is_refused_in_one_line(tmp_path: Path) -> None:
    model = tmp_path / "prm"
    model.mkdir()
    assert transfer_of(_moved(tmp_path, model), model).model == str(model)
    with pytest.raises(InputError) as err:
        transfer_of(DEMO, model)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{DEMO}: model: expected the card's model {model}")
    over_seeds = read_transfer(SEEDS)
    with pytest.raises(InputError, match="seeds: expected one checkpoint's matrix") as err:
        transfer_of(SEEDS, Path(over_seeds.model))  # its first seed's model: still the recipe's numbers
    assert "found a matrix over 5 training seeds" in str(err.value) and "\n" not in str(err.value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "m", "threshold": "high"}))
    with pytest.raises(InputError, match=r"bad.json: threshold: expected input should be a valid number"):
        read_transfer(bad)


def test_prmkit_card_refuses_a_bad_transfer_file_before_measuring(tmp_path: Path) -> None:
    from prmkit.cli import app

    runner = CliRunner()
    assert "--transfer" in runner.invoke(app, ["card", "--help"], terminal_width=200).output
    bad = tmp_path / "t.json"
    bad.write_text("{")
    result = runner.invoke(app, ["card", str(tmp_path / "no-model"), "--transfer", str(bad)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:1: (file): expected JSON" in lines[0]


def test_a_target_in_another_world_is_named_and_leaves_the_untested_lines() -> None:
    matrix = read_transfer(DEMO).to_dict()
    lines = not_tested(ProcessCard(kind="prm", model={}), EVALUATION, matrix)
    assert "agent trajectories (tool-call and observation steps)" in lines
    assert any(x.startswith("other worlds than its own") for x in lines)
    matrix["params"]["config"]["targets"]["agent"] = {"world_name": "agent"}
    lines = not_tested(ProcessCard(kind="prm", model={}), EVALUATION, matrix)
    assert "agent trajectories (tool-call and observation steps)" not in lines
    assert any(x.startswith("worlds other than its own and agent (") for x in lines)
