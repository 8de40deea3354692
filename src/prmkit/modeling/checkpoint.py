"""Save a step-scoring model as one ordinary Hugging Face folder a reader needs nothing else for.

``config.json`` (with the ``prmkit`` block), ``model.safetensors``, the tokenizer files, a model card
``README.md`` with a scoring snippet that uses only transformers, and ``process_card.json``. Nothing is
pickled: weights go through safetensors, metadata through JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prmkit.cards import ProcessCard, write_process_card
from prmkit.core.files import atomic_write
from prmkit.modeling.spec import PrmSpec, write_spec

CARD_TEMPLATE = """---
library_name: transformers
pipeline_tag: token-classification
tags: [prm, prmkit, process-reward-model]
base_model: {base}
---

# {kind_upper} trained with prmkit

A {what}. Each step is followed by `{sep}`; the step's score is the softmax probability of classes
{positive} (`{pos_names}`) read at the tag token `{tag}` (id {tag_id}). Default aggregation: `{agg}`.
Label scale trained on: {scale}. See `process_card.json` for the label sources, data split and dev
metrics.

## Score steps with transformers only

```python
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

path = "{path}"
tok = AutoTokenizer.from_pretrained(path)
model = AutoModelForTokenClassification.from_pretrained(path).eval()
problem, steps = "...", ["step one", "step two"]
text = {prompt!r}.replace("{{problem}}", problem) + "".join(s + {sep!r} for s in steps)
ids = tok(text, return_tensors="pt").input_ids
with torch.no_grad():
    probs = model(ids).logits[0].softmax(-1)
step_scores = probs[ids[0] == {tag_id}][:, {positive}].sum(-1)
```

## Serve with vLLM

`vllm serve {path} --runner pooling` then POST `/pooling` with `"task": "token_classify"`, or
`--pooler-config '{{"pooling_type": "STEP", "step_tag_id": {tag_id}}}'` to keep only the tag rows.
"""


LIKELIHOOD_CARD_TEMPLATE = """---
library_name: transformers
pipeline_tag: text-generation
tags: [prm, prmkit, process-reward-model, generative-verifier]
base_model: {base}
---

# PRM (likelihood head) trained with prmkit

A process reward model that is a causal language model: the problem, a newline, then one step per line;
a step's score is the **lowest probability the model gives any token of the step** (its text and its
closing newline), given the problem and the steps before it. A wrong step contains a token the model
would not have written; fine-tuning on step labels (label scale: {scale}) sharpened that. Predicted
first error: the first step scoring below {threshold:.4g} (tuned on dev). Default aggregation: `{agg}`.
See `process_card.json` for the label sources, data split and dev metrics.

## Score steps with transformers only

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
    logp = model(torch.tensor([ids])).logits[0].log_softmax(-1)
token_p = logp[:-1].gather(1, torch.tensor(ids[1:])[:, None])[:, 0].exp()  # p(x_t | x_<t) at t - 1
step_scores = [token_p[a - 1 : b - 1].min().item() for a, b in spans]
```

## Serve with vLLM

`vllm serve {path}`, then request the prompt's log-probabilities (`prompt_logprobs: 0` with
`max_tokens: 1` on `/v1/completions`) and take each step's minimum, as above.
"""


def model_card(spec: PrmSpec, path: str, base: str | None) -> str:
    if spec.head == "likelihood":
        return LIKELIHOOD_CARD_TEMPLATE.format(
            base=base or "none (trained from scratch)", scale=spec.label_scale, threshold=spec.threshold,
            agg=spec.aggregation, path=path,
        )  # fmt: skip
    names = spec.id2label()
    return CARD_TEMPLATE.format(
        base=base or "none (trained from scratch)",
        kind_upper=spec.kind.upper(),
        what="process reward model (one score per step)"
        if spec.kind == "prm"
        else "outcome reward model (trained on final-answer correctness; read at each step it scores the prefix)",
        sep=spec.template.separator.encode("unicode_escape").decode(),
        positive=spec.positive_labels,
        pos_names=", ".join(names[i] for i in spec.positive_labels),
        tag=spec.template.tag,
        tag_id=spec.tag_id,
        agg=spec.aggregation,
        scale=spec.label_scale,
        path=path,
        prompt=spec.template.prompt_template,
    )


def save_checkpoint(
    model: Any, tokenizer: Any, spec: PrmSpec, directory: str | Path, card: ProcessCard | None = None
) -> Path:
    """Write the folder; returns its path. Overwrites files of an earlier save in place."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_spec(model.config, spec)
    model.save_pretrained(str(directory), safe_serialization=True)
    tokenizer.save_pretrained(str(directory))
    base = card.base_model if card is not None else None
    with atomic_write(directory / "README.md") as fh:
        fh.write(model_card(spec, str(directory), base))
    if card is not None:
        write_process_card(directory, card)
    return directory
