"""verl 0.9.1's reward loop paid by a prmkit reward server: step rewards from a verl environment.

This file is the verl side. It runs in a verl environment with prmkit installed (prmkit's ranges admit
verl's ``transformers<5.11``; ``make verl-env`` builds one) and talks to ``prmkit serve`` (``POST /score``
with the steps it cut) over HTTP, so the PRM can live in another environment or on another machine.
At import it needs only prmkit's step split (:mod:`prmkit.core.steps`, :mod:`prmkit.rl.steps`) and
httpx; torch and verl load when verl uses it. verl can load it by path or by name. docs/rl.md has the
verl config keys; tests/rl/test_verl_loop.py runs them in a verl 0.9.1 environment.

- :data:`PrmkitRewardManager` (``reward.reward_manager.name=PrmkitRewardManager`` with
  ``source=importlib`` and ``module.path`` = this file, or ``name=prmkit`` once this module was imported:
  it registers itself in ``verl.experimental.reward_loop.reward_manager``): a ``RewardManagerBase``
  subclass built with verl's own constructor arguments. ``run_single`` pays one response: a number that
  does not grow with its step count (the ``aggregation``), which is all verl's streaming path keeps;
  ``assemble_rm_scores`` (verl's colocated path) writes each step's reward at the token where the step
  ends, where the configured estimator reads step rewards
  (:func:`prmkit.rl.verl_advantages.dense_placement`).
- :func:`compute_score`: the scalar ``reward.custom_reward_function`` (async; verl awaits it).
- prmkit's advantage estimators (``prmkit_<credit form>``, one per form of :mod:`prmkit.rl.credits`:
  :mod:`prmkit.rl.verl_advantages`), registered in verl's ``ADV_ESTIMATOR_REGISTRY`` with the manager.
  Where the estimator reads each response's outcome (``anchor``, ``first_error``, ``papo``, ``prof``,
  ``prime``), the manager grades the response's final answer against the row's
  ``reward_model.ground_truth`` (:func:`prmkit.core.answers.check_answer`; from the data files where verl
  passes no row fields) and writes the verdict into the outcome channel at the response's last token
  (:func:`prmkit.rl.verl_advantages.with_outcome`).

Every reward the manager writes that is exactly 0.0 is written as -0.0, so prmkit's estimators find a
step end as a non-zero value or a negative zero; no sum changes. A response with more steps than the
server scores (``max_steps_per_trace`` of its ``GET /health``), or one the server refuses (413, 422), is
paid the unfinished reward and counted (``prm_overlong``, ``prm_refused``): one response never stops
verl's reward loop.

Settings come from ``reward.reward_kwargs.prmkit`` (verl passes the whole config to a manager and
reads its own managers' options from ``reward.reward_kwargs``, as DAPO does), then from environment
variables; :class:`Settings` lists both. Steps and answers come from ``prmkit.rl.steps.parse_completion``
with the split and answer pattern of :class:`Settings` (the PRM must score the steps it was trained on),
and the token where each step ends from :func:`prmkit.rl.emitters.step_token_ends`.
"""

# No ``from __future__ import annotations``: verl executes this file with no ``sys.modules`` entry, and
# ``dataclasses`` then fails on string annotations.
import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import httpx

from prmkit.core.steps import (
    DEFAULT_ANSWER_PATTERN,
    DEFAULT_SPECIAL,
    CompletionSteps,
    StepFormat,
    StepSplit,
    parse_completion,
)
from prmkit.rl.emitters import step_token_ends
from prmkit.rl.verl_advantages import check_reward_path, dense_placement, reads_outcome, with_outcome
from prmkit.rl.verl_advantages import register as register_estimators
from prmkit.rl.verl_rows import (  # noqa: F401  (the row helpers, re-exported where verl's users found them)
    USER_TURNS,
    _section,
    dataset_rows,
    ground_truth_of,
    problem_of,
    row_answer,
    row_info,
    template_user_turn,
    user_turn,
)
from prmkit.scoring.aggregate import AGGREGATIONS
from prmkit.serving.config import ServerConfig

logger = logging.getLogger("prmkit.verl")

DEFAULT_MAX_STEPS: int = ServerConfig.model_fields["max_steps_per_trace"].default
"""Steps per trace a server takes when its ``/health`` does not say (the server's own default)."""


