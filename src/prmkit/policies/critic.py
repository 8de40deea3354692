"""The ProcessBench critic prompt and the reader of critic answers.

The template follows QwenLM/ProcessBench's ``critique_template.txt``: paragraphs tagged
``<paragraph_i>`` indexed from 0, and the index of the earliest wrong paragraph (or -1) in the last
``\\boxed{}``. Users replace the template with their own; it must keep ``{problem}`` and
``{tagged_response}``. :func:`read_critic_prompt` inverts the default layout so prmkit's policy server can
act as a judge behind ``/v1/chat/completions``.

Answers are read as QwenLM/ProcessBench's ``code/run_eval.py`` reads them (``extract_answer`` then
``int()``): only the last box counts. An answer with no usable index is *no verdict*
(``first_error=None`` and a ``status``), never "no error" (-1): upstream keeps ``pred = None``, which
matches no label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prmkit.core.model import Step
from prmkit.core.protocols import JudgeVerdict

CRITIC_TEMPLATE = (
    "The following is a math problem and a solution (split into paragraphs, enclosed with tags and "
    "indexed from 0):\n\n"
    "[Math Problem]\n\n{problem}\n\n"
    "[Solution]\n\n{tagged_response}\n\n"
    "Your task is to review and critique the solution paragraph by paragraph. Once you identify an error "
    "in a paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return "
    'the index of -1 (which typically denotes "not found").\n\n'
    "Please put your final answer (i.e., the index) in \\boxed{}."
)

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
"""QwenLM/ProcessBench's ``boxed_pattern`` (code/run_eval.py @ e8024636), character for character."""
_PARAGRAPH = re.compile(r"<paragraph_(\d+)>\n?(.*?)\n?</paragraph_\1>", re.S)


def tag_steps(steps: Sequence[Step]) -> str:
    """Steps as ProcessBench's tagged paragraphs."""
    return "\n\n".join(f"<paragraph_{i}>\n{s.text}\n</paragraph_{i}>" for i, s in enumerate(steps))


def critic_prompt(problem_text: str, steps: Sequence[Step], template: str = CRITIC_TEMPLATE) -> str:
    """Fill a critic template (plain ``str.replace``, so braces elsewhere in it are left alone)."""
    for field in ("{problem}", "{tagged_response}"):
        if field not in template:
            raise ValueError(f"critic template: expected the placeholder {field}, found none")
    return template.replace("{problem}", problem_text).replace("{tagged_response}", tag_steps(steps))


def parse_first_error(text: str | None) -> int | None:
    """The integer in the last ``\\boxed{}`` of a critic's answer; None when there is none.

    As upstream: the last box wins even when an earlier one holds an integer (``\\boxed{1} ...
    \\boxed{x}`` is None: the critic's final answer is not an index), its content is stripped and read
    with ``int()``; no box (refusal, junk, a cut-off answer) is None. None means "no prediction".
    """
    if not text:
        return None
    found = _BOXED.findall(text)
    if not found:
        return None
    try:
        return int(found[-1].strip())
    except ValueError:  # not an integer (also a digit string past Python's int-conversion limit)
        return None


def verdict_from_first_error(first_error: int | None, n_steps: int, raw: str | None) -> JudgeVerdict:
    """Per-step ratings implied by a first-error index: +1 before it, -1 at it, unknown after it.

    An unparseable answer or an index outside ``[-1, n_steps)`` is no verdict: no ratings,
    ``first_error=None`` and ``extra["status"]`` saying why, so callers count it apart; it is never
    "no error" (-1), which would score a critic that always refuses as perfect on error-free traces.
    """
    if first_error is None or not -1 <= first_error < n_steps:
        status = "unparseable" if first_error is None else "out_of_range"
        return JudgeVerdict(ratings=[None] * n_steps, first_error=None, raw=raw, extra={"status": status})
    if first_error == -1:
        ratings: list[int | None] = [1] * n_steps
    else:
        ratings = [1] * first_error + [-1] + [None] * (n_steps - first_error - 1)
    return JudgeVerdict(ratings=ratings, first_error=first_error, raw=raw, extra={"status": "ok"})


