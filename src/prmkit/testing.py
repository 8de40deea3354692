"""Helpers for tests and benchmarks (like ``transformers.testing_utils``); not used by the library itself.

It sits above ``modeling/`` and ``world/`` in the layering and imports them lazily, so importing this
module stays cheap.
"""

from __future__ import annotations

from pathlib import Path


def make_random_prm(
    directory: str | Path, layers: int = 2, width: int = 64, heads: int = 2, head: str = "classifier"
) -> str:
    """Save a randomly initialised prmkit PRM checkpoint in ``directory``; return its path as a string.

    A real model, tokenizer and spec with untrained weights: the tokenizer (vocabulary 300) is trained
    on 20 world problems (seed 0) and one world-policy continuation of each; the weights come from
    ``torch.manual_seed(0)``, so the same arguments always give the same checkpoint. ``layers``,
    ``width`` and ``heads`` size the backbone as :class:`~prmkit.modeling.backbone.TinyConfig` does
    (``prmkit train``'s default is 2 x 128 with 4 heads; ``width`` must be a multiple of ``heads``).
    ``head`` is the head kind (:data:`prmkit.modeling.heads.HEADS`): a token classifier, or a causal LM
    for ``likelihood`` and ``critic``, in the template the head reads.
    """
    import torch

    from prmkit.modeling.backbone import TinyConfig, causal_lm, tiny_config, token_classifier
    from prmkit.modeling.checkpoint import save_checkpoint
    from prmkit.modeling.heads import head as head_kind
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
    config = tiny_config(tokenizer, TinyConfig(layers=layers, width=width, heads=heads))
    kind = head_kind(head)
    model = token_classifier(config, 2) if kind.reads_tag else causal_lm(config)
    template = StepTemplate.named(kind.template) if kind.template else StepTemplate()
    spec = PrmSpec(head=head, template=template, tag_id=template.tag_id(tokenizer))
    save_checkpoint(model, tokenizer, spec, directory)  # weights, tokenizer, config: no cards
    return str(directory)
