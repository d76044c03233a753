"""A small SVG line chart (log x axis) for docs/batching.svg, so the benchmark needs no plotting library."""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

COLOURS = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93")


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    dashed: bool = False


@dataclass
class Panel:
    title: str
    x_label: str
    y_label: str
    series: list[Series]


def _ticks(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _panel(panel: Panel, left: float, width: float, height: float, y_max: float) -> list[str]:
    top, plot_w, plot_h = 40.0, width - 90, height - 110
    xs = [x for s in panel.series for x, _ in s.points]
    ticks = _ticks(min(xs), max(xs))
    lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])

    def px(x: float) -> float:
        return left + 60 + (math.log10(x) - lo) / (hi - lo) * plot_w

    def py(y: float) -> float:
        return top + plot_h - y / y_max * plot_h

    mid = left + 60 + plot_w / 2
    out = [
        f'<text x="{mid}" y="22" text-anchor="middle" font-weight="bold">{escape(panel.title)}</text>',
        f'<rect x="{left + 60}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>',
        f'<text x="{mid}" y="{top + plot_h + 38}" text-anchor="middle">{escape(panel.x_label)}</text>',
        f'<text transform="translate({left + 18},{top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(panel.y_label)}</text>",
    ]
    for t in ticks:
        out.append(f'<text x="{px(t)}" y="{top + plot_h + 18}" text-anchor="middle">{t:g}</text>')
    step = 0.5 if y_max <= 6 else 1.0
    y = 0.0
    while y <= y_max + 1e-9:
        out.append(f'<line x1="{left + 60}" x2="{left + 60 + plot_w}" y1="{py(y)}" y2="{py(y)}" stroke="#eee"/>')
        out.append(f'<text x="{left + 54}" y="{py(y) + 4}" text-anchor="end">{y:g}</text>')
        y += step
    for i, s in enumerate(panel.series):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in s.points)
        dash = ' stroke-dasharray="5,4"' if s.dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>' for x, v in s.points]
        ly = top + 14 + 16 * i
        key_x = left + 60 + plot_w - 210
        out.append(
            f'<line x1="{key_x}" x2="{key_x + 20}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{key_x + 25}" y="{ly + 4}">{escape(s.label)}</text>')
    return out


def svg(panels: list[Panel], *, panel_width: float = 460, height: float = 340) -> str:
    y_max = math.ceil(max(v for p in panels for s in p.series for _, v in s.points) * 2 + 0.5) / 2
    body = []
    for i, panel in enumerate(panels):
        body += _panel(panel, i * panel_width, panel_width, height, y_max)
    width = panel_width * len(panels)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )
