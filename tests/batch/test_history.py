"""History files: reading CSV/JSONL (plain or gzipped), validating rows, writing, the columnar loader."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from sedma_elo import HistoryError, Match, PlayerStats
from sedma_elo.batch.history import (
    COLUMNS,
    DRAW,
    WINNER_A,
    HistoryArrays,
    load_history,
    read_matches,
    write_matches,
)
from sedma_elo.batch.history import csvfile as csv_reader

HEADER = ",".join(COLUMNS)
GOOD_ROWS = [
    "m1,2024-01-01,ann,bob,a,0,2,1,0,0,0,0,1",
    "m2,2024-01-02T10:30:00,bob,cyd,draw,0,0,0,0,0,0,0,0",
    "m3,2024-01-03,cyd,ann,b,1,0,0,3,0,1,0,0",
]


def _csv(tmp_path: Path, rows: list[str], *, header: str = HEADER, name: str = "h.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _error(path: Path) -> HistoryError:
    with pytest.raises(HistoryError) as caught:
        read_matches(path)
    return caught.value


def test_reads_rows_in_file_order(tmp_path: Path) -> None:
    """A valid CSV gives one Match per row, in order, with the counts of each side."""
    matches, errors = read_matches(_csv(tmp_path, GOOD_ROWS))
    assert errors == []
    assert [m.match_id for m in matches] == ["m1", "m2", "m3"]
    first = matches[0]
    assert (first.team_a, first.team_b, first.winner) == (("ann",), ("bob",), "a")
    assert first.stats_of("ann") == PlayerStats(bad_moves=0, won_by_16=1, won_by_24=0, won_by_4_and_last=0)
    assert first.stats_of("bob") == PlayerStats(bad_moves=2, won_by_16=0, won_by_24=0, won_by_4_and_last=1)
    assert matches[1].played_at == datetime(2024, 1, 2, 10, 30)


def test_gzip_is_detected_by_magic_bytes(tmp_path: Path) -> None:
    """A gzipped file named .csv (no .gz) reads the same as the plain file."""
    plain = _csv(tmp_path, GOOD_ROWS)
    disguised = tmp_path / "packed.csv"
    disguised.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_matches(disguised)[0] == read_matches(plain)[0]


def test_crlf_and_reordered_columns_read_the_same(tmp_path: Path) -> None:
    """CRLF line ends and another column order give the same arrays as the plain file."""
    plain = load_history(_csv(tmp_path, GOOD_ROWS))[0]
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(_csv(tmp_path, GOOD_ROWS).read_bytes().replace(b"\n", b"\r\n"))
    order = list(reversed(range(len(COLUMNS))))
    reordered_rows = [",".join(row.split(",")[i] for i in order) for row in GOOD_ROWS]
    reordered = _csv(tmp_path, reordered_rows, header=",".join(COLUMNS[i] for i in order), name="r.csv")
    for other in (load_history(crlf)[0], load_history(reordered)[0]):
        assert other.player_ids == plain.player_ids
        assert other.match_ids == plain.match_ids
        assert np.array_equal(other.counts, plain.counts)
        assert np.array_equal(other.player_a, plain.player_a)


def test_quoted_fields_are_read(tmp_path: Path) -> None:
    """Quoted CSV fields (the general reader) give the same matches."""
    quoted = ['"m1","2024-01-01","ann","bob","a","0","2","1","0","0","0","0","1"', *GOOD_ROWS[1:]]
    assert read_matches(_csv(tmp_path, quoted))[0] == read_matches(_csv(tmp_path, GOOD_ROWS, name="p.csv"))[0]


def test_columnar_loader_codes(tmp_path: Path) -> None:
    """load_history interns ids by first appearance and codes winners and counts as documented."""
    arrays, _ = load_history(_csv(tmp_path, GOOD_ROWS))
    assert arrays.player_ids == ["ann", "bob", "cyd"]
    assert arrays.player_a.tolist() == [0, 1, 2]
    assert arrays.player_b.tolist() == [1, 2, 0]
    assert arrays.winner.tolist() == [WINNER_A, DRAW, 1]
    assert arrays.counts[2].tolist() == [1, 0, 0, 3, 0, 1, 0, 0]
    assert arrays.lines.tolist() == [2, 3, 4]
    assert arrays.counts.dtype == np.int32 and arrays.player_a.dtype == np.int32


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("bad_moves_a", "-1", "non-negative integer"),
        ("won_by_16_b", "1.0", "non-negative integer"),
        ("won_by_24_a", "true", "non-negative integer"),
        ("won_by_4_and_last_b", "", "must not be empty"),
        ("won_by_16_a", "1000001", "<= 1000000"),
        ("winner", "A", "one of"),
        ("played_at", "yesterday", "ISO 8601"),
        ("played_at", "", "must not be empty"),
        ("player_a", "", "must not be empty"),
        ("player_b", "   ", "must not be empty"),
        ("match_id", "", "must not be empty"),
    ],
)
def test_bad_value_names_field_and_line(tmp_path: Path, column: str, value: str, reason: str) -> None:
    """A bad value in row 2 (line 3) raises a HistoryError naming the column and the line."""
    fields = GOOD_ROWS[1].split(",")
    fields[COLUMNS.index(column)] = value
    err = _error(_csv(tmp_path, [GOOD_ROWS[0], ",".join(fields), GOOD_ROWS[2]]))
    assert (err.field, err.line) == (column, 3)
    assert reason in str(err)


def test_self_play_is_refused(tmp_path: Path) -> None:
    """A player against themself is an error on player_b."""
    err = _error(_csv(tmp_path, [*GOOD_ROWS, "m4,2024-01-04,ann,ann,a,0,0,0,0,0,0,0,0"]))
    assert (err.field, err.line) == ("player_b", 5)


def test_duplicate_match_id_names_the_first(tmp_path: Path) -> None:
    """A repeated match_id is an error pointing at the line of its first use."""
    err = _error(_csv(tmp_path, [*GOOD_ROWS, "m2,2024-01-04,ann,bob,a,0,0,0,0,0,0,0,0"]))
    assert (err.field, err.line) == ("match_id", 5)
    assert "line 3" in str(err)


@pytest.mark.parametrize(
    ("header", "field"),
    [
        (HEADER + ",extra", "extra"),
        (HEADER.replace(",winner", ""), "winner"),
        (HEADER.replace("player_b", "player_a"), "player_a"),
    ],
)
def test_bad_header_names_the_column(tmp_path: Path, header: str, field: str) -> None:
    """An unknown, missing or repeated column is an error on line 1 naming it."""
    err = _error(_csv(tmp_path, [], header=header))
    assert (err.field, err.line) == (field, 1)


def test_wrong_field_count_is_a_row_error(tmp_path: Path) -> None:
    """A row with too few fields is reported on its line."""
    err = _error(_csv(tmp_path, [GOOD_ROWS[0], "m9,2024-01-01,ann,bob,a"]))
    assert err.line == 3


def test_line_numbers_count_physical_lines(tmp_path: Path) -> None:
    """A quoted field spanning two lines shifts the line numbers of the rows after it."""
    # A line break is refused in an id, so the spanning row is bad too; the second is on line 4.
    rows = ['"m\n1",2024-01-01,ann,bob,a,0,0,0,0,0,0,0,0', "m2,2024-01-01,ann,bob,x,0,0,0,0,0,0,0,0"]
    _, errors = read_matches(_csv(tmp_path, rows), skip_bad=True)
    assert [(e.line, e.field) for e in errors] == [(2, "match_id"), (4, "winner")]


def test_skip_bad_keeps_good_rows_and_reports(tmp_path: Path) -> None:
    """With skip_bad the good rows are returned and each bad row is reported by line."""
    rows = [
        GOOD_ROWS[0],
        "m2,2024-01-02,bob,bob,a,0,0,0,0,0,0,0,0",
        GOOD_ROWS[2],
        "m4,x,a,b,a,0,0,0,0,0,0,0,0",
    ]
    matches, errors = read_matches(_csv(tmp_path, rows), skip_bad=True)
    assert [m.match_id for m in matches] == ["m1", "m3"]
    assert [(e.field, e.line) for e in errors] == [("player_b", 3), ("played_at", 5)]
    arrays, array_errors = load_history(_csv(tmp_path, rows, name="b.csv"), skip_bad=True)
    assert arrays.match_ids == ["m1", "m3"] and arrays.lines.tolist() == [2, 4]
    assert [str(e) for e in array_errors] == [str(e) for e in errors]


def test_default_raises_the_first_bad_line(tmp_path: Path) -> None:
    """Without skip_bad the error of the earliest bad line is raised."""
    rows = [
        GOOD_ROWS[0],
        "m2,2024-01-02,bob,cyd,a,0,0,0,-3,0,0,0,0",
        "m3,2024-01-02,bob,bob,a,0,0,0,0,0,0,0,0",
    ]
    err = _error(_csv(tmp_path, rows))
    assert (err.field, err.line) == ("won_by_16_b", 3)


def test_unreadable_and_corrupt_files(tmp_path: Path) -> None:
    """A missing file, a broken gzip stream and non-UTF-8 bytes are file errors."""
    assert _error(tmp_path / "missing.csv").field == "(file)"
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(gzip.compress(b"x" * 100)[:20])
    assert _error(broken).field == "(file)"
    latin = tmp_path / "latin.csv"
    latin.write_bytes((HEADER + "\nm1,2024-01-01,J\xf6rg,bob,a,0,0,0,0,0,0,0,0\n").encode("latin-1"))
    err = _error(latin)
    assert (err.field, err.line) == ("(file)", 2)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    """An empty file has no header: an error on line 1."""
    path = tmp_path / "empty.csv"
    path.write_text("")
    assert _error(path).line == 1


# ---------------------------------------------------------------------------- JSON Lines
def _jsonl(tmp_path: Path, records: list[object], name: str = "h.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _flat(match_id: str = "j1", **changes: object) -> dict[str, object]:
    record: dict[str, object] = {c: 0 for c in COLUMNS[5:]}
    record.update(match_id=match_id, played_at="2024-02-01", player_a="ann", player_b="bob", winner="a")
    record.update(changes)
    return record


def test_jsonl_flat_matches_csv(tmp_path: Path) -> None:
    """A JSON Lines file with the CSV's keys gives the same matches as the CSV."""
    csv_matches, _ = read_matches(_csv(tmp_path, GOOD_ROWS))
    path = tmp_path / "same.jsonl"
    write_matches(path, csv_matches)
    assert read_matches(path)[0] == csv_matches


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"won_by_16_a": 1.0}, "won_by_16_a"),
        ({"bad_moves_b": True}, "bad_moves_b"),
        ({"won_by_24_a": -2}, "won_by_24_a"),
        ({"won_by_24_a": "1"}, "won_by_24_a"),
        ({"player_b": "ann"}, "player_b"),
        ({"extra": 1}, "extra"),
        ({"winner": "x"}, "winner"),
    ],
)
def test_jsonl_bad_value_names_field_and_line(tmp_path: Path, changes: dict[str, object], field: str) -> None:
    """JSON counts must be real integers; every bad value names its field and line."""
    path = _jsonl(tmp_path, [_flat("j1"), _flat("j2", **changes)])
    err = _error(path)
    assert (err.field, err.line) == (field, 2)


