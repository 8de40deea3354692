"""CLI commands of the evaluate area: ``prmkit eval processbench | bon``, ``prmkit audit``, ``prmkit card``.

Each command calls the public function of the same name and options:
``prmkit.evaluation.processbench.eval_processbench``, ``prmkit.evaluation.bon_curves.eval_bon``,
``prmkit.evaluation.audits.audit`` and ``prmkit.cards.card.card``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from prmkit.cli.common import console, fail
from prmkit.scoring.forms import SCORER_HELP

eval_app = typer.Typer(
    name="eval",
    help="Evaluate step scorers: first-error F1 (ProcessBench), best-of-N curves.",
    no_args_is_help=True,
)


@eval_app.command("processbench")
def processbench_cmd(
    files: list[Path] = typer.Argument(
        ...,
        help="ProcessBench split files (gsm8k.json ...) or prmkit trace files with gold; one subset per file.",
    ),
    model: str | None = typer.Option(
        None, "--model", help="Predict the first step scoring below the threshold. " + SCORER_HELP
    ),
    judge: str | None = typer.Option(None, "--judge", help="Judge name (world = the simulated judge)."),
    source: str | None = typer.Option(
        None, "--source", help="Label source selector whose first error is the prediction."
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="Step-score threshold; default: tuned on --dev, else the checkpoint's own, else 0.5.",
    ),
    dev: list[Path] | None = typer.Option(
        None, "--dev", help="Files to tune the threshold on (repeat the flag)."
    ),
    gold_source: str | None = typer.Option(
        None, "--gold-source", help="Gold selector (default: gold, then human:processbench)."
    ),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Folder for processbench.json, predictions.jsonl, first_error_hist.png."
    ),
    overlong: str | None = typer.Option(
        None,
        "--overlong",
        help="A trace longer than a checkpoint takes: error (the default: stop and name it), skip (no "
        "prediction), truncate (score the steps that fit; no prediction unless one of them falls below "
        "the threshold). Counted.",
    ),
) -> None:
    """First-error detection: acc_error, acc_correct, F1 per subset; headline = plain mean of subset F1s."""
    from prmkit.cli.models import _policy
    from prmkit.evaluation.processbench import eval_processbench

    policy = _policy(overlong)
    try:
        result = eval_processbench(
            files, model, judge, source, threshold, dev or None, gold_source, out, overlong=policy
        )
    except ValueError as err:  # e.g. a trace longer than the model takes, or no gold in a file
        fail(str(err))
    console.print(result.table(), markup=False, highlight=False)
    console.print(f"threshold: {result.threshold} ({result.threshold_from})")


@eval_app.command("bon")
def bon_cmd(
    traces: Path = typer.Argument(
        ..., help="Trace file with many samples per problem (answers checked against the reference)."
    ),
    prm: str | None = typer.Option(None, "--prm", help=SCORER_HELP),
    orm: str | None = typer.Option(None, "--orm", help=SCORER_HELP),
    aggregations: list[str] = typer.Option(
        ["min", "prod", "last", "mean"], "--aggregation", help="PRM aggregations (repeat the flag)."
    ),
    vote_aggregation: str = typer.Option(
        "min", "--vote-aggregation", help="Aggregation that weighs the PRM-weighted vote."
    ),
    max_n: int = typer.Option(256, "--max-n", help="Largest N (capped by the smallest pool)."),
    draws: int = typer.Option(32, "--draws", help="Random subsets per problem and N."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples of problems for the bands."),
    confidence: float = typer.Option(0.95, "--confidence", help="Width of the bands."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random subsets and the bootstrap."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Folder for bon.csv, bon.json, bon.png."),
) -> None:
    """Accuracy vs N for PRM (each aggregation), ORM, majority, weighted vote and pass@N, with bands."""
    from prmkit.evaluation.bon_curves import eval_bon

    result = eval_bon(
        traces, prm, orm, aggregations, vote_aggregation, max_n, draws, bootstrap, confidence, seed, out
    )
    top = max(r["n"] for r in result.rows)
    for r in result.rows:
        if r["n"] == top:
            console.print(
                f"{r['method']:>14}  N={top}: {100 * r['accuracy']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]  "
                f"vs majority {100 * r['gap_vs_majority']:+.1f} [{100 * r['gap_lo']:+.1f}, {100 * r['gap_hi']:+.1f}]"
            )


def audit_cmd(
    model: str = typer.Argument(..., help=SCORER_HELP),
    traces: Path = typer.Argument(
        ..., help="Gold-labelled traces, many per problem (e.g. `prmkit world sample` + check)."
    ),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for audit.json and the audit plots."),
    aggregation: str = typer.Option(
        "min", "--aggregation", help="How step scores become a trace score (min, prod, last, mean, geomean)."
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="Score below which a step counts as wrong; default: the checkpoint's own "
        "(tuned on dev when it was trained), else 0.5.",
    ),
    max_n: int = typer.Option(64, "--max-n", help="Largest N of the best-of-N audits."),
    draws: int = typer.Option(16, "--draws", help="Random subsets of N samples per problem and N."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random subsets."),
    source: str = typer.Option("gold", "--gold-source", help="Gold selector."),
    broadcast: str = typer.Option(
        "auto",
        "--broadcast",
        help="last: every step gets the trace's last score (ORM); auto: for ORM checkpoints; none.",
    ),
) -> None:
    """Failure-mode audits: verifier gaming, outcome shift, process collapse, lucky answers, calibration, length."""
    from prmkit.evaluation.audits import audit, summary

    report = audit(model, traces, out, aggregation, threshold, max_n, draws, seed, source, broadcast)  # type: ignore[arg-type]
    console.print(f"threshold: {report['threshold']} ({report['threshold_from']})")
    console.print_json(json.dumps(summary(report)))


def card_cmd(
    model: Path = typer.Argument(..., help="Checkpoint folder with the process_card.json training wrote."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Where README.md, process_card.json and card/ go (default: MODEL)."
    ),
    refresh: bool = typer.Option(False, "--refresh", help="Measure again even if MODEL/card/ holds results."),
    orm: Path | None = typer.Option(None, "--orm", help="ORM checkpoint: the best-of-N baseline."),
    processbench: list[Path] | None = typer.Option(
        None, "--processbench", help="ProcessBench files to evaluate too (repeat)."
    ),
    problems: int = typer.Option(48, "--problems", help="World test problems (best-of-N pools, audits)."),
    per_problem: int = typer.Option(32, "--per-problem", help="Samples per test problem."),
    heldout_problems: int = typer.Option(
        24, "--heldout-problems", help="Longer held-out problems for first-error."
    ),
    beam_problems: int = typer.Option(
        12, "--beam-problems", help="Problems solved by beam search (gaming audit); 0 skips it."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples of problems for the bands."),
    seed: int = typer.Option(1234, "--seed", help="Seed of the fresh world data the card measures on."),
) -> None:
    """Write the full process card (README.md = HF model card, process_card.json, plots) from measurements."""
    from prmkit.cards.card import card

    readme = card(
        model,
        out,
        refresh=refresh,
        orm=orm,
        processbench=processbench or None,
        problems=problems,
        per_problem=per_problem,
        heldout_problems=heldout_problems,
        beam_problems=beam_problems,
        bootstrap=bootstrap,
        seed=seed,
    )
    console.print(f"wrote {readme}")


def register(app: typer.Typer) -> None:
    """Add ``eval`` (processbench, bon), ``audit`` and ``card`` to the root app."""
    app.add_typer(eval_app)
    app.command("audit")(audit_cmd)
    app.command("card")(card_cmd)
