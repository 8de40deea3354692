"""Scorer specs read one way (``prmkit.scoring.load_scorer``): every form through the real CLI, one-line
errors with "Did you mean" for names that match nothing, and a plugin form from an entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.core.dataset import write_jsonl, write_traces
from prmkit.core.errors import InputError
from prmkit.formats.inputs import read_traces
from prmkit.scoring import SCORER_FORMS, load_scorer, scorer_form
from prmkit.scoring.labels import LabelScorer
from prmkit.scoring.remote import RemoteScorer
from prmkit.worlds.arithmetic import generate_problems, gold_label, sample_traces
from prmkit.worlds.arithmetic.oracle import OracleScorer
from tests.test_docs_blocks import fenced_blocks

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """Gold-labelled world traces, 4 per problem (enough for best-of-N curves and audits)."""
    path = tmp_path_factory.mktemp("forms") / "traces.jsonl"
    write_traces(path, gold_label(sample_traces(generate_problems(6, seed=5, split="test"), 4, seed=5)))
    return path


def one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    """The error of a refused command: exit 2, no traceback, one ``error:`` line."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_each_built_in_form_is_read_by_its_own_loader(tmp_path: Path) -> None:
    assert isinstance(load_scorer("arithmetic-oracle"), OracleScorer)
    assert isinstance(load_scorer("http://127.0.0.1:9", api_key="k"), RemoteScorer)
    labels = load_scorer("labels:model:runs/prm")
    assert isinstance(labels, LabelScorer) and labels.source == "model:runs/prm"
    assert [scorer_form(s) for s in ("arithmetic-oracle", "https://h", "labels:gold", tmp_path)] == [
        "arithmetic-oracle",
        "http",
        "labels",
        "checkpoint",
    ]
    oracle = OracleScorer()
    assert load_scorer(oracle) is oracle  # a StepScorer passes through


