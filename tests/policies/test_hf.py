"""The local Hugging Face backend, with a tiny causal LM and a tokenizer built here (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prmkit.core.model import Problem, Step, Trace
from prmkit.core.steps import StepFormat
from prmkit.labeling.mc import label_mc
from prmkit.policies import load_policy

pytestmark = pytest.mark.slow  # imports torch + transformers and trains for ~2 s

P = Problem(id="p", text="Ann has 3 apples. She gets 4 more. How many?", answer="7")
SOLUTION = "She gets 4 more, so 3 + 4 = 7 apples.\nThe answer is 7.\n"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    """A 1-layer GPT-2 with a byte-level BPE tokenizer, overfit in a second on one solution."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    text = P.text + "\n" + SOLUTION
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        [text] * 4,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<pad>", "<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=128,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    model = GPT2LMHeadModel(config)
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: threads only fight over the shared cores
    try:
        for _ in range(100):
            loss = model(input_ids=ids, labels=ids).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
    assert loss.item() < 0.1, loss.item()
    path = tmp_path_factory.mktemp("tiny-lm")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_hf_policy_continues_stops_and_repeats_with_a_seed(tiny_lm):
    policy = load_policy(
        "hf", model=str(tiny_lm), temperature=0.3, max_new_tokens=40, step_format=StepFormat()
    )
    conts = policy.continue_from(P, [], 3, seed=0)
    assert len(conts) == 3
    assert all(c.final_answer == "7" and c.finished for c in conts), [c.model_dump() for c in conts]
    assert [s.text for s in conts[0].steps] == SOLUTION.strip().split("\n")
    assert conts == policy.continue_from(P, [], 3, seed=0)
    one = policy.continue_from(P, [], 2, seed=1, max_steps=1)
    assert all(len(c.steps) == 1 and not c.finished for c in one)
    assert all(c.num_tokens and c.num_tokens < 40 for c in conts)  # stopped at the answer, not the limit
    settings = policy.settings()
    assert (settings["model"], settings["temperature"], settings["max_new_tokens"]) == (tiny_lm.name, 0.3, 40)


def test_mc_labels_with_the_hf_policy(tiny_lm):
    policy = load_policy("hf", model=str(tiny_lm), temperature=0.3, max_new_tokens=40)
    trace = Trace(
        id="t",
        problem=P,
        steps=[Step(text="She gets 4 more, so 3 + 4 = 7 apples."), Step(text="The answer is 7.")],
        final_answer="7",
    )
    labelled, summary = label_mc([trace], policy, rollouts=3, seed=0)
    assert summary["rollouts"] == 3 and summary["correct"] + summary["wrong"] + summary["no_answer"] == 3
    assert labelled[0].ratings("mc_hard") == [1, 1]


def test_cached_sampler_matches_full_forwards_as_rows_finish() -> None:
    """The KV-cached loop (prompt once, cache copied to n rows, finished rows dropped) draws what a
    loop re-running the whole sequence every token draws, on the world's local+nope (sliding window)
    layout; the stop rule decodes only at separator tokens."""
    import torch
    from transformers import AutoModelForCausalLM

    from prmkit.modeling.backbone import TinyConfig, tiny_config
    from prmkit.modeling.tokenizer import build_tokenizer
    from prmkit.policies.hf import StepStop, _draw, sample_continuations, separator_token_ids

    tok = build_tokenizer([P.text, SOLUTION], vocab_size=300)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(
        tiny_config(tok, TinyConfig(layers=2, width=32, heads=2, window=4))
    )
    model.eval()
    prompt = tok(P.text + "\n")["input_ids"]
    lengths = {0: 3, 1: 9, 2: 30}  # rows stop after these many tokens

    def stop(row: int, ids: list[int]) -> bool:
        return len(ids) >= lengths[row]

    got = sample_continuations(model, prompt, 3, 30, temperature=1.0, seed=7, stop=stop)
    assert [len(r) for r in got] == [3, 9, 30]
    generator = torch.Generator().manual_seed(7)
    want: list[list[int]] = [[], [], []]
    alive = [0, 1, 2]
    with torch.inference_mode():
        while alive:
            logits = torch.cat(
                [model(input_ids=torch.tensor([prompt + want[r]])).logits[:, -1] for r in alive]
            )
            for r, t in zip(alive, _draw(logits, 1.0, 1.0, generator).tolist(), strict=True):
                want[r].append(t)
            alive = [r for r in alive if not stop(r, want[r])]
    assert got == want

    separators = separator_token_ids(tok, "\n")
    calls: list[int] = []
    decode = tok.decode
    tok.decode = lambda ids, **kw: calls.append(len(ids)) or decode(ids, **kw)  # type: ignore[method-assign]
    rule = StepStop(tok, StepFormat(), None, separators)
    ids = tok(SOLUTION, add_special_tokens=False)["input_ids"]
    stopped = [rule(0, ids[: j + 1]) for j in range(len(ids))]
    assert len(calls) == sum(t in separators for t in ids) == 2  # one decode per separator token
    assert stopped.index(True) == len(ids) - 1  # at the newline closing "The answer is 7."


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% if not loop.last %}<eos>{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<eos><|assistant|>{% endif %}"
)
"""A ChatML-like template: each message ends with <eos> except an open last one."""


def test_chat_mode_continues_the_assistants_message_under_the_chat_template(tiny_lm):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm))
    tokenizer.chat_template = CHAT_TEMPLATE
    plain = load_policy("hf", model=str(tiny_lm))
    with pytest.raises(ValueError, match="has no chat template"):
        load_policy("hf", model=plain.model, tokenizer=AutoTokenizer.from_pretrained(str(tiny_lm)), chat=True)
    chat = load_policy("hf", model=plain.model, tokenizer=tokenizer, chat=True, max_new_tokens=8)
    steps = [Step(text="She gets 4 more, so 3 + 4 = 7 apples.")]
    text = tokenizer.decode(chat.prompt_ids(P, steps))
    assert text == f"<|user|>{P.text}<eos><|assistant|>She gets 4 more, so 3 + 4 = 7 apples.\n"
    opened = tokenizer.decode(chat.prompt_ids(P, []))
    assert opened == f"<|user|>{P.text}<eos><|assistant|>"
    assert all(len(c.steps) <= 1 for c in chat.continue_from(P, steps, 2, seed=0))


def test_a_continuation_cut_at_max_new_tokens_is_truncated(tiny_lm):
    cut = load_policy("hf", model=str(tiny_lm), temperature=0.3, max_new_tokens=3)
    conts = cut.continue_from(P, [], 4, seed=0)
    assert all(c.truncated and not c.finished for c in conts)
    whole = load_policy("hf", model=str(tiny_lm), temperature=0.3, max_new_tokens=40)
    assert not any(c.truncated for c in whole.continue_from(P, [], 4, seed=0) if c.finished)
