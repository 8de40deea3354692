"""PRM conventions: how each family of checkpoints is loaded, fed and read, one registry entry each.

A convention says what loads the weights (a transformers auto class, or prmkit's native implementation
of a released family: the checkpoint's own code never runs), the weight names of its head, the
``architectures`` that declare it in ``config.json``, the input layout and where a step's score is read.
Never an if-chain on model ids:

- ``prmkit``        token classification at prmkit's step tag; template and classes from config.json
- ``trl``           TRL ``PRMTrainer``: token classification at the separator (``"\\n"``), LABEL_1 = correct
- ``likelihood``    any causal LM as a zero-shot verifier: the lowest probability of a token of the step
- ``critic``        prmkit's critic head: writes a check after each step, scored P(verdict = correct)
                    (:mod:`prmkit.scoring.critic`)
- the released families, in :mod:`prmkit.scoring.families`: ``qwen`` (Qwen2.5-Math-PRM), ``math-shepherd``,
  ``rlhflow``, ``skywork`` (Skywork-o1-Open-PRM), ``implicit`` (PRIME / EurusPRM), ``versaprm``,
  ``reasonflux`` (ReasonFlux-PRM-7B), ``universal`` (Universal-PRM-7B: reads the problem's reference answer)

Weights load exactly or not at all (:func:`prmkit.modeling.loading.load_exact`): a head the checkpoint
lacks, or one it has that the convention does not use, is refused with the convention that would read
it. A checkpoint is read by the convention it declares (:func:`detect`) or the one its spec names
(``qwen:PATH``, :func:`split_convention`). A plugin adds a convention through the ``prmkit.conventions``
entry-point group (a Convention subclass).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue
from prmkit.core.registry import Registry, RegistryError, resolve
from prmkit.modeling.backbone import load_tokenizer, position_limit
from prmkit.modeling.checkpoint import card_kind, check_checkpoint, loading, written_by_prmkit
from prmkit.modeling.loading import LoadOptions, load_exact
from prmkit.modeling.spec import PrmSpec, read_spec, token_logp
from prmkit.modeling.template import Encoded, StepTemplate, encode_traces

CONVENTIONS: Registry[type] = Registry("PRM convention", entry_points="prmkit.conventions")

CAUSAL_HEAD = ("lm_head.weight",)
"""A causal LM's head (absent from checkpoints that tie it to the embeddings)."""


