"""PRM conventions: how each family of checkpoints is fed and where its step scores are read.

One registry, one small class per convention (never an if-chain on model ids):

- ``prmkit``        token classification at prmkit's step tag; template and classes from config.json
- ``trl``           TRL ``PRMTrainer``: token classification at the separator (``"\\n"``), LABEL_1 = correct
- ``qwen``          Qwen2.5-Math-PRM: chat template, ``<extra_0>`` after each step, softmax, class 1
- ``math-shepherd`` causal LM, `` ки`` after each step, softmax over the ``+``/``-`` logits, index 0
- ``rlhflow``       causal LM, chat turns (user = step, assistant = ``+``), ``+`` vs ``-`` before each ``+``
- ``likelihood``    any causal LM as a zero-shot verifier: the lowest probability of a token of the step

A plugin adds a convention through the ``prmkit.conventions`` entry-point group (a Convention subclass).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue
from prmkit.core.registry import Registry
from prmkit.modeling.backbone import load_tokenizer
from prmkit.modeling.checkpoint import check_checkpoint, loading, written_by_prmkit
from prmkit.modeling.spec import PrmSpec, read_spec, token_logp
from prmkit.modeling.template import Encoded, StepTemplate, encode_trace

CONVENTIONS: Registry[type] = Registry("PRM convention", entry_points="prmkit.conventions")


class Convention:
    """Base: loads model + tokenizer, encodes a trace, turns logits at read positions into scores."""

    name = "base"
    auto_class = "AutoModelForTokenClassification"
    spec: PrmSpec | None = None
    """What a prmkit checkpoint declares (template, head, its dev-tuned threshold); None for others."""

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        self.tokenizer, self.config, self.max_length = tokenizer, config, max_length

    @classmethod
    def load_model(cls, path: str | Path, trust_remote_code: bool = False) -> Any:
        import transformers

        auto = getattr(transformers, cls.auto_class)
        return auto.from_pretrained(str(path), trust_remote_code=trust_remote_code)

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        raise NotImplementedError

    def scores(self, rows: Any) -> Any:
        """Rows of logits gathered at the read positions (N, C or V) -> (N,) scores in [0, 1]."""
        raise NotImplementedError

    def read(self, logits: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        """Each row's step scores from a batch's logits (B, L, C or V): by default one read position per
        step (``tag_positions``) turned into a score by :meth:`scores`, in one gather for the batch."""
        import torch

        b = torch.tensor([k for k, r in enumerate(rows) for _ in r.tag_positions], dtype=torch.long)
        p = torch.tensor([p for r in rows for p in r.tag_positions], dtype=torch.long)
        flat = self.scores(logits[b.to(logits.device), p.to(logits.device)]).tolist()
        out, start = [], 0
        for r in rows:
            out.append(flat[start : start + len(r.tag_positions)])
            start += len(r.tag_positions)
        return out


@CONVENTIONS.register("prmkit")
class PrmkitConvention(Convention):
    name = "prmkit"

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        spec = read_spec(config)
        if spec is None:
            raise ValueError("not a prmkit checkpoint: config.json has no 'prmkit' block; pick --convention")
        self.spec: PrmSpec = spec
        self.template = spec.template
        self.positive = list(spec.positive_labels)
        self.max_length = spec.max_length

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        if not hasattr(self, "_sep"):
            self._sep = self.template.separator_ids(self.tokenizer)
        return encode_trace(self.tokenizer, self.template, problem, steps, separator=self._sep)

    def scores(self, rows: Any) -> Any:
        return rows.float().softmax(-1)[:, self.positive].sum(-1)


@CONVENTIONS.register("trl")
class TrlConvention(PrmkitConvention):
    """TRL's layout: ``[bos] prompt + sep``, then each step + sep; LABEL_1 read at the separator."""

    name = "trl"

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096, separator: str = "\n"):
        Convention.__init__(self, tokenizer, config, max_length)
        self.template = StepTemplate(
            prompt_template="{problem}" + separator, separator=separator, tag=separator
        )
        self.positive = [1]


