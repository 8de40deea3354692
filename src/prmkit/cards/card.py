"""The full process card: the training-time card plus where the model was tested and what still fails.

Training writes a minimal ``process_card.json`` beside every checkpoint (process_card.py: reading
conventions, label sources with counts and provenance, base model, data and split). :func:`write_card`
completes it from the measurements of :func:`prmkit.evaluation.suite.evaluate_world` (``run_card``,
the ``prmkit card MODEL`` command, measures and then writes):

- ``process``      what was supervised: step definition, separator and tag, label scale
- ``evaluation``   first-error F1 per subset (threshold and its origin), best-of-N with bands
- ``audits``       gaming gap, outcome shift, process fidelity / collapse, lucky answers, ECE, length
- ``not_tested``   what the measurements did not cover, derived from what they did
- ``roles``        base model, policy, ORM, PRM, judge, human labels, tool scaffold and deployment monitor
                   (training's record completed with the models and ``--monitor``; cards/roles.py)
- ``plots``        the PNGs, relative to the card

and writes it back as JSON (new sections added, training's left as they were) and as Markdown
(``README.md``, which is also the Hugging Face model card). A section that could not be measured says
why in its place; none is left silently empty.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from prmkit.cards.process_card import ProcessCard, read_process_card, write_process_card
from prmkit.cards.roles import DeploymentMonitor, Roles, card_roles, read_monitor
from prmkit.core.files import atomic_write
from prmkit.core.yamlconf import validate_at
from prmkit.evaluation.config import WorldEvalSettings
from prmkit.modeling.loading import LoadOptions

if TYPE_CHECKING:  # the transfer module loads numpy; the CLI imports this module for its config
    from prmkit.evaluation.transfer import TransferResult

EVAL_DIR = "card"
"""Folder (beside the card) holding the evaluation results and plots the card shows."""


def process_section(base: ProcessCard) -> dict[str, Any]:
    """What process was supervised, from the reading conventions training recorded."""
    spec = base.model
    template = spec.get("template", {}) if isinstance(spec.get("template"), dict) else {}
    kind = spec.get("kind", base.kind)
    scale = spec.get("label_scale", "hard")
    from prmkit.modeling.heads import head
    from prmkit.modeling.spec import LABELS_2, LABELS_3  # the class names the checkpoint's config carries

    classes = spec.get("id2label") or {2: LABELS_2, 3: LABELS_3}.get(spec.get("num_labels", 2))
    read_at = head(spec.get("head") or "classifier").reads_at
    return {
        "kind": kind,
        "head": spec.get("head", "classifier"),
        "step_definition": spec.get("step_definition")
        or f"one Step of a prmkit Trace, {read_at}"
        + (f" ({w.name} data: {w.step_definition})" if (w := _world(base)) else ""),
        "input_template": template.get("prompt_template"),
        "separator": template.get("separator"),
        "tag": template.get("tag"),
        "tag_id": spec.get("tag_id"),
        "label_scale": scale,
        "classes": classes,
        "positive_labels": spec.get("positive_labels"),
        "aggregation": spec.get("aggregation"),
        "supervised_at": "the final step only (outcome)" if kind == "orm" else "every step",
    }


def base_section(base: ProcessCard) -> dict[str, Any]:
    """The base model, or the from-scratch architecture when there was none."""
    config = base.training.get("config", {}) if isinstance(base.training, dict) else {}
    if base.base_model:
        return {"base_model": base.base_model, "from_scratch": False}
    return {
        "base_model": "none: trained from scratch",
        "from_scratch": True,
        "architecture": config.get("tiny"),
    }


def _world(base: ProcessCard) -> Any:
    """The embedded world whose labels or data the card records (None for other data)."""
    from prmkit.worlds.registry import world_in

    return world_in(json.dumps(base.model_dump(mode="json"), default=str))


def not_tested(
    base: ProcessCard, evaluation: dict[str, Any] | None, transfer: dict[str, Any] | None = None
) -> list[str]:
    """What the measurements did not cover, derived from what they did cover (``transfer``: the settings
    ``prmkit eval transfer`` measured it in, :meth:`TransferResult.to_dict`, which the lines then name)."""
    if not evaluation:
        return ["anything: no evaluation was run for this card (run `prmkit card MODEL` with evaluation on)"]
    data = evaluation["data"]
    out = []
    if evaluation.get("processbench_error"):
        out.append(f"real mathematics: ProcessBench could not be run ({evaluation['processbench_error']})")
    elif not evaluation.get("processbench"):
        out.append("real mathematics: ProcessBench / PRM800K were not run (world data only)")
    measured = [s["name"] for s in (transfer or {}).get("settings", [])[1:]]
    also = f" and the settings under *Where it transfers* ({', '.join(measured)})" if measured else ""
    out.append(f"traces from other policies than {', '.join(data['policies'])}{also}")
    out.append(f"traces longer than {data['steps_max']} steps or shorter than {data['steps_min']}")
    targets = ((transfer or {}).get("params") or {}).get("config", {}).get("targets", {})
    crossed = sorted({t["world_name"] for t in targets.values() if t.get("world_name")})
    from prmkit.worlds.registry import world

    tool_worlds = [n for n in crossed if not world(n).rl]  # their steps call tools (World.rl says so)
    if "tool_call" not in data["step_kinds"] and not tool_worlds:
        out.append("agent trajectories (tool-call and observation steps)")
    if crossed:
        out.append(
            f"worlds other than its own and {', '.join(crossed)} (*Where it transfers* measures those)"
        )
    else:
        out.append(
            "other worlds than its own (`prmkit eval transfer` with a target's `world_name` measures one)"
        )
    bon_max = max((r["n"] for r in evaluation["bon"]["rows"]), default=0)
    beam = evaluation.get("beam_gaming")
    beam_max = max((r["pressure"] for r in beam["rows"]), default=0) if beam else 0
    out.append(
        f"best-of-N beyond N = {bon_max}"
        + (f"; beam search beyond a budget of {beam_max}" if beam else "; beam search")
        + "; RL training as a consumer of the scores (reward hacking over many updates)"
    )
    if evaluation["bon"].get("orm") is None:
        out.append("a side-by-side ORM baseline (no ORM was given)")
    out.append(
        "other configurations of the world than its default (its generator's and policy's knobs)"
        + (also or "; `prmkit eval transfer` measures named ones, `prmkit card --transfer` shows them")
    )
    return out


def full_card(
    base: ProcessCard,
    evaluation: dict[str, Any] | None,
    eval_dir: str = EVAL_DIR,
    roles: Roles | None = None,
    transfer: TransferResult | None = None,
) -> ProcessCard:
    """The training card plus the measured sections (a new object; ``base`` is not changed); ``roles``
    default to training's completed with the base model and this model (no ORM, no monitor);
    ``transfer``: the settings it was measured in beside the source (``prmkit eval transfer``)."""
    card = base.model_copy(deep=True)
    card.roles = roles or card_roles(base.roles, kind=base.kind, base_model=base.base_model)
    extra: dict[str, Any] = {
        "process": process_section(base),
        "base": base_section(base),
        "evaluation": None
        if evaluation is None
        else {k: evaluation[k] for k in ("data", "first_error", "bon", "scorer")}
        | ({"processbench": evaluation["processbench"]} if evaluation.get("processbench") else {}),
        "audits": None if evaluation is None else evaluation["audits"],
        "transfer": None if transfer is None else transfer.to_dict(),
        "not_tested": not_tested(base, evaluation, None if transfer is None else transfer.to_dict()),
        "plots": _plots(evaluation, eval_dir),
    }
    for key, value in extra.items():
        setattr(card, key, value)
    return card


def _plots(evaluation: dict[str, Any] | None, eval_dir: str) -> dict[str, str]:
    if not evaluation:
        return {}
    files = evaluation["files"]
    drawn = {"first_error": "first_error_plot", "bon": "bon_plot"}  # absent when evaluate.plots is false
    plots = {name: files[key] for name, key in drawn.items() if key in files}
    plots |= {f"audit_{k}": v for k, v in files["audit_plots"].items()}
    return {k: f"{eval_dir}/{v}" for k, v in plots.items()}


def write_card(
    model_dir: str | Path,
    evaluation: dict[str, Any] | None,
    out: str | Path | None = None,
    *,
    orm: str | Path | None = None,
    monitor: DeploymentMonitor | None = None,
    transfer: TransferResult | None = None,
) -> Path:
    """Complete the training card of ``model_dir`` with ``evaluation`` (:func:`evaluate_world`'s summary,
    written under ``OUT/card``, with ProcessBench at the world-tuned threshold when it was measured) and
    the roles (the ``orm`` checkpoint beside it, the ``monitor`` it is deployed behind) and the
    ``transfer`` matrix measured for it (:func:`prmkit.evaluation.transfer.read_transfer`), and write it as
    JSON and README.md in ``out`` (default: ``model_dir``); returns the README path. The card measures
    nothing: it reads the evaluation it is given."""
    from prmkit.cards.render import head_usage, render_markdown

    base = read_process_card(model_dir)
    out = Path(out or model_dir)
    roles = card_roles(
        base.roles, kind=base.kind, base_model=base.base_model, model=model_dir, orm=orm, monitor=monitor
    )
    card = full_card(base, evaluation, roles=roles, transfer=transfer)
    write_process_card(out, card)
    readme = out / "README.md"
    with atomic_write(readme) as fh:  # the usage sections training's README had, from the head table
        fh.write(render_markdown(card, head_usage(card, model_dir)))
    return readme


class CardConfig(WorldEvalSettings):
    """Write the full process card (README.md = HF model card, process_card.json, plots) from measurements."""

    model: Path
    """Checkpoint folder with the process_card.json training wrote."""
    out: Path | None = None
    """Where README.md, process_card.json and card/ go (default: MODEL)."""
    refresh: bool = False
    """Measure again even if MODEL/card/ holds results."""
    orm: Path | None = None
    """ORM checkpoint: the best-of-N baseline, linked in the card's roles."""
    monitor: Path | None = None
    """JSON of the gate the model is deployed behind (rule, aggregation, threshold, action, and the TPR /
    TNR measured on a labelled set: ``prmkit.cards.roles.DeploymentMonitor``), shown as the card's monitor
    role (without it: none declared)."""
    transfer: Path | None = None
    """``transfer.json`` of this model (``prmkit eval transfer``, or its folder): its settings become the
    card's *Where it transfers* rows and leave the "not tested" lines. Refused when it measured another
    checkpoint."""
    processbench: list[Path] | None = None
    """ProcessBench files to evaluate too (repeat)."""
    load: LoadOptions = Field(default_factory=LoadOptions)
    """How the checkpoints are loaded (dtype, device, device map, attention, remote code)."""
    policy: dict[str, Any] = Field(default_factory=dict)
    """The simulated policy whose samples are judged, as a recipe's ``evaluate.policy``: fields of
    ``world``'s policy config (``prmkit arithmetic sample --help``, ``prmkit agent sample --help``), e.g.
    ``{systematic: 0.5}`` in a ``--config`` file; empty: that world's default policy."""

    @model_validator(mode="after")
    def _policy_of_the_world(self) -> CardConfig:
        self.policy_config()  # an unknown or mistyped field fails here, before minutes of evaluation
        return self

    def policy_config(self) -> Any:
        """``policy`` read as the policy config of ``world``."""
        from prmkit.worlds.registry import world

        return validate_at(world(self.world).policy_config, self.policy, "policy")


