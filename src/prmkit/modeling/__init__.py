"""Modeling: PRM and ORM heads on any Hugging Face backbone, and the step-tag layout they read.

Contract: a step-scoring model is an ordinary ``*ForTokenClassification`` checkpoint whose
``config.json`` carries a ``prmkit`` block (:class:`PrmSpec`: template, tag id, positive classes,
aggregation), so it loads with ``AutoModelForTokenClassification`` and serves on vLLM without prmkit.

- ``tokenizer.py``  byte-level BPE built on the data, digits split one by one, the ``<|step|>`` tag
- ``template.py``   StepTemplate and encode_trace: token ids + one read position per step
- ``backbone.py``   tiny config from scratch (local RoPE + global NoPE), or any local folder, same code path
- ``spec.py``       PrmSpec: what a checkpoint means, stored in config.json
- ``heads.py``      HEADS: the head kinds (classifier, likelihood, critic): auto class, template, convention,
                    training objective, model-card usage
- ``critic.py``     the critic head's layout: each step followed by the check and verdict it writes
- ``checkpoint.py`` save a model + tokenizer + spec as one HF folder (``prmkit.cards`` adds the cards)
- ``loading.py``    LoadOptions (dtype, device map, attention) and load_exact: every weight as saved, or refused
- ``released.py``   prmkit's own classes for released PRM architectures (Qwen2.5-Math-PRM, Skywork-PRM) and
                    the implicit PRM's pair of LMs: no checkpoint code runs
"""

from prmkit.modeling.backbone import TinyConfig, causal_lm, load_tokenizer, tiny_config, token_classifier
from prmkit.modeling.spec import PrmSpec, read_spec, write_spec
from prmkit.modeling.template import SEPARATORS, Encoded, StepTemplate, encode_trace, encode_traces
from prmkit.modeling.tokenizer import STEP_TAG, build_tokenizer

__all__ = [
    "SEPARATORS",
    "STEP_TAG",
    "Encoded",
    "PrmSpec",
    "StepTemplate",
    "TinyConfig",
    "build_tokenizer",
    "causal_lm",
    "encode_trace",
    "encode_traces",
    "load_tokenizer",
    "read_spec",
    "tiny_config",
    "token_classifier",
    "write_spec",
]
