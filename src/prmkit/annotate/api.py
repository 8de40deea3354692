"""The public functions the ``prmkit annotate`` commands call, one per command, taking a database URL.

serve               load DATA (if given) and run the web app
assign              load DATA and gold items, then build annotators' queues
add_user            create or reset a lead's or annotator's account; prints a login token
export              the store's labels as prmkit traces or PRM800K lines (prmkit.annotate.export)
agreement_report    agreement and per-annotator quality control, as a dict (also written as JSON)
import_labelstudio  / export_labelstudio   (prmkit.annotate.labelstudio)
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prmkit.annotate import auth
from prmkit.annotate.agreement import agreement
from prmkit.annotate.assign import AssignReport, assign_items
from prmkit.annotate.export import check_output
from prmkit.annotate.limits import Limits
from prmkit.annotate.qc import annotator_stats, world_gold_traces
from prmkit.annotate.store import Store, open_store
from prmkit.annotate.work import load_items
from prmkit.core.files import atomic_write
from prmkit.core.http_limits import bounded_config
from prmkit.formats.inputs import read_traces

if TYPE_CHECKING:
    import uvicorn


def load(
    store: Store,
    data: str | Path | None,
    gold: str | Path | None = None,
    gold_world: int = 0,
    screening: int = 0,
    seed: int = 0,
) -> dict[str, int]:
    """Add data traces, gold traces (a file with gold labels, or ``gold_world`` world traces) and the
    first ``screening`` gold traces as screening items; returns counts added."""
    added = {"data": 0, "gold": 0, "screening": 0}
    if data:
        added["data"] = load_items(store, read_traces(data))
    golds = read_traces(gold) if gold else []
    if gold_world:
        golds += world_gold_traces(gold_world + screening, seed=seed)
    if golds:
        added["screening"] = load_items(store, golds[:screening], gold=True, screening=True)
        added["gold"] = load_items(store, golds[screening:], gold=True)
    return added


def base_url(host: str, port: int) -> str:
    """The address a browser opens: ``http://host:port``, an IPv6 host in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(
    data: str | Path | None = None,
    db: str = "sqlite:///labels.db",
    host: str = "127.0.0.1",
    port: int = 8100,
    session_hours: float = 12.0,
    secure_cookies: bool = False,
    limits: Limits | None = None,
) -> None:
    """Run the annotation app (blocking). On a store with no lead, creates ``lead`` and prints its token.
    ``limits``: request body, login and connection limits, and the trusted proxies
    (:class:`~prmkit.annotate.limits.Limits` defaults if None)."""
    import uvicorn

    from prmkit.annotate.app import create_app

    limits = limits or Limits()
    store = open_store(db)
    if data:
        load(store, data)
    url = base_url(host, port)
    if not any(u.is_lead for u in auth.list_users(store)):
        token = auth.add_user(store, "lead", "lead")
        print(f"created account 'lead'; log in at {url}/login with token: {token}", flush=True)
    ttl = timedelta(hours=session_hours)
    app = create_app(store, session_ttl=ttl, secure_cookies=secure_cookies, limits=limits)
    where = " (every interface of this machine)" if host in ("0.0.0.0", "::") else ""
    print(
        f"prmkit annotate: serving at {url}/{where}; leads: {url}/lead, annotators: {url}/annotate",
        flush=True,
    )
    uvicorn.Server(server_config(app, host, port, limits)).run()


def server_config(app: Any, host: str, port: int, limits: Limits, **options: Any) -> uvicorn.Config:
    """The ``uvicorn.Config`` that :func:`serve` runs ``app`` with (tests serve through it too): idle and
    header timeouts, connections per client and trusted proxies from ``limits``; ``options`` go to uvicorn.
    Without it uvicorn would believe ``X-Forwarded-For`` from any local client (issue 42)."""
    return bounded_config(
        app,
        host=host,
        port=port,
        keep_alive_s=limits.keep_alive_s,
        header_timeout_s=limits.header_timeout_s,
        body_timeout_s=limits.body_timeout_s,
        min_body_rate=limits.min_body_rate,
        connections_per_client=limits.connections_per_client,
        trusted_proxies=limits.trusted_proxies,
        **{"log_level": "warning", "timeout_graceful_shutdown": 5, **options},
    )


def assign(
    db: str,
    annotators: list[str],
    data: str | Path | None = None,
    gold: str | Path | None = None,
    gold_world: int = 0,
    screening: int = 0,
    gold_rate: float = 0.0,
    overlap: float = 0.0,
    per_item: int = 2,
    seed: int = 0,
    stop_at_first_error: bool = True,
    create_users: bool = False,
) -> AssignReport:
    """Load data and gold items, then queue unassigned items to ``annotators`` (see ``assign_items``)."""
    store = open_store(db)
    try:
        load(store, data, gold, gold_world, screening, seed)
        return assign_items(
            store,
            annotators,
            overlap=overlap,
            per_item=per_item,
            gold_rate=gold_rate,
            seed=seed,
            stop_at_first_error=stop_at_first_error,
            create_users=create_users,
        )
    finally:
        store.close()


def add_user(db: str, user: str, role: str = "annotator", password: str | None = None) -> str:
    """Create or reset an account; returns its new login token (shown once, stored hashed)."""
    store = open_store(db)
    try:
        return auth.add_user(store, user, role, password)
    finally:
        store.close()


def agreement_report(db: str, out: str | Path | None = None) -> dict[str, Any]:
    """Inter-annotator agreement and per-annotator QC (gold accuracy, time), optionally written as JSON."""
    if out is not None:
        check_output(out)
    store = open_store(db)
    try:
        report = {
            "agreement": agreement(store).to_dict(),
            "annotators": [s.to_dict() for s in annotator_stats(store)],
        }
    finally:
        store.close()
    if out is not None:
        with atomic_write(out) as fh:
            json.dump(report, fh, indent=2)
    return report
