"""Where continuations and step verdicts come from: one protocol, several backends.

Contract: a policy implements :class:`prmkit.core.protocols.Policy` (``continue_from``), a judge
implements :class:`prmkit.core.protocols.Judge` (``judge``). Backends plug in by name:

    POLICIES  "world"      -> the embedded world's simulated policy          (world.py)
              "agentworld" -> the agent world's simulated agent              (agentworld.py)
              "hf"         -> a local transformers causal LM                  (hf.py)
              "endpoint"   -> an OpenAI-compatible /v1/completions server      (endpoint.py)
    JUDGES    "world"      -> the embedded world's simulated judge             (world.py)
              "agentworld" -> the agent world's simulated judge              (agentworld.py)
              "endpoint"   -> an OpenAI-compatible /v1/chat/completions critic (endpoint.py, critic.py)

Files (the prompt layout and step/answer parser every text backend shares is ``prmkit.core.steps``): ``http.py``
(client with concurrency cap, retries, timeouts), ``critic.py`` (ProcessBench critic prompt and reader),
``options.py`` (the typed options a command uses to build a policy or judge), ``worlds.py`` (``WORLDS``:
each embedded world by name, with its generator, policy, judge and gold checker).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prmkit.core.protocols import Judge, Policy
from prmkit.core.registry import Registry

POLICIES: Registry[Callable[..., Policy]] = Registry("policy", entry_points="prmkit.policies")
POLICIES.register("world", "prmkit.policies.world:make_world_policy")
POLICIES.register("agentworld", "prmkit.policies.agentworld:make_agent_policy")
POLICIES.register("hf", "prmkit.policies.hf:HFPolicy")
POLICIES.register("endpoint", "prmkit.policies.endpoint:EndpointPolicy")

JUDGES: Registry[Callable[..., Judge]] = Registry("judge", entry_points="prmkit.judges")
JUDGES.register("world", "prmkit.policies.world:make_world_judge")
JUDGES.register("agentworld", "prmkit.policies.agentworld:make_agent_judge")
JUDGES.register("endpoint", "prmkit.policies.endpoint:EndpointJudge")


def load_policy(name: str, **options: Any) -> Policy:
    """Build the policy backend registered as ``name`` with its own keyword options."""
    return POLICIES.get(name)(**options)


def load_judge(name: str, **options: Any) -> Judge:
    """Build the judge backend registered as ``name`` with its own keyword options."""
    return JUDGES.get(name)(**options)


__all__ = ["JUDGES", "POLICIES", "load_judge", "load_policy"]
