"""Alembic environment for the annotation store.

prmkit passes an open connection in ``config.attributes["connection"]`` (so migrations run inside the
caller's engine, with its SQLite pragmas); run by hand, the URL comes from ``-x url=...`` or the ini.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from prmkit.annotate.models import metadata

config = context.config


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things in place
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    engine = create_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()
