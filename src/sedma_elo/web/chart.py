"""Geometry of the server-side rating chart: pure functions from rating points to SVG coordinates.

The chart is drawn by a template as inline SVG (no JavaScript): this module only decides where the
line, the axis ticks and the point markers go. The x axis is the player's match number (1 = first
match), the y axis the rating after that match; point 0 is the rating before the first match.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Chart",
    "ChartPoint",
    "Sparkline",
    "Tick",
    "build_chart",
    "build_sparkline",
    "downsample",
    "nice_ticks",
]

#: The chart's coordinate system (the SVG ``viewBox``); it scales to the page width.
WIDTH = 720
HEIGHT = 260
MARGIN_LEFT = 56
MARGIN_RIGHT = 16
MARGIN_TOP = 14
MARGIN_BOTTOM = 34
#: More points than this are thinned (keeping each bucket's lowest and highest rating).
MAX_POINTS = 400


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One point of the rating line: after match number ``index`` the rating was ``rating``.

    ``label`` is shown as the point's tooltip (for example the match id and date); it is plain text
    and is escaped by the template like every other string.
    """

    index: int
    rating: int
    label: str = ""


@dataclass(frozen=True, slots=True)
class Tick:
    """An axis tick at SVG coordinate ``pos`` with the text ``text``."""

    pos: float
    text: str


@dataclass(frozen=True, slots=True)
class Chart:
    """Everything a template needs to draw the chart, in SVG user units of the ``viewBox``."""

    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    polyline: str
    markers: tuple[tuple[float, float, str], ...]
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    low: int
    high: int
    points: int


def nice_ticks(low: float, high: float, target: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]``: steps of 1, 2 or 5 times a power of ten.

    Returns at least two ascending values; the first is ``<= low`` and the last ``>= high``.
    """
    if high < low:
        low, high = high, low
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    raw = (high - low) / max(1, target - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    stop = math.ceil(high / step) * step
    count = round((stop - start) / step)
    return [start + i * step for i in range(count + 1)]


def downsample(points: Sequence[ChartPoint], limit: int = MAX_POINTS) -> list[ChartPoint]:
    """At most about ``limit`` points in order: the first, the last and each bucket's extremes.

    Keeping the lowest and highest point of every bucket preserves the line's peaks and dips.
    """
    if len(points) <= limit:
        return list(points)
    buckets = max(1, (limit - 2) // 2)
    inner = points[1:-1]
    size = len(inner) / buckets
    kept: list[ChartPoint] = [points[0]]
    for b in range(buckets):
        chunk = inner[int(b * size) : int((b + 1) * size)]
        if not chunk:
            continue
        lo = min(chunk, key=lambda p: p.rating)
        hi = max(chunk, key=lambda p: p.rating)
        kept.extend(sorted({lo.index: lo, hi.index: hi}.values(), key=lambda p: p.index))
    kept.append(points[-1])
    return kept


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def build_chart(points: Sequence[ChartPoint]) -> Chart | None:
    """The chart of ``points`` (ascending ``index``), or ``None`` when there is nothing to draw.

    Markers (with tooltips) are kept only when there are few enough points to tell apart.
    """
    if not points:
        return None
    shown = downsample(points)
    ratings = [p.rating for p in shown]
    y_values = nice_ticks(min(ratings), max(ratings))
    y_min, y_max = y_values[0], y_values[-1]
    first, last = shown[0].index, shown[-1].index
    span = max(1, last - first)
    left, right = float(MARGIN_LEFT), float(WIDTH - MARGIN_RIGHT)
    top, bottom = float(MARGIN_TOP), float(HEIGHT - MARGIN_BOTTOM)

    def x_of(index: float) -> float:
        if last == first:
            return (left + right) / 2
        return left + (index - first) / span * (right - left)

    def y_of(rating: float) -> float:
        return bottom - (rating - y_min) / (y_max - y_min) * (bottom - top)

    coords = [(x_of(p.index), y_of(p.rating)) for p in shown]
    polyline = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in coords)
    markers: tuple[tuple[float, float, str], ...] = ()
    if len(shown) <= 60:
        markers = tuple(
            (round(x, 1), round(y, 1), p.label or f"{p.rating}")
            for (x, y), p in zip(coords, shown, strict=True)
        )
    y_ticks = tuple(Tick(round(y_of(v), 1), f"{v:.0f}") for v in y_values)
    x_values = sorted({int(v) for v in nice_ticks(first, last, 6) if first <= v <= last} | {first, last})
    x_ticks = tuple(Tick(round(x_of(v), 1), str(v)) for v in x_values)
    # Drop ticks that would overlap their neighbour (keeps the first and the last).
    spaced = [x_ticks[0]]
    for tick in x_ticks[1:]:
        if tick.pos - spaced[-1].pos >= 28 or tick is x_ticks[-1]:
            if tick is x_ticks[-1] and len(spaced) > 1 and tick.pos - spaced[-1].pos < 28:
                spaced.pop()
            spaced.append(tick)
    return Chart(
        WIDTH,
        HEIGHT,
        left,
        right,
        top,
        bottom,
        polyline,
        markers,
        y_ticks,
        tuple(spaced),
        min(p.rating for p in points),
        max(p.rating for p in points),
        len(points),
    )


@dataclass(frozen=True, slots=True)
class Sparkline:
    """A tiny line of a few ratings for a table cell: ``points`` for an SVG ``<polyline>``."""

    points: str
    width: int
    height: int


def build_sparkline(ratings: Sequence[int], width: int = 60, height: int = 16) -> Sparkline:
    """The sparkline of ``ratings`` (oldest first) in a ``width`` x ``height`` box, 1 unit inset.

    A flat series is drawn as a horizontal line through the middle.
    """
    low, high = min(ratings, default=0), max(ratings, default=0)
    steps = max(1, len(ratings) - 1)
    inner_w, inner_h = width - 2, height - 2

    def y_of(rating: int) -> float:
        if high == low:
            return height / 2
        return 1 + (high - rating) / (high - low) * inner_h

    points = " ".join(f"{_fmt(1 + i / steps * inner_w)},{_fmt(y_of(r))}" for i, r in enumerate(ratings))
    return Sparkline(points, width, height)
