"""``/pooling`` against vLLM 0.33.0's STEP pooling, over real HTTP on loopback with a real checkpoint.

The expected rows are computed here as vLLM's ``StepPool`` does, independently of prmkit: the text
tokenized with the checkpoint's tokenizer (``add_special_tokens=True``; a chat rendered with its chat
template and encoded without special tokens), one transformers forward pass, the rows at every position
holding ``step_tag_id`` (``config.json``'s ``prmkit.tag_id``, what ``--pooler-config`` gets), softmax
over the classes. Requests and responses are validated against vLLM 0.33.0's own models, copied below.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Literal

import httpx
import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict, Field

from prmkit.modeling.template import StepTemplate
from prmkit.scoring import load_scorer
from prmkit.serving.config import ServerConfig
from prmkit.serving.reward_server import create_app
from tests.serving.conftest import run_server

# vLLM 0.33.0 (vllm/entrypoints/pooling/base/protocol.py, .../pooling/protocol.py,
# vllm/entrypoints/serve/engine/protocol.py UsageInfo): the fields of the two request forms and the
# response. extra="forbid" here so a request the tests send, or a response prmkit writes, with a field
# vLLM does not have fails.


class _Vllm(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _BasicRequest(_Vllm):
    model: str | None = None
    user: str | None = None
    truncate_prompt_tokens: int | None = Field(default=None, ge=-1)
    padding: Literal["max_length", "do_not_pad"] | None = None
    truncation_side: Literal["left", "right"] | None = None
    request_id: str | None = None
    priority: int = 0
    mm_processor_kwargs: dict[str, Any] | None = None
    cache_salt: str | None = Field(default=None, min_length=1, max_length=1024)
    encoding_format: Literal["float", "base64", "bytes", "bytes_only"] = "float"
    embed_dtype: Literal["float32", "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2"] = "float32"
    endianness: Literal["native", "big", "little"] = "native"
    dimensions: int | None = None
    use_activation: bool | None = None
    task: (
        Literal["embed", "classify", "token_embed", "token_classify", "plugin", "embed&token_classify"] | None
    ) = None


class VllmPoolingCompletionRequest(_BasicRequest):
    input: list[int] | list[list[int]] | str | list[str]
    add_special_tokens: bool = True


class VllmPoolingChatRequest(_BasicRequest):
    messages: list[dict[str, Any]]
    add_generation_prompt: bool = False
    continue_final_message: bool = False
    add_special_tokens: bool = False
    chat_template: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    media_io_kwargs: dict[str, dict[str, Any]] | None = None


class VllmUsageInfo(_Vllm):
    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: int | None = 0
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None


class VllmPoolingResponseData(_Vllm):
    index: int
    object: str = "pooling"
    data: list[list[float]] | list[float] | str


class VllmPoolingResponse(_Vllm):
    id: str
    object: str = "list"
    created: int
    model: str
    data: list[VllmPoolingResponseData]
    usage: VllmUsageInfo


CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TAG = "<|step|>"
PROBLEM = "Ann has 3 pens. She buys 1 more."
STEPS = ["3 + 1 = 4 pens.", "The answer is 4."]


@pytest.fixture(scope="module")
def checkpoint(random_prm: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The random PRM with a chat template added to its tokenizer (a Qwen-style PRM has one)."""
    from transformers import AutoTokenizer

    path = tmp_path_factory.mktemp("chat-prm") / "prm"
    shutil.copytree(random_prm, path)
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(path))
    return str(path)


class StepPool:
    """vLLM's STEP pooling, computed with transformers alone on the ids vLLM would make."""

    def __init__(self, path: str):
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        torch.set_num_threads(1)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForTokenClassification.from_pretrained(path).eval()
        self.tag_id = json.loads((Path(path) / "config.json").read_text())["prmkit"]["tag_id"]

    def text_ids(self, text: str) -> list[int]:
        return self.tokenizer(text).input_ids

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tokenize=False)
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def rows(self, ids: list[int], activation: bool = True) -> list[list[float]]:
        import torch

        with torch.no_grad():
            logits = self.model(torch.tensor([ids])).logits[0]
        rows = logits[torch.tensor(ids) == self.tag_id].float()
        return (rows.softmax(-1) if activation else rows).tolist()


@pytest.fixture(scope="module")
def served(checkpoint: str):
    """(base URL, reference pooler) for the checkpoint served as ``prmkit serve`` does on a CPU."""
    scorer = load_scorer(checkpoint, batch_tokens=1024)
    with run_server(create_app(scorer, ServerConfig(max_wait_ms=20))) as url:
        yield url, StepPool(checkpoint)


