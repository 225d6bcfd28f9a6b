"""The book's structure as data: the pages of ``_toc.yml``, in order.

Used by the tooling (``tools/nb_refs.py``), the book's hygiene tests and the browser tests, so
all of them agree on what the book's pages are.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["toc_entries", "page_sources", "notebook_pages", "is_notebook"]


def toc_entries(root: str | Path) -> list[str]:
    """Every ``file`` of ``<root>/_toc.yml`` (the root page first), in reading order."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", []))
    walk(toc.get("chapters", []))
    return found


def page_sources(root: str | Path) -> list[Path]:
    """The source file of every page in the table of contents (``.md`` unless given)."""
    root = Path(root)
    return [(root / e) if Path(e).suffix else (root / e).with_suffix(".md") for e in toc_entries(root)]


def is_notebook(page: Path) -> bool:
    """True if ``page`` is a MyST notebook (it declares a kernel) rather than plain text."""
    return page.exists() and "kernelspec:" in page.read_text(encoding="utf-8")[:2000]


def notebook_pages(root: str | Path) -> list[Path]:
    """The pages that execute: those of :func:`page_sources` that are notebooks."""
    return [p for p in page_sources(root) if is_notebook(p)]