@dataclass(frozen=True)
class Settings:
    """What the verl side needs; each field is ``reward.reward_kwargs.prmkit.<field>`` in verl's config,
    else the environment variable in brackets, else the default.

    ``url`` [PRMKIT_REWARD_URL, or PRMKIT_REWARD_MODEL when it is a URL]: the ``prmkit serve`` address.
    ``aggregation`` [PRMKIT_AGGREGATION] min: a response's one number (what verl's streaming path pays,
    and ``prm_score``); ``sum`` grows with the step count and pays padding. ``step_separator``
    [PRMKIT_STEP_SEPARATOR] newline, or ``step_pattern`` [PRMKIT_STEP_PATTERN]: the split the PRM was
    trained with. ``dense`` [PRMKIT_DENSE] auto: on verl's colocated path (``assemble_rm_scores``), each
    step's reward at its end token where ``algorithm.adv_estimator`` is one of prmkit's
    (``prmkit_<credit form>``), else the aggregate at the last token; true: step rewards also for ``gae``
    and ``reinforce_plus_plus``, refused with an estimator that sums a response's rewards
    (:func:`prmkit.rl.verl_advantages.dense_placement`); false: always the aggregate. ``unfinished_reward``
    [PRMKIT_UNFINISHED_REWARD] 0.0: what a response that states no final answer gets (``none``: its
    steps are scored), and what an over-long or refused one gets (0.0 where ``none``). ``api_key``
    [PRMKIT_API_KEY]. ``timeout_s`` [PRMKIT_TIMEOUT_S] 120 and ``retries`` [PRMKIT_RETRIES] 8 (503 and
    connection errors are retried, 4xx never).
    """

    url: str
    aggregation: str = "min"
    step_separator: str = "\n"
    step_pattern: str | None = None
    strip_special: str | None = DEFAULT_SPECIAL
    answer_pattern: str = DEFAULT_ANSWER_PATTERN
    dense: bool | None = None
    unfinished_reward: float | None = 0.0
    api_key: str | None = None
    timeout_s: float = 120.0
    retries: int = 8

    def split(self) -> StepSplit:
        """The step split these settings name (the one the PRM was trained with)."""
        return StepSplit(
            step_separator=self.step_separator,
            step_pattern=self.step_pattern,
            strip_special=self.strip_special,
        )

    def step_format(self) -> StepFormat:
        """How a step states the final answer (``answer_pattern``; a ``\\boxed{}`` wins)."""
        return StepFormat(answer_pattern=self.answer_pattern)


def _parse_value(name: str, raw: Any, default: Any) -> Any:
    if name == "dense":
        if raw is None or isinstance(raw, bool):
            return raw
        if str(raw).lower() in ("1", "true", "yes"):
            return True
        if str(raw).lower() in ("0", "false", "no"):
            return False
        if str(raw).lower() == "auto":
            return None
        raise ValueError(f"prmkit verl settings: {name}: expected auto, true or false, found {raw!r}")
    if name == "unfinished_reward":
        if raw is None or str(raw).lower() == "none":
            return None
        return float(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, int):
        return int(raw)
    return None if raw is None else str(raw)


def settings_from(
    options: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """:class:`Settings` from ``options`` (the ``reward.reward_kwargs.prmkit`` mapping, or
    ``reward_kwargs`` of a custom reward function), then ``environ`` (default ``os.environ``)."""
    options = dict(options or {})
    environ = os.environ if environ is None else environ
    known = {f.name: f for f in fields(Settings)}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"prmkit verl settings: unknown option(s) {unknown}; expected some of {sorted(known)}"
        )
    url = options.get("url") or environ.get("PRMKIT_REWARD_URL")
    if not url and environ.get("PRMKIT_REWARD_MODEL", "").startswith(("http://", "https://")):
        url = environ["PRMKIT_REWARD_MODEL"]
    if not url:
        raise ValueError(
            "prmkit verl settings: no server: set reward.reward_kwargs.prmkit.url (e.g. "
            "+reward.reward_kwargs.prmkit.url=http://127.0.0.1:8000) or PRMKIT_REWARD_URL"
        )
    values: dict[str, Any] = {"url": str(url).rstrip("/")}
    for name, f in known.items():
        if name == "url":
            continue
        env = environ.get(f"PRMKIT_{name.upper()}")
        raw = options.get(name, env)
        if raw is not None or (name in options and name == "unfinished_reward"):
            values[name] = _parse_value(name, raw, f.default)
    settings = Settings(**values)
    try:  # a typo would make the server refuse every response: each one paid the unfinished reward
        AGGREGATIONS.get(settings.aggregation)
    except KeyError as err:
        raise ValueError(f"prmkit verl settings: aggregation: {err.args[0]}") from None
    return settings


