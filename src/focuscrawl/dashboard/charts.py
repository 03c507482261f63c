"""Server-rendered SVG charts: line charts with optional spread bands, and the strip chart of a suite.

No JavaScript and nothing fetched from elsewhere: each chart is one ``<svg>`` element that the page embeds
(or serves as an image). Every number is rounded, and curves are thinned to a few hundred points
(``thin``) before they get here, so a chart of a million-step crawl is as small as one of a hundred.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

# Colour-blind-friendly enough, and distinct on white: Tableau 10 plus two darker ones for large suites.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#637939", "#843c39", "#7b4173")


FONT = "system-ui,-apple-system,Segoe UI,Roboto,Helvetica Neue,Arial,sans-serif"
# Presentation attributes rather than CSS classes alone, so that a chart looks the same inline in the page
# and opened on its own (an <img>, a saved file).
_STYLE = {
    "chart-title": 'font-size="13" font-weight="600" fill="#1d2330"',
    "chart-empty": 'font-size="13" fill="#5d6677"',
    "tick": 'font-size="10.5" fill="#5d6677"',
    "label": 'font-size="11.5" fill="#5d6677"',
    "legend": 'font-size="11" fill="#1d2330"',
    "grid": 'stroke="#eceef2" stroke-width="1"',
    "axis": 'stroke="#b9bec8"',
    "frame": 'fill="none" stroke="#cfd3da"',
    "median": 'stroke="#1d2330" stroke-width="2.5"',
    "band": "",
    "curve": "",
}


def _c(name: str) -> str:
    return f'class="{name}" {_STYLE[name]}'.rstrip()


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def thin(n: int, limit: int = 400) -> list[int]:
    """At most ``limit`` indices of ``range(n)``, evenly spread, always keeping the first and the last."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    out = sorted({round(i * step) for i in range(limit)} | {n - 1})
    return out


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 2.5 or 5 times a power of ten apart)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else [0.0]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten that is at least ``value`` (> 0)."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value * (1 - 1e-9))


def settled_max(xs: Sequence[float], ys: Sequence[float], skip: float = 20) -> float | None:
    """The largest y once x passes ``skip`` (the first pages of a crawl swing wildly: a harvest rate of 1
    after one page); None when there is nothing after it."""
    values = [y for x, y in zip(xs, ys) if x > skip and y is not None and math.isfinite(y)]
    return max(values) if values else None


def fmt_tick(value: float) -> str:
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 10_000:
        return f"{value / 1000:g}k"
    if value == int(value):
        return f"{int(value)}"
    return f"{value:.3g}"


@dataclass
class Line:
    """One curve: ``ys`` over ``xs``; with ``low``/``high`` a shaded band (spread over runs) around it."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    colour: str = PALETTE[0]
    dashed: bool = False
    width: float = 1.8
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None
    axis: str = "left"  # or "right": a second scale on the right-hand side
    opacity: float = 1.0


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def line_chart(lines: Sequence[Line], *, title: str, x_label: str, y_label: str, width: int = 560,
               height: int = 260, y_max: float | None = None, right_label: str | None = None,
               right_max: float | None = None, chart_id: str = "", empty: str = "no data yet",
               band_opacity: float = 0.15) -> str:
    """An SVG line chart. ``y_max`` fixes the left scale's top (e.g. 1 for rates), else it fits the data."""
    lines = [line for line in lines if len(line.xs)]
    left, right, bottom = 58, (58 if right_label else 16), 42
    legend, legend_rows = _legend(lines, left, width - right)
    top = 30 + 15 * legend_rows
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" font-family="{FONT}" viewBox="0 0 {width} {height}" '
           f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}"'
           + (f' id="{escape(chart_id)}"' if chart_id else "") + f' data-lines="{len(lines)}">',
           f"<title>{escape(title)}</title>",
           f'<text x="{left}" y="18" {_c("chart-title")}>{escape(title)}</text>']
    if not lines:
        out.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" {_c("chart-empty")}>'
                   f"{escape(empty)}</text></svg>")
        return "".join(out)
    frame = _Frame.fit(lines, left, top, width - left - right, height - top - bottom, y_max, right_max,
                       bool(right_label))
    out.extend(_axes(frame, width, height, x_label, y_label, right_label))
    out.extend(_curves(lines, frame, band_opacity))
    out.extend(legend)
    out.append("</svg>")
    return "".join(out)


