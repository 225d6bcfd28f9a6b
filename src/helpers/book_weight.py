"""Page weight of the built site: what a reader's browser loads for one page on a first visit.

A page's weight is its HTML plus every local file the HTML references (scripts, style sheets,
images, icons, ...) and every file those style sheets reference in turn (the first source of
each ``@font-face``, which is what a browser that reads WOFF2 fetches, and background images),
each counted once per page however many times it is referenced: the cache is empty on a first
visit, and shared assets are paid again by every page that is someone's first. Sizes are bytes
on disk, before any HTTP compression, so the weight is an upper bound on what crosses the wire.
Files that scripts load later (MathJax's fonts, for instance) are not visible in the HTML and
are not counted; ``tests/site`` compares the estimate with what Chromium actually fetches.

Inside the HTML, the big parts are named separately: images embedded as ``data:`` URIs
(matplotlib's PNGs), the explorers' saved widget state, and inline SVG figures, so that the
report can say *why* a page is heavy.

Run ``python -m helpers.book_weight [_build/html]`` for the heaviest pages after a build.

Library only: no page imports it.
"""

from __future__ import annotations

import argparse
import gzip
import re
from functools import lru_cache
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .book import toc_entries
from .book_map import ROOT

__all__ = ["LESSON_LIMIT_BYTES", "COMPRESSIBLE", "PageWeight", "page_weight", "transfer_size",
           "site_weights", "report_markdown", "main"]

#: Issue 8: a lesson page weighs under 2 MB with its assets (decimal megabytes).
LESSON_LIMIT_BYTES = 2_000_000
#: Files a server that compresses responses sends gzipped; the rest (PNG, WOFF2) are compressed.
COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".xml", ".map", ".ttf"}

# (tag, attribute) pairs whose value names a file the browser fetches while loading the page.
_FETCHED = {("script", "src"), ("img", "src"), ("source", "src"), ("video", "src"),
            ("video", "poster"), ("audio", "src"), ("iframe", "src"), ("embed", "src"),
            ("object", "data"), ("input", "src"), ("image", "href"), ("image", "xlink:href")}
_LINK_RELS = {"stylesheet", "icon", "shortcut", "preload", "modulepreload", "apple-touch-icon"}
_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)""")
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)""")
_FONT_FACE = re.compile(r"@font-face\s*{([^}]*)}", re.S)
_DATA_URI = re.compile(r"""data:[\w/+.-]+(?:;[\w=-]+)*,[^"')\s]*""")
_WIDGET_STATE = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-state\+json">.*?</script>', re.S)
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)


