#!/usr/bin/env bash
# GRPO on Qwen2.5-Math-1.5B-Instruct through verl 0.9.1, trained on the step rewards of a PRM that
# `prmkit serve` serves: prmkit's reward manager (prmkit.rl.verl_client) pays each response, a prmkit
# estimator (prmkit_<credit form>, prmkit.rl.verl_advantages; `prmkit_min` by default) turns the step
# rewards into token advantages. docs/rl.md ("verl 0.9.1", "Credit forms") says why each key is set.
#
# Step rewards reach verl's estimator only on verl 0.9.1's colocated reward path
# (reward.reward_model.enable=True, no resource pool of its own), the one that calls the manager's
# assemble_rm_scores. verl then starts a reward-model server of its own beside the actor, which prmkit
# never asks (reward.custom_reward_function.path makes verl's reward worker call the manager instead):
# it holds the policy's weights a second time, asleep between steps, with a small KV cache.
#
#   prmkit serve runs/prm --host 127.0.0.1 --port 8000    # in prmkit's environment (any scorer spec)
#   bash recipes/verl-grpo-prm.sh --check                 # in verl's: the settings, checked (seconds, no GPU)
#   bash recipes/verl-grpo-prm.sh [OVERRIDE ...]          # train (8 GPUs; verl 0.9.1 with vllm)
#   bash recipes/verl-grpo-prm.sh --print-overrides       # the overrides, one a line
#
# Environment: POLICY (Qwen/Qwen2.5-Math-1.5B-Instruct), PRM_URL (http://127.0.0.1:8000), DATA (a folder
# with verl's math_dataset.py train/test.parquet; $HOME/data/math), N_GPUS (8), ESTIMATOR (prmkit_min,
# prmkit's earlier min credit, what this recipe has run since issue 36; any prmkit_<credit form> of
# docs/rl.md "Credit forms": prmkit_pure is PURE's code, prmkit_sum pays padding; the outcome forms,
# prmkit_anchor ... prmkit_prime, need reward_model.ground_truth in the data, as verl's math_dataset.py
# writes), PYTHON (python: the verl environment's). The PRM must score the steps it was trained on: add
# +reward.reward_kwargs.prmkit.step_separator=... (newline by default).
# tests/rl/test_verl_recipe.py runs --print-overrides and --check in .venv-verl.
set -euo pipefail

POLICY=${POLICY:-Qwen/Qwen2.5-Math-1.5B-Instruct}
PRM_URL=${PRM_URL:-http://127.0.0.1:8000}
DATA=${DATA:-$HOME/data/math}
N_GPUS=${N_GPUS:-8}
ESTIMATOR=${ESTIMATOR:-prmkit_min}
PYTHON=${PYTHON:-python}
# the client's path without running it (importing it beside verl registers the manager and estimators)
CLIENT=$("$PYTHON" -c 'import importlib.util as u; print(u.find_spec("prmkit.rl.verl_client").origin)')
# verl imports it in every process that imports verl: the manager registers as `prmkit` and the
# estimators as prmkit_<credit form> (several nodes: pass it in ray_kwargs' runtime_env too)
export VERL_USE_EXTERNAL_MODULES=prmkit.rl.verl_client

OVERRIDES=(
  "algorithm.adv_estimator=$ESTIMATOR"
  "algorithm.use_kl_in_reward=False"
  "data.train_files=$DATA/train.parquet"
  "data.val_files=$DATA/test.parquet"
  "data.train_batch_size=128"
  "data.max_prompt_length=1024"
  "data.max_response_length=2048"
  "data.filter_overlong_prompts=True"
  "actor_rollout_ref.model.path=$POLICY"
  "actor_rollout_ref.model.use_remove_padding=True"
  "actor_rollout_ref.model.enable_gradient_checkpointing=True"
  "actor_rollout_ref.actor.optim.lr=1e-6"
  "actor_rollout_ref.actor.ppo_mini_batch_size=64"
  "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8"
  "actor_rollout_ref.actor.use_kl_loss=True"
  "actor_rollout_ref.actor.kl_loss_coef=0.001"
  "actor_rollout_ref.actor.kl_loss_type=low_var_kl"
  "actor_rollout_ref.rollout.name=vllm"
  "actor_rollout_ref.rollout.n=8"
  "actor_rollout_ref.rollout.tensor_model_parallel_size=1"
  "actor_rollout_ref.rollout.gpu_memory_utilization=0.5"
  "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16"
  "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16"
  "reward.reward_manager.name=prmkit"
  "+reward.reward_kwargs.prmkit.url=$PRM_URL"
  "+reward.reward_kwargs.prmkit.unfinished_reward=0.0"
  "reward.num_workers=8"
  "reward.reward_model.enable=True"
  "reward.reward_model.enable_resource_pool=False"
  "reward.reward_model.model_path=$POLICY"
  "reward.reward_model.rollout.name=vllm"
  "reward.reward_model.rollout.tensor_model_parallel_size=1"
  "reward.reward_model.rollout.gpu_memory_utilization=0.05"
  "reward.custom_reward_function.path=$CLIENT"
  "reward.custom_reward_function.name=compute_score"
  "trainer.n_gpus_per_node=$N_GPUS"
  "trainer.nnodes=1"
  "trainer.total_epochs=1"
  "trainer.val_before_train=False"
  "trainer.logger=[console]"
  "trainer.project_name=prmkit"
  "trainer.experiment_name=grpo-prm-qwen2.5-math-1.5b"
)

case "${1:-}" in
  --print-overrides) printf '%s\n' "${OVERRIDES[@]}" ;;
  --check) shift; exec "$PYTHON" -m prmkit.rl.verl_check "${OVERRIDES[@]}" "$@" ;;
  *) exec "$PYTHON" -m verl.trainer.main_ppo "${OVERRIDES[@]}" "$@" ;;
esac
