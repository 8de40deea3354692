"""Where continuations and step verdicts come from: one protocol, several backends.

Contract: a policy implements :class:`prmkit.core.protocols.Policy` (``continue_from``), a judge
implements :class:`prmkit.core.protocols.Judge` (``judge``). Backends plug in by name:

    POLICIES  WORLD        -> each embedded world's simulated policy ("arithmetic", "agent")
              "hf"         -> a local transformers causal LM                  (hf.py)
              "endpoint"   -> an OpenAI-compatible /v1/completions server      (endpoint.py)
    JUDGES    WORLD        -> each embedded world's simulated, noisy judge
              WORLD-teacher -> the same judge writing a verification chain (prmkit.worlds.teacher)
              "endpoint"   -> an OpenAI-compatible /v1/chat/completions critic (endpoint.py, critic.py),
                              or GenPRM's released verifiers asked in their own layout (genprm.py)

The worlds' entries follow from their one record in :data:`prmkit.worlds.registry.WORLDS` (a world
registered there, or by a plugin, is a policy and a judge here under its name).

Files (the prompt layout and step/answer parser every text backend shares is ``prmkit.core.steps``): ``http.py``
(client with concurrency cap, retries, timeouts), ``critic.py`` (ProcessBench critic prompt and reader),
``genprm.py`` (GenPRM's conversation, request chain and P(Yes)
scores, with no code run), ``options.py`` (the typed options a command uses to build a policy or judge).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from prmkit.core.protocols import Judge, Policy
from prmkit.core.registry import Registry
from prmkit.worlds.registry import WORLDS, teacher_name, world_judge, world_policy, world_teacher

POLICIES: Registry[Callable[..., Policy]] = Registry("policy", entry_points="prmkit.policies")
POLICIES.derive(WORLDS, str, lambda name: partial(world_policy, name))
POLICIES.register("hf", "prmkit.policies.hf:HFPolicy")
POLICIES.register("endpoint", "prmkit.policies.endpoint:EndpointPolicy")

JUDGES: Registry[Callable[..., Judge]] = Registry("judge", entry_points="prmkit.judges")
JUDGES.derive(WORLDS, str, lambda name: partial(world_judge, name))
JUDGES.derive(WORLDS, teacher_name, lambda name: partial(world_teacher, name))
JUDGES.register("endpoint", "prmkit.policies.endpoint:EndpointJudge")


def load_policy(name: str, **options: Any) -> Policy:
    """Build the policy backend registered as ``name`` with its own keyword options."""
    factory = POLICIES.get(name)
    _check_required("policy", name, factory, options)
    return factory(**options)


def load_judge(name: str, **options: Any) -> Judge:
    """Build the judge backend registered as ``name`` with its own keyword options."""
    factory = JUDGES.get(name)
    _check_required("judge", name, factory, options)
    return factory(**options)


def _check_required(kind: str, name: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """Refuse in one line a backend built without an option it cannot do without (``--judge endpoint``
    named where a command passes no URL and model), instead of the constructor's ``TypeError``."""
    import inspect

    from prmkit.core.errors import InputError, Issue

    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read
        return
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    missing = [p.name for p in params if p.kind in named and p.default is p.empty and p.name not in options]
    if missing:
        how = (
            f"`prmkit label judge FILE --judge {name} --judge-url URL --judge-model NAME` writes its verdicts as "
            "labels; evaluate those with --source"
            if kind == "judge"
            else f"use a command that builds --policy {name} from its --url and --model, or a world's policy"
        )  # fmt: skip
        raise InputError(
            [Issue(f"--{kind} {name}", None, "options", f"{', '.join(missing)} (what {kind} {name!r} is built with)",
                   "none given: this command builds it from its name alone", kind, how)],
            skippable=False,
        )  # fmt: skip


__all__ = ["JUDGES", "POLICIES", "load_judge", "load_policy"]
