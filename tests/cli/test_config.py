"""The one config-to-command builder (prmkit.cli.config): every command with a typed config takes
``--config FILE`` read with file:line errors, flags override the file, and defaults come from the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prmkit.cli import app

NOT_YET: set[str] = set()
"""Commands that take ``--config`` but read it outside the builder (none: every command is made by it)."""


def _config_commands() -> dict[str, object]:
    out = {}

    def walk(cmd, path=()):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        elif any("--config" in p.opts for p in cmd.params):
            out[" ".join(path)] = cmd

    walk(typer.main.get_command(app))
    return out


COMMANDS = _config_commands()


def _args(cmd) -> list[str]:
    """Placeholder values for what the command line itself requires (the config is refused first)."""
    args: list[str] = []
    for p in cmd.params:
        if p.required and not p.opts[0].startswith("-"):
            args.append("placeholder")
        elif p.required:
            args += [p.opts[0], "placeholder"]
    return args


def test_every_command_with_a_typed_config_is_built_by_the_builder():
    expected = {"bon", "vote", "beam", "resample", "serve", "serve-policy", "eval processbench", "eval bon"}
    expected |= {"audit", "card", "world generate", "world sample", "world stats", "train prm", "train orm"}
    expected |= {
        "pretrain",
        "label mc",
        "label binary_search",
        "label judge",
        "label consensus",
        "label report",
    }
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - NOT_YET))
def test_a_config_mistake_is_one_line_with_its_file_and_line(name, tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("# settings\nsede: 3\n")
    cmd = COMMANDS[name]
    result = CliRunner().invoke(app, [*name.split(), *_args(cmd), "--config", str(recipe)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ")
    assert f"\n{recipe}:2: sede: expected a known setting" in result.output or result.output.startswith(
        f"error: {recipe}:2: sede: expected a known setting"
    ), result.output
    assert "Traceback" not in result.output


def test_flags_override_the_file_and_the_file_gives_what_flags_did_not(tmp_path):
    recipe = tmp_path / "generate.yaml"
    recipe.write_text(f"n: 5\noutput: {tmp_path / 'problems.jsonl'}\nsplit: test\nworld:\n  max_value: 6\n")
    result = CliRunner().invoke(app, ["arithmetic", "generate", "--config", str(recipe), "--n", "3"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "problems.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and "wrote 3 test problems" in result.output


def test_a_section_file_is_read_with_its_line_and_flags_override_it(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("temperature: 0.5\nlucky: lots\n")
    problems = tmp_path / "problems.jsonl"
    assert CliRunner().invoke(app, ["arithmetic", "generate", "--n", "2", "-o", str(problems)]).exit_code == 0
    args = [
        "arithmetic",
        "sample",
        str(problems),
        "-o",
        str(tmp_path / "t.jsonl"),
        "--policy-config",
        str(policy),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {policy}:2: lucky: expected input should be a valid number"), (
        result.output
    )
    policy.write_text("temperature: 5.0\nlucky: 0.0\n")
    result = CliRunner().invoke(app, [*args, "--per-problem", "2", "--temperature", "0"])  # a perfect policy
    assert result.exit_code == 0, result.output
    traces = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(traces) == 4 and all(t["final_answer"] == t["problem"]["answer"] for t in traces)


def test_a_flag_mistake_names_the_flag_and_a_missing_setting_says_so(tmp_path):
    args = ["bon", "problems.jsonl", "-o", str(tmp_path / "o.jsonl"), "--n", "x"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "Invalid value for '--n'" in result.output
    result = CliRunner().invoke(app, ["bon", "problems.jsonl", "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --scorer: Field required"
    result = CliRunner().invoke(app, ["arithmetic", "generate", "-o", "x.jsonl", "--min-ops", "6"])
    assert result.exit_code == 2 and result.output.startswith("error: world: Value error, min_ops (6)")


def test_defaults_in_help_are_the_configs():
    from prmkit.serving.config import ServerConfig

    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "400"})
    line = next(x for x in result.output.splitlines() if "--max-queue-wait-s" in x)
    assert f"(default: {ServerConfig().max_queue_wait_s!r})" in line


def test_the_loader_reads_a_section_and_points_into_the_file(tmp_path):
    from prmkit.core.errors import InputError
    from prmkit.core.yamlconf import load_yaml_config
    from prmkit.serving.config import ServerConfig

    recipe = Path(tmp_path / "r.yaml")
    recipe.write_text("other: 1\nserve:\n  port: 9000\n  max_json_depth: 1000\n")
    with pytest.raises(InputError) as err:
        load_yaml_config(recipe, ServerConfig, section="serve")
    assert str(err.value.issues[0]).startswith(
        f"{recipe}:4: serve.max_json_depth: expected input should be less"
    )
    recipe.write_text("other: 1\nserve:\n  port: 9000\n")
    assert load_yaml_config(recipe, ServerConfig, {"host": "0.0.0.0"}, section="serve").port == 9000
