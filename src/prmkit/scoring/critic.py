"""The ``critic`` convention: a critic-head checkpoint writes its own check after each step, then its
verdict is read.

Teacher-forcing free: the text a step is judged in holds the problem, the steps before it and the
checks *the model itself* wrote after them (never a teacher's). After step ``j`` the model generates a
check (transformers' ``generate``, at most ``tokens`` new tokens, stopped at ``\\boxed{``), the layout's
`` \\boxed{`` is written, and the step's score is read where the verdict's first token is predicted:
``P(correct) / (P(correct) + P(incorrect))``. The chain goes on with the verdict it reached (greedy: the
likelier; sampled: drawn with those odds) and ``}\\n``, then step ``j + 1``.

More verifier compute: ``k`` chains per trace, each sampled at ``temperature`` under ``seed``; a step's
score is the ``mean`` of its ``k`` probabilities or the ``vote`` (share of chains whose verdict says
correct). Cost is bounded: ``k`` x steps generations of at most ``tokens`` tokens each, one forward pass
per step for the verdicts. The layout is :mod:`prmkit.modeling.critic`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from prmkit.core.config import Config
from prmkit.core.seeds import derive_seed
from prmkit.modeling.critic import CHECK_CLOSE, CHECK_OPEN, PROMPT, STEP, verdict_ids
from prmkit.modeling.spec import PrmSpec, read_spec
from prmkit.modeling.template import Encoded
from prmkit.scoring.conventions import CAUSAL_HEAD, Convention


class VerifyOptions(Config):
    """How a critic head verifies when it scores (``LoadOptions``' ``verify_*`` fields, set per run)."""

    k: int = Field(1, ge=1)
    """Chains written per trace; each step's score combines its ``k`` verdicts."""
    temperature: float = Field(0.0, ge=0)
    """0: greedy, one chain; above 0: checks and verdicts sampled at this temperature."""
    seed: int = 0
    """Seeds the sampled chains."""
    tokens: int = Field(48, ge=1)
    """The most new tokens of one check."""
    combine: Literal["mean", "vote"] = "mean"
    """``mean`` of P(correct), or ``vote``: the share of chains whose verdict is correct."""

    @model_validator(mode="after")
    def _k_needs_sampling(self) -> VerifyOptions:
        if self.k > 1 and self.temperature == 0:
            raise ValueError(
                f"verify_k {self.k} with verify_temperature 0 writes {self.k} identical greedy chains: "
                "set a temperature above 0 (e.g. --verify-temperature 0.7) or leave k at 1"
            )
        return self


class CriticConvention(Convention):
    """A prmkit critic head (``PrmSpec.head == "critic"``), scored by the checks it writes."""

    name = "critic"
    auto_class = "AutoModelForCausalLM"
    head = CAUSAL_HEAD
    verifies = True
    reads_any_lm = False

    def __init__(self, tokenizer: Any, config: Any, max_length: int = 4096):
        super().__init__(tokenizer, config, max_length)
        spec = read_spec(config)
        if spec is None or spec.head != "critic":
            raise ValueError("not a critic-head checkpoint: config.json's prmkit block has no head 'critic'")
        self.spec: PrmSpec = spec
        self.max_length = spec.max_length
        self.options = VerifyOptions(tokens=spec.verify_tokens)
        self.verdicts = verdict_ids(tokenizer)

    def configure(self, **options: Any) -> None:
        """Set the ``verify_*`` options of a run (``k``, ``temperature``, ``seed``, ``tokens``, ``combine``)."""
        self.options = self.options.model_copy(update=options)
        self.options = VerifyOptions.model_validate(self.options.model_dump())

    def budget(self) -> int:
        """Tokens a check and its verdict may add after a step: what :meth:`encode_many` reserves."""
        fixed = self.tokenizer([CHECK_OPEN, CHECK_CLOSE], add_special_tokens=False).input_ids
        return self.options.tokens + sum(len(ids) for ids in fixed) + max(len(v) for v in self.verdicts)

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        return self.encode_many([(problem, steps)])[0]

    def encode_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Encoded]:
        """Each trace's problem and steps with room reserved after every step for the check it will
        write (padding ids), so the length policy sees the longest chain scoring may build; a step's
        read position is the end of its room, ``context_tokens`` the step's own tokens."""
        room = [self.tokenizer.pad_token_id or 0] * self.budget()
        out = []
        for problem, steps in items:
            pieces = self.tokenizer([PROMPT.replace("{problem}", problem),
                                     *(STEP.replace("{step}", s) for s in steps)],
                                    add_special_tokens=False).input_ids  # fmt: skip
            ids = [self.tokenizer.bos_token_id] if self.tokenizer.bos_token_id is not None else []
            ids += pieces[0]
            prompt, tags = len(ids), []
            for step_ids in pieces[1:]:
                ids += step_ids + room
                tags.append(len(ids) - 1)
            out.append(Encoded(input_ids=ids, tag_positions=tags, prompt_length=prompt,
                               context_tokens=[len(p) for p in pieces[1:]]))  # fmt: skip
        return out

    def forward(self, model: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> Any:
        """Every row's step scores, from the chains the model writes (the padded ``batch`` is unused:
        each chain grows by what is generated)."""
        prompts, steps = [], []
        for r in rows:
            prompts.append(r.input_ids[: r.prompt_length])
            starts = [r.prompt_length or 0, *(t + 1 for t in r.tag_positions[:-1])]
            steps.append([r.input_ids[a : a + n] for a, n in zip(starts, r.context_tokens, strict=True)])
        return verify_chains(model, self.tokenizer, prompts, steps, self.verdicts, self.options)

    def read(self, out: Any, batch: dict[str, Any], rows: Sequence[Encoded]) -> list[list[float]]:
        return out


def verify_chains(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[list[int]],
    steps: Sequence[Sequence[list[int]]],
    verdicts: tuple[list[int], list[int]],
    options: VerifyOptions,
) -> list[list[float]]:
    """Each trace's step scores from ``options.k`` chains the model writes (see the module docstring):
    ``prompts`` are the problems' ids, ``steps[i]`` the ids of trace ``i``'s steps, each with its newline."""
    import torch

    rows = [(i, c) for i in range(len(prompts)) for c in range(options.k)]
    text = [list(prompts[i]) for i, _ in rows]
    said: list[list[float]] = [[] for _ in rows]
    closed = tokenizer(CHECK_CLOSE, add_special_tokens=False).input_ids
    for j in range(max((len(s) for s in steps), default=0)):
        live = [r for r, (i, _) in enumerate(rows) if j < len(steps[i])]
        for r in live:
            text[r] += steps[rows[r][0]][j]
        checks = write_checks(model, tokenizer, [text[r] for r in live], options, step=j)
        for r, check in zip(live, checks, strict=True):
            text[r] += tokenizer(check + CHECK_OPEN, add_special_tokens=False).input_ids  # as in training
        p = verdict_odds(model, tokenizer, [text[r] for r in live], verdicts)
        if options.temperature == 0:
            good = p >= 0.5
        else:  # the verdict drawn with the model's odds, sharpened or flattened by the temperature
            logit = torch.logit(p.clamp(1e-6, 1 - 1e-6)) / options.temperature
            draw = torch.Generator().manual_seed(derive_seed("critic-verdict", options.seed, j))
            good = torch.rand(len(live), generator=draw) < torch.sigmoid(logit)
        for n, r in enumerate(live):
            said[r].append(float(good[n]) if options.combine == "vote" else float(p[n]))
            text[r] += verdicts[0 if good[n] else 1] + closed
    return [_combine([said[r] for r, (i, _) in enumerate(rows) if i == t]) for t in range(len(prompts))]


def _combine(chains: list[list[float]]) -> list[float]:
    """The mean over a trace's chains of each step's score."""
    return [sum(c[j] for c in chains) / len(chains) for j in range(len(chains[0]))]


def _left_padded(ids: Sequence[list[int]], pad: int, device: Any) -> tuple[Any, Any]:
    import torch

    width = max(len(x) for x in ids)
    batch = torch.full((len(ids), width), pad, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for k, x in enumerate(ids):
        batch[k, width - len(x) :] = torch.tensor(x)
        mask[k, width - len(x) :] = 1
    return batch.to(device), mask.to(device)


def write_checks(
    model: Any, tokenizer: Any, texts: Sequence[list[int]], options: VerifyOptions, step: int
) -> list[str]:
    """The check the model writes after each of ``texts`` (ids ending with a step and its newline):
    generated up to ``\\boxed{`` or ``options.tokens`` new tokens, cut at the box and at a line's end."""
    import torch
    from transformers import GenerationConfig

    pad = tokenizer.pad_token_id or 0
    ids, mask = _left_padded(texts, pad, model.device)
    sample = options.temperature > 0
    config = GenerationConfig(
        max_new_tokens=options.tokens, do_sample=sample, pad_token_id=pad, eos_token_id=tokenizer.eos_token_id,
        stop_strings=[CHECK_OPEN.strip()], use_cache=True,
        **({"temperature": options.temperature, "top_k": 0, "top_p": 1.0} if sample else {}),
    )  # fmt: skip
    cuda = model.device.type == "cuda"
    with torch.random.fork_rng(devices=None if cuda else []), torch.inference_mode():
        torch.manual_seed(derive_seed("critic-check", options.seed, step))
        out = model.generate(
            input_ids=ids, attention_mask=mask, generation_config=config, tokenizer=tokenizer
        )
    written = tokenizer.batch_decode(out[:, ids.shape[1] :], skip_special_tokens=True)
    return [w.split(CHECK_OPEN.strip())[0].split("\n")[0].rstrip() for w in written]


def verdict_odds(
    model: Any, tokenizer: Any, texts: Sequence[list[int]], verdicts: tuple[list[int], list[int]]
) -> Any:
    """``P(correct) / (P(correct) + P(incorrect))`` of the verdict's first token after each text, (N,)."""
    import torch

    width = max(len(x) for x in texts)
    ids = torch.full((len(texts), width), tokenizer.pad_token_id or 0, dtype=torch.long)
    mask = torch.zeros((len(texts), width), dtype=torch.long)
    for k, x in enumerate(texts):  # right-padded: every row at its own positions, as in training
        ids[k, : len(x)], mask[k, : len(x)] = torch.tensor(x), 1
    ends = torch.tensor([len(x) - 1 for x in texts])
    with torch.inference_mode():
        logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device)).logits
    last = logits[torch.arange(len(texts)), ends.to(logits.device)].float()
    return torch.sigmoid(last[:, verdicts[0][0]] - last[:, verdicts[1][0]]).cpu()
