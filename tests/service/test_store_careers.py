"""Ledger.store_careers (service/ledger/career_bulk.py): the busiest players' page summaries stored after a
bulk change, each equal to the whole-career reference and current, and the commands and admin
routes that run it."""

from __future__ import annotations

import base64
import json
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from ledgers import empty_ledger
from typer.testing import CliRunner

from career_check import assert_summary_is_whole_careers
from sedma_elo.batch.history import write_matches
from sedma_elo.cli import app
from sedma_elo.core.model import Match
from sedma_elo.errors import ValidationError
from sedma_elo.service import Ledger, ServiceSettings, create_app
from sedma_elo.service.auth import create_key
from sedma_elo.storage import open_database

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
runner = CliRunner()


def _league() -> list[Match]:
    """``busy`` plays 12 matches, ``mid`` 7, ``r1`` 4, ``r3`` 3; results and pairings mixed."""
    out = []
    for i in range(12):
        rival = "mid" if i % 2 == 0 else f"r{i % 4}"
        winner = ("a", "b", "draw")[i % 3]
        out.append(
            Match.single("busy", rival, winner, match_id=f"m{i}", played_at=START + timedelta(hours=i))
        )  # type: ignore[arg-type]
    out.append(Match.single("mid", "r1", "a", match_id="m12", played_at=START + timedelta(hours=12)))
    return out


def _more_of_busy(n: int) -> list[Match]:
    """``n`` more wins of ``busy`` over ``r0``, after the league's matches."""
    later = START + timedelta(days=1)
    return [
        Match.single("busy", "r0", "a", match_id=f"x{i}", played_at=later + timedelta(minutes=i))
        for i in range(n)
    ]


def _mixed_league(n: int) -> list[Match]:
    """``n`` matches among eight players, a third of them two against two, with draws; ``p0`` in
    every match (its side and partner drawn at random, seeded)."""
    rng = random.Random(49)
    out = []
    for i in range(n):
        others = rng.sample([f"p{k}" for k in range(1, 8)], 3)
        teams = (("p0", others[0]), (others[1], others[2])) if i % 3 == 0 else (("p0",), (others[0],))
        a, b = teams if rng.random() < 0.5 else teams[::-1]
        winner = rng.choice(("a", "b", "draw"))
        played = START + timedelta(minutes=i)
        out.append(Match(a, b, winner, {}, match_id=f"t{i}", played_at=played))  # type: ignore[arg-type]
    return out


def _state_texts(ledger: Ledger) -> dict[str, str]:
    """Each stored state's text by player."""
    with ledger.db.read.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT p.player_id, s.state FROM career_states s JOIN players p ON p.id = s.player_key"
        ).all()
    return {str(r[0]): str(r[1]) for r in rows}


def _states(ledger: Ledger) -> dict[str, tuple[int, int]]:
    """(through, rewrites) of each stored state of the active version, by player."""
    ph = "?" if ledger.db.url.startswith("sqlite") else "%s"
    with ledger.db.read.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT p.player_id, s.through, s.rewrites FROM career_states s JOIN players p"
            f" ON p.id = s.player_key JOIN rating_versions v ON v.id = s.version_id AND v.active = {ph}",
            (True,),
        ).all()
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


def _first(ledger: Ledger, player: str) -> int:
    return ledger.player_history(player, limit=1, order="asc").items[0]["sequence"]  # type: ignore[no-any-return]


def _last(ledger: Ledger, player: str) -> int:
    return ledger.player_history(player, limit=1, order="desc").items[0]["sequence"]  # type: ignore[no-any-return]


def test_the_players_with_enough_matches_get_a_current_state(db_url: str) -> None:
    """store_careers(7) stores the states of busy (12) and mid (7) through their last match, no other."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        assert ledger.store_careers(7) == 2
        assert _states(ledger) == {"busy": (_last(ledger, "busy"), 0), "mid": (_last(ledger, "mid"), 0)}


def test_a_summary_from_a_stored_state_equals_the_whole_career(db_url: str) -> None:
    """The page summary read from the states store_careers wrote equals the reference, before and
    after newer matches."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        ledger.store_careers(7)
        assert_summary_is_whole_careers(ledger, "busy")
        ledger.import_matches(
            [Match.single("r2", "busy", "a", match_id="late", played_at=START + timedelta(days=2))]
        )
        assert_summary_is_whole_careers(ledger, "busy")


