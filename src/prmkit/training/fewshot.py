"""``prmkit eval fewshot``: the few-shot curve's run, which trains, so it sits in the training layer above
the evaluation core it feeds (:mod:`prmkit.evaluation.fewshot`: what is measured, and how). Its command
record is made in the CLI (``prmkit.cli.evaluate.FEWSHOT``), above this layer, so the evaluation layer
never names this module.

The copies are the checkpoint fine-tuned on the first ``k`` traces of a pool of the target setting drawn
from another seed (``train_seed``), measured problems dropped, each through :func:`fine_tune_prm` (the one
training entry point, ``train_prm`` continuing from the checkpoint).
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Sequence
from pathlib import Path

from prmkit.core.model import Trace
from prmkit.evaluation.config import FewShotConfig
from prmkit.evaluation.fewshot import Copy, FewShotResult, fewshot_curve, held_apart
from prmkit.evaluation.processbench import load_predictor
from prmkit.training.heads import fine_tune_prm
from prmkit.worlds.registry import World, world


def _copies(c: FewShotConfig, pool: Sequence[Trace], folder: Path) -> list[Copy]:
    """The checkpoint and its fine-tuned copies, one per ``k`` (each on the pool's first ``k`` traces)."""
    load = functools.partial(load_predictor, judge=None, source=None, overlong=c.overlong, load=c.load)
    checkpoint = load(c.model)
    copies = [Copy(0, checkpoint, None, (), c.model)]  # type: ignore[arg-type]
    for k in sorted(set(c.ks) - {0}):
        out = folder / f"k{k}"
        done = fine_tune_prm(c.model, pool[:k], out, label_source=c.label_source, max_steps=c.steps, lr=c.lr,
                         batch_size=c.batch_size, eval_every=c.steps, seed=c.seed, threads=c.threads)  # fmt: skip
        own = done["dev"].get("eval_threshold")
        copies.append(Copy(k, load(str(out)), own, pool[:k], str(out), done["gold_use"]))  # type: ignore[arg-type]
    return copies


def _pool(c: FewShotConfig, w: World, target: Sequence[Trace]) -> list[Trace]:
    """The training pool: the target setting's traces from ``train_seed``, measured problems dropped."""
    policy, generator, split = c.knobs(c.target)
    pool = held_apart(
        w.traces(c.train_problems, c.train_per_problem, c.pool_seed(), split, policy, generator), target
    )
    if len(pool) < max(c.ks):
        raise ValueError(
            f"ks: k = {max(c.ks)} is more than the {len(pool)} pool traces held apart from the measured "
            "problems; raise train_problems"
        )
    if max(c.ks) and not any(s.label(c.label_source) for t in pool for s in t.steps):
        raise ValueError(
            f"label_source: the world's traces carry no {c.label_source!r} labels (they carry gold)"
        )
    return pool


def run_fewshot(config: FewShotConfig) -> FewShotResult:
    """``prmkit eval fewshot``: the curve of the configured checkpoint on its ``target`` setting, the
    copies written under ``out/models/`` (a temporary folder without ``out``), the result to ``out``
    (``fewshot.json``, ``fewshot.png``, with the config). The fields are documented on
    :class:`~prmkit.evaluation.config.FewShotConfig`."""
    c = config
    if not (Path(c.model) / "config.json").is_file():
        raise ValueError(
            f"model: {c.model!r} is not a checkpoint folder; few-shot fine-tunes a `prmkit train prm` output"
        )
    w = world(c.world_of(c.target))  # the target's world: another one when the target crosses worlds
    policy, generator, split = c.knobs(c.target)
    target = w.traces(c.problems, c.per_problem, c.seed, split, policy, generator)  # the matrix's traces
    pool = _pool(c, w, target)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) if c.out is None else Path(c.out) / "models"
        copies = _copies(c, pool, folder)
        result = fewshot_curve(copies, target, c.threshold, name=c.target, resamples=c.bootstrap,
                               confidence=c.confidence, seed=c.seed)  # fmt: skip
    result.params["config"] = c.model_dump(mode="json")
    result.params["train"] = {
        "seed": c.pool_seed(), "split": split, "pool_traces": len(pool), "label_source": c.label_source,
        "held_apart": "another seed; pool problems sharing a measured problem's text dropped",
    }  # fmt: skip
    if c.out is not None:
        result.write(c.out)
    return result
