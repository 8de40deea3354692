"""Every ``prmkit`` command comes from the one command record (:class:`prmkit.core.commands.Command`):
the test walks the typer app's whole command tree, as ``prmkit --help`` shows it, and asks each command
for the record it was made from, then checks that every option and argument it takes is a field of the
record's config (no path passed beside the config)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from prmkit.cli import app
from prmkit.cli.config import add_command, config_flags
from prmkit.core.commands import Command, fields_of

KNOWN_REMAINDER: set[str] = set()
"""Commands not (yet) made from a record. None today; a command added by hand would be listed here with
the reason, not left out of the walk."""


def _commands() -> dict[str, Any]:
    """Every leaf command of the app, by its full name (``eval processbench``), hidden aliases included."""
    out: dict[str, Any] = {}

    def walk(cmd: Any, path: tuple[str, ...] = ()) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        else:
            out[" ".join(path)] = cmd

    walk(typer.main.get_command(app))
    return out


COMMANDS = _commands()


def _record(cmd: Any) -> Command | None:
    record = getattr(cmd.callback, "record", None)
    return record if isinstance(record, Command) else None


def test_the_walk_finds_every_area() -> None:
    """The walk reaches the nested groups too (not only the root's commands)."""
    names = set(COMMANDS)
    assert {
        "convert",
        "train prm",
        "eval processbench",
        "eval fewshot",
        "label mc",
        "annotate serve",
    } <= names
    assert {"arithmetic check", "gate measure", "rl", "run", "serve", "audit", "card"} <= names
    assert len(names) >= 60


def test_every_command_comes_from_the_one_record_type() -> None:
    made = {name for name, cmd in COMMANDS.items() if _record(cmd) is not None}
    missing = sorted(set(COMMANDS) - made - KNOWN_REMAINDER)
    assert not missing, f"commands not made from a Command record: {missing}"
    assert not (KNOWN_REMAINDER & made), "a command listed as remainder is made from a record now"


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - KNOWN_REMAINDER))
def test_each_command_takes_only_its_configs_fields(name: str) -> None:
    """Its name is the record's, and each parameter is a field of the record's config (or ``--config``,
    or a section file of a nested config): nothing, a path least of all, is passed beside the config."""
    cmd = COMMANDS[name]
    record = _record(cmd)
    assert record is not None and record.name == name.split()[-1]
    layout = record.layout
    fields = {f.dotted.replace(".", "__") for f in config_flags(record.config, layout)}
    allowed = fields | set(layout.arguments) | {f"_file_{s}" for s in layout.section_files}
    allowed |= {"config"} if layout.config_file else set()
    assert {p.name for p in cmd.params} <= allowed | {"help"}
    for argument in layout.arguments:
        assert argument in record.config.model_fields


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["train", "prm", "traces.jsonl", "-o", "runs/prm"], {"data": "traces.jsonl", "output": "runs/prm"}),
        (["train", "orm", "t.jsonl", "--output", "runs/orm"], {"data": "t.jsonl", "output": "runs/orm"}),
        (["pretrain", "t.jsonl", "-o", "runs/lm"], {"data": "t.jsonl", "output": "runs/lm"}),
        (["rl", "--policy", "runs/lm", "--reward", "outcome", "-o", "runs/rl"], {"output": "runs/rl"}),
        (["serve", "runs/prm", "--port", "8001"], {"model": "runs/prm"}),
    ],
)
def test_train_rl_and_serve_take_their_paths_as_config_fields(
    args: list[str], paths: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented positional usage still works, and lands in the config: the record's run gets one
    config holding the paths, and the library gets its own config (the paths taken off)."""
    seen: list[Any] = []

    def capture(group: typer.Typer, record: Command, *, run: Any = None) -> None:
        add_command(group, record, run=seen.append)

    for module in ("models", "rl", "search"):
        monkeypatch.setattr(f"prmkit.cli.{module}.add_command", capture)
    root = typer.Typer()
    from prmkit.cli import models, rl, search

    for area in (models, rl, search):
        area.register(root)
    result = CliRunner().invoke(root, args)
    assert result.exit_code == 0, result.output
    (config,) = seen
    assert {k: str(getattr(config, k)) for k in paths} == paths
    library = type(config).__mro__[1]  # PrmConfig, OrmConfig, PretrainConfig, RlConfig, ServerConfig
    inner = fields_of(config, library)
    assert type(inner) is library and not set(paths) & set(library.model_fields)
    assert inner.model_fields_set == config.model_fields_set - set(paths)


def test_a_record_made_outside_prmkit_becomes_a_command(tmp_path: Path) -> None:
    """The record alone makes the command: flags from its config, its run called with the config, its
    result printed its one way, its errors one line each."""
    from prmkit.core.config import Config

    class Echo(Config):
        """Echo a word."""

        word: str
        """The word."""
        times: int = 1
        """How often."""

    def run(c: Echo) -> list[str]:
        if c.word == "bad":
            raise LookupError("word: expected another word, found 'bad'")
        return [c.word] * c.times

    group = typer.Typer()
    add_command(
        group, Command("echo", Echo, run, show=lambda words, c: " ".join(words), errors=(LookupError,))
    )

    @group.callback()
    def _root() -> None: ...

    done = CliRunner().invoke(group, ["echo", "--word", "hi", "--times", "3"])
    assert done.exit_code == 0 and done.stdout == "hi hi hi\n"
    refused = CliRunner().invoke(group, ["echo", "--word", "bad"])
    assert refused.exit_code == 2 and "error: word: expected another word, found 'bad'" in refused.output
    assert "Echo a word." in CliRunner().invoke(group, ["echo", "--help"]).output
