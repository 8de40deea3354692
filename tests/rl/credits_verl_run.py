"""Run in the verl 0.9.1 environment (``.venv-verl``) by tests/rl/test_credits_verl.py: prmkit's credit
estimators through verl's own ``ray_trainer.compute_advantage``.

Not a test module (the main environment has no verl). Input (JSON on stdin): ``{"rewards", "ends",
"lengths", "uids", "width", "estimators": [...], "out"}``. The step rewards are written as prmkit's reward
manager writes them (each at its end token, a 0.0 as -0.0); output: ``{"advantages": {name: rows}}``.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage

    from prmkit.rl import verl_advantages

    request = json.load(sys.stdin)
    verl_advantages.register()
    n, width = len(request["rewards"]), request["width"]
    rewards = torch.zeros(n, width)
    mask = torch.zeros(n, width)
    for i, (row, ends, length) in enumerate(
        zip(request["rewards"], request["ends"], request["lengths"], strict=True)
    ):
        mask[i, :length] = 1
        for r, t in zip(row, ends, strict=True):
            rewards[i, t] = -0.0 if r == 0.0 else r
    config = OmegaConf.create({"use_kl_in_reward": False, "norm_adv_by_std_in_grpo": True})
    out = {}
    for name in request["estimators"]:
        data = DataProto.from_dict(tensors={"token_level_rewards": rewards.clone(), "response_mask": mask})
        data.non_tensor_batch["uid"] = np.array(request["uids"], dtype=object)
        data = compute_advantage(data, adv_estimator=name, config=config)
        out[name] = data.batch["advantages"].tolist()
    with open(request["out"], "w") as f:
        json.dump({"advantages": out}, f)


if __name__ == "__main__":
    main()
