"""The recipe: one typed config for the whole loop, read from YAML, every key checked before work starts.

Each section nests the typed config of the command it drives (``prmkit arithmetic``, ``prmkit label``,
``prmkit pretrain``, ``prmkit train``, ``prmkit card``), so a setting means the same thing in a recipe
and on the command line, and is documented once, where that config defines it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializeAsAny,
    field_validator,
    model_validator,
)

from prmkit.core.config import Config, Seed
from prmkit.core.yamlconf import validate_at
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.labeling.rollouts import MAX_ROLLOUTS
from prmkit.policies.options import JudgeOptions, PolicyOptions
from prmkit.rl.config import REWARDS_NEEDING_PRM, Reward, RlConfig
from prmkit.training.config import OrmConfig, PretrainConfig, PrmConfig
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS, is_world_name, world

_DEFAULT = world(DEFAULT_WORLD)

MAX_TRACES = 10_000_000
"""Most training traces (``problems.n`` × ``problems.per_problem``) a recipe may ask for: every one is
sampled, labelled and held in memory by the stages after it (the demo samples 12,000)."""
MAX_INPUT_BYTES = 2 << 30
"""Largest file a recipe may name as input (2 GiB): a trace file is read whole, so a larger one fills
the memory before it is refused; a device or a pipe (``/dev/zero``) has no end and is refused too."""
MAX_LIST = 64
"""Most entries of a recipe's lists whose every entry is a stage or more (PRMs, rewards, reused
folders, ProcessBench files, comparisons)."""


def input_file(value: Path, what: str) -> Path:
    """``value`` when it is a regular file of at most :data:`MAX_INPUT_BYTES`, else a ValueError naming
    ``what``: checked when the recipe is read, so ``--check`` says it and no stage starts."""
    if not value.exists():
        raise ValueError(f"{what} {str(value)!r} does not exist")
    if not value.is_file():
        found = "a directory" if value.is_dir() else "a device, pipe or socket"
        raise ValueError(f"{what} {str(value)!r} is {found}, not a regular file")
    size = value.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise ValueError(f"{what} {str(value)!r} has {size:,} bytes; at most {MAX_INPUT_BYTES:,} are read")
    return value


class ProblemsSection(Config):
    """Where the training problems and their sampled traces come from."""

    source: str | Path = DEFAULT_WORLD
    """An embedded world's name (``arithmetic``: word problems; ``agent``: tool-using agent tasks; see
    ``prmkit.worlds.registry``) generates problems; a path reads a prmkit trace file (problems
    with reference answers and traces to label) instead, and the world-only stages (gold labels) are
    skipped."""
    n: int = Field(400, ge=2, le=1_000_000)
    """World problems in the training set, at most 1,000,000 (and ``n`` × ``per_problem`` at most
    :data:`MAX_TRACES`)."""
    per_problem: int = Field(8, ge=1, le=1024)
    """Traces sampled per problem by the world policy, at most 1,024."""
    seed: Seed = 0
    """Seed of problem generation and sampling (0 to :data:`~prmkit.core.config.MAX_SEED`)."""
    world: SerializeAsAny[BaseModel] = _DEFAULT.config()
    """Knobs of the world's problem generator (``prmkit arithmetic generate`` / ``prmkit agent
    generate``): the fields of the config of the world ``source`` names."""
    policy: SerializeAsAny[BaseModel] = _DEFAULT.policy_config()
    """Error rates of the world's simulated policy that writes the traces (that world's policy config)."""

    @model_validator(mode="before")
    @classmethod
    def _world_configs(cls, data: Any) -> Any:
        """``world`` and ``policy`` are read as the configs of the world ``source`` names."""
        if isinstance(data, dict):
            data = dict(data)
            name = data.get("source", DEFAULT_WORLD)
            w = world(name if is_world_name(name) else DEFAULT_WORLD)
            for key, config in (("world", w.config), ("policy", w.policy_config)):
                data[key] = validate_at(config, data.get(key), key)
        return data

    @field_validator("source", mode="before")
    @classmethod
    def _world_or_file(cls, value: Any) -> Any:
        if isinstance(value, str) and is_world_name(value):
            return WORLDS.canonical(value)
        if isinstance(value, str) and "/" not in value and "." not in value:
            raise ValueError(
                f"{value!r} is neither an embedded world ({', '.join(WORLDS.names())}) nor a file path"
            )
        return Path(value) if isinstance(value, str) else value

    @field_validator("source", mode="after")
    @classmethod
    def _regular_file(cls, value: str | Path) -> str | Path:
        return input_file(value, "problems file") if isinstance(value, Path) else value

    @model_validator(mode="after")
    def _traces_bounded(self) -> ProblemsSection:
        if self.world_name is not None and self.n * self.per_problem > MAX_TRACES:
            raise ValueError(
                f"n × per_problem is {self.n * self.per_problem:,} traces; at most {MAX_TRACES:,} are sampled"
            )
        return self

    @property
    def world_name(self) -> str | None:
        """The embedded world the problems come from, or None for a file."""
        return self.source if isinstance(self.source, str) else None


class LabelsSection(Config):
    """Automated step labels made for the training traces (and scored against gold where it exists)."""

    methods: list[str] = Field(
        default_factory=lambda: ["mc", "binary_search", "judge", "consensus"], max_length=MAX_LIST
    )
    """Which labellers run (``prmkit.labeling.labellers``: mc, binary_search, judge, consensus, and any
    plugin's), each once, in this order."""
    rollouts: int = Field(8, ge=1, le=MAX_ROLLOUTS)
    """Rollouts per prefix for Monte Carlo, and most rollouts per probe for binary search (at most
    :data:`~prmkit.labeling.rollouts.MAX_ROLLOUTS`, as the labellers take)."""
    seed: Seed = 0
    """Seed every rollout's seed derives from (0 to :data:`~prmkit.core.config.MAX_SEED`)."""
    rollout_policy: PolicyOptions = PolicyOptions()
    """Which policy draws the rollouts (world, a local HF folder, or an endpoint)."""
    judge: JudgeOptions = JudgeOptions()
    """Which judge labels the steps (the world's simulated judge, or an endpoint)."""
    consensus_mode: Literal["first_error", "per_step"] = "first_error"
    """What MC and judge must agree on for a trace to be kept (consensus's ``mode``)."""
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per labeller, fields of its own config (``prmkit label NAME --help``) that differ from the shared
    settings above, e.g. ``{binary_search: {batch: 4}}``; checked against that config (names, types and
    bounds) when read."""

    @model_validator(mode="after")
    def _methods_are_registered(self) -> LabelsSection:
        from prmkit.core.registry import RegistryError
        from prmkit.labeling.labellers import labeller

        for name in [*self.methods, *self.options]:
            try:
                labeller(name)
            except RegistryError as err:  # a located recipe error with the closest registered name
                raise ValueError(err.args[0]) from None
        for name, given in self.options.items():
            fields = labeller(name).config.model_fields
            unknown = [k for k in given if k not in fields]
            if unknown:
                raise ValueError(
                    f"options.{name}: {unknown} are not fields of {name}'s config ({', '.join(fields)})"
                )
        for name in self.methods:
            missing = [n for n in labeller(name).needs if n not in self.methods]
            if missing:
                raise ValueError(f"{name} needs {' and '.join(map(repr, missing))} in methods too")
        placeholders = {"input": Path("input.jsonl"), "output": Path("output.jsonl"), "work_dir": None}
        for name in self.methods:  # every value now, with its bounds: not when the stage starts
            validate_at(labeller(name).config, self._values(name, placeholders), "options", name)
        return self

    def _values(self, name: str, files: dict[str, Any]) -> dict[str, Any]:
        """The fields of labeller ``name``'s config: ``files`` (input, output, work_dir), then the shared
        settings its config has fields for, then ``options[name]``."""
        from prmkit.labeling.labellers import labeller

        shared: dict[str, Any] = {"seed": self.seed, "rollouts": self.rollouts, "mode": self.consensus_mode}
        shared |= self.rollout_policy.model_dump() | self.judge.model_dump()
        fields = labeller(name).config.model_fields
        given = shared | files  # a filter has no rollouts and no job folder: each config takes its own
        return {k: v for k, v in given.items() if k in fields} | self.options.get(name, {})

    def config(self, name: str, files: dict[str, Any]) -> Any:
        """The typed config of labeller ``name`` (:meth:`_values`)."""
        from prmkit.labeling.labellers import labeller

        return labeller(name).config(**self._values(name, files))


class PrmRun(Config):
    """One more PRM beside those of ``prm_sources``: another head, or a training set cut to a size, for a
    comparison at equal settings but one (docs/labeling.md, "The labels study")."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """Its stage is ``prm-<name>``, and its row in every table."""
    source: str
    """The label source it learns from (as in ``prm_sources``)."""
    prm: dict[str, Any] = Field(default_factory=dict)
    """Fields of ``train.prm`` changed for this PRM alone, e.g. ``{head: classifier}``."""
    size_of: str | None = None
    """Train on as many traces as this label source labelled (e.g. ``consensus``, which keeps only the
    traces MC and the judge agree on), drawn at random from ``source``'s traces with the PRM's seed: the
    comparison of a filter with a random subset of the same size."""
    traces_of: str | None = None
    """Train only on the traces this label source labelled, with ``source``'s labels (e.g. ``mc_soft`` on
    the traces ``consensus`` kept): soft vs hard labels *after* filtering, as Qwen's "Lessons" compare them."""
    fraction: float | None = Field(None, gt=0.0, le=1.0)
    """Train on this share of ``source``'s labelled traces (at least one), the first of them in an order
    shuffled by the PRM's seed, so a smaller budget's traces are inside every larger one's: a label budget
    (docs/labeling.md, "Label budgets")."""

    @model_validator(mode="after")
    def _prm_fields(self) -> PrmRun:
        PrmConfig.model_validate({**PrmConfig().model_dump(), **self.prm})
        if sum(x is not None for x in (self.size_of, self.traces_of, self.fraction)) > 1:
            raise ValueError(
                "give one of size_of, traces_of and fraction: a subset is random, filtered or a budget"
            )
        return self


