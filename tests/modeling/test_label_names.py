"""Class names a checkpoint's config gives: what tools that read ``LABEL_1`` as "correct" see."""

from __future__ import annotations

import torch
from transformers import AutoModelForTokenClassification, pipeline

from prmkit.modeling.spec import read_spec
from prmkit.testing import make_random_prm


def test_a_label_1_reader_gets_the_correct_class(tmp_path) -> None:
    """Hugging Face's ProcessBench script (and any TRL PRMTrainer user) runs
    ``pipeline("token-classification")`` and takes a step as correct when its tag token's ``entity`` is
    ``"LABEL_1"``. With the old names ("correct"/"incorrect") no entity was ever ``LABEL_1``, so every step
    read as wrong. Here every token the pipeline calls ``LABEL_1`` is one prmkit scores above 0.5 on the
    spec's positive class, and the other way round."""
    path = make_random_prm(tmp_path / "prm")
    model = AutoModelForTokenClassification.from_pretrained(path)
    spec = read_spec(model.config)
    assert spec is not None and spec.positive_labels == [1]
    assert model.config.id2label == {0: "LABEL_0", 1: "LABEL_1"}
    text = "Tom has 3 apples.\nHe gets 4 more: 3 + 4 = 7.\nThe answer is 7.\n"
    tagger = pipeline("token-classification", model=path, device="cpu")
    entities = [e["entity"] for e in tagger(text)]
    ids = tagger.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        probs = model(**ids).logits.softmax(-1)[0]
    positive = probs[:, spec.positive_labels].sum(-1)
    special = set(tagger.tokenizer.all_special_ids)
    expected = [
        "LABEL_1" if p > 0.5 else "LABEL_0"
        for tok, p in zip(ids["input_ids"][0].tolist(), positive.tolist(), strict=True)
        if tok not in special
    ]
    assert entities == expected and {"LABEL_0", "LABEL_1"} <= set(entities)