@dataclass
class PageWeight:
    """The weight of one built page, in bytes, with what it is made of."""

    page: str                                     # path relative to the site root, e.g. a.html
    html_bytes: int                               # the HTML file itself, embedded parts included
    parts: dict[str, int] = field(default_factory=dict)    # named parts inside the HTML
    assets: dict[str, int] = field(default_factory=dict)   # local files fetched, by site path
    missing: list[str] = field(default_factory=list)       # referenced, not in the site
    external: list[str] = field(default_factory=list)      # references off the site
    from_css: set[str] = field(default_factory=set)        # assets a style sheet names (fetched
                                                           # only if an element uses them)

    transfer: dict[str, int] = field(default_factory=dict)  # gzip size, HTML and assets

    @property
    def total_bytes(self) -> int:
        """Bytes on disk: what a host that does not compress sends."""
        return self.html_bytes + sum(self.assets.values())

    @property
    def transfer_bytes(self) -> int:
        """Bytes on the wire from a host that gzips text (HTML, scripts, style sheets)."""
        return sum(self.transfer.values())

    def components(self) -> list[tuple[str, int]]:
        """Every part and asset with its size, heaviest first (the HTML's own markup included)."""
        markup = self.html_bytes - sum(self.parts.values())
        rows = [("HTML markup and text", markup)] + [(f"HTML: {k}", v) for k, v in self.parts.items()]
        rows += list(self.assets.items())
        return sorted(rows, key=lambda r: -r[1])

    def heaviest(self) -> tuple[str, int]:
        """The single component that weighs most."""
        return self.components()[0]


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: v for k, v in attrs if v is not None}
        for name, value in attrs.items():
            if (tag, name) in _FETCHED:
                self.refs.append(value)
        if tag == "source" and "srcset" in attrs:
            self.refs.extend(c.split()[0] for c in attrs["srcset"].split(",") if c.strip())
        if tag == "link" and "href" in attrs:
            rels = set((attrs.get("rel") or "").lower().split())
            if rels & _LINK_RELS:
                self.refs.append(attrs["href"])
        if "style" in attrs:
            self.styles.append(attrs["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def _css_refs(css: str) -> list[str]:
    """Files a style sheet makes the browser fetch: imports, first font source, images."""
    refs = [m.group(1) for m in _CSS_IMPORT.finditer(css)]
    fonts = set()
    for face in _FONT_FACE.finditer(css):
        urls = [m.group(2) for m in _CSS_URL.finditer(face.group(1))]
        fonts.update(urls)
        if urls:
            refs.append(urls[0])  # the browser stops at the first source it can use
    refs += [m.group(2) for m in _CSS_URL.finditer(css) if m.group(2) not in fonts]
    return [r for r in refs if not r.startswith("data:")]


@lru_cache(maxsize=4096)
def _gzip_size(path: Path, size: int, mtime_ns: int) -> int:
    if path.suffix.lower() not in COMPRESSIBLE:
        return size
    return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))


def transfer_size(path: str | Path) -> int:
    """Bytes a server that gzips text responses (level 6) sends for the file ``path``."""
    path = Path(path).resolve()
    st = path.stat()
    return _gzip_size(path, st.st_size, st.st_mtime_ns)


def _resolve(ref: str, base: Path, root: Path) -> tuple[str, Path | None]:
    """``("local"|"external"|"skip", path)`` of a reference made from file ``base``."""
    ref = ref.strip()
    if not ref or ref.startswith(("data:", "#", "javascript:", "about:", "blob:")):
        return "skip", None
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc:
        return "external", None
    path = unquote(parts.path)
    target = (root / path.lstrip("/")) if path.startswith("/") else (base.parent / path)
    return "local", Path(target).resolve()


def page_weight(html: str | Path, root: str | Path) -> PageWeight:
    """The weight of the built page ``html`` in the site ``root`` (both paths on disk).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "s.css").write_text("@font-face{src:url(f.woff2),url(f.ttf)} a{background:url(i.png)}")
    >>> for name, size in [("f.woff2", 100), ("f.ttf", 300), ("i.png", 10), ("a.js", 50)]:
    ...     _ = (d / name).write_bytes(b"x" * size)
    >>> _ = (d / "p.html").write_text('<link rel="stylesheet" href="s.css?v=1"><script src="a.js">'
    ...     '</script><script src="a.js"></script><img src="data:image/png;base64,AAAA">')
    >>> w = page_weight(d / "p.html", d)
    >>> sorted(w.assets.items()), w.parts["embedded images"]
    ([('a.js', 50), ('f.woff2', 100), ('i.png', 10), ('s.css', 64)], 26)
    >>> w.total_bytes == w.html_bytes + 224
    True
    """
    root, html = Path(root).resolve(), Path(html).resolve()
    if not html.is_file():
        raise ValueError(f"no built page at {html}")
    text = html.read_text(encoding="utf-8", errors="replace")
    weight = PageWeight(page=html.relative_to(root).as_posix(), html_bytes=html.stat().st_size)
    weight.transfer[weight.page] = transfer_size(html)

    state = sum(len(m.group(0).encode()) for m in _WIDGET_STATE.finditer(text))
    without_state = _WIDGET_STATE.sub("", text)
    images = sum(len(m.group(0).encode()) for m in _DATA_URI.finditer(without_state))
    svg = sum(len(m.group(0).encode()) for m in _SVG.finditer(_DATA_URI.sub("", without_state)))
    for name, size in (("widget state", state), ("embedded images", images), ("inline SVG", svg)):
        if size:
            weight.parts[name] = size

    parser = _Refs()
    parser.feed(text)
    queue = [(ref, html) for ref in parser.refs]
    queue += [(ref, html) for style in parser.styles for ref in _css_refs(style)]
    seen: set[Path] = set()
    while queue:
        ref, base = queue.pop(0)
        kind, target = _resolve(ref, base, root)
        if kind == "external":
            weight.external.append(ref)
        if kind != "local" or target in seen:
            continue
        seen.add(target)
        if not target.is_file():
            weight.missing.append(ref)
            continue
        key = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
        weight.assets[key] = target.stat().st_size
        weight.transfer[key] = transfer_size(target)
        if base.suffix == ".css":
            weight.from_css.add(key)
        if target.suffix == ".css":
            css = target.read_text(encoding="utf-8", errors="replace")
            queue += [(r, target) for r in _css_refs(css)]
    return weight


