"""GenPRM's released verifiers (Zhao et al. 2025, RyanLiu112/GenPRM) asked and read as their own code does.

**The conversation** (``src/prm_evaluation/infer_module/prm_evaluate.py``, ``eval_logic/processbench.py``):
the system prompt :data:`SYSTEM`, then for each step a user turn holding the step (the first with the
problem and a newline before it) and an assistant turn holding GenPRM's verification of that step (its
first sample's); the step judged is the last user turn, ``cur_step`` counted from 1. One step is judged
per request chain, on an assistant turn that GenPRM prefills:

1. :data:`ANALYZE` (``<analyze>\\nLet's analyze the Paragraph {cur_step} step by step: ``) -> text up to
   ``</analyze>\\n``, ``k`` samples in one request (GenPRM's ``n``);
2. per sample: that, then :data:`VERIFY` -> text up to ``</output>\\n`` (the model's check, then its
   judgement after ``<output>\\n**Judgement**: $\\boxed``); an answer that stops short of ``</output>\\n``
   gets ``[Code Output]\\n\\n```\\n`` and another request, :data:`ROUNDS` requests at most; a sample out of
   tokens is judged from its analysis alone (:data:`OUTPUT` after ``</analyze>\\n``, 20 tokens).

**Code is never run.** GenPRM ``exec``s the Python its model writes and pastes the output after
``[Code Output]``; prmkit never runs code a model or a remote party wrote. This is GenPRM's own
``execute=False`` path (``infer_genprm.py``): no stop at the end of a code block, and where an answer
stops short the ``[Code Output]`` block is left empty. The model writes its check, and what it expects
the check to print, itself.

**Scores** (``genprm_inference.py``'s ``get_reward_score``; ``infer_genprm.py``'s ``get_reward``): a
sample's score is P(Yes) / (P(Yes) + P(No)) at the last ``Yes`` (or ``No``) token of its final answer,
from the top-20 logprobs there (an absent rival takes the smallest logprob listed); without logprobs, 1.0
for ``boxed{Yes}`` and 0.0 for ``boxed{No}``. A step's score is the mean over its ``k`` samples
(``majority_num``), a sample without a box counting 0.5 as upstream; a step none of whose samples has a
box has no score. A step is wrong when its score is below 0.5 (GenPRM's ProcessBench threshold).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prmkit.core.model import Step
from prmkit.core.protocols import JudgeVerdict
from prmkit.policies.critic import verdict_from_steps

SYSTEM = (
    "You are a math teacher. Your task is to review and critique the paragraphs in solution step by step."
)
"""GenPRM's system prompt when it analyses and verifies (``--analyze`` / ``--verify``)."""
ANALYZE = "<analyze>\nLet's analyze the Paragraph {cur_step} step by step: "
VERIFY = "<verify>\nLet's use python code to find any potential error:\n```python\n"
OUTPUT = "<output>\n**Judgement**: $\\boxed"
END_ANALYZE = "</analyze>\n"
END_OUTPUT = "</output>\n"
CODE_OUTPUT = "[Code Output]\n\n```\n"
"""What GenPRM appends, with no code run (``execute=False``), to an answer that stopped short."""
SAMPLING = {"temperature": 0.6, "top_p": 0.95, "top_k": 20}
"""GenPRM's sampling (``genprm_inference.py``); the temperature is ``--judge-temperature``'s default."""
TOP_LOGPROBS = 20
ROUNDS = 3
"""Requests after the analysis, per sample (GenPRM's ``time_limit``)."""
FALLBACK_TOKENS = 20
"""Tokens for a judgement from the analysis alone, when a sample has spent its ``max_tokens``."""
THRESHOLD = 0.5


@dataclass(frozen=True)
class Completion:
    """One sampled answer: its text, the tokens it cost, and per token (token, logprob, top logprobs)."""

    text: str
    spent: int
    tokens: tuple[tuple[str, float, dict[str, float]], ...] | None = None


Complete = Callable[[list[dict], int, list[str], int], list[Completion]]
"""``(messages ending in the prefilled assistant turn, n, stop strings, max_tokens) -> n answers``."""


def requests_per_trace(n_steps: int, k: int) -> int:
    """The most answers one trace can cost: steps x k x (the analysis + :data:`ROUNDS` more)."""
    return n_steps * k * (1 + ROUNDS)


def genprm_messages(problem_text: str, steps: Sequence[Step], verifications: Sequence[str]) -> list[dict]:
    """The conversation that judges ``steps[-1]``: the steps before it each answered by its verification."""
    if len(verifications) != len(steps) - 1:
        raise ValueError(f"expected {len(steps) - 1} verifications for {len(steps)} steps")
    messages = [{"role": "system", "content": SYSTEM}]
    for i, step in enumerate(steps):
        text = problem_text + "\n" + step.text if i == 0 else step.text
        messages.append({"role": "user", "content": text})
        if i < len(verifications):
            messages.append({"role": "assistant", "content": verifications[i]})
    return messages


