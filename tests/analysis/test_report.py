"""The HTML report."""

from __future__ import annotations

import pytest

from sedma_elo.analysis.report import render_report
from sedma_elo.errors import ValidationError

RUN = {
    "kind": "backtest",
    "history": "h.csv",
    "split": {"n": 10, "valid_start": 5, "test_start": 7},
    "systems": [
        {
            "system": "elo<k>",
            "log_loss": 0.6,
            "brier": 0.2,
            "accuracy": 0.7,
            "valid": None,
            "seconds": 1.0,
            "drift": None,
            "calibration": [{"mean_predicted": 0.4, "mean_observed": 0.5}],
        }
    ],
}


def test_report_is_self_contained_html() -> None:
    """The page embeds its plot as a data URI and escapes system names."""
    page = render_report([RUN])
    assert page.startswith("<!DOCTYPE html>")
    assert "data:image/png;base64," in page
    assert "elo&lt;k&gt;" in page


def test_report_refuses_unknown_kind() -> None:
    """A run of an unknown kind is named by its index."""
    with pytest.raises(ValidationError, match=r"runs\[0\]\.kind"):
        render_report([{"kind": "other"}])
