"""Figures of the learning map: the six-layer stack with every page, and the serving system.

Both are generated from :mod:`helpers.book_map` (its YAML data and ``_toc.yml``). Written pages
are links (``<a href>`` to the built page, relative to the map page); planned pages are drawn
dashed and marked "(to come)".

Used by: map.md.
"""

from __future__ import annotations

from ..book_map import LAYERS, built_pages, href, is_written, load_map
from .svg import BORDER, MUTED, PALETTE, TEXT, Canvas, Figure, _num, esc

__all__ = ["stack_diagram", "serving_diagram", "LAYER_COLORS"]

#: One colour per layer, from the book's palette (bottom up).
LAYER_COLORS = {
    "L1": PALETTE["host"], "L2": PALETTE["neutral"], "L3": PALETTE["queue"],
    "L4": PALETTE["network"], "L5": PALETTE["compute"], "L6": PALETTE["accent"],
    "frame": PALETTE["memory"],
}

_CHAR_W = 7.0   # approximate advance of one character at font size 11 (user units)


def _chip(c: Canvas, x: float, y: float, w: float, h: float, text: str, color: str,
          link: str | None) -> None:
    """A page's chip: a link when the page exists, a dashed "(to come)" chip otherwise."""
    if link:
        c.raw(f'<a href="{esc(link)}"><title>{esc(text)}</title>')
        c.rect(x, y, w, h, fill=color, stroke="none", opacity=0.16, rx=4)
        c.rect(x, y, w, h, fill="none", stroke=color, stroke_width=1.4, rx=4)
        c.text(x + w / 2, y + h / 2, text, size=11, weight="600")
        c.raw("</a>")
    else:
        c.rect(x, y, w, h, fill="none", stroke=BORDER, stroke_width=1.1, rx=4, dash="4 3")
        c.text(x + w / 2, y + h / 2, text, size=11, fill=MUTED, italic=True)


def _wrap(text: str, width: int) -> list[str]:
    """Split ``text`` into lines of at most ``width`` characters at spaces."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


def _layout(items: list[tuple[str, str | None]], x0: float, width: float, gap: float = 6,
            measure=None):
    """Place chips in rows; return [(x, row, w, text, link)] and the number of rows.

    ``measure(text)`` gives a text's width (default: :data:`_CHAR_W` per character)."""
    placed, x, row = [], x0, 0
    for text, link in items:
        w = (measure(text) if measure else len(text) * _CHAR_W) + 20
        if x + w > x0 + width and x > x0:
            x, row = x0, row + 1
        placed.append((x, row, w, text, link))
        x += w + gap
    return placed, row + 1


def _chips_for(key: str, data: dict, toc: list[str], from_file: str):
    labels = [lb for lb, p in data["pages"].items() if p["layer"] == key]
    written = sorted((lb for lb in labels if is_written(lb, data, toc)),
                     key=lambda lb: toc.index(data["pages"][lb]["file"]))
    planned = [lb for lb in labels if not is_written(lb, data, toc)]
    items = [(data["pages"][lb]["short"], href(data["pages"][lb]["file"], from_file=from_file))
             for lb in written]
    items += [(data["pages"][lb]["short"] + " (to come)", None) for lb in planned]
    return items


def stack_diagram(root=None, *, from_file: str = "map") -> Figure:
    """The six layers, bottom up, each holding a linked chip for every page placed on it.

    >>> stack_diagram().title
    'The book on the six-layer stack'
    """
    data = load_map()
    toc = built_pages(root)
    width, label_w, row_h, pad = 980.0, 190.0, 26.0, 8.0
    bands = []
    for key in (*reversed(LAYERS), "frame"):
        chips, rows = _layout(_chips_for(key, data, toc, from_file), label_w + 12,
                              width - label_w - 24)
        bands.append((key, chips, max(max(rows, 1) * (row_h + 4) + 2 * pad, 62.0)))
    height = sum(h for _, _, h in bands) + 6 * len(bands) + 40
    c = Canvas(width, height, "The book on the six-layer stack", uid="map-stack",
               description="Every page of the book on the layer of the stack it teaches; "
                           "written pages are links, planned ones are dashed.")
    y = 8.0
    for key, chips, h in bands:
        color = LAYER_COLORS[key]
        if key == "frame":
            y += 10
            layer = data["frame"]
            name = layer["name"]
        else:
            layer = data["layers"][key]
            name = f"{key}  {layer['name']}"
        c.rect(4, y, width - 8, h, fill=color, stroke="none", opacity=0.06, rx=6)
        c.rect(4, y, width - 8, h, fill="none", stroke=color, stroke_width=1.2, rx=6)
        c.text(14, y + h / 2 - 10, name, size=13, anchor="start", weight="700", fill=color)
        for i, part in enumerate(_wrap(layer["scope"], 30)[:2]):
            c.text(14, y + h / 2 + 9 + 12 * i, part, size=9.5, anchor="start", fill=MUTED)
        for x, row, w, text, link in chips:
            _chip(c, x, y + pad + row * (row_h + 4), w, row_h, text, color, link)
        y += h + 6
    c.text(width / 2, y + 14, "Solid chips are pages you can open; dashed chips are planned.",
           size=11, fill=MUTED)
    return c.figure()


# Box positions of the serving diagram (x, y, w, h) in a 1050 x 420 canvas.
_BOXES = {
    "clients": (20, 70, 120, 62),
    "gateway": (230, 70, 140, 62),
    "api": (455, 70, 140, 62),
    "prefill": (680, 70, 140, 62),
    "decode": (680, 190, 140, 62),
    "kv": (895, 190, 125, 62),
    "gpus": (680, 310, 140, 62),
    "weights": (895, 310, 125, 62),
}


