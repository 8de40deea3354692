"""CLI commands of the annotate area (see prmkit.cli for the map): each calls the same-named function of
:mod:`prmkit.annotate`, imported inside the command so ``prmkit --help`` stays fast."""

from __future__ import annotations

from pathlib import Path

import typer

from prmkit.cli.common import console, fail

annotate_app = typer.Typer(
    help="Human step annotation: a PRM800K-style web app with quality control.", no_args_is_help=True
)

DB = typer.Option(
    "sqlite:///labels.db",
    "--db",
    help="SQLAlchemy URL (sqlite:///labels.db, postgresql+psycopg://...) or a path.",
)


@annotate_app.command("serve")
def serve_cmd(
    data: Path | None = typer.Argument(
        None, help="Traces (prmkit JSONL/Parquet) to add as items before serving."
    ),
    db: str = DB,
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8100, help="Port to listen on."),
    session_hours: float = typer.Option(12.0, help="Browser sessions expire after this many hours."),
    secure_cookies: bool = typer.Option(False, help="Mark cookies Secure (when served behind HTTPS)."),
) -> None:
    """Run the annotation web app."""
    from prmkit.annotate import serve

    serve(data, db=db, host=host, port=port, session_hours=session_hours, secure_cookies=secure_cookies)


@annotate_app.command("add-user")
def add_user_cmd(
    user: str = typer.Argument(..., help="Account name (no spaces)."),
    db: str = DB,
    role: str = typer.Option("annotator", help="lead or annotator."),
    password: str | None = typer.Option(
        None, help="Password for the login form (else log in with the token)."
    ),
) -> None:
    """Create or reset an account and print its login token (shown once)."""
    from prmkit.annotate import add_user

    try:
        token = add_user(db, user, role, password)
    except ValueError as err:
        fail(str(err))
    typer.echo(token)


@annotate_app.command("assign")
def assign_cmd(
    annotators: str = typer.Option(..., help="Comma-separated annotator ids."),
    data: Path | None = typer.Argument(None, help="Traces to add as items before assigning."),
    db: str = DB,
    gold: Path | None = typer.Option(None, help="Traces with gold labels to use as quality-control items."),
    gold_world: int = typer.Option(0, help="Generate this many embedded-world gold items."),
    screening: int = typer.Option(0, help="How many gold items every annotator gets first, as screening."),
    gold_rate: float = typer.Option(0.0, help="Share of each new queue segment that is gold items."),
    overlap: float = typer.Option(0.0, help="Share of data items labelled by --per-item annotators."),
    per_item: int = typer.Option(2, help="Annotators per double-labelled item."),
    seed: int = typer.Option(0, help="Seed for shuffling and placing gold items."),
    stop_at_first_error: bool = typer.Option(
        True, help="Default of the page's 'stop at the first bad step'."
    ),
    create_users: bool = typer.Option(
        False, help="Create missing annotator accounts and print their tokens."
    ),
) -> None:
    """Load items and build annotators' queues (data, double-labelled share, gold, screening)."""
    from prmkit.annotate import assign
    from prmkit.annotate.work import BadInput

    names = [a.strip() for a in annotators.split(",") if a.strip()]
    try:
        report = assign(
            db,
            names,
            data=data,
            gold=gold,
            gold_world=gold_world,
            screening=screening,
            gold_rate=gold_rate,
            overlap=overlap,
            per_item=per_item,
            seed=seed,
            stop_at_first_error=stop_at_first_error,
            create_users=create_users,
        )
    except BadInput as err:
        fail(str(err))
    for name in names:
        console.print(
            f"{name}: {report.data.get(name, 0)} data, {report.gold.get(name, 0)} gold, "
            f"{report.screening.get(name, 0)} screening"
        )
    console.print(f"{report.double_labelled} item(s) double-labelled")
    for name, token in report.tokens.items():
        typer.echo(f"{name}\t{token}")


@annotate_app.command("export")
def export_cmd(
    out: Path = typer.Argument(..., help="Output file (.jsonl / .parquet for prmkit, .jsonl for prm800k)."),
    db: str = DB,
    format: str = typer.Option("prmkit", "--format", help="prmkit (core traces, human Labels) or prm800k."),
    done_only: bool = typer.Option(False, help="Only finished assignments (prm800k always)."),
    include_gold: bool = typer.Option(True, help="Include gold / screening items."),
) -> None:
    """Export the labels: core traces with provenance 'human', or PRM800K label lines."""
    from prmkit.annotate import export

    n = export(db, out, format=format, done_only=done_only, include_gold=include_gold)
    console.print(f"wrote {n} record(s) to {out}")


@annotate_app.command("agreement")
def agreement_cmd(
    db: str = DB,
    out: Path | None = typer.Option(None, help="Also write the report as JSON here."),
) -> None:
    """Print inter-annotator agreement (Cohen, Fleiss, first error) and per-annotator gold accuracy."""
    from prmkit.annotate import agreement_report

    report = agreement_report(db, out)
    ag = report["agreement"]

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    console.print(
        f"{ag['items_double_labelled']} item(s), {ag['steps_double_labelled']} step(s) double-labelled; "
        f"Fleiss kappa {f(ag['fleiss_kappa'])}; first-error agreement {f(ag['first_error_agreement'])} "
        f"over {ag['first_error_pairs']} pair(s)"
    )
    for pair, k in ag["cohen"].items():
        console.print(f"  Cohen kappa {pair.replace('|', ' / ')}: {f(k)} ({ag['cohen_n'][pair]} steps)")
    for s in report["annotators"]:
        console.print(
            f"{s['user']}: {s['done']}/{s['assigned']} done, gold step acc {f(s['gold_step_accuracy'])}, "
            f"gold first-error acc {f(s['gold_first_error_accuracy'])}, {s['time_ms'] / 60000:.1f} min"
        )


@annotate_app.command("export-labelstudio")
def export_labelstudio_cmd(
    out: Path = typer.Argument(
        ..., help="Label Studio tasks JSON (the labelling config is written beside it)."
    ),
    db: str = DB,
) -> None:
    """Export items as Label Studio tasks, with model scores as predictions."""
    from prmkit.annotate import export_labelstudio

    n = export_labelstudio(db, out)
    console.print(f"wrote {n} task(s) to {out} and its config to {out.with_suffix('.label_config.xml')}")


@annotate_app.command("import-labelstudio")
def import_labelstudio_cmd(
    path: Path = typer.Argument(..., help="A Label Studio JSON export."),
    db: str = DB,
) -> None:
    """Import per-step ratings from a Label Studio export into the store."""
    from prmkit.annotate import import_labelstudio

    n = import_labelstudio(db, path)
    console.print(f"imported {n} annotation(s) from {path}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    app.add_typer(annotate_app, name="annotate")
