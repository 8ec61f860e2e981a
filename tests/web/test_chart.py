"""The chart geometry: tick choice, thinning and the mapping of ratings to SVG coordinates."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from sedma_elo.web.chart import ChartPoint, build_chart, build_sparkline, downsample, nice_ticks


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


def test_chart_maps_lowest_and_highest_rating_inside_the_plot() -> None:
    """The polyline's y values stay within the plot area and the highest rating is drawn highest."""
    points = [ChartPoint(0, 1000), ChartPoint(1, 1020), ChartPoint(2, 990), ChartPoint(3, 1050)]
    chart = build_chart(points)
    assert chart is not None
    coords = [tuple(map(float, pair.split(","))) for pair in chart.polyline.split()]
    ys = [y for _, y in coords]
    assert all(chart.plot_top <= y <= chart.plot_bottom for y in ys)
    assert ys.index(min(ys)) == 3  # 1050 is the highest rating: the smallest SVG y
    assert ys.index(max(ys)) == 2  # 990 the lowest
    assert coords[0][0] == chart.plot_left and coords[-1][0] == chart.plot_right
    assert (chart.low, chart.high, chart.points) == (990, 1050, 4)


def test_chart_of_nothing_is_none() -> None:
    """A player without matches has no chart."""
    assert build_chart([]) is None


def test_chart_of_one_point_is_centred() -> None:
    """A single point is drawn in the middle of the plot."""
    chart = build_chart([ChartPoint(0, 1000)])
    assert chart is not None
    x, _ = map(float, chart.polyline.split(","))
    assert x == (chart.plot_left + chart.plot_right) / 2


def test_sparkline_rises_for_rising_ratings() -> None:
    """A rising series ends higher (smaller y) than it starts; a flat one is drawn mid-height."""
    rising = [tuple(map(float, p.split(","))) for p in build_sparkline([1000, 1010, 1030]).points.split()]
    assert rising[-1][1] < rising[0][1]
    flat = [tuple(map(float, p.split(","))) for p in build_sparkline([1000, 1000]).points.split()]
    assert {y for _, y in flat} == {8.0}
