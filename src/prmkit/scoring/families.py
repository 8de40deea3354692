"""The released PRM families, each read exactly as its model card's reference code reads it.

One :class:`~prmkit.scoring.conventions.Convention` per family (registered in ``conventions.py`` by
name, lazily), with the card's input layout, the token ids the card derives (derived the card's way:
Math-Shepherd takes ``+``/``-`` from ``encode("+ -")``, RLHFlow from ``encode("+")`` and ``encode("-")``,
which differ on Llama-3's byte-level tokenizer) and the card's read-out. tests/scoring/test_families.py
runs each card's snippet beside prmkit on a tiny model of the real architecture with the real weight
names, with the real tokenizer wherever a package ships it; docs/models.md has the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from prmkit.core.errors import InputError, Issue
from prmkit.modeling.checkpoint import check_checkpoint
from prmkit.modeling.loading import LoadOptions, load_exact
from prmkit.modeling.template import Encoded
from prmkit.scoring.conventions import (
    CAUSAL_HEAD,
    Convention,
    causal_reads,
    per_row,
    read_index,
    readers,
    vocab_head,
)

IMPLICIT_BETA = 0.001
"""EurusPRM's ``coef``: the scale of an implicit PRM's log-ratio when ``--beta`` is not given."""


def tag_positions(ids: Sequence[int], tag_id: int) -> list[int]:
    return [i for i, t in enumerate(ids) if t == tag_id]


def tagged(text: str, tag_id: int) -> Plan:
    """One text, encoded as a card's ``tokenizer.encode(text)`` does, read at every ``tag_id``."""
    return Plan(
        [text], True, lambda ids, _: Encoded(input_ids=ids[0], tag_positions=tag_positions(ids[0], tag_id))
    )


@dataclass(frozen=True)
class Plan:
    """How one trace becomes ids: the texts the reference code tokenizes, whether it lets the tokenizer add
    its special tokens, and how their ids make the :class:`Encoded`. Plans of many traces are tokenized
    in one call, which the tokenizer spreads over every core (one call per trace left the GPU waiting)."""

    texts: list[str]
    special: bool
    assemble: Callable[[list[list[int]], list[Any] | None], Encoded]
    """``assemble(ids, spans)``: ``spans`` the texts' token character offsets where ``offsets`` (and the
    tokenizer is a fast one), else None."""
    offsets: bool = False


class _Family(Convention):
    """A released family: each trace planned (:meth:`plan`), the plans of a batch tokenized together; its
    length limit is the one its checkpoint declares (:func:`~prmkit.scoring.conventions.declared_length`)."""

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        raise NotImplementedError

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        return self.encode_many([(problem, steps)])[0]

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        plans = [self.plan(problem, steps) for problem, steps in items]
        fast = bool(getattr(self.tokenizer, "is_fast", False))
        groups: dict[tuple[bool, bool], Any] = {}
        for key in {(p.special, p.offsets and fast) for p in plans}:
            texts = [t for p in plans if (p.special, p.offsets and fast) == key for t in p.texts]
            groups[key] = self.tokenizer(texts, add_special_tokens=key[0], return_offsets_mapping=key[1])
        out, at = [], dict.fromkeys(groups, 0)
        for p in plans:
            key = (p.special, p.offsets and fast)
            start, at[key] = at[key], at[key] + len(p.texts)
            spans = groups[key]["offset_mapping"][start : at[key]] if key[1] else None
            out.append(p.assemble(groups[key]["input_ids"][start : at[key]], spans))
        return out

    def render(self, messages: list[dict[str, str]]) -> str:
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)


class QwenConvention(_Family):
    """Qwen2.5-Math-PRM (7B, 72B, 7B-PRM800K): the card's chat (system prompt, the query, the steps joined
    and ended by ``<extra_0>``), encoded as the card encodes it (``tokenizer.encode(text)``), softmax over
    the two classes at every ``<extra_0>``, class 1."""

    name = "qwen"
    auto_class = "prmkit.modeling.released:Qwen2ForProcessRewardModel"
    architectures = ("Qwen2ForProcessRewardModel",)
    head = ("score.0.weight", "score.0.bias", "score.2.weight", "score.2.bias")
    system: str | None = "Please reason step by step, and put your final answer within \\boxed{}."
    """The card's system turn; None: none (the chat template writes its own default, if it has one)."""
    tag = "<extra_0>"

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        messages = [{"role": "system", "content": self.system}] if self.system is not None else []
        messages += [
            {"role": "user", "content": problem},
            {"role": "assistant", "content": self.tag.join(steps) + self.tag},
        ]
        return tagged(self.render(messages), self.tokenizer.convert_tokens_to_ids(self.tag))

    def scores(self, rows: Any) -> Any:
        return rows.float().softmax(-1)[:, 1]


