"""Geometry of the server-side rating chart: pure functions from rating points to SVG coordinates.

The chart is drawn by a template as inline SVG (no JavaScript): this module only decides where the
lines, the axis ticks and the point markers go. The x axis is time when every match has a date (the
usual case), else the match number; the y axis is the rating. Point 0 is the rating before the first
match shown. The first ``provisional`` matches of a career are the provisional part: drawn dashed on a
shaded band. Each match's marker links to its match page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

__all__ = [
    "MAX_POINTS",
    "MIN_SPAN",
    "NARROW",
    "RANGES",
    "WIDE",
    "Chart",
    "ChartPoint",
    "Frame",
    "Marker",
    "Sparkline",
    "Tick",
    "build_chart",
    "build_sparkline",
    "downsample",
    "in_range",
    "nice_ticks",
]

#: More points than this are thinned (keeping each bucket's lowest and highest rating).
MAX_POINTS = 400
#: Up to this many matches get a marker (a link to the match); more would be a smear of dots.
MAX_MARKERS = 150
#: The y axis spans at least this many rating points, so one match at -20 is a step, not a crash.
MIN_SPAN = 100
#: The chart's ranges: key -> days before the player's last match (``None``: the whole career).
RANGES: dict[str, int | None] = {"1m": 31, "3m": 92, "1y": 366, "all": None}


@dataclass(frozen=True, slots=True)
class Frame:
    """The chart's coordinate system (the SVG ``viewBox``) and how many x ticks fit."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    x_ticks: int


#: The desktop chart and the phone chart (drawn at about its CSS size, so its text stays readable).
WIDE = Frame(720, 260, 52, 14, 14, 30, 7)
NARROW = Frame(360, 260, 46, 10, 14, 30, 3)


@dataclass(slots=True)
class ChartPoint:
    """One point of the rating line: after match number ``index`` the rating was ``rating``.

    ``when`` is the match's time (``None`` if unknown), ``match_id`` the match (``None`` for point 0,
    the rating before the first match), ``label`` the marker's tooltip (plain text, escaped by the
    template like every other string). Not frozen: a long career makes 10,000 of them per page, and
    a frozen dataclass's ``__init__`` took three times as long. Treat it as immutable.
    """

    index: int
    rating: int
    label: str = ""
    when: datetime | None = None
    match_id: str | None = None


@dataclass(frozen=True, slots=True)
class Tick:
    """An axis tick at SVG coordinate ``pos`` with the text ``text``."""

    pos: float
    text: str


@dataclass(frozen=True, slots=True)
class Marker:
    """A match's dot at (``x``, ``y``), linking to ``match_id``, with the tooltip ``label``."""

    x: float
    y: float
    match_id: str
    label: str
    provisional: bool


@dataclass(frozen=True, slots=True)
class Chart:
    """Everything a template needs to draw the chart, in SVG user units of the ``viewBox``.

    ``established`` and ``provisional`` are polylines (either may be empty); ``band_right`` is the
    right edge of the shaded provisional band (``None`` when no shown match is provisional).
    ``time_axis`` says whether x is time (else the match number).
    """

    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    established: str
    provisional: str
    band_right: float | None
    markers: tuple[Marker, ...]
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    low: int
    high: int
    points: int
    time_axis: bool


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


def in_range(points: Sequence[ChartPoint], days: int | None) -> list[ChartPoint]:
    """The points of the last ``days`` days before the last match, led by the rating before them.

    The leading point (the rating before the first match in the range) is placed at the range's
    start, so the line begins at the left edge. ``None`` days, or points without dates, keep all.
    """
    if days is None or len(points) < 2 or any(p.when is None for p in points[1:]):
        return list(points)
    last = points[-1].when
    assert last is not None
    start = last - timedelta(days=days)
    first = next(i for i, p in enumerate(points) if i > 0 and p.when is not None and p.when >= start)
    before = points[first - 1]
    return [ChartPoint(before.index, before.rating, before.label, start, None), *points[first:]]


def _y_range(low: int, high: int) -> list[float]:
    """Tick values for ratings in [low, high], spanning at least MIN_SPAN points around them."""
    if high - low < MIN_SPAN:
        middle = (low + high) / 2
        low, high = math.floor(middle - MIN_SPAN / 2), math.ceil(middle + MIN_SPAN / 2)
    return nice_ticks(low, high)


def _seconds(moment: datetime) -> float:
    return moment.astimezone(UTC).timestamp()


_DAY = 86_400.0


