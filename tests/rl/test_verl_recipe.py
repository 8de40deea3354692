"""recipes/verl-grpo-prm.sh, checked in verl 0.9.1's own config without a GPU (issue 36).

The recipe's overrides (``--print-overrides``) are the ones ``--check`` composes with verl's
``ppo_trainer.yaml`` (``prmkit.rl.verl_check``, in ``.venv-verl``): verl validates them as ``main_ppo``
does, finds prmkit's estimator in its registry and prmkit's manager by name (both registered by
``VERL_USE_EXTERNAL_MODULES``, as the recipe sets it), and the manager accepts the config and places step
rewards on the colocated path. A combination that would pay the sum of step scores is refused there.
The training run itself needs GPUs and vllm and is not run here.

The recipe's own ``--check`` runs once as a user runs it; the estimator variants (``ESTIMATOR=...``)
take the overrides the recipe prints for them and run ``--check``'s module on each in one interpreter
(``verl_check_run.py``): verl's imports take ~8 s each time, a check well under one.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

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


def _clean() -> dict[str, str]:
    """This environment's variables less those that would steer the verl environment's python or prmkit."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PRMKIT_"))}


def recipe(*args: str, url: str, **env: str) -> subprocess.CompletedProcess:
    run_env = {**_clean(), "PYTHON": str(VERL_PYTHON), "PRM_URL": url, "DATA": "/data/math", **env}
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


def checked(variants: dict[str, dict[str, str]], url: str) -> dict[str, dict]:
    """``recipe("--check", url=url, **env)`` of each variant's ``env``, as the recipe execs it
    (``python -m prmkit.rl.verl_check`` of the overrides it prints for that ``env``, the recipe's
    ``VERL_USE_EXTERNAL_MODULES``, the variables ``env`` adds that the recipe does not read), all in one
    interpreter of the verl environment: {variant: {"code": exit code, "report": the printed report}}."""
    checks = []
    for env in variants.values():
        printed = recipe("--print-overrides", url=url, **env)
        assert printed.returncode == 0, printed.stderr
        kept = {k: v for k, v in env.items() if k.startswith("PRMKIT_")}  # the manager reads these
        checks.append({"overrides": printed.stdout.split("\n")[:-1], "env": kept})
    env = {**_clean(), "VERL_USE_EXTERNAL_MODULES": "prmkit.rl.verl_client"}
    proc = subprocess.run(
        [str(VERL_PYTHON), str(Path(__file__).with_name("verl_check_run.py"))],
        input=json.dumps(checks), capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads(proc.stdout.rsplit("=== verl_check_run ===", 1)[1])
    return dict(zip(variants, results, strict=True))


@pytest.fixture(scope="module")
def variants() -> Iterator[dict[str, dict]]:
    """The estimator variants the tests below check, in one verl interpreter, a server answering."""
    with run_server(create_app(HashScorer(), ServerConfig())) as url:
        yield checked(
            {
                "grpo_dense": {"ESTIMATOR": "grpo", "PRMKIT_DENSE": "true"},
                "old_name": {"ESTIMATOR": "prmkit_process_grpo"},
                "pure": {"ESTIMATOR": "prmkit_pure"},
            },
            url,
        )


def test_check_refuses_step_rewards_under_a_summing_estimator(variants) -> None:
    refused = variants["grpo_dense"]
    assert refused["code"] == 1
    (error,) = refused["report"]["errors"]
    assert "algorithm.adv_estimator=grpo sums a response's token rewards" in error
    assert "algorithm.adv_estimator=prmkit_min" in error and "dense=auto" in error


def test_check_names_an_old_estimator_name_and_accepts_pures_code(variants) -> None:
    """``prmkit_process_grpo`` (before issue 60) still runs, as ``prmkit_sum``, and ``--check`` says the
    new name; ``prmkit_pure`` (PURE's code since issue 60) passes verl's checks with no warning."""
    old, pure = variants["old_name"]["report"], variants["pure"]["report"]
    assert variants["old_name"]["code"] == variants["pure"]["code"] == 0
    assert old["errors"] == [] and old["estimator"] == "compute_prmkit_sum_advantage"
    assert old["warnings"] == [
        "algorithm.adv_estimator=prmkit_process_grpo is an old name of prmkit_sum: use that"
    ]
    assert (pure["errors"], pure["warnings"], pure["estimator"]) == ([], [], "compute_prmkit_pure_advantage")