def parse_steps(text: str, settings: Settings) -> CompletionSteps:
    """Steps up to (and with) the first one stating an answer: ``prmkit.rl.steps.parse_completion`` with
    the split and answer pattern of ``settings``."""
    return parse_completion(text, settings.split(), settings.step_format())


# ---- the problem the PRM reads ----

_EMPTY = {"count": 0}


def empty_problems() -> int:
    """How many responses of this process were scored with no problem text (each logged; the first
    as a warning)."""
    return _EMPTY["count"]


def note_empty_problem(where: str) -> None:
    """Count a response scored with no problem text; log it (the first one of the process as a warning)."""
    _EMPTY["count"] += 1
    log = logger.warning if _EMPTY["count"] == 1 else logger.debug
    log(
        "prmkit verl: %s: no problem text (no extra_info.question/problem, no raw_prompt user turn, "
        "no user turn in the decoded prompt); the PRM scores these steps with an empty problem "
        "(counted in prm_empty_problem; %d so far)",
        where,
        _EMPTY["count"],
    )


# ---- the server ----


class ServerError(RuntimeError):
    """The reward server refused a request (4xx) or stayed unreachable through every retry."""


class Refused(ServerError):
    """The server refused this one response (413: a size limit; 422: an input it cannot score)."""


REFUSALS = (413, 422)
"""Answers that refuse one response's input: it is paid the unfinished reward. Other 4xx (a wrong API
key, a wrong URL) would refuse every response alike, so they raise."""

_REFUSED = {"count": 0}
_LIMITS: dict[str, int] = {}


def refused_responses() -> int:
    """How many responses of this process the server refused (each paid the unfinished reward)."""
    return _REFUSED["count"]


def note_refused(message: str) -> None:
    """Count a refused response; log the server's message (the first of the process as a warning)."""
    _REFUSED["count"] += 1
    log = logger.warning if _REFUSED["count"] == 1 else logger.debug
    log(
        "prmkit verl: the reward server refused a response (%s); it is paid the unfinished reward "
        "(counted in prm_refused; %d so far)",
        message,
        _REFUSED["count"],
    )


def _headers(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}


async def max_steps(client: httpx.AsyncClient, settings: Settings) -> int:
    """The server's ``max_steps_per_trace`` (``GET /health``), read once per server in a process;
    :data:`DEFAULT_MAX_STEPS` where ``/health`` does not say. Not kept while the server is unreachable
    (scoring then raises anyway)."""
    if settings.url not in _LIMITS:
        try:
            resp = await client.get(f"{settings.url}/health", headers=_headers(settings))
            value = resp.json().get("max_steps_per_trace") if resp.status_code == 200 else None
        except httpx.TransportError:
            return DEFAULT_MAX_STEPS
        except ValueError:  # not JSON
            value = None
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        _LIMITS[settings.url] = value if ok else DEFAULT_MAX_STEPS
    return _LIMITS[settings.url]