def test_jsonl_missing_key_and_bad_json(tmp_path: Path) -> None:
    """A missing key and a line that is not JSON are errors on their lines."""
    record = _flat()
    del record["winner"]
    assert _error(_jsonl(tmp_path, [record])).field == "winner"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_flat()) + "\n{not json\n")
    assert (_error(path).field, _error(path).line) == ("(json)", 2)


def test_jsonl_team_match_round_trip(tmp_path: Path) -> None:
    """2-vs-2 matches are written and read back as JSON Lines with team_a/team_b and stats."""
    team = Match(
        ("ann", "bob"),
        ("cyd", "dan"),
        "b",
        {"cyd": PlayerStats(won_by_24=1), "ann": PlayerStats(bad_moves=2)},
        match_id="t1",
        played_at=datetime(2024, 3, 1, 20, 0),
    )
    single = Match.single("ann", "cyd", "draw", match_id="s1", played_at=datetime(2024, 3, 2))
    path = tmp_path / "teams.jsonl.gz"
    write_matches(path, [team, single])
    assert gzip.decompress(path.read_bytes()).startswith(b"{")
    back, _ = read_matches(path)
    assert [m.match_id for m in back] == ["t1", "s1"]
    assert back[0].team_a == ("ann", "bob") and back[0].stats_of("cyd").won_by_24 == 1
    assert back[0].stats_of("ann").bad_moves == 2 and back[1] == single


