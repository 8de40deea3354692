"""The root CLI loads lazily (issue 65): ``prmkit --help`` lists every command of every area, with its
one-line help, from the tables ``prmkit.cli.COMMANDS`` and ``GROUPS`` (the worlds' groups from their own
area, which names them) without importing the other areas, and a command imports its own area only.
Checked here against what the areas really make, in-process and through real ``prmkit`` processes; a
plugin world shows up and runs like a built-in one."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.core import TyperGroup

from prmkit.cli import _AREAS, COMMANDS, GROUPS, WORLDS_AREA, app, registered

REPO = Path(__file__).resolve().parents[2]
PRMKIT = str(Path(sys.executable).parent / "prmkit")
HEAVY = ("torch", "transformers", "numpy")
AREA_PACKAGES = ("labeling", "training", "worlds", "evaluation", "search", "rl", "pipeline", "annotate")
AREA_PACKAGES += ("serving", "scoring", "cards", "formats", "modeling", "policies")
"""prmkit's packages behind the areas' commands: a light command imports none of them."""
WIDE = {**os.environ, "COLUMNS": "600"}
"""A terminal wide enough that no row of a command list wraps."""


def _first_paragraph(command: click.Command) -> str:
    """What a command list shows of a command's help (typer's rich help: its first paragraph)."""
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]


def _made(groups: bool) -> dict[str, tuple[str, str | None]]:
    """The root's commands (or groups) the areas make, in the order they are added: area and listed help
    (None: hidden)."""
    return {
        name: (area, None if command.hidden else _first_paragraph(command))
        for area in _AREAS
        for name, command in typer.main.get_group(registered(area)).commands.items()
        if isinstance(command, TyperGroup) == groups
    }


def _listing() -> dict[str, str]:
    """What ``prmkit --help`` lists, in its order (typer: the commands, then the groups): name -> help."""
    made = _made(groups=False) | _made(groups=True)
    return {name: " ".join(text.split()) for name, (_, text) in made.items() if text is not None}


def _rows(help_text: str) -> dict[str, str]:
    """The command rows of a rich ``--help`` printed wide enough that no row wraps: name -> help."""
    rows = {}
    commands = help_text.split("─ Commands ")[1]
    for line in commands.splitlines()[1:]:
        if not line.startswith("│"):
            break
        name, _, text = line.strip("│ ").partition(" ")
        rows[name] = " ".join(text.split())
    return rows


def _modules_after(*args: str) -> set[str]:
    """The modules a fresh ``prmkit ARGS`` process has imported when it exits."""
    code = (
        "import json, sys\nfrom prmkit.cli import main\nsys.argv = ['prmkit', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(("table", "groups"), [(COMMANDS, False), (GROUPS, True)], ids=["COMMANDS", "GROUPS"])
def test_the_tables_are_what_the_areas_make(table: dict[str, tuple[str, str]], groups: bool) -> None:
    made = {name: entry for name, entry in _made(groups).items() if entry[0] != WORLDS_AREA}
    lines = "\n".join(f"    {name!r}: {entry!r}," for name, entry in made.items())
    assert list(table.items()) == list(made.items()), f"the table should read:\n{lines}"


def test_only_the_worlds_area_makes_hidden_or_unlisted_names() -> None:
    """The tables list no world (the worlds' area names them) and every other area's names are listed."""
    made = {**_made(groups=False), **_made(groups=True)}
    assert {name for name, (area, _) in made.items() if area == WORLDS_AREA}.isdisjoint({*COMMANDS, *GROUPS})
    assert all(text is not None for area, text in made.values() if area != WORLDS_AREA)


def test_help_lists_every_command_of_every_area_with_its_help() -> None:
    done = subprocess.run([PRMKIT, "--help"], capture_output=True, text=True, env=WIDE, check=True)
    shown = _listing()
    assert _rows(done.stdout) == shown
    assert list(_rows(done.stdout)) == list(shown)  # in the order typer lists them
    assert {"validate", "train", "arithmetic", "agent", "code"} <= set(shown)


def test_the_root_loads_an_area_when_one_of_its_names_is_looked_up() -> None:
    root = typer.main.get_command(app)
    assert "label" in root.commands and root.commands._loaded == set()  # type: ignore[attr-defined]
    assert root.commands["validate"].name == "validate"
    assert root.commands._loaded == {"data"}  # type: ignore[attr-defined]
    assert list(root.commands) == [*_made(groups=False), *_made(groups=True)]  # hidden names too
    assert root.commands._loaded == {"data", WORLDS_AREA}  # type: ignore[attr-defined]  # it names the worlds


@pytest.mark.parametrize(
    ("args", "area", "uses"),
    [(["--help"], WORLDS_AREA, {"worlds", "formats"}), (["validate", "--help"], "data", set())],
)
def test_a_light_command_imports_no_other_area_nor_torch(args: list[str], area: str, uses: set[str]) -> None:
    """``prmkit validate --help`` imports its area (data) alone and none of the packages behind the
    others; ``prmkit --help`` the worlds' area alone (their records name and describe the worlds' groups)."""
    modules = _modules_after(*args)
    assert not [m for m in HEAVY if m in modules]
    areas = {m.removeprefix("prmkit.cli.") for m in modules if m.removeprefix("prmkit.cli.") in _AREAS}
    assert areas == {area}
    others = [["prmkit", p] for p in AREA_PACKAGES if p not in uses]
    assert not [m for m in modules if m.split(".")[:2] in others]


LABELLER_PLUGIN = """
from pathlib import Path

from pydantic import BaseModel

from prmkit.labeling.labellers import Labeller


class CopyConfig(BaseModel):
    \"\"\"A plugin's labeller (it labels nothing).\"\"\"

    input: Path
    output: Path


LABELLER = Labeller("copy", ("model:copy",), CopyConfig, lambda config: {})
"""


def _install(site: Path, dist: str, group: str, entry: str) -> None:
    """A minimal installed distribution in ``site``: a dist-info holding one entry point."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n", encoding="utf-8")


def test_plugins_are_listed_and_a_plugin_world_runs(tmp_path: Path) -> None:
    """With a ``prmkit.worlds`` plugin (tests/worlds/sums as a distribution) and a ``prmkit.labellers``
    one installed, ``prmkit --help`` lists the world and names the labeller in ``label``'s help (not the
    table's), and the world's commands run like a built-in world's."""
    site = tmp_path / "site"
    _install(site, "prmkit-sums", "prmkit.worlds", "sums = tests.worlds.sums:WORLD")
    _install(site, "plugin-copy", "prmkit.labellers", "copy = plugin_copy:LABELLER")
    (site / "plugin_copy.py").write_text(LABELLER_PLUGIN, encoding="utf-8")
    env = {**WIDE, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    listing = subprocess.run([PRMKIT, "--help"], capture_output=True, text=True, env=env, cwd=REPO)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    rows = _rows(listing.stdout)
    assert rows["sums"].startswith("The sums world (sums-v1): ") and set(rows) == {*_listing(), "sums"}
    assert "(binary_search, consensus, copy, judge, " in rows["label"]
    out = tmp_path / "p.jsonl"
    args = [PRMKIT, "sums", "generate", "--n", "2", "-o", str(out)]
    ran = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
