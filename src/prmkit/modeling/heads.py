"""The head kinds a prmkit checkpoint can have, one table looked up by name (``PrmSpec.head``).

A head kind decides five things that used to be if-chains on ``== "likelihood"`` in four packages:

- the transformers auto class the checkpoint loads with (and the model :func:`Head.build` makes),
- the step template it is trained and read with (fixed, or the run's ``separator``),
- the scoring convention that reads it (``prmkit.scoring.CONVENTIONS``),
- the training objective (a lazy ``"module:attr"`` hook; None: the step-tag loss) and, where the
  training text is more than the trace (the critic's verification chains), how its rows are made,
- what its model card says: Hub pipeline tag, title, summary and the usage snippet (plain transformers,
  vLLM), written by ``prmkit.cards`` (the only writer of model cards).

A new head kind is one :class:`Head` registered in :data:`HEADS` (and its name added to ``PrmSpec.head``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prmkit.core.registry import Registry
from prmkit.modeling.spec import PrmSpec


@dataclass(frozen=True)
class Head:
    """One head kind; the text fields are ``str.format`` templates over :func:`card_fields`."""

    name: str
    auto_class: str
    """The transformers class the checkpoint loads with (``AutoModelFor...``)."""
    build: Callable[[Any, PrmSpec, bool], Any]
    """``build(base, spec, trust_remote_code)``: the model to train, from a config or a local folder."""
    template: str | None
    """StepTemplate name the head always uses; None: the training run's ``separator``."""
    convention: str
    """The scoring convention that reads a checkpoint of this head."""
    objective: str | None
    """Lazy ``"module:attr"`` of the training loss ``f(logits, batch, lm_weight=, noise=)``; None: the
    step-tag loss of ``prmkit.training.loop``."""
    num_labels: tuple[int, ...]
    """Class counts the head can be trained with."""
    reads_tag: bool
    """Whether a step's score is read at a tag token (so the card shows the tag and classes)."""
    described: str
    """What the head is, in one line of the full card's process table."""
    reads_at: str
    """How a step is scored, as the process card's step definition says it."""
    pipeline_tag: str
    """The Hub pipeline tag of the model card."""
    card_tags: str
    title: str
    summary: str
    usage: str
    """The model card's usage sections (``## Score steps with transformers only``, ``## Serve with vLLM``)."""
    examples: str | None = None
    """Lazy ``"module:attr"`` that makes the training rows, with ``prmkit.training.data.make_examples``'
    signature, for a head whose training text is more than the trace (the critic's chains); None:
    ``make_examples``."""


HEADS: Registry[Head] = Registry("PRM head")


def head(name: str) -> Head:
    """The head kind called ``name`` (an unknown one answers with the known names)."""
    return HEADS.get(name)


NAMES_NOTE = (
    "\nClass names: `LABEL_1` = the step is correct, `LABEL_0` = it is wrong (transformers' default names,"
    "\nwhich TRL's PRMTrainer checkpoints and Hugging Face's ProcessBench script read)."
)


def card_fields(spec: PrmSpec, path: str, base: str | None) -> dict[str, Any]:
    """The values the model card templates read (each head uses the ones it needs)."""
    names = spec.id2label()
    return {
        "base": base or "none (trained from scratch)",
        "kind_upper": spec.kind.upper(),
        "what": "process reward model (one score per step)"
        if spec.kind == "prm"
        else "outcome reward model (trained on final-answer correctness; read at each step it scores the prefix)",
        "sep": spec.template.separator.encode("unicode_escape").decode(),
        "sep_repr": repr(spec.template.separator),
        "positive": spec.positive_labels,
        "pos_names": ", ".join(names[i] for i in spec.positive_labels if i in names),
        "names_note": NAMES_NOTE if spec.num_labels == 2 else "",
        "tag": spec.template.tag,
        "tag_id": spec.tag_id,
        "agg": spec.aggregation,
        "scale": spec.label_scale,
        "threshold": spec.threshold,
        "path": path,
        "prompt": repr(spec.template.prompt_template),
        "surprisal": spec.surprisal,
        "verify_tokens": spec.verify_tokens,
    }


