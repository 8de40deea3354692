"""Opening the annotation store: one SQLAlchemy engine, migrated to the newest schema on open.

SQLite (the default) runs in WAL mode with ``synchronous=FULL``: readers never block the writer, and a
transaction that returned is on disk, so a killed server or machine loses nothing acknowledged. Write
transactions start with ``BEGIN IMMEDIATE`` so two writers queue on the busy timeout instead of one
failing when it upgrades a read lock. PostgreSQL (``postgresql+psycopg://...``) is for teams whose
annotators hit one server from many places; the same migrations build the same schema there. Any other
URL, and a database that cannot be opened, is a :class:`StoreError` naming it and the fix.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

HERE = Path(__file__).resolve().parent
MIGRATIONS = HERE / "migrations"
DRIVERS = ("sqlite", "sqlite+pysqlite", "postgresql+psycopg")
"""The database URLs the store supports (by SQLAlchemy driver name)."""
EXPECTED = "sqlite:///PATH, a file path, or postgresql+psycopg://USER@HOST/DB"


class StoreError(ValueError):
    """A database URL the store does not support, or a database that cannot be opened."""


def now() -> datetime:
    """The current UTC time (every timestamp in the store is UTC)."""
    return datetime.now(UTC)


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; the store only ever writes UTC, so make them aware again."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def normalize_url(db: str) -> str:
    """A SQLAlchemy URL; a bare path (``labels.db``) means a SQLite file there. Unsupported URLs are
    refused here, before any driver is imported."""
    if "://" not in db:
        return f"sqlite:///{Path(db).resolve()}"
    try:
        driver = make_url(db).drivername
    except ArgumentError:
        raise StoreError(f"--db: expected {EXPECTED}, found {db!r}") from None
    if driver not in DRIVERS:
        hint = (
            " (PostgreSQL is reached through psycopg 3: postgresql+psycopg://)"
            if "postgres" in driver
            else ""
        )
        raise StoreError(f"--db: expected {EXPECTED}, found a {driver}:// URL{hint}")
    return db


def _sqlite_engine(url: str) -> Engine:
    # A pool of connections shared by the server's threads (check_same_thread off: each is used by one
    # thread at a time); timeout is the busy wait when another process holds the write lock.
    engine = create_engine(
        url, pool_size=8, max_overflow=56, connect_args={"timeout": 30, "check_same_thread": False}
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, below
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("prmkit_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class Store:
    """The annotation database. ``read()`` and ``write()`` give a connection inside one transaction."""

    def __init__(self, db: str, migrate: bool = True):
        self.url = normalize_url(db)
        # SQLite has one writer at a time; queueing this process's writers on a lock hands the turn over
        # at once, where SQLite's own busy wait sleeps in steps of up to 100 ms (other processes still
        # wait on that busy timeout).
        self._write_lock = threading.Lock() if self.url.startswith("sqlite") else None
        if self.url.startswith("sqlite"):
            self.engine = _sqlite_engine(self.url)
        else:
            self.engine = create_engine(self.url, pool_pre_ping=True, pool_size=10, max_overflow=20)
        if migrate:
            try:
                upgrade(self)
            except (SQLAlchemyError, CommandError) as err:  # the database is the problem: say which
                self.engine.dispose()
                shown = make_url(self.url).render_as_string(hide_password=True)
                cause = str(getattr(err, "orig", None) or err).strip().splitlines()[0]
                raise StoreError(f"--db {shown}: cannot open the database: {cause}") from None

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction, committed (and on disk) when the block exits without an error."""
        lock = self._write_lock
        if lock is not None:
            lock.acquire()
        try:
            with self.engine.connect() as conn:
                conn.execution_options(prmkit_write=True)
                with conn.begin():
                    yield conn
        finally:
            if lock is not None:
                lock.release()

    def close(self) -> None:
        self.engine.dispose()


def alembic_config(store: Store | None = None):
    """The Alembic config pointing at the migrations shipped inside the package."""
    from alembic.config import Config

    cfg = Config(str(HERE / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if store is not None:
        cfg.set_main_option("sqlalchemy.url", store.url.replace("%", "%%"))
    return cfg


def upgrade(store: Store, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (idempotent; run on every open)."""
    from alembic import command

    cfg = alembic_config(store)
    with store.write() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def open_store(db: str) -> Store:
    """Open (creating and migrating when needed) the store at ``db``, a SQLAlchemy URL or a path."""
    return Store(db)
