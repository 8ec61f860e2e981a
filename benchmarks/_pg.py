"""psycopg's form of a PostgreSQL URL, for the benchmark scripts.

``sedma_elo.storage.libpq_url`` is the project's one conversion; the scripts keep this copy because
some of them run their measured step again in a child under another checkout's ``src``
(``--baseline-src``, ``--before``), whose ``sedma_elo`` may not have that function.
"""

from __future__ import annotations

__all__ = ["dsn"]


def dsn(url: str) -> str:
    """``url`` with its SQLAlchemy driver name (``postgresql+psycopg://``) as libpq's ``postgresql://``."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)