def test_score_world_oracle_matches_gold(world: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    result = CliRunner().invoke(app, ["score", "arithmetic-oracle", str(world), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for trace in read_traces(out):
        fe = trace.first_error("gold")
        want = [1.0 if fe < 0 or i < fe else 0.0 for i in range(len(trace.steps))]
        assert [s.label("model:arithmetic-oracle").score for s in trace.steps] == want


def test_eval_bon_with_the_oracle_and_stored_labels_agree(world: Path, tmp_path: Path) -> None:
    """The oracle and its own scores read back as labels give the same curves."""
    scored = tmp_path / "scored.jsonl"
    assert (
        CliRunner().invoke(app, ["score", "arithmetic-oracle", str(world), "-o", str(scored)]).exit_code == 0
    )
    rows = {}
    for spec in ("arithmetic-oracle", "labels:model:arithmetic-oracle"):
        out = tmp_path / spec.replace(":", "_")
        args = [
            "eval",
            "bon",
            str(scored),
            "--prm",
            spec,
            "--max-n",
            "4",
            "--bootstrap",
            "20",
            "-o",
            str(out),
        ]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        rows[spec] = json.loads((out / "bon.json").read_text())["rows"]
    assert rows["arithmetic-oracle"] == rows["labels:model:arithmetic-oracle"]
    top = [r for r in rows["arithmetic-oracle"] if r["method"] == "prm:min" and r["n"] == 4]
    oracle = [r for r in rows["arithmetic-oracle"] if r["method"] == "oracle" and r["n"] == 4]
    assert top[0]["accuracy"] <= oracle[0]["accuracy"]


def test_audit_and_processbench_take_the_oracle(world: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["audit", "arithmetic-oracle", str(world), "-o", str(tmp_path / "a"), "--max-n", "4", "--draws", "2"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a" / "audit.json").read_text())["scorer"] == "arithmetic-oracle"
    pb = tmp_path / "pb"
    args = ["eval", "processbench", str(world), "--model", "arithmetic-oracle", "-o", str(pb)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads((pb / "processbench.json").read_text())
    assert (
        report["predictor"] == "arithmetic-oracle" and report["f1"] == 1.0
    )  # the oracle is the gold checker


def test_search_with_stored_labels_is_refused_in_one_line(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    write_jsonl(problems, generate_problems(2, seed=1, split="test"))
    result = CliRunner().invoke(
        app, ["bon", str(problems), "--scorer", "labels:gold", "--n", "2", "-o", str(tmp_path / "b.jsonl")]
    )
    line = one_line_error(result)
    assert "labels:gold" in line and "no labels" not in line and "a search samples" in line


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("{tmp}/runs/prn", "Did you mean '{tmp}/runs/prm'?"),  # a mistyped checkpoint folder
        ("arithmetic-oracel", "Did you mean 'arithmetic-oracle' or 'agent-oracle' or 'code-oracle'?"),
        ("label:gold", "Did you mean 'labels:' or 'vllm:'?"),  # the closest first
        ("htp://127.0.0.1:8000", "Did you mean 'http:' or 'https:'?"),
    ],
)
def test_a_spec_that_names_nothing_suggests_the_closest(
    world: Path, tmp_path: Path, spec: str, hint: str
) -> None:
    (tmp_path / "runs" / "prm").mkdir(parents=True)
    spec, hint = spec.format(tmp=tmp_path), hint.format(tmp=tmp_path)
    for args in (
        ["score", spec, str(world), "-o", str(tmp_path / "s.jsonl")],
        ["eval", "bon", str(world), "--prm", spec],
        ["bon", str(world), "--scorer", spec, "-o", str(tmp_path / "b.jsonl")],
        ["audit", spec, str(world), "-o", str(tmp_path / "a")],
        ["serve", spec],
    ):
        line = one_line_error(CliRunner().invoke(app, args))
        assert line.startswith(f"error: {spec}: (scorer): expected a scorer") and line.endswith(hint), line


def test_an_option_the_form_does_not_take_is_refused(world: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["score", "arithmetic-oracle", str(world), "-o", str(tmp_path / "s.jsonl"), "--convention", "qwen"],
    )
    assert "convention: expected an option a arithmetic-oracle scorer takes (none)" in one_line_error(result)
    with pytest.raises(InputError, match="labels:SOURCE"):
        load_scorer("labels:")


def test_the_built_in_forms_are_registered_once() -> None:
    assert {"checkpoint", "arithmetic-oracle", "http", "labels"} <= set(SCORER_FORMS.names())


def _docs_plugin() -> tuple[str, str, str]:
    """(entry-point name, value, module source) of the plugin example in docs/models.md."""
    page = REPO / "docs" / "models.md"
    text = page.read_text(encoding="utf-8")
    start = text[: text.index("### Plugins")].count("\n")  # the section's blocks come after this line
    toml_block, py_block = (
        next(b for b in fenced_blocks(page, lang) if b.line > start) for lang in ("toml", "python")
    )
    ((name, value),) = tomllib.loads(toml_block.code)["project"]["entry-points"]["prmkit.scorers"].items()
    return name, value, py_block.code


def install_plugin(site: Path, group: str, name: str, value: str, module: str, source: str) -> Path:
    """A minimal installed distribution in ``site``: the module plus a dist-info with its entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {value}\n", encoding="utf-8")
    return site


def test_the_docs_plugin_form_is_used_by_the_cli(world: Path, tmp_path: Path) -> None:
    """The plugin of docs/models.md, installed as a distribution, scores through ``prmkit score`` in a
    fresh process: one entry point, no change to prmkit."""
    name, value, source = _docs_plugin()
    site = install_plugin(tmp_path / "site", "prmkit.scorers", name, value, value.split(":")[0], source)
    out = tmp_path / "scored.jsonl"
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "prmkit.cli", "score", "constant:0.7", str(world), "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    traces = read_traces(out)
    assert traces and all(s.label("model:constant:0.7").score == 0.7 for t in traces for s in t.steps)
    help_run = subprocess.run(
        [sys.executable, "-m", "prmkit.cli", "score", "constant", str(world), "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert help_run.returncode == 2 and "Did you mean 'constant:'?" in help_run.stdout + help_run.stderr