async def score_steps(
    client: httpx.AsyncClient, settings: Settings, problem: str, steps: Sequence[str]
) -> tuple[list[float], float]:
    """One trace's step scores and their aggregate (the server's, with ``settings.aggregation``) from
    ``POST /score``; 503 waits ``Retry-After``; 413/422 raise :class:`Refused`, other 4xx
    :class:`ServerError`, at once."""
    body = {"traces": [{"problem": problem, "steps": list(steps)}], "aggregation": settings.aggregation}
    last: str = ""
    for attempt in range(settings.retries + 1):
        try:
            resp = await client.post(f"{settings.url}/score", json=body, headers=_headers(settings))
        except httpx.TransportError as err:
            last, wait = f"{type(err).__name__}: {err}", min(2.0**attempt, 30.0)
        else:
            if resp.status_code == 200:
                result = resp.json()["results"][0]
                return [float(x) for x in result["step_scores"]], float(result["score"])
            if resp.status_code != 503:
                error = Refused if resp.status_code in REFUSALS else ServerError
                raise error(f"{settings.url}/score answered {resp.status_code}: {resp.text[:500]}")
            last, wait = "503 busy", float(resp.headers.get("Retry-After", 1))
        if attempt < settings.retries:
            await asyncio.sleep(wait)
    raise ServerError(f"{settings.url}/score: no answer after {settings.retries + 1} tries ({last})")


def signed_zero(value: float) -> float:
    """``value``, with 0.0 written as -0.0: prmkit's estimators read a step end as a non-zero value or a
    negative zero (:mod:`prmkit.rl.verl_advantages`), and -0.0 changes no sum."""
    return -0.0 if value == 0.0 else float(value)


@dataclass(frozen=True)
class Paid:
    """What one response earned: step rewards, the token each ends at, its one number and log values."""

    rewards: list[float]
    ends: list[int]
    score: float
    info: dict[str, float]
    outcome: float | None = None


async def pay(
    client: httpx.AsyncClient,
    settings: Settings,
    problem: str,
    response: str,
    response_ids: Sequence[int] | None = None,
    tokenizer: Any = None,
    ground_truth: str | None = None,
) -> Paid:
    """Step rewards of one decoded response (token ends when ids and tokenizer are given), and its
    outcome where ``ground_truth`` is given (:func:`outcome_of`).

    Paid the unfinished reward (one step at its last character; 0.0 where ``unfinished_reward`` is
    none, for the last two): a response with no final answer, one with more steps up to its answer
    step than the server scores (``prm_overlong``), one the server refuses (``prm_refused``).
    """
    parsed = parse_steps(response, settings)
    finished = parsed.answer is not None
    overlong = bool(parsed.steps) and len(parsed.steps) > await max_steps(client, settings)
    unpaid = (not finished and settings.unfinished_reward is not None) or overlong
    sent = bool(parsed.steps) and not unpaid
    if sent and not problem:
        note_empty_problem("response")
    scores, aggregate, refused = [], 0.0, False
    if sent:
        try:
            scores, aggregate = await score_steps(client, settings, problem, parsed.steps)
        except Refused as err:
            note_refused(str(err))
            refused = unpaid = True
    n_ids = len(response_ids or [])
    if unpaid:
        score = float(settings.unfinished_reward or 0.0)
        rewards, char_ends = [score], [len(response.rstrip())]
    else:
        score, rewards, char_ends = aggregate, scores, parsed.char_ends[: len(scores)]
    ends = step_token_ends(response_ids, tokenizer, char_ends) if n_ids and tokenizer is not None else []
    info = {
        "prm_score": score,
        "prm_num_steps": float(len(parsed.steps)),
        "prm_min_step": min(scores) if scores else 0.0,
        "prm_finished": float(finished),
        "prm_empty_problem": float(sent and not problem),
        "prm_overlong": float(overlong),
        "prm_refused": float(refused),
    }
    outcome = None
    if ground_truth is not None:
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(None, outcome_of, ground_truth, parsed.answer)
    return Paid(rewards, ends, score, info, outcome)


def outcome_of(ground_truth: str, answer: str | None) -> float | None:
    """1.0 when ``answer`` equals ``ground_truth`` (:func:`prmkit.core.answers.check_answer`), 0.0 when it
    does not or when the response states no final answer, None when it could not be parsed (kept apart
    from "wrong": the credit forms read None as unknown)."""
    from prmkit.core.answers import check_answer  # math-verify loads only where outcomes are read

    if answer is None or not answer.strip():
        return 0.0
    verdict = check_answer(ground_truth, answer)
    return None if verdict is None else float(verdict)


