"""The evaluation commands' registry: each entry's run function lives beside its pure core, takes the
entry's config, and the CLI built from the registry loads no numpy until a command runs."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from prmkit.core.registry import UnknownNameError, resolve
from prmkit.evaluation.commands import EVAL_COMMANDS


@pytest.mark.parametrize("name", EVAL_COMMANDS.names())
def test_each_entry_runs_the_function_beside_its_core(name: str) -> None:
    command = EVAL_COMMANDS.get(name)
    module, _, function = command.target.partition(":")
    # a command that trains (fewshot) runs from the training layer, above the evaluation core it feeds
    assert module.startswith(("prmkit.evaluation.", "prmkit.training.fewshot")) and function.startswith(
        "run_"
    )
    run = resolve(command.target)
    assert typing.get_type_hints(run)["config"] is command.config


def test_an_unknown_command_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'processbench'"):
        EVAL_COMMANDS.get("procesbench")


def test_the_cli_loads_no_numpy_until_a_command_runs() -> None:
    code = "import sys, prmkit.cli; print(sorted(m for m in ('numpy', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
