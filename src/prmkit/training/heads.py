"""``train_prm`` and ``train_orm``: a step head on a backbone, trained on traces, saved as an HF folder.

Both share one path (:func:`_train_head`); they differ only in the targets: per-step labels from a
label source (PRM) or the final answer's correctness at the last step (ORM).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prmkit.cards import ProcessCard, summarize_sources, trace_roles, write_process_card
from prmkit.cards.process_card import gold_use, inherited_gold_use
from prmkit.core.files import atomic_write, remove_partial_writes
from prmkit.core.model import Trace
from prmkit.core.ranks import is_main_process
from prmkit.core.registry import resolve
from prmkit.formats.inputs import read_traces
from prmkit.modeling.backbone import learned_positions, load_tokenizer, position_limit, tiny_config
from prmkit.modeling.heads import head as head_kind
from prmkit.modeling.spec import PrmSpec, write_spec
from prmkit.modeling.template import StepTemplate
from prmkit.modeling.tokenizer import build_tokenizer, trace_texts
from prmkit.scoring.conventions import CONVENTIONS
from prmkit.scoring.scorer import LengthCounts, OverlongError
from prmkit.training import loop
from prmkit.training.arrow import cached_examples, example_rows, tokenizer_digest, traces_digest
from prmkit.training.config import OrmConfig, PrmConfig
from prmkit.training.critic import check_tokens, critic_traces, filter_gold_use, verdict_targets
from prmkit.training.data import (
    StepCollator,
    fit_traces,
    make_examples,
    outcome_of,
    outcome_targets,
    split_by_problem,
    step_targets,
)
from prmkit.training.memory import checkpointing_args, for_training, save_trained

logger = logging.getLogger(__name__)
EXAMPLES = "examples"
"""The tokenised training examples' cache, inside the checkpoints folder: kept for a resumed run, gone
with the checkpoints when the run is finished."""


def _load(data: str | Path | Sequence[Trace]) -> tuple[list[Trace], str]:
    if isinstance(data, str | Path):
        return read_traces(data), str(data)
    return list(data), "(in memory)"


def _tokenizer(config: PrmConfig | OrmConfig, train: Sequence[Trace], template: StepTemplate) -> Any:
    """The base model's tokenizer (the tag added when it lacks one) or one trainable on the data."""
    if config.base_model is None:
        return build_tokenizer(
            trace_texts(train), extra_tokens=[template.tag] if template.tag.startswith("<") else []
        )
    tok = load_tokenizer(config.base_model, config.trust_remote_code)
    if template.tag.startswith("<") and template.tag not in tok.get_vocab():
        from tokenizers import AddedToken

        tok.add_tokens([AddedToken(template.tag, special=True, normalized=False)], special_tokens=True)
    return tok


def _soft(traces: Sequence[Trace], source: str) -> bool:
    labels = [lab for t in traces for s in t.steps if (lab := s.label(source)) is not None]
    return (
        bool(labels)
        and all(lab.score is not None for lab in labels)
        and any(lab.rating is None for lab in labels)
    )


def _noise(config: PrmConfig | OrmConfig) -> tuple[float, float]:
    """The label-noise rates a PRM's loss models (an ORM's outcome labels are taken as given)."""
    return getattr(config, "missed_error_rate", 0.0), getattr(config, "false_error_rate", 0.0)


def _model(config: PrmConfig | OrmConfig, tok: Any, spec: PrmSpec) -> tuple[Any, Any]:
    """(model, training objective or None for the tag loss) for ``spec.head``, from the head table: the
    causal LM itself for the likelihood head, a token classifier for the classifier head."""
    base = config.base_model or tiny_config(tok, config.tiny)
    kind = head_kind(spec.head)
    model = kind.build(base, spec, config.trust_remote_code)
    objective: Any = None
    if kind.objective is not None:
        loss = resolve(kind.objective)
        objective = functools.partial(
            loss,
            lm_weight=config.lm_weight,
            noise=_noise(config),
            surprisal=spec.surprisal,  # type: ignore[arg-type]
        )
    if model.get_input_embeddings().num_embeddings < len(tok):
        model.resize_token_embeddings(len(tok))
    return model, objective