def read_critic_prompt(prompt: str) -> tuple[str, list[Step]] | None:
    """Problem text and steps back from a prompt written with :data:`CRITIC_TEMPLATE`; None otherwise."""
    m = re.search(r"\[Math Problem\]\n\n(.*?)\n\n\[Solution\]\n\n(.*)\n\nYour task is", prompt, re.S)
    if not m:
        return None
    steps = [Step(text=body) for _, body in _PARAGRAPH.findall(m.group(2))]
    return m.group(1), steps


THINKPRM_TEMPLATE = (
    "You are given a math problem and a proposed step-by-step solution:\n\n"
    "[Math Problem]\n\n{problem}\n\n"
    "[Solution]\n\n{solution}\n\n"
    "Review and critique each step in the proposed solution to determine whether each step is correct. "
    "If the solution is incomplete, only verify the provided steps."
)
"""ThinkPRM's verification prompt (mukhal/ThinkPRM ``utils/helper.py``, the instruction its released models
were trained with), sent as the user's message; ``{solution}`` is the steps as ``Step i: ...`` lines."""

_STEP_VERDICT = re.compile(r"Step\s+(\d+)\s*:(.*?)(?=Step\s+\d+\s*:|$)", re.S)
_CORRECTNESS = re.compile(r"\\boxed\{\s*(correct|incorrect)\s*\}", re.I)


def thinkprm_prompt(problem_text: str, steps: Sequence[Step], template: str = THINKPRM_TEMPLATE) -> str:
    """ThinkPRM's prompt: the steps numbered ``Step 1:`` on, one per line (as ThinkPRM's scorer writes
    them, a step's own ``Step N:`` prefix dropped first)."""
    for field in ("{problem}", "{solution}"):
        if field not in template:
            raise ValueError(f"ThinkPRM template: expected the placeholder {field}, found none")
    lines = [f"Step {i + 1}: " + re.sub(r"^\s*Step \d+:\s*", "", s.text).strip() for i, s in enumerate(steps)]
    return template.replace("{problem}", problem_text).replace("{solution}", "\n".join(lines))


def parse_step_verdicts(text: str | None, n_steps: int) -> list[bool | None]:
    """Each step's verdict in a ThinkPRM-style verification (``Step t: ... \\boxed{correct}`` or
    ``\\boxed{incorrect}``): True, False, or None where the chain gave that step none. A step verified
    twice (a chain that "double checks") keeps its last verdict, as the chain's final word on it."""
    return [None if c is None else c[1] for c in parse_step_checks(text, n_steps)]


def parse_step_checks(text: str | None, n_steps: int) -> list[tuple[str, bool] | None]:
    """Each step's check and verdict in a ThinkPRM-style verification: ``(CHECK, True)`` for ``Step t:
    CHECK \\boxed{correct}``, the check being the step's text before its last box, stripped; None where
    the chain gave the step no verdict. A step verified twice keeps its last section (its final word).
    What a generative verifier is trained to write after each step (``prmkit.training.critic``)."""
    out: list[tuple[str, bool] | None] = [None] * n_steps
    for number, body in _STEP_VERDICT.findall(text or ""):
        boxes = list(_CORRECTNESS.finditer(body))
        k = int(number) - 1
        if boxes and 0 <= k < n_steps:
            out[k] = (body[: boxes[-1].start()].strip(), boxes[-1][1].lower() == "correct")
    return out


def verdict_from_steps(verdicts: Sequence[bool | None], raw: str | None) -> JudgeVerdict:
    """Ratings from per-step verdicts read with first-error semantics: +1 up to the first step judged
    incorrect, -1 there, unknown after it; an unverified step before it stays unknown (no verdict is no
    "correct"). No verdict at all is an unparseable answer, never "no error"."""
    n = len(verdicts)
    if all(v is None for v in verdicts):
        return JudgeVerdict(ratings=[None] * n, first_error=None, raw=raw, extra={"status": "unparseable"})
    first = next((i for i, v in enumerate(verdicts) if v is False), -1)
    ratings: list[int | None] = [None if v is None else 1 for v in verdicts]
    if first != -1:
        ratings = ratings[:first] + [-1] + [None] * (n - first - 1)
    complete = first != -1 or all(v is not None for v in verdicts)
    return JudgeVerdict(
        ratings=ratings,
        first_error=first if complete else None,
        raw=raw,
        extra={"status": "ok" if complete else "partial"},
    )
