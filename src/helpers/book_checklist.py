"""The optimization checklist by layer, generated from ``book_checklist.yml``.

Each item is a question to ask of a slow workload, what to measure or change, and the pages that
explain it, linked by label; a page not yet written is named and marked *(to come)*, exactly as
on the learning map (:mod:`helpers.book_map`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from .book_map import LAYERS, ROOT, Markdown, _item, built_pages, load_map

__all__ = ["CHECKLIST_PATH", "load_checklist", "checklist_markdown"]

CHECKLIST_PATH = Path(__file__).with_name("book_checklist.yml")


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_checklist(path: str | Path | None = None) -> dict:
    """``{layer: [{"q", "do", "pages"}, ...]}``, layers as in the map, checked for shape."""
    data = _load(str(path or CHECKLIST_PATH))
    labels = load_map()["pages"]
    for layer, items in data.items():
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r} in the checklist; the map has {LAYERS}")
        for item in items:
            if set(item) != {"q", "do", "pages"} or not item["pages"]:
                raise ValueError(f"checklist item needs q, do and pages: {item!r}")
            unknown = [p for p in item["pages"] if p not in labels]
            if unknown:
                raise ValueError(f"checklist item {item['q']!r} names pages not on the map: {unknown}")
    return data


def checklist_markdown(root: str | Path | None = None) -> Markdown:
    """The checklist as MyST markdown: one section per layer, top of the stack first."""
    items, data, toc = load_checklist(), load_map(), built_pages(root or ROOT)
    out = []
    for layer in reversed(LAYERS):
        if layer not in items:
            continue
        info = data["layers"][layer]
        out.append(f"## {layer}: {info['name']}\n\n*{info['scope']}*\n")
        for item in items[layer]:
            links = ", ".join(_item(p, data, toc) for p in item["pages"])
            out.append(f"- **{item['q']}** {item['do']} ({links})")
        out.append("")
    return Markdown("\n".join(out))