class Convention:
    """Base: loads model + tokenizer, encodes a trace, turns logits at read positions into scores."""

    name = "base"
    auto_class = "AutoModelForTokenClassification"
    """What loads the weights: a transformers auto class, or a lazy ``"module:Class"`` of prmkit's own
    implementation of a released architecture."""
    architectures: tuple[str, ...] = ()
    """``config.json`` architectures that declare this convention (how :func:`detect` finds it)."""
    head: tuple[str, ...] = ("score.weight",)
    """Weight names of the head this convention reads (how a refusal names the convention that would
    read a checkpoint's leftover weights)."""
    spec: PrmSpec | None = None
    """What a prmkit checkpoint declares (template, head, its dev-tuned threshold); None for others."""
    takes_reference = False
    """Whether it reads the checkpoint against a reference model (``--reference``, ``--beta``)."""
    verifies = False
    """Whether it writes verifications when it scores (the critic head: ``--verify-k`` and the other
    ``verify_*`` options of :class:`~prmkit.modeling.loading.LoadOptions`)."""
    reads_any_lm = True
    """Whether any checkpoint of its auto class can be read by it (False: prmkit's own head only), so a
    refusal offers it for a causal LM."""

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        self.tokenizer, self.config = tokenizer, config
        self.max_length, self.length_source = declared_length(tokenizer, config, max_length)
        """The most tokens a trace may take and what declares it (:func:`declared_length`): the one limit
        ``--overlong`` applies at, for every convention."""

    @classmethod
    def causal(cls) -> bool:
        """Whether the model is a causal LM read through its vocabulary logits."""
        return cls.auto_class == "AutoModelForCausalLM"

    @classmethod
    def model_class(cls) -> Any:
        import transformers

        return resolve(cls.auto_class) if ":" in cls.auto_class else getattr(transformers, cls.auto_class)

    @classmethod
    def load_model(cls, path: str | Path, options: LoadOptions | None = None) -> Any:
        """The model, every weight as saved (see :func:`~prmkit.modeling.loading.load_exact`)."""
        return load_exact(cls.model_class(), path, cls.name, options, fix=readers)

    def problem_text(self, problem: Any) -> str:
        """What :meth:`encode` reads as the problem of a :class:`~prmkit.core.model.Problem`: its text; a
        reference-conditioned family adds the reference answer (and refuses a problem without one)."""
        return problem.text

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        raise NotImplementedError

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        """:meth:`encode` of many (problem, step texts) pairs; a family overrides it to tokenize them in
        one call."""
        return [self.encode(problem, steps) for problem, steps in items]

    def scores(self, rows: Any) -> Any:
        """Rows of logits gathered at the read positions (N, C or V) -> (N,) scores in [0, 1]."""
        raise NotImplementedError

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        """What :meth:`read` reads from one padded batch: by default the model's per-token outputs
        (B, L, C). A causal-LM convention makes only the vocabulary logits it reads."""
        out = model(**batch)
        return out[0] if isinstance(out, tuple) else out.logits

    def read(self, logits: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        """Each row's step scores from :meth:`forward`'s output (B, L, C): by default one read position
        per step (``tag_positions``) turned into a score by :meth:`scores`, in one gather for the batch."""
        b, p = read_index(rows, logits.device)
        return per_row(self.scores(logits[b, p]).tolist(), rows)


TOKENIZER_NO_LIMIT = 10**7
"""A tokenizer's ``model_max_length`` at or past this means "none declared" (transformers writes 1e30)."""


def declared_length(tokenizer: Any, config: Any, default: int = 4096) -> tuple[int, str]:
    """(tokens, what declares them): the longest input a checkpoint says it reads, the limit every
    convention applies ``--overlong`` at. In order: the ``prmkit`` block's ``max_length`` (the length its
    head was trained to read; ``prmkit train`` refuses one past a learned position table), the
    architecture's position limit (``max_position_embeddings``, GPT-2's ``n_positions`` ...:
    :func:`~prmkit.modeling.backbone.position_limit`), the tokenizer's ``model_max_length`` where the config
    declares none, else ``default``. Why one rule: a TRL token classifier declaring 512 positions was read
    at a fixed 4,096 and scored 2,945-token traces with no overlong count. A learned position table's size
    also caps it when the model is loaded (:class:`~prmkit.scoring.scorer.ModelScorer`)."""
    spec = read_spec(config)
    if spec is not None:
        return spec.max_length, "prmkit.max_length"
    declared = position_limit(config)
    if declared is not None:
        return declared
    told = getattr(tokenizer, "model_max_length", None)
    if isinstance(told, int) and 0 < told < TOKENIZER_NO_LIMIT:
        return told, "the tokenizer's model_max_length"
    return default, "prmkit's default max_length (the checkpoint declares none)"


def read_index(rows: Sequence[Encoded], device: Any) -> tuple[Any, Any]:
    """(row, position) of every step's read position in a batch, as two index tensors on ``device``."""
    import torch

    b = torch.tensor([k for k, r in enumerate(rows) for _ in r.tag_positions], dtype=torch.long)
    p = torch.tensor([p for r in rows for p in r.tag_positions], dtype=torch.long)
    return b.to(device), p.to(device)


def per_row(flat: Sequence[float], rows: Sequence[Encoded]) -> list[list[float]]:
    """A batch's step scores, in read-position order, cut back into one list per row."""
    out, start = [], 0
    for r in rows:
        out.append(list(flat[start : start + len(r.tag_positions)]))
        start += len(r.tag_positions)
    return out


LOGITS_BUDGET = 2**28
"""Most vocabulary logits (rows x positions x vocabulary) a causal-LM convention makes at once. A 7B LM's
152k-token vocabulary over a 16k-token batch would be 10 GB of float32: past this the projection runs over
slices of positions. The world's tiny LMs stay under it and take the model's own forward pass."""


def vocab_head(model: Any) -> Any | None:
    """The output projection of a causal LM whose logits are exactly ``head(hidden)``, or None where its
    forward pass does more (Gemma's soft-capping, Cohere's scale): then only the full pass is exact."""
    config = model.config
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None) not in (
        None,
        1,
    ):
        return None
    base = getattr(model, "base_model", None)
    return model.get_output_embeddings() if base is not None and base is not model else None


