"""The learning map as data: every page's layer and summary, the serving system, reading orders,
the chapters of the two source books each page follows, and what the book leaves out.

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
           "layers_markdown", "reading_orders_markdown", "not_covered_markdown", "Markdown",
           "validate_map", "page_sources", "chapter_pages", "chapter_name",
           "sources_markdown", "chapters_markdown"]

DATA_PATH = Path(__file__).with_name("book_map.yml")
#: Layers bottom up, then the frame (front matter and reference pages).
LAYERS = ("L1", "L2", "L3", "L4", "L5", "L6")


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    import yaml

    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_map(path: str | Path | None = None) -> dict:
    """The map's data (``book_map.yml`` unless ``path`` is given), as nested dicts.

    The data is checked by :func:`validate_map` first, so a page that names an unknown source
    chapter fails here, for every page that draws on the map.
    """
    data = _load(str(path or DATA_PATH))
    validate_map(data)
    return data


def validate_map(data: dict) -> None:
    """Raise ``ValueError`` naming the first bad entry of the sources and the not-covered list.

    Each page has a ``sources`` list of keys of ``source_chapters``; an empty list needs a
    ``reason``. Each chapter names a book of ``source_books``. Each not-covered entry has a
    ``topic``, a ``why`` and a non-empty ``read``, whose items are chapter keys or ``{doc, url}``.

    >>> data = {"source_books": {"b": {"short": "B", "title": "T", "author": "A"}},
    ...         "source_chapters": {"b-1": {"book": "b", "number": 1, "title": "One"}},
    ...         "pages": {"sec-x": {"sources": ["b-1"]}}, "not_covered": []}
    >>> validate_map(data)
    >>> data["pages"]["sec-x"]["sources"] = ["b-2"]
    >>> validate_map(data)
    Traceback (most recent call last):
    ...
    ValueError: page sec-x: unknown source chapter 'b-2' (not in source_chapters)
    """
    books, chapters = data.get("source_books", {}), data.get("source_chapters", {})
    for key, ch in chapters.items():
        if ch.get("book") not in books:
            raise ValueError(f"source chapter {key}: unknown book {ch.get('book')!r} (not in source_books)")
        if not ch.get("title") or ch.get("number") in (None, ""):
            raise ValueError(f"source chapter {key}: needs a number and a title")
    for label, page in data.get("pages", {}).items():
        if "sources" not in page:
            raise ValueError(f"page {label}: no sources list (give the chapters it follows, or [] and a reason)")
        srcs = page["sources"]
        if not isinstance(srcs, list):
            raise ValueError(f"page {label}: sources must be a list, got {srcs!r}")
        for key in srcs:
            if key not in chapters:
                raise ValueError(f"page {label}: unknown source chapter {key!r} (not in source_chapters)")
        if len(set(srcs)) != len(srcs):
            raise ValueError(f"page {label}: a source chapter is listed twice in {srcs}")
        if not srcs and not page.get("reason"):
            raise ValueError(f"page {label}: sources is empty and there is no reason")
    for i, item in enumerate(data.get("not_covered", [])):
        name = item.get("topic") if isinstance(item, dict) else None
        if not name or not item.get("why") or not item.get("read"):
            raise ValueError(f"not_covered entry {i} ({name!r}): needs a topic, a why and a read list")
        for r in item["read"]:
            if isinstance(r, str):
                if r not in chapters:
                    raise ValueError(f"not_covered {name!r}: unknown source chapter {r!r} (not in source_chapters)")
            elif not isinstance(r, dict) or not r.get("doc"):
                raise ValueError(f"not_covered {name!r}: a read item must be a chapter key or {{doc, url}}, got {r!r}")


def page_sources(data: dict | None = None) -> dict[str, list[str]]:
    """Each page's label -> the keys of the source chapters it follows (empty if it follows none)."""
    data = data or load_map()
    return {label: list(page["sources"]) for label, page in data["pages"].items()}


