"""CLI commands of the annotate area (see prmkit.cli for the map): each calls the same-named function of
:mod:`prmkit.annotate`, imported inside the command so ``prmkit --help`` stays fast.

A bad ``--db``, a bad input file or an output path that cannot be written is one message and exit code 2
(1 for an output that failed while writing), never a traceback. Passwords never go on the command line,
where ``ps`` shows them to every user of the machine: ``add-user --password`` reads
``$PRMKIT_ANNOTATE_PASSWORD`` or asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from prmkit.annotate.limits import Limits
from prmkit.cli.common import console

PASSWORD_ENV = "PRMKIT_ANNOTATE_PASSWORD"

annotate_app = typer.Typer(
    help="Human step annotation: a PRM800K-style web app with quality control.", no_args_is_help=True
)

DB = typer.Option(
    "sqlite:///labels.db",
    "--db",
    help="SQLAlchemy URL (sqlite:///labels.db, postgresql+psycopg://...) or a path.",
)


def _fail(message: str, code: int = 2) -> None:
    """Print ``message`` as it is (no markup, no wrapping of located lines) and exit with ``code``."""
    console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Errors a user can cause become one message: a bad --db, value or input file (2), an output that
    cannot be written (1). Never a traceback."""
    try:
        yield
    except ValueError as err:  # StoreError, BadInput, InputError (with its located lines) ...
        _fail(str(err))
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        _fail(f"{where}{(err.strerror or str(err)).lower()}; pick another path", 1)


def _limit(name: str) -> Any:
    """A ``serve`` option whose default and help come from :class:`Limits` (documented once, there)."""
    field = Limits.model_fields[name]
    return typer.Option(field.default, help=field.description)


@annotate_app.command("serve")
def serve_cmd(
    data: Path | None = typer.Argument(
        None, help="Traces to add as items before serving (prmkit or any format `prmkit convert` detects)."
    ),
    db: str = DB,
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8100, help="Port to listen on."),
    session_hours: float = typer.Option(12.0, help="Browser sessions expire after this many hours."),
    secure_cookies: bool = typer.Option(False, help="Mark cookies Secure (when served behind HTTPS)."),
    max_body_bytes: int = _limit("max_body_bytes"),
    login_failures: int = _limit("login_failures"),
    lockout_s: float = _limit("lockout_s"),
    max_lockout_s: float = _limit("max_lockout_s"),
    client_logins: int = _limit("client_logins"),
    client_window_s: float = _limit("client_window_s"),
    keep_alive_s: float = _limit("keep_alive_s"),
    header_timeout_s: float = _limit("header_timeout_s"),
    body_timeout_s: float = _limit("body_timeout_s"),
    min_body_rate: int = _limit("min_body_rate"),
    connections_per_client: int = _limit("connections_per_client"),
    trusted_proxies: list[str] = typer.Option(
        [], help=Limits.model_fields["trusted_proxies"].description + " Repeat the flag for each."
    ),
) -> None:
    """Run the annotation web app."""
    from prmkit.annotate import serve

    limits = Limits(  # a refused value is one line naming its flag (the root command's handler)
        max_body_bytes=max_body_bytes,
        login_failures=login_failures,
        lockout_s=lockout_s,
        max_lockout_s=max_lockout_s,
        client_logins=client_logins,
        client_window_s=client_window_s,
        keep_alive_s=keep_alive_s,
        header_timeout_s=header_timeout_s,
        body_timeout_s=body_timeout_s,
        min_body_rate=min_body_rate,
        connections_per_client=connections_per_client,
        trusted_proxies=tuple(trusted_proxies),
    )
    with _user_errors():
        serve(
            data,
            db=db,
            host=host,
            port=port,
            session_hours=session_hours,
            secure_cookies=secure_cookies,
            limits=limits,
        )


@annotate_app.command("add-user")
def add_user_cmd(
    user: str = typer.Argument(..., help="Account name (no spaces)."),
    db: str = DB,
    role: str = typer.Option("annotator", help="lead or annotator."),
    password: bool = typer.Option(
        False,
        "--password",
        help=f"Also set a password for the login form: from ${PASSWORD_ENV} when set, else asked for "
        "(hidden, twice). Without it the account logs in with the printed token.",
    ),
) -> None:
    """Create or reset an account and print its login token (shown once)."""
    from prmkit.annotate import add_user

    secret = None
    if password:
        secret = os.environ.get(PASSWORD_ENV) or typer.prompt(
            f"Password for {user}", hide_input=True, confirmation_prompt=True, err=True
        )
        if not secret:
            _fail(f"--password: expected a password (in ${PASSWORD_ENV} or typed), found an empty one")
    with _user_errors():
        token = add_user(db, user, role, secret)
    typer.echo(token)


@annotate_app.command("assign")
def assign_cmd(
    annotators: str = typer.Option(..., help="Comma-separated annotator ids."),
    data: Path | None = typer.Argument(
        None, help="Traces to add as items before assigning (prmkit or any format `prmkit convert` detects)."
    ),
    db: str = DB,
    gold: Path | None = typer.Option(None, help="Traces with gold labels to use as quality-control items."),
    gold_world: int = typer.Option(0, help="Generate this many embedded-world gold items."),
    screening: int = typer.Option(0, help="How many gold items every annotator gets first, as screening."),
    gold_rate: float = typer.Option(0.0, help="Share of each new queue segment that is gold items."),
    overlap: float = typer.Option(
        0.0,
        help="Share of the new data items labelled by --per-item annotators: exactly round(share x items), "
        "which items picked at random with --seed (0.2 of 10 items: 2).",
    ),
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

    names = [a.strip() for a in annotators.split(",") if a.strip()]
    with _user_errors():
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

    with _user_errors():
        n = export(db, out, format=format, done_only=done_only, include_gold=include_gold)
    console.print(f"wrote {n} record(s) to {out}")


@annotate_app.command("agreement")
def agreement_cmd(
    db: str = DB,
    out: Path | None = typer.Option(None, help="Also write the report as JSON here."),
) -> None:
    """Print inter-annotator agreement (Cohen, Fleiss, first error) and per-annotator gold accuracy."""
    from prmkit.annotate import agreement_report

    with _user_errors():
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

    with _user_errors():
        n = export_labelstudio(db, out)
    console.print(f"wrote {n} task(s) to {out} and its config to {out.with_suffix('.label_config.xml')}")


@annotate_app.command("import-labelstudio")
def import_labelstudio_cmd(
    path: Path = typer.Argument(..., help="A Label Studio JSON export."),
    db: str = DB,
) -> None:
    """Import per-step ratings from a Label Studio export into the store."""
    from prmkit.annotate import import_labelstudio

    with _user_errors():
        n = import_labelstudio(db, path)
    console.print(f"imported {n} annotation(s) from {path}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    app.add_typer(annotate_app, name="annotate")
