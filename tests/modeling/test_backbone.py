"""The tiny backbone's layouts: local RoPE layers under a position-free global one, or RoPE everywhere."""

from __future__ import annotations

import pytest
import torch
from pydantic import ValidationError
from transformers import AutoModelForCausalLM

from prmkit.modeling import TinyConfig, build_tokenizer, tiny_config

TEXTS = ["Ann has 36 apples. She gives away 7 apples.", "She gives away 7, so 36 - 7 = 29 apples."] * 20


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(TEXTS, vocab_size=300)


def _model(tok, **size):
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(tiny_config(tok, TinyConfig(width=32, heads=2, **size))).eval()


def _ids(tok):
    return tok(TEXTS[0] + " " + TEXTS[1], return_tensors="pt").input_ids


def test_local_layers_see_only_their_window(tok):
    model, ids = _model(tok, window=4), _ids(tok)
    i = ids.shape[1] - 1

    def local_state(x):
        with torch.no_grad():
            return model(x, output_hidden_states=True).hidden_states[1][0, i]

    def changed(x, pos):
        y = x.clone()
        y[0, pos] = (x[0, pos] + 1) % len(tok)
        return y

    base = local_state(ids)
    assert torch.equal(local_state(changed(ids, i - 4)), base)  # just outside the window
    assert not torch.allclose(local_state(changed(ids, i - 3)), base)  # the window's oldest token


def test_the_global_layer_has_no_position_encoding(tok):
    # With a window of one token the local layer's RoPE cancels (query and key share a position), so a
    # local+nope model cannot tell the order of the tokens before the last; a RoPE model can.
    ids = _ids(tok)
    shuffled = torch.cat([ids[:, :1], ids[:, 1:-1].flip(1), ids[:, -1:]], dim=1)
    with torch.no_grad():
        nope = _model(tok, window=1)
        assert torch.allclose(nope(ids).logits[0, -1], nope(shuffled).logits[0, -1], atol=1e-5)
        rope = _model(tok, positions="rope")
        assert not torch.allclose(rope(ids).logits[0, -1], rope(shuffled).logits[0, -1], atol=1e-3)


def test_layout_survives_a_save(tok, tmp_path):
    model, ids = _model(tok, layers=3), _ids(tok)
    assert model.config.no_rope_layers == [1, 1, 0]
    assert model.config.layer_types == ["sliding_attention", "sliding_attention", "full_attention"]
    model.save_pretrained(tmp_path)
    again = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    with torch.no_grad():
        before = model(ids).logits
        assert torch.equal(again(ids).logits, before)
    assert again.config.no_rope_layers == [1, 1, 0]


def test_one_layer_cannot_be_local_and_global():
    with pytest.raises(ValidationError, match="needs at least 2 layers"):
        TinyConfig(layers=1)
    assert TinyConfig(layers=1, positions="rope").layers == 1
