"""``iter_lined``: a history file a chunk of lines at a time, as ``read_lined`` reads it whole."""

from __future__ import annotations

import gzip
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sedma_elo import HistoryError, Match, PlayerStats
from sedma_elo.batch.history import (
    COLUMNS,
    HistoryArrays,
    LinedMatches,
    iter_lined,
    read_lined,
    write_matches,
)


def _matches(n: int, teams: bool = False) -> list[Match]:
    """``n`` matches among five players, a team match every fourth if ``teams``."""
    names = ["ann", "bob", "cyd", "dan", "eve"]
    start = datetime(2024, 5, 1, 9, 30)
    out = []
    for i in range(n):
        when = start + timedelta(minutes=i)
        if teams and i % 4 == 0:
            a1, a2, b1, b2 = (names[(i + k) % 5] for k in range(4))
            stats = {a1: PlayerStats(won_by_16=1)}
            out.append(Match((a1, a2), (b1, b2), "a", stats, f"m{i}", when))
        else:
            a, b = names[i % 5], names[(i + 2) % 5]
            out.append(
                Match.single(a, b, "b", PlayerStats(bad_moves=i % 3), match_id=f"m{i}", played_at=when)
            )
    return out


def _flat(source: HistoryArrays | LinedMatches) -> list[tuple[int, Match]]:
    """(line, match) of every match of a source."""
    if isinstance(source, HistoryArrays):
        return list(zip(source.lines.tolist(), source.to_matches(), strict=True))
    return list(zip(source.lines, source.matches, strict=True))


@pytest.mark.parametrize(
    ("name", "teams"),
    [("h.csv", False), ("h.csv.gz", False), ("h.jsonl", False), ("h.jsonl", True)],
)
def test_chunks_together_are_the_whole_file(tmp_path: Path, name: str, teams: bool) -> None:
    """The chunks' matches, in order and with their file lines, are what read_lined reads whole."""
    path = tmp_path / name
    write_matches(path, _matches(23, teams))
    whole, _ = read_lined(path)
    chunks = list(iter_lined(path, chunk=5))
    assert len(chunks) == 5
    assert [m for part, _ in chunks for m in _flat(part)] == _flat(whole)


def test_a_bad_row_in_a_later_chunk_names_its_file_line(tmp_path: Path) -> None:
    """A bad row of the third chunk is refused with its line in the file, not in the chunk."""
    path = tmp_path / "h.csv"
    write_matches(path, _matches(12))
    lines = path.read_text().splitlines()
    lines[11] = lines[11].replace(",b,", ",x,")  # line 12 of the file
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(HistoryError, match=r"^line 12: winner: must be one of"):
        list(iter_lined(path, chunk=4))


def test_skipped_rows_keep_their_file_lines(tmp_path: Path) -> None:
    """With skip_bad a later chunk's bad line is reported at its line in the file and left out."""
    path = tmp_path / "h.jsonl"
    write_matches(path, _matches(9))
    lines = path.read_text().splitlines()
    lines[6] = '{"match_id": "bad"}'  # line 7
    path.write_text("\n".join(lines) + "\n")
    chunks = list(iter_lined(path, skip_bad=True, chunk=3))
    assert [e.line for _, errors in chunks for e in errors] == [7]
    assert [line for part, _ in chunks for line, _ in _flat(part)] == [1, 2, 3, 4, 5, 6, 8, 9]


def test_a_file_that_is_no_history_is_refused_on_the_first_chunk(tmp_path: Path) -> None:
    """A wrong header is refused when the first chunk is read, as by read_lined."""
    path = tmp_path / "h.csv"
    path.write_text("match_id,when\nm1,2024-01-01\n")
    with pytest.raises(HistoryError, match=r"^line 1: when: unknown column"):
        next(iter_lined(path))


def test_a_truncated_gzip_file_is_a_history_error(tmp_path: Path) -> None:
    """A gzip stream cut short is refused as a bad file, not with a bare OSError."""
    path = tmp_path / "h.csv.gz"
    body = (",".join(COLUMNS) + "\n" + "m1,2024-01-01,ann,bob,a,0,0,0,0,0,0,0,0\n" * 2000).encode()
    path.write_bytes(gzip.compress(body)[:200])
    with pytest.raises(HistoryError, match=r"\(file\): .* is not a valid gzip file"):
        list(iter_lined(path))
