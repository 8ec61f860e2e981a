"""Alembic environment: runs on the connection handed over by :func:`sedma_elo.storage.upgrade`."""

from __future__ import annotations

from alembic import context

from sedma_elo.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached when someone runs the alembic CLI directly
    raise RuntimeError("run migrations through `sedma-elo db upgrade`")
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