def test_jsonl_team_stats_are_validated(tmp_path: Path) -> None:
    """A team match's stats must be counts of the match's players."""
    record = {
        "match_id": "t1",
        "played_at": "2024-01-01",
        "team_a": ["a1", "a2"],
        "team_b": ["b1", "b2"],
        "winner": "a",
        "stats": {"a1": {"won_by_16": 1.5}},
    }
    assert _error(_jsonl(tmp_path, [record])).field == "stats.a1.won_by_16"
    record["stats"] = {"zz": {"won_by_16": 1}}
    assert _error(_jsonl(tmp_path, [record], name="b.jsonl")).field == "stats.zz"


def test_load_history_refuses_team_matches(tmp_path: Path) -> None:
    """The columnar loader holds one player a side; a team match is an error naming team_a."""
    record = {
        "match_id": "t",
        "played_at": "2024-01-01",
        "team_a": ["a", "b"],
        "team_b": ["c", "d"],
        "winner": "a",
    }
    with pytest.raises(HistoryError) as caught:
        load_history(_jsonl(tmp_path, [_flat(), record]))
    assert (caught.value.field, caught.value.line) == ("team_a", 2)


# ---------------------------------------------------------------------------- writing
def test_csv_round_trip_plain_and_gzip(tmp_path: Path) -> None:
    """write_matches then read_matches gives the same matches, plain or .gz."""
    matches, _ = read_matches(_csv(tmp_path, GOOD_ROWS))
    for name in ("out.csv", "out.csv.gz"):
        write_matches(tmp_path / name, matches)
        assert read_matches(tmp_path / name)[0] == matches
    assert (tmp_path / "out.csv.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_write_refuses_what_the_format_cannot_hold(tmp_path: Path) -> None:
    """Team matches in CSV, a missing played_at or a repeated id are refused; the old file stays."""
    target = tmp_path / "keep.csv"
    target.write_text("old")
    team = Match(("a", "b"), ("c", "d"), "a", {}, match_id="t", played_at=datetime(2024, 1, 1))
    undated = Match.single("a", "b", "a", match_id="u")
    dated = Match.single("a", "b", "a", match_id="u", played_at=datetime(2024, 1, 1))
    for bad, field in (([team], "team_a"), ([undated], "played_at"), ([dated, dated], "match_id")):
        with pytest.raises(HistoryError) as caught:
            write_matches(target, bad)
        assert caught.value.field == field
    assert target.read_text() == "old"


def test_arrays_round_trip_through_matches(tmp_path: Path) -> None:
    """HistoryArrays -> Match objects -> HistoryArrays keeps ids, winners and counts."""
    arrays, _ = load_history(_csv(tmp_path, GOOD_ROWS))
    again = HistoryArrays.from_matches(arrays.to_matches())
    assert again.player_ids == arrays.player_ids
    assert np.array_equal(again.counts, arrays.counts)
    assert np.array_equal(again.winner, arrays.winner)


def test_fast_and_general_readers_agree(tmp_path: Path) -> None:
    """A large clean file read by the compiled fast path equals the csv-module reading."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(3000):
        a, b = rng.choice(50, size=2, replace=False).tolist()
        counts = ",".join(str(int(x)) for x in rng.integers(0, 30, size=8))
        rows.append(f"id-{i},2024-01-{1 + i % 28:02d},p{a},p{b},{('a', 'b', 'draw')[i % 3]},{counts}")
    rows.append("id-x,2024-01-01,p1,p1,a,0,0,0,0,0,0,0,0")
    fast_path = _csv(tmp_path, rows, name="fast.csv")
    general = _csv(tmp_path, [rows[0].replace("id-0", '"id-0"'), *rows[1:]], name="general.csv")
    assert csv_reader._fast_csv(fast_path.read_bytes(), True) is not None  # the compiled path is taken
    assert csv_reader._fast_csv(general.read_bytes(), True) is None  # quotes: the csv module
    fast, fast_errors = load_history(fast_path, skip_bad=True)
    slow, slow_errors = load_history(general, skip_bad=True)
    assert [str(e) for e in fast_errors] == [str(e) for e in slow_errors]
    assert fast.player_ids == slow.player_ids and fast.played_at == slow.played_at
    assert fast.match_ids == slow.match_ids
    for name in ("player_a", "player_b", "winner", "counts", "lines"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name


def test_first_error_wins_whatever_its_kind(tmp_path: Path) -> None:
    """A duplicate id on line 4 is raised before a self-play row on line 5."""
    rows = [
        *GOOD_ROWS[:2],
        "m1,2024-01-04,ann,bob,a,0,0,0,0,0,0,0,0",
        "m9,2024-01-04,ann,ann,a,0,0,0,0,0,0,0,0",
    ]
    err = _error(_csv(tmp_path, rows))
    assert (err.field, err.line) == ("match_id", 4)


# ---------------------------------------------------------------------------- the id rule
@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("player_a", "team/alice", "must not contain '/'"),
        ("player_b", "bob\u202e", "U+202E"),
        ("player_b", "bob\u0085x", "U+0085"),
        ("match_id", "m\u200b9", "U+200B"),
        ("match_id", "\ufeffm9", "U+FEFF"),
        ("player_a", "ann ", "must not start or end with whitespace"),
        ("match_id", "m 9 ", "must not start or end with whitespace"),
        ("match_id", "m\t9", "U+0009"),
    ],
)
def test_csv_ids_follow_the_id_rule(tmp_path: Path, column: str, value: str, reason: str) -> None:
    """Ids in a CSV are refused as the API refuses them, naming the column and the line."""
    row = dict(zip(COLUMNS, GOOD_ROWS[1].split(","), strict=True))
    row[column] = value
    err = _error(_csv(tmp_path, [GOOD_ROWS[0], ",".join(row.values())]))
    assert (err.field, err.line) == (column, 3)
    assert reason in err.reason


def test_csv_nfd_and_nfc_spellings_are_one_player(tmp_path: Path) -> None:
    """'José' written precomposed on one row and decomposed on another is one player in NFC."""
    rows = ["m1,2024-01-01,Jos\u00e9,bob,a,0,0,0,0,0,0,0,0", "m2,2024-01-02,Jose\u0301,cyd,a,0,0,0,0,0,0,0,0"]
    arrays, _ = load_history(_csv(tmp_path, rows))
    assert arrays.player_ids == ["Jos\u00e9", "bob", "cyd"]
    assert arrays.player_a.tolist() == [0, 0]


def test_csv_nfd_spelling_against_nfc_is_self_play(tmp_path: Path) -> None:
    """A row of 'José' (NFC) against 'José' (NFD) is a player against themself, not two players."""
    err = _error(_csv(tmp_path, ["m1,2024-01-01,Jos\u00e9,Jose\u0301,a,0,0,0,0,0,0,0,0"]))
    assert (err.field, err.line) == ("player_b", 2)


def test_csv_nfd_and_nfc_match_ids_are_duplicates(tmp_path: Path) -> None:
    """Match ids are normalised too: the two spellings of one id are a duplicate."""
    rows = ["r\u00e9,2024-01-01,ann,bob,a,0,0,0,0,0,0,0,0", "re\u0301,2024-01-02,ann,bob,a,0,0,0,0,0,0,0,0"]
    err = _error(_csv(tmp_path, rows))
    assert (err.field, err.line) == ("match_id", 3)


def test_fast_path_leaves_control_bytes_to_the_general_reader(tmp_path: Path) -> None:
    """An ASCII file with a control byte or '/' is not taken by the compiled path, which cannot explain it."""
    for n, text in enumerate(("m\x019", "m/9")):
        path = _csv(tmp_path, [*GOOD_ROWS[:2], GOOD_ROWS[2].replace("m3", text)], name=f"c{n}.csv")
        assert csv_reader._fast_csv(path.read_bytes(), True) is None
        assert (_error(path).field, _error(path).line) == ("match_id", 4)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"player_a": "team/alice"}, "player_a"),
        ({"player_b": "bob\u2028"}, "player_b"),
        ({"match_id": "j\u009b2"}, "match_id"),
    ],
)
def test_jsonl_ids_follow_the_id_rule(tmp_path: Path, changes: dict[str, object], field: str) -> None:
    """A JSON Lines id is checked by the same rule as a CSV id."""
    record = _flat("j2")
    record.update(changes)
    err = _error(_jsonl(tmp_path, [_flat("j1"), record]))
    assert (err.field, err.line) == (field, 2)


def test_jsonl_team_member_is_checked_and_normalised(tmp_path: Path) -> None:
    """A team member with a BOM is refused as team_a[1]; an NFD member is read in NFC."""
    record = {"match_id": "t1", "played_at": "2024-01-01", "team_b": ["b1", "b2"], "winner": "a"}
    bad = _jsonl(tmp_path, [{**record, "team_a": ["a1", "\ufeffa2"]}])
    assert (_error(bad).field, _error(bad).line) == ("team_a[1]", 1)
    good = _jsonl(tmp_path, [{**record, "team_a": ["a1", "Jose\u0301"]}], name="g.jsonl")
    assert read_matches(good)[0][0].team_a == ("a1", "Jos\u00e9")


def test_time_without_a_utc_equivalent_is_refused(tmp_path: Path) -> None:
    """A played_at that is valid ISO 8601 but before year 1 in UTC is a row error, not a crash later."""
    err = _error(_csv(tmp_path, ["m1,0001-01-01T00:00:00+00:01,ann,bob,a,0,0,0,0,0,0,0,0"]))
    assert (err.field, err.line) == ("played_at", 2)
