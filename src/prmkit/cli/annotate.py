"""CLI commands of the annotate area (see prmkit.cli for the map): each is generated from its command
record (:data:`RECORDS`: a config here, a run function calling the same-named function of
:mod:`prmkit.annotate`, imported when it runs so ``prmkit --help`` stays fast).

A bad ``--db``, a bad input file or an output path that cannot be written is one message and exit code 2
(1 for an output that failed while writing), never a traceback. Passwords never go on the command line,
where ``ps`` shows them to every user of the machine: ``add-user --password`` reads
``$PRMKIT_ANNOTATE_PASSWORD`` or asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from pydantic import Field

from prmkit.annotate.limits import Limits
from prmkit.cli.common import console
from prmkit.cli.config import add_command
from prmkit.core.commands import Command, Layout
from prmkit.core.config import Config

PASSWORD_ENV = "PRMKIT_ANNOTATE_PASSWORD"

annotate_app = typer.Typer(
    help="Human step annotation: a PRM800K-style web app with quality control.", no_args_is_help=True
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


class Store(Config):
    """The annotation store every ``prmkit annotate`` command works on."""

    db: str = "sqlite:///labels.db"
    """SQLAlchemy URL (sqlite:///labels.db, postgresql+psycopg://...) or a path."""


class ServeCommand(Store):
    """Run the annotation web app."""

    data: Path | None = None
    """Traces to add as items before serving (prmkit or any format `prmkit convert` detects)."""
    host: str = "127.0.0.1"
    """Interface to listen on."""
    port: int = 8100
    """Port to listen on."""
    session_hours: float = 12.0
    """Browser sessions expire after this many hours."""
    secure_cookies: bool = False
    """Mark cookies Secure (when served behind HTTPS)."""
    limits: Limits = Field(default_factory=Limits)
    """What one client may cost the server (each flag documented on :class:`Limits`)."""


class AddUserCommand(Store):
    """Create or reset an account and print its login token (shown once)."""

    user: str
    """Account name (no spaces)."""
    role: str = "annotator"
    """lead or annotator."""
    password: bool = False
    """Also set a password for the login form: from $PRMKIT_ANNOTATE_PASSWORD when set, else asked for
    (hidden, twice). Without it the account logs in with the printed token."""


class AssignCommand(Store):
    """Load items and build annotators' queues (data, double-labelled share, gold, screening)."""

    annotators: str
    """Comma-separated annotator ids."""
    data: Path | None = None
    """Traces to add as items before assigning (prmkit or any format `prmkit convert` detects)."""
    gold: Path | None = None
    """Traces with gold labels to use as quality-control items."""
    gold_world: int = 0
    """Generate this many embedded-world gold items."""
    screening: int = 0
    """How many gold items every annotator gets first, as screening."""
    gold_rate: float = 0.0
    """Share of each new queue segment that is gold items."""
    overlap: float = 0.0
    """Share of the new data items labelled by --per-item annotators: exactly round(share x items), which
    items picked at random with --seed (0.2 of 10 items: 2)."""
    per_item: int = 2
    """Annotators per double-labelled item."""
    seed: int = 0
    """Seed for shuffling and placing gold items."""
    stop_at_first_error: bool = True
    """Default of the page's 'stop at the first bad step'."""
    create_users: bool = False
    """Create missing annotator accounts and print their tokens."""


class ExportCommand(Store):
    """Export the labels: core traces with provenance 'human', or PRM800K label lines."""

    out: Path
    """Output file (.jsonl / .parquet for prmkit, .jsonl for prm800k)."""
    format: str = "prmkit"
    """prmkit (core traces, human Labels) or prm800k."""
    done_only: bool = False
    """Only finished assignments (prm800k always)."""
    include_gold: bool = True
    """Include gold / screening items."""


class AgreementCommand(Store):
    """Print inter-annotator agreement (Cohen, Fleiss, first error) and per-annotator gold accuracy."""

    out: Path | None = None
    """Also write the report as JSON here."""


class ExportLabelStudioCommand(Store):
    """Export items as Label Studio tasks, with model scores as predictions."""

    out: Path
    """Label Studio tasks JSON (the labelling config is written beside it)."""


class ImportLabelStudioCommand(Store):
    """Import per-step ratings from a Label Studio export into the store."""

    path: Path
    """A Label Studio JSON export."""


def run_serve(c: ServeCommand) -> None:
    from prmkit.annotate import serve

    serve(c.data, db=c.db, host=c.host, port=c.port, session_hours=c.session_hours,
          secure_cookies=c.secure_cookies, limits=c.limits)  # fmt: skip


def run_add_user(c: AddUserCommand) -> str:
    """The account's login token; a password from the environment or asked for, never a flag's value
    (``ps`` would show it to every user of the machine)."""
    from prmkit.annotate import add_user

    secret = None
    if c.password:
        secret = os.environ.get(PASSWORD_ENV) or typer.prompt(
            f"Password for {c.user}", hide_input=True, confirmation_prompt=True, err=True
        )
        if not secret:
            _fail(f"--password: expected a password (in ${PASSWORD_ENV} or typed), found an empty one")
    return add_user(c.db, c.user, c.role, secret)


def run_assign(c: AssignCommand) -> Any:
    from prmkit.annotate import assign

    names = [a.strip() for a in c.annotators.split(",") if a.strip()]
    return assign(c.db, names, data=c.data, gold=c.gold, gold_world=c.gold_world, screening=c.screening,
                  gold_rate=c.gold_rate, overlap=c.overlap, per_item=c.per_item, seed=c.seed,
                  stop_at_first_error=c.stop_at_first_error, create_users=c.create_users)  # fmt: skip


def show_assign(report: Any, c: AssignCommand) -> str:
    """Each annotator's queue, the double-labelled count (stderr), then new accounts' tokens (stdout, to
    hand out)."""
    for name in [a.strip() for a in c.annotators.split(",") if a.strip()]:
        console.print(
            f"{name}: {report.data.get(name, 0)} data, {report.gold.get(name, 0)} gold, "
            f"{report.screening.get(name, 0)} screening"
        )
    console.print(f"{report.double_labelled} item(s) double-labelled")
    return "\n".join(f"{name}\t{token}" for name, token in report.tokens.items()) or None


def run_export(c: ExportCommand) -> int:
    from prmkit.annotate import export

    return export(c.db, c.out, format=c.format, done_only=c.done_only, include_gold=c.include_gold)


def run_agreement(c: AgreementCommand) -> dict[str, Any]:
    from prmkit.annotate import agreement_report

    return agreement_report(c.db, c.out)


def show_agreement(report: dict[str, Any], c: AgreementCommand) -> None:
    """Agreement over double-labelled items, Cohen's kappa per pair, each annotator's gold accuracy (on
    stderr, as the other annotate reports)."""
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


def run_export_labelstudio(c: ExportLabelStudioCommand) -> int:
    from prmkit.annotate import export_labelstudio

    return export_labelstudio(c.db, c.out)


def run_import_labelstudio(c: ImportLabelStudioCommand) -> int:
    from prmkit.annotate import import_labelstudio

    return import_labelstudio(c.db, c.path)


def show_export(n: int, c: ExportCommand) -> None:
    console.print(f"wrote {n} record(s) to {c.out}")


def show_export_labelstudio(n: int, c: ExportLabelStudioCommand) -> None:
    console.print(f"wrote {n} task(s) to {c.out} and its config to {c.out.with_suffix('.label_config.xml')}")


def show_import_labelstudio(n: int, c: ImportLabelStudioCommand) -> None:
    console.print(f"imported {n} annotation(s) from {c.path}")


def _guarded(run: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``run`` with a user's mistakes as one message (:func:`_user_errors`)."""

    def guarded(c: Any) -> Any:
        with _user_errors():
            return run(c)

    return guarded


DB = {"db": "--db"}
RECORDS = (
    Command("serve", ServeCommand, run_serve, Layout(("data",), DB, flat=("limits",))),
    Command("add-user", AddUserCommand, run_add_user, Layout(("user",), DB), show=lambda token, c: token),
    Command("assign", AssignCommand, run_assign, Layout(("data",), DB), show=show_assign),
    Command("export", ExportCommand, run_export, Layout(("out",), DB | {"format": "--format"}),
            show=show_export),
    Command("agreement", AgreementCommand, run_agreement, Layout(flags=DB), show=show_agreement),
    Command("export-labelstudio", ExportLabelStudioCommand, run_export_labelstudio, Layout(("out",), DB),
            show=show_export_labelstudio),
    Command("import-labelstudio", ImportLabelStudioCommand, run_import_labelstudio, Layout(("path",), DB),
            show=show_import_labelstudio),
)  # fmt: skip
"""The annotate commands' records: the stores' functions of :mod:`prmkit.annotate`, called from a config."""


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app."""
    for record in RECORDS:
        add_command(annotate_app, record, run=_guarded(record.run))
    app.add_typer(annotate_app, name="annotate")
