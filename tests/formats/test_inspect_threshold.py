"""``inspect`` cuts score-only labels at the threshold their source recorded (``prmkit score`` records the
checkpoint's dev-tuned one), so a likelihood head's low scores do not put every first error at step 0."""

from __future__ import annotations

from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_traces
from prmkit.core.model import Label, Problem, Provenance, Step, Trace
from prmkit.formats import inspect


def _scored(tmp_path, params: dict):
    prov = Provenance.now("model", "prm", params=params)
    problem = Problem(id="p", text="Ann has 2 apples and gets 3. How many?")
    trace = Trace(id="t", problem=problem, steps=[Step(text=f"step {i}") for i in range(3)], final_answer="5")
    trace.add_labels([Label(score=s, provenance=prov) for s in (0.2, 0.03, 0.5)])
    path = tmp_path / "scored.jsonl"
    write_traces(path, [trace])
    return path


def test_first_error_uses_the_recorded_threshold_then_the_flag(tmp_path):
    path = _scored(tmp_path, {"threshold": 0.05})
    assert inspect(path).first_error["model:prm"] == {1: 1}  # 0.03 < 0.05: step 1 (0.5 would say step 0)
    assert inspect(path, threshold=0.01).first_error["model:prm"] == {-1: 1}
    assert inspect(_scored(tmp_path, {})).first_error["model:prm"] == {0: 1}  # nothing recorded: 0.5


def test_inspect_cli_threshold_flag(tmp_path):
    path = _scored(tmp_path, {"threshold": 0.05})
    result = CliRunner().invoke(app, ["inspect", str(path), "--threshold", "0.25"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "0: 1" in result.output and "1: 1" not in result.output
