"""Run by test_resume.py in its own process (which the test may SIGKILL): train a tiny PRM on the tests'
world into ``argv[1]`` with the config ``argv[2]``.

Beside the model it keeps the weights of the run's last optimiser step (``<output>.last.safetensors``):
with dev selection the saved model is the best checkpoint's, which may be older than the kill, and then
comparing it alone would not show whether the resumed steps retraced the uninterrupted ones."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from safetensors.torch import save_file
from transformers import TrainerCallback

from prmkit.training import PrmConfig, loop, train_prm
from tests.training.conftest import world_traces


def last_step_weights(output_dir: Path) -> Path:
    return output_dir.with_name(output_dir.name + ".last.safetensors")


class LastStep(TrainerCallback):
    def __init__(self, path: Path) -> None:
        self.path = path

    def on_step_end(self, args, state, control, model=None, **kw):
        if state.global_step == state.max_steps:
            save_file({k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}, self.path)


def keeping_last_step(make_trainer: Any, output_dir: Path) -> Any:
    """``loop.make_trainer`` whose trainers save their last step's weights (:func:`last_step_weights`)."""

    def make(*args: Any, **kwargs: Any) -> Any:
        trainer = make_trainer(*args, **kwargs)
        trainer.add_callback(LastStep(last_step_weights(output_dir)))
        return trainer

    return make


if __name__ == "__main__":
    out = Path(sys.argv[1])
    loop.make_trainer = keeping_last_step(loop.make_trainer, out)
    train_prm(world_traces(30, 4, seed=0), out, PrmConfig.model_validate_json(sys.argv[2]))
