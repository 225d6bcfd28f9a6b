"""A small SVG writer for the book's animations and structure diagrams.

Why hand-written SVG rather than matplotlib for these two kinds of figure:

* **Light.** A diagram is a few kilobytes of text; an animation is the same diagram plus SMIL
  ``<animate>`` elements that the browser plays with no kernel and no JavaScript library.
* **Theme-aware.** Inline SVG can use the page's CSS variables, so text and outlines follow
  the light and dark themes of the site (``var(--pst-color-text-base)``), and JupyterLab's
  (``--jp-content-font-color1``) when a reader runs the notebook.
* **Deterministic.** The same call writes the same bytes, so nbval can compare a figure's
  source like any other output.

A :class:`Figure` displays itself as HTML in Jupyter and in the built book. Clicking an
animated figure pauses and resumes it.

Library only: no page imports it.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field

__all__ = ["Figure", "Canvas", "PALETTE", "TEXT", "MUTED", "SURFACE", "BORDER", "esc"]

# Theme colours, resolved by the page: the book theme first, then JupyterLab, then a fallback.
TEXT = "var(--pst-color-text-base, var(--jp-content-font-color1, #1f2328))"
MUTED = "var(--pst-color-text-muted, var(--jp-content-font-color2, #59636e))"
SURFACE = "var(--pst-color-surface, var(--jp-layout-color2, #f3f4f6))"
BORDER = "var(--pst-color-border, var(--jp-border-color1, #9aa3ad))"
BACKGROUND = "var(--pst-color-background, var(--jp-layout-color0, #ffffff))"

#: Semantic colours used across the book, mid-tone so they read on light and dark pages.
PALETTE = {
    "compute": "#e4572e",   # arithmetic, SMs, tensor cores
    "memory": "#2e86ab",    # HBM, DRAM, caches, bytes moving
    "queue": "#d99a00",     # waiting work, queues, schedulers
    "network": "#8a4fd3",   # links, collectives
    "host": "#3b9d5d",      # CPU, host code, storage
    "accent": "#c2367a",    # highlights, the thing the page is about
    "neutral": "#7d8590",
}


def esc(text: str) -> str:
    """Escape text for SVG content and attributes."""
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    """Compact, deterministic number formatting for coordinates."""
    if isinstance(x, int):
        return str(x)
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _attrs(**kw) -> str:
    parts = []
    for key, value in kw.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            value = _num(value)
        parts.append(f'{name}="{esc(value)}"')
    return " ".join(parts)


@dataclass
class Figure:
    """A finished SVG figure that displays itself in Jupyter and in the built book."""

    svg: str
    title: str
    animated: bool = False

    def _repr_html_(self) -> str:
        cls = "book-svg book-anim" if self.animated else "book-svg book-diagram"
        return f'<figure class="{cls}" style="margin:0.5em 0;max-width:100%">{self.svg}</figure>'

    def __repr__(self) -> str:  # stable text/plain output (nbval compares it)
        kind = "Animation" if self.animated else "Diagram"
        return f"{kind}: {self.title}"

    def save(self, path) -> None:
        """Write the SVG to ``path`` (a standalone file, e.g. for slides)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.svg)


