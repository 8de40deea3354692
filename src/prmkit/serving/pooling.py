"""``/pooling`` as vLLM computes it: STEP pooling on the token ids a request stands for.

vLLM (pinned: :data:`~prmkit.serving.schemas.VLLM_VERSION`) serves a token-classification PRM with
``--pooler-config '{"pooling_type": "STEP", "step_tag_id": ID}'``. For each prompt it tokenizes the text
as it is (``tokenizer.encode(text, add_special_tokens=True)``; a chat is rendered with the tokenizer's
chat template and encoded with ``add_special_tokens=False``), or takes the token ids as sent, runs the
model once, keeps the rows at every position holding ``step_tag_id`` (after keeping only the
``returned_token_ids`` columns of a causal LM), and applies the head's activation: softmax over the
classes, sigmoid for one class, none with ``use_activation: false``
(``model_executor/layers/pooler/tokwise/methods.py`` ``StepPool``, ``.../tokwise/heads.py``).

Reading the text again and rendering prmkit's own template instead gave other numbers for any other
layout (a chat template, the first step on the problem's line, two tags in a row), so this module scores
the ids themselves: :func:`tokenize` builds them, :class:`PoolingScorer` runs them through the
server's one batcher (as :class:`PoolingJob` items beside ordinary traces) and :func:`encode_rows`
writes the rows as vLLM does (floats, or base64 of the raw bytes in ``embed_dtype`` / ``endianness``).
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from prmkit.core.model import Problem, Trace
from prmkit.core.protocols import StepScorer
from prmkit.serving.schemas import ChatMessage, PoolingRequest


class PoolingError(ValueError):
    """A request this server cannot pool as sent; the message names the field and the fix (a 422)."""


@dataclass(frozen=True)
class StepPooling:
    """What vLLM's STEP pooler needs from a served checkpoint: its pooler settings and tokenizer."""

    tokenizer: Any
    step_tag_id: int
    returned_token_ids: tuple[int, ...] | None
    """Columns kept from a causal LM's vocabulary logits (Math-Shepherd's ``+``/``-``); None: all classes."""
    width: int
    """Values per row: the classes, or ``len(returned_token_ids)``."""
    activation: str
    """``softmax``, ``sigmoid`` or ``identity``: vLLM's ``get_act_fn`` for the checkpoint's config."""
    max_length: int
    """Longest input in tokens (the scorer's own limit, as vLLM's ``max_model_len``)."""
    vocab_size: int


def step_pooling(scorer: StepScorer, step_tag: str | None = None) -> StepPooling | None:
    """The STEP pooling of ``scorer``'s checkpoint, or None for a scorer with no tokens (the world's
    oracle, a remote server, a scorer object): those keep the text rule of ``/pooling``.

    The tag is ``step_tag`` (``--step-tag``) when given, else the one the checkpoint declares (a prmkit
    spec's ``tag_id``, a convention's template tag or fixed tag, such as Qwen's ``<extra_0>``).
    """
    convention = getattr(scorer, "convention", None)
    if convention is None or not callable(getattr(scorer, "forward", None)):
        return None
    tokenizer, config = convention.tokenizer, convention.config
    returned = None
    if hasattr(convention, "good_id"):  # a causal LM answering +/- (vLLM's returned_token_ids)
        returned = (convention.good_id, convention.bad_id)
    elif convention.causal():
        raise PoolingError(
            f"/pooling: {scorer.name} is a causal LM read by the {convention.name} convention, which "
            "has no step-tag classes to pool; score it with /score"
        )
    tag_id = _tag_id(convention, tokenizer, step_tag)
    if tag_id is None:
        raise PoolingError(f"/pooling: {scorer.name} declares no step tag; start the server with --step-tag")
    width = len(returned) if returned else int(getattr(config, "num_labels", 2))
    return StepPooling(
        tokenizer=tokenizer,
        step_tag_id=tag_id,
        returned_token_ids=returned,
        width=width,
        activation=_activation(config),
        max_length=int(convention.max_length),
        vocab_size=int(getattr(config, "vocab_size", None) or len(tokenizer)),
    )


def _tag_id(convention: Any, tokenizer: Any, step_tag: str | None) -> int | None:
    if step_tag is not None:
        ids = tokenizer.encode(step_tag, add_special_tokens=False)
        return ids[-1] if ids else None
    spec = getattr(convention, "spec", None)
    if spec is not None and getattr(spec, "tag_id", None) is not None and spec.head == "classifier":
        return int(spec.tag_id)
    template = getattr(convention, "template", None)
    if template is not None:
        return int(template.tag_id(tokenizer))
    tag = getattr(convention, "tag", None)
    return tokenizer.encode(tag, add_special_tokens=False)[-1] if tag else None