class TrainSection(Config):
    """The models: one pretrained backbone shared by every PRM, the ORM and the small LM policy."""

    pretrain: PretrainConfig | None = PretrainConfig(max_steps=1000)
    """The tiny causal LM pretrained on the training traces (also usable as a neural policy); null to
    skip it and put the heads on ``prm.base_model`` / ``orm.base_model`` (a real backbone folder)."""
    prm: PrmConfig = PrmConfig(max_steps=500)
    """Settings shared by every PRM; ``label_source`` is set per PRM from ``prm_sources``."""
    prm_sources: list[str] = Field(default_factory=lambda: ["gold", "mc_hard"], max_length=MAX_LIST)
    """One PRM per label source (gold, mc_hard, mc_soft, binary_search, judge, consensus...), at most
    :data:`MAX_LIST`."""
    prm_runs: list[PrmRun] = Field(default_factory=list, max_length=MAX_LIST)
    """More PRMs, each with its own name, source, changed settings or training-set size (at most
    :data:`MAX_LIST`)."""
    orm: OrmConfig | None = OrmConfig(max_steps=400)
    """The outcome baseline; null to skip it."""

    def prm_config(self, run: PrmRun) -> PrmConfig:
        """``prm`` with ``run``'s changes and its label source."""
        return PrmConfig.model_validate({**self.prm.model_dump(), **run.prm, "label_source": run.source})