def _classifier(base: Any, spec: PrmSpec, trust_remote_code: bool) -> Any:
    from prmkit.modeling.backbone import token_classifier

    return token_classifier(base, spec.num_labels, trust_remote_code, spec.id2label())


def _causal_lm(base: Any, spec: PrmSpec, trust_remote_code: bool) -> Any:
    from prmkit.modeling.backbone import causal_lm

    return causal_lm(base, trust_remote_code)


CLASSIFIER_USAGE = """## Score steps with transformers only

```python
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

path = "{path}"
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForTokenClassification.from_pretrained(path).eval()
problem, steps = "...", ["step one", "step two"]
text = {prompt}.replace("{{problem}}", problem) + "".join(s + {sep_repr} for s in steps)
ids = tok(text, return_tensors="pt").input_ids
with torch.no_grad():
    probs = model(ids).logits[0].softmax(-1)
step_scores = probs[ids[0] == {tag_id}][:, {positive}].sum(-1)
```

## Serve with vLLM

`vllm serve {path} --runner pooling` then POST `/pooling` with `"task": "token_classify"`, or
`--pooler-config '{{"pooling_type": "STEP", "step_tag_id": {tag_id}}}'` to keep only the tag rows.
"""

LIKELIHOOD_USAGE = """## Score steps with transformers only

```python
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

path = "{path}"
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path).eval()
problem, steps = "...", ["step one", "step two"]
ids = tok(problem + "\\n").input_ids
spans = []
for s in steps:
    piece = tok(s + "\\n", add_special_tokens=False).input_ids
    spans.append((len(ids), len(ids) + len(piece)))
    ids += piece
with torch.no_grad():
    logp = model(torch.tensor([ids])).logits[0, :-1].log_softmax(-1)
read = logp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0]  # log p(x_t | x_<t) at t - 1
if "{surprisal}" == "excess":  # config.json's prmkit.surprisal: plus the entropy of each prediction
    read = read - (logp.exp() * logp).sum(-1)
step_scores = [read[a - 1 : b - 1].min().clamp(max=0).exp().item() for a, b in spans]
```

## Serve with vLLM

`vllm serve {path}`, then request the prompt's log-probabilities (`prompt_logprobs: 0` with
`max_tokens: 1` on `/v1/completions`) and take each step's minimum, as above. This checkpoint's
read-out is `surprisal: {surprisal}`; `excess` needs each prediction's entropy, which vLLM's top-k
`prompt_logprobs` do not give: score it with the snippet above or `prmkit serve`.
"""

HEADS.register(
    "classifier",
    Head(
        name="classifier",
        auto_class="AutoModelForTokenClassification",
        build=_classifier,
        template=None,
        convention="prmkit",
        objective=None,
        num_labels=(2, 3),
        reads_tag=True,
        described="a token-classification head; step score = positive-class probability at the step tag",
        reads_at="scored at the tag token of the separator written after it",
        pipeline_tag="token-classification",
        card_tags="prm, prmkit, process-reward-model",
        title="{kind_upper} trained with prmkit",
        summary="""A {what}. Each step is followed by `{sep}`; the step's score is the softmax probability of classes
{positive} (`{pos_names}`) read at the tag token `{tag}` (id {tag_id}). Default aggregation: `{agg}`.{names_note}
Label scale trained on: {scale}. See `process_card.json` for the label sources, data split and dev
metrics.""",
        usage=CLASSIFIER_USAGE,
    ),
)

