"""Training: tiny LM pretraining, then PRM and ORM heads, on HF Trainer (so ``accelerate launch`` works).

Contract: :func:`pretrain_lm`, :func:`train_prm`, :func:`train_orm` each take data (a trace file or
traces), an output folder and one typed config (:class:`PretrainConfig`, :class:`PrmConfig`,
:class:`OrmConfig`, every field documented once there). Each writes an ordinary HF folder, a
``loss_curve.png`` and ``training_log.jsonl``; the heads also write ``process_card.json``.
Train and dev are split by problem; the heads keep the checkpoint with the best dev first-error F1; a
rerun into the same folder resumes from its last checkpoint.

- ``config.py``    the three configs
- ``data.py``      split by problem, step targets (hard / soft / masked), collators, the data order
- ``arrow.py``     training examples as a memory-mapped Arrow dataset, tokenised once and cached on disk
- ``likelihood.py`` the likelihood head's objective: a step's lowest token probability says if it is right
- ``critic.py``    the critic head's training: a teacher's filtered chains, the LM loss on what it writes
- ``fewshot.py``   ``prmkit eval fewshot``'s run: a PRM fine-tuned on k target traces per point, then measured
- ``metrics.py``   first-error metrics for model selection and learnability curves, per error kind
- ``loop.py``      Trainer subclass: step loss, dev first-error evaluation, time budget, resume, loss curve
- ``heap.py``      CPU training's heap: a step's freed memory kept for the next (glibc), not mapped again
- ``heads.py``     train_prm, train_orm, fine_tune_prm (train_prm continuing from a trained PRM)
- ``memory.py``    LoRA (peft), float32 master weights, gradient checkpointing, saving merged or adapter
- ``pretrain.py``  pretrain_lm
- ``views.py``     the training benchmarks' docs tables (``bench/results/train-*.json``): results views
"""

from prmkit.training.config import OrmConfig, PretrainConfig, PrmConfig
from prmkit.training.heads import fine_tune_prm, train_orm, train_prm
from prmkit.training.pretrain import pretrain_lm

__all__ = [
    "OrmConfig",
    "PretrainConfig",
    "PrmConfig",
    "fine_tune_prm",
    "pretrain_lm",
    "train_orm",
    "train_prm",
]