@dataclass
class _Frame:
    """A chart's plot area and its scales: x, the left y axis and (maybe) the right one, each with its ticks."""

    left: float
    top: float
    width: float
    height: float
    x_low: float
    x_high: float
    y_low: float
    y_high: float
    y_ticks: list[float]
    r_low: float
    r_high: float
    r_ticks: list[float]

    @classmethod
    def fit(cls, lines: Sequence[Line], left: float, top: float, width: float, height: float,
            y_max: float | None, right_max: float | None, right: bool) -> _Frame:
        x_low = min(min(line.xs) for line in lines)
        x_high = max(max(line.xs) for line in lines)
        if x_high <= x_low:
            x_high = x_low + 1
        y_low, y_high, y_ticks = _axis_scale(lines, "left", y_max, True)
        r_low, r_high, r_ticks = _axis_scale(lines, "right", right_max, right)
        return cls(left, top, width, height, x_low, x_high, y_low, y_high, y_ticks, r_low, r_high, r_ticks)

    def sx(self, x: float) -> float:
        return self.left + (x - self.x_low) / (self.x_high - self.x_low) * self.width

    def sy(self, y: float, axis: str = "left") -> float:
        low, high = (self.r_low, self.r_high) if axis == "right" else (self.y_low, self.y_high)
        y = min(max(y, low), high)
        return self.top + self.height - (y - low) / (high - low) * self.height


def _axis_scale(lines: Sequence[Line], axis: str, fixed: float | None, shown: bool
                ) -> tuple[float, float, list[float]]:
    """One y axis's range and ticks: from 0 to ``fixed``, or to the data's top rounded up to a tick."""
    values = [v for line in lines if line.axis == axis for seq in (line.ys, line.high or ()) for v in seq
              if math.isfinite(v)]
    low, high = 0.0, fixed if fixed is not None else max(values, default=1.0)
    if high <= 0:
        high = 1.0
    ticks = nice_ticks(low, high) if shown else []
    if fixed is None and ticks and ticks[-1] < high:
        ticks.append(ticks[-1] + (ticks[1] - ticks[0] if len(ticks) > 1 else high))
    return low, (max(high, ticks[-1]) if ticks else high), ticks


def _axes(frame: _Frame, width: int, height: int, x_label: str, y_label: str, right_label: str | None
          ) -> list[str]:
    """The grid, the ticks, the frame and the axis labels."""
    left, top, plot_w, plot_h = frame.left, frame.top, frame.width, frame.height
    out = []
    for tick in frame.y_ticks:
        y = frame.sy(tick)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{_num(y)}" y2="{_num(y)}" {_c("grid")}/>'
                   f'<text x="{left - 6}" y="{_num(y + 4)}" text-anchor="end" {_c("tick")}>{fmt_tick(tick)}</text>')
    for tick in frame.r_ticks:
        y = frame.sy(tick, "right")
        out.append(f'<text x="{left + plot_w + 6}" y="{_num(y + 4)}" {_c("tick")}>{fmt_tick(tick)}</text>')
    for tick in nice_ticks(frame.x_low, frame.x_high, 6):
        x = frame.sx(tick)
        out.append(f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{top + plot_h}" y2="{top + plot_h + 4}" {_c("axis")}/>'
                   f'<text x="{_num(x)}" y="{top + plot_h + 17}" text-anchor="middle" {_c("tick")}>'
                   f"{fmt_tick(tick)}</text>")
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" {_c("frame")}/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" {_c("label")}>'
               f"{escape(x_label)}</text>")
    out.append(f'<text transform="translate(14 {top + plot_h / 2}) rotate(-90)" text-anchor="middle" '
               f'{_c("label")}>{escape(y_label)}</text>')
    if right_label:
        out.append(f'<text transform="translate({width - 10} {top + plot_h / 2}) rotate(90)" text-anchor="middle" '
                   f'{_c("label")}>{escape(right_label)}</text>')
    return out


def _curves(lines: Sequence[Line], frame: _Frame, band_opacity: float) -> list[str]:
    """The bands first, then the curves over them."""
    sx, sy = frame.sx, frame.sy
    out = []
    for line in lines:
        if line.low is not None and line.high is not None and len(line.low) == len(line.xs):
            upper = " ".join(f"{_num(sx(x))},{_num(sy(y, line.axis))}" for x, y in zip(line.xs, line.high))
            lower = " ".join(f"{_num(sx(x))},{_num(sy(y, line.axis))}"
                             for x, y in zip(reversed(line.xs), reversed(line.low)))
            out.append(f'<polygon points="{upper} {lower}" fill="{line.colour}" fill-opacity="{band_opacity}" '
                       f'stroke="none" {_c("band")} data-series="{escape(line.name)}"/>')
    for line in lines:
        points = " ".join(f"{_num(sx(x))},{_num(sy(y, line.axis))}" for x, y in zip(line.xs, line.ys)
                          if math.isfinite(y))
        last = line.ys[-1] if len(line.ys) else 0
        out.append(f'<polyline points="{points}" fill="none" stroke="{line.colour}" stroke-width="{line.width}" '
                   + ('stroke-dasharray="5 3" ' if line.dashed else "")
                   + (f'stroke-opacity="{line.opacity}" ' if line.opacity < 1 else "")
                   + f'{_c("curve")} data-series="{escape(line.name)}" data-last="{last:g}" '
                   f'data-x-last="{line.xs[-1]:g}"/>')
    return out


