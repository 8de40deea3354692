"""The accelerate configs prmkit ships (recipes/accelerate/) are read by accelerate's own launcher as
the kind of launch docs/models.md says, and the docs give each its command."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelerate.commands.launch import _validate_launch_command, launch_command_parser

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {"ddp.yaml": "multi_gpu", "fsdp2.yaml": "use_fsdp", "zero3.yaml": "use_deepspeed"}


@pytest.mark.parametrize(("name", "kind"), CONFIGS.items())
def test_each_shipped_config_is_the_launch_it_says(name: str, kind: str) -> None:
    path = ROOT / "recipes" / "accelerate" / name
    argv = ["--config_file", str(path), "--num_processes", "2", "-m", "prmkit.cli", "train", "prm", "x"]
    args, defaults, _ = _validate_launch_command(launch_command_parser().parse_args(argv))
    assert getattr(args, kind) and not args.cpu
    assert args.num_processes == 2 and args.mixed_precision == "no"  # prmkit's --mixed-precision decides
    if name == "fsdp2.yaml":
        assert (
            str(args.fsdp_version) == "2"
            and defaults.fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
        )
    if name == "zero3.yaml":
        assert (
            defaults.deepspeed_config["zero_stage"] == 3
            and defaults.deepspeed_config["zero3_save_16bit_model"]
        )
    docs = (ROOT / "docs" / "models.md").read_text()
    assert f"accelerate launch --config_file recipes/accelerate/{name} -m prmkit.cli train prm" in docs