def test_the_states_equal_those_a_page_read_stores(db_url: str) -> None:
    """With team matches and draws, the state store_careers writes for a player is the text a page
    read stores for it (a page read folds one player with statements of its own), whole and
    extended by newer matches."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        league = _mixed_league(300)
        ledger.import_matches(league[:200])
        ledger.career_summary("p0")  # 200 matches folded: the read stores its state
        by_read = _state_texts(ledger)["p0"]
        ledger.store_careers(150)  # p0's state is current: left as it is
        assert _state_texts(ledger)["p0"] == by_read
        with ledger.db.begin_write() as conn:
            conn.exec_driver_sql("DELETE FROM career_states")
        assert ledger.store_careers(150) == 1
        assert _state_texts(ledger) == {"p0": by_read}
        ledger.import_matches(league[200:])
        assert ledger.store_careers(150) == 1  # from the stored state, the 100 newer matches
        extended = _state_texts(ledger)["p0"]
        with ledger.db.begin_write() as conn:
            conn.exec_driver_sql("DELETE FROM career_states")
        ledger.career_summary("p0")
        assert _state_texts(ledger)["p0"] == extended
        assert_summary_is_whole_careers(ledger, "p0")


def test_the_first_of_equal_best_wins_is_kept(db_url: str) -> None:
    """Wins over newcomers (all at the starting rating) tie as best wins: the stored state keeps
    the first, as the whole career does."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(
            [
                Match.single("p0", f"new{i}", "a", match_id=f"n{i}", played_at=START + timedelta(minutes=i))
                for i in range(120)
            ]
        )
        assert ledger.store_careers(100) == 1
        assert json.loads(_state_texts(ledger)["p0"])[8][0] == _first(ledger, "p0")
        assert_summary_is_whole_careers(ledger, "p0")


def test_current_states_are_not_written_again(db_url: str) -> None:
    """A second call finds every state current and writes none; a new match makes one stale."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        assert ledger.store_careers(7) == 2
        assert ledger.store_careers(7) == 0
        ledger.import_matches(
            [Match.single("mid", "r3", "b", match_id="late", played_at=START + timedelta(days=2))]
        )
        assert ledger.store_careers(7) == 1
        assert _states(ledger)["mid"] == (_last(ledger, "mid"), 0)
        assert_summary_is_whole_careers(ledger, "mid")  # its stored state extended by one match


def test_after_a_void_the_states_are_stored_under_the_new_count(db_url: str) -> None:
    """A void makes the stored states stale; store_careers stores them again under its count."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        ledger.store_careers(7)
        ledger.void("m5", "typo")  # busy against r1: mid keeps its 7 matches
        assert ledger.store_careers(7) == 2
        assert {p: s[1] for p, s in _states(ledger).items()} == {"busy": 1, "mid": 1}
        assert_summary_is_whole_careers(ledger, "busy")


def test_progress_follows_the_players(db_url: str) -> None:
    """progress gets (0, n) first and (n, n) last, n the players counted (busy, mid, r1, r3)."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        calls: list[tuple[int, int]] = []
        ledger.store_careers(2, progress=lambda done, total: calls.append((done, total)))
        assert calls[0] == (0, 4) and calls[-1] == (4, 4) and len(calls) == 5


def test_a_bound_below_one_is_refused(db_url: str) -> None:
    """min_matches 0 raises a ValidationError naming the argument."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        with pytest.raises(ValidationError) as caught:
            ledger.store_careers(0)
        assert caught.value.field == "min_matches"