def _legend(lines: Sequence[Line], left: float, right: float) -> tuple[list[str], int]:
    """The legend between the title and the plot, wrapped over as many rows as it needs."""
    out: list[str] = []
    x, row = left, 0
    for line in lines:
        w = 30 + 6.2 * len(line.name) + 14
        if x + w > right and x > left:
            x, row = left, row + 1
        y = 36 + 15 * row
        out.append(f'<g class="legend-item" data-series="{escape(line.name)}">'
                   f'<rect x="{_num(x - 2)}" y="{y - 11}" width="{_num(w - 10)}" height="14" fill="#fff" '
                   f'fill-opacity="0"/><line x1="{_num(x)}" x2="{_num(x + 20)}" y1="{y - 4}" y2="{y - 4}" '
                   f'stroke="{line.colour}" stroke-width="2.5"' + (' stroke-dasharray="5 3"' if line.dashed else "")
                   + (f' stroke-opacity="{line.opacity}"' if line.opacity < 1 else "") + "/>"
                   f'<text x="{_num(x + 25)}" y="{y}" {_c("legend")}>{escape(line.name)}</text></g>')
        x += w
    return out, (row + 1 if lines else 0)


def strip_chart(columns: Sequence[str], points: Sequence[tuple[str, str, float, str]], *, title: str,
                y_label: str, width: int | None = None, height: int = 300, chart_id: str = "") -> str:
    """One column per strategy; each (column, row label, value, group) a dot, the column's median a bar.

    Groups (a suite's halves) get their own marker colour. This is the suite's picture: the spread over
    topics, which a mean over rows would hide."""
    width = width or max(420, 70 * len(columns) + 90)
    left, right, top, bottom = 52, 56, 30, 74
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, _, v, _ in points if math.isfinite(v)]
    y_high = max(1.0, max(values, default=1.0))
    ticks = nice_ticks(0.0, y_high)
    y_high = max(y_high, ticks[-1])

    def sy(y: float) -> float:
        return top + plot_h - max(0.0, min(y, y_high)) / y_high * plot_h

    groups = list(dict.fromkeys(group for _, _, _, group in points))
    group_colour = {group: colour(i) for i, group in enumerate(groups)}
    rows = list(dict.fromkeys(label for _, label, _, _ in points))
    offset = {label: (i / max(len(rows) - 1, 1) - 0.5) * 0.5 for i, label in enumerate(rows)}
    col_w = plot_w / max(len(columns), 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" font-family="{FONT}" '
           f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" style="max-width:{width}px" role="img" '
           f'aria-label="{escape(title)}"' + (f' id="{escape(chart_id)}"' if chart_id else "") + ">",
           f"<title>{escape(title)}</title>", f'<text x="{left}" y="18" {_c("chart-title")}>{escape(title)}</text>']
    for tick in ticks:
        y = sy(tick)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{_num(y)}" y2="{_num(y)}" {_c("grid")}/>'
                   f'<text x="{left - 6}" y="{_num(y + 4)}" text-anchor="end" {_c("tick")}>{fmt_tick(tick)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" {_c("frame")}/>')
    out.append(f'<text transform="translate(14 {top + plot_h / 2}) rotate(-90)" text-anchor="middle" '
               f'{_c("label")}>{escape(y_label)}</text>')
    for i, name in enumerate(columns):
        centre = left + col_w * (i + 0.5)
        mine = sorted(v for c, _, v, _ in points if c == name and math.isfinite(v))
        if mine:
            median = mine[len(mine) // 2] if len(mine) % 2 else (mine[len(mine) // 2 - 1] + mine[len(mine) // 2]) / 2
            out.append(f'<line x1="{_num(centre - col_w * 0.35)}" x2="{_num(centre + col_w * 0.35)}" '
                       f'y1="{_num(sy(median))}" y2="{_num(sy(median))}" {_c("median")} data-series="{escape(name)}" '
                       f'data-median="{median:.4f}"/>')
        for c, label, value, group in points:
            if c != name or not math.isfinite(value):
                continue
            x = centre + offset[label] * col_w
            out.append(f'<circle cx="{_num(x)}" cy="{_num(sy(value))}" r="3.2" fill="{group_colour[group]}" '
                       f'fill-opacity="0.75"><title>{escape(label)}: {escape(name)} {value:.3f}</title></circle>')
        out.append(f'<text transform="translate({_num(centre)} {top + plot_h + 10}) rotate(30)" {_c("tick")}>'
                   f"{escape(name)}</text>")
    for i, group in enumerate(groups):
        x = left + 10 + 110 * i
        out.append(f'<circle cx="{x}" cy="{top + 10}" r="4" fill="{group_colour[group]}"/>'
                   f'<text x="{x + 8}" y="{top + 14}" {_c("legend")}>{escape(group or "rows")}</text>')
    out.append("</svg>")
    return "".join(out)
