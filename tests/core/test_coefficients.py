"""The coefficient declarations: the source that Rules, TOML, docs, tuning and the kernel derive from."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings

from sedma_elo import REFERENCE_RULES, Rules, RulesError, rules_from_toml
from sedma_elo.batch.kernel import LAYOUT, kernel_params
from sedma_elo.core.coefficients import COEFFICIENTS, TABLES, by_key, search_space
from sedma_elo.core.rules import value_of
from sedma_elo.core.rules_toml import point_of, rules_from_mapping, rules_from_point

from .strategies import any_rules

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_rules_table_is_up_to_date() -> None:
    """docs/rules.md holds exactly the table scripts/gen_rules_doc.py derives (run it after a change)."""
    script = _script()
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert script.render(text) == text
    assert all(f"`{c.key}`" in text for c in COEFFICIENTS)


def test_every_rules_field_is_declared() -> None:
    """Each Rules field is the attribute (or holds the parts) of at least one declaration."""
    declared = {c.attr.partition(".")[0] for c in COEFFICIENTS}
    assert {f.name for f in dataclasses.fields(Rules)} == declared


def test_declared_defaults_are_the_reference_rules() -> None:
    """The reference rules hold every declared default (the published C# coefficients)."""
    for c in COEFFICIENTS:
        value = value_of(REFERENCE_RULES, c.attr)
        if c.kind == "tiers":
            value = tuple((t.below, t.k) for t in value)
        if c.key != "description":
            assert value == c.default, c.key


@pytest.mark.parametrize("c", [c for c in COEFFICIENTS if c.kind in ("int", "float")], ids=lambda c: c.key)
def test_every_declared_bound_is_enforced_naming_the_key(c: object) -> None:
    """Just outside either declared bound, the TOML key is refused with its name; at the bound it is kept."""
    assert isinstance(c, type(COEFFICIENTS[0]))
    assert c.low is not None and c.high is not None
    step = 1 if c.kind == "int" else max(abs(c.high) * 1e-9, 1e-9)
    for bound, outside in ((c.low, c.low - step), (c.high, c.high + step)):
        value = int(bound) if c.kind == "int" else float(bound)
        bad = int(outside) if c.kind == "int" else float(outside)
        try:
            rules_from_mapping(_nested(c.key, value))
        except RulesError as exc:  # only a relation to another key may refuse the bound itself
            assert exc.field != c.key or (
                "must be" in str(exc) and not str(exc).startswith(f"{c.key}: must be >=")
            )
        with pytest.raises(RulesError) as caught:
            rules_from_mapping(_nested(c.key, bad))
        assert caught.value.field == c.key


def _nested(key: str, value: object) -> dict[str, object]:
    table, _, name = key.rpartition(".")
    return {table: {name: value}} if table else {name: value}


def test_toml_tables_are_the_declared_ones() -> None:
    """An unknown key in a declared table is refused, and the message lists the declared keys."""
    with pytest.raises(RulesError) as caught:
        rules_from_toml("[bonus]\nper_32 = 0.1\n")
    assert caught.value.field == "bonus.per_32"
    assert ", ".join(TABLES["bonus"]) in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(any_rules())
def test_any_declared_rule_set_reads_back_from_its_toml(rules: Rules) -> None:
    """to_toml() of any rule set from the declared space reads back to an equal object."""
    assert rules_from_toml(rules.to_toml()) == rules


def test_kernel_layout_has_one_slot_per_kernel_coefficient() -> None:
    """Every coefficient the kernel reads has a slot, unique within its array, holding its value."""
    params = kernel_params(REFERENCE_RULES)
    for keys, array in ((LAYOUT.score, params.p64), (LAYOUT.floats, params.p64), (LAYOUT.ints, params.ints)):
        for key in keys:
            value = value_of(REFERENCE_RULES, by_key(key).attr)
            stored = array[LAYOUT.slot[key]]
            c = by_key(key)
            if c.kind == "choice":
                assert stored == c.choices.index(value)
            elif value is None:
                assert stored == c.kernel_none
            else:
                assert math.isclose(stored, float(value)), key
    floats = [LAYOUT.slot[k] for k in LAYOUT.score + LAYOUT.floats]
    assert len(set(floats)) == len(floats)
    assert len({LAYOUT.slot[k] for k in LAYOUT.ints}) == len(LAYOUT.ints)


def test_search_space_covers_every_tuned_declaration() -> None:
    """Each declaration with a tuning range is one dimension, named by its TOML key; the tiers add six."""
    names = [p.name for p in search_space()]
    assert {c.key for c in COEFFICIENTS if c.tune is not None} <= set(names)
    assert len(names) == len(set(names))
    assert sum(name.startswith("k_factor.tiers[") for name in names) == 6


def test_a_games_point_as_tune_writes_it_builds_rules_with_k_by_games() -> None:
    """A search point with k_factor.mode = games gives rules whose K depends on games played."""
    point = point_of(REFERENCE_RULES, search_space()) | {"k_factor.mode": "games"}
    rules = rules_from_point(point)
    assert rules.k_mode == "games" and rules.uses_games_played
    assert rules.k_tiers == REFERENCE_RULES.k_tiers
