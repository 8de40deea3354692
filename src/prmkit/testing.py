"""Helpers for tests and benchmarks (like ``transformers.testing_utils``); not used by the library itself.

It sits above ``modeling/`` and ``world/`` in the layering and imports them lazily, so importing this
module stays cheap.
"""

from __future__ import annotations

from pathlib import Path


def make_random_prm(directory: str | Path, layers: int = 2, width: int = 64, heads: int = 2) -> str:
    """Save a randomly initialised prmkit PRM checkpoint in ``directory``; return its path as a string.

    A real model, tokenizer and spec with untrained weights: the tokenizer (vocabulary 300) is trained
    on 20 world problems (seed 0) and one world-policy continuation of each; the weights come from
    ``torch.manual_seed(0)``, so the same arguments always give the same checkpoint. ``layers``,
    ``width`` and ``heads`` size the backbone as :class:`~prmkit.modeling.backbone.TinyConfig` does
    (``prmkit train``'s default is 2 x 128 with 4 heads; ``width`` must be a multiple of ``heads``).
    """
    import torch

    from prmkit.modeling.backbone import TinyConfig, tiny_config, token_classifier
    from prmkit.modeling.checkpoint import save_checkpoint
    from prmkit.modeling.spec import PrmSpec
    from prmkit.modeling.template import StepTemplate
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.worlds.registry import DEFAULT_WORLD, world

    w = world(DEFAULT_WORLD)
    problems = w.generate_problems(20, seed=0)
    texts = [p.text for p in problems]
    for p in problems:
        (cont,) = w.policy(None).continue_from(p, [], n=1, seed=0)
        texts += [s.text for s in cont.steps]
    tokenizer = build_tokenizer(texts, vocab_size=300)
    torch.manual_seed(0)
    model = token_classifier(tiny_config(tokenizer, TinyConfig(layers=layers, width=width, heads=heads)), 2)
    template = StepTemplate()
    spec = PrmSpec(template=template, tag_id=template.tag_id(tokenizer))
    save_checkpoint(model, tokenizer, spec, directory)  # weights, tokenizer, config: no cards
    return str(directory)
