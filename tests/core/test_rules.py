"""Rules: TOML round trip, K tiers, and validation errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sedma_elo import REFERENCE_RULES, BonusRule, KTier, Rules, RulesError, load_rules, rules_from_toml

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def rule_sets(draw: st.DrawFn) -> Rules:
    """Random valid rule sets (every field varied)."""
    bounds = sorted(draw(st.sets(st.integers(-50_000, 50_000), max_size=5)))
    tiers = tuple(KTier(b, draw(st.integers(0, 1000))) for b in bounds)
    low = draw(st.floats(-1.0, 1.0))
    return Rules(
        name=draw(
            st.text(st.characters(codec="utf-8", exclude_categories=["Cc"]), min_size=1, max_size=20).filter(
                str.strip
            )
        ),
        version=draw(st.sampled_from(["1", "2.0", "x"])),
        description=draw(st.text(max_size=40)),
        initial_rating=draw(st.integers(-50_000, 50_000)),
        k_tiers=tiers,
        k_top=draw(st.integers(0, 1000)),
        bonus_16=BonusRule(draw(unit), draw(unit)),
        bonus_24=BonusRule(draw(unit), draw(unit)),
        bonus_4_and_last=BonusRule(draw(unit), draw(unit)),
        malus_per_bad_move=draw(unit),
        malus_cap=draw(unit),
        loser_bonus_scale=draw(unit),
        draw_bonus_scale=draw(unit),
        score_min=low,
        score_max=draw(st.floats(low, 2.0).filter(lambda x: x > low)),
        rounding=draw(st.sampled_from(["half_even", "half_up"])),
        arithmetic=draw(st.sampled_from(["float32", "float64"])),
        team_rating=draw(st.sampled_from(["mean", "sum"])),
    )


@given(rule_sets())
def test_toml_round_trip(rules: Rules) -> None:
    """Any valid rule set written to TOML reads back equal, description included."""
    back = rules_from_toml(rules.to_toml())
    assert back == rules
    assert back.description == rules.description


def test_save_and_load(tmp_path: Path) -> None:
    """Rules saved to a file load back equal."""
    path = tmp_path / "r.toml"
    variant = REFERENCE_RULES.replace(name="mine", malus_cap=0.25)
    variant.save(path)
    assert load_rules(path) == variant


def test_reference_is_the_published_method() -> None:
    """The default preset holds the coefficients of the seed post."""
    r = REFERENCE_RULES
    assert [(t.below, t.k) for t in r.k_tiers] == [(1200, 40), (1800, 32), (2200, 24)]
    assert r.k_top == 16
    assert (r.bonus_16.per_round, r.bonus_16.cap) == (0.05, 0.15)
    assert (r.bonus_24.per_round, r.bonus_24.cap) == (0.1, 0.2)
    assert (r.bonus_4_and_last.per_round, r.bonus_4_and_last.cap) == (0.03, 0.09)
    assert (r.malus_per_bad_move, r.malus_cap, r.loser_bonus_scale) == (0.02, 0.3, 0.1)


@pytest.mark.parametrize(
    ("rating", "k"),
    [(-50_000, 40), (1199, 40), (1200, 32), (1799, 32), (1800, 24), (2199, 24), (2200, 16), (50_000, 16)],
)
def test_k_tier_boundaries(rating: int, k: int) -> None:
    """Each tier boundary belongs to the higher tier (the seed post's `rating < 1200` etc.)."""
    assert REFERENCE_RULES.k_factor(rating) == k


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[bonus]\nmax_16 = -0.1\n", "bonus.max_16"),
        ("[malus]\nmax = -1\n", "malus.max"),
        ("[k_factor]\ntiers = [{below = 1800, k = 32}, {below = 1200, k = 40}]\n", "k_factor.tiers[1].below"),
        ("[k_factor]\ntiers = [{below = 1200, k = 40}, {below = 1200, k = 32}]\n", "k_factor.tiers[1].below"),
        ("colour = 1\n", "colour"),
        ("[bonus]\nper_32 = 0.1\n", "bonus.per_32"),
        ("[k_factor]\ntiers = [{below = 1200, k = 40, x = 1}]\n", "k_factor.tiers[0].x"),
        ('[bonus]\nper_16 = "0.05"\n', "bonus.per_16"),
        ("[bonus]\nloser_scale = true\n", "bonus.loser_scale"),
        ("initial_rating = 1000.5\n", "initial_rating"),
        ("[k_factor]\ntop = 16.0\n", "k_factor.top"),
        ("bonus = 3\n", "bonus"),
        ('rounding = "up"\n', "rounding"),
        ("[score]\nmin = 1.0\nmax = 0.5\n", "score.max"),
        ('name = ""\n', "name"),
        ("[bonus\n", "(toml)"),
    ],
)
def test_validation_names_the_key(text: str, key: str) -> None:
    """A bad rules file raises RulesError (a ValueError) whose field and message name the key."""
    with pytest.raises(RulesError) as info:
        rules_from_toml(text)
    assert isinstance(info.value, ValueError)
    assert info.value.field == key
    assert str(info.value).startswith(f"{key}: ")


def test_missing_file_is_a_rules_error(tmp_path: Path) -> None:
    """An unreadable rules file is a RulesError naming the file."""
    with pytest.raises(RulesError, match=r"nope\.toml"):
        load_rules(tmp_path / "nope.toml")


def test_constructor_validates() -> None:
    """Building Rules in code validates too, naming the TOML key."""
    with pytest.raises(RulesError, match=r"^bonus\.max_24: "):
        REFERENCE_RULES.replace(bonus_24=BonusRule(0.1, -0.2))


@pytest.mark.parametrize("key", ["name", "version"])
def test_control_characters_refused_in_labels(key: str) -> None:
    """A NUL or other control character in name or version is refused, naming the key."""
    with pytest.raises(RulesError, match=rf"^{key}: must not contain control characters"):
        REFERENCE_RULES.replace(**{key: "bad\x00label"})