def _anchor(box: str, toward: str) -> tuple[float, float]:
    """The point on ``box``'s edge facing ``toward`` (centre of the nearer side)."""
    x, y, w, h = _BOXES[box]
    tx, ty, tw, th = _BOXES[toward]
    cx, cy, tcx, tcy = x + w / 2, y + h / 2, tx + tw / 2, ty + th / 2
    dx, dy = tcx - cx, tcy - cy
    if tx >= x + w or tx + tw <= x:     # side by side: leave from the facing side
        return (x + w if dx > 0 else x), cy
    return cx, (y + h if dy > 0 else y)


def serving_diagram(root=None, *, from_file: str = "map") -> Figure:
    """The serving system the book adds up to; each box and arrow links to its page.

    A request (dot) travels from the client through the gateway and API server to the workers
    and back as streamed tokens. The trust boundary and the failure domain are drawn dashed.

    >>> serving_diagram().animated
    True
    """
    data = load_map()
    toc = built_pages(root)
    serving = data["serving"]
    width, height = 1050.0, 420.0
    c = Canvas(width, height, "The serving system the book adds up to", uid="map-serving",
               description="Clients, gateway, API server, prefill and decode workers, KV-cache "
                           "store, weight store and GPU pool; each part links to its page.")

    def link_of(label: str) -> str | None:
        if is_written(label, data, toc):
            return href(data["pages"][label]["file"], from_file=from_file)
        return None

    # Boundaries first (behind everything).
    trust = serving["boundaries"]["trust"]
    fail = serving["boundaries"]["failure"]
    for spec, (x, y, w, h), color in ((trust, (200, 20, 840, 372), PALETTE["accent"]),
                                      (fail, (665, 42, 370, 342), PALETTE["compute"])):
        lk = link_of(spec["page"])
        tail = "" if lk else " (to come)"
        if lk:
            c.raw(f'<a href="{esc(lk)}">')
        c.rect(x, y, w, h, fill="none", stroke=color, stroke_width=1.4, dash="7 5", rx=10)
        c.text(x + 8, y + 11, spec["label"] + tail, size=11, anchor="start", fill=color,
               weight="600")
        if lk:
            c.raw("</a>")

    # Arrows with their labels.
    for arrow in serving["arrows"]:
        a, b = arrow["from"], arrow["to"]
        if (a, b) == ("decode", "clients"):
            x1, y1 = _BOXES["decode"][0], _BOXES["decode"][1] + 40
            x2, y2 = _BOXES["clients"][0] + 60, _BOXES["clients"][1] + 62
            d = f"M{_num(x1)},{_num(y1)} L{_num(x2)},{_num(y1)} L{_num(x2)},{_num(y2)}"
            lx, ly = (x1 + x2) / 2 + 60, y1 - 8
        else:
            (x1, y1), (x2, y2) = _anchor(a, b), _anchor(b, a)
            d = f"M{_num(x1)},{_num(y1)} L{_num(x2)},{_num(y2)}"
            lx, ly = (x1 + x2) / 2, (y1 + y2) / 2 - 8
            if abs(x2 - x1) < 1:        # vertical arrow: label to its side
                lx, ly = x1 + 8, (y1 + y2) / 2
        lk = link_of(arrow["page"])
        color = TEXT if lk else BORDER
        text = arrow["label"]
        if lk:
            c.raw(f'<a href="{esc(lk)}"><title>{esc(arrow["label"])}</title>')
        c.path(d, stroke=color, width=1.6, arrow=True, dash=None if lk else "5 4")
        anchor = "start" if abs(x2 - x1) < 1 else "middle"
        c.text(lx, ly, text, size=10, anchor=anchor, fill=color if lk else MUTED, italic=not lk)
        if lk:
            c.raw("</a>")

    # Boxes on top.
    for key, box in serving["boxes"].items():
        x, y, w, h = _BOXES[key]
        lk = link_of(box["page"])
        if lk:
            c.raw(f'<a href="{esc(lk)}"><title>{esc(box["label"])}</title>')
            c.box(x, y, w, h, box["label"], sublabel=box["sub"], color=PALETTE["memory"], size=13)
            c.raw("</a>")
        else:
            c.rect(x, y, w, h, fill="none", stroke=BORDER, stroke_width=1.4, dash="5 4")
            c.text(x + w / 2, y + h / 2 - 14, box["label"], size=13, weight="600", fill=MUTED)
            c.text(x + w / 2, y + h / 2 + 3, box["sub"], size=10, fill=MUTED, italic=True)
            c.text(x + w / 2, y + h / 2 + 18, "(to come)", size=10, fill=MUTED, italic=True)

    # One request travelling the path through the boxes' centres, its tokens streaming back.
    route = ["clients", "gateway", "api", "prefill", "decode"]
    pts = [(_BOXES[k][0] + _BOXES[k][2] / 2, _BOXES[k][1] + _BOXES[k][3] / 2) for k in route]
    back_y = _BOXES["decode"][1] + 40
    pts += [(_BOXES["decode"][0], back_y), (_BOXES["clients"][0] + 60, back_y), pts[0]]
    d = "M" + " L".join(f"{_num(float(x))},{_num(float(y))}" for x, y in pts)
    c.moving_dot(d, dur_s=7.0, r=6, color=PALETTE["accent"])
    c.text(width / 2, height - 4, "Solid parts link to the page that teaches them; dashed grey parts "
           "are pages to come. Click the figure to pause it.", size=10.5, fill=MUTED,
           baseline="auto")
    return c.figure()
