"""The control-ownership diagram: the layers of software that own a setting, each with its settings.

Generated from :mod:`helpers.book_controls` (``book_controls.yml``). Each setting is a chip that
links to its layer's section of the appendix page; beside each layer, who may change its settings
and how far one change reaches.

Used by: appendix/control-ownership.md.
"""

from __future__ import annotations

from ..book_controls import SCOPE_LABELS, SCOPES, anchor, by_layer, load_controls
from .book_map import _chip, _layout, _wrap
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["layers_diagram", "LAYER_COLORS"]

#: One colour per owning layer, from the book's palette.
LAYER_COLORS = {
    "engine": PALETTE["accent"], "pytorch": PALETTE["compute"], "nccl": PALETTE["network"],
    "cuda": PALETTE["queue"], "driver": PALETTE["memory"], "network": PALETTE["network"],
    "container": PALETTE["host"], "os": PALETTE["neutral"],
}


def _text_w(text: str) -> float:
    """Approximate width of ``text`` in bold 11-point type: capitals are wider than the rest."""
    return sum(8.3 if ch.isupper() or ch.isdigit() or ch == "_" else
               3.6 if ch == " " else 4.4 if ch in ".,:()-=" else 7.0 for ch in text)


def layers_diagram() -> Figure:
    """The owning layers, top of the stack first, each holding a chip for every setting it owns.

    >>> layers_diagram().title
    'Who owns each setting'
    """
    data = load_controls()
    groups = by_layer(data)
    width, label_w, row_h, pad = 980.0, 236.0, 26.0, 8.0
    bands = []
    for key, settings in groups.items():
        items = [(s["name"], "#" + anchor(data["layers"][key]["name"])) for s in settings]
        chips, rows = _layout(items, label_w + 12, width - label_w - 24, measure=_text_w)
        bands.append((key, settings, chips, max(rows * (row_h + 4) + 2 * pad, 70.0)))
    height = sum(h for *_, h in bands) + 6 * len(bands) + 44
    c = Canvas(width, height, "Who owns each setting", uid="ctl-layers",
               description=f"{len(bands)} layers of software, from the serving engine at the "
                           "top to the network stack, the container runtime and the operating "
                           "system at the bottom; each holds the settings it owns, with who may "
                           "change them and how far a change reaches.")
    y = 8.0
    for key, settings, chips, h in bands:
        color, layer = LAYER_COLORS[key], data["layers"][key]
        scopes = {s["scope"] for s in settings}
        reach = ", ".join(SCOPE_LABELS[sc] for sc in SCOPES if sc in scopes)
        c.rect(4, y, width - 8, h, fill=color, stroke="none", opacity=0.06, rx=6)
        c.rect(4, y, width - 8, h, fill="none", stroke=color, stroke_width=1.2, rx=6)
        c.text(14, y + 16, layer["name"], size=13, anchor="start", weight="700", fill=color)
        lines = _wrap(f"set by {layer['who']}", 38)[:2] + [f"reach: {reach}"]
        for i, part in enumerate(lines):
            c.text(14, y + 34 + 12 * i, part, size=9.5, anchor="start", fill=MUTED)
        for x, row, w, text, link in chips:
            _chip(c, x, y + pad + row * (row_h + 4), w, row_h, text, color, link)
        y += h + 6
    c.text(width / 2, y + 10, "Top: set per program by its author. Bottom: set per machine, "
           "often only by root. Each chip links to its layer's section.", size=11, fill=MUTED)
    fig = c.figure()
    # Chips link within the page; an underline would hide the underscores of their names.
    return Figure(svg=fig.svg.replace('<a href="#', '<a style="text-decoration:none" href="#'),
                  title=fig.title, animated=fig.animated)