async def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's ``custom_reward_function`` (``reward.custom_reward_function.{path,name,reward_kwargs}``):
    ``{"score", "prm_score", "prm_num_steps", "prm_min_step", "prm_finished", "prm_empty_problem",
    "prm_overlong", "prm_refused"}``, the same keys for every sample; ``score`` is the aggregate (0.0
    written as -0.0). ``reward_kwargs`` are :class:`Settings` fields; verl's own extra arguments
    (``reward_router_address``, ``reward_model_tokenizer``) are ignored. The problem is
    ``extra_info.question``/``problem`` (verl gives a custom function no prompt): MATH rows need one
    added, or use the reward manager, which reads ``raw_prompt``.
    """
    kwargs.pop("reward_router_address", None), kwargs.pop("reward_model_tokenizer", None)
    settings = settings_from(kwargs)
    async with httpx.AsyncClient(timeout=settings.timeout_s) as client:
        paid = await pay(client, settings, problem_of(extra_info), solution_str)
    return {"score": signed_zero(paid.score), **paid.info}


# ---- the verl reward manager (built on first use, so this file imports without verl) ----


class DenseScore(float):
    """A response's reward for verl: the float is its aggregate (what verl's streaming path puts at the
    last token), and ``prmkit_steps`` holds ``((token_end, reward), ...)`` for ``assemble_rm_scores``.

    ``assemble_rm_scores`` finds the steps by attribute, not by class: verl loads this file by path
    without a ``sys.modules`` entry, so the Ray driver's copy of this class is not the worker's.
    """

    prmkit_steps: tuple[tuple[int, float], ...]
    prmkit_outcome: tuple[float | None, ...]
    """``(outcome,)`` where the estimator reads the outcome channel (the float then carries it too,
    :func:`prmkit.rl.verl_advantages.with_outcome`, for verl's streaming path); ``()`` where it does not."""

    def __new__(
        cls, value: float, steps: Sequence[tuple[int, float]], outcome: tuple[float | None, ...] = ()
    ) -> "DenseScore":
        value = with_outcome(signed_zero(value), *outcome) if outcome else signed_zero(value)
        obj = super().__new__(cls, value)
        obj.prmkit_steps = tuple((int(t), float(r)) for t, r in steps)
        obj.prmkit_outcome = tuple(outcome)
        return obj

    def __reduce__(self):  # Ray pickles results between processes (with_outcome is idempotent)
        return (DenseScore, (float(self), self.prmkit_steps, self.prmkit_outcome))


def step_row(steps: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Token -> reward of one response's steps, 0.0 written as -0.0; steps ending in one token add up
    (the estimator then reads them as one step)."""
    row: dict[int, float] = {}
    for t, r in steps:
        row[t] = row.get(t, 0.0) + r
    return {t: signed_zero(r) for t, r in row.items()}


def dense_row(score: float, last: int) -> dict[int, float] | None:
    """Token -> reward that ``assemble_rm_scores`` writes for one response whose last valid token is
    ``last``: a :class:`DenseScore`'s steps (:func:`step_row`), 0.0 at ``last`` where no step ends there,
    and the outcome channel at ``last`` where the score carries one; None for a plain float (verl's own
    rule then: the float at ``last``)."""
    steps = getattr(score, "prmkit_steps", None)
    if steps is None:
        return None
    row = {last: 0.0, **step_row(steps)}
    if outcome := getattr(score, "prmkit_outcome", ()):
        row[last] = with_outcome(row[last], *outcome)
    return row


def _options(config: Any) -> Mapping[str, Any]:
    options = _section(config, "reward", "reward_kwargs", "prmkit")
    return {str(k): v for k, v in dict(options).items()}


def _build_manager() -> type:
    import torch
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

    class PrmkitRewardManager(RewardManagerBase):
        """verl 0.9.1 reward-loop manager: a response's aggregate, or each step's PRM score at the token
        where the step ends where the estimator reads step rewards
        (:func:`prmkit.rl.verl_advantages.dense_placement`).

        Built by verl as ``cls(config=, tokenizer=, compute_score=, reward_router_address=,
        reward_model_tokenizer=)`` (``verl.trainer.ppo.reward.load_reward_manager``); settings come from
        ``config.reward.reward_kwargs.prmkit`` and the environment (:class:`Settings`); the placement
        from ``config.algorithm`` and ``config.reward.reward_model``. Settings verl would run wrongly are
        refused here, at construction (:func:`prmkit.rl.verl_advantages.check_reward_path`,
        :func:`~prmkit.rl.verl_advantages.dense_placement`).
        """

        def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None, **kwargs):
            super().__init__(config, tokenizer, compute_score)
            self.settings = settings_from(_options(config))
            check_reward_path(_section(config, "reward"))
            self.dense = dense_placement(
                self.settings.dense, _section(config, "algorithm"), _section(config, "reward", "reward_model")
            )
            self.outcome = reads_outcome(_section(config, "algorithm"))  # write the outcome channel
            self._clients: dict[int, httpx.AsyncClient] = {}
            self.questions: dict[str, dict[str, str]] | None = None  # the data files' rows (dataset_rows)

        def _client(self) -> httpx.AsyncClient:
            loop = id(asyncio.get_running_loop())
            if loop not in self._clients:
                self._clients[loop] = httpx.AsyncClient(timeout=self.settings.timeout_s)
            return self._clients[loop]

        async def run_single(self, data) -> dict:
            item = data[-1:][0]  # a multi-sequence sample is paid on its last sequence, as verl's naive
            response_ids = item.batch["responses"]
            valid = int(item.batch["attention_mask"][-response_ids.shape[-1] :].sum())
            ids = response_ids[:valid].tolist()
            extras = item.non_tensor_batch
            problem = problem_of(row_info(extras, self), extras.get("raw_prompt"))
            if not problem:  # no verl row fields: the prompt decoded with its markers, then its user turn
                prompts = item.batch["prompts"]
                kept = prompts[item.batch["attention_mask"][: prompts.shape[-1]].bool()].tolist()
                text = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: self.tokenizer.decode(kept, skip_special_tokens=False)
                )
                problem = template_user_turn(text)
            response = await asyncio.get_running_loop().run_in_executor(
                None, lambda: self.tokenizer.decode(ids, skip_special_tokens=True)
            )
            gold = row_answer(extras, self) if self.outcome else None
            paid = await pay(self._client(), self.settings, problem, response, ids, self.tokenizer, gold)
            channel = (paid.outcome,) if self.outcome else ()
            if self.dense and ids:
                score: float = DenseScore(
                    paid.score, list(zip(paid.ends, paid.rewards, strict=True)), channel
                )
            else:
                score = (
                    with_outcome(signed_zero(paid.score), *channel) if channel else signed_zero(paid.score)
                )
            return {"reward_score": score, "reward_extra_info": paid.info}

        @classmethod
        def assemble_rm_scores(cls, data, scores: list[float]) -> torch.Tensor:
            """``rm_scores`` of a batch: a :class:`DenseScore`'s steps at their end tokens, a plain float
            at the last valid token (verl's own rule); zeros written as -0.0 (:func:`signed_zero`); the
            outcome channel, where written, at the last valid token (over the step reward there)."""
            rm_scores = super().assemble_rm_scores(data, [float(s) for s in scores])
            prompt_length = data.batch["prompts"].size(1)
            valid = data.batch["attention_mask"][:, prompt_length:].sum(dim=1)
            for i, score in enumerate(scores):
                for t, r in (dense_row(score, int(valid[i]) - 1) or {}).items():
                    rm_scores[i, t] = r
            return rm_scores

    return PrmkitRewardManager


_BUILT: dict[str, type] = {}


def register() -> type:
    """Build the manager and register it as ``prmkit`` in verl's reward-loop registry, and prmkit's
    advantage estimators in verl's (idempotent: verl loads a file by path anew for each lookup, and its
    ``register`` functions refuse a second class or function under one name)."""
    if "cls" not in _BUILT:
        _BUILT["cls"] = _build_manager()
    from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER

    REWARD_MANAGER.setdefault("prmkit", _BUILT["cls"])
    register_estimators()
    return _BUILT["cls"]


def __getattr__(name: str) -> Any:
    """``PrmkitRewardManager`` (and ``prmkit``) resolve on first access, when verl asks for them."""
    if name in ("PrmkitRewardManager", "prmkit"):
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


try:  # imported inside verl (VERL_USE_EXTERNAL_MODULES, a plugin, or loaded by path): register now
    import verl as _verl  # noqa: F401
except ImportError:
    pass
else:
    register()
