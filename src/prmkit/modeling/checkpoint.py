"""Save a step-scoring model as one ordinary Hugging Face folder a reader needs nothing else for.

``config.json`` (with the ``prmkit`` block), ``model.safetensors``, the tokenizer files, a model card
``README.md`` with a scoring snippet that uses only transformers, and ``process_card.json``. Nothing is
pickled: weights go through safetensors, metadata through JSON.

Reading one back goes through :func:`check_checkpoint` first: a folder that cannot load (no weights, no
config, no tokenizer, bad JSON, a damaged safetensors header, a garbled ``prmkit`` block) is refused with
one located line per problem before transformers sees it, and a local path that does not exist fails at
once instead of being looked up on the Hugging Face Hub.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from prmkit.core.errors import InputError, Issue, issues_from_validation, short
from prmkit.core.files import atomic_write
from prmkit.core.registry import suggest
from prmkit.modeling.spec import SPEC_KEY, PrmSpec, write_spec

CARD_TEMPLATE = """---
library_name: transformers
pipeline_tag: token-classification
tags: [prm, prmkit, process-reward-model]
base_model: {base}
---

# {kind_upper} trained with prmkit

A {what}. Each step is followed by `{sep}`; the step's score is the softmax probability of classes
{positive} (`{pos_names}`) read at the tag token `{tag}` (id {tag_id}). Default aggregation: `{agg}`.{names_note}
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


NAMES_NOTE = (
    "\nClass names: `LABEL_1` = the step is correct, `LABEL_0` = it is wrong (transformers' default names,"
    "\nwhich TRL's PRMTrainer checkpoints and Hugging Face's ProcessBench script read)."
)


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
        names_note=NAMES_NOTE if spec.num_labels == 2 else "",
        tag=spec.template.tag,
        tag_id=spec.tag_id,
        agg=spec.aggregation,
        scale=spec.label_scale,
        path=path,
        prompt=spec.template.prompt_template,
    )


class Card(Protocol):
    """What :func:`save_checkpoint` needs of a process card (``prmkit.cards.ProcessCard`` is one): its
    base model for the model card, and its JSON. ``cards`` sits above ``modeling`` in the layers, so the
    card comes in as an argument and is never imported here."""

    base_model: str | None

    def model_dump_json(self, *, indent: int | None = None) -> str: ...


CARD_FILE = "process_card.json"


def save_checkpoint(
    model: Any, tokenizer: Any, spec: PrmSpec, directory: str | Path, card: Card | None = None
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
        with atomic_write(directory / CARD_FILE) as fh:  # as prmkit.cards.write_process_card writes it
            fh.write(card.model_dump_json(indent=2) + "\n")
    return directory


WEIGHTS = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")
JSON_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "generation_config.json",
    "model.safetensors.index.json",
)
FOLDER_FIX = (
    "a checkpoint folder holds config.json, the weights and the tokenizer (save_pretrained writes them)"
)


def _issue(
    file: Path | str, field: str, expected: str, found: str, fix: str = "", line: int | None = None
) -> Issue:
    return Issue(str(file), line, field, expected, found, "checkpoint", fix)


def is_hub_id(name: str) -> bool:
    """Whether ``name`` reads as a Hub repo id (``org/name``) rather than a local path that is missing.

    A name without an owner, or whose first part is a local folder (``runs/prm-typo``), is taken as a
    local path, unless the Hub cache already holds it (``gpt2``): a typo must fail at once, not after the
    Hub has been tried for half a minute.
    """
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    if "/" in name and not Path(name.split("/")[0]).exists():
        return True
    return isinstance(try_to_load_from_cache(name, "config.json"), str)


def nearby_folders(name: str) -> list[str]:
    """The folders beside where ``name`` points (its parent's subfolders, written as ``name`` would be):
    the candidates a mistyped checkpoint path is compared with."""
    parent = Path(name).expanduser().parent
    try:
        entries = sorted(p.name for p in parent.iterdir() if p.is_dir())
    except OSError:
        return []
    return [e if str(Path(name).parent) == "." else str(Path(name).parent / e) for e in entries]