def _date_ticks(start: float, stop: float, count: int) -> list[tuple[float, date, str]]:
    """Round dates between two timestamps: (timestamp, date, CLDR skeleton of its label).

    Days for short spans, months for medium ones, years beyond about three years.
    """
    span_days = (stop - start) / _DAY
    first = datetime.fromtimestamp(start, UTC).date()
    ticks: list[tuple[float, date, str]] = []

    def add(day: date, skeleton: str) -> None:
        at = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
        if start <= at <= stop:
            ticks.append((at, day, skeleton))

    if span_days <= 120:
        step = next(s for s in (1, 2, 7, 14, 28) if span_days / s <= count)
        day = first
        while (datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) <= stop:
            add(day, "MMMd")
            day += timedelta(days=step)
    elif span_days <= 3 * 366:
        step = next(s for s in (1, 2, 3, 6, 12) if span_days / 30.4 / s <= count)
        year, month = first.year, first.month
        while True:
            day = date(year, month, 1)
            if datetime(year, month, 1, tzinfo=UTC).timestamp() > stop:
                break
            if (month - 1) % step == 0:
                add(day, "yMMM")
            month += 1
            if month == 13:
                year, month = year + 1, 1
    else:
        step = next(s for s in (1, 2, 5, 10, 20, 50) if span_days / 365.25 / s <= count)
        for year in range(first.year, datetime.fromtimestamp(stop, UTC).year + 1):
            if year % step == 0:
                add(date(year, 1, 1), "y")
    return ticks


def _spaced(ticks: list[Tick], gap: float) -> tuple[Tick, ...]:
    """Ticks at least ``gap`` apart (from the left)."""
    kept: list[Tick] = []
    for tick in ticks:
        if not kept or tick.pos - kept[-1].pos >= gap:
            kept.append(tick)
    return tuple(kept)


def build_chart(
    points: Sequence[ChartPoint],
    *,
    frame: Frame = WIDE,
    provisional: int = 0,
    date_label: Callable[[date, str], str] | None = None,
    marker_label: Callable[[ChartPoint], str] | None = None,
) -> Chart | None:
    """The chart of ``points`` (ascending ``index``), or ``None`` when there is nothing to draw.

    More than :data:`MAX_POINTS` points are thinned by :func:`downsample` (ends and each bucket's
    extremes kept), so the page's size and drawing time are bounded whatever the career's length.
    ``provisional`` is the number of matches of a career that are provisional; ``date_label(day,
    skeleton)`` writes a tick's date in the reader's locale (ISO dates without it);
    ``marker_label(point)`` writes a marker's tooltip, called only for the markers drawn (at most
    :data:`MAX_MARKERS`; without it, the point's ``label`` or its rating).
    """
    if not points:
        return None
    shown = downsample(points)
    label = date_label or (lambda day, _: day.isoformat())
    y_values = _y_range(min(p.rating for p in shown), max(p.rating for p in shown))
    y_min, y_max = y_values[0], y_values[-1]
    left, right = float(frame.left), float(frame.width - frame.right)
    top, bottom = float(frame.top), float(frame.height - frame.bottom)
    time_axis = all(p.when is not None for p in shown[1:]) and len(shown) > 1
    if time_axis:
        xs = [_seconds(p.when) if p.when else 0.0 for p in shown]
        if shown[0].when is None:  # the rating before the career: a little before the first match
            xs[0] = xs[1] - max(_DAY, (xs[-1] - xs[1]) * 0.03)
    else:
        xs = [float(p.index) for p in shown]
    first, last = xs[0], xs[-1]
    if last - first < (_DAY if time_axis else 1):
        pad = _DAY if time_axis else 1.0
        first, last = first - pad, last + pad

    def x_of(value: float) -> float:
        return left + (value - first) / (last - first) * (right - left)

    def y_of(rating: float) -> float:
        return bottom - (rating - y_min) / (y_max - y_min) * (bottom - top)

    coords = [(round(x_of(x), 1), round(y_of(p.rating), 1)) for x, p in zip(xs, shown, strict=True)]
    split = sum(1 for p in shown if p.index <= provisional)  # points of the provisional part
    # The two parts share the last provisional point, so the line is unbroken.
    dashed = coords[:split]
    solid = [] if split == len(coords) else coords[max(0, split - 1) :]
    markers: tuple[Marker, ...] = ()
    if len(shown) <= MAX_MARKERS + 1:
        markers = tuple(
            Marker(x, y, p.match_id, _marker_text(p, marker_label), p.index <= provisional)
            for (x, y), p in zip(coords, shown, strict=True)
            if p.match_id is not None
        )
    y_ticks = tuple(Tick(round(y_of(v), 1), f"{v:.0f}") for v in y_values)
    if time_axis:
        raw = [
            Tick(round(x_of(at), 1), label(day, sk))
            for at, day, sk in _date_ticks(first, last, frame.x_ticks)
        ]
        x_ticks = _spaced(raw, (right - left) / (frame.x_ticks + 0.5))
    else:
        values = sorted({int(v) for v in nice_ticks(first, last, frame.x_ticks) if first <= v <= last})
        x_ticks = _spaced([Tick(round(x_of(v), 1), str(v)) for v in values], 28)
    band = None
    if split:
        band = coords[split - 1][0] if split < len(coords) else right
    return Chart(
        frame.width,
        frame.height,
        left,
        right,
        top,
        bottom,
        _polyline(solid),
        _polyline(dashed),
        band,
        markers,
        y_ticks,
        x_ticks,
        min(p.rating for p in points),
        max(p.rating for p in points),
        len(points),
        time_axis,
    )


def _marker_text(point: ChartPoint, label: Callable[[ChartPoint], str] | None) -> str:
    if label is not None:
        return label(point)
    return point.label or str(point.rating)


def _polyline(coords: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in coords)


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


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
