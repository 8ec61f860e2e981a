"""storage.check_database_url and open_checked: user mistakes with databases as project errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sedma_elo.errors import DatabaseError, ValidationError
from sedma_elo.storage.database import database_error, open_checked
from sedma_elo.storage.urls import check_database_url


def test_postgresql_urls_get_psycopg_3() -> None:
    """postgresql:// and postgres:// name the psycopg 3 driver; SQLite URLs are kept."""
    assert check_database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert check_database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_default_url_is_the_sqlite_file_in_the_working_directory() -> None:
    """No URL means ./sedma-elo.db."""
    assert check_database_url(None) == "sqlite:///./sedma-elo.db"


def test_unsupported_url_names_the_field() -> None:
    """Another database is a ValidationError on database_url."""
    with pytest.raises(ValidationError, match=r"^database_url: unsupported database 'mysql'"):
        check_database_url("mysql://u@h/db")


def test_missing_sqlite_file_is_not_created_without_create(tmp_path: Path) -> None:
    """create=False refuses a file that does not exist and leaves no file behind."""
    path = tmp_path / "missing.db"
    with pytest.raises(DatabaseError, match="no SQLite database at"):
        open_checked(f"sqlite:///{path}", create=False)
    assert list(tmp_path.iterdir()) == []


def test_create_makes_the_file_and_its_schema(tmp_path: Path) -> None:
    """create=True creates the file (and missing folders) with the schema, as open_database does."""
    path = tmp_path / "new" / "ledger.db"
    db = open_checked(f"sqlite:///{path}", create=True)
    try:
        assert path.is_file()
        assert db.query("SELECT count(*) FROM matches") == [(0,)]
    finally:
        db.dispose()


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    """A URL naming a folder is refused before SQLite tries to open it."""
    with pytest.raises(DatabaseError, match="is a directory"):
        open_checked(f"sqlite:///{tmp_path}", create=True)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    """A text file given as the database is a DatabaseError naming the URL, not a driver traceback."""
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 100)
    with pytest.raises(DatabaseError, match=r"^database sqlite:///.*notes\.db: file is not a database"):
        open_checked(f"sqlite:///{path}", create=False)


def test_database_error_hides_the_password() -> None:
    """The URL in a database error never shows its password."""
    error = database_error(RuntimeError("refused"), "postgresql://u:pw123@h/db")
    assert "pw123" not in str(error) and "***" in str(error)
