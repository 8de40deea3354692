"""Save a step-scoring model as one ordinary Hugging Face folder a reader needs nothing else for.

``config.json`` (with the ``prmkit`` block), ``model.safetensors`` and the tokenizer files; ``prmkit.cards``
adds the model card ``README.md`` (scoring with plain transformers, serving with vLLM) and
``process_card.json``. Nothing is pickled: weights go through safetensors, metadata through JSON.

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
from typing import Any

from pydantic import ValidationError

from prmkit.core.errors import InputError, Issue, issues_from_validation, short
from prmkit.core.registry import suggest
from prmkit.modeling.spec import SPEC_KEY, PrmSpec, write_spec

CARD_FILE = "process_card.json"
"""The process card ``prmkit.cards`` writes beside a checkpoint (read here only as evidence that prmkit
made the folder)."""


def save_checkpoint(
    model: Any, tokenizer: Any, spec: PrmSpec, directory: str | Path, weights: dict[str, Any] | None = None
) -> Path:
    """Write the weights, the tokenizer and ``config.json`` (with the spec); returns the folder. Overwrites
    files of an earlier save in place. The model card and process card are ``prmkit.cards``' to write
    (``write_model_card``, ``write_process_card``): ``cards`` sits above ``modeling`` in the layers.
    ``weights``, when given, are saved in place of the model's own (a sharded model's, gathered)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_spec(model.config, spec)
    extra = {} if weights is None else {"state_dict": weights}
    model.save_pretrained(str(directory), safe_serialization=True, **extra)
    tokenizer.save_pretrained(str(directory))
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
    rest (shapes that do not match the config, an unknown architecture, a Hub repo that does not exist, a
    ``.bin`` that holds more than tensors).
    """
    import pickle

    from prmkit.core.registry import UnknownNameError
    from prmkit.modeling.loading import refuse_pickle

    try:
        yield
    except (InputError, UnknownNameError):
        raise
    except pickle.UnpicklingError as err:  # torch's weights_only loader refused a .bin: never run it
        raise refuse_pickle(Path(path) / "pytorch_model.bin", err) from None
    except (OSError, ValueError, KeyError) as err:
        found = str(err).strip().split("\n")[0][:200]
        raise InputError(
            [_issue(path, "(checkpoint)", "a checkpoint transformers can load", found)], False
        ) from None


def card_kind(path: str | Path) -> str | None:
    """The ``kind`` the process card beside a checkpoint declares (``prm``, ``orm``, ``lm`` for ``prmkit
    pretrain``'s LM), or None where there is no readable card."""
    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError, AttributeError):
        kind = json.loads((Path(path) / CARD_FILE).read_text(encoding="utf-8")).get("kind")
        return kind if isinstance(kind, str) else None
    return None


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
