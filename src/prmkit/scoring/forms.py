"""Scorer specs: the one place where a name becomes a :class:`~prmkit.core.protocols.StepScorer`.

Every command that takes a scorer (``score``, ``bon``, ``vote``, ``beam``, ``resample``, ``eval bon``,
``eval processbench``, ``audit``, ``serve``) reads it with :func:`load_scorer` and documents it with
:data:`SCORER_HELP`, so the forms below are written down once (docs/models.md#scorer-forms):

- ``[CONVENTION:]PATH``    a checkpoint folder (or Hugging Face Hub id) read by the PRM convention it
                           declares, or the one named (``qwen:Qwen/Qwen2.5-Math-PRM-7B``, ``likelihood:LM``)
- ``WORLD-oracle``         an embedded world's exact checker (``arithmetic-oracle``, ``agent-oracle``;
                           one per world of :mod:`prmkit.worlds.registry`)
- ``http(s)://HOST:PORT``  a prmkit reward server (:mod:`prmkit.scoring.remote`)
- ``labels:SOURCE``        scores already stored on the traces (:mod:`prmkit.scoring.labels`)
- ``thinkprm:URL|PATH``    a ThinkPRM's own P(yes) score; ``genprm:URL|PATH`` GenPRM's per-step K-sample mean
                           (:mod:`prmkit.scoring.verdicts`)
- ``vllm:URL|PATH``        a PRM run by vLLM's pooling runner (:mod:`prmkit.scoring.vllm_pooling`)

A form is matched by an exact name or by its scheme (the text before the first ``:``); anything else is
a checkpoint path. Forms live in the :data:`SCORER_FORMS` registry, which plugins extend through the
``prmkit.scorers`` entry-point group. A spec that matches nothing answers in one line with the closest
forms and folders ("Did you mean ..."), before any model or network is touched.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from prmkit.core.errors import InputError, Issue
from prmkit.core.protocols import StepScorer
from prmkit.core.registry import Registry, resolve, suggest
from prmkit.modeling.loading import LoadOptions
from prmkit.worlds.registry import WORLDS, oracle_name, world_oracle

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


@dataclass(frozen=True)
class ScorerForm:
    """One way to name a scorer: how it is written, what it is, and the function that loads it.

    ``load(spec, **options)`` returns the scorer; give it lazily as ``"module:attr"`` so its imports
    happen only when the form is used. A spec is this form's when it equals one of ``names`` or starts
    with one of ``schemes`` followed by ``:``; the ``checkpoint`` form has neither and takes the rest.
    The options a command passes (``convention``, ``batch_tokens``, ``api_key`` ...) are the keyword
    parameters of ``load``; one it does not take is refused, not ignored.
    """

    syntax: str
    """How a spec of this form is written in help texts (``labels:SOURCE``)."""
    summary: str
    """What it is, in one phrase."""
    load: str | Callable[..., StepScorer]
    names: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ()

    def loader(self) -> Callable[..., StepScorer]:
        return resolve(self.load) if isinstance(self.load, str) else self.load  # type: ignore[return-value]

    def spellings(self) -> list[str]:
        """The name and ``scheme:`` prefixes "Did you mean" offers (an old name it still reads is not one)."""
        return [*self.names[:1], *(f"{s}:" for s in self.schemes)]


SCORER_FORMS: Registry[ScorerForm] = Registry("scorer form", entry_points="prmkit.scorers")

_BUILT_IN = {
    "checkpoint": ScorerForm(
        "[CONVENTION:]PATH",
        "a checkpoint folder or Hub id, read by the convention it declares (prmkit, TRL, Qwen2.5-Math-PRM, "
        "Skywork-PRM) or the one named before it: math-shepherd:, rlhflow:, implicit:, or likelihood: for "
        "any causal LM as a zero-shot verifier",
        "prmkit.scoring.scorer:load_checkpoint",
    ),
    "http": ScorerForm(
        "http(s)://HOST:PORT",
        "a prmkit reward server (prmkit serve)",
        "prmkit.scoring.remote:load_remote",
        schemes=("http", "https"),
    ),
    "labels": ScorerForm(
        "labels:SOURCE",
        "scores already stored on the traces as labels from SOURCE (labels:model:runs/prm, labels:judge)",
        "prmkit.scoring.labels:load_labels",
        schemes=("labels",),
    ),
    "vllm": ScorerForm(
        "vllm:URL|PATH",
        "a PRM run by vLLM's pooling runner, a server (vllm:http://HOST:PORT) or the offline engine "
        "(vllm:PATH), read by the convention named with --convention",
        "prmkit.scoring.vllm_pooling:load_vllm",
        schemes=("vllm",),
    ),
}
_BUILT_IN.update(
    thinkprm=ScorerForm(
        "thinkprm:URL|PATH",
        "a ThinkPRM scored as its own search code does: the mean P(yes) after its verification chains, "
        "from an OpenAI-compatible server (thinkprm:http://HOST:PORT) or a local model (thinkprm:PATH)",
        "prmkit.scoring.verdicts:load_thinkprm",
        schemes=("thinkprm",),
    ),
    genprm=ScorerForm(
        "genprm:URL|PATH",
        "a GenPRM verifier's per-step mean P(Yes) over its K samples (--verify-k), from a server or a "
        "local model",
        "prmkit.scoring.verdicts:load_genprm",
        schemes=("genprm",),
    ),
)
for _name, _form in _BUILT_IN.items():
    SCORER_FORMS.register(_name, _form)


def _oracle_form(world_name: str) -> ScorerForm:
    """The scorer form of a world's checker, with the old name of a renamed world as a spelling."""
    old = [oracle_name(o) for o, new in WORLDS.aliases().items() if new == world_name]
    names = (oracle_name(world_name), *old)
    return ScorerForm(
        names[0],
        f"the {world_name} world's exact checker, 1 up to the first wrong step and 0 from there",
        partial(world_oracle, world_name),
        names=names,
    )