def _tag_positions(ids: list[int], tag_id: int) -> list[int]:
    return [i for i, t in enumerate(ids) if t == tag_id]


@CONVENTIONS.register("qwen")
class QwenConvention(Convention):
    """Qwen2.5-Math-PRM: the system prompt, the query, the steps joined and ended by ``<extra_0>``."""

    name = "qwen"
    system = "Please reason step by step, and put your final answer within \\boxed{}."
    tag = "<extra_0>"

    @classmethod
    def load_model(cls, path: str | Path, trust_remote_code: bool = False) -> Any:
        import transformers

        auto = transformers.AutoModel if trust_remote_code else transformers.AutoModelForTokenClassification
        return auto.from_pretrained(str(path), trust_remote_code=trust_remote_code)

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        messages = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": problem},
            {"role": "assistant", "content": self.tag.join(steps) + self.tag},
        ]
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        tag_id = self.tokenizer.convert_tokens_to_ids(self.tag)
        return Encoded(input_ids=ids, tag_positions=_tag_positions(ids, tag_id))

    def scores(self, rows: Any) -> Any:
        return rows.float().softmax(-1)[:, 1]


class _PlusMinus(Convention):
    """Causal LMs that answer ``+`` (good) or ``-`` (bad): softmax over those two logits, P(+)."""

    auto_class = "AutoModelForCausalLM"
    good, bad = "+", "-"

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        ids = tokenizer.encode(f"{self.good} {self.bad}", add_special_tokens=False)
        self.good_id, self.bad_id = ids[-2], ids[-1]

    def scores(self, rows: Any) -> Any:
        return rows[:, [self.good_id, self.bad_id]].float().softmax(-1)[:, 0]


@CONVENTIONS.register("math-shepherd")
class MathShepherdConvention(_PlusMinus):
    """``f"{question} {step1} ки\\n{step2} ки..."``, read at every ``ки`` (vLLM: ``step_tag_id``)."""

    name = "math-shepherd"
    tag = "ки"

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        text = f"{problem} " + "\n".join(f"{s} {self.tag}" for s in steps)
        ids = self.tokenizer.encode(text)
        tag_id = self.tokenizer.encode(self.tag, add_special_tokens=False)[-1]
        return Encoded(input_ids=ids, tag_positions=_tag_positions(ids, tag_id))


