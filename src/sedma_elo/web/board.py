"""The leaderboard without provisional players: keyset pages filtered on top of the service's.

The service's leaderboard ranks everyone. The page leaves off players with fewer than the
provisional number of matches unless asked to show them, and then ranks the others 1, 2, 3 ...
Its cursor (opaque to readers) is the service cursor where a read began, how many of that read's
rows were already shown or skipped, and the rank reached; a page costs one service read per
:data:`READ` players passed over, and at most :data:`MAX_READS` reads.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..core.provisional import is_provisional
from ..errors import ValidationError
from .reads import as_mapping

__all__ = ["MAX_READS", "READ", "established_page"]

#: Rows per service read (the service's largest page).
READ = 500
#: At most this many reads per page (10,000 rows): past a longer run of provisional players a page
#: shows what it found so far, with a "Next" link that goes on from there, so that no view scans
#: the whole table.
MAX_READS = 20


def _encode(cursor: str | None, skip: int, rank: int) -> str:
    text = json.dumps([cursor, skip, rank], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(text: str) -> tuple[str | None, int, int]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("cursor", "is not a cursor of this page") from exc
    if (
        not isinstance(raw, list)
        or len(raw) != 3
        or not (raw[0] is None or isinstance(raw[0], str))
        or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**62 for v in raw[1:])
        or raw[1] >= READ
    ):
        raise ValidationError("cursor", "is not a cursor of this page")
    return raw[0], raw[1], raw[2]


def established_page(
    svc: Any, limit: int, cursor: str | None, threshold: int
) -> tuple[list[dict[str, Any]], str | None, Any]:
    """(rows, next cursor, version id) of players with at least ``threshold`` matches, ranked 1, 2, ...

    Raises:
        ValidationError: ``cursor`` is not one this function returned (or the service's rejects it).
    """
    start, skip, rank = _decode(cursor) if cursor else (None, 0, 0)
    rows: list[dict[str, Any]] = []
    version = None
    for _ in range(MAX_READS):
        page = as_mapping(svc.leaderboard(READ, start))
        version = page.get("version_id", version)
        items = page["items"][skip:]
        for offset, item in enumerate(items, start=1):
            if is_provisional(item["matches_played"], threshold):
                continue
            rank += 1
            rows.append({**item, "rank": rank})
            if len(rows) == limit:
                if skip + offset < len(page["items"]):
                    return rows, _encode(start, skip + offset, rank), version
                nxt = page.get("next_cursor")
                return rows, (_encode(nxt, 0, rank) if nxt else None), version
        nxt = page.get("next_cursor")
        if not nxt:
            return rows, None, version
        start, skip = nxt, 0
    return rows, _encode(start, 0, rank), version