@dataclass
class Canvas:
    """Accumulates SVG elements; coordinates are in user units of a ``width`` x ``height`` box.

    ``uid`` prefixes every id inside the figure, so several figures can share one page.
    """

    width: float
    height: float
    title: str
    uid: str
    description: str = ""
    _body: list[str] = field(default_factory=list)
    _defs: list[str] = field(default_factory=list)
    _animated: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", self.uid):
            raise ValueError(f"uid must be lowercase letters, digits and '-', got {self.uid!r}")
        if not (self.width > 0 and self.height > 0):
            raise ValueError(f"width and height must be > 0, got {self.width}x{self.height}")
        self._markers: set[str] = set()

    # -- ids ------------------------------------------------------------------------
    def id(self, name: str) -> str:
        return f"{self.uid}-{name}"

    # -- primitives -------------------------------------------------------------------
    def raw(self, text: str) -> None:
        self._body.append(text)

    def rect(self, x, y, w, h, *, fill="none", stroke=BORDER, stroke_width=1.5, rx=6,
             opacity=None, id=None, children: str = "", dash=None) -> None:
        attrs = _attrs(x=float(x), y=float(y), width=float(w), height=float(h), rx=float(rx),
                       fill=fill, stroke=stroke, stroke_width=float(stroke_width),
                       opacity=opacity, id=self.id(id) if id else None,
                       stroke_dasharray=dash)
        self._body.append(f"<rect {attrs}>{children}</rect>" if children else f"<rect {attrs}/>")

    def circle(self, cx, cy, r, *, fill=PALETTE["accent"], stroke="none", opacity=None,
               id=None, children: str = "") -> None:
        attrs = _attrs(cx=float(cx), cy=float(cy), r=float(r), fill=fill, stroke=stroke,
                       opacity=opacity, id=self.id(id) if id else None)
        self._body.append(f"<circle {attrs}>{children}</circle>" if children else f"<circle {attrs}/>")

    def text(self, x, y, content, *, size=13, anchor="middle", fill=TEXT, weight=None,
             italic=False, id=None, children: str = "", baseline="middle") -> None:
        attrs = _attrs(x=float(x), y=float(y), font_size=float(size), text_anchor=anchor,
                       fill=fill, font_weight=weight, font_style="italic" if italic else None,
                       dominant_baseline=baseline, id=self.id(id) if id else None)
        self._body.append(f"<text {attrs}>{esc(content)}{children}</text>")

    def _marker(self, color: str) -> str:
        key = re.sub(r"[^a-z0-9]", "", color.lower())[:24] or "c"
        mid = self.id(f"arrow-{key}")
        if mid not in self._markers:
            self._markers.add(mid)
            self._defs.append(
                f'<marker id="{mid}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                f'markerHeight="7" orient="auto-start-reverse">'
                f'<path d="M0,0 L10,5 L0,10 z" fill="{esc(color)}"/></marker>'
            )
        return mid

    def line(self, x1, y1, x2, y2, *, stroke=BORDER, width=1.5, dash=None, arrow=False,
             both=False, opacity=None, id=None) -> None:
        marker = self._marker(stroke) if (arrow or both) else None
        attrs = _attrs(x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2), stroke=stroke,
                       stroke_width=float(width), stroke_dasharray=dash, opacity=opacity,
                       marker_end=f"url(#{marker})" if marker else None,
                       marker_start=f"url(#{marker})" if both else None,
                       id=self.id(id) if id else None)
        self._body.append(f"<line {attrs}/>")

    def path(self, d: str, *, stroke=BORDER, width=1.5, fill="none", dash=None, arrow=False,
             id=None, opacity=None) -> None:
        marker = self._marker(stroke) if arrow else None
        attrs = _attrs(d=d, stroke=stroke, stroke_width=float(width), fill=fill,
                       stroke_dasharray=dash, marker_end=f"url(#{marker})" if marker else None,
                       id=self.id(id) if id else None, opacity=opacity)
        self._body.append(f"<path {attrs}/>")

    def box(self, x, y, w, h, label, *, color=PALETTE["neutral"], sublabel=None, size=13,
            fill_opacity=0.14, id=None) -> None:
        """A labelled box: tinted fill in ``color``, outline in ``color``, text in the theme.
        An empty ``label`` draws the box alone."""
        self._body.append(f'<g {_attrs(id=self.id(id) if id else None)}>')
        self.rect(x, y, w, h, fill=color, stroke="none", opacity=fill_opacity)
        self.rect(x, y, w, h, fill="none", stroke=color, stroke_width=1.8)
        if label and sublabel:
            self.text(x + w / 2, y + h / 2 - size * 0.55, label, size=size, weight="600")
            self.text(x + w / 2, y + h / 2 + size * 0.75, sublabel, size=size * 0.82, fill=MUTED)
        elif label:
            self.text(x + w / 2, y + h / 2, label, size=size, weight="600")
        self._body.append("</g>")

    # -- animation (SMIL) ----------------------------------------------------------------
    def moving_dot(self, path_d: str, *, dur_s: float, begin_s: float = 0.0, r: float = 5,
                   color=PALETTE["memory"], repeat=True) -> None:
        """A dot that travels along ``path_d`` every ``dur_s`` seconds."""
        self._animated = True
        rep = "indefinite" if repeat else "1"
        self._body.append(
            f'<circle r="{_num(float(r))}" fill="{esc(color)}" opacity="0">'
            f'<animateMotion path="{esc(path_d)}" dur="{_num(float(dur_s))}s" '
            f'begin="{_num(float(begin_s))}s" repeatCount="{rep}"/>'
            f'<animate attributeName="opacity" values="0;1;1;0" keyTimes="0;0.1;0.9;1" '
            f'dur="{_num(float(dur_s))}s" begin="{_num(float(begin_s))}s" repeatCount="{rep}"/>'
            f"</circle>"
        )

    @staticmethod
    def animate(attribute: str, values, *, dur_s: float, begin_s: float = 0.0,
                key_times=None, repeat=True, calc_mode: str | None = None) -> str:
        """An ``<animate>`` element to nest in a primitive via ``children=``."""
        vals = ";".join(_num(float(v)) if isinstance(v, (int, float)) else str(v) for v in values)
        kt = None
        if key_times is not None:
            kt = ";".join(_num(float(k)) for k in key_times)
        attrs = _attrs(attributeName=attribute, values=vals, keyTimes=kt,
                       dur=f"{_num(float(dur_s))}s", begin=f"{_num(float(begin_s))}s",
                       repeatCount="indefinite" if repeat else "1", calcMode=calc_mode,
                       fill="freeze" if not repeat else None)
        return f"<animate {attrs}/>"

    def mark_animated(self) -> None:
        self._animated = True

    # -- output -----------------------------------------------------------------------
    def figure(self) -> Figure:
        w, h = _num(float(self.width)), _num(float(self.height))
        desc = f"<desc>{esc(self.description)}</desc>" if self.description else ""
        click = ""
        if self._animated:
            click = (' onclick="this.animationsPaused()?this.unpauseAnimations():'
                     'this.pauseAnimations()" style="cursor:pointer;max-width:100%;height:auto"')
        else:
            click = ' style="max-width:100%;height:auto"'
        defs = f"<defs>{''.join(self._defs)}</defs>" if self._defs else ""
        svg = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
            f'height="{h}" role="img" aria-labelledby="{self.id("title")}" '
            f'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" '
            f'data-figure="{esc(self.uid)}"{click}>'
            f'<title id="{self.id("title")}">{esc(self.title)}</title>{desc}{defs}'
            + "".join(self._body)
            + "</svg>"
        )
        return Figure(svg=svg, title=self.title, animated=self._animated)


def arc_path(x1: float, y1: float, x2: float, y2: float, bend: float = 0.25) -> str:
    """A quadratic curve from (x1, y1) to (x2, y2), bent sideways by ``bend`` of its length."""
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    cx, cy = mx - dy / length * bend * length, my + dx / length * bend * length
    return f"M{_num(x1)},{_num(y1)} Q{_num(cx)},{_num(cy)} {_num(x2)},{_num(y2)}"
