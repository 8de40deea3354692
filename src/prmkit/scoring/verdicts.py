"""Generative-verdict scorers: a verifier that writes K sampled verifications and whose score is the mean
of the verdicts' probabilities (docs/models.md#generative-verdict-scorers).

One scorer (:class:`VerdictScorer`), a format per family (how one trace is asked and read), a backend
(:mod:`prmkit.scoring.verdict_backends`: an OpenAI-compatible server or a local transformers model):

- ``thinkprm:URL_OR_PATH``: ThinkPRM's own P(yes) (:mod:`prmkit.scoring.thinkprm`);
- ``genprm:URL_OR_PATH``: GenPRM's per-step verdicts asked and read as :mod:`prmkit.policies.genprm` says,
  every step judged (a step's score the mean of its K samples' P(Yes); a step none of whose samples gives a
  verdict scores 0.5, as upstream counts a sample without one).

**The verifier's budget is bounded before any request**: a ``score`` call may ask for at most
``max_verifier_tokens`` generated tokens, counted as ``max_tokens x K x verifications`` summed over its
traces (ThinkPRM: one verification per trace or per prefix; GenPRM: one per step). A call past it is
refused in one line, nothing sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import Field, model_validator

from prmkit.core.config import Config
from prmkit.core.errors import InputError, Issue
from prmkit.core.model import Step, Trace
from prmkit.core.seeds import derive_seed
from prmkit.policies import genprm
from prmkit.scoring.verdict_backends import EndpointVerdicts, LocalVerdicts, VerdictBackend


class VerdictFormat(Protocol):
    name: str

    def verifications(self, n_steps: int) -> int:
        """Verifications one trace of ``n_steps`` steps costs."""
        ...

    def max_tokens(self) -> int:
        """The most tokens one verification may write, over all its K samples."""
        ...

    def score_trace(
        self, backend: VerdictBackend, problem_text: str, steps: Sequence[Step]
    ) -> list[float]: ...


class VerdictScorer:
    """A :class:`~prmkit.core.protocols.StepScorer` from a generative verifier: each trace scored by
    ``format`` on ``backend``, within ``max_verifier_tokens`` per call."""

    def __init__(self, backend: VerdictBackend, format: VerdictFormat, max_verifier_tokens: int):
        self.backend, self.format, self.max_verifier_tokens = backend, format, max_verifier_tokens
        self.name = f"{format.name}:{backend.name}"

    def budget(self, traces: Sequence[Trace]) -> int:
        """The most tokens scoring ``traces`` may ask the verifier to write."""
        return sum(self.format.verifications(len(t.steps)) for t in traces) * self.format.max_tokens()

    def score(self, traces: Sequence[Trace]) -> list[list[float]]:
        need = self.budget(traces)
        if need > self.max_verifier_tokens:
            issue = Issue(
                self.name, None, "verifier budget", f"at most {self.max_verifier_tokens:,} tokens a call",
                f"{need:,} ({len(traces)} traces; max tokens x K x verifications); nothing was sent",
                "budget", "score fewer traces a call, lower verify_k or verify_tokens, or raise max_verifier_tokens",
            )  # fmt: skip
            raise InputError([issue], skippable=False)
        return [self.format.score_trace(self.backend, t.problem.text, t.steps) for t in traces]


class GenPRMOptions(Config):
    """How GenPRM verifies as a scorer (the ``verify_*`` loading options set ``k``, ``temperature``,
    ``seed`` and ``max_tokens``)."""

    k: int = Field(1, ge=1, le=64)
    """Samples per step (GenPRM's ``majority_num``); a step's score is their mean."""
    temperature: float = Field(genprm.SAMPLING["temperature"], ge=0)
    """Sampling temperature (GenPRM's 0.6), with its top_p 0.95 and top_k 20."""
    seed: int = 0
    """Seeds the samples; a step's seed also depends on its prompt."""
    max_tokens: int = Field(2048, ge=1)
    """The most tokens of one sample over all its rounds."""
    max_verifier_tokens: int = Field(50_000_000, ge=1)
    """The most tokens one ``score`` call may ask for (``max_tokens x k x steps``)."""

    @model_validator(mode="after")
    def _k_needs_sampling(self) -> GenPRMOptions:
        if self.k > 1 and self.temperature == 0:
            raise ValueError(f"k {self.k} at temperature 0 writes {self.k} identical samples")
        return self


class GenPRMFormat:
    """GenPRM's conversation per step (:func:`~prmkit.policies.genprm.verify_step`), every step judged."""

    name = "genprm"

    def __init__(self, options: GenPRMOptions):
        self.options = options

    def verifications(self, n_steps: int) -> int:
        return n_steps

    def max_tokens(self) -> int:
        return self.options.max_tokens * self.options.k

    def score_trace(self, backend: VerdictBackend, problem_text: str, steps: Sequence[Step]) -> list[float]:
        o = self.options

        def complete(
            messages: list[dict], n: int, stop: list[str], max_tokens: int
        ) -> list[genprm.Completion]:
            prompt = backend.render(messages[:-1], messages[-1]["content"])
            seed = derive_seed("genprm", o.seed, prompt) % 2**31
            return backend.complete(
                prompt, n, stop, max_tokens, temperature=o.temperature, seed=seed,
                top_p=genprm.SAMPLING["top_p"], top_k=genprm.SAMPLING["top_k"],
                top_logprobs=genprm.TOP_LOGPROBS, keep_stop=True,
            )  # fmt: skip

        verifications: list[str] = []
        scores = []
        for i in range(len(steps)):
            messages = genprm.genprm_messages(problem_text, steps[: i + 1], verifications)
            samples = genprm.verify_step(complete, messages, i + 1, o.k, o.max_tokens)
            verifications.append(samples[0][0])
            score = genprm.step_score([s for _, s in samples])
            scores.append(0.5 if score is None else score)
        return scores


def _options(cls: type[Config], verify: dict[str, Any], fields: dict[str, str], **given: Any) -> Any:
    """``cls`` from its own keywords and the ``verify_*`` loading options they stand for."""
    for key, field in fields.items():
        if verify.get(key) is not None:
            given[field] = verify[key]
    return cls(**{k: v for k, v in given.items() if v is not None})


def _backend(spec: str, scheme: str, tokenizer: Any, model: str | None, load: dict[str, Any],
             api_key_env: str | None, timeout: float | None) -> VerdictBackend:  # fmt: skip
    target = spec[len(scheme) + 1 :] if spec.startswith(scheme + ":") else spec
    if target.startswith(("http://", "https://")):
        client = {"api_key_env": api_key_env, **({"timeout": timeout} if timeout else {"timeout": 600.0})}
        return EndpointVerdicts(target, tokenizer=tokenizer, model=model, **client)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prmkit.modeling.loading import LoadOptions, load_exact

    options = LoadOptions(**{k: v for k, v in load.items() if v is not None})
    lm = load_exact(AutoModelForCausalLM, target, scheme, options)
    lm.eval()
    tok = tokenizer if tokenizer is not None and not isinstance(tokenizer, str) else None
    tok = tok or AutoTokenizer.from_pretrained(tokenizer if isinstance(tokenizer, str) else target)
    return LocalVerdicts(lm, tok, target)


_VERIFY = {
    "verify_k": "n",
    "verify_temperature": "temperature",
    "verify_seed": "seed",
    "verify_tokens": "max_tokens",
}


def load_thinkprm(
    spec: str, *, options: Any = None, tokenizer: Any = None, model: str | None = None,
    api_key_env: str | None = "OPENAI_API_KEY", timeout: float | None = None,
    dtype: str | None = None, device: str | None = None, device_map: str | None = None,
    attn_implementation: str | None = None,
    verify_k: int | None = None, verify_temperature: float | None = None,
    verify_seed: int | None = None, verify_tokens: int | None = None,
) -> VerdictScorer:  # fmt: skip
    """``thinkprm:URL`` (a server's ``/v1/completions``; the chat template is ``tokenizer``'s, by default
    that of the model the server names) or ``thinkprm:PATH`` (a causal LM loaded here, all its weights
    present). ``options``: a :class:`~prmkit.scoring.thinkprm.ThinkPRMOptions`; ``verify_k`` etc. set
    its ``n``, ``temperature``, ``seed`` and ``max_tokens``."""
    from prmkit.scoring.thinkprm import ThinkPRMFormat, ThinkPRMOptions

    verify = {"verify_k": verify_k, "verify_temperature": verify_temperature, "verify_seed": verify_seed,
              "verify_tokens": verify_tokens}  # fmt: skip
    load = {
        "dtype": dtype,
        "device": device,
        "device_map": device_map,
        "attn_implementation": attn_implementation,
    }
    opts = _options(ThinkPRMOptions, verify, _VERIFY, **(options.model_dump() if options is not None else {}))
    backend = _backend(spec, "thinkprm", tokenizer, model, load, api_key_env, timeout)
    return VerdictScorer(backend, ThinkPRMFormat(opts), opts.max_verifier_tokens)


def load_genprm(
    spec: str, *, options: Any = None, tokenizer: Any = None, model: str | None = None,
    api_key_env: str | None = "OPENAI_API_KEY", timeout: float | None = None,
    dtype: str | None = None, device: str | None = None, device_map: str | None = None,
    attn_implementation: str | None = None,
    verify_k: int | None = None, verify_temperature: float | None = None,
    verify_seed: int | None = None, verify_tokens: int | None = None,
) -> VerdictScorer:  # fmt: skip
    """``genprm:URL_OR_PATH``, as :func:`load_thinkprm`; ``options`` a :class:`GenPRMOptions` (``verify_k``
    sets its ``k``)."""
    verify = {"verify_k": verify_k, "verify_temperature": verify_temperature, "verify_seed": verify_seed,
              "verify_tokens": verify_tokens}  # fmt: skip
    load = {
        "dtype": dtype,
        "device": device,
        "device_map": device_map,
        "attn_implementation": attn_implementation,
    }
    names = {**_VERIFY, "verify_k": "k"}
    opts = _options(GenPRMOptions, verify, names, **(options.model_dump() if options is not None else {}))
    backend = _backend(spec, "genprm", tokenizer, model, load, api_key_env, timeout)
    return VerdictScorer(backend, GenPRMFormat(opts), opts.max_verifier_tokens)
