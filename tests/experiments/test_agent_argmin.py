"""experiments/agent_argmin.py: which tokens of a step lie inside the tool results it reads."""

from __future__ import annotations

from tests.experiments import load_experiment


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
    flags = load_experiment("agent_argmin").inside_results(_Pieces(pieces), list(range(len(pieces))))
    assert flags == [True, True, True, True, True, True, False, False, False, False, False]
