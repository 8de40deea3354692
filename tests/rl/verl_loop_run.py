"""Run in the verl 0.9.1 environment (``.venv-verl``) by tests/rl/test_verl_loop.py: verl's own reward loop
builds prmkit's reward manager from a verl config and pays a batch against a prmkit server.

Not a test module (pytest does not collect it; the main environment has no verl). Everything here is
verl's code path, unchanged: hydra composes ``verl/trainer/config/ppo_trainer.yaml`` with the overrides
given; the prompts are ``raw_prompt`` chat messages run through the tokenizer's chat template and padded
by verl's ``AgentLoopWorker._pad_token_ids`` (prompts left, responses right, as its agent loop does);
``RewardLoopWorker`` loads the actor tokenizer with ``verl.utils.hf_tokenizer`` and the manager with
``load_reward_manager``, ``compute_score_batch`` runs ``run_single`` per sample, and
``resolve_reward_manager_cls(config).assemble_rm_scores`` makes ``rm_scores``, which is what
``RewardLoopManager.compute_rm_score`` does with Ray (``"ray": true`` runs ``RewardLoopManager`` itself on
a local Ray cluster, one reward worker actor). Without Ray it also runs verl's streaming path: each
sample's ``reward_score`` goes into an agent-loop output, and verl's ``AgentLoopWorker._postprocess``
(the v0 trainer) and ``AgentLoopOutput.as_dict`` (the v1 trainer, verl's default) write the
``rm_scores`` the trainer reads by default (``reward.reward_model.enable=False``).

With ``"estimators"``, each named estimator turns both kinds of ``rm_scores`` into advantages the way
verl 0.9.1's default (v1) trainer does: ``rm_scores`` cut to each response's length as a jagged tensor
and padded back (``_compute_reward_colocate`` writes them so, ``_compute_advantage`` reads them so; the
TransferQueue store between is not run), ``token_level_rewards = token_level_scores = rm_scores``
(``use_kl_in_reward=False``), then ``verl.trainer.ppo.v1.utils.compute_advantage_for_multi_trajectories``,
which calls ``ray_trainer.compute_advantage`` and the registered estimator, groups from ``uid``.

Input (JSON on stdin): ``{"tokenizer", "overrides": [...], "samples": [{"messages", "response",
"extra_info", "uid"?, "ground_truth"?}], "prompt_length", "response_length", "ray": bool, "estimators": [...]?,
"expect_error": bool?, "out": path}``. Output (JSON at ``out``; verl and Ray print to stdout):
``{"rm_scores", "streamed_rm_scores", "streamed_v1_rm_scores", "v1_colocated_rm_scores" (prmkit's manager:
verl's v1 ``_compute_reward_colocate`` run as is, see :func:`v1_colocated`), "v1_colocated_fields", "signbits", "advantages", "prompt_ids",
"response_ids", "attention_mask", "reward_extra_info", "registered", "estimators_registered", "manager",
"versions"}``, or ``{"error"}`` where building verl's reward worker raised and ``expect_error`` is set.

Several requests, ``{"requests": [...]}``, run one after the other in one interpreter (verl's imports
take seconds each time): each writes its own ``out``, ``{"failed": traceback}`` where it raised, and the
next one still runs.
"""

from __future__ import annotations

import json
import sys
import traceback
from types import SimpleNamespace
from typing import Any