def _activation(config: Any) -> str:
    """vLLM's ``get_act_fn(config, static_num_labels=False)`` for a token-classify head."""
    problem_type = getattr(config, "problem_type", None)
    if problem_type == "regression":
        return "identity"
    if problem_type == "multi_label_classification":
        return "sigmoid"
    return "softmax"  # PoolerClassify: softmax, or sigmoid when a row has one value


class PoolingJob(Trace):
    """One input of a ``/pooling`` request on its way through the batcher: the ids and the activation.

    It is a :class:`Trace` so it queues beside ordinary traces; ``problem.text`` holds the text the ids
    stand for, which is what the queue's cost (characters) counts."""

    input_ids: list[int]
    use_activation: bool = True


def make_jobs(ids: Sequence[list[int]], texts: Sequence[str], use_activation: bool) -> list[PoolingJob]:
    return [
        PoolingJob(
            id=f"pool-{i}",
            problem=Problem(id=f"pool-{i}", text=text),
            input_ids=list(row),
            use_activation=use_activation,
        )
        for i, (row, text) in enumerate(zip(ids, texts, strict=True))
    ]


class PoolingScorer:
    """The scorer the batcher runs: :class:`PoolingJob` items get STEP pooling (their rows flattened to
    one list of floats each), every other trace goes to the wrapped scorer unchanged."""

    def __init__(self, scorer: Any, pooling: StepPooling):
        self.scorer, self.pooling = scorer, pooling
        self.name = getattr(scorer, "name", "prmkit")

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        jobs = [i for i, t in enumerate(traces) if isinstance(t, PoolingJob)]
        if not jobs:
            return self.scorer.score(traces)
        out: list[list[float]] = [[] for _ in traces]
        rest = [i for i, t in enumerate(traces) if not isinstance(t, PoolingJob)]
        if rest:
            for i, row in zip(rest, self.scorer.score([traces[i] for i in rest]), strict=True):
                out[i] = row
        pooled = self.pool([traces[i] for i in jobs])  # type: ignore[misc]
        for i, row in zip(jobs, pooled, strict=True):
            out[i] = row
        return out

    def pool(self, jobs: Sequence[PoolingJob]) -> list[list[float]]:
        """STEP pooling of each job, in the scorer's length-sorted forward passes (right padding with a
        mask, so a row's outputs do not depend on what shares its pass)."""
        import torch

        from prmkit.modeling.template import Encoded

        p, scorer = self.pooling, self.scorer
        encoded = [
            Encoded(
                input_ids=j.input_ids,
                tag_positions=[k for k, t in enumerate(j.input_ids) if t == p.step_tag_id],
            )
            for j in jobs
        ]
        out: list[list[float]] = [[] for _ in jobs]
        with torch.inference_mode():
            for group in scorer.batches(encoded):
                rows = [encoded[i] for i in group]
                logits = scorer.forward(scorer.pad(rows))
                for k, i in enumerate(group):
                    data = logits[k, rows[k].tag_positions]
                    if p.returned_token_ids:
                        data = data[:, list(p.returned_token_ids)]
                    data = data.float()
                    if jobs[i].use_activation:
                        data = _activate(data, p.activation)
                    out[i] = data.flatten().tolist()
        return out


def _activate(data: Any, how: str) -> Any:
    import torch

    if how == "identity":
        return data
    if how == "sigmoid" or data.shape[-1] < 2:
        return torch.sigmoid(data)
    return torch.softmax(data, dim=-1)


