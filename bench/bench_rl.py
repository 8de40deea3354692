"""GRPO steps per second of ``prmkit.rl.train.train_policy`` and where a step's time goes.

One short run (``--steps`` GRPO steps, one thread) with the trainer's parts timed in the same run:
generation (prmkit's sampler as TRL's ``rollout_func``), scoring (the reward functions and the dense
process reward), the monitors (measured separately and left out of the step rate), and the rest of the
step, *update*: TRL's log-probability passes (policy, and the reference model when ``kl_beta > 0``), the
loss, the backward pass and the optimiser. Shares are of the steps' time, so they hold on a busy machine
better than the seconds do.

    OMP_NUM_THREADS=1 python bench/bench_rl.py --policy runs/rl/pi0 [--reward gold_process] [--steps 8]
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections import defaultdict
from typing import Any


def timed(fn: Any, clock: dict[str, float], key: str) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            clock[key] += time.perf_counter() - t0

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", required=True, help="A causal-LM folder (e.g. prmkit pretrain's output).")
    parser.add_argument("--reward", default="gold_process")
    parser.add_argument("--prm", default=None)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    args = parser.parse_args()

    from prmkit.rl import monitors, train
    from prmkit.rl.config import PromptSet, RlConfig

    clock: dict[str, float] = defaultdict(float)
    build = train._trainer

    def instrumented(*a: Any, **kw: Any) -> Any:
        trainer = build(*a, **kw)
        trainer.rollout_func = timed(trainer.rollout_func, clock, "generation")
        trainer.reward_funcs = [timed(f, clock, "scoring") for f in trainer.reward_funcs]
        if getattr(trainer, "process_reward", None) is not None:
            trainer.process_reward.score = timed(trainer.process_reward.score, clock, "scoring")
        trainer.train = timed(trainer.train, clock, "train")
        return trainer

    train._trainer = instrumented
    monitors.MonitorCallback.record = timed(monitors.MonitorCallback.record, clock, "monitors")
    config = RlConfig(
        policy=args.policy, reward=args.reward, prm=args.prm, steps=args.steps, batch=args.batch,
        group_size=args.group, threads=1, monitor_every=args.steps, save_every=args.steps,
        prompts=PromptSet(n=64, monitor_n=8, monitor_samples=2), temperature=0.7,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        train.train_policy(config, out)
    steps_time = clock["train"] - clock["monitors"]
    update = steps_time - clock["generation"] - clock["scoring"]
    print(f"{args.steps} GRPO steps of {args.batch} x {args.group} completions, reward {args.reward}")
    print(f"  steps/s      {args.steps / steps_time:.3f}  ({steps_time / args.steps:.2f} s per step)")
    for name, seconds in (
        ("generation", clock["generation"]),
        ("scoring", clock["scoring"]),
        ("update", update),
    ):
        print(f"  {name:<12} {seconds / steps_time:6.1%}  ({seconds:.1f} s)")
    print(f"  monitors     {clock['monitors']:.1f} s for 2 points (not in the step rate)")


if __name__ == "__main__":
    main()