def advantages(rm_scores: Any, response_mask: Any, uids: list[str], name: str, config: Any) -> list:
    """verl's v1 trainer from ``rm_scores`` to ``advantages`` (see the module docstring)."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl import DataProto
    from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

    n, width = rm_scores.shape
    lengths = response_mask.sum(-1).tolist()

    def jagged(t):
        return torch.nested.as_nested_tensor([t[i, : lengths[i]] for i in range(n)], layout=torch.jagged)

    stored = TensorDict(
        {"rm_scores": jagged(rm_scores), "response_mask": jagged(response_mask)}, batch_size=n
    )
    data = DataProto(batch=stored.to_padded_tensor())
    data.batch["token_level_scores"] = data.batch["rm_scores"]
    data.batch["token_level_rewards"] = data.batch["token_level_scores"]
    data.non_tensor_batch["uid"] = np.array(uids, dtype=object)
    out = compute_advantage_for_multi_trajectories(
        data,
        batch_keys=[f"{uid}_{i}_0" for i, uid in enumerate(uids)],
        adv_estimator=name,
        gamma=config.algorithm.gamma,
        lam=config.algorithm.lam,
        num_repeat=config.actor_rollout_ref.rollout.n,
        norm_adv_by_std_in_grpo=config.algorithm.get("norm_adv_by_std_in_grpo", True),
        config=config.algorithm,
    )
    adv = out.batch["advantages"]
    return torch.nn.functional.pad(adv, (0, width - adv.shape[1])).tolist()


def v1_colocated(data: Any, score_batch: Any, manager: Any, tokenizer: Any) -> tuple[Any, list[str]]:
    """``rm_scores`` as verl 0.9.1's v1 trainer makes them on its colocated path: its own
    ``PPOTrainer._compute_reward_colocate`` runs unchanged, with the TransferQueue it reads the rows from
    (``tq.kv_batch_get``: prompts and responses as jagged tensors, ``raw_prompt``) and
    ``RewardLoopManager.compute_rm_score`` stood in for. Returns the scores, cut to each response's length
    and padded back, and the non-tensor fields the trainer handed the reward loop (only ``raw_prompt``:
    no ``extra_info``)."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl import DataProto
    from verl.trainer.ppo.v1 import trainer_base

    n = len(data)
    prompt_len = data.batch["prompts"].shape[1]
    mask = data.batch["attention_mask"]
    rows = {
        "prompts": [data.batch["prompts"][i][mask[i, :prompt_len].bool()] for i in range(n)],
        "responses": [data.batch["responses"][i][mask[i, prompt_len:].bool()] for i in range(n)],
    }
    stored: dict[str, Any] = {
        k: torch.nested.as_nested_tensor(v, layout=torch.jagged) for k, v in rows.items()
    }
    stored["raw_prompt"] = list(data.non_tensor_batch["raw_prompt"])
    written: dict[str, Any] = {}
    handed: list[str] = []

    def compute_rm_score(rm_input):  # RewardLoopManager.compute_rm_score, without Ray
        handed.extend(sorted(rm_input.non_tensor_batch))
        results = score_batch(rm_input)
        scores = manager.assemble_rm_scores(rm_input, [r["reward_score"] for r in results])
        keys = list(results[0]["reward_extra_info"])
        extra = {k: np.array([r["reward_extra_info"][k] for r in results]) for k in keys}
        return DataProto(batch=TensorDict({"rm_scores": scores}, batch_size=n), non_tensor_batch=extra,
                         meta_info={"reward_extra_keys": keys})  # fmt: skip

    def kv_batch_get(keys, partition_id, select_fields):
        return {f: stored[f] for f in select_fields}

    def kv_batch_put(keys, partition_id, fields):
        written.update(fields)

    trainer = SimpleNamespace(
        tokenizer=tokenizer,
        reward_loop_manager=SimpleNamespace(compute_rm_score=compute_rm_score),
        _lengths_to_mask=trainer_base.PPOTrainer._lengths_to_mask,
    )
    real = trainer_base.tq
    trainer_base.tq = SimpleNamespace(kv_batch_get=kv_batch_get, kv_batch_put=kv_batch_put)
    try:
        trainer_base.PPOTrainer._compute_reward_colocate(trainer, _Batch([str(i) for i in range(n)]))
    finally:
        trainer_base.tq = real
    jagged = written["rm_scores"]
    out = torch.zeros(n, data.batch["responses"].shape[1])
    for i in range(n):
        out[i, : jagged[i].shape[0]] = jagged[i]
    return out, handed


class _Batch:
    """A ``KVBatchMeta`` stand-in: its keys, partition and length are all the trainer reads."""

    def __init__(self, keys: list[str]):
        self.keys, self.partition_id = keys, "train"

    def __len__(self) -> int:
        return len(self.keys)


def write_rows(samples: list[dict], path: str) -> None:
    """The samples as a verl dataset file: ``prompt`` (the chat messages), ``extra_info`` and
    ``reward_model`` columns, as verl's preprocessing scripts write them (data.train_files points here)."""
    import pandas as pd

    pd.DataFrame({"prompt": [s["messages"] for s in samples],
                  "extra_info": [s.get("extra_info", {}) for s in samples],
                  "reward_model": [reward_model(s) for s in samples]}).to_parquet(path)  # fmt: skip


