"""Formatting helpers of the page templates."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import datetime, timedelta, timezone

from sedma_elo.web.render import (
    CONTENT_SECURITY_POLICY,
    LOCAL_TIME_SCRIPT,
    environment,
    fmt_number,
    fmt_signed,
    iso_utc,
    match_path,
    player_path,
)


def test_signed_numbers_use_a_real_minus_and_a_plus() -> None:
    """Gains get '+', losses the minus sign U+2212, zero no sign (also after rounding)."""
    assert fmt_signed(19) == "+19"
    assert fmt_signed(-3) == "\u22123"
    assert fmt_signed(0) == "0"
    assert fmt_signed(-0.001, 2) == "0.00"
    assert fmt_signed(0.15, 2) == "+0.15"
    assert fmt_number(-17.756, 2) == "\u221217.76"
    assert fmt_number(None) == "\u2013"


def test_paths_encode_every_special_character() -> None:
    """Ids are percent-encoded in links, slash and angle brackets included."""
    assert player_path("a b/<c>") == "/players/a%20b%2F%3Cc%3E"
    assert match_path("m?1#x") == "/matches/m%3F1%23x"


def test_iso_utc_converts_any_zone_to_z() -> None:
    """Aware times are converted to UTC; naive ones and 'Z' strings are taken as UTC."""
    prague = timezone(timedelta(hours=1))
    assert iso_utc(datetime(2026, 11, 29, 13, 0, tzinfo=prague)) == "2026-11-29T12:00:00Z"
    assert iso_utc(datetime(2026, 11, 29, 12, 0)) == "2026-11-29T12:00:00Z"
    assert iso_utc("2026-11-29T12:00:00Z") == "2026-11-29T12:00:00Z"
    assert iso_utc(None) == "" and iso_utc("not a time") == ""


def test_time_tag_shows_utc_text_inside_a_time_element() -> None:
    """Without JavaScript the reader sees the UTC time; the script finds it by its datetime attribute."""
    html = environment.from_string("{{ t|time_tag }}").render(t="2026-11-29T12:00:00Z")
    assert html == '<time datetime="2026-11-29T12:00:00Z">2026-11-29 12:00 UTC</time>'


def test_templates_escape_strings() -> None:
    """Autoescape is on for strings rendered by the environment."""
    assert environment.from_string("{{ s }}").render(s="<script>") == "&lt;script&gt;"


def test_policy_allows_exactly_the_local_time_script() -> None:
    """The Content-Security-Policy carries the SHA-256 of the inline script and nothing else runs."""
    digest = base64.b64encode(hashlib.sha256(LOCAL_TIME_SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in CONTENT_SECURITY_POLICY
    assert re.search(r"default-src 'none'", CONTENT_SECURITY_POLICY)
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
