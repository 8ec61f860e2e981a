"""The rules' reasons for K and notes: one template each, read back from the text, translated."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import Match, PlayerStats, rate
from sedma_elo.core import reasons
from sedma_elo.core.engine import RatingResult
from sedma_elo.core.explain import change_to_dict, explain_change, explain_player
from sedma_elo.core.rules import REFERENCE_RULES as R
from sedma_elo.core.sentences import k_reason_text, note_sentence
from sedma_elo.i18n import LANGUAGES, translations

TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]
#: English words of the reasons and notes that no translation keeps.
ENGLISH_WORDS = re.compile(
    r"\b(rating|games played|new player|zero-sum|mean of|margin of victory|floored|floor|kept at|"
    r"shared|outside|tier|newcomer)\b"
)
_numbers = st.one_of(
    st.integers(-60_000, 60_000).map(str), st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.4g}")
)


def _varied() -> list[RatingResult]:
    """Matches whose players get every reason and note the engine writes."""
    stats = PlayerStats(bad_moves=1, won_by_16=2, won_by_4_and_last=1)
    win = Match.single("x", "y", "a", stats, PlayerStats(won_by_24=1))
    games = {"x": 2, "y": 40}
    out = [rate(win, {"x": 1000, "y": 1900}, R), rate(win, {"x": 2300, "y": 1500}, R)]
    out.append(rate(win, {}, R.replace(k_tiers=())))
    for mode in ("games", "sum", "product", "min", "max"):
        rules = R.replace(k_mode=mode, k_new_player_games=5, k_new_player_multiplier=1.5)
        out.append(rate(win, {"x": 1000, "y": 1300}, rules, games_played=games))
    zero_sum = R.replace(zero_sum=True, k_new_player_games=5, k_new_player_multiplier=2.0, margin_scale=0.2)
    out.append(rate(win, {"x": 1000, "y": 1300}, zero_sum, games_played=games))
    balance = R.replace(k_new_player_games=5, k_new_player_multiplier=2.0, newcomer_balance=0.5)
    out.append(rate(win, {"x": 1000, "y": 1300}, balance, games_played=games))
    out.append(rate(win, {"x": 1000, "y": 1000}, R.replace(rating_floor=990)))
    out.append(rate(win, {"x": 49_990, "y": 49_990}, R.replace(score_max=2.0, k_top=1000)))
    return out


def _texts() -> list[str]:
    return [t for result in _varied() for c in result.changes for t in (c.k_reason, *c.notes)]


def test_the_varied_matches_cover_every_template() -> None:
    """Every template but the curve is the outermost one of some reason or note of _varied()."""
    used = {found[0] for found in map(reasons.parse, _texts()) if found}
    assert set(reasons.TEMPLATES) - used == {reasons.K_CURVE}  # the curve is only ever inside another


def test_every_engine_text_is_read_back() -> None:
    """parse() gives the template and fields that write each reason and note again."""
    for text in _texts():
        found = reasons.parse(text)
        assert found is not None, text
        template, fields = found
        assert template.format(**fields) == text


@given(_numbers, _numbers, _numbers)
def test_parse_inverts_format_with_nested_reasons(k: str, multiplier: str, games: str) -> None:
    """A zero-sum reason around a new-player reason around a tier reason is read back field for field."""
    inner = reasons.K_TIER_IN.format(rating=games, low=k, bound=multiplier)
    middle = reasons.K_NEW_PLAYER.format(reason=inner, multiplier=multiplier, games=games, needed=k)
    text = reasons.K_ZERO_SUM.format(k=k, reason=middle)
    assert reasons.parse(text) == (reasons.K_ZERO_SUM, {"k": k, "reason": middle})
    assert reasons.parse(middle) == (
        reasons.K_NEW_PLAYER,
        {"reason": inner, "multiplier": multiplier, "games": games, "needed": k},
    )


def test_other_text_is_not_parsed() -> None:
    """A text no template writes is not read as one (and is printed as it is)."""
    assert reasons.parse("K by rating and mood") is None
    assert k_reason_text("K by rating and mood", translations("de")) == "K by rating and mood"


def test_english_is_what_the_engine_wrote() -> None:
    """In English the reasons are the engine's text, the notes that text as a sentence."""
    result = rate(Match.single("x", "y", "a"), {"x": 1000, "y": 1000}, R.replace(rating_floor=990))
    assert result["y"].notes == ("rating floor: raised from 980 to 990",)
    assert note_sentence(result["y"].notes[0]) == "Rating floor: raised from 980 to 990."
    games = R.replace(k_mode="games", k_new_player_games=5, k_new_player_multiplier=1.5)
    reason = rate(Match.single("x", "y", "a"), {}, games, games_played={"x": 3, "y": 9})["x"].k_reason
    assert reason == (  # 250 / 8 ** 0.4 = 108.82
        "K by games played: 250 / (3 + 5)^0.4 floored at 0 = 108.8; times 1.5 for a new player (3 < 5 games)"
    )
    assert k_reason_text(reason) == reason


@pytest.mark.parametrize("lang", TRANSLATED)
def test_reasons_and_notes_are_translated(lang: str) -> None:
    """Every reason and note, nested ones included, is in the language, its numbers kept."""
    tr = translations(lang)
    mark = "," if lang != "zh" else "."
    for text in _texts():
        local = k_reason_text(text, tr)
        assert not ENGLISH_WORDS.search(local), (lang, local)
        assert "{" not in local and "}" not in local
        for number in re.findall(r"\d+(?:\.\d+)?", text):
            assert number.replace(".", mark) in local, (lang, number, local)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_explanations_rebuilt_from_json_translate_the_notes(lang: str) -> None:
    """The sentences rebuilt from the JSON form (pages, API) carry the translated K reason and notes."""
    tr = translations(lang)
    for result in _varied():
        for change in result.changes:
            english = explain_player(result, change.player_id)
            local = explain_change(change_to_dict(result, change.player_id), translator=tr)
            assert len(local) == len(english)
            for sentence in local[1:2] + local[len(local) - len(change.notes) :]:
                assert not ENGLISH_WORDS.search(sentence), (lang, sentence)