class ReasonFluxConvention(QwenConvention):
    """ReasonFlux-PRM-7B (Gen-Verse): Qwen2.5-Math-PRM's head and read-out (``make_step_rewards``, class 1
    at every ``<extra_0>``), but the card's chat has **no system turn**: only the problem and the steps
    joined and ended by ``<extra_0>`` (``ReasonFlux_PRM/README.md``). ``qwen:`` writes Qwen's system prompt,
    so it reads a ReasonFlux checkpoint the card's way only where the checkpoint's chat template would
    write that same prompt by default. Not detected (its ``architectures`` are not known): name it."""

    name = "reasonflux"
    architectures = ()
    system = None


class _PlusMinus(_Family):
    """Causal LMs that answer ``+`` (good) or ``-`` (bad): softmax over those two logits, P(+)."""

    auto_class = "AutoModelForCausalLM"
    head = CAUSAL_HEAD
    good, bad = "+", "-"

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        self.good_id, self.bad_id = self.answer_ids(tokenizer)

    def answer_ids(self, tokenizer: Any) -> tuple[int, int]:
        raise NotImplementedError

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        """The ``+`` / ``-`` logits at the read positions only, (N, 2): the vocabulary projection of N
        hidden states instead of every position's."""
        head = vocab_head(model)
        if head is None:
            logits = super().forward(model, batch, rows)
            b, p = read_index(rows, logits.device)
            return logits[b, p][:, [self.good_id, self.bad_id]]
        hidden = model.base_model(**batch).last_hidden_state
        b, p = read_index(rows, hidden.device)
        return head(hidden[b, p])[:, [self.good_id, self.bad_id]]

    def read(self, logits: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        return per_row(logits.float().softmax(-1)[:, 0].tolist(), rows)


@dataclass(frozen=True)
class TagLayout:
    """How a tagged ``+``/``-`` PRM lays a trace out, as its card does: ``prompt`` (``{problem}`` in it),
    then each step written by ``step`` (``{step}``, ``{tag}``) joined by ``join``; read at every ``tag``
    token, its id ``encode(tag)[-1]``. ``answers``: how the card derives the ``+``/``-`` ids (``joined``:
    ``encode("+ -")[-2:]``; ``alone``: ``encode("+")[-1]``, ``encode("-")[-1]``, which differ on Llama-3's
    byte-level tokenizer). ``clean``: the card strips the problem and each step and deletes the tag from them."""

    tag: str
    prompt: str
    step: str
    join: str
    answers: Literal["joined", "alone"]
    clean: bool = False


def answer_ids(tokenizer: Any, good: str, bad: str, how: Literal["joined", "alone"]) -> tuple[int, int]:
    """The ``+`` and ``-`` ids the way a card derives them (see :class:`TagLayout`)."""
    if how == "joined":
        joined = tokenizer.encode(f"{good} {bad}", add_special_tokens=False)[-2:]
        return joined[0], joined[1]
    return tokenizer.encode(good)[-1], tokenizer.encode(bad)[-1]


class TaggedConvention(_PlusMinus):
    """A causal LM read at a tag written after every step: P(``+``) against ``-`` there, in one forward
    pass. A family is its :class:`TagLayout` (a new one is a subclass that sets ``name`` and ``layout``)."""

    layout: TagLayout

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        self.tag = self.layout.tag
        self.tag_id = tokenizer.encode(self.tag)[-1]

    def answer_ids(self, tokenizer: Any) -> tuple[int, int]:
        return answer_ids(tokenizer, self.good, self.bad, self.layout.answers)

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        lay = self.layout
        if lay.clean:
            problem, steps = (
                problem.strip().replace(lay.tag, ""),
                [s.strip().replace(lay.tag, "") for s in steps],
            )
        body = lay.join.join(lay.step.format(step=s, tag=lay.tag) for s in steps)
        return tagged(lay.prompt.format(problem=problem) + body, self.tag_id)


class MathShepherdConvention(TaggedConvention):
    """``f"{question} {step1} ки\\n{step2} ки..."``, read at every ``ки`` (vLLM: ``step_tag_id``); the
    card's ``candidate_tokens = tokenizer.encode(f"{good_token} {bad_token}")[1:]`` (``[648, 387]``) and
    ``step_tag_id = tokenizer.encode(f"{step_tag}")[-1]`` (``12902``) on Mistral-7B's tokenizer."""

    name = "math-shepherd"
    layout = TagLayout(tag="ки", prompt="{problem} ", step="{step} {tag}", join="\n", answers="joined")


class VersaPRMConvention(TaggedConvention):
    """VersaPRM (UW-Madison-Lee-Lab; Llama-3.1-8B / 3.2-3B): ``f"{question} \\n\\n"`` then every step
    followed by ``" \\n\\n\\n\\n"``, question and steps stripped and cleared of that tag, encoded with
    BOS; softmax over the ``-``/``+`` logits (``[12, 10]`` on Llama-3), P(``+``), at every tag token
    (``23535``): the repository's ``evaluation/get_rewards_reasoning_step.py`` and
    ``prm_models/prm_llama.py``."""

    name = "versaprm"
    layout = TagLayout(tag=" \n\n\n\n", prompt="{problem} \n\n", step="{step}{tag}", join="",
                       answers="alone", clean=True)  # fmt: skip

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        pieces = tokenizer.encode(self.tag, add_special_tokens=False)
        if len(pieces) != 1:  # the card reads one tag token (23535); a split tag is read nowhere it wrote
            issue = Issue("tokenizer", None, "step tag", "' \\n\\n\\n\\n' as one token (23535 on Llama-3)",
                          f"{len(pieces)} tokens {pieces}", "checkpoint",
                          "VersaPRM is read with its own Llama-3 tokenizer")  # fmt: skip
            raise InputError([issue], skippable=False)


class RLHFlowConvention(_PlusMinus):
    """Chat turns: user = problem + step 1, then one user turn per step, each answered by ``+``.

    The reference (``math-rm/prm_evaluate.py``) takes ``plus_tag_id = tokenizer.encode('+')[-1]`` and
    ``minus_tag_id = tokenizer.encode('-')[-1]``, and reads ``logits[:, -3]`` after
    ``apply_chat_template`` of every growing conversation (one forward per step). The template renders a
    shorter conversation as a prefix of the longer one, ending at a special token, so the same positions
    in the full conversation give the same scores in one forward pass; each prefix's length in tokens is
    counted from the full text's token offsets (a prefix the template renders otherwise is tokenized on
    its own, as the reference does).
    """

    name = "rlhflow"

    def answer_ids(self, tokenizer: Any) -> tuple[int, int]:
        return answer_ids(tokenizer, self.good, self.bad, "alone")

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        if not steps:
            return Plan([problem], True, lambda ids, _: Encoded(input_ids=ids[0], tag_positions=[]))
        messages: list[dict[str, str]] = []
        prefixes = []
        for k, step in enumerate(steps):
            messages += [
                {"role": "user", "content": f"{problem} {step}" if k == 0 else step},
                {"role": "assistant", "content": self.good},
            ]
            prefixes.append(self.render(messages))
        full, fast = prefixes[-1], bool(getattr(self.tokenizer, "is_fast", False))
        apart = [p for p in prefixes[:-1] if not (fast and full.startswith(p))]  # tokenized on their own

        def assemble(ids: list[list[int]], spans: list[Any] | None) -> Encoded:
            alone = iter(ids[1:])
            lengths = [
                len(next(alone)) if p in apart else sum(1 for _, end in spans[0] if end <= len(p))  # type: ignore[index]
                for p in prefixes[:-1]
            ]
            return Encoded(input_ids=ids[0], tag_positions=[n - 3 for n in [*lengths, len(ids[0])]])

        return Plan([full, *apart], False, assemble, offsets=True)


class SkyworkConvention(_Family):
    """Skywork-o1-Open-PRM (1.5B, 7B), as ``model_utils/io_utils.py``'s ``prepare_input(problem, response,
    tokenizer, step_token="\\n")`` lays it out: ``encode(bos_token + problem + "\\n")``, then every line of
    the response encoded on its own and followed by the ``"\\n"`` token (after the last one too); the
    sigmoid of the value head at that token. The response is the steps joined by newlines, so a step of
    one line is read where the reference reads it; a step of several lines is read at its last line's
    token (the reference gives each line a reward)."""

    name = "skywork"
    auto_class = "prmkit.modeling.released:Qwen2ForPrmModel"
    architectures = ("Qwen2ForPrmModel",)
    head = ("v_head.summary.weight", "v_head.summary.bias")
    step_token = "\n"

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        pieces = [step.split(self.step_token) for step in steps]
        texts = [(self.tokenizer.bos_token or "") + problem + "\n"]
        texts += [piece for lines in pieces for piece in lines if piece != ""]
        step_id = self.tokenizer.encode(self.step_token)[-1]

        def assemble(encoded: list[list[int]], _: Any) -> Encoded:
            parts = iter(encoded)
            ids, positions = list(next(parts)), []
            for lines in pieces:
                for piece in lines:
                    ids += (next(parts) if piece != "" else []) + [step_id]
                positions.append(len(ids) - 1)
            return Encoded(input_ids=ids, tag_positions=positions)

        return Plan(texts, True, assemble)

    def scores(self, rows: Any) -> Any:
        return rows.float()[:, 0].sigmoid()


class ImplicitConvention(_Family):
    """Implicit PRMs (PRIME; EurusPRM-Stage1/2): a causal LM read against a reference policy (``--reference``).

    A token's reward is ``beta * (log pi(x_t) - log pi_ref(x_t))``; a step's score is the sigmoid of the
    sum from the response's start to the step's end, the implicit Q value ``q_t`` (Yuan et al. 2024,
    eq. 3): the probability, under the outcome loss the PRM was trained with, that the solution is right
    so far. EurusPRM's card prints ``q_t`` itself: ``logit(score)`` gives it back. The layout is the card's
    (ImplicitPRM ``eval/processbench.py``): the chat template with the problem as the user turn and the
    steps, each ``Step k: ``-prefixed unless it already is, joined by blank lines as the assistant turn;
    step ends found as the card finds them, from the token count of each rendered prefix (so a middle
    step's sum runs to the first token after its blank line, the last one's to ``<|im_end|>``).
    """

    name = "implicit"
    auto_class = "AutoModelForCausalLM"
    head = CAUSAL_HEAD
    takes_reference = True

    @classmethod
    def load_model(cls, path: str | Path, options: LoadOptions | None = None) -> Any:
        from prmkit.modeling.released import ImplicitPair

        options = options or LoadOptions()
        if options.reference is None:
            issue = Issue(str(path), None, "reference", "the reference policy an implicit PRM is read against",
                          "none", "checkpoint", "pass --reference MODEL (EurusPRM: Qwen/Qwen2.5-Math-7B-Instruct)")  # fmt: skip
            raise InputError([issue], skippable=False)
        policy = load_exact(cls.model_class(), path, cls.name, options, fix=readers)
        check_checkpoint(options.reference)  # a missing local folder is named, not looked up on the Hub
        reference = load_exact(
            cls.model_class(), options.reference, "implicit reference", options, fix=readers
        )
        sizes = (policy.config.vocab_size, reference.config.vocab_size)
        if sizes[0] != sizes[1]:
            issue = Issue(str(options.reference), None, "vocab_size", f"{sizes[0]} (the PRM's: same tokens)",
                          str(sizes[1]), "checkpoint", "the reference must share the PRM's tokenizer")  # fmt: skip
            raise InputError([issue], skippable=False)
        return ImplicitPair(policy, reference, IMPLICIT_BETA if options.beta is None else options.beta)

    def _chat(self, problem: str, steps: Sequence[str]) -> str:
        return self.render(
            [{"role": "user", "content": problem}, {"role": "assistant", "content": "\n\n".join(steps)}]
        )

    def plan(self, problem: str, steps: Sequence[str]) -> Plan:
        steps = [s if s.startswith(f"Step {k}:") else f"Step {k}: {s}" for k, s in enumerate(steps, start=1)]
        prefixes = []
        for k in range(len(steps) + 1):  # the card's step_last_tokens, from each rendered prefix
            conv = self._chat(problem, steps[:k]).strip()
            prefixes.append(conv + "\n\n" if 0 < k < len(steps) else conv)

        def assemble(ids: list[list[int]], _: Any) -> Encoded:
            ends = [len(x) - 2 for x in ids[1:]]
            # the card sums raw[i] (token i + 1's ratio) from i = ends[0] - 1 to ends[k]: tokens ends[0]..ends[k] + 1
            return Encoded(input_ids=ids[0], tag_positions=[e + 1 for e in ends[1:]], prompt_length=ends[0])

        return Plan([self._chat(problem, steps), *prefixes], False, assemble)

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        return model.beta * (causal_reads(model.policy, batch) - causal_reads(model.reference, batch))

    def read(self, rewards: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        rewards, out = rewards.double().cpu(), []  # one copy off the GPU, not one sync per step
        for k, r in enumerate(rows):
            start = r.prompt_length or 0
            q = rewards[k, start:].cumsum(0)
            out.append(q[[p - start for p in r.tag_positions]].sigmoid().tolist())
        return out


class PrefixEncoded(Encoded):
    """A trace read one forward per step prefix: ``prefixes[k]`` is the whole input that scores step
    ``k + 1``; ``input_ids`` the longest (what must fit the model), ``tag_positions[k]`` the last token of
    ``prefixes[k]`` (so the length policy keeps exactly the prefixes that fit)."""

    prefixes: list[list[int]] = Field(default_factory=list)


PREFIX_TOKENS = 16384
"""Most tokens (rows x padded width) of step prefixes one forward pass of a per-prefix family takes."""


class UniversalConvention(_Family):
    """Universal-PRM-7B (infly; AURORA, Qwen2.5-Math-7B-Instruct base): **reference-conditioned**, one
    forward pass per step prefix, as its card's snippet runs it.

    The query is the chat ``[system "You are a helpful assistant.", user problem + "\\n\\n###\\n\\nThe
    reference answer is: " + reference]`` with the generation prompt, tokenized as the template renders it;
    then the steps so far joined by ``"\\n\\n"``, plus ``"\\n\\n"``, tokenized on their own (the tokenizer's
    own special tokens added), then the EOS id. A step's score is ``sigmoid`` of the head's one value at
    that last token (the card's ``sigmoid(outputs[0])``). The reference is the problem's ``answer``
    (:meth:`problem_text`); a problem without one is refused: the card's fallback sentence ("There is no
    reference answer for this question.") is not the condition prmkit's numbers are compared under.

    The head (``score.0`` h x h, ReLU, ``score.2`` 1 x h, biases: :class:`~prmkit.modeling.released.
    Qwen2ForRewardModel`, the layout of Qwen2.5-Math-RM that the card's ``AutoModel`` + ``outputs[0]``
    usage matches) is **unverified**: no index file or modelling code of the release could be read. A
    checkpoint whose weights are named otherwise is refused, naming them, never read with a head made up."""

    name = "universal"
    auto_class = "prmkit.modeling.released:Qwen2ForRewardModel"
    head = ("score.0.weight", "score.0.bias", "score.2.weight", "score.2.bias")
    system = "You are a helpful assistant."
    reference = "\n\n###\n\nThe reference answer is: "
    join = "\n\n"

    def problem_text(self, problem: Any) -> str:
        if not (problem.answer or "").strip():
            issue = Issue(f"problem {problem.id}", None, "answer", "the problem's reference answer (Universal-PRM "
                          "reads it in its prompt)", "none", "missing", "score problems that carry their "
                          "answer, or read the checkpoint with a convention that needs none")  # fmt: skip
            raise InputError([issue], skippable=False)
        return problem.text + self.reference + problem.answer

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        """``problem`` is the user turn :meth:`problem_text` writes (the problem and its reference)."""
        chats = [
            [{"role": "system", "content": self.system}, {"role": "user", "content": p}] for p, _ in items
        ]
        queries = [
            self.tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in chats
        ]
        texts = [
            self.join.join(steps[:k]) + self.join for _, steps in items for k in range(1, len(steps) + 1)
        ]
        query_ids = self.tokenizer(queries, add_special_tokens=False)["input_ids"]
        answer_ids = iter(self.tokenizer(texts)["input_ids"] if texts else [])
        out: list[Encoded] = []
        for (_, steps), query in zip(items, query_ids, strict=True):
            rows = [list(query) + list(next(answer_ids)) + [self.tokenizer.eos_token_id] for _ in steps]
            ids = rows[-1] if rows else list(query)
            out.append(PrefixEncoded(input_ids=ids, tag_positions=[len(r) - 1 for r in rows],
                                     prompt_length=len(query), prefixes=rows))  # fmt: skip
        return out

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        """The head's value at the last token of every kept prefix, in row order, (N,): the prefixes padded
        on the right in groups under :data:`PREFIX_TOKENS`."""
        import torch

        seqs = [p for r in rows for p in r.prefixes[: len(r.tag_positions)]]  # type: ignore[attr-defined]
        device, pad = batch["input_ids"].device, self.tokenizer.pad_token_id or 0
        values, start = [], 0
        while start < len(seqs):
            end = start + 1
            while (
                end < len(seqs) and (end + 1 - start) * max(map(len, seqs[start : end + 1])) <= PREFIX_TOKENS
            ):
                end += 1
            group = seqs[start:end]
            width = max(map(len, group))
            ids = torch.full((len(group), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for k, s in enumerate(group):
                ids[k, : len(s)], mask[k, : len(s)] = torch.tensor(s), 1
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device))
            logits = out[0] if isinstance(out, tuple) else out.logits
            last = torch.tensor([len(s) - 1 for s in group], device=logits.device)
            values.append(logits[torch.arange(len(group), device=logits.device), last, 0])
            start = end
        return torch.cat(values) if values else torch.zeros(0)

    def read(self, values: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        return per_row(values.float().sigmoid().tolist(), rows)
