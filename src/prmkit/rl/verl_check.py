"""``python -m prmkit.rl.verl_check OVERRIDE ...``: what a verl 0.9.1 run paid by prmkit would meet minutes
in, checked in seconds before it (in the verl environment, with the run's overrides and environment).

verl's own ``ppo_trainer.yaml`` is composed with the overrides and validated (``validate_config``: batch
sizes against GPUs, ...) as ``verl.trainer.main_ppo`` does first. Then, as verl's trainer process would: ``import verl`` (which imports ``VERL_USE_EXTERNAL_MODULES``),
the reward manager resolved (``resolve_reward_manager_cls``, which also loads a manager given by path and
so registers prmkit's estimators), the advantage estimator looked up in verl's registry, and the manager
built with the run's config, which refuses what verl would run wrongly
(:func:`prmkit.rl.verl_advantages.dense_placement`, :func:`~prmkit.rl.verl_advantages.check_reward_path`).
No model, tokenizer or GPU is loaded; the PRM server's ``/health`` is asked when it answers.

Prints one JSON object: the estimator and manager found, where the rewards go, the settings, ``errors``
and ``warnings``; the exit status is 1 where ``errors`` is not empty. ``recipes/verl-grpo-prm.sh --check``
runs it with the recipe's overrides.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import httpx

from prmkit.rl.verl_advantages import OLD_NAMES, credit_of, estimator_name, streaming


def compose(overrides: Sequence[str]) -> Any:
    """verl's ``ppo_trainer.yaml`` with ``overrides`` (hydra, as ``main_ppo`` composes it)."""
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=f"{verl.__path__[0]}/trainer/config", version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=list(overrides))


def _health(url: str) -> dict[str, Any] | None:
    try:
        reply = httpx.get(f"{url.rstrip('/')}/health", timeout=5.0)
        return reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def check(overrides: Sequence[str]) -> dict[str, Any]:
    """The report printed by :func:`main` (see the module docstring)."""
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY
    from verl.trainer.ppo.reward import resolve_reward_manager_cls
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    config = compose(overrides)
    errors: list[str] = []
    warnings: list[str] = []
    try:
        validate_config(
            config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
        )
    except Exception as err:  # main_ppo's own first check: the run would stop here
        errors.append(f"verl's validate_config: {type(err).__name__}: {err}")
    name = estimator_name(config.algorithm)
    report: dict[str, Any] = {
        "adv_estimator": name,
        "use_kl_in_reward": bool(config.algorithm.use_kl_in_reward),
        "rollout_n": int(config.actor_rollout_ref.rollout.n),
        "model": config.actor_rollout_ref.model.path,
        "reward_path": "streaming" if streaming(config.reward.reward_model) else "colocated",
    }
    try:
        manager_cls = resolve_reward_manager_cls(config)
        report["manager"] = f"{manager_cls.__module__}.{manager_cls.__qualname__}"
    except Exception as err:  # verl's own lookup failed: the run would fail the same way
        errors.append(f"reward manager: {type(err).__name__}: {err}")
        manager_cls = None
    estimator = ADV_ESTIMATOR_REGISTRY.get(name)
    report["estimator"] = getattr(estimator, "__qualname__", None)
    if estimator is None:
        errors.append(
            f"algorithm.adv_estimator={name} is not in verl's registry: {sorted(ADV_ESTIMATOR_REGISTRY)}"
        )
    if manager_cls is not None:
        try:
            manager = manager_cls(config=config, tokenizer=None, compute_score=None)
        except Exception as err:  # a refusal: the message says what to set
            errors.append(f"reward manager refused the config: {type(err).__name__}: {err}")
        else:
            settings = getattr(manager, "settings", None)
            report["dense"] = getattr(manager, "dense", None)
            report["settings"] = None if settings is None else dict(vars(settings), api_key=None)
            if settings is not None:
                report["server"] = _health(settings.url)
                if report["server"] is None:
                    warnings.append(f"the PRM server {settings.url} does not answer GET /health (yet)")
    if name in OLD_NAMES:
        warnings.append(f"algorithm.adv_estimator={name} is an old name of {OLD_NAMES[name]}: use that")
    if credit_of(name) is not None and report["reward_path"] == "streaming":
        warnings.append(
            f"{name} on verl's streaming reward path sees one step per response (the aggregate); step "
            "rewards need reward.reward_model.enable=True with enable_resource_pool=False"
        )
    return {**report, "errors": errors, "warnings": warnings}


def main(argv: Sequence[str] | None = None) -> int:
    """Print :func:`check`'s report for the overrides in ``argv``; 1 where it holds errors."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    report = check(argv)
    print(json.dumps(report, indent=2, default=str))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
