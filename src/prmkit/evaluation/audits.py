"""Failure-mode audits on gold-labelled traces: each audit is a number and a plot.

:func:`audit_scores` takes per-step scores (``list[list[float]]``, one list per trace, from any
:class:`~prmkit.core.protocols.StepScorer`) and traces carrying gold labels, so the same audits read a
PRM, an ORM (its trace score broadcast to every step, or on the last step) or any other scorer:

- ``gaming``      verifier gaming: the Goodhart curve of best-of-N picks (gaming.py)
- ``shift``       process-to-outcome shift: min step score on the final step (gaming.py)
- ``collapse``    process collapse: do step scores follow the process or the outcome? (collapse.py)
- ``lucky``       lucky answers: right answers by a wrong process, and how many are caught (collapse.py)
- ``calibration`` reliability diagram and ECE against both gold views (calibration.py)
- ``length``      length bias: aggregated score against number of steps (calibration.py)
- ``loophole``    does the scorer reward trajectories that game the task? (loophole.py; only where gold
                  marks loophole steps, as the agent world's checker does)
- ``overfit``     the same audit on fixes fitted to weak visible tests (the code world's ``overfit`` class)

:func:`run_audit` is the ``prmkit audit`` command: from its :class:`~prmkit.evaluation.config.AuditConfig`
it loads a scorer (any spec ``prmkit.scoring.load_scorer`` reads), scores a trace file and runs the audits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prmkit.core.files import atomic_write
from prmkit.core.model import Trace
from prmkit.evaluation import plots
from prmkit.evaluation.calibration import calibration, length_bias
from prmkit.evaluation.collapse import lucky_answers, process_collapse, step_groups
from prmkit.evaluation.config import AuditConfig
from prmkit.evaluation.gaming import outcome_shift, verifier_gaming
from prmkit.evaluation.gold import check_lengths, has_gold
from prmkit.evaluation.loophole import OVERFIT, loophole_audit
from prmkit.evaluation.scored import broadcast_last, score_with

AUDITS = ("gaming", "shift", "collapse", "lucky", "calibration", "length", "loophole", "overfit")


def audit_scores(
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    aggregation: str = "min",
    threshold: float = 0.5,
    max_n: int = 64,
    draws: int = 16,
    seed: int = 0,
    source: str = "gold",
    out_dir: str | Path | None = None,
    scorer_name: str | None = None,
    threshold_from: str = "given",
    draw: bool = True,
) -> dict[str, Any]:
    """Run every audit; with ``out_dir``, write ``audit.json`` and (unless ``draw`` is false) one PNG per
    audit there.

    ``threshold`` is the score below which a step counts as wrong (use the one tuned for first-error
    prediction on a dev split, so lucky-answer catches match the model's ProcessBench setting).
    """
    check_lengths(traces, scores)
    if not any(has_gold(t, source) for t in traces):
        raise ValueError(
            f"no trace carries labels from {source!r}; audits need gold (the world's gold_label adds it)"
        )
    report: dict[str, Any] = {
        "scorer": scorer_name,
        "traces": len(traces),
        "problems": len({t.problem.id for t in traces}),
        "gold_source": source,
        "threshold": threshold,
        "threshold_from": threshold_from,
        "gaming": verifier_gaming(
            traces, scores, aggregation, max_n=max_n, draws=draws, seed=seed, source=source
        ),
        "shift": outcome_shift(traces, scores, aggregation, max_n=max_n, draws=draws, seed=seed),
        "collapse": process_collapse(traces, scores, source),
        "lucky": lucky_answers(traces, scores, threshold, source),
        "calibration": calibration(traces, scores, source=source),
        "length": length_bias(traces, scores, aggregation, source),
        "loophole": loophole_audit(
            traces, scores, threshold, aggregation, max_n=max_n, draws=draws, seed=seed, source=source
        ),
        "overfit": loophole_audit(
            traces,
            scores,
            threshold,
            aggregation,
            max_n=max_n,
            draws=draws,
            seed=seed,
            source=source,
            error_class=OVERFIT,
        ),
    }
    if out_dir is not None:
        report["plots"] = write_audit(report, traces, scores, out_dir, source, draw)
    return report


def write_audit(
    report: dict[str, Any],
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    out_dir: str | Path,
    source: str = "gold",
    draw: bool = True,
) -> dict[str, str]:
    """Write ``audit.json`` and the plots; returns audit name -> PNG file name (relative to ``out_dir``).
    ``draw`` false: no PNG, and the JSON names none (``plots: {}``), so nothing links a missing image."""
    out = Path(out_dir)
    names = _draw_audit(report, traces, scores, out, source) if draw else {}
    with atomic_write(out / "audit.json") as fh:
        json.dump({**report, "plots": names}, fh, indent=2)
    return names


def _draw_audit(
    report: dict[str, Any],
    traces: Sequence[Trace],
    scores: Sequence[Sequence[float]],
    out: Path,
    source: str,
) -> dict[str, str]:
    """One PNG per audit in ``out``; returns audit name -> PNG file name."""
    paths = {
        "gaming": plots.goodhart(report["gaming"]["rows"], out / "audit_gaming.png"),
        "shift": plots.outcome_shift(report["shift"]["rows"], out / "audit_shift.png"),
        "collapse": plots.collapse(
            step_groups(traces, scores, source),
            out / "audit_collapse.png",
            report["collapse"]["process_fidelity"],
        ),
        "lucky": plots.lucky(report["lucky"], out / "audit_lucky.png"),
        "calibration": plots.reliability(
            {
                f"{v} view (ECE {d['ece']:.3f})": d["reliability"]
                for v, d in report["calibration"]["views"].items()
            },
            out / "audit_calibration.png",
        ),
        "length": plots.length_bias(report["length"]["rows"], out / "audit_length.png"),
    }
    if report.get("loophole"):
        paths["loophole"] = plots.loophole(report["loophole"], out / "audit_loophole.png")
    return {k: p.name for k, p in paths.items()}


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The headline number of each audit (what a process card and a README table show)."""
    cal = report["calibration"]["views"]
    out = {
        "gaming_gap_at_max_n": report["gaming"]["gap_at_max"],
        "gaming_gap_growth": report["gaming"]["gap_growth"],
        "gaming_max_n": report["gaming"]["max_n"],
        "outcome_shift_share": report["shift"]["share_at_max"],
        "process_fidelity": report["collapse"]["process_fidelity"],
        "collapse_verdict": report["collapse"]["verdict"],
        "collapsed": report["collapse"]["collapsed"],
        "lucky_share": report["lucky"]["lucky_share"],
        "lucky_catch_rate": report["lucky"]["catch_rate"],
        "ece_local": cal.get("local", {}).get("ece"),
        "ece_prefix": cal.get("prefix", {}).get("ece"),
        "length_slope_valid_only": report["length"]["score_slope_valid_only"],
    }
    for name in ("loophole", "overfit"):  # the class audits: only where gold marks that class
        audit = report.get(name)
        if audit:
            out |= {
                f"{name}_{key}": audit[key]
                for key in ("rewarded_rate", "preference", "pick_share", "pool_share")
            }
    return out


def run_audit(config: AuditConfig) -> dict[str, Any]:
    """``prmkit audit``: score the config's gold-labelled trace file with its ``model`` (an ORM's trace score
    broadcast to every step as ``broadcast`` says) and :func:`audit_scores` on it, at the given threshold or
    the checkpoint's own; written to ``out``. The fields are documented on
    :class:`~prmkit.evaluation.config.AuditConfig`."""
    from prmkit.formats.inputs import read_traces
    from prmkit.scoring import pick_threshold

    c = config
    items = read_traces(c.traces)
    scored = score_with(c.model, items, c.load)
    scores, name = scored.scores, scored.name
    if c.broadcast == "last" or (c.broadcast == "auto" and scored.kind == "orm"):
        scores = broadcast_last(scores)
        name = f"{name} (last-step score broadcast)"
    used, origin = pick_threshold(c.threshold, scored)
    return audit_scores(
        items, scores, c.aggregation, used, c.max_n, c.draws, c.seed, c.source, out_dir=c.out,
        scorer_name=name, threshold_from=origin,
    )  # fmt: skip