def _check_positions(config: PrmConfig | OrmConfig, model: Any) -> None:
    """Refuse a ``max_length`` past a learned position table (the first long trace would end the run in
    an ``IndexError``, and the checkpoint would declare a length it cannot read); warn past a RoPE or
    position-free model's declared limit, which runs but was not trained on such lengths."""
    declared = position_limit(model.config)
    if declared is None or config.max_length <= declared[0]:
        return
    limit, field = declared
    where = f"{config.base_model}/config.json" if config.base_model else "the tiny model (--tiny-max-length)"
    if learned_positions(model):
        raise OverlongError(
            f"--max-length {config.max_length} is more than the base model reads: {where} declares {field} "
            f"{limit} and it looks positions up in a learned table of that size; pass --max-length {limit} "
            "or less (and --overlong skip or truncate for longer traces)"
        )
    logger.warning(
        "--max-length %d is past the %d positions %s declares (%s): its position encoding runs on, but it "
        "was not trained on inputs that long, so steps past them may score poorly",
        config.max_length, limit, where, field,
    )  # fmt: skip


def _examples(
    train: list[Trace],
    targets: Callable[[Trace], list[float]],
    tok: Any,
    template: StepTemplate,
    config: PrmConfig | OrmConfig,
    spec: PrmSpec,
    args: Any,
    out: Path,
) -> tuple[Any, LengthCounts]:
    """The training examples as a memory-mapped ``datasets`` table, tokenised once: by the main process
    while the others wait, then loaded by every rank (and by a resumed run) from the cache beside the
    checkpoints, named by a hash of what made them (the traces and targets, tokenizer, layout, length
    policy); with what was cut or left out for length."""
    skip = spec.min_over == "own"
    own = head_kind(spec.head).examples  # a head whose training text is more than the trace

    def targets_of() -> Iterator[list[float]]:
        return (targets(t) for t in train)

    key = {"inputs": traces_digest(train, targets_of()), "tokenizer": tokenizer_digest(tok),
           "template": template.model_dump(mode="json"), "max_length": config.max_length,
           "overlong": config.overlong, "skip_context": skip}  # fmt: skip
    if own is not None:  # its rows read the traces' metadata (the critic's chains) too
        key |= {"examples": own, "metadata": _metadata_digest(train)}
    counts = LengthCounts(config.overlong, config.max_length)
    make = resolve(own) if own is not None else make_examples

    def rows() -> Iterator[dict[str, Any]]:
        return example_rows(
            train, targets_of(), tok, template, config.max_length, config.overlong, counts, skip, make
        )

    with args.main_process_first(local=False, desc="tokenising the training traces"):
        cache = out / loop.CHECKPOINTS / EXAMPLES
        examples, meta = cached_examples(rows, key, cache, meta=lambda: {"counts": counts.to_dict()})
    return examples, LengthCounts(**meta["counts"])


