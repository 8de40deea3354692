"""One typed config per training command; each field is documented once, here (``--help`` reads it).

Defaults are tuned for the embedded world on a small CPU: a tiny 2-layer LM (local RoPE layer under a
position-free global one) pretrained on the world's traces, then fine-tuned with a step head for a few minutes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from prmkit.core.config import MAX_BATCH, MAX_STEPS, MAX_THREADS, MAX_TOKENS, Config, Seed
from prmkit.modeling.backbone import TinyConfig


class _Config(Config):
    """What every training command (``pretrain``, ``train prm``, ``train orm``) shares."""

    epochs: float = Field(3.0, gt=0)
    """Passes over the training traces, when ``max_steps`` is not given."""
    max_steps: int | None = Field(None, ge=1, le=MAX_STEPS)
    """Optimiser steps to train (overrides ``epochs``): the machine-independent way to say how much to
    train. The same steps, seed and ``threads`` give the same model on a quiet or a busy machine, only
    sooner or later; the learning-rate schedule runs over these steps."""
    max_minutes: float | None = Field(None, gt=0)
    """A time cap (None: none). Only time inside optimiser steps counts (dev evaluation and checkpoint
    saves do not). When it cuts a run planned in ``max_steps`` or ``epochs`` short, the log, the process
    card (``training.stopped_early``) and the run report say so: the model is then not the one the config
    describes. With no ``max_steps`` it also shapes the learning-rate schedule (by elapsed share)."""
    budget_clock: Literal["wall", "cpu"] = "wall"
    """Clock of ``max_minutes``: ``wall``, or ``cpu`` = process CPU time per torch thread. Both depend on
    the machine and its load (a thread waiting for a descheduled sibling burns CPU, so a busy machine
    gets fewer steps from the same CPU-minutes: docs/models.md, "Training"), which is why shipped recipes
    plan in ``max_steps``."""
    batch_size: int = Field(32, ge=1, le=MAX_BATCH)
    """Traces per device per optimiser micro-step."""
    grad_accum: int = Field(1, ge=1, le=MAX_BATCH)
    """Micro-steps accumulated per optimiser step (effective batch = batch_size x grad_accum x devices)."""
    lr: float = Field(2e-3, gt=0)
    """Peak learning rate (linear warm-up over 5 % of steps, then cosine decay)."""
    weight_decay: float = Field(0.01, ge=0)
    """AdamW weight decay."""
    max_length: int = Field(512, ge=16, le=MAX_TOKENS)
    """Longest input in tokens; what happens to a longer trace is ``overlong``'s choice (PRM / ORM)."""
    eval_every: int = Field(100, ge=1, le=MAX_STEPS)
    """Optimiser steps between dev evaluations and checkpoints."""
    mixed_precision: Literal["auto", "no", "bf16", "fp16"] = "auto"
    """``auto``: bf16 on a GPU that has it, else fp16 on a GPU, else full precision (CPU)."""
    seed: Seed = 0
    """Seed of initialisation, data order and the train/dev split."""
    dev_fraction: float = Field(0.1, gt=0, lt=1)
    """Share of *problems* held out as dev (all traces of a problem go to one side: no leakage)."""
    resume: bool = True
    """Continue from the newest checkpoint in ``output_dir`` when one exists (after a crash)."""
    threads: int | None = Field(None, ge=1, le=MAX_THREADS)
    """CPU threads for torch (None: torch's default, one per physical core). Set it where results must
    not depend on the machine (the count changes float rounding) and where several jobs share the cores
    (one thread per job); the count used is recorded in the process card."""


