"""recipes/verl-grpo-prm.sh, checked in verl 0.9.1's own config without a GPU (issue 36).

The recipe's overrides (``--print-overrides``) are the ones ``--check`` composes with verl's
``ppo_trainer.yaml`` (``prmkit.rl.verl_check``, in ``.venv-verl``): verl validates them as ``main_ppo``
does, finds prmkit's estimator in its registry and prmkit's manager by name (both registered by
``VERL_USE_EXTERNAL_MODULES``, as the recipe sets it), and the manager accepts the config and places step
rewards on the colocated path. A combination that would pay the sum of step scores is refused there.
The training run itself needs GPUs and vllm and is not run here.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from prmkit.serving.reward_server import ServerConfig, create_app
from tests.rl.test_verl_loop import ROOT, VERL_PYTHON
from tests.serving.conftest import HashScorer, run_server

RECIPE = ROOT / "recipes" / "verl-grpo-prm.sh"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not VERL_PYTHON.exists(),
        reason="no verl environment: `make verl-env` builds .venv-verl (verl 0.9.1, ~3 minutes)",
    ),
]


def recipe(*args: str, url: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}
    run_env = {**clean, "PYTHON": str(VERL_PYTHON), "PRM_URL": url, "DATA": "/data/math", **env}
    return subprocess.run(
        ["bash", str(RECIPE), *args], capture_output=True, text=True, timeout=300, env=run_env, cwd=ROOT
    )


def report(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout[proc.stdout.index("{") :])


def test_recipe_settings_pass_verls_own_checks() -> None:
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        overrides = recipe("--print-overrides", url=url).stdout.split("\n")[:-1]
        proc = recipe("--check", url=url)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"+reward.reward_kwargs.prmkit.url={url}" in overrides
    assert "algorithm.adv_estimator=prmkit_min" in overrides
    assert "actor_rollout_ref.model.path=Qwen/Qwen2.5-Math-1.5B-Instruct" in overrides
    path = next(o.split("=", 1)[1] for o in overrides if o.startswith("reward.custom_reward_function.path="))
    assert path == str(ROOT / "src" / "prmkit" / "rl" / "verl_client.py")
    got = report(proc)
    assert got["errors"] == [] and got["warnings"] == []
    assert (got["adv_estimator"], got["estimator"]) == ("prmkit_min", "compute_prmkit_min_advantage")
    assert got["manager"].endswith("PrmkitRewardManager") and got["dense"] is True
    assert (got["reward_path"], got["use_kl_in_reward"], got["rollout_n"]) == ("colocated", False, 8)
    assert got["model"] == "Qwen/Qwen2.5-Math-1.5B-Instruct"
    assert got["settings"]["url"] == url and got["settings"]["aggregation"] == "min"
    assert got["server"]["status"] == "ok"


def test_check_refuses_step_rewards_under_a_summing_estimator() -> None:
    proc = recipe("--check", url="http://127.0.0.1:9", ESTIMATOR="grpo", PRMKIT_DENSE="true")
    assert proc.returncode == 1
    (error,) = report(proc)["errors"]
    assert "algorithm.adv_estimator=grpo sums a response's token rewards" in error
    assert "algorithm.adv_estimator=prmkit_min" in error and "dense=auto" in error


def test_check_names_an_old_estimator_name_and_accepts_pures_code() -> None:
    """``prmkit_process_grpo`` (before issue 60) still runs, as ``prmkit_sum``, and ``--check`` says the
    new name; ``prmkit_pure`` (PURE's code since issue 60) passes verl's checks with no warning."""
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        old = report(recipe("--check", url=url, ESTIMATOR="prmkit_process_grpo"))
        pure = report(recipe("--check", url=url, ESTIMATOR="prmkit_pure"))
    assert old["errors"] == [] and old["estimator"] == "compute_prmkit_sum_advantage"
    assert old["warnings"] == [
        "algorithm.adv_estimator=prmkit_process_grpo is an old name of prmkit_sum: use that"
    ]
    assert (pure["errors"], pure["warnings"], pure["estimator"]) == ([], [], "compute_prmkit_pure_advantage")