def causal_reads(model: Any, batch: dict[str, Any], surprisal: str = "raw") -> Any:
    """``token_logp`` of a causal LM over a batch, (B, L), the vocabulary projection made in slices of
    positions under :data:`LOGITS_BUDGET` (in one piece, through the model's own forward pass, below it)."""
    import torch

    ids = batch["input_ids"]
    rows, length = ids.shape
    head = vocab_head(model)
    step = max(1, LOGITS_BUDGET // (rows * int(model.config.vocab_size)))
    if head is None or step >= length:
        return token_logp(model(**batch).logits, ids, surprisal)
    hidden = model.base_model(**batch).last_hidden_state
    parts = [ids.new_zeros((rows, 1), dtype=torch.float32)]
    for start in range(0, length - 1, step):  # logits at start..end-1 predict tokens start+1..end
        end = min(start + step, length - 1)
        part = token_logp(head(hidden[:, start : end + 1]), ids[:, start : end + 1], surprisal)
        parts.append(part[:, 1:])
    return torch.cat(parts, dim=1)


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

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        return self.encode_many([(problem, steps)])[0]

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        if not hasattr(self, "_sep"):
            self._sep = self.template.separator_ids(self.tokenizer)
        return encode_traces(self.tokenizer, self.template, items, separator=self._sep)

    def scores(self, rows: Any) -> Any:
        return rows.float().softmax(-1)[:, self.positive].sum(-1)


@CONVENTIONS.register("trl")
class TrlConvention(PrmkitConvention):
    """TRL ``PRMTrainer``'s training layout (``tokenize_row``): ``[bos] prompt``, then each step and the
    separator, nothing between the prompt and the first step; LABEL_1 read at each separator's last
    token. (Hugging Face's ProcessBench script puts the separator after the prompt too: the ``prmkit``
    layout; docs/models.md#conventions says which tool uses which.)"""

    name = "trl"
    architectures = ("ForTokenClassification",)  # any token classifier without a prmkit block

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096, separator: str = "\n"):
        Convention.__init__(self, tokenizer, config, max_length)
        self.template = StepTemplate(prompt_template="{problem}", separator=separator, tag=separator)
        self.positive = [1]


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
    head = CAUSAL_HEAD

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        self.spec: PrmSpec | None = read_spec(config)  # a prmkit likelihood PRM; None for any other LM
        self.template = StepTemplate.named("newline")
        self.min_over = self.spec.min_over if self.spec is not None else "own"
        self.surprisal = self.spec.surprisal if self.spec is not None else "raw"

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        return self.encode_many([(problem, steps)])[0]

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        return encode_traces(self.tokenizer, self.template, items)

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        return causal_reads(model, batch, self.surprisal)  # [k, t] = log p(x_t | x_<t) (+ H)

    def read(self, read: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        if read.device.type != "cpu":  # one copy off the GPU, not one sync per step
            read = read.cpu()
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


_SPEC = re.compile(r"([a-z][a-z0-9_-]*):(.+)", re.S)


def split_convention(spec: str) -> tuple[str | None, str]:
    """``("qwen", "Qwen/Qwen2.5-Math-PRM-7B")`` for ``"qwen:Qwen/Qwen2.5-Math-PRM-7B"``: a scorer spec
    may name the convention that reads its checkpoint; ``(None, spec)`` when it names none."""
    match = _SPEC.fullmatch(spec)
    if match and match[1] in CONVENTIONS and not Path(spec).exists():
        return match[1], match[2]
    return None, spec


def _conventions() -> dict[str, type]:
    """Every convention that loads (a plugin that does not is left out of hints, not fatal here)."""
    out = {}
    for name in CONVENTIONS.names():
        try:
            out[name] = CONVENTIONS.get(name)
        except (RegistryError, ImportError, AttributeError):
            continue
    return out


def readers(unexpected: list[str], architectures: list[str]) -> str:
    """What would read a checkpoint whose weights ``unexpected`` a convention left unused: the conventions
    whose head those are, else the ones its ``architectures`` declare."""
    conventions = _conventions()
    names = [n for n, c in conventions.items()
             if c.head and set(c.head) <= set(unexpected) and c.reads_any_lm]  # fmt: skip
    most = max((len(conventions[n].head) for n in names), default=0)
    names = [n for n in names if len(conventions[n].head) == most]  # Qwen's head, not the lm_head beside it
    if names:
        return f"those are the head a {' or '.join(names)} checkpoint has: read it as " + " or ".join(
            f"{n}:PATH" for n in names
        )
    names = [
        n
        for n, c in conventions.items()
        if any(a.endswith(d) for a in architectures for d in c.architectures)
    ]
    if names:
        return f"its architectures ({', '.join(architectures)}) are read by {' or '.join(names)}"
    if any(a.endswith("ForCausalLM") for a in architectures):
        return f"it is a causal LM ({', '.join(architectures)}): read it as {causal_choices()}"
    return "read it with the convention of the architecture that saved it (config.json's architectures)"


def causal_choices() -> str:
    """The conventions a causal LM can be read by, as scorer specs (for errors and help)."""
    names = [n for n, c in _conventions().items() if c.causal() and c.reads_any_lm]
    return ", ".join(f"{n}:PATH" for n in names)


def detect(path: str | Path, config: Any) -> str:
    """The convention of a checkpoint folder, from what it declares (no guessing on model names): a
    prmkit block, else ``config.json``'s architectures (an exact name a convention lists, then a
    suffix such as ``ForTokenClassification``). A causal LM could be read several ways: refused with
    the choices (``prmkit pretrain``'s LM with ``likelihood:PATH``, how the pipeline reads it)."""
    spec = read_spec(config)
    if spec is not None:
        from prmkit.modeling.heads import head

        return head(spec.head).convention
    if card_kind(path) == "lm":  # an LM is a verifier only when read as one on purpose
        raise InputError(
            [
                Issue(
                    str(Path(path) / "process_card.json"), None, "kind", "a PRM or ORM checkpoint",
                    "'lm' (prmkit pretrain's language model)", "checkpoint",
                    f"read it as the zero-shot verifier it is in the pipeline with likelihood:{path}",
                )
            ],
            skippable=False,
        )  # fmt: skip
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
                    "again with prmkit; name a convention (CONVENTION:PATH) only to read it another way on "
                    "purpose",
                )
            ],
            skippable=False,
        )
    archs = list(getattr(config, "architectures", None) or [])
    conventions = _conventions()
    for exact in (True, False):
        for name, cls in conventions.items():
            if any(a == d if exact else a.endswith(d) for a in archs for d in cls.architectures):
                return name
    found = ", ".join(archs) or "no architectures"
    raise InputError(
        [
            Issue(
                str(Path(path) / "config.json") if Path(path).exists() else str(path),
                None,
                "architectures",
                "an architecture that says how its steps are scored (a prmkit block, "
                + ", ".join(sorted({d for c in conventions.values() for d in c.architectures}))
                + ")",
                found,
                "checkpoint",
                f"name the convention in the scorer: {causal_choices()} for a causal LM "
                f"(conventions: {', '.join(conventions)})",
            )
        ],
        skippable=False,
    )