SCORER_FORMS.derive(WORLDS, oracle_name, _oracle_form)
_ORACLES = (
    "WORLD-oracle",
    "an embedded world's exact checker, 1 up to the first wrong step and 0 from there ("
    + ", ".join(oracle_name(n) for n in WORLDS.names())
    + ")",
)
"""How the derived oracle forms read in help texts: one line for all of them (they load by their names)."""
_HELPED = [
    (f.syntax, f.summary)
    for f in (_BUILT_IN["checkpoint"], *(f for k, f in _BUILT_IN.items() if k != "checkpoint"))
]
_HELPED.insert(1, _ORACLES)

SCORER_HELP = (
    "A scorer: "
    + "; ".join(f"{syntax}: {summary}" for syntax, summary in _HELPED)
    + " (docs/models.md#scorer-forms)."
)
"""The help text of every scorer option and argument: the built-in forms, written once."""


def _issue(spec: str, found: str, fix: str = "") -> InputError:
    expected = "a scorer (" + ", ".join(syntax for syntax, _ in _HELPED) + ")"
    return InputError([Issue(spec, None, "(scorer)", expected, found, "scorer", fix)], skippable=False)


def scorer_form(spec: str | Path) -> str:
    """The name of the form ``spec`` is written in (``checkpoint``, ``arithmetic-oracle``, ``http`` ...).

    A scheme no form has is refused with the closest ones, unless a local path of that name exists."""
    text = str(spec)
    forms = {name: SCORER_FORMS.get(name) for name in SCORER_FORMS.names()}
    for name, form in forms.items():
        if text in form.names:
            return name
    scheme = _SCHEME.match(text)
    if scheme:
        for name, form in forms.items():
            if scheme[1] in form.schemes:
                return name
        from prmkit.scoring.conventions import CONVENTIONS

        if scheme[1] in CONVENTIONS:
            return "checkpoint"  # CONVENTION:PATH
        if not Path(text).expanduser().exists():
            keys = [k for f in forms.values() for k in f.spellings() if k.endswith(":")]
            if not text[len(scheme[0]) :].startswith("//"):  # a URL is not a CONVENTION:PATH
                keys += [f"{c}:" for c in CONVENTIONS.names()]
            raise _issue(text, f"unknown scheme {scheme[0]!r}", suggest(scheme[0], keys, "").strip())
    return "checkpoint"


def oracle_world(spec: object) -> str | None:
    """The world whose exact checker ``spec`` names (``arithmetic-oracle`` -> ``arithmetic``), or None."""
    if not isinstance(spec, str | Path):
        return None
    return next((n for n in WORLDS.names() if str(spec) in _oracle_form(n).names), None)


def load_scorer(
    spec: str | Path | StepScorer,
    convention: str | None = None,
    load: LoadOptions | None = None,
    **options: Any,
) -> StepScorer:
    """The scorer ``spec`` names (see :data:`SCORER_HELP`); a StepScorer is returned as is.

    ``convention`` and ``options`` go to the form's loader (a checkpoint takes ``convention``, the
    :class:`~prmkit.modeling.loading.LoadOptions` (``dtype``, ``device``, ``device_map``,
    ``attn_implementation``, ``trust_remote_code``), ``batch_tokens`` and ``overlong``; a server
    ``api_key``, ``timeout`` and ``retries``). None means "not given": the loader's default applies. An option the
    form does not take is refused in one line, as is a spec that names nothing (with "Did you mean").
    ``load`` is a command's loading options as one object (those set join ``options``).
    """
    if not isinstance(spec, str | Path):
        return spec
    text = str(spec)
    name = scorer_form(text)
    if name == "checkpoint":
        _check_path(text)
    loader = SCORER_FORMS.get(name).loader()
    given = {"convention": convention, **(load.options() if load is not None else {}), **options}
    given = {k: v for k, v in given.items() if v is not None}
    params = inspect.signature(loader).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for key, value in given.items():
        if not takes_any and key not in params:
            accepted = ", ".join(list(params)[1:]) or "none"
            issue = Issue(
                text, None, key, f"an option a {name} scorer takes ({accepted})", repr(value), "scorer",
                f"leave out --{key.replace('_', '-')}",
            )  # fmt: skip
            raise InputError([issue], skippable=False)
    return loader(text, **given)


def _check_path(spec: str) -> None:
    """Refuse a missing local path at once, suggesting forms and nearby folders (a Hub id goes on)."""
    from prmkit.modeling.checkpoint import is_hub_id, nearby_folders
    from prmkit.scoring.conventions import split_convention

    spec = split_convention(spec)[1]
    if Path(spec).expanduser().exists() or is_hub_id(spec):
        return
    keys = [k for n in SCORER_FORMS.names() for k in SCORER_FORMS.get(n).spellings()]
    hint = suggest(spec, [*keys, *nearby_folders(spec)], "").strip()
    fix = hint or "check the path (a Hugging Face model id reads org/name)"
    raise _issue(spec, "no such path, and no other form matches", fix)