def site_weights(html_root: str | Path | None = None, pages: list[str] | None = None,
                 book_root: str | Path | None = None) -> list[PageWeight]:
    """Weights of ``pages`` (``.html`` paths; default: every page of the table of contents),
    heaviest first."""
    html_root = Path(html_root or Path(book_root or ROOT) / "_build" / "html")
    if not (html_root / "index.html").is_file():
        raise ValueError(f"no built site at {html_root}: build the book first (tools/build-book)")
    if pages is None:
        pages = [f"{e}.html" for e in toc_entries(book_root or ROOT)]
    weights = [page_weight(html_root / p, html_root) for p in pages]
    return sorted(weights, key=lambda w: -w.total_bytes)


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def report_markdown(weights: list[PageWeight], top: int = 10) -> str:
    """A markdown table of the ``top`` heaviest pages, each with its heaviest component."""
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    lines = ["| page | gzipped | on disk | HTML | heaviest part | its size |",
             "|---|---:|---:|---:|---|---:|"]
    for w in weights[:top]:
        name, size = w.heaviest()
        lines.append(f"| {w.page} | {_mb(w.transfer_bytes)} | {_mb(w.total_bytes)} | "
                     f"{_mb(w.html_bytes)} | {name} | {_mb(size)} |")
    shared = {}
    for w in weights:
        for asset, size in w.assets.items():
            shared.setdefault(asset, [size, 0])[1] += 1
    common = sorted(((a, s) for a, (s, n) in shared.items() if n == len(weights)), key=lambda r: -r[1])
    base = sum(s for _, s in common)
    lines.append("")
    gz = sorted(w.transfer_bytes for w in weights)
    lines.append(f"{len(weights)} pages; the heaviest weighs {_mb(weights[0].total_bytes)} on disk "
                 f"and {_mb(weights[0].transfer_bytes)} gzipped, the median "
                 f"{_mb(sorted(w.total_bytes for w in weights)[len(weights) // 2])} and "
                 f"{_mb(gz[len(gz) // 2])}. "
                 f"Every page loads the same {len(common)} theme and vendored files "
                 f"({_mb(base)}; the largest: "
                 + ", ".join(f"{a} {_mb(s)}" for a, s in common[:3]) + ").")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("html_root", nargs="?", default=None, help="the built site (_build/html)")
    parser.add_argument("--top", type=int, default=10, help="how many pages to list")
    parser.add_argument("--book", default=None, help="the book whose _toc.yml lists the pages")
    args = parser.parse_args(argv)
    weights = site_weights(args.html_root, book_root=args.book)
    print(report_markdown(weights, args.top))
    for w in weights:
        if w.transfer_bytes > LESSON_LIMIT_BYTES:
            print(f"over {_mb(LESSON_LIMIT_BYTES)} gzipped: {w.page} ({_mb(w.transfer_bytes)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