def refused_fields(req: PoolingRequest) -> str | None:
    """Why a field of ``req`` that vLLM honours cannot be honoured here (None: every field can)."""
    if req.task not in (None, "token_classify"):
        return f"task: {req.task!r}; this server pools token_classify only (a PRM's step-tag rows)"
    if (req.input is None) == (req.messages is None):
        return "give exactly one of 'input' (text, texts or token ids) and 'messages' (one conversation)"
    if req.add_generation_prompt and req.continue_final_message:
        return "Cannot set both `continue_final_message` and `add_generation_prompt` to True."
    unsupported = {
        "dimensions": req.dimensions is not None,
        "chat_template": req.chat_template is not None,
        "chat_template_kwargs": bool(req.chat_template_kwargs),
        "media_io_kwargs": bool(req.media_io_kwargs),
        "mm_processor_kwargs": bool(req.mm_processor_kwargs),
        "truncate_prompt_tokens": req.truncate_prompt_tokens is not None,
        "padding": req.padding == "max_length",
        "priority": req.priority != 0,
        "encoding_format": req.encoding_format in ("bytes", "bytes_only"),
    }
    named = [name for name, is_set in unsupported.items() if is_set]
    if named:
        return (
            f"{named[0]}: not supported by prmkit's /pooling (it pools text, token ids and text-only "
            "chats with the checkpoint's own chat template, as 'float' or 'base64'); leave it out"
        )
    return None


def raw_texts(req: PoolingRequest) -> list[str]:
    """The texts a request will tokenize (their characters are limited before any tokenizer call)."""
    if req.messages is not None:
        return ["".join(message_text(m) for m in req.messages)]
    if isinstance(req.input, str):
        return [req.input]
    if req.input and isinstance(req.input[0], str):
        return list(req.input)  # type: ignore[arg-type]
    return []


def token_inputs(req: PoolingRequest) -> list[list[int]] | None:
    """The token ids a request sends as they are, or None when it sends text or a chat."""
    if req.messages is not None or isinstance(req.input, str):
        return None
    if not req.input:
        raise PoolingError("input: an empty list; send at least one prompt")
    first = req.input[0]
    if isinstance(first, str):
        return None
    return [list(req.input)] if isinstance(first, int) else [list(row) for row in req.input]  # type: ignore[arg-type]


ContentFormat = Literal["string", "openai"]


def message_text(message: ChatMessage) -> str:
    """A message's content as a ``string``-format template sees it: text parts joined by newlines."""
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.text for part in message.content)


def template_message(message: ChatMessage, form: ContentFormat) -> dict[str, Any]:
    """``message`` as vLLM hands it to the chat template (``_parse_chat_message_content``): in the
    ``string`` format its content is one string (:func:`message_text`); in the ``openai`` format it is
    always a list of ``{"type": "text", "text": ...}`` parts, a plain string content too, so a template
    that loops over the parts joins them itself. A ``name`` goes along, as vLLM passes it."""
    if form == "string":
        content: str | list[dict[str, str]] = message_text(message)
    elif isinstance(message.content, str):
        content = [{"type": "text", "text": message.content}]
    else:
        content = [{"type": "text", "text": part.text} for part in message.content or []]
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.name is not None:
        out["name"] = message.name
    return out


@lru_cache(maxsize=32)
def content_format(template: str) -> ContentFormat:
    """vLLM's ``_detect_content_format`` (``--chat-template-content-format auto``): ``openai`` when the
    template loops over a message's content (``{% for part in message['content'] %}``, through any
    variable assigned from ``messages``, a filter, a test or a slice), else ``string``. A template that
    does not compile, or that vLLM's reading trips on (a tuple assigned or looped over), is ``string``:
    vLLM's default."""
    import jinja2.nodes
    from transformers.utils.chat_template_utils import _compile_jinja_template

    try:
        root = _compile_jinja_template(template).environment.parse(template)
        messages = _assigned_from(root, "messages")
        items = [_name(loop) for loop in root.find_all(jinja2.nodes.For) if _reads_any(loop.iter, messages)]
        for loop in root.find_all(jinja2.nodes.For):  # in order: vLLM stops at the first match
            if _reads_any(loop.iter, items, "content"):
                _name(loop)
                return "openai"
    except Exception:  # vLLM logs it and falls back to its default
        return "string"
    return "string"


def _name(node: Any) -> str:
    """The variable a ``{% for %}`` or ``{% set %}`` binds; anything else fails, as vLLM's assert does."""
    import jinja2.nodes

    if not isinstance(node.target, jinja2.nodes.Name):
        raise TypeError(f"binds {type(node.target).__name__}, not a name")
    return node.target.name


def _reads_any(node: Any, names: list[str], key: str | None = None) -> bool:
    return any(_reads(node, name, key) for name in names)


def _assigned_from(root: Any, name: str) -> list[str]:
    """``name`` and every variable ``{% set %}`` from it (or from one of those), breadth first, as
    vLLM's ``_iter_nodes_assign_var_or_elems`` lists them."""
    import jinja2.nodes

    found, queue = [name], [name]
    while queue:
        source = queue.pop(0)
        for assign in root.find_all(jinja2.nodes.Assign):
            if _reads(assign.node, source):
                target = _name(assign)
                if target not in found:  # vLLM would go round ``a = b``, ``b = a`` for ever
                    found.append(target)
                    queue.append(target)
    return found