@CONVENTIONS.register("rlhflow")
class RLHFlowConvention(_PlusMinus):
    """Chat turns: user = problem + step 1, then one user turn per step, each answered by ``+``.

    The reference reads ``logits[:, -3]`` after ``apply_chat_template`` of every growing conversation
    (one forward per step). The template renders a shorter conversation as a prefix of the longer one,
    so the same positions in the full conversation give the same scores in one forward pass.
    """

    name = "rlhflow"

    def _ids(self, messages: list[dict[str, str]]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
        return self.tokenizer.encode(text, add_special_tokens=False)

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        messages: list[dict[str, str]] = []
        positions: list[int] = []
        for k, step in enumerate(steps):
            messages += [
                {"role": "user", "content": f"{problem} {step}" if k == 0 else step},
                {"role": "assistant", "content": self.good},
            ]
            positions.append(len(self._ids(messages)) - 3)
        ids = self._ids(messages) if messages else self.tokenizer.encode(problem)
        return Encoded(input_ids=ids, tag_positions=positions)


@CONVENTIONS.register("likelihood")
class LikelihoodConvention(Convention):
    """Any causal LM as a zero-shot step verifier: a step's score is the *lowest* probability the LM
    gives one of its tokens (the step text and its closing newline) after the problem and the steps
    before it, in the policy layout (``problem\\n``, one step per line).

    Why it works where the LM knows the task: a wrong step contains at least one token the LM would not
    have written (a wrong digit, a quantity that is not in the problem, an answer before the last
    operation), and one improbable token is enough to flag the step. It needs no step labels, so it is
    a baseline every trained PRM should beat, and a check that a pretrained backbone learned what a
    verifier needs. Scores are not calibrated probabilities of correctness: tune the threshold on dev
    traces (``prmkit eval processbench --dev``). ``tag_positions`` hold each step's last token.

    An agent step's tool results (the context it reads) are left out of its minimum for any LM, and for
    a prmkit likelihood PRM whose spec says ``min_over: own``: a result is as surprising after a right
    step as after a wrong one. A PRM trained over whole inputs (``input``) is read as it was trained.
    A PRM whose spec says ``surprisal: excess`` is read by each token's log-probability plus the entropy
    of the prediction there (``prmkit.modeling.spec.token_logp``); any other LM by the plain one.
    """

    name = "likelihood"
    auto_class = "AutoModelForCausalLM"

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        self.spec: PrmSpec | None = read_spec(config)  # a prmkit likelihood PRM; None for any other LM
        self.max_length = getattr(config, "max_position_embeddings", None) or max_length
        self.template = StepTemplate.named("newline")
        self.min_over = self.spec.min_over if self.spec is not None else "own"
        self.surprisal = self.spec.surprisal if self.spec is not None else "raw"

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        return encode_trace(self.tokenizer, self.template, problem, steps)

    def read(self, logits: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        read = token_logp(logits, batch["input_ids"], self.surprisal)  # [k, t] = log p(x_t | x_<t) (+ H)
        out = []
        for k, r in enumerate(rows):
            start, scores = r.prompt_length, []
            skips = r.context_tokens if self.min_over == "own" else []
            for j, end in enumerate(r.tag_positions):  # step j: tokens start..end, its newline included
                skip = skips[j] if j < len(skips) else 0  # its tool results: read, not written
                scores.append(float(read[k, start + skip : end + 1].min().clamp(max=0).exp()))
                start = end + 1
            out.append(scores)
        return out


def detect(path: str | Path, config: Any, tokenizer: Any) -> str:
    """The convention of a checkpoint folder, from what it declares (no guessing on model names)."""
    spec = read_spec(config)
    if spec is not None:
        from prmkit.modeling.heads import head

        return head(spec.head).convention
    evidence = written_by_prmkit(path)
    if evidence is not None:  # its block was lost: another convention would read it with other scores
        raise InputError(
            [
                Issue(
                    str(Path(path) / "config.json"),
                    None,
                    "prmkit",
                    f"the block prmkit writes ({evidence} says prmkit made this checkpoint)",
                    "no 'prmkit' key",
                    "checkpoint",
                    "restore it (process_card.json's 'model' section holds its values) or save the model "
                    "again with prmkit; pass --convention NAME only to read it another way on purpose",
                )
            ],
            skippable=False,
        )
    archs = getattr(config, "architectures", None) or []
    if any(a.endswith("ForProcessRewardModel") for a in archs):
        return "qwen"
    if any(a.endswith("ForTokenClassification") for a in archs):
        return "trl"
    raise ValueError(  # a causal LM could be Math-Shepherd or RLHFlow style: the caller must say
        f"{path}: cannot tell which PRM convention this checkpoint follows; "
        f"pass convention= one of {', '.join(CONVENTIONS.names())}"
    )


def load_convention(path: str | Path, convention: str | None = None, trust_remote_code: bool = False):
    """(model, convention instance) for a checkpoint folder."""
    from transformers import AutoConfig

    check_checkpoint(path)  # a broken folder or a missing local path fails here, located, at once
    with loading(path):
        config = AutoConfig.from_pretrained(str(path), trust_remote_code=trust_remote_code)
        tokenizer = load_tokenizer(path, trust_remote_code)
        name = convention or detect(path, config, tokenizer)
        cls = CONVENTIONS.get(name)
        model = cls.load_model(path, trust_remote_code=trust_remote_code)
        return model, cls(tokenizer, model.config)