def _pool(url: str, body: dict[str, Any]) -> VllmPoolingResponse:
    form = VllmPoolingChatRequest if "messages" in body else VllmPoolingCompletionRequest
    form.model_validate(body)  # the request is one vLLM 0.33.0 takes
    r = httpx.post(f"{url}/pooling", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return VllmPoolingResponse.model_validate(r.json())


def _close(got: Any, want: list[list[float]]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, abs=2e-6)


LAYOUTS = {
    "prmkit template": StepTemplate().text(PROBLEM, STEPS),
    "first step on the problem's line": f"{PROBLEM} {STEPS[0]}{TAG}\n{STEPS[1]}{TAG}\n",
    "two tags in a row": f"{PROBLEM}\n{STEPS[0]}{TAG}{TAG}\n{STEPS[1]}{TAG}",
    "no newline after the tags": f"{PROBLEM}\n{STEPS[0]}{TAG}{STEPS[1]}{TAG}",
    "text after the last tag": f"{PROBLEM}\n{STEPS[0]}{TAG}\n{STEPS[1]}",
    "no tag": f"{PROBLEM}\n{STEPS[0]}",
}


def test_text_layouts_equal_step_pooling(served) -> None:
    url, ref = served
    texts = list(LAYOUTS.values())
    body = _pool(url, {"model": "prm", "input": texts, "task": "token_classify"})
    assert [item.index for item in body.data] == list(range(len(texts)))
    for item, text in zip(body.data, texts, strict=True):
        _close(item.data, ref.rows(ref.text_ids(text)))
    assert body.data[-1].data == []  # no tag, no row (vLLM's STEP pooling)
    assert len(body.data[2].data) == 3  # two tags in a row: two rows
    tokens = sum(len(ref.text_ids(t)) for t in texts)
    assert (body.usage.prompt_tokens, body.usage.total_tokens) == (tokens, tokens)
    # prmkit's own layout still equals /score (the same ids, read at the same tags)
    (scores,) = httpx.post(f"{url}/score", json={"traces": [{"problem": PROBLEM, "steps": STEPS}]}).json()[
        "results"
    ]
    assert [row[1] for row in body.data[0].data] == pytest.approx(scores["step_scores"], abs=2e-6)


def test_chat_messages_and_token_ids(served) -> None:
    url, ref = served
    messages = [
        {"role": "user", "content": PROBLEM},
        {"role": "assistant", "content": "".join(f"{s}{TAG}\n" for s in STEPS)},
    ]
    ids = ref.chat_ids(messages)
    want = ref.rows(ids)
    assert len(want) == 2
    body = _pool(url, {"messages": messages, "task": "token_classify"})
    _close(body.data[0].data, want)
    assert body.usage.prompt_tokens == len(ids)
    parts = [{"role": "user", "content": [{"type": "text", "text": PROBLEM}]}, messages[1]]
    _close(_pool(url, {"messages": parts}).data[0].data, want)  # text parts read as the string

    # token ids as sent, with layouts no text rendering gives: a tag right after BOS, tags only
    bos = ref.tokenizer.bos_token_id
    odd = [bos, ref.tag_id, *ref.text_ids(STEPS[0])[1:], ref.tag_id, ref.tag_id]
    only_tags = [ref.tag_id] * 3
    one = _pool(url, {"input": ids})
    _close(one.data[0].data, want)
    many = _pool(url, {"input": [odd, only_tags, ids]})
    for item, row in zip(many.data, [odd, only_tags, ids], strict=True):
        _close(item.data, ref.rows(row))
    assert many.usage.prompt_tokens == len(odd) + 3 + len(ids)

    raw = _pool(url, {"input": [odd], "use_activation": False})  # vLLM returns the logits
    _close(raw.data[0].data, ref.rows(odd, activation=False))


def test_base64_is_vllm_tensor2binary(served) -> None:
    url, ref = served
    text = LAYOUTS["two tags in a row"]
    want = np.array(ref.rows(ref.text_ids(text)), dtype=np.float32)
    body = _pool(url, {"input": text, "encoding_format": "base64"})
    got = np.frombuffer(base64.b64decode(body.data[0].data), dtype=np.float32).reshape(want.shape)
    np.testing.assert_allclose(got, want, atol=2e-6)
    other = "little" if sys.byteorder == "big" else "big"
    body = _pool(
        url, {"input": text, "encoding_format": "base64", "embed_dtype": "float16", "endianness": other}
    )
    half = np.frombuffer(
        base64.b64decode(body.data[0].data),
        dtype=np.dtype(np.float16).newbyteorder(">" if other == "big" else "<"),
    )
    np.testing.assert_allclose(
        half.astype(np.float32).reshape(want.shape), want.astype(np.float16), atol=1e-3
    )


def test_pooling_shares_passes_with_score(served) -> None:
    """/pooling jobs and /score traces arriving together go through one batcher; each gets its own answer."""
    url, ref = served
    text = LAYOUTS["first step on the problem's line"]
    want = ref.rows(ref.text_ids(text))
    offline = [row[1] for row in ref.rows(ref.text_ids(StepTemplate().text(PROBLEM, STEPS)))]

    async def main() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            calls = []
            for k in range(6):
                if k % 2:
                    calls.append(client.post("/pooling", json={"input": text}))
                else:
                    calls.append(
                        client.post("/score", json={"traces": [{"problem": PROBLEM, "steps": STEPS}]})
                    )
            return await asyncio.gather(*calls)

    for k, r in enumerate(asyncio.run(main())):
        assert r.status_code == 200, r.text
        if k % 2:
            _close(VllmPoolingResponse.model_validate(r.json()).data[0].data, want)
        else:
            assert r.json()["results"][0]["step_scores"] == pytest.approx(offline, abs=2e-6)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"input": [[5, 10**6]]}, "token id 1000000 is out of vocabulary"),
        ({"input": [[5, -1]]}, "token id -1 is out of vocabulary"),
        ({"input": [[]]}, "input 0: no tokens"),
        ({"input": []}, "at least one prompt"),
        ({"input": [[5] * 1025]}, "1025 tokens"),
        ({"input": "a", "task": "encode"}, "`encode` task was removed"),
        ({"input": "a", "task": "embed"}, "token_classify only"),
        ({"input": "a", "normalize": True}, "use `use_activation` instead"),
        ({"input": "a", "encoding_format": "bytes"}, "encoding_format: not supported"),
        ({"input": "a", "dimensions": 2}, "dimensions: not supported"),
        ({"input": "a", "messages": [{"role": "user", "content": "a"}]}, "exactly one of 'input'"),
        ({"messages": [{"role": "user", "content": "a"}], "chat_template": "{{ 1 }}"}, "chat_template"),
    ],
)
def test_refusals_name_the_field(served, body: dict[str, Any], words: str) -> None:
    url, _ = served
    r = httpx.post(f"{url}/pooling", json=body, timeout=30)
    assert r.status_code == 422, r.text
    assert words in json.dumps(r.json()["detail"]), r.json()