class PretrainConfig(_Config):
    """Pretrain a tiny causal LM on trace text (``problem``, then one step per line): the backbone of
    the world's PRM and ORM, and a small neural policy in its own right."""

    tiny: TinyConfig = TinyConfig()
    """Size of the from-scratch model: layers, width, heads, max_length."""
    vocab_size: int = Field(1024, ge=300, le=1 << 22)
    """BPE vocabulary size of the tokenizer built on the data (digits are always single tokens)."""
    only_valid: bool = False
    """Learn only from traces whose process is valid under ``label_source`` (and whose answer is not known
    to be wrong). Off (default): the LM learns from the policy's own samples, errors and all, as a real
    PRM starts from the policy's base model, so it finds the policy's habitual errors likely. On, with
    gold labels, every model built on this LM has used gold: its process card says so (``gold_use``)."""
    loss_on_problem: bool = False
    """Also learn to predict the problem text. Off (default) puts every gradient on the solution steps
    (copying quantities, arithmetic), which is what a verifier needs; a policy is given the problem, so it
    loses nothing."""
    label_source: str = "gold"
    """Label source that decides validity for ``only_valid`` (traces it did not label are kept)."""
    min_copy_rate: float | None = Field(None, gt=0, le=1)
    """Agent traces: the share of restated tool values (a number a step writes that the result it just
    read holds) the trained LM must reproduce digit for digit on its dev traces (``copy_rate`` in the
    card; it reads no label). Below it, pretraining goes on for ``copy_steps`` more steps with a fresh
    warm-up, up to ``copy_rounds`` times, then stops with an error. A likelihood PRM sees a misread tool
    value only where its backbone is sure of the right digit, and the same steps from another seed can
    give an LM that has not learned to copy yet. None (default): measured and recorded, not enforced."""
    copy_steps: int = Field(400, ge=1, le=MAX_STEPS)
    """Optimiser steps of each extra round that ``min_copy_rate`` asks for."""
    copy_rounds: int = Field(2, ge=0, le=100)
    """Most extra rounds before a backbone that does not copy is refused."""
    lr: float = Field(2e-3, gt=0)
    """Peak learning rate (linear warm-up over 5 % of steps, then cosine decay)."""
    epochs: float = Field(2.0, gt=0)
    """Passes over the training text, when ``max_steps`` is not given."""
    batch_size: int = Field(32, ge=1, le=MAX_BATCH)
    """Sequences per device per optimiser micro-step."""