def chapter_pages(data: dict | None = None) -> dict[str, list[str]]:
    """Each source chapter's key -> the labels of the pages that follow it (the reverse of
    :func:`page_sources`), chapters in book order; a chapter no page follows maps to ``[]``.

    >>> data = {"source_chapters": {"b-1": {}, "b-2": {}},
    ...         "pages": {"sec-x": {"sources": ["b-2"]}, "sec-y": {"sources": ["b-2"]}}}
    >>> chapter_pages(data)
    {'b-1': [], 'b-2': ['sec-x', 'sec-y']}
    """
    data = data or load_map()
    out: dict[str, list[str]] = {key: [] for key in data["source_chapters"]}
    for label, page in data["pages"].items():
        for key in page["sources"]:
            out[key].append(label)
    return out


def chapter_name(key: str, data: dict | None = None) -> str:
    """A source chapter as the map prints it: the book's short name and the chapter's number.

    >>> chapter_name("fregly-15")
    'Fregly Ch 15'
    >>> chapter_name("alpe-a")
    'Rubinovich Appendix A'
    """
    data = data or load_map()
    ch = data["source_chapters"][key]
    short = data["source_books"][ch["book"]]["short"]
    number = ch["number"]
    return f"{short} Ch {number}" if isinstance(number, int) else f"{short} {number}"


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


def _pages_in_order(data: dict, toc: list[str]) -> list[str]:
    """Page labels in reading order: written pages as the toc orders them, then planned ones."""
    return sorted(data["pages"], key=lambda lb: (not is_written(lb, data, toc),
                  toc.index(data["pages"][lb]["file"]) if is_written(lb, data, toc) else 0))


def sources_markdown(root: str | Path | None = None, data: dict | None = None) -> Markdown:
    """A table: each page, in reading order, and the source chapters it follows (or why none)."""
    data = data or load_map()
    toc = built_pages(root)
    out = ["| Page | Follows |", "|---|---|"]
    for lb in _pages_in_order(data, toc):
        srcs = data["pages"][lb]["sources"]
        follows = (", ".join(chapter_name(k, data) for k in srcs) if srcs
                   else f"*no chapter:* {data['pages'][lb]['reason']}")
        out.append(f"| {_item(lb, data, toc)} | {follows} |")
    return Markdown("\n".join(out) + "\n")


def chapters_markdown(root: str | Path | None = None, data: dict | None = None) -> Markdown:
    """One table per source book: each chapter and the pages that follow it, or that none does."""
    data = data or load_map()
    toc = built_pages(root)
    order = {lb: i for i, lb in enumerate(_pages_in_order(data, toc))}
    reverse = chapter_pages(data)
    out = []
    for book_key, book in data["source_books"].items():
        out += [f"**{book['author']}, *{book['title']}***\n", "| Chapter | Topic | Pages that follow it |",
                "|---|---|---|"]
        for key, ch in data["source_chapters"].items():
            if ch["book"] != book_key:
                continue
            pages = sorted(reverse[key], key=order.__getitem__)
            cell = ", ".join(_item(lb, data, toc) for lb in pages) if pages else "*no page follows it*"
            out.append(f"| {chapter_name(key, data)} | {ch['title']} | {cell} |")
        out.append("")
    return Markdown("\n".join(out))


def _read(r: str | dict, data: dict) -> str:
    if isinstance(r, str):
        return f"{chapter_name(r, data)} ({data['source_chapters'][r]['title']})"
    return f"[{r['doc']}]({r['url']})" if r.get("url") else r["doc"]


def not_covered_markdown(data: dict | None = None) -> Markdown:
    """What the book deliberately leaves out, as a bulleted list: the topic, why, where to read."""
    data = data or load_map()
    out = [f"- **{item['topic']}.** {item['why']} *Read instead:* "
           f"{'; '.join(_read(r, data) for r in item['read'])}." for item in data["not_covered"]]
    return Markdown("\n".join(out) + "\n")