class EvaluateSection(WorldEvalSettings):
    """Fresh world data every model is measured on (first-error F1, best-of-N, audits, cards): the
    settings of ``prmkit card`` (:class:`~prmkit.evaluation.config.WorldEvalSettings`), and these."""

    QUIET = (*WorldEvalSettings.QUIET, "generator")  # added after recipes' evaluation stages were keyed

    policy: SerializeAsAny[BaseModel] = _DEFAULT.policy_config()
    """The simulated policy whose samples are judged (best-of-N pools, first-error traces, beam search):
    the policy config of ``world`` (by default the world of ``problems.source``)."""
    generator: SerializeAsAny[BaseModel] | None = None
    """Knobs of the task generator the fresh evaluation problems are drawn by: fields of the config of
    ``world``'s generator, as ``problems.world`` sets them for the training problems (e.g. the code
    world's ``weak_tests``, so models are measured on tasks of the kind they were trained on). Null, or
    the generator's defaults, draws them with its defaults (one stage key for both)."""
    processbench: list[Path] = Field(default_factory=list, max_length=MAX_LIST)
    """ProcessBench files (JSON arrays; regular files of at most :data:`MAX_INPUT_BYTES`, at most
    :data:`MAX_LIST` of them) to evaluate every model on as well, at its world-tuned threshold."""
    claims_seed: Seed | None = None
    """Seed of a second fresh evaluation set, the *claims set*: new test and held-out problems every
    model is measured on once more (stage ``claims-<model>``, beside ``eval-<model>``). Development reads
    ``seed`` (the tuning set: every read-out, threshold and recipe change is judged there); the numbers
    README and docs claim are computed once on this set, after the method is fixed, and both are shown.
    None: no claims set."""
    compare: list[tuple[str, str]] = Field(default_factory=list, max_length=MAX_LIST)
    """Paired comparisons a sweep's study reports beside each PRM against the zero-shot LM and the ORM:
    ``[A, B]`` model names as every table writes them (``prm-<source or run name>``, ``orm``, ``lm
    (zero-shot)``), A − B on first-error F1 and AUROC and on best-of-N at each N, on the very same seeds
    and problems (e.g. a filter against the raw labels it filtered). Read by the report only: changing it
    reruns no stage."""
    zero_shot: bool = True
    """Also evaluate the pretrained LM itself as a verifier, with no step labels (a step's score is its
    least likely token: the ``likelihood`` convention): the row every PRM must beat to show its labels
    taught something. Only when the recipe pretrains."""

    @model_validator(mode="after")
    def _claims_apart(self) -> EvaluateSection:
        if self.claims_seed is not None and self.claims_seed == self.seed:
            raise ValueError(
                f"claims_seed {self.claims_seed} is the tuning seed: the claims set must be fresh"
            )
        return self

    @field_validator("processbench", mode="after")
    @classmethod
    def _regular_files(cls, value: list[Path]) -> list[Path]:
        return [input_file(p, "processbench file") for p in value]


