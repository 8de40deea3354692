"""experiments/agent_argmin.py: which tokens of a step lie inside the tool results it reads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("agent_argmin", ROOT / "experiments" / "agent_argmin.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Pieces:
    """A tokenizer whose token ``i`` decodes to ``pieces[i]``."""

    def __init__(self, pieces: list[str]):
        self.pieces = pieces

    def decode(self, ids: list[int]) -> str:
        return "".join(self.pieces[i] for i in ids)


def test_tokens_between_the_response_markup_are_the_environments() -> None:
    pieces = [
        "<tool_response>",
        "\n",
        '{"value": ',
        "19",
        "}",
        "\n",
        "</tool_response>",
        "\n",
        "It is ",
        "19",
        ".",
    ]
    flags = _script().inside_results(_Pieces(pieces), list(range(len(pieces))))
    assert flags == [True, True, True, True, True, True, False, False, False, False, False]