def load_convention(
    path: str | Path, convention: str | None = None, options: LoadOptions | None = None
) -> tuple[Any, Convention]:
    """(model, convention instance) for a checkpoint folder or Hub id: ``convention`` when given, else
    what the folder declares; every weight loaded as saved, or refused."""
    from transformers import AutoConfig

    options = options or LoadOptions()
    remote = bool(options.trust_remote_code)
    check_checkpoint(path)  # a broken folder or a missing local path fails here, located, at once
    with loading(path):
        config = AutoConfig.from_pretrained(str(path), trust_remote_code=remote)
        tokenizer = load_tokenizer(path, remote)
        cls = CONVENTIONS.get(convention or detect(path, config))
        given = [f for f in ("reference", "beta") if getattr(options, f) is not None]
        if given and not cls.takes_reference:
            issue = Issue(str(path), None, given[0], f"no --{given[0]} (only an implicit PRM reads one)",
                          str(getattr(options, given[0])), "checkpoint", f"leave out --{given[0]}, or read "
                          "the checkpoint as implicit:PATH")  # fmt: skip
            raise InputError([issue], skippable=False)
        verify = {f: v for f, v in options.options().items() if f.startswith("verify_")}
        if verify and not cls.verifies:
            field = next(iter(verify))
            issue = Issue(str(path), None, field, "no --verify-* (only the critic head writes verifications)",
                          str(verify[field]), "checkpoint", f"leave out --{field.replace('_', '-')}")  # fmt: skip
            raise InputError([issue], skippable=False)
        model = cls.load_model(path, options)
        convention = cls(tokenizer, model.config)
    if verify:  # outside the loading context: a bad option is the user's, not the checkpoint's
        convention.configure(**{f.removeprefix("verify_"): v for f, v in verify.items()})
    return model, convention


for _name, _target in {
    "qwen": "QwenConvention",
    "math-shepherd": "MathShepherdConvention",
    "rlhflow": "RLHFlowConvention",
    "skywork": "SkyworkConvention",
    "implicit": "ImplicitConvention",
    "versaprm": "VersaPRMConvention",
    "reasonflux": "ReasonFluxConvention",
    "universal": "UniversalConvention",
}.items():
    CONVENTIONS.register(_name, f"prmkit.scoring.families:{_target}")
CONVENTIONS.register("critic", "prmkit.scoring.critic:CriticConvention")