class _HeadConfig(_Config):
    base_model: str | None = None
    """A local HF folder (a causal LM such as ``prmkit pretrain``'s output, a backbone, or a token
    classifier) to put the step head on; None trains the tiny config from scratch."""
    tiny: TinyConfig = TinyConfig()
    """Size of the from-scratch model when ``base_model`` is None."""
    separator: Literal["token", "ki", "extra_0", "newline"] = "token"
    """Step separator: ``token`` = a dedicated added ``<|step|>`` token (one id, never in step text, so
    vLLM's STEP pooling finds exactly one row per step), ``ki`` = Math-Shepherd's `` ки``, ``extra_0`` =
    Qwen's ``<extra_0>``, ``newline`` = TRL's default ``\\n``."""
    trust_remote_code: bool = False
    """Allow a base model's own modelling code (off: only architectures transformers ships)."""
    aggregation: str = "min"
    """Default aggregation recorded in the checkpoint (min, prod, last, mean, geomean)."""
    overlong: Literal["error", "skip", "truncate"] = "error"
    """A trace longer than ``max_length`` (train or dev): ``error`` stops before training and names it,
    ``skip`` leaves it out, ``truncate`` keeps the steps that fit (the steps cut off go unlabelled, and a
    dev trace is judged on the kept steps). The summary and the process card count both."""
    dev_label_source: str | None = None
    """Step labels that dev first-error F1 (model selection, the tuned threshold) is measured against.
    None: ``gold`` where the dev traces carry gold labels (the world's checker, a hand-labelled set), else
    a PRM's own ``label_source`` (an ORM has none: it then trains to its budget with no selection). Dev
    traces without labels from this source are left out."""
    gradient_checkpointing: bool = False
    """Keep each layer's input only and recompute its activations in the backward pass (transformers'
    gradient checkpointing, non-reentrant): about a third more compute for activation memory that no
    longer grows with the layers, what a 7B backbone needs at 4,096 tokens. Only where numbers are kept
    changes, not the numbers: the losses are those of the same run without it."""
    master_weights: Literal["fp32", "model"] = "fp32"
    """Dtype of the weights the optimiser steps. ``fp32`` (default): float32, upcast after loading a bf16
    or fp16 checkpoint (transformers 5 loads a checkpoint in its own dtype), and ``mixed_precision`` does
    the compute in bf16 / fp16; in bf16 weights AdamW's small updates (lr 1e-5) round away. With LoRA and
    mixed precision the frozen backbone stays in the checkpoint's dtype. ``model``: the checkpoint's own
    dtype throughout (pure bf16: less memory, rounded updates). The card records the dtype stepped
    (``training.precision``)."""
    lora_r: int | None = Field(None, ge=1, le=MAX_BATCH)
    """LoRA rank (``peft``). None (default): fine-tune every weight. A rank: freeze ``base_model`` and
    train low-rank adapters on ``lora_target_modules``; a classifier's step head (``score``) and the step
    tag's embedding row are trained in full (the likelihood head, the LM itself, is adapted). The card's
    ``training.lora`` says how it was trained and saved."""
    lora_alpha: float = Field(16.0, gt=0)
    """LoRA: an adapter's update is scaled by ``lora_alpha / lora_r``."""
    lora_dropout: float = Field(0.0, ge=0, lt=1)
    """LoRA: dropout on the adapters' input while training."""
    lora_target_modules: list[str] = Field(default_factory=lambda: ["all-linear"])
    """LoRA: the modules given adapters: ``all-linear`` (every linear layer of the backbone, peft's
    shorthand) or module names matched at the end of each module's path (``q_proj``, ``v_proj``: repeat
    the flag)."""
    lora_merge: bool = True
    """LoRA: save the adapters merged into the backbone (default), an ordinary Hugging Face folder that
    ``prmkit score`` and transformers load like any other checkpoint; off: the adapter alone
    (``adapter_model.safetensors``, ``adapter_config.json``, the tokenizer, the trained model's
    ``config.json``) with a README that says how to merge it onto ``base_model``."""

    @model_validator(mode="after")
    def _lora_needs_a_rank_and_a_backbone(self) -> _HeadConfig:
        fields = type(self).model_fields
        lora = [k for k in ("lora_alpha", "lora_dropout", "lora_target_modules", "lora_merge")
                if getattr(self, k) != fields[k].get_default(call_default_factory=True)]  # fmt: skip
        if self.lora_r is None and lora:
            raise ValueError(f"{', '.join(lora)} set without lora_r: give a rank to train with LoRA")
        if self.lora_r is not None and self.base_model is None:
            raise ValueError(
                "lora_r adapts a pretrained base_model, and a model trained from scratch has none: set "
                "base_model (e.g. `prmkit pretrain`'s output) or leave lora_r unset"
            )
        if "all-linear" in self.lora_target_modules and len(self.lora_target_modules) > 1:
            raise ValueError("lora_target_modules: 'all-linear' stands alone (it already means every linear)")
        return self

    head: Literal["classifier", "likelihood", "critic"] = "classifier"
    """``classifier`` (default): a token-classification head read at the step tag, the field's standard
    (``AutoModelForTokenClassification``, vLLM STEP pooling). ``likelihood``: the base causal LM itself,
    fine-tuned so that a step's score is the lowest probability it gives one of the step's tokens (a
    generative verifier; saved as ``AutoModelForCausalLM``, steps one per line, ``separator`` unused).
    An ORM takes the same head, so the two differ only in their labels. 2-class labels only. How fast
    each head learns from a small LM that knows the task: docs/models.md, "Learnability on the embedded
    world". ``critic`` (PRMs only): a causal LM fine-tuned to write a check and a verdict after each step,
    on the verification chains ``label_source``'s labels carry (a teacher judge's answers, e.g.
    ``judge:arithmetic-teacher``), scored P(verdict = correct) (docs/models.md, "The critic head")."""
    lm_weight: float = Field(1.0, ge=0)
    """Likelihood head: weight of the LM loss on correct steps beside the step loss."""
    min_over: Literal["input", "own"] = "input"
    """Likelihood head, agent steps: take a step's lowest token probability over its whole input
    (``input``: the tool results it reads, then its text and calls) or over what the agent wrote only
    (``own``). A tool's result is as improbable after a right step as after a wrong one, so ``own`` keeps
    the environment's text from setting right steps' scores. The default stays the whole input; what
    ``own`` changes on the agent world: docs/agentworld.md, "The whole loop on agents". Math steps read no
    results: the two are the same there."""
    surprisal: Literal["raw", "excess"] = "raw"
    """Likelihood head: what each token's probability is measured against, in the read-out and the
    objective. ``raw``: its log-probability. ``excess``: plus the entropy of the model's prediction at
    that token, so a token chosen among several right ones (which entity to look up next) scores near
    0 and a wrong one where the model was sure (a misread digit) far below. What it changes on the agent
    world (first-error F1; a PRM overturning a majority that shares a misread): docs/agentworld.md, "The
    whole loop on agents"; math keeps ``raw`` until measured there."""

    @model_validator(mode="after")
    def _likelihood_lr(self) -> _HeadConfig:
        """The likelihood and critic heads fine-tune every weight of a pretrained LM: 5e-4 unless ``lr``
        is given."""
        if self.head in ("likelihood", "critic") and "lr" not in self.model_fields_set:
            self.lr = 5e-4
        return self


