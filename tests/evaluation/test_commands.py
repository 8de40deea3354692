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
    # only evaluation's own modules: a lower layer never names an upper one's (fewshot, which trains, is
    # registered from the CLI: prmkit.cli.evaluate.FEWSHOT)
    assert module.startswith("prmkit.evaluation.") and function.startswith("run_")
    run = resolve(command.target)
    assert typing.get_type_hints(run)["config"] is command.config


def test_fewshot_is_a_command_of_the_layer_above_training() -> None:
    from prmkit.cli.evaluate import FEWSHOT, records

    assert "fewshot" not in EVAL_COMMANDS
    assert FEWSHOT.target == "prmkit.training.fewshot:run_fewshot"
    assert typing.get_type_hints(resolve(FEWSHOT.target))["config"] is FEWSHOT.config
    assert [r.name for r in records()][:7] == [
        "processbench", "agentprocessbench", "bon", "audit", "monitorability", "transfer", "fewshot",
    ]  # fmt: skip


def test_an_unknown_command_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'processbench'"):
        EVAL_COMMANDS.get("procesbench")


def test_the_cli_loads_no_numpy_until_a_command_runs() -> None:
    code = "import sys, prmkit.cli; print(sorted(m for m in ('numpy', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
