"""``Config``: strict fields, and fields added later kept out of a dump at their default (``QUIET``), so a
recipe that leaves them alone keeps its stage keys and cached stages."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prmkit.core.config import Config


class Old(Config):
    rollouts: int = 8


class Grown(Old):
    QUIET = ("rule",)

    rule: str = "advantage"
    """Added after stage keys were recorded."""


class Nested(Config):
    inner: Grown = Grown()


def test_a_quiet_field_leaves_the_dump_only_at_its_default() -> None:
    assert Grown().model_dump() == Old().model_dump() == {"rollouts": 8}
    assert Grown(rule="rpe").model_dump() == {"rollouts": 8, "rule": "rpe"}
    assert Nested().model_dump(mode="json") == {"inner": {"rollouts": 8}}  # inside a recipe section too
    assert Grown.model_validate(Grown(rule="rpe").model_dump()) == Grown(rule="rpe")  # round-trips
    with pytest.raises(ValidationError, match="rolouts"):
        Grown(rolouts=4)  # still strict


def test_the_judge_format_and_the_code_worlds_trap_keep_old_keys() -> None:
    from prmkit.policies.options import JudgeOptions
    from prmkit.worlds.registry import world

    assert "judge_format" not in JudgeOptions().model_dump()
    assert (
        "judge_format"
        in JudgeOptions(
            judge="endpoint", judge_url="http://127.0.0.1:9", judge_model="m", judge_format="thinkprm"
        ).model_dump()
    )
    code = world("code").policy_config
    assert not {"systematic", "systematic_rate"} & set(code().model_dump())
    assert code(systematic=0.5).model_dump()["systematic"] == 0.5
