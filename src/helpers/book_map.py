"""The learning map as data: every page's layer and summary, the serving system, reading orders.

The data lives in ``book_map.yml`` next to this module; the map page (``map.md``) and its
figures (:mod:`helpers.figures.book_map`) are generated from it and from ``_toc.yml``. A page
whose file is in the table of contents is linked; a planned page is drawn "(to come)".

Used by: appendix/status.md, foundations/linux-for-inference.md, map.md.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache
from pathlib import Path

from .book import ROOT, toc_entries

__all__ = ["DATA_PATH", "ROOT", "LAYERS", "load_map", "built_pages", "href", "is_written",
           "layers_markdown", "reading_orders_markdown", "not_covered_markdown", "Markdown"]

DATA_PATH = Path(__file__).with_name("book_map.yml")
#: Layers bottom up, then the frame (front matter and reference pages).
LAYERS = ("L1", "L2", "L3", "L4", "L5", "L6")


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    import yaml

    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_map(path: str | Path | None = None) -> dict:
    """The map's data (``book_map.yml`` unless ``path`` is given), as nested dicts."""
    return _load(str(path or DATA_PATH))


def built_pages(root: str | Path | None = None) -> list[str]:
    """The files of ``_toc.yml`` (without suffix), in reading order: the pages that exist."""
    return [str(Path(e).with_suffix("")) for e in toc_entries(root or ROOT)]


def href(file: str, *, from_file: str = "map") -> str:
    """Link from the built page ``from_file`` to the built page ``file`` (both toc paths).

    >>> href("chapters/gpu-architecture")
    'chapters/gpu-architecture.html'
    >>> href("intro", from_file="appendix/formulas")
    '../intro.html'
    """
    start = posixpath.dirname(from_file) or "."
    return posixpath.relpath(file, start) + ".html"


def is_written(label: str, data: dict, toc: list[str]) -> bool:
    """True if the page ``label`` is in the table of contents (so it can be linked)."""
    return data["pages"][label]["file"] in toc


class Markdown:
    """Markdown that the book renders (as MyST when the cell asks for it) and nbval compares."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def _item(label: str, data: dict, toc: list[str]) -> str:
    page = data["pages"][label]
    if is_written(label, data, toc):
        return f"{{ref}}`{page['short']} <{label}>`"
    return f"{page['short']} *(to come)*"


def layers_markdown(root: str | Path | None = None, data: dict | None = None) -> Markdown:
    """Every page on its layer, top layer first, as MyST markdown with ``{ref}`` links."""
    data = data or load_map()
    toc = built_pages(root)
    out = []
    for key in (*reversed(LAYERS), "frame"):
        layer = data["frame"] if key == "frame" else data["layers"][key]
        title = layer["name"] if key == "frame" else f"{key} {layer['name']}"
        out.append(f"**{title}** ({layer['scope']})\n")
        labels = [lb for lb, p in data["pages"].items() if p["layer"] == key]
        labels.sort(key=lambda lb: (not is_written(lb, data, toc),
                                    toc.index(data["pages"][lb]["file"]) if is_written(lb, data, toc) else 0))
        for lb in labels:
            out.append(f"- {_item(lb, data, toc)}: {data['pages'][lb]['desc']}")
        out.append("")
    return Markdown("\n".join(out))


def reading_orders_markdown(root: str | Path | None = None, data: dict | None = None) -> Markdown:
    """The three reading orders as numbered MyST lists with ``{ref}`` links."""
    data = data or load_map()
    toc = built_pages(root)
    out = []
    for order in data["reading_orders"].values():
        out.append(f"**{order['title']}.** {order['why']}\n")
        out += [f"{i}. {_item(lb, data, toc)}" for i, lb in enumerate(order["pages"], 1)]
        out.append("")
    return Markdown("\n".join(out))


def not_covered_markdown(data: dict | None = None) -> Markdown:
    """What the book deliberately leaves out, as a bulleted list."""
    data = data or load_map()
    return Markdown("\n".join(f"- {item}" for item in data["not_covered"]) + "\n")
