"""Rules to and from TOML, derived from the coefficient declarations.

The tables and keys a rules file may hold, their order when written and the mapping of each key
to a :class:`~sedma_elo.core.rules.Rules` attribute all come from
:data:`~sedma_elo.core.coefficients.COEFFICIENTS`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import RulesError
from .coefficients import COEFFICIENTS, TABLES, TIER_TUNING, SearchParam, by_key
from .rules import REFERENCE_RULES, KTier, Rules, value_of

__all__ = [
    "dump_toml",
    "load_rules",
    "point_of",
    "rules_from_mapping",
    "rules_from_point",
    "rules_from_toml",
    "rules_to_dict",
]

_TOP_KEYS = TABLES[""]
_SUB_TABLES = {table: keys for table, keys in TABLES.items() if table}


def rules_to_dict(rules: Rules) -> dict[str, Any]:
    """The rules as the nested mapping that :func:`rules_from_mapping` reads (declaration order).

    An optional coefficient that is off (``None``) is left out.
    """
    out: dict[str, Any] = {}
    for c in COEFFICIENTS:
        value = value_of(rules, c.attr)
        if value is None:
            continue
        if c.kind == "tiers":
            value = [{"below": t.below, "k": t.k} for t in value]
        (out.setdefault(c.table, {}) if c.table else out)[c.name] = value
    return out


def rules_from_mapping(data: Mapping[str, Any], base: Rules = REFERENCE_RULES) -> Rules:
    """Build rules from the nested mapping of a TOML file; missing keys keep ``base``'s value.

    The description is the mapping's (empty when missing), never ``base``'s.

    Raises:
        RulesError: an unknown key, a value of the wrong type or out of range (the key is named).
    """
    if not isinstance(data, Mapping):
        raise RulesError("(root)", "must be a table")
    for key, value in data.items():
        if key in _SUB_TABLES:
            if not isinstance(value, Mapping):
                raise RulesError(key, "must be a table")
            for sub in value:
                if sub not in _SUB_TABLES[key]:
                    raise RulesError(f"{key}.{sub}", f"unknown key (allowed: {', '.join(_SUB_TABLES[key])})")
        elif key not in _TOP_KEYS:
            raise RulesError(key, f"unknown key (allowed: {', '.join(_TOP_KEYS + tuple(_SUB_TABLES))})")

    changes: dict[str, Any] = {"description": ""}
    parts: dict[str, dict[str, Any]] = {}
    for c in COEFFICIENTS:
        table = data.get(c.table, {}) if c.table else data
        if c.name not in table:
            continue
        value = table[c.name]
        if c.kind == "tiers":
            value = _read_tiers(c.key, value)
        head, _, tail = c.attr.partition(".")
        if tail:  # a part of a compound value (BonusRule)
            parts.setdefault(head, {})[tail] = value
        else:
            changes[head] = value
    for head, values in parts.items():
        changes[head] = replace(getattr(base, head), **values)
    # Integers written without a decimal point in TOML are fine for float fields.
    return replace(base, **changes)


def _read_tiers(key: str, raw: object) -> tuple[KTier, ...]:
    if not isinstance(raw, list):
        raise RulesError(key, "must be an array of tables {below = ..., k = ...}")
    tiers = []
    for i, item in enumerate(raw):
        item_key = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            raise RulesError(item_key, "must be a table {below = ..., k = ...}")
        for sub in item:
            if sub not in ("below", "k"):
                raise RulesError(f"{item_key}.{sub}", "unknown key (allowed: below, k)")
        for sub in ("below", "k"):
            if sub not in item:
                raise RulesError(f"{item_key}.{sub}", "is required")
        tiers.append(KTier(item["below"], item["k"]))
    return tuple(tiers)


def rules_from_toml(text: str) -> Rules:
    """Parse TOML text into validated rules.

    Raises:
        RulesError: the text is not TOML, or a key is unknown, mistyped or out of range.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError("(toml)", f"not valid TOML: {exc}") from exc
    return rules_from_mapping(data)


def load_rules(path: str | Path | None) -> Rules:
    """Load rules from a TOML file; ``None`` means :data:`~sedma_elo.core.rules.REFERENCE_RULES`.

    Raises:
        RulesError: the file cannot be read or is invalid (the message names the file and key).
    """
    if path is None:
        return REFERENCE_RULES
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError("(file)", f"cannot read {path}: {exc.strerror}") from exc
    return rules_from_toml(text)


# ---------------------------------------------------------------------------- writing
_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n"}


def _toml_char(c: str) -> str:
    # TOML basic strings allow no control character but tab: write the others as \uXXXX.
    if c in _TOML_ESCAPES:
        return _TOML_ESCAPES[c]
    if (c < " " and c != "\t") or c == "\x7f":
        return f"\\u{ord(c):04x}"
    return c


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same double
    if isinstance(value, str):
        escaped = "".join(_toml_char(c) for c in value)
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def dump_toml(data: Mapping[str, Any]) -> str:
    """TOML text of a mapping of scalars, lists and one level of tables (top-level keys first)."""
    lines = []
    tables = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines.append("")
        lines.append(f"[{key}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- tuning points
def rules_from_point(
    point: Mapping[str, float | str], base: Rules = REFERENCE_RULES, name: str = "tuned"
) -> Rules:
    """The rule set a point of :func:`~sedma_elo.core.coefficients.search_space` stands for.

    Keys are TOML keys (``bonus.per_16``) plus the tier parameters of
    :data:`~sedma_elo.core.coefficients.TIER_TUNING`; missing keys keep ``base``'s values.

    Raises:
        RulesError: the point gives invalid rules (cannot happen inside the bounds).
    """
    data: dict[str, Any] = {"name": name, "description": base.description}
    for key, value in point.items():
        if key.startswith("k_factor.tiers["):
            continue
        table, _, sub = key.rpartition(".")
        if by_key(key).kind == "int":
            value = int(value)
        (data.setdefault(table, {}) if table else data)[sub] = value
    if "k_factor.tiers[0].k" in point:
        below = int(point.get("initial_rating", base.initial_rating)) + int(point["k_factor.tiers[0].offset"])
        tiers = []
        for i in range(len(TIER_TUNING.k)):
            if i:
                below += int(point[f"k_factor.tiers[{i}].width"])
            tiers.append({"below": below, "k": int(point[f"k_factor.tiers[{i}].k"])})
        data.setdefault("k_factor", {})["tiers"] = tiers
    return rules_from_mapping(data, base)


def point_of(rules: Rules, space: Sequence[SearchParam]) -> dict[str, float | str]:
    """The point of ``space`` closest to ``rules`` (values clamped into each range)."""
    known: dict[str, Any] = {}
    for key, value in rules_to_dict(rules).items():
        if isinstance(value, dict):
            known |= {f"{key}.{sub}": v for sub, v in value.items()}
        else:
            known[key] = value
    tiers = rules.k_tiers
    if len(tiers) == len(TIER_TUNING.k):
        known["k_factor.tiers[0].offset"] = tiers[0].below - rules.initial_rating
        for i, tier in enumerate(tiers):
            known[f"k_factor.tiers[{i}].k"] = tier.k
            if i:
                known[f"k_factor.tiers[{i}].width"] = tier.below - tiers[i - 1].below
    out: dict[str, float | str] = {}
    for p in space:
        value = known.get(p.name)
        if value is None:
            continue
        if p.choices:
            if value in p.choices:
                out[p.name] = value
        elif not isinstance(value, str):
            value = min(max(float(value), p.low), p.high)
            out[p.name] = round(value) if p.integer else value
    return out