LM = "lm (zero-shot)"
"""The pretrained LM read as a verifier with no step labels: its evaluation stage is ``eval-pretrain``."""


class RlSection(Config):
    """RL against the PRM (``prmkit rl``): one GRPO run per reward from the pretrained LM (π0), every run
    at the same budget, monitored against gold (docs/rl.md, "The experiment")."""

    rewards: list[Reward] = Field(
        default_factory=lambda: ["outcome", "prm_aggregate", "dense", "mixed", "gold_process"],
        max_length=MAX_LIST,
    )
    """One run (stage ``rl-<reward>``) per reward: outcome, prm_aggregate, dense, mixed, gold_process."""
    prm_source: str = "mc_hard"
    """The PRM (one of ``train.prm_sources``) that pays the process rewards; it is also every run's
    monitor proxy, so all runs are read on one PRM."""
    seed: Seed = 0
    """Seed of the runs (set per seed by a sweep; 0 to :data:`~prmkit.core.config.MAX_SEED`)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Fields of ``prmkit rl``'s config (``prmkit rl --help``: steps, group_size, batch, lr, prompts...)
    but ``policy``, ``prm``, ``reward`` and ``seed``, which the recipe sets."""

    @model_validator(mode="after")
    def _rl_fields(self) -> RlSection:
        taken = sorted({"policy", "prm", "reward", "seed"} & set(self.config))
        if taken:
            raise ValueError(
                f"rl.config: {taken} are set by the recipe (π0, rl.prm_source, rl.rewards, rl.seed)"
            )
        self.run_config("outcome", "π0", None)  # every key checked now, before hours of work
        return self

    def run_config(self, reward: str, policy: str, prm: str | None) -> RlConfig:
        """The config of the run of ``reward`` from ``policy`` paid by (or monitored with) ``prm``."""
        fixed = {"policy": policy, "prm": prm, "reward": reward, "seed": self.seed}
        return RlConfig.model_validate({**self.config, **fixed})