def reward_model(sample: dict) -> dict:
    """A row's ``reward_model`` field: the sample's ``ground_truth`` (``"0"`` where it has none)."""
    return {"style": "rule", "ground_truth": sample.get("ground_truth", "0")}


def main() -> None:
    """One request, or each of ``{"requests": [...]}`` in turn (see the module docstring)."""
    given = json.load(sys.stdin)
    if "requests" not in given:
        run(given)
        return
    for request in given["requests"]:
        try:
            run(request)
        except Exception:
            with open(request["out"], "w") as f:
                json.dump({"failed": traceback.format_exc()}, f)


def run(request: dict) -> None:
    """The request's batch through verl's reward loop (and advantages); its result written at ``out``."""
    import numpy as np
    import torch
    import transformers
    import verl
    from hydra import compose, initialize_config_dir
    from tensordict import TensorDict
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopMetrics,
        AgentLoopOutput,
        AgentLoopWorker,
        _InternalAgentLoopOutput,
    )
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY
    from verl.trainer.ppo.reward import resolve_reward_manager_cls
    from verl.utils import hf_tokenizer

    rows = request["out"] + ".rows.parquet"
    write_rows(request["samples"], rows)
    overrides = [*request["overrides"], f"data.train_files={rows}", f"data.val_files={rows}"]
    config_dir = f"{verl.__path__[0]}/trainer/config"
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose(config_name="ppo_trainer", overrides=overrides)

    tokenizer = hf_tokenizer(request["tokenizer"])
    pad = SimpleNamespace(tokenizer=tokenizer)
    prompts, responses, masks = [], [], []
    for sample in request["samples"]:
        rendered = tokenizer.apply_chat_template(
            sample["messages"], add_generation_prompt=True, tokenize=False
        )
        prompt_ids = tokenizer.encode(rendered, add_special_tokens=False)
        response = tokenizer.encode(sample["response"], add_special_tokens=False)
        response_ids = [*response, tokenizer.eos_token_id]  # generation stops at EOS, kept in the response
        p = AgentLoopWorker._pad_token_ids(
            pad,
            prompt_ids,
            max_length=request["prompt_length"],
            padding_side="left",
            return_attention_mask=True,
        )
        r = AgentLoopWorker._pad_token_ids(
            pad,
            response_ids,
            max_length=request["response_length"],
            padding_side="right",
            return_attention_mask=True,
        )
        prompts.append(p["input_ids"]), responses.append(r["input_ids"])
        masks.append(torch.cat([p["attention_mask"], r["attention_mask"]], dim=1))
    n = len(request["samples"])
    batch = TensorDict(
        {
            "prompts": torch.cat(prompts),
            "responses": torch.cat(responses),
            "attention_mask": torch.cat(masks),
            "input_ids": torch.cat([torch.cat(prompts), torch.cat(responses)], dim=1),
        },
        batch_size=n,
    )

    def column(values) -> np.ndarray:
        out = np.empty(n, dtype=object)
        out[:] = values
        return out

    uids = [s.get("uid", str(i)) for i, s in enumerate(request["samples"])]
    non_tensor = {
        "uid": column(uids),
        "data_source": column(["math"] * n),
        "reward_model": column([reward_model(s) for s in request["samples"]]),
        "raw_prompt": column([np.array(s["messages"], dtype=object) for s in request["samples"]]),
        "extra_info": column([s.get("extra_info", {}) for s in request["samples"]]),
    }
    data = DataProto(batch=batch, non_tensor_batch=non_tensor)

    v1_rm_scores = v1_handed = None
    if request.get("ray"):
        import ray
        from verl.experimental.reward_loop import RewardLoopManager

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=True)
        try:
            out = RewardLoopManager(config).compute_rm_score(data)
        finally:
            ray.shutdown()
        rm_scores, extra = (
            out.batch["rm_scores"],
            {k: out.non_tensor_batch[k].tolist() for k in out.meta_info["reward_extra_keys"]},
        )
        manager = resolve_reward_manager_cls(config)
    else:
        try:
            worker = RewardLoopWorker(config)
        except Exception as err:  # a refusal at construction: reported, when the caller expects one
            if not request.get("expect_error"):
                raise
            with open(request["out"], "w") as f:
                json.dump({"error": f"{type(err).__name__}: {err}"}, f)
            return
        results = worker.loop.run_until_complete(worker.compute_score_batch(data))
        manager = resolve_reward_manager_cls(config)
        if manager.__name__ == "PrmkitRewardManager":  # verl's naive one needs data_source, not passed
            v1_rm_scores, v1_handed = v1_colocated(
                data,
                lambda d: worker.loop.run_until_complete(worker.compute_score_batch(d)),
                manager,
                tokenizer,
            )
        rm_scores = manager.assemble_rm_scores(data, [r["reward_score"] for r in results])
        keys = list(results[0]["reward_extra_info"])
        extra = {k: [r["reward_extra_info"][k] for r in results] for k in keys}
        outputs = []
        for i, r in enumerate(results):  # what AgentLoopWorker._compute_score assigns, then _postprocess
            row = {k: batch[k][i : i + 1] for k in ("prompts", "responses", "attention_mask", "input_ids")}
            out = _InternalAgentLoopOutput(
                prompt_ids=row["prompts"],
                response_ids=row["responses"],
                input_ids=row["input_ids"],
                position_ids=torch.zeros_like(row["input_ids"]),
                response_mask=row["attention_mask"][:, request["prompt_length"] :],
                attention_mask=row["attention_mask"],
                metrics=AgentLoopMetrics(),
                extra_fields={},
            )
            out.reward_score = r["reward_score"]
            out.extra_fields["reward_extra_info"] = r["reward_extra_info"]
            outputs.append(out)
        streamed = AgentLoopWorker._postprocess(SimpleNamespace(reward_loop_worker_handles=[]), outputs)
        streamed_rm_scores = streamed.batch["rm_scores"].tolist()
        streamed_v1 = torch.zeros_like(rm_scores)
        for i, r in enumerate(results):  # the v1 trainer's AgentLoopWorkerTQ: one output, unpadded
            n_valid = int(batch["attention_mask"][i, request["prompt_length"] :].sum())
            out = AgentLoopOutput(
                prompt_ids=[1],
                response_ids=batch["responses"][i, :n_valid].tolist(),
                response_mask=[1] * n_valid,
                reward_score=r["reward_score"],
                metrics=AgentLoopMetrics(),
            )
            streamed_v1[i, :n_valid] = out.as_dict()["rm_scores"]
    response_mask = batch["attention_mask"][:, request["prompt_length"] :]
    paths = {"colocated": rm_scores}
    if not request.get("ray"):
        paths |= {"streamed": torch.tensor(streamed_rm_scores), "streamed_v1": streamed_v1}
    computed = {
        name: {path: advantages(t, response_mask, uids, name, config) for path, t in paths.items()}
        for name in request.get("estimators", [])
    }
    with open(request["out"], "w") as f:
        json.dump(
            {
                "rm_scores": rm_scores.tolist(),
                "streamed_rm_scores": None if request.get("ray") else streamed_rm_scores,
                "streamed_v1_rm_scores": None if request.get("ray") else streamed_v1.tolist(),
                "v1_colocated_rm_scores": None if v1_rm_scores is None else v1_rm_scores.tolist(),
                "v1_colocated_fields": v1_handed,
                "signbits": {p: t.signbit().tolist() for p, t in paths.items()},
                "advantages": computed,
                "estimators_registered": sorted(ADV_ESTIMATOR_REGISTRY),
                "prompt_ids": batch["prompts"].tolist(),
                "response_ids": batch["responses"].tolist(),
                "attention_mask": batch["attention_mask"].tolist(),
                "reward_extra_info": extra,
                "registered": sorted(REWARD_MANAGER),
                "manager": f"{manager.__module__}.{manager.__qualname__}",
                "bases": [b.__qualname__ for b in manager.__mro__],
                "versions": {
                    "verl": verl.__version__,
                    "transformers": transformers.__version__,
                    "torch": torch.__version__,
                },
            },
            f,
        )


if __name__ == "__main__":
    main()
