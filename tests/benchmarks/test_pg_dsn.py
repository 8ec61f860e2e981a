"""benchmarks/_pg.py: the scripts' own copy of the URL conversion agrees with the project's."""

from __future__ import annotations

from sedma_elo.storage import libpq_url

from .script import load_script


def test_the_scripts_dsn_equals_libpq_url() -> None:
    """For the URLs the scripts make, ``_pg.dsn`` gives what ``storage.libpq_url`` gives."""
    dsn = load_script("_pg").dsn
    for url in (
        "postgresql+psycopg://postgres@127.0.0.1:5432/sedma_elo_bench_1",
        "postgresql+psycopg://u:secret@db.example:6543/ledger?application_name=bench",
    ):
        assert dsn(url) == libpq_url(url)