class PrmConfig(_HeadConfig):
    """Train a PRM: a score for every step in one forward pass per trace (a classifier head read at the
    step tags, or the LM's own likelihood of each step's tokens)."""

    QUIET = ("filter_source", "filter_traces")  # added after recipes' PRM stages were keyed

    @model_validator(mode="after")
    def _noise_two_class(self) -> PrmConfig:
        if (self.missed_error_rate or self.false_error_rate) and self.num_classes != 2:
            raise ValueError("missed_error_rate / false_error_rate model 2-class labels; set num_classes=2")
        return self

    label_source: str = "gold"
    """Selector of the step labels to learn (``gold``, ``mc_hard``, ``mc_soft``, ``human:alice``...)."""
    label_scale: Literal["auto", "hard", "soft"] = "auto"
    """``hard``: ratings, cross-entropy; ``soft``: scores in [0, 1], binary cross-entropy; ``auto``: soft
    when the source's labels carry scores, else hard."""
    num_classes: Literal[2, 3] = 2
    """Hard labels: 2 (correct / incorrect) or 3 (PRM800K's -1 / 0 / +1, neutral kept apart)."""
    neutral_as: Literal["positive", "negative"] = "positive"
    """2-class only: where a neutral (0) rating goes. Positive by default: a neutral step is true, only
    useless, and it is not a first error (Qwen's choice; TRL's prm800k script makes it negative)."""
    after_first_error: Literal["mask", "keep"] = "mask"
    """Labels after a trace's first error: ``mask`` (default) drops them, because sources disagree there
    (locally valid vs. doomed prefix vs. Monte Carlo's all-zero) and the first error is what a PRM must
    find; ``keep`` trains on them as the source gave them."""
    missed_error_rate: float = Field(0.0, ge=0, lt=1)
    """Rate at which the labels call a wrong step correct (2-class only). With a rate > 0 the loss models
    that noise instead of fitting it (``training.loop.binary_loss``): a "correct" label on a step the
    model is confident is wrong costs little, and the likelihood head's LM loss leaves that step out.
    0 (default) trusts the labels; docs/models.md measures what it does for filtered MC labels."""
    false_error_rate: float = Field(0.0, ge=0, lt=1)
    """Rate at which the labels call a correct step wrong (2-class only), e.g. Monte Carlo's first
    "wrong" step when it is a valid step after a missed error. Modelled as ``missed_error_rate`` is."""
    last_step_only: bool = False
    """Train on the last step's label only (TRL's ``train_on_last_step_only``)."""
    filter_source: str | None = None
    """Critic head: the small labelled set's label source (``human``, ``gold``...). A trace's teacher
    chain is trained on only where its verdicts agree with these labels up to their first error
    (ThinkPRM's process-based filtering), and only traces carrying them are used; the card records how
    many it read (``gold_use`` when gold). None: every chain, unchecked."""
    filter_traces: int | None = Field(None, ge=1)
    """Critic head: the filter set's size, a draw (by ``seed``) of this many of the traces carrying
    ``filter_source`` labels: the label budget of the critic. None: every such trace."""

    @model_validator(mode="after")
    def _filter_is_the_critics(self) -> PrmConfig:
        if self.head != "critic" and (self.filter_source is not None or self.filter_traces is not None):
            raise ValueError("filter_source / filter_traces filter a critic head's chains: set head='critic'")
        if self.filter_traces is not None and self.filter_source is None:
            raise ValueError("filter_traces sizes the filter set: name its labels with filter_source")
        return self


class OrmConfig(_HeadConfig):
    """Train an ORM baseline: the same backbone and head, one label per trace (``answer_correct``, or
    another outcome the environment reported) read at the last step's tag. Read at every tag it scores
    prefixes, so it can be compared with a PRM."""

    QUIET = ("outcome",)  # added after recipes' ORM stages were keyed (core.config.Config)

    @model_validator(mode="after")
    def _no_critic(self) -> OrmConfig:
        if self.head == "critic":
            raise ValueError("the critic head verifies steps from a teacher's chains: train it as a PRM")
        return self

    aggregation: str = "last"
    """Default aggregation recorded in the checkpoint (an ORM's own score is the last step's)."""
    outcome: str = Field("answer", pattern=r"^[A-Za-z0-9_.-]+$")
    """The outcome it learns: ``answer`` (``Trace.answer_correct``: the final answer checked against the
    reference), or the name of a boolean in ``Trace.metadata["outcomes"]``, a check the environment ran
    that a trainer would pay, e.g. the code world's ``visible_pass`` (the visible tests on the submitted
    workspace: what a coding agent's CI reports, tests it may have edited included)."""
