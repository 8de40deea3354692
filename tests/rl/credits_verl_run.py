"""Run in the verl 0.9.1 environment (``.venv-verl``) by tests/rl/test_credits_verl.py: prmkit's credit
estimators through verl's own ``ray_trainer.compute_advantage``, on ``rm_scores`` written by prmkit's
reward manager's own ``assemble_rm_scores`` (verl's ``RewardManagerBase`` underneath).

Not a test module (the main environment has no verl). Input (JSON on stdin): ``{"rewards", "ends",
"lengths", "outcomes", "uids", "width", "estimators": [...], "params"?: {name: {keyword: value}}, "out"}``;
an estimator named in ``params`` gets its keywords as verl's ``algorithm.prmkit`` section, in the
``algorithm`` config composed from ``ppo_trainer.yaml`` with hydra's ``+algorithm.prmkit.KEY=VALUE``
overrides, as ``main_ppo`` would hand it. Each response's scores are what
the manager's ``run_single`` returns: a ``DenseScore`` (steps; the outcome where the estimator reads it)
or, for ``dense: false``, a plain float carrying the outcome. Output: ``{"advantages": {name: rows},
"aggregate": {credit: rows}, "refused": {name: bool}}`` (refused: the outcome estimators on rows written
without the channel).
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

    from prmkit.rl import verl_advantages as va
    from prmkit.rl import verl_client as vc
    from prmkit.rl.verl_check import compose

    request = json.load(sys.stdin)
    manager = vc.register()  # the manager class, and the estimators in verl's registry
    rows = list(
        zip(request["rewards"], request["ends"], request["lengths"], request["outcomes"], strict=True)
    )
    n, width, prompt = len(rows), request["width"], 3
    mask = torch.zeros(n, width)
    for i, (_, _, length, _) in enumerate(rows):
        mask[i, :length] = 1
    batch = DataProto.from_dict(
        tensors={
            "prompts": torch.ones(n, prompt, dtype=torch.long),
            "responses": torch.ones(n, width, dtype=torch.long),
            "attention_mask": torch.cat([torch.ones(n, prompt), mask], dim=1).long(),
        }
    )

    def assembled(channel: bool, dense: bool = True) -> torch.Tensor:
        scores: list[float] = []
        for rewards, ends, _, outcome in rows:
            carried = (outcome,) if channel else ()
            if dense:
                scores.append(vc.DenseScore(min(rewards), list(zip(ends, rewards, strict=True)), carried))
            else:
                scores.append(va.with_outcome(vc.signed_zero(min(rewards)), *carried))
        return manager.assemble_rm_scores(batch, scores)

    config = OmegaConf.create({"use_kl_in_reward": False, "norm_adv_by_std_in_grpo": True})
    params = request.get("params", {})

    def algorithm(name: str):
        """verl's ``algorithm`` section with ``name``'s keywords, composed by hydra as ``main_ppo`` is."""
        if name not in params:
            return config
        overrides = [f"algorithm.adv_estimator={name}", "algorithm.use_kl_in_reward=False"]
        return compose(
            [*overrides, *(f"+algorithm.prmkit.{k}={v}" for k, v in params[name].items())]
        ).algorithm

    def advantages(name: str, rm_scores: torch.Tensor) -> list[list[float]]:
        data = DataProto.from_dict(tensors={"token_level_rewards": rm_scores.clone(), "response_mask": mask})
        data.non_tensor_batch["uid"] = np.array(request["uids"], dtype=object)
        return (
            compute_advantage(data, adv_estimator=name, config=algorithm(name)).batch["advantages"].tolist()
        )

    out: dict = {"advantages": {}, "aggregate": {}, "refused": {}}
    for name in request["estimators"]:
        reads = va.credit_of(name) in va.OUTCOME_CREDITS
        out["advantages"][name] = advantages(name, assembled(channel=reads))
        if reads:
            out["aggregate"][va.credit_of(name)] = advantages(name, assembled(True, dense=False))
            try:
                advantages(name, assembled(channel=False))
            except ValueError as err:
                out["refused"][name] = "carries no outcome" in str(err)
            else:
                out["refused"][name] = False
    with open(request["out"], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