HEADS.register(
    "likelihood",
    Head(
        name="likelihood",
        auto_class="AutoModelForCausalLM",
        build=_causal_lm,
        template="newline",
        convention="likelihood",
        objective="prmkit.training.likelihood:likelihood_loss",
        num_labels=(2,),
        reads_tag=False,
        described="a causal LM; step score = lowest token probability in the step",
        reads_at="scored by the lowest probability the causal LM gives one of its tokens (likelihood head)",
        pipeline_tag="text-generation",
        card_tags="prm, prmkit, process-reward-model, generative-verifier",
        title="PRM (likelihood head) trained with prmkit",
        summary="""A process reward model that is a causal language model: the problem, a newline, then one step per line;
a step's score is the **lowest probability the model gives any token of the step** (its text and its
closing newline), given the problem and the steps before it. A wrong step contains a token the model
would not have written; fine-tuning on step labels (label scale: {scale}) sharpened that. Predicted
first error: the first step scoring below {threshold:.4g} (tuned on dev). Default aggregation: `{agg}`.
An agent step is written as the tool results it reads (`<tool_response>` blocks), then its text and
calls; with `min_over: own` in `config.json`'s `prmkit` block the minimum leaves those results out (start
each span after them in the recipe below). With `surprisal: excess` (this one: `{surprisal}`) a token's
log-probability is read plus the entropy of the model's prediction there, so a free choice among several
right continuations is not mistaken for an error. See `process_card.json` for the label sources, data
split and dev metrics.""",
        usage=LIKELIHOOD_USAGE,
    ),
)

CRITIC_USAGE = """## Score steps with transformers only

The critic writes a check after each step, then its verdict; a step's score is P(correct) where the
verdict's first token is predicted (greedy, one chain: what `prmkit score {path}` does by default).

```python
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

path = "{path}"
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path).eval()
problem, steps = "...", ["step one", "step two"]
enc = lambda s: tok(s, add_special_tokens=False).input_ids
good, bad = enc("correct"), enc("incorrect")
ids, step_scores = [tok.bos_token_id] + enc(problem + "\\n"), []
for s in steps:
    ids += enc(s + "\\n")
    out = model.generate(torch.tensor([ids]), max_new_tokens={verify_tokens}, do_sample=False,
                         stop_strings=["\\\\boxed{{"], tokenizer=tok, pad_token_id=tok.pad_token_id)
    check = tok.decode(out[0, len(ids):], skip_special_tokens=True).split("\\\\boxed{{")[0]
    ids += enc(check.split("\\n")[0].rstrip() + " \\\\boxed{{")
    with torch.no_grad():
        last = model(torch.tensor([ids])).logits[0, -1]
    step_scores.append(torch.sigmoid(last[good[0]] - last[bad[0]]).item())
    ids += (good if step_scores[-1] >= 0.5 else bad) + enc("}}\\n")
```

More verifier compute: `prmkit score {path} --verify-k 8 --verify-temperature 0.7` samples 8 chains
and averages each step's P(correct) (`--verify-combine vote`: the share of chains that say correct).
"""

HEADS.register(
    "critic",
    Head(
        name="critic",
        auto_class="AutoModelForCausalLM",
        build=_causal_lm,
        template="newline",
        convention="critic",
        objective="prmkit.training.critic:critic_loss",
        num_labels=(2,),
        reads_tag=False,
        described="a causal LM that writes a check after each step; step score = P(verdict = correct)",
        reads_at="scored by the verdict the critic writes after its own check of the step (critic head)",
        pipeline_tag="text-generation",
        card_tags="prm, prmkit, process-reward-model, generative-verifier, critic",
        title="PRM (critic head) trained with prmkit",
        summary="""A generative verifier: a causal language model that, after each step of a solution, writes a short
check of it and a verdict, `\\boxed{{correct}}` or `\\boxed{{incorrect}}`. It was fine-tuned on a teacher's
verification chains, kept only where their verdicts agreed with a small labelled set (process-based
filtering; `process_card.json` names the teacher, the filter set and its size). A step's score is the
probability of `correct` at its verdict, with the checks of earlier steps the model's own. Predicted
first error: the first step scoring below {threshold:.4g} (tuned on dev). Default aggregation: `{agg}`.""",
        usage=CRITIC_USAGE,
        examples="prmkit.training.critic:critic_examples",
    ),
)
