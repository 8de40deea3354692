"""The PRM block a checkpoint carries in ``config.json`` (key ``prmkit``) and in its process card.

Everything a reader needs to score steps without prmkit: the input template, the tag token and its id,
which classes mean "correct", the label scale trained on and the default aggregation. vLLM's pooling
runner needs exactly ``step_tag_id`` from here (``--pooler-config '{"pooling_type": "STEP",
"step_tag_id": ...}'``); a ``*ForTokenClassification`` head is served as ``token_classify``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from prmkit.modeling.template import StepTemplate

SPEC_KEY = "prmkit"
SPEC_VERSION = "prm-1"

LABELS_2 = {0: "LABEL_0", 1: "LABEL_1"}
"""Transformers' default names, kept for 2-class heads: LABEL_1 is "the step is correct", LABEL_0 "it is
wrong". Tools look for these names (Hugging Face's ProcessBench script and TRL's PRMTrainer checkpoints
read ``LABEL_1`` as correct), so "correct"/"incorrect" made them read every step as wrong; the meaning is
in ``positive_labels`` and the model card."""
LABELS_3 = {0: "negative", 1: "neutral", 2: "positive"}


class PrmSpec(BaseModel):
    """What a step-scoring checkpoint means (written into config.json and the process card)."""

    model_config = ConfigDict(extra="forbid")

    head: Literal["classifier", "likelihood", "critic"] = "classifier"
    """``classifier``: a token-classification head read at the step tag (``*ForTokenClassification``);
    ``likelihood``: a causal LM whose step score is the lowest probability it gives a token of the step
    (``*ForCausalLM``, read with the ``likelihood`` convention); ``critic``: a causal LM that writes a
    check and a verdict after each step, scored P(verdict = correct) (the ``critic`` convention)."""
    kind: Literal["prm", "orm"] = "prm"
    """``prm``: trained on per-step labels; ``orm``: trained on the final answer only (read at the last
    tag in training; at every tag in scoring, where it estimates whether the prefix ends right)."""
    template: StepTemplate = StepTemplate()
    tag_id: int
    """Token id of ``template.tag``: vLLM's ``step_tag_id``."""
    num_labels: Literal[2, 3] = 2
    positive_labels: list[int] = [1]
    """Classes whose probabilities add up to the step score (2-class: [1]; 3-class: neutral + positive,
    since a neutral step is true, only useless)."""
    label_scale: Literal["hard", "soft"] = "hard"
    aggregation: str = "min"
    """Default way to turn step scores into one trace score (see prmkit.scoring.AGGREGATIONS)."""
    max_length: int = 1024
    min_over: Literal["own", "input"] = "input"
    """Likelihood head: the tokens of a step its lowest probability is taken over. ``own``: what the step
    writes (text, calls, closing newline), the tool results it reads left out; ``input``: its whole input,
    results included (the default, so checkpoints written before this field read as they were trained).
    The two differ only for agent steps; a classifier head ignores it."""
    surprisal: Literal["raw", "excess"] = "raw"
    """Likelihood head: what a token's probability is measured against. ``raw``: its log-probability
    (the default, so checkpoints written before this field read as they were trained); ``excess``: its
    log-probability plus the entropy of the model's prediction there (see :func:`token_logp`)."""
    verify_tokens: int = 48
    """Critic head: the most tokens one check it writes may take when scored (the longest check it was
    trained on, plus a margin); ``--verify-tokens`` overrides it."""
    threshold: float = 0.5
    """First-error threshold: a step scoring below it is predicted wrong (tuned on dev in training)."""
    version: str = SPEC_VERSION

    def id2label(self) -> dict[int, str]:
        return dict(LABELS_2 if self.num_labels == 2 else LABELS_3)


def write_spec(config: Any, spec: PrmSpec) -> None:
    """Store the spec on an HF config (saved with it) and set the label names from it. A field only the
    critic head reads is left out of other heads' configs, which stay as they were before it existed."""
    only_critic = None if spec.head == "critic" else {"verify_tokens"}
    setattr(config, SPEC_KEY, spec.model_dump(mode="json", exclude=only_critic))
    config.id2label = spec.id2label()
    config.label2id = {v: k for k, v in spec.id2label().items()}


def read_spec(config: Any) -> PrmSpec | None:
    """The spec stored on an HF config, or None when the checkpoint was not made by prmkit."""
    raw = getattr(config, SPEC_KEY, None)
    return None if raw is None else PrmSpec.model_validate(raw)


def token_logp(logits: Any, input_ids: Any, surprisal: str = "raw") -> Any:
    """A causal LM's read-out of each token it was given, ``(B, L)``: position ``t`` holds
    ``log p(x_t | x_<t)`` (0 at ``t = 0``, which nothing predicts).

    With ``surprisal="excess"`` the entropy of the prediction at ``t`` is added: the token's surprisal
    less the surprisal the model expected there. Why: where several continuations are right (which
    entity an agent looks up next, which quantity a solution takes first) every one of them is
    improbable, and a right step's least likely token is such a choice; a wrong digit copied from a
    tool result is improbable where the model was sure of the right one. The raw minimum cannot tell the
    two apart; the excess one scores a free choice near 0 and the slip far below it
    (docs/agentworld.md). The entropy is a reference level, not a target: it carries no gradient, so
    training cannot raise a step's score by making the model unsure.
    """
    return token_reads(logits, input_ids, surprisal)[1]


def token_reads(logits: Any, input_ids: Any, surprisal: str = "raw") -> tuple[Any, Any]:
    """``(log p, read)``: the plain per-token log-probabilities (an LM loss needs them) and the
    :func:`token_logp` read-out named by ``surprisal``, from one log-softmax."""
    if surprisal not in ("raw", "excess"):
        raise ValueError(f"surprisal must be 'raw' or 'excess', found {surprisal!r}")
    logp = logits[:, :-1].float().log_softmax(-1)
    raw = logp.new_zeros(input_ids.shape)
    raw[:, 1:] = logp.gather(-1, input_ids[:, 1:, None])[..., 0]
    if surprisal == "raw":
        return raw, raw
    read = raw.clone()
    read[:, 1:] -= (logp.exp() * logp).sum(-1).detach()
    return raw, read
