"""The annotation store's schema (SQLAlchemy Core tables), the single source Alembic migrates to.

Why these tables:

- ``items`` keeps each trace as its full core-model JSON, so export hands back exactly what came in
  plus the human labels; gold items carry their known first error for quality control.
- ``assignments`` is one (item, annotator) pair in that annotator's queue: its order, state, finish
  reason (PRM800K's found_error / solution / bad_problem / give_up) and total time.
- ``ratings`` is the current state of one step of one assignment (rating, flagged, a better step the
  annotator wrote, time spent), written in its own transaction the moment it is made.
- ``events`` is the append-only log of every action, so undo can restore earlier states and a lead can
  audit what happened; nothing is ever updated in place there.
- ``users`` and ``sessions`` hold accounts (scrypt password hashes, sha256 of tokens) and expiring
  browser sessions with their CSRF tokens; sessions live in the database so a restart logs no one out.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

# Stable constraint names so migrations behave the same on SQLite and PostgreSQL.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_name)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

users = Table(
    "users",
    metadata,
    Column("id", String(128), primary_key=True),
    Column("role", String(16), nullable=False),  # "lead" | "annotator"
    Column("password_hash", String(256)),
    Column("token_hash", String(64), unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("user_id", String(128), ForeignKey("users.id"), nullable=False),
    Column("csrf", String(64), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

items = Table(
    "items",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("trace_id", String(256), nullable=False, unique=True),
    Column("trace_json", Text, nullable=False),
    Column("n_steps", Integer, nullable=False),
    Column("is_gold", Boolean, nullable=False, default=False),
    Column("is_screening", Boolean, nullable=False, default=False),
    Column("gold_first_error", Integer),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

assignments = Table(
    "assignments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_id", Integer, ForeignKey("items.id"), nullable=False),
    Column("user_id", String(128), ForeignKey("users.id"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("status", String(16), nullable=False, default="pending"),  # pending | started | done
    Column("stop_at_first_error", Boolean, nullable=False, default=True),
    Column("finish_reason", String(16)),
    Column("finish_note", Text),
    Column("total_time_ms", Integer, nullable=False, default=0),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    UniqueConstraint("item_id", "user_id"),
    Index("ix_assignments_user_position", "user_id", "position"),
)

ratings = Table(
    "ratings",
    metadata,
    Column("assignment_id", Integer, ForeignKey("assignments.id"), primary_key=True),
    Column("step_index", Integer, primary_key=True),
    Column("rating", Integer),  # -1 | 0 | 1, None while only flagged or rewritten
    Column("flagged", Boolean, nullable=False, default=False),
    Column("rewrite", Text),
    Column("time_ms", Integer, nullable=False, default=0),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("assignment_id", Integer, ForeignKey("assignments.id"), nullable=False),
    Column("user_id", String(128), nullable=False),
    Column("kind", String(16), nullable=False),  # rate | flag | rewrite | undo | finish
    Column("step_index", Integer),
    Column("rating", Integer),
    Column("flagged", Boolean),
    Column("text", Text),
    Column("time_ms", Integer),
    Column("undone", Boolean, nullable=False, default=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Index("ix_events_assignment", "assignment_id"),
)