def _metadata_digest(traces: Sequence[Trace]) -> str:
    """sha256 of the traces' metadata, for the examples' cache key of a head whose rows read it."""
    text = json.dumps([t.metadata for t in traces], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Setup:
    """What :func:`_set_up` decides before the model exists, read by every later step of a run."""

    out: Path
    traces: list[Trace]
    data_name: str
    train: list[Trace]
    dev: list[Trace]
    """The split's dev traces, before those too long to score or without a dev label are left out."""
    dev_source: str
    template: StepTemplate
    tok: Any
    spec: PrmSpec
    args: Any
    """The run's ``TrainingArguments``."""
    threads: int


@dataclass
class _Trainable:
    """The model the optimiser steps, with its objective, its scoring convention (dev is scored with
    it) and what the process card says about its precision and adapters."""

    model: Any
    objective: Any
    convention: Any
    memory: dict[str, Any]


@dataclass
class _Examples:
    """The tokenised training examples, the dev traces that fit and carry a dev label, and the
    count of traces cut or left out for length in each part."""

    train: Any
    dev: list[Trace]
    lengths: dict[str, LengthCounts]


@dataclass
class _Fitted:
    """The trainer after training, the record of what the run did, and its dev reading: the best
    checkpoint's metrics, the step-0 metrics, and the spec with dev's threshold when dev measured one."""

    trainer: Any
    run: dict[str, Any]
    metrics: dict[str, Any]
    start: dict[str, Any]
    spec: PrmSpec


def _train_head(
    data: tuple[list[Trace], str],
    output_dir: str | Path,
    config: PrmConfig | OrmConfig,
    kind: str,
    targets: Callable[[Trace], list[float]],
    spec_fields: dict[str, Any],
    sources: list[str],
    filtered: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The path PRM and ORM share, step by step: set up, build the model, tokenise, train and read dev,
    then write the model and its card. They differ only in ``kind``, ``targets``, ``spec_fields`` (a
    value, or a function of the training traces and tokenizer), ``sources`` and, for a critic head, what
    its chains' process filter read and kept (``filtered``)."""
    setup = _set_up(data, Path(output_dir), config, kind, spec_fields, sources)
    trainable = _build_model(config, setup)
    examples = _tokenise(config, setup, trainable.convention, targets)
    fitted = _fit(config, setup, trainable, examples)
    card = _process_card(config, kind, sources, setup, examples, fitted, filtered)
    _save(config, kind, setup, trainable, fitted, card)
    overlong = {k: v.to_dict() for k, v in examples.lengths.items()}
    return {
        "output_dir": str(setup.out),
        "dev": fitted.metrics,
        "dev_at_start": fitted.start,
        "training": fitted.run,
        "overlong": overlong,
        "gold_use": [g.model_dump(mode="json") for g in card.gold_use],
    }


def _labelled(traces: list[Trace], source: str) -> list[Trace]:
    """The traces with a ``source`` label on some step: only those can be scored on dev."""
    return [t for t in traces if any(s.label(source) for s in t.steps)]


def _set_up(
    data: tuple[list[Trace], str],
    out: Path,
    config: PrmConfig | OrmConfig,
    kind: str,
    spec_fields: dict[str, Any],
    sources: list[str],
) -> _Setup:
    """Seed, split, tokenizer, spec and training arguments: everything decided before the model exists."""
    import torch

    threads = loop.set_threads(config)
    torch.manual_seed(config.seed)
    traces, data_name = data
    train, dev = split_by_problem(traces, config.dev_fraction, config.seed)
    head = getattr(config, "head", "classifier")
    template = StepTemplate.named(head_kind(head).template or config.separator)
    tok = _tokenizer(config, train, template)
    fields = {k: v(train, tok) if callable(v) else v for k, v in spec_fields.items()}  # read off the data
    spec = PrmSpec(head=head, kind=kind, template=template, tag_id=template.tag_id(tok),
                   max_length=config.max_length, aggregation=config.aggregation, **fields)  # fmt: skip
    dev_source = config.dev_label_source or _dev_source(dev, sources)
    # the training arguments before the model: they start the launch's process group, and under
    # DeepSpeed ZeRO-3 they are what makes from_pretrained load each rank's shard, not the whole model
    args = loop.training_args(config, out, evaluate=bool(_labelled(dev, dev_source)),
                              **(checkpointing_args() if config.gradient_checkpointing else {}))  # fmt: skip
    if loop.sharded(args) and config.lora_r is not None and config.lora_merge:
        raise ValueError(
            "--lora-r with sharded weights (FSDP / DeepSpeed) saves the adapter only: pass --no-lora-merge "
            "and merge it afterwards (its README says how)"
        )
    return _Setup(out, traces, data_name, train, dev, dev_source, template, tok, spec, args, threads)


def _build_model(config: PrmConfig | OrmConfig, setup: _Setup) -> _Trainable:
    """The model with the spec written into its config, the convention that scores it, and the model
    as the optimiser steps it (adapters, precision)."""
    model, objective = _model(config, setup.tok, setup.spec)
    _check_positions(config, model)
    model.config.pad_token_id = setup.tok.pad_token_id
    write_spec(model.config, setup.spec)
    # reads the spec just written
    convention = CONVENTIONS.get(head_kind(setup.spec.head).convention)(setup.tok, model.config)
    # dev is scored at the length training uses, not the backbone's max_position_embeddings
    convention.max_length = config.max_length
    model, memory = for_training(config, model, setup.spec)
    return _Trainable(model, objective, convention, memory)


def _tokenise(
    config: PrmConfig | OrmConfig, setup: _Setup, convention: Any, targets: Callable[[Trace], list[float]]
) -> _Examples:
    """The training examples and the dev traces that fit ``max_length``; refuses a run where no
    training trace fits, and turns dev evaluation off when no dev trace does."""
    lengths = {"train": LengthCounts(config.overlong, config.max_length),
               "dev": LengthCounts(config.overlong, config.max_length)}  # fmt: skip
    examples, lengths["train"] = _examples(
        setup.train, targets, setup.tok, setup.template, config, setup.spec, setup.args, setup.out
    )
    if not examples and lengths["train"].line():
        raise OverlongError(
            f"no training trace fits in {config.max_length} tokens ({lengths['train'].line()}); raise "
            "--max-length (up to what the backbone takes)"
            + ("" if config.overlong == "truncate" else ", or pass --overlong truncate to keep first steps")
        )
    fitting = fit_traces(setup.dev, convention.encode, config.max_length, config.overlong, lengths["dev"])
    dev = _labelled(fitting, setup.dev_source)
    if not dev and setup.args.eval_strategy != "no":
        loop.without_dev(setup.args)  # every dev trace was too long to score
    for part, counts in lengths.items():
        if counts.line() and is_main_process():
            logger.warning("%s traces: %s", part, counts.line())
    return _Examples(examples, dev, lengths)


def _fit(config: PrmConfig | OrmConfig, setup: _Setup, trainable: _Trainable, examples: _Examples) -> _Fitted:
    """Train (resuming from the last checkpoint when asked) under the time budget, then read dev at the
    best checkpoint: its threshold goes into the spec the model is saved with."""
    args, dev = setup.args, examples.dev
    resume = loop.last_checkpoint(setup.out, config.resume, args)
    # dev F1 of the starting model (step 0) too, so a run shows whether the labels improved on it
    args.eval_on_start = bool(dev) and resume is None
    budget = loop.time_budget(config.max_minutes, config.budget_clock, schedule=config.max_steps is None)
    trainer = loop.make_trainer(
        trainable.model, args, examples.train, StepCollator(setup.tok.pad_token_id), setup.spec.num_labels,
        (dev, setup.dev_source), trainable.convention, [budget], trainable.objective, _noise(config),
    )  # fmt: skip
    wall, cpu = loop.train_from(trainer, resume, budget)
    run = {**loop.run_record(trainer, config, budget, setup.threads, wall, cpu), **trainable.memory}
    metrics = trainer.evaluate() if dev else {}
    spec = setup.spec
    if metrics:
        spec = spec.model_copy(update={"threshold": metrics["eval_threshold"]})
    start = _dev_at_start(trainer.state.log_history, metrics)
    return _Fitted(trainer, run, metrics, start, spec)


def _process_card(
    config: PrmConfig | OrmConfig,
    kind: str,
    sources: list[str],
    setup: _Setup,
    examples: _Examples,
    fitted: _Fitted,
    filtered: dict[str, Any] | None = None,
) -> ProcessCard:
    """The process card: what was trained on what, how dev was split and scored, and every way gold
    reached the model (a critic's filter set included: ``training.critic`` names the teacher, the
    filter set and its size)."""
    traces, train, dev = setup.traces, setup.train, examples.dev
    critic = {"critic": filtered} if filtered is not None else {}
    return ProcessCard(
        kind=kind,
        base_model=config.base_model,
        model=fitted.spec.model_dump(mode="json"),
        labels=summarize_sources(train, sources),
        roles=trace_roles(train, sources),
        data={
            "path": setup.data_name,
            "traces": len(traces),
            "problems": len({t.problem.id for t in traces}),
            "split": {
                "by": "problem",
                "seed": config.seed,
                "dev_fraction": config.dev_fraction,
                "dev_label_source": setup.dev_source,
                "train_traces": len(train),
                "dev_traces": len(dev),
                "train_problems": len({t.problem.id for t in train}),
                "dev_problems": len({t.problem.id for t in dev}),
            },
        },
        metrics={"dev": fitted.metrics, "dev_at_start": fitted.start},
        gold_use=[  # every way gold reached the model, from what was read (docs/models.md "No gold")
            *inherited_gold_use(config.base_model),
            *[g for s in sources for g in gold_use("training_labels", s, train)],
            *(gold_use("dev_selection", setup.dev_source, dev) if dev else []),
            *(filter_gold_use(filtered) if filtered is not None else []),
        ],
        training={
            "config": config.model_dump(mode="json"),
            **fitted.run,
            "examples": len(examples.train),
            "overlong": {k: v.to_dict() for k, v in examples.lengths.items()},
            **critic,
        },
    )


def _save(
    config: PrmConfig | OrmConfig,
    kind: str,
    setup: _Setup,
    trainable: _Trainable,
    fitted: _Fitted,
    card: ProcessCard,
) -> None:
    """Write the model, its card and logs from the main process, then drop the checkpoints; every rank
    takes part in gathering sharded weights and waits until the model is on disk."""
    out, trainer = setup.out, fitted.trainer
    weights = loop.full_state_dict(trainer)  # every rank takes part; None when the model holds them all
    if is_main_process():
        remove_partial_writes(out)  # a run killed while writing its final model left these
        save_trained(config, trainer.model, setup.tok, fitted.spec, out, trainable.memory, weights)
        write_process_card(out, card)
        _write_logs(trainer.state.log_history, out, f"{kind.upper()} training")
        shutil.rmtree(out / loop.CHECKPOINTS, ignore_errors=True)  # finished: resume state no longer needed
    loop.finish_together(trainer)


def _dev_at_start(history: list[dict[str, Any]], best: dict[str, Any]) -> dict[str, Any]:
    """The step-0 dev metrics, with a warning when training ended no better than it started: the labels
    (or the learning rate) then taught nothing dev can see, which is worth knowing before using the model.
    On the world, Monte Carlo labels do this to a pretrained likelihood head (docs/models.md)."""
    start = next((r for r in history if r.get("step") == 0 and "eval_first_error_f1" in r), {})
    if start and best and best["eval_first_error_f1"] <= start["eval_first_error_f1"]:
        logger.warning(
            "training did not improve dev first-error F1 over the starting model (%.3f at step 0, %.3f at "
            "the best checkpoint): the labels may be noisier than what the model already knows",
            start["eval_first_error_f1"], best["eval_first_error_f1"],
        )  # fmt: skip
    return {k: v for k, v in start.items() if k.startswith("eval_")}


def _write_logs(history: list[dict[str, Any]], out: Path, title: str) -> None:
    with atomic_write(out / "training_log.jsonl") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in history)
    loop.loss_curve(history, out / "loss_curve.png", title)


def _dev_source(dev: Sequence[Trace], sources: list[str]) -> str:
    """``gold`` when any dev step has a gold label, else the first training source (``gold`` if none)."""
    if any(s.label("gold") for t in dev for s in t.steps):
        return "gold"
    return sources[0] if sources else "gold"


def train_prm(
    data: str | Path | Sequence[Trace], output_dir: str | Path, config: PrmConfig | None = None
) -> dict[str, Any]:
    """Train a PRM on the step labels of ``config.label_source``; returns the dev metrics and timings."""
    config = config or PrmConfig()
    traces, name = _load(data)
    scale = config.label_scale
    if scale == "auto":
        scale = "soft" if _soft(traces, config.label_source) else "hard"
    classes = head_kind(config.head).num_labels
    if config.num_classes not in classes:
        raise ValueError(
            f"the {config.head} head is trained with num_classes in {list(classes)}, found {config.num_classes}"
        )
    num_classes = 2 if scale == "soft" else config.num_classes
    positive = [1] if num_classes == 2 else [1, 2]

    def targets(t: Trace) -> list[float]:
        return step_targets(t, config.label_source, scale, num_classes, config.neutral_as,
                            config.after_first_error, config.last_step_only)  # fmt: skip

    fields = {"num_labels": num_classes, "positive_labels": positive, "label_scale": scale}
    fields |= _likelihood_fields(config)
    if config.head == "critic":  # trained on the teacher's chains the filter keeps, not on labels alone
        traces, filtered = critic_traces(traces, config.label_source, config.filter_source,
                                         config.filter_traces, config.seed, where=name)  # fmt: skip
        fields |= {"verify_tokens": check_tokens}
        return _train_head((traces, name), output_dir, config, "prm", verdict_targets, fields,
                           [config.label_source], filtered)  # fmt: skip
    return _train_head((traces, name), output_dir, config, "prm", targets, fields, [config.label_source])


def _likelihood_fields(config: PrmConfig | OrmConfig) -> dict[str, str]:
    """The likelihood head's read-out settings, recorded in the checkpoint's spec (none for a classifier)."""
    return {"min_over": config.min_over, "surprisal": config.surprisal} if config.head == "likelihood" else {}


def train_orm(
    data: str | Path | Sequence[Trace], output_dir: str | Path, config: OrmConfig | None = None
) -> dict[str, Any]:
    """Train the ORM baseline on ``config.outcome`` (``Trace.answer_correct`` by default); returns the dev
    metrics and timings. Traces without that outcome are refused, naming the first."""
    config = config or OrmConfig()
    traces, name = _load(data)
    missing = next((t for t in traces if outcome_of(t, config.outcome) is None), None)
    if config.outcome != "answer" and missing is not None:
        raise ValueError(
            f"{name}: trace {missing.id!r}: metadata.outcomes.{config.outcome}: expected true or false, "
            f"found {(missing.metadata.get('outcomes') or {}).get(config.outcome)!r}"
        )
    fields = {"label_scale": "hard"} | _likelihood_fields(config)

    def targets(t: Trace) -> list[float]:
        return outcome_targets(t, config.outcome)

    return _train_head((traces, name), output_dir, config, "orm", targets, fields, [])


def fine_tune_prm(
    checkpoint: str | Path, data: str | Path | Sequence[Trace], output_dir: str | Path, **overrides: Any
) -> dict[str, Any]:
    """:func:`train_prm` continuing from a trained PRM (a folder it wrote): ``base_model`` is the
    checkpoint, loaded with its head and weights, and the head, separator, classes, length and
    aggregation are the checkpoint's own; ``overrides`` sets the other :class:`PrmConfig` fields
    (``max_steps``, ``lr``, ``label_source`` ...). The copy's card inherits the checkpoint's gold use
    (``via="backbone"``) beside its own. The critic head is refused: it learns from a teacher's chains."""
    from transformers import AutoConfig

    from prmkit.modeling.spec import read_spec
    from prmkit.modeling.template import SEPARATORS

    spec = read_spec(AutoConfig.from_pretrained(str(checkpoint)))
    if spec is None or spec.kind != "prm" or spec.head == "critic":
        what = "no prmkit PRM" if spec is None or spec.kind != "prm" else "a critic head"
        raise ValueError(f"{checkpoint}: {what}; fine-tuning continues a classifier or likelihood PRM")
    separator = next((n for n in SEPARATORS if StepTemplate.named(n) == spec.template), "token")
    own = {"base_model": str(checkpoint), "head": spec.head, "separator": separator,
           "num_classes": spec.num_labels, "max_length": spec.max_length, "aggregation": spec.aggregation}  # fmt: skip
    if spec.head == "likelihood":  # its read-out, as the checkpoint was trained to be read
        own |= {"min_over": spec.min_over, "surprisal": spec.surprisal}
    return train_prm(data, output_dir, PrmConfig(**(own | {"resume": False} | overrides)))