def _reads(node: Any, name: str, key: str | None = None) -> bool:
    """Whether ``node`` reads the variable ``name`` (or its item/attribute ``key``), through filters,
    tests and slices (vLLM's ``_is_var_or_elems_access``)."""
    import jinja2.nodes

    if isinstance(node, jinja2.nodes.Filter | jinja2.nodes.Test):
        return node.node is not None and _reads(node.node, name, key)
    if isinstance(node, jinja2.nodes.Getitem) and isinstance(node.arg, jinja2.nodes.Slice):
        return _reads(node.node, name, key)
    if key is None:
        return isinstance(node, jinja2.nodes.Name) and node.ctx == "load" and node.name == name
    if isinstance(node, jinja2.nodes.Getitem):
        arg = node.arg
        return _reads(node.node, name) and isinstance(arg, jinja2.nodes.Const) and arg.value == key
    if isinstance(node, jinja2.nodes.Getattr):
        return _reads(node.node, name) and node.attr == key
    return False


def tokenize(req: PoolingRequest, pooling: StepPooling) -> tuple[list[list[int]], list[str]]:
    """Token ids of every prompt of ``req``, as vLLM makes them, and the texts they came from.

    Runs off the event loop (a chat template is a program: it may be slow, or refuse the chat)."""
    tokenizer = pooling.tokenizer
    if req.messages is not None:
        if not getattr(tokenizer, "chat_template", None):
            raise PoolingError(
                "messages: this checkpoint's tokenizer has no chat template; send the rendered text as 'input'"
            )
        form = content_format(tokenizer.get_chat_template())
        chat = [template_message(m, form) for m in req.messages]
        try:
            text = tokenizer.apply_chat_template(
                chat,
                tokenize=False,
                add_generation_prompt=req.add_generation_prompt,
                continue_final_message=req.continue_final_message,
            )
        except (
            Exception
        ) as err:  # the template refused this chat (roles out of order, ...): the client's input
            raise PoolingError(f"messages: the chat template refused them: {str(err)[:300]}") from None
        special = bool(req.add_special_tokens)
        return [tokenizer.encode(text, add_special_tokens=special)], [text]
    texts = raw_texts(req)
    special = req.add_special_tokens is not False
    return [tokenizer.encode(t, add_special_tokens=special) for t in texts], texts


def check_ids(ids: Sequence[list[int]], pooling: StepPooling, model: str) -> None:
    """Every prompt is non-empty, fits the model and names real tokens (before the forward pass)."""
    for i, row in enumerate(ids):
        if not row:
            raise PoolingError(f"input {i}: no tokens; send a non-empty prompt")
        if len(row) > pooling.max_length:
            raise PoolingError(
                f"input {i}: {len(row)} tokens; {model} takes at most {pooling.max_length}; send a shorter prompt"
            )
        bad = next((t for t in row if not 0 <= t < pooling.vocab_size), None)
        if bad is not None:
            raise PoolingError(
                f"input {i}: token id {bad} is out of vocabulary (0 to {pooling.vocab_size - 1})"
            )


def encode_rows(flat: list[float], width: int, req: PoolingRequest) -> list[list[float]] | str:
    """One input's rows as vLLM writes them: a list of rows, or base64 of the flattened values in
    ``embed_dtype`` and ``endianness`` (vLLM's ``tensor2binary``)."""
    rows = [flat[k : k + width] for k in range(0, len(flat), width)]
    if req.encoding_format == "float":
        return rows
    import torch

    dtypes = {
        "float32": (torch.float32, torch.float32),
        "float16": (torch.float16, torch.float16),
        "bfloat16": (torch.bfloat16, torch.float16),
        "fp8_e4m3": (torch.float8_e4m3fn, torch.uint8),
        "fp8_e5m2": (torch.float8_e5m2, torch.uint8),
    }
    dtype, view = dtypes[req.embed_dtype]
    array = torch.tensor(flat, dtype=torch.float32).to(dtype).flatten().contiguous().view(view).numpy()
    if req.endianness != "native" and req.endianness != sys.byteorder:
        array = array.byteswap()
    return base64.b64encode(array.tobytes()).decode("utf-8")
