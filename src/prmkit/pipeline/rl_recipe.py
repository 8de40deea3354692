"""The RL study's recipe (``recipes/rl.yaml``, ``study: rl``): π0, its PRM, every (reward, seed, draw)
cell, one report; read and checked whole before any work starts.

Sections: ``pi0`` (problems, samples and pretraining: the world's LM on the simulated policy's own,
unfiltered samples, no gold), ``prm`` (``prmkit label mc`` on those samples, ``prmkit train prm`` from
π0; the majority PRM and the ORM that extra cells may name), ``experiment`` (which cells: rewards and
credit forms x RL seeds x draws and claims draws, plus named ``extra`` cells) and ``rl`` (``prmkit rl``'s
config, what every cell starts from; ``prmkit rl --config recipes/rl.yaml`` reads it alone, with its
``policy`` and ``prm``, which the study sets per cell: its draw's π0 and the PRM it names).

Draws (issue 37): ``experiment.draws`` lists independent (π0, PRM) draws; draw d builds its own π0 and
PRM from every seed shifted by d (:meth:`RlStudy.for_draw`); the extra cells run on draw 0 only.
``experiment.claims_draws`` (issue 60) are draws no development run read: the grid runs on them too, and
the report states them apart (the claims side) from ``draws`` (the tuning side). ``experiment.credits``
(issue 60) adds a cell of the ``dense`` reward per credit form, named ``dense-<credit>``
(:func:`credit_cell`), to the grid.
``measure: true`` runs ``experiment.measure``'s keys in place of ``experiment``'s (issue 37's
measurement); ``experiment.only`` names the cells to run of either. Any key can be set from the
command line: ``prmkit run recipes/rl.yaml --set measure=true --set experiment.only=[outcome,dense]``.
The stages that run it are ``prmkit.pipeline.rl_stages``; the statistics ``prmkit.rl.study``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, field_validator, model_validator

from prmkit.core.config import Config, Seed
from prmkit.core.registry import UnknownNameError
from prmkit.core.yamlconf import validate_at
from prmkit.pipeline.recipe import MAX_LIST
from prmkit.rl.config import Reward, RlConfig
from prmkit.rl.credits import CREDITS
from prmkit.training.config import OrmConfig, PretrainConfig, PrmConfig
from prmkit.worlds.registry import DEFAULT_WORLD, WORLDS, is_world_name, world

PRMS = {
    "prm": "the study's PRM: MC labels of π0's samples, trained from π0",
    "pi0": "π0 itself, read zero-shot",
    "majority": "MC labels against majority answers",
    "orm": "an outcome verifier",
}
"""The PRMs a cell may name as ``prm`` (the first is every cell's unless it names another)."""
FILES = ("input", "output", "work_dir")
"""The MC labeller's file fields, which the study sets."""


CREDIT_REWARD: Reward = "dense"
"""The reward a credit form's grid cells are paid (the PRM's step scores, through the form)."""


def credit_cell(credit: str) -> str:
    """The grid cell name of credit form ``credit``: ``dense-<credit>`` (a hyphen, so that no name of an
    extra cell, which are written with underscores, e.g. ``dense_sum``, is taken)."""
    return f"{CREDIT_REWARD}-{credit}"


def _registered_credit(value: str) -> str:
    """A credit form's name as :data:`~prmkit.rl.credits.CREDITS` holds it (an alias read as its name);
    an unknown one refused with the closest names."""
    try:
        CREDITS.get(value)
    except UnknownNameError as err:  # "Did you mean ...?", read as the list item's error
        raise ValueError(str(err)) from None
    return CREDITS.canonical(value)


CreditName = Annotated[str, AfterValidator(_registered_credit)]


class Pi0Section(Config):
    """π0: the world's LM pretrained on the simulated policy's own, unfiltered samples (no gold)."""

    world: str = DEFAULT_WORLD
    """The embedded world whose problems and simulated policy make π0's samples (one whose record says
    ``rl``: a causal LM writes its steps as plain text)."""
    problems: int = Field(3000, ge=2, le=1_000_000)
    """Training problems (``prmkit arithmetic generate --n``)."""
    per_problem: int = Field(4, ge=1, le=1024)
    """Samples of the simulated policy per problem (``prmkit arithmetic sample --per-problem``)."""
    seed: Seed = 0
    """Seed of the problems and their samples."""
    pretrain: PretrainConfig = PretrainConfig()
    """``prmkit pretrain``'s config: π0 from the samples."""

    @field_validator("world")
    @classmethod
    def _rl_world(cls, value: str) -> str:
        rl_worlds = [n for n in WORLDS.names() if world(n).rl]
        if not is_world_name(value) or not world(value).rl:
            raise ValueError(f"{value!r} is not a world RL runs on ({', '.join(rl_worlds)})")
        return WORLDS.canonical(value)


class MajoritySection(Config):
    """The PRM of a user without reference answers (cells naming ``prm: majority``)."""

    votes: int = Field(16, ge=1, le=1024)
    """Fresh samples per problem whose most common final answer stands in for the reference."""
    seed: Seed = 1
    """Seed of those samples."""


class PrmSection(Config):
    """The PRM every cell is paid (or monitored) by, and the weak ones extra cells may name."""

    label: dict[str, Any] = Field(default_factory=dict)
    """``prmkit label mc``'s config but its files (``rollouts``, ``seed``, the rollout policy...)."""
    train: PrmConfig = PrmConfig()
    """``prmkit train prm``'s config (from π0 on the MC labels)."""
    majority: MajoritySection = MajoritySection()
    orm: OrmConfig = OrmConfig()
    """``prmkit train orm``'s config, from π0 on the samples graded by their answers (``prm: orm``)."""

    @field_validator("label")
    @classmethod
    def _mc_config(cls, value: dict[str, Any]) -> dict[str, Any]:
        from prmkit.labeling.labellers import labeller

        taken = sorted(set(FILES) & set(value))
        if taken:
            raise ValueError(f"{taken}: the study sets the labeller's files")
        validate_at(labeller("mc").config, {**value, "input": "in.jsonl", "output": "out.jsonl"})
        return value


class ExperimentSection(Config):
    """Which cells the study runs, and how its report reads them."""

    rewards: list[Reward] = Field(default_factory=lambda: ["outcome", "dense"], max_length=MAX_LIST)
    """The grid's rewards: one cell per reward, RL seed and draw (``outcome`` is every pair's base)."""
    seeds: list[Seed] = Field(default_factory=lambda: [0], max_length=100)
    """The grid's RL seeds."""
    credits: list[CreditName] = Field(default_factory=list, max_length=MAX_LIST)
    """Credit forms (:mod:`prmkit.rl.credits`; docs/rl.md, "Credit forms"), each one more grid cell: the
    ``dense`` reward under that form (its parameters at their defaults, every other key the ``rl``
    section's; ``dense`` pays the step rewards alone, ``process_weight`` being ``mixed``'s), named
    ``dense-<credit>``, on every draw and RL seed, paired with outcome as the rewards are."""
    credit_keys: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``rl`` keys over one credit form's cells (a form's name in ``credits`` -> its keys), e.g. ``{prime:
    {prime_lr: 2.0e-4}}``; a form not named here runs at its defaults."""
    draws: list[int] = Field(default_factory=lambda: [0], max_length=MAX_LIST)
    """Independent (π0, PRM) draws: 0 is the recipe's own seeds, d adds d to each of them."""
    claims_draws: list[int] = Field(default_factory=list, max_length=MAX_LIST)
    """Draws no development run read (none of ``draws``): the grid runs on them too, and the report gives
    the tuning side (over ``draws``) and the claims side (over these) apart, with each credit form's
    verdict against outcome on the claims side."""
    rl: dict[str, Any] = Field(default_factory=dict)
    """``rl`` keys over the ``rl`` section for the grid's cells only (``prompts`` merged key by key)."""
    extra: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Cells beside the grid, on draw 0: a name -> its ``rl`` keys (its ``reward`` among them; ``seeds``:
    its RL seeds, default ``[0]``; ``prm``: one of :data:`PRMS`)."""
    measure: dict[str, Any] | None = None
    """Keys replacing this section's when the recipe says ``measure: true``."""
    only: list[str] = Field(default_factory=list, max_length=MAX_LIST)
    """The cells of these names alone (grid rewards, credit cells ``dense-<credit>`` or extra cells; empty:
    every cell): a part of the experiment, e.g. ``--set experiment.only=[outcome,dense-pure]``; cells
    already run stay cached, the report covers these."""
    resamples: int = Field(2000, ge=10, le=100_000)
    """Bootstrap resamples of every interval of the report."""

    @field_validator("draws")
    @classmethod
    def _distinct(cls, value: list[int]) -> list[int]:
        if not value or len(set(value)) != len(value) or any(d < 0 for d in value):
            raise ValueError("distinct integers >= 0 (0 is the recipe's own)")
        return value

    @field_validator("claims_draws")
    @classmethod
    def _distinct_claims(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value) or any(d < 0 for d in value):
            raise ValueError("distinct integers >= 0, none of them in draws")
        return value

    @field_validator("credits")
    @classmethod
    def _distinct_credits(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"each credit form once: {value}")
        return value

    @model_validator(mode="after")
    def _sides_and_names_apart(self) -> ExperimentSection:
        """A claims draw is no tuning draw, and an extra cell takes no grid cell's name."""
        both = sorted(set(self.draws) & set(self.claims_draws))
        if both:
            raise ValueError(
                f"claims_draws {both} are also in draws: a claims draw is one no tuning run read"
            )
        taken = sorted(set(self.extra) & set(self.grid_names()))
        if taken:
            raise ValueError(f"extra cells {taken} take a grid cell's name: rename them")
        stray = sorted(set(self.credit_keys) - set(self.credits))
        if stray:
            raise ValueError(f"credit_keys names {stray}, not among credits {self.credits}")
        return self

    def grid_names(self) -> list[str]:
        """The grid's cell names: its rewards, then a ``dense-<credit>`` per credit form."""
        return [*self.rewards, *map(credit_cell, self.credits)]

    def grid_cells(self) -> list[tuple[str, dict[str, Any]]]:
        """Each grid cell's name and the ``rl`` keys it sets over the section's (:meth:`grid_names`'
        order)."""
        credits = [
            (credit_cell(c), {**self.credit_keys.get(c, {}), "reward": CREDIT_REWARD, "credit": c})
            for c in self.credits
        ]
        return [(r, {"reward": r}) for r in self.rewards] + credits

    def all_draws(self) -> list[int]:
        """The draws the grid runs on: the tuning ``draws``, then the ``claims_draws``."""
        return [*self.draws, *self.claims_draws]

    def chosen(self) -> ExperimentSection:
        """This section cut to its ``only`` cells (itself when ``only`` is empty; the study checks the
        names against the experiment it runs)."""
        if not self.only:
            return self
        rewards = [r for r in self.rewards if r in self.only]
        credits = [c for c in self.credits if credit_cell(c) in self.only]
        extra = {name: spec for name, spec in self.extra.items() if name in self.only}
        return self.model_copy(update={"rewards": rewards, "credits": credits, "extra": extra})

    @field_validator("extra")
    @classmethod
    def _named_reward(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, spec in value.items():
            if "reward" not in spec:
                raise ValueError(f"extra cell {name!r} names no reward")
            if spec.get("prm", "prm") not in PRMS:
                raise ValueError(f"extra cell {name!r}: prm is one of {', '.join(PRMS)} (the study's PRMs)")
        return value


@dataclass(frozen=True)
class Cell:
    """One ``prmkit rl`` run of the study: a grid reward or an extra cell, its RL seed, its draw and its
    ``rl`` keys (the ``rl`` section with the cell's own over it)."""

    name: str
    seed: int
    draw: int
    rl: dict[str, Any]

    @property
    def stage(self) -> str:
        """Its stage's name: ``rl-<name>-<seed>-d<draw>``."""
        return f"rl-{self.name}-{self.seed}-d{self.draw}"

    @property
    def prm(self) -> str:
        """Which of :data:`PRMS` pays (or monitors) it."""
        return self.rl.get("prm") if self.rl.get("prm") in PRMS else "prm"

    def config(self, policy: str, prm: str) -> RlConfig:
        """Its ``prmkit rl`` config from π0 ``policy``, paid by (or monitored with) ``prm``."""
        return RlConfig.model_validate({**self.rl, "policy": policy, "prm": prm, "seed": self.seed})


class RlStudy(Config):
    """``prmkit run recipes/rl.yaml``: π0 and its PRM per draw, every cell, the study's report."""

    study: Literal["rl"]
    """What tells this recipe from a world recipe (``prmkit.pipeline.runner.load_recipe``)."""
    name: str = "RL study"
    """Shown in the report's title."""
    output_dir: Path = Path("runs/rl")
    """Where stage outputs (cached by a hash of their settings) and the report go."""
    measure: bool = False
    """Run ``experiment.measure``'s keys in place of ``experiment``'s (issue 37's measurement)."""
    pi0: Pi0Section = Pi0Section()
    prm: PrmSection = PrmSection()
    experiment: ExperimentSection = ExperimentSection()
    rl: dict[str, Any] = Field(default_factory=dict)
    """``prmkit rl``'s config (``prmkit rl --help``), what every cell starts from."""
    reuse: list[Path] = Field(default_factory=list, max_length=MAX_LIST)
    """Output folders of earlier runs whose finished stages (same name and key) are taken, as in a world
    recipe."""

    @field_validator("rl")
    @classmethod
    def _rl_config(cls, value: dict[str, Any]) -> dict[str, Any]:
        """A key of the section every cell starts from is a ``prmkit rl`` setting with a valid value, its
        mistake found at its own key (the checks across keys are each cell's: a cell sets its reward,
        policy and PRM)."""
        try:
            RlConfig.model_validate({"policy": "pi0", "prm": "prm", **value})
        except ValidationError as err:
            own = [e for e in err.errors(include_url=False) if e["loc"]]
            if own:
                raise ValidationError.from_exception_data("RlConfig", own) from None  # type: ignore[arg-type]
        return value

    @property
    def seeds(self) -> list[int]:
        """A study is not swept: its RL seeds are cells (``experiment.seeds``)."""
        return []

    @model_validator(mode="before")
    @classmethod
    def _no_sweep(cls, data: Any) -> Any:
        if isinstance(data, dict) and "seeds" in data:
            raise ValueError(
                "an RL study's seeds are experiment.seeds (--set experiment.seeds=[0,1]; measuring, "
                "experiment.measure.seeds) and its draws experiment.draws"
            )
        return data

    @model_validator(mode="after")
    def _cells_are_configs(self) -> RlStudy:
        """Every cell (of the measurement too) is a valid ``prmkit rl`` config, checked before any work."""
        if self.measure and self.experiment.measure is None:
            raise ValueError("measure: true needs an experiment.measure mapping")
        try:
            variants = [self.grid(False, cut=False)]
            variants += [self.grid(True, cut=False)] * (self.experiment.measure is not None)
        except ValidationError as err:
            raise ValueError(f"experiment.measure: {err}") from None
        whole = self.grid(cut=False)
        unknown = sorted(set(whole.only) - set(whole.grid_names()) - set(whole.extra))
        if unknown:
            credits = f", credit cells {list(map(credit_cell, whole.credits))}" if whole.credits else ""
            raise ValueError(
                f"experiment.only: no cell named {unknown} in the experiment this recipe runs (rewards "
                f"{whole.rewards}{credits}, extra cells {list(whole.extra)})"
            )
        for grid in variants:
            for cell in cells_of(self, grid):
                try:
                    cell.config("pi0", cell.prm)
                except ValidationError as err:
                    found = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
                    raise ValueError(f"cell {cell.stage}: {found}") from None
        return self

    def grid(self, measure: bool | None = None, cut: bool = True) -> ExperimentSection:
        """The experiment this recipe runs: ``experiment``, or with ``measure`` its measurement; ``cut``:
        to its ``only`` cells."""
        grid = self.experiment
        if (self.measure if measure is None else measure) and grid.measure is not None:
            grid = ExperimentSection.model_validate(grid.model_dump(exclude={"measure"}) | grid.measure)
        return grid.chosen() if cut else grid

    def for_draw(self, draw: int) -> RlStudy:
        """The recipe draw ``draw`` builds and runs: itself for 0; draw d adds d to every seed a (π0, PRM)
        pair and its RL prompts come from: ``pi0.seed`` (problems and samples), ``pi0.pretrain.seed``,
        ``prm.label.seed`` (MC rollouts), ``prm.train.seed`` and ``rl.prompts.seed``. The last keeps the
        draws exchangeable: draw 0's RL prompts are among the problems π0 and the PRM were trained on, and
        shifting both keeps that true in every draw; it also gives each draw its own monitor problems."""
        if draw == 0:
            return self
        pi0, prm, rl = self.pi0, self.prm, self.rl
        pretrain = pi0.pretrain.model_copy(update={"seed": pi0.pretrain.seed + draw})
        label = {**prm.label, "seed": prm.label.get("seed", 0) + draw}
        prompts = rl.get("prompts") or {}
        return self.model_copy(
            update={
                "pi0": pi0.model_copy(update={"seed": pi0.seed + draw, "pretrain": pretrain}),
                "prm": prm.model_copy(update={"label": label, "train": prm.train.model_copy(
                    update={"seed": prm.train.seed + draw})}),
                "rl": {**rl, "prompts": {**prompts, "seed": prompts.get("seed", 0) + draw}},
            }
        )  # fmt: skip

    def cells(self) -> list[Cell]:
        """Every cell of the experiment this recipe runs (:func:`cells_of`)."""
        return cells_of(self, self.grid())


def cells_of(study: RlStudy, grid: ExperimentSection) -> list[Cell]:
    """Every cell: the grid (``rewards`` and ``credits`` x ``seeds``) in every draw of ``grid.draws`` and
    then of ``grid.claims_draws``, its ``rl`` section with ``grid.rl``'s keys over it (``prompts`` merged
    key by key: e.g. more monitor problems for the grid's cells only), then the extra cells, on draw 0."""
    out = []
    over = grid.rl
    for draw in grid.all_draws():
        base = study.for_draw(draw).rl
        base = {**base, **over, "prompts": {**(base.get("prompts") or {}), **(over.get("prompts") or {})}}
        out += [Cell(name, s, draw, {**base, **keys}) for s in grid.seeds for name, keys in grid.grid_cells()]
    for name, spec in grid.extra.items():
        spec = dict(spec)
        seeds = spec.pop("seeds", [0])
        out += [Cell(name, s, 0, {**study.rl, **spec}) for s in seeds]
    return out