def text_verdict(text: str) -> bool | None:
    """Upstream's ``get_reward``: ``boxed{Yes}`` anywhere is Yes, else ``boxed{No}`` is No, else none."""
    if "boxed{Yes}" in text:
        return True
    if "boxed{No}" in text:
        return False
    return None


def logprob_score(text: str, tokens: Sequence[tuple[str, float, dict[str, float]]]) -> float | None:
    """Upstream's ``get_reward_score``: the decision is the first ``Yes}`` / ``No}`` (any case) in the
    text; at the last token of that decision, P(Yes) / (P(Yes) + P(No)), a rival missing from the top
    logprobs taking the smallest listed. None where the decision's token is not among the answer's
    tokens (upstream raises there)."""
    found = re.search(r"(Yes|No)\}", text, re.IGNORECASE)
    if not found:
        return None
    decision = found[1].capitalize()
    rival = "No" if decision == "Yes" else "Yes"
    at = next((i for i in reversed(range(len(tokens))) if tokens[i][0] == decision), None)
    if at is None:
        return None
    _, mine, top = tokens[at]
    theirs = top.get(rival, min([*top.values(), mine]))
    p_mine, p_theirs = math.exp(mine), math.exp(theirs)
    p_yes, p_no = (p_mine, p_theirs) if decision == "Yes" else (p_theirs, p_mine)
    return 0.5 if p_yes + p_no == 0 else p_yes / (p_yes + p_no)


def sample_score(text: str, tokens: Sequence[tuple[str, float, dict[str, float]]] | None) -> float | None:
    """A sample's score: from logprobs where they name its verdict, else 1.0 / 0.0; None with no box."""
    verdict = text_verdict(text)
    if verdict is None:
        return None
    soft = logprob_score(text, tokens) if tokens else None
    return float(verdict) if soft is None else soft


def step_score(scores: Sequence[float | None]) -> float | None:
    """The mean of a step's sample scores, a sample without a box counting 0.5; None if none has one."""
    if all(s is None for s in scores):
        return None
    return sum(0.5 if s is None else s for s in scores) / len(scores)


def verify_step(
    complete: Complete, messages: list[dict], cur_step: int, k: int, max_tokens: int
) -> list[tuple[str, float | None]]:
    """``k`` verifications of the step ``messages`` ends with: ``[(text, score or None), ...]``."""
    analyze = ANALYZE.replace("{cur_step}", str(cur_step))
    out = []
    for first in complete([*messages, _prefill(analyze)], k, [END_ANALYZE], max_tokens):
        prefix, spent = analyze + first.text + VERIFY, first.spent
        for round_ in range(ROUNDS):
            left = max_tokens - spent
            if left <= 0:  # out of tokens: judged from the analysis alone, as upstream
                prefix = analyze + first.text.split("</analyze>")[0] + END_ANALYZE + OUTPUT
                left = FALLBACK_TOKENS
            (last,) = complete([*messages, _prefill(prefix)], 1, [END_OUTPUT], left)
            spent += last.spent
            if last.text.endswith(END_OUTPUT) or round_ == ROUNDS - 1:
                break
            prefix += last.text + CODE_OUTPUT  # execute=False: the code's output left empty
        text = prefix + last.text
        out.append((text, sample_score(text, last.tokens)))
    return out


def judge_genprm(
    complete: Complete, problem_text: str, steps: Sequence[Step], k: int, max_tokens: int
) -> JudgeVerdict:
    """Every step judged in turn, up to the first one judged wrong (later steps would label nothing);
    ratings with first-error semantics (:func:`~prmkit.policies.critic.verdict_from_steps`), each step's
    score in ``extra["scores"]`` and the first sample's verifications, one after another, as ``raw``."""
    verifications: list[str] = []
    scores: list[float | None] = []
    for i in range(len(steps)):
        messages = genprm_messages(problem_text, steps[: i + 1], verifications)
        samples = verify_step(complete, messages, i + 1, k, max_tokens)
        verifications.append(samples[0][0])
        scores.append(step_score([score for _, score in samples]))
        if scores[-1] is not None and scores[-1] < THRESHOLD:
            break
    scores += [None] * (len(steps) - len(scores))
    verdict = verdict_from_steps(
        [None if s is None else s >= THRESHOLD for s in scores], "".join(verifications)
    )
    verdict.extra["scores"] = scores
    return verdict


def _prefill(content: str) -> dict:
    return {"role": "assistant", "content": content}