def test_import_stores_the_states_unless_told_not_to(tmp_path: Path) -> None:
    """`import --store-careers 7` stores two states; `--store-careers 0` none; the command alone works."""
    source = tmp_path / "league.csv"
    write_matches(source, _league())
    for option, expected in (("0", set()), ("7", {"busy", "mid"})):
        url = f"sqlite:///{tmp_path / f'l{option}.db'}"
        done = runner.invoke(app, ["import", str(source), "--database-url", url, "--store-careers", option])
        assert done.exit_code == 0, done.output
        db = open_database(url)
        try:
            assert set(_states(Ledger(db))) == expected
        finally:
            db.dispose()
    alone = runner.invoke(app, ["ratings", "store-careers", "--min-matches", "2", "--database-url", url])
    assert (
        alone.exit_code == 0 and "Stored 2 page summaries." in alone.output
    )  # r1 and r3: the others current


def test_the_command_refuses_a_bound_below_one_with_status_2(tmp_path: Path) -> None:
    """`ratings store-careers --min-matches 0` exits 2 naming the option."""
    url = f"sqlite:///{tmp_path / 'x.db'}"
    done = runner.invoke(app, ["ratings", "store-careers", "--min-matches", "0", "--database-url", url])
    assert done.exit_code == 2 and "--min-matches" in done.output


def test_an_admin_void_stores_the_states_again_after_its_answer(tmp_path: Path) -> None:
    """POST /v1/admin/matches/ID/void answers, then the busiest player's state (1,002 matches, the
    default bound 1,000) is stored under the void's count."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with empty_ledger(url, str(tmp_path)) as ledger:
        ledger.import_matches([*_league(), *_more_of_busy(990)])
        secret, _ = create_key(ledger.db, "admin", "test")
    with TestClient(create_app(ServiceSettings(database_url=url, rate_limit=0))) as client:
        answer = client.post(
            "/v1/admin/matches/m4/void",
            json={"reason": "typo"},
            headers={"Authorization": f"Bearer {secret}"},
        )
        assert answer.status_code == 200, answer.text
        assert client.app.state.services.careers.wait(30)  # type: ignore[attr-defined]
    with empty_ledger(url, str(tmp_path)) as ledger:
        assert _states(ledger) == {"busy": (_last(ledger, "busy"), 1)}


def test_the_options_name_the_ledgers_default() -> None:
    """The CLI's help says the default that Ledger.store_careers has (declared there, not imported)."""
    from typer.models import OptionInfo

    from sedma_elo.cli.options import StoreCareers
    from sedma_elo.service.ledger.career_bulk import STORE_BUSY

    (option,) = (m for m in StoreCareers.__metadata__ if isinstance(m, OptionInfo))
    assert f"default: {STORE_BUSY}" in str(option.help)
    shown = runner.invoke(app, ["ratings", "store-careers", "--help"], env={"COLUMNS": "200"})
    assert f"(default: {STORE_BUSY})" in shown.output


def test_a_current_state_in_the_form_before_0014_is_stored_again(db_url: str) -> None:
    """A current state whose meetings are a JSON list (stored before migration 0014) is rewritten
    with them as base64, and the summary read from it still equals the whole career."""
    with tempfile.TemporaryDirectory() as tmp, empty_ledger(db_url, tmp) as ledger:
        ledger.import_matches(_league())
        ledger.store_careers(7)
        ph = "?" if ledger.db.url.startswith("sqlite") else "%s"
        with ledger.db.begin_write() as conn:
            key, text = conn.exec_driver_sql(
                f"SELECT s.player_key, s.state FROM career_states s JOIN players p ON p.id = s.player_key"
                f" WHERE p.player_id = {ph}",
                ("busy",),
            ).one()
            old = json.loads(text)
            rows = np.frombuffer(base64.b64decode(old[-1]), dtype="<i4")
            old[-1] = [int(v) for v in rows]  # the flat list written before 0014
            conn.exec_driver_sql(
                f"UPDATE career_states SET state = {ph} WHERE player_key = {ph}", (json.dumps(old), key)
            )
        assert ledger.store_careers(7) == 1  # busy's, in the old form; mid's is current
        with ledger.db.read.connect() as conn:
            text = conn.exec_driver_sql(
                f"SELECT state FROM career_states WHERE player_key = {ph}", (key,)
            ).scalar_one()
        assert isinstance(json.loads(text)[-1], str)
        assert ledger.store_careers(7) == 0
        assert_summary_is_whole_careers(ledger, "busy")
