"""The critic head's layout: how a trace and its verification chain become one causal-LM text.

After the problem, every step is followed by what the critic writes about it, its check and verdict::

    {problem}\\n
    {step 1}\\n
    {check 1} \\boxed{correct}\\n
    {step 2}\\n
    {check 2} \\boxed{incorrect}\\n

Each piece is tokenized on its own and the ids joined (as :mod:`prmkit.modeling.template` does), so
training and scoring, which builds the same text one step at a time around what the model generates,
see exactly the same ids. A step's score is read where the verdict's first token is predicted:
``P(correct) / (P(correct) + P(incorrect))`` of the two verdict words' first tokens.

In an :class:`~prmkit.modeling.template.Encoded` row, ``tag_positions`` hold each verdict's last token
(the end of what the critic writes about a step) and ``context_tokens`` the tokens of each unit it
*reads* before writing: the previous unit's closing ``}\\n`` and the step itself with its newline; the
rest of the unit (check, ``\\boxed{``, verdict) is what it writes and what its loss is taken on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prmkit.modeling.template import Encoded
from prmkit.worlds.teacher import VERDICTS

CHECK_OPEN = " \\boxed{"
"""Written after a check, before the verdict (ThinkPRM's box)."""
CHECK_CLOSE = "}\n"
"""Written after the verdict: ends what the critic writes about a step."""
PROMPT = "{problem}\n"
STEP = "{step}\n"


def verdict_ids(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids of ``correct`` and ``incorrect``; refused when their first tokens are the same (the two
    verdicts could not be told apart where the first one is read)."""
    good, bad = (tokenizer(word, add_special_tokens=False).input_ids for word in VERDICTS)
    if not good or not bad or good[0] == bad[0]:
        raise ValueError(
            f"the tokenizer writes {VERDICTS[0]!r} as {good} and {VERDICTS[1]!r} as {bad}: the critic head "
            "reads a verdict at its first token, so the two must start with different tokens"
        )
    return good, bad


def encode_chain(
    tokenizer: Any, problem: str, steps: Sequence[str], checks: Sequence[tuple[str, bool]]
) -> Encoded:
    """One trace with a check and verdict after each of its steps (``checks``: one ``(check, correct)``
    per step), in the critic's layout."""
    texts = [PROMPT.replace("{problem}", problem)]
    for step, (check, _) in zip(steps, checks, strict=True):
        texts += [STEP.replace("{step}", step), check + CHECK_OPEN]
    pieces = tokenizer([*texts, CHECK_CLOSE], add_special_tokens=False).input_ids
    close = pieces[-1]
    verdicts = verdict_ids(tokenizer)
    ids: list[int] = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    ids += pieces[0]
    prompt_length, tags, read = len(ids), [], []
    for j, (_, correct) in enumerate(checks):
        step_ids, check_ids = pieces[1 + 2 * j], pieces[2 + 2 * j]
        read.append((len(close) if j else 0) + len(step_ids))
        if j:
            ids += close
        ids += step_ids + check_ids + verdicts[0 if correct else 1]
        tags.append(len(ids) - 1)
    return Encoded(input_ids=ids, tag_positions=tags, prompt_length=prompt_length, context_tokens=read)