def run_card(c: CardConfig) -> Path:
    """``prmkit card``: measure the checkpoint on fresh world data as ``c`` says (results already in
    ``OUT/card/`` are reused unless ``refresh``), then write the full card; returns the README path."""
    from prmkit.evaluation.suite import evaluation_of, processbench_at_threshold
    from prmkit.scoring import load_scorer

    monitor = read_monitor(c.monitor) if c.monitor is not None else None  # a bad file fails before measuring
    transfer = transfer_of(c.transfer, c.model) if c.transfer is not None else None
    scorer = load_scorer(c.model, load=c.load)
    orm = load_scorer(c.orm, load=c.load) if c.orm is not None else None
    out = c.out or c.model
    evaluation = evaluation_of(
        scorer, out / EVAL_DIR, c, refresh=c.refresh, orm=orm, policy_config=c.policy_config()
    )
    if c.processbench:
        evaluation = processbench_at_threshold(
            c.model, c.processbench, evaluation, out / EVAL_DIR, load=c.load
        )
    return write_card(c.model, evaluation, out, orm=c.orm, monitor=monitor, transfer=transfer)


def transfer_of(path: Path, model: Path) -> TransferResult:
    """The transfer matrix in ``path`` when it measured ``model``; another checkpoint's is refused in one
    line (a card must not show a neighbour's numbers), and so is one measured over several training seeds
    (its numbers are the recipe's, averaged over checkpoints, not this checkpoint's)."""
    from prmkit.core.errors import InputError, Issue
    from prmkit.evaluation.transfer import read_transfer

    result = read_transfer(path)
    issue = None
    if result.seeds:
        found = f"a matrix over {len(result.seeds)} training seeds"
        issue = Issue(str(path), None, "seeds", f"one checkpoint's matrix (the card's model {model})", found)
    elif Path(result.model).resolve() != Path(model).resolve():
        issue = Issue(str(path), None, "model", f"the card's model {model}", result.model)
    if issue is not None:
        error = InputError([issue], skippable=False)
        error.args = (str(issue),)
        raise error
    return result