def test_messages_need_a_chat_template(random_prm: str) -> None:
    with run_server(create_app(load_scorer(random_prm), ServerConfig())) as url:
        r = httpx.post(f"{url}/pooling", json={"messages": [{"role": "user", "content": "a"}]}, timeout=30)
        assert r.status_code == 422 and "has no chat template" in r.json()["detail"]
        r = httpx.post(f"{url}/pooling", json={"input": "x" * 100_001}, timeout=30)
        assert r.status_code == 413 and "--max-trace-chars" in r.json()["detail"]  # before tokenizing


PARTS_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for part in m['content'] %}{{ part['text'] }}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}"
)
"""A template that loops over a message's content parts, as multimodal and tool-aware templates do."""


@pytest.mark.parametrize(
    ("template", "form"),
    [
        (CHAT_TEMPLATE, "string"),
        (PARTS_TEMPLATE, "openai"),
        ("{% for m in messages %}{% for c in m.content %}{{ c.text }}{% endfor %}{% endfor %}", "openai"),
        (  # through a variable set from messages, a slice and a filter
            "{% set rest = messages[1:] %}{% for m in rest %}{% for c in m['content'] | list %}{{ c }}"
            "{% endfor %}{% endfor %}",
            "openai",
        ),
        ("{% for m in messages %}{% for c in other['content'] %}{% endfor %}{% endfor %}", "string"),
        ("{% for m in messages %}", "string"),  # does not compile: vLLM's default
    ],
)
def test_content_format_is_detected_as_vllm_detects_it(template: str, form: str) -> None:
    from prmkit.serving.pooling import content_format

    assert content_format(template) == form


def test_a_template_that_loops_over_parts_gets_the_parts(random_prm: str, tmp_path: Path) -> None:
    """Issue 66, item 3: vLLM hands an ``openai``-format template (one that loops over
    ``message['content']``) the list of text parts, a string content as one part, and lets the template
    join them; prmkit joined them with a newline first, which vLLM does only for ``string`` templates."""
    from transformers import AutoTokenizer

    path = tmp_path / "prm"
    shutil.copytree(random_prm, path)
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    tokenizer.chat_template = PARTS_TEMPLATE
    tokenizer.save_pretrained(str(path))
    ref = StepPool(str(path))
    half = len(PROBLEM) // 2
    messages = [
        {"role": "user", "content": [{"type": "text", "text": t} for t in (PROBLEM[:half], PROBLEM[half:])]},
        {"role": "assistant", "content": [{"type": "text", "text": f"{s}{TAG}\n"} for s in STEPS]},
    ]
    as_parts = ref.chat_ids(messages)  # what vLLM renders: the template gets the parts
    joined = [{"role": m["role"], "content": "\n".join(p["text"] for p in m["content"])} for m in messages]
    assert ref.chat_ids(joined) != as_parts  # the newline rule would render other ids
    string = [{"role": "user", "content": PROBLEM}]
    with run_server(create_app(load_scorer(str(path), batch_tokens=1024), ServerConfig())) as url:
        body = _pool(url, {"messages": messages})
        plain = _pool(url, {"messages": [*string, messages[1]]})
    _close(body.data[0].data, ref.rows(as_parts))
    assert body.usage.prompt_tokens == len(as_parts)
    # a string content reaches an openai-format template as one text part
    want = ref.chat_ids([{"role": "user", "content": [{"type": "text", "text": PROBLEM}]}, messages[1]])
    _close(plain.data[0].data, ref.rows(want))
