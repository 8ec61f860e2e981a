"""The chart geometry: tick choice, thinning and the mapping of ratings to SVG coordinates."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.web.chart import (
    MIN_SPAN,
    NARROW,
    RANGES,
    ChartPoint,
    build_chart,
    build_sparkline,
    downsample,
    in_range,
    nice_ticks,
)


@given(st.integers(-50_000, 50_000), st.integers(0, 100_000))
def test_nice_ticks_cover_the_range_with_round_steps(low: int, width: int) -> None:
    """Ticks start at or below the low end, end at or above the high end, in steps of 1, 2 or 5 x 10^k."""
    ticks = nice_ticks(low, low + width)
    assert ticks[0] <= low and ticks[-1] >= low + width
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 5, 10))
    assert len(ticks) <= 12


def test_nice_ticks_of_a_typical_range() -> None:
    """900..1100 is labelled every 50 points (worked out by hand)."""
    assert nice_ticks(917, 1096) == [900, 950, 1000, 1050, 1100]


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=3000), st.integers(10, 400))
def test_downsample_keeps_ends_and_extremes(ratings: list[int], limit: int) -> None:
    """Thinning keeps the first and last point, the min and max, the order, and about `limit` points."""
    points = [ChartPoint(i, r) for i, r in enumerate(ratings)]
    kept = downsample(points, limit)
    assert kept[0] == points[0] and kept[-1] == points[-1]
    assert min(p.rating for p in kept) == min(ratings)
    assert max(p.rating for p in kept) == max(ratings)
    assert [p.index for p in kept] == sorted({p.index for p in kept})
    assert len(kept) <= max(limit, len(points) if len(points) <= limit else limit + 2)


def _coords(polyline: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in polyline.split())]


def _day(n: int) -> datetime:
    return datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(days=n)


def test_chart_maps_lowest_and_highest_rating_inside_the_plot() -> None:
    """The line's y values stay within the plot area and the highest rating is drawn highest."""
    points = [ChartPoint(0, 1000), ChartPoint(1, 1120), ChartPoint(2, 990), ChartPoint(3, 1150)]
    chart = build_chart(points)
    assert chart is not None
    coords = _coords(chart.established)
    ys = [y for _, y in coords]
    assert all(chart.plot_top <= y <= chart.plot_bottom for y in ys)
    assert ys.index(min(ys)) == 3  # 1150 is the highest rating: the smallest SVG y
    assert ys.index(max(ys)) == 2  # 990 the lowest
    assert coords[0][0] == chart.plot_left and coords[-1][0] == chart.plot_right
    assert (chart.low, chart.high, chart.points, chart.time_axis) == (990, 1150, 4, False)


def test_chart_of_nothing_is_none() -> None:
    """A player without matches has no chart."""
    assert build_chart([]) is None


def test_one_match_at_minus_twenty_is_a_step_not_a_crash() -> None:
    """With one match (1000 -> 980) the y axis spans at least MIN_SPAN points, not 980..1000."""
    chart = build_chart([ChartPoint(0, 1000), ChartPoint(1, 980, "m", _day(0), "m-1")])
    assert chart is not None
    labels = [int(t.text) for t in chart.y_ticks]
    assert labels[-1] - labels[0] >= MIN_SPAN
    (_, y0), (_, y1) = _coords(chart.established)
    assert (y1 - y0) / (chart.plot_bottom - chart.plot_top) <= 20 / MIN_SPAN + 1e-9


def test_time_axis_has_date_ticks_in_order() -> None:
    """Matches with dates give a time axis whose ticks are dates written by ``date_label``, left to right."""
    points = [ChartPoint(0, 1000)] + [
        ChartPoint(i, 1000 + i, "", _day(i * 20), f"m{i}") for i in range(1, 20)
    ]
    chart = build_chart(points, date_label=lambda day, skeleton: f"{skeleton}:{day.isoformat()}")
    assert chart is not None and chart.time_axis
    assert len(chart.x_ticks) >= 2
    positions = [t.pos for t in chart.x_ticks]
    assert positions == sorted(positions)
    assert all(chart.plot_left <= p <= chart.plot_right for p in positions)
    skeleton, day = chart.x_ticks[0].text.split(":")
    assert skeleton == "yMMM" and day.endswith("-01")  # about a year: ticks on the first of a month


def test_ranges_keep_the_last_days_led_by_the_rating_before() -> None:
    """The 1-month range keeps matches of the last 31 days and starts at the rating before them."""
    points = [ChartPoint(0, 1000)] + [
        ChartPoint(i, 1000 + i, "", _day(i * 10), f"m{i}") for i in range(1, 11)
    ]
    shown = in_range(points, RANGES["1m"])
    assert [p.index for p in shown] == [6, 7, 8, 9, 10]  # days 70..100, led by the rating after day 60
    assert shown[0].rating == points[6].rating and shown[0].match_id is None
    assert shown[0].when == _day(100) - timedelta(days=31)
    assert in_range(points, RANGES["all"]) == points


def test_provisional_part_is_dashed_and_shaded() -> None:
    """The first `provisional` matches are on the dashed line under the band; the rest is solid."""
    points = [ChartPoint(0, 1000)] + [ChartPoint(i, 1000 + 3 * i, "", _day(i), f"m{i}") for i in range(1, 16)]
    chart = build_chart(points, provisional=10)
    assert chart is not None
    dashed, solid = _coords(chart.provisional), _coords(chart.established)
    assert len(dashed) == 11 and len(solid) == 6  # points 0..10, then 10..15 (they share point 10)
    assert dashed[-1] == solid[0]
    assert chart.band_right == dashed[-1][0]
    assert [m.provisional for m in chart.markers] == [True] * 10 + [False] * 5
    assert [m.match_id for m in chart.markers] == [f"m{i}" for i in range(1, 16)]


def test_narrow_frame_keeps_few_ticks() -> None:
    """The phone chart has at most a few x ticks, so its labels do not collide."""
    points = [ChartPoint(0, 1000)] + [
        ChartPoint(i, 1000 + i, "", _day(i * 30), f"m{i}") for i in range(1, 40)
    ]
    chart = build_chart(points, frame=NARROW)
    assert chart is not None and chart.width == NARROW.width
    assert 2 <= len(chart.x_ticks) <= NARROW.x_ticks + 1
    gaps = [b.pos - a.pos for a, b in zip(chart.x_ticks, chart.x_ticks[1:], strict=False)]
    assert min(gaps) >= 60


def test_sparkline_rises_for_rising_ratings() -> None:
    """A rising series ends higher (smaller y) than it starts; a flat one is drawn mid-height."""
    rising = [tuple(map(float, p.split(","))) for p in build_sparkline([1000, 1010, 1030]).points.split()]
    assert rising[-1][1] < rising[0][1]
    flat = [tuple(map(float, p.split(","))) for p in build_sparkline([1000, 1000]).points.split()]
    assert {y for _, y in flat} == {8.0}
