"""A SQLite service checkpoints its WAL on a thread of its own, started and stopped with the app."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from sedma_elo.service import ServiceSettings, create_app


def test_a_sqlite_service_runs_a_checkpointer_while_it_serves(tmp_path: Path) -> None:
    """The app's lifespan starts the checkpointer thread and stops it at shutdown."""
    app = create_app(ServiceSettings(database_url=f"sqlite:///{tmp_path}/ledger.db", rate_limit=0))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        checkpointer = app.state.services.checkpointer
        assert checkpointer is not None and checkpointer._thread.is_alive()
    assert not checkpointer._thread.is_alive()


def test_zero_seconds_leaves_checkpoints_to_the_commits(tmp_path: Path) -> None:
    """``wal_checkpoint_seconds=0``: no thread, and the writers keep SQLite's own 1,000-page checkpoint."""
    settings = ServiceSettings(
        database_url=f"sqlite:///{tmp_path}/ledger.db", rate_limit=0, wal_checkpoint_seconds=0
    )
    app = create_app(settings)
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        services = app.state.services
        assert services.checkpointer is None
        with services.db.write.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 1000
