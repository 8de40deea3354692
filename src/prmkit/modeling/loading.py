"""Load a checkpoint's weights exactly as saved, or refuse it in one line: never a head made up at random.

transformers loads whatever it can and initialises the rest: a Qwen2.5-Math-PRM read as a token
classifier gets a new random ``score`` (its own ``score.0`` / ``score.2`` are "UNEXPECTED"), and the
scores that come out look like scores. :func:`load_exact` asks transformers for its loading report and
refuses any missing, unexpected or wrongly shaped weight, naming the keys; the caller adds which
convention would read them (``prmkit.scoring.conventions``).

:class:`LoadOptions` is how a model is put on the machine (dtype, device, ``device_map`` for a model
larger than one GPU, attention kernel, whether the checkpoint's own code may run): every command that
scores takes these, written once here.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from prmkit.core.config import Config
from prmkit.core.errors import InputError, Issue

Dtype = Literal["auto", "bfloat16", "float16", "float32"]


class LoadOptions(Config):
    """How a checkpoint scorer is loaded: every command that scores takes these (``--dtype``,
    ``--device``, ``--device-map``, ``--attn-implementation``, ``--trust-remote-code``). None means the
    default below; a scorer that loads no weights (a server, the world's checker) refuses any that is set."""

    dtype: Dtype | None = None
    """Weights and activations: auto (the default) is bfloat16 on a GPU that has it and float32 on a CPU;
    float32 reproduces a checkpoint's reference scores most closely."""
    device: str | None = None
    """Where the model runs (cuda, cuda:1, cpu); default: the first GPU if there is one, else the CPU."""
    device_map: str | None = None
    """Spread a model larger than one GPU over every GPU (``auto``, accelerate's placement); replaces
    --device."""
    attn_implementation: Literal["sdpa", "eager", "flash_attention_2"] | None = None
    """Attention kernel (default sdpa; flash_attention_2 needs the flash-attn package)."""
    trust_remote_code: bool | None = None
    """Run Python code shipped in the checkpoint folder (its tokenizer's or config's). Off by default: the
    released PRM families are implemented natively and their own modelling code never runs."""
    reference: str | None = None
    """Implicit PRMs only (``implicit:PATH``): the reference policy whose log-ratio with the checkpoint is
    the reward (EurusPRM: Qwen/Qwen2.5-Math-7B-Instruct); loaded with these same options."""
    beta: float | None = None
    """Implicit PRMs only: the reward's scale, reward = beta * log(policy / reference) (default 0.001,
    EurusPRM's)."""
    QUIET = ("verify_k", "verify_temperature", "verify_seed", "verify_tokens", "verify_combine")
    # added after recipes' stage keys were recorded (core.config.Config)

    verify_k: int | None = Field(None, ge=1, le=64)
    """Critic head (``critic:PATH``), ``thinkprm:``, ``genprm:``: verifications sampled, a step's score
    combining them, more verifier compute: the critic's chains per trace, ThinkPRM's chains per solution,
    GenPRM's samples per step (default 1)."""
    verify_temperature: float | None = Field(None, ge=0)
    """Critic head, ``thinkprm:``, ``genprm:``: the sampling temperature of each verification (default
    0, greedy; GenPRM's own 0.6); ``verify_k`` above 1 needs one above 0, or its samples would all be the
    same."""
    verify_seed: int | None = None
    """Critic head, ``thinkprm:``, ``genprm:``: seeds the sampled verifications (default 0): the same
    traces, batches and seed give the same verifications."""
    verify_tokens: int | None = Field(None, ge=1, le=32768)
    """Critic head, ``thinkprm:``, ``genprm:``: the most tokens one verification may write, its cost
    bound: one check of the critic (default: the checkpoint's ``verify_tokens``, the longest check it was
    trained on, with a margin), one ThinkPRM chain (default 8,172, upstream's), one GenPRM sample over
    all its rounds (default 2,048)."""
    verify_combine: Literal["mean", "vote"] | None = None
    """Critic head only (``thinkprm:`` and ``genprm:`` take the mean): a step's score from its ``k``
    chains: ``mean`` of P(correct) at each verdict (default) or ``vote``, the share of chains whose verdict
    says correct."""

    def options(self) -> dict[str, Any]:
        """The options that were set, as ``load_scorer`` keywords."""
        return self.model_dump(exclude_none=True)


def torch_dtype(dtype: Dtype | None, device: str) -> Any:
    """The torch dtype ``dtype`` means on ``device`` (``auto``: bfloat16 on a GPU that supports it)."""
    import torch

    if dtype in (None, "auto"):
        gpu = device.startswith("cuda") and torch.cuda.is_available()
        return torch.bfloat16 if gpu and torch.cuda.is_bf16_supported() else torch.float32
    return getattr(torch, dtype)


def default_device(device: str | None) -> str:
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def _keys(found: Iterable[Any], body: str) -> list[str]:
    """Weight names from a loading report (a mismatch entry is ``(name, ...shapes)``), the head's first:
    those outside the ``body`` prefix say most about which family a checkpoint is."""
    names = {str(k[0] if isinstance(k, tuple) else k) for k in found}
    return sorted(names, key=lambda k: (k.startswith(f"{body}."), k))


def _listed(keys: list[str], limit: int = 6) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def load_exact(
    model_class: Any,
    path: str | Path,
    family: str,
    options: LoadOptions | None = None,
    fix: Callable[[list[str], list[str]], str] | None = None,
) -> Any:
    """``model_class.from_pretrained(path)`` with every saved weight used and every model weight found.

    ``family`` names what it was loaded as (the convention), ``fix(unexpected_keys, architectures)`` says
    what would read the checkpoint instead. Refused (an :class:`InputError`, one line per kind of problem): weights
    the model has and the checkpoint lacks (they would be random), weights the checkpoint has and the
    model does not use (its real head, left behind), weights of another shape.
    """
    options = options or LoadOptions()
    device = "cuda" if options.device_map is not None else default_device(options.device)
    check_size(model_class, path, options, device)
    kwargs: dict[str, Any] = {
        "dtype": torch_dtype(options.dtype, device),
        "attn_implementation": options.attn_implementation or "sdpa",
        "trust_remote_code": bool(options.trust_remote_code),
        "output_loading_info": True,
        "ignore_mismatched_sizes": True,  # reported below as a refusal, not raised after a printed table
    }
    if options.device_map is not None:
        kwargs["device_map"] = options.device_map
    with quiet_load_report():
        model, info = model_class.from_pretrained(str(path), **kwargs)
    body = getattr(model, "base_model_prefix", "") or "model"
    missing, unexpected = _keys(info["missing_keys"], body), _keys(info["unexpected_keys"], body)
    mismatched = _keys(info["mismatched_keys"], body)
    where = str(Path(path) / "config.json") if Path(path).exists() else str(path)
    how = f"the weights a {family} model has ({getattr(model_class, '__name__', model_class)})"
    archs = list(getattr(model.config, "architectures", None) or [])
    hint = fix(unexpected, archs) if fix is not None else ""
    issues = [
        Issue(where, None, "(weights)", how, f"{what} {_listed(keys)}", "checkpoint", hint)
        for what, keys in (
            ("missing from the checkpoint (they would be random):", missing),
            ("unused (the checkpoint's own, left behind):", unexpected),
            ("of another shape:", mismatched),
        )
        if keys
    ]
    if issues:
        raise InputError(issues, skippable=False)
    return model


HEADROOM = 2
"""How many times the parameters its safetensors files hold a checkpoint's config may imply before the
checkpoint is refused unloaded. A missing or untied head (refused after loading, by name) stays under it;
a hand-edited width (8,192 or 1,000,000 for 16) is orders of magnitude past it and would otherwise be
allocated, gigabytes or terabytes, before any refusal."""
SIZE_FIELDS = ("hidden_size", "n_embd", "d_model", "intermediate_size", "n_inner", "vocab_size",
               "num_hidden_layers", "n_layer")  # fmt: skip
"""Config fields that set how many parameters a transformers architecture has; a refusal names those
(of the first six, each a dimension of some weight) that no tensor in the files has as a dimension."""


def held_weights(folder: Path) -> tuple[int, int, list[str], set[int]] | None:
    """(elements, bytes, file names, every dimension of a shape) of the tensors in a checkpoint folder's safetensors files, read from
    their headers only (nothing is loaded); None where there are none or one cannot be read (a ``.bin``
    must be unpickled to be measured; a damaged header is :func:`~prmkit.modeling.checkpoint.check_checkpoint`'s
    to name)."""
    import json
    import math

    index = folder / "model.safetensors.index.json"
    try:
        names = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.exists() else []
        names = names or (["model.safetensors"] if (folder / "model.safetensors").exists() else [])
        elements = size = 0
        dims: set[int] = set()
        for name in names:
            with open(folder / name, "rb") as fh:
                length = int.from_bytes(fh.read(8), "little")
                header = json.loads(fh.read(min(length, 2**27)))
            for key, tensor in header.items():
                if key != "__metadata__":
                    elements += math.prod(tensor["shape"])
                    dims.update(tensor["shape"])
                    size += tensor["data_offsets"][1] - tensor["data_offsets"][0]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return (elements, size, names, dims) if names else None


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return ""


def implied_parameters(model_class: Any, config: Any) -> int:
    """How many parameters ``model_class`` built from ``config`` has, counted on the ``meta`` device (no
    memory is allocated, whatever the config says; tied weights are counted once)."""
    import torch

    build = getattr(model_class, "from_config", None) or model_class._from_config
    with torch.device("meta"):
        model = build(config)
    return sum(p.numel() for p in model.parameters())


def available_memory(device: str) -> int | None:
    """Bytes free where the weights go: the CPU's available memory (every model is loaded there first),
    the lesser of it and the GPU's free memory for ``cuda``; None where it cannot be read."""
    import psutil
    import torch

    free = int(psutil.virtual_memory().available)
    if device.startswith("cuda") and torch.cuda.is_available():
        with contextlib.suppress(RuntimeError, AssertionError, ValueError):
            free = min(free, int(torch.cuda.mem_get_info(torch.device(device))[0]))
    return free


def check_size(model_class: Any, path: str | Path, options: LoadOptions, device: str) -> None:
    """Refuse, before anything is allocated, a local checkpoint whose ``config.json`` implies far more
    weights than its safetensors files hold (:data:`HEADROOM`), or more than the memory free to load it.

    Why: transformers allocates the model the config describes and only then reads the files, so a
    605 KB checkpoint whose config claims width 8,192 took 5.5 GB before its refusal, and width 10^6
    ended in an allocator traceback. The count is made on the ``meta`` device, the files are measured from
    their headers. A quantized checkpoint (packed weights) and a Hub id are not measured here; a folder
    whose config transformers cannot build is refused with transformers' reason."""
    folder = Path(path)
    if not folder.is_dir():
        return
    from transformers import AutoConfig

    where = str(folder / "config.json")
    try:
        config = AutoConfig.from_pretrained(str(folder), trust_remote_code=bool(options.trust_remote_code))
        implied = implied_parameters(model_class, config)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, ZeroDivisionError, OverflowError) as err:
        found = str(err).strip().split("\n")[0][:160] or type(err).__name__
        raise InputError([Issue(where, None, "(config)", "a config transformers can build", found,
                                "checkpoint", "restore the config.json the weights were saved with")],
                         skippable=False) from None  # fmt: skip
    held = held_weights(folder)
    dtype = torch_dtype(options.dtype, device)
    if held is not None and getattr(config, "quantization_config", None) is None:
        elements, size, names, dims = held
        per = size / elements if elements else dtype.itemsize
        if implied > HEADROOM * elements:
            sizes = [f for f in SIZE_FIELDS if isinstance(getattr(config, f, None), int)]
            sizes = [f for f in sizes[:6] if getattr(config, f) not in dims] or sizes
            values = ", ".join(str(getattr(config, f)) for f in sizes)
            found = f"{values}, which imply {_bytes(implied * per)} of weights ({implied:,} parameters)"
            expected = f"the sizes of the weights the checkpoint holds ({', '.join(names)}: {_bytes(size)}, {elements:,} parameters)"
            raise InputError([Issue(where, None, ", ".join(sizes) or "(sizes)", expected, found, "checkpoint",
                                    "restore the config.json the weights were saved with")],
                             skippable=False)  # fmt: skip
    free = available_memory(device) if options.device_map is None else None
    need = implied * dtype.itemsize
    if free is not None and need > free:
        found = f"{_bytes(need)} ({implied:,} parameters at {str(dtype).removeprefix('torch.')})"
        raise InputError([Issue(where, None, "(memory)", f"weights that fit in the {_bytes(free)} free on {device}",
                                found, "checkpoint", "pass --dtype bfloat16, --device-map auto, or a machine "
                                "with more memory")], skippable=False)  # fmt: skip


@contextlib.contextmanager
def quiet_load_report() -> Iterator[None]:
    """Silence transformers' load report: :func:`load_exact` turns what it says into a refusal."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)


def refuse_pickle(path: str | Path, err: pickle.UnpicklingError) -> InputError:
    """The one line for a ``.bin`` that holds more than tensors: torch's safe loader (``weights_only``)
    refused it, and prmkit never falls back to running a pickle."""
    first = str(err).strip().split("\n")[0][:120]
    return InputError(
        [
            Issue(
                str(path),
                None,
                "(weights)",
                "weights torch can read without running code (safetensors, or a .bin of tensors only)",
                f"a pickle that holds other objects ({first})",
                "checkpoint",
                "ask its publisher for safetensors, or convert it yourself where you trust it "
                "(torch.load(..., weights_only=False), then save_pretrained(..., safe_serialization=True))",
            )
        ],
        skippable=False,
    )
