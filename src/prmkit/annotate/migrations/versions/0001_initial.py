"""initial annotation store: users, sessions, items, assignments, ratings, events

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    """One helper per table (why each exists: ``models.py``), called in foreign-key order: each table
    references only tables created before it."""
    _create_users()
    _create_sessions()
    _create_items()
    _create_assignments()
    _create_ratings()
    _create_events()


def _create_users() -> None:
    """Accounts: scrypt password hashes and sha256 of tokens, never the secrets themselves."""
    op.create_table(
        "users",
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(256)),
        sa.Column("token_hash", sa.String(64)),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("token_hash", name="uq_users_token_hash"),
    )


def _create_sessions() -> None:
    """Expiring browser sessions with their CSRF tokens, in the database so a restart logs no one out."""
    op.create_table(
        "sessions",
        sa.Column("id_hash", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id_hash", name="pk_sessions"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_sessions_user_id_users"),
    )


def _create_items() -> None:
    """Each trace as its full core-model JSON, so export hands back exactly what came in."""
    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("trace_id", sa.String(256), nullable=False),
        sa.Column("trace_json", sa.Text(), nullable=False),
        sa.Column("n_steps", sa.Integer(), nullable=False),
        sa.Column("is_gold", sa.Boolean(), nullable=False),
        sa.Column("is_screening", sa.Boolean(), nullable=False),
        sa.Column("gold_first_error", sa.Integer()),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_items"),
        sa.UniqueConstraint("trace_id", name="uq_items_trace_id"),
    )


def _create_assignments() -> None:
    """One (item, annotator) pair per row, with the index that reads an annotator's queue in order."""
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("stop_at_first_error", sa.Boolean(), nullable=False),
        sa.Column("finish_reason", sa.String(16)),
        sa.Column("finish_note", sa.Text()),
        sa.Column("total_time_ms", sa.Integer(), nullable=False),
        sa.Column("started_at", TS),
        sa.Column("finished_at", TS),
        sa.PrimaryKeyConstraint("id", name="pk_assignments"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], name="fk_assignments_item_id_items"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_assignments_user_id_users"),
        sa.UniqueConstraint("item_id", "user_id", name="uq_assignments_item_id"),
    )
    op.create_index("ix_assignments_user_position", "assignments", ["user_id", "position"])


def _create_ratings() -> None:
    """The current state of each step of an assignment, written the moment a rating is made."""
    op.create_table(
        "ratings",
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("step_index", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Integer()),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("rewrite", sa.Text()),
        sa.Column("time_ms", sa.Integer(), nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("assignment_id", "step_index", name="pk_ratings"),
        sa.ForeignKeyConstraint(
            ["assignment_id"], ["assignments.id"], name="fk_ratings_assignment_id_assignments"
        ),
    )


def _create_events() -> None:
    """The append-only log of every action, so undo can restore earlier states and a lead can audit."""
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("step_index", sa.Integer()),
        sa.Column("rating", sa.Integer()),
        sa.Column("flagged", sa.Boolean()),
        sa.Column("text", sa.Text()),
        sa.Column("time_ms", sa.Integer()),
        sa.Column("undone", sa.Boolean(), nullable=False),
        sa.Column("at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_events"),
        sa.ForeignKeyConstraint(
            ["assignment_id"], ["assignments.id"], name="fk_events_assignment_id_assignments"
        ),
    )
    op.create_index("ix_events_assignment", "events", ["assignment_id"])


def downgrade() -> None:
    op.drop_index("ix_events_assignment", table_name="events")
    op.drop_table("events")
    op.drop_table("ratings")
    op.drop_index("ix_assignments_user_position", table_name="assignments")
    op.drop_table("assignments")
    op.drop_table("items")
    op.drop_table("sessions")
    op.drop_table("users")