def _read_json(path: Path, issues: list[Issue]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        issues.append(_issue(path, "(json)", "valid JSON", err.msg, line=err.lineno))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        issues.append(_issue(path, "(file)", "a readable JSON file", str(err)[:120]))
    return None


def _check_config(path: Path, config: Any, issues: list[Issue]) -> None:
    if not isinstance(config, dict):
        issues.append(_issue(path, "(config)", "a JSON object", short(config)))
        return
    if not isinstance(config.get("model_type"), str):
        found = short(config.get("model_type", "nothing"))
        issues.append(_issue(path, "model_type", "the architecture's name (e.g. 'llama')", found, FOLDER_FIX))
    if SPEC_KEY in config:
        try:
            PrmSpec.model_validate(config[SPEC_KEY], strict=True)
        except ValidationError as err:
            fix = "restore the block (process_card.json's 'model' section holds its values) or save the model again"
            for issue in issues_from_validation(err, str(path), None, prefix=f"{SPEC_KEY}."):
                issues.append(
                    Issue(issue.file, None, issue.field, issue.expected, issue.found, "checkpoint", fix)
                )


def _check_safetensors(folder: Path, issues: list[Issue]) -> None:
    """Open each safetensors file's header (cheap: nothing is loaded) so a damaged one is named."""
    from safetensors import safe_open

    index = folder / "model.safetensors.index.json"
    files = [folder / "model.safetensors"]
    if index.exists():
        data = _read_json(index, issues)
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(weight_map, dict):
            issues.append(_issue(index, "weight_map", "a mapping of tensor names to files", "nothing"))
            return
        files = [folder / str(name) for name in sorted(set(weight_map.values()))]
    for file in files:
        if not file.exists():
            if index.exists():
                issues.append(_issue(file, "(file)", "a weights shard named in the index", "no such file"))
            continue
        try:
            with safe_open(str(file), framework="numpy"):
                pass
        except Exception as err:
            found = short(str(err), 80)
            issues.append(
                _issue(file, "(safetensors)", "a safetensors file", found, "save the weights again")
            )


def check_checkpoint(path: str | Path) -> Path | None:
    """The local checkpoint folder, checked; None when ``path`` names a Hub repo (transformers fetches it).

    Every problem is collected into one :class:`InputError` (``file: field: expected ..., found ...``).
    """
    name = str(path)
    folder = Path(path).expanduser()
    if not folder.exists():
        if is_hub_id(name):
            return None
        fix = "check the path (a Hugging Face model id reads org/name)" + suggest(
            name, nearby_folders(name), ". "
        )
        raise InputError([_issue(name, "(checkpoint)", "a checkpoint folder", "no such path", fix)], False)
    if not folder.is_dir():
        raise InputError([_issue(name, "(checkpoint)", "a checkpoint folder", "a file", FOLDER_FIX)], False)
    issues: list[Issue] = []
    config_path = folder / "config.json"
    if not config_path.exists():
        issues.append(_issue(config_path, "(file)", "the model's config", "no such file", FOLDER_FIX))
    for file in JSON_FILES:
        if (folder / file).exists() and file != "model.safetensors.index.json":
            data = _read_json(folder / file, issues)
            if file == "config.json" and data is not None:
                _check_config(config_path, data, issues)
    if not any((folder / f).exists() for f in WEIGHTS):
        issues.append(
            _issue(folder, "(weights)", "model.safetensors (or sharded weights)", "none", FOLDER_FIX)
        )
    else:
        _check_safetensors(folder, issues)
    if not any((folder / f).exists() for f in TOKENIZER):
        found = "none"
        issues.append(
            _issue(folder, "(tokenizer)", "tokenizer.json or tokenizer_config.json", found, FOLDER_FIX)
        )
    if issues:
        raise InputError(issues, skippable=False)
    return folder


@contextlib.contextmanager
def loading(path: str | Path) -> Iterator[None]:
    """Turn what transformers raises on a checkpoint it cannot load into one located :class:`InputError`.

    :func:`check_checkpoint` catches the common cases first with their place; this is the backstop for the
    rest (shapes that do not match the config, an unknown architecture, a Hub repo that does not exist).
    """
    from prmkit.core.registry import UnknownNameError

    try:
        yield
    except (InputError, UnknownNameError):
        raise
    except (OSError, ValueError, KeyError) as err:
        found = str(err).strip().split("\n")[0][:200]
        raise InputError(
            [_issue(path, "(checkpoint)", "a checkpoint transformers can load", found)], False
        ) from None


def written_by_prmkit(path: str | Path) -> str | None:
    """What in a checkpoint folder says prmkit wrote it (its process card, its model card's tag), or None."""
    folder = Path(path)
    if (folder / CARD_FILE).exists():
        return CARD_FILE
    readme = folder / "README.md"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        head = readme.read_text(encoding="utf-8")[:500]
        if head.startswith("---") and "prmkit" in head.split("---")[1]:
            return "README.md (tag prmkit)"
    return None