class Recipe(Config):
    """``prmkit run RECIPE.yaml``: problems -> traces -> labels -> models -> evaluation -> cards -> report."""

    name: str = DEFAULT_WORLD
    """Shown in the report's title."""
    output_dir: Path = Path("demo-out")
    """Where stage outputs (cached by a hash of their settings) and the report go."""
    problems: ProblemsSection = ProblemsSection()
    labels: LabelsSection = LabelsSection()
    train: TrainSection = TrainSection()
    evaluate: EvaluateSection = EvaluateSection()
    rl: RlSection | None = None
    """RL against the PRM after the models are trained (on a world whose record says ``rl``: its checker
    is the monitors' gold); null (the default) skips it."""
    reuse: list[Path] = Field(default_factory=list, max_length=MAX_LIST)
    """Output folders of earlier runs whose finished stages this run takes instead of running them again:
    a stage is taken where one with its name and key (a hash of its settings, its inputs' keys and
    prmkit's version) is done there, so only identical work is skipped, whatever the other recipe was. A
    sweep's seed looks in ``<folder>/seed-<s>`` and in the folder itself. Taken stages stay where they
    are (nothing is copied); the report names them."""
    seeds: list[Seed] = Field(default_factory=list, max_length=100)
    """Run the whole recipe once per seed (training problems, labels, every model's initialisation; the
    evaluation data stays), each into ``output_dir/seed-<s>``, then one report with mean and 95 % interval
    over seeds (``prmkit.pipeline.sweep``). Empty: one run with the seeds the sections give. At most 100
    seeds, each from 0 to :data:`~prmkit.core.config.MAX_SEED`."""

    @model_validator(mode="before")
    @classmethod
    def _evaluation_policy(cls, data: Any) -> Any:
        """``evaluate.world`` defaults to the world the problems come from, and ``evaluate.policy`` and
        ``evaluate.generator`` are read as that world's policy and generator configs."""
        if not isinstance(data, dict):
            return data
        problems = data.get("problems") or {}
        if isinstance(problems, dict):
            source = problems.get("source", DEFAULT_WORLD)
        else:  # a section already read, or a wrong type the section's own validation reports
            source = getattr(problems, "source", DEFAULT_WORLD)
        evaluate = data.get("evaluate")
        if evaluate is None or isinstance(evaluate, dict):
            evaluate = dict(evaluate or {})
            evaluate.setdefault("world", source if is_world_name(source) else DEFAULT_WORLD)
            # an unknown world is reported by evaluate.world's own check; its policy is read as the default's
            name = evaluate["world"] if is_world_name(evaluate["world"]) else DEFAULT_WORLD
            config = world(name).policy_config
            evaluate["policy"] = validate_at(config, evaluate.get("policy"), "evaluate", "policy")
            if evaluate.get("generator") is not None:  # the defaults read as null: the same tasks, one key
                generator = validate_at(world(name).config, evaluate["generator"], "evaluate", "generator")
                evaluate["generator"] = None if generator == world(name).config() else generator
            data = {**data, "evaluate": evaluate}
        return data

    @model_validator(mode="after")
    def _backends_fit_the_world(self) -> Recipe:
        """Rollouts and judging by one world's simulated policy on another world's problems are refused."""
        name = self.problems.world_name
        if name and self.evaluate.world != name:
            raise ValueError(
                f"evaluate.world is {self.evaluate.world!r} but the problems come from {name!r}: models are "
                "measured on the world they were trained on"
            )
        from prmkit.labeling.labellers import labeller

        read = {f for m in self.labels.methods for f in labeller(m).config.model_fields}  # what runs reads
        for what, backend in (("labels.rollout_policy.policy", self.labels.rollout_policy.policy),
                              ("labels.judge.judge", self.labels.judge.judge)):  # fmt: skip
            if name and is_world_name(backend) and backend != name and what.rsplit(".", 1)[1] in read:
                raise ValueError(
                    f"{what} is {backend!r} but the problems come from {name!r}: use {name!r} "
                    "(or a model or endpoint)"
                )
        return self

    @model_validator(mode="after")
    def _rl_has_what_it_needs(self) -> Recipe:
        if self.rl is None:
            return self
        if self.train.pretrain is None:
            raise ValueError("rl needs train.pretrain: π0 is the pretrained LM")
        name = self.problems.world_name
        if not name or not world(name).rl:
            rl_worlds = [n for n in WORLDS.names() if world(n).rl]
            raise ValueError(
                f"rl runs on a world whose steps a causal LM writes as plain text ({', '.join(rl_worlds)}): "
                f"problems.source is {str(self.problems.source)!r}"
            )
        needs_prm = any(r in REWARDS_NEEDING_PRM for r in self.rl.rewards)
        if self.rl.prm_source not in self.train.prm_sources and needs_prm:
            raise ValueError(
                f"rl.prm_source {self.rl.prm_source!r} is not among train.prm_sources {self.train.prm_sources}"
            )
        return self

    def models(self) -> list[str]:
        """Every model the recipe measures, named as its tables name them."""
        names = [LM] if self.train.pretrain is not None and self.evaluate.zero_shot else []
        names += ["prm-" + s.replace(":", "-") for s in self.train.prm_sources]
        names += ["prm-" + r.name for r in self.train.prm_runs]
        return names + (["orm"] if self.train.orm is not None else [])

    @model_validator(mode="after")
    def _compared_models_exist(self) -> Recipe:
        models = self.models()
        for i, pair in enumerate(self.evaluate.compare):
            unknown = [m for m in pair if m not in models]
            if unknown or pair[0] == pair[1]:
                found = f"unknown {unknown}" if unknown else f"{pair[0]!r} against itself"
                raise ValueError(
                    f"evaluate.compare[{i}]: expected two different models of this recipe "
                    f"({', '.join(models)}), found {found}"
                )
        return self

    @model_validator(mode="after")
    def _sources_are_made(self) -> Recipe:
        from prmkit.labeling.labellers import labeller

        made = {"gold"} if self.problems.world_name else set()
        for name in self.labels.methods:
            made |= set(labeller(name).produces)
        wanted = [*self.train.prm_sources, *(r.source for r in self.train.prm_runs)]
        wanted += [o for r in self.train.prm_runs for o in (r.size_of, r.traces_of) if o]
        missing = [s for s in wanted if s not in made and s.partition(":")[0] not in made]
        if missing:
            raise ValueError(
                f"train.prm_sources {missing} are not made by this recipe (made: {sorted(made)})"
            )
        return self
