"""The learning map's data against the table of contents and the pages themselves."""

from __future__ import annotations

import re

import pytest

from helpers import book_map
from helpers.book_map import LAYERS, built_pages, href, is_written, load_map
from helpers.figures.book_map import serving_diagram, stack_diagram

from helpers.book import ROOT  # the repository root, computed once
DATA = load_map()
TOC = built_pages(ROOT)


def label_of(file: str) -> str | None:
    m = re.search(r"^\((sec-[a-z0-9-]+)\)=", (ROOT / f"{file}.md").read_text(), re.M)
    return m.group(1) if m else None


def referenced_labels() -> list[tuple[str, str]]:
    """(where, label) for every page the diagram, boundaries and reading orders name."""
    s = DATA["serving"]
    out = [(f"box {k}", b["page"]) for k, b in s["boxes"].items()]
    out += [(f"arrow {a['from']}->{a['to']}", a["page"]) for a in s["arrows"]]
    out += [(f"boundary {k}", b["page"]) for k, b in s["boundaries"].items()]
    for key, order in DATA["reading_orders"].items():
        out += [(f"reading order {key}", lb) for lb in order["pages"]]
    return out


def test_every_toc_page_is_on_the_map():
    on_map = {p["file"] for p in DATA["pages"].values()}
    missing = [f for f in TOC if f not in on_map]
    assert not missing, f"pages in _toc.yml missing from src/helpers/book_map.yml: {missing}"


def test_written_pages_carry_the_label_the_map_uses():
    wrong = {lb: label_of(p["file"]) for lb, p in DATA["pages"].items()
             if p["file"] in TOC and label_of(p["file"]) != lb}
    assert not wrong, f"map label -> the page's actual label: {wrong}"


def test_planned_pages_are_not_yet_files():
    # A planned page that now exists on disk but is not in the toc would be a stray page.
    stray = [p["file"] for p in DATA["pages"].values()
             if p["file"] not in TOC and (ROOT / f"{p['file']}.md").exists()]
    assert not stray, f"pages on disk but not in _toc.yml: {stray}"


def test_every_page_has_a_layer_and_a_description():
    valid = {*LAYERS, "frame"}
    bad = [lb for lb, p in DATA["pages"].items()
           if p.get("layer") not in valid or not p.get("desc") or not p.get("short")]
    assert not bad, f"pages without a valid layer, short title or description: {bad}"
    labels = list(DATA["pages"])
    assert len(set(labels)) == len(labels)
    files = [p["file"] for p in DATA["pages"].values()]
    assert len(set(files)) == len(files), "two map entries name the same file"


def test_every_referenced_page_is_on_the_map():
    unknown = [(where, lb) for where, lb in referenced_labels() if lb not in DATA["pages"]]
    assert not unknown, f"labels that are not pages of the map: {unknown}"


def test_serving_diagram_has_the_parts_the_plan_names():
    boxes = set(DATA["serving"]["boxes"])
    assert boxes == {"clients", "gateway", "api", "prefill", "decode", "kv", "weights", "gpus"}
    for a in DATA["serving"]["arrows"]:
        assert a["from"] in boxes and a["to"] in boxes, a
    assert set(DATA["serving"]["boundaries"]) == {"trust", "failure"}


def test_three_reading_orders_each_with_written_pages():
    orders = DATA["reading_orders"]
    assert len(orders) == 3
    for key, order in orders.items():
        assert len(set(order["pages"])) == len(order["pages"]), f"{key} repeats a page"
        assert any(is_written(lb, DATA, TOC) for lb in order["pages"]), key


def _hrefs(svg: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)"', svg)


@pytest.mark.parametrize("figure", [stack_diagram, serving_diagram], ids=lambda f: f.__name__)
def test_figure_links_resolve_to_pages_the_toc_builds(figure):
    links = _hrefs(figure(ROOT).svg)
    assert links, "the figure links to no page"
    targets = {href(f) for f in TOC}
    dead = [h for h in links if h not in targets]
    assert not dead, f"links to pages the book does not build: {dead}"
    built = ROOT / "_build" / "html"
    page = built / "map.html"
    if page.exists() and page.stat().st_mtime > (ROOT / "_toc.yml").stat().st_mtime:
        # a build newer than the toc: the linked files must be there too
        missing = [h for h in links if not (built / h).exists()]
        assert not missing, f"links to files absent from _build/html: {missing}"


def test_every_written_page_is_linked_from_the_stack():
    links = set(_hrefs(stack_diagram(ROOT).svg))
    unlinked = [f for f in TOC if href(f) not in links]
    assert not unlinked, f"pages the stack diagram does not link: {unlinked}"


def test_markdown_links_every_written_page_and_none_to_come():
    text = book_map.layers_markdown(ROOT).text
    refs = set(re.findall(r"\{ref\}`[^`<]*<(sec-[a-z0-9-]+)>`", text))
    written = {lb for lb in DATA["pages"] if is_written(lb, DATA, TOC)}
    assert refs == written
    planned = [p["short"] for lb, p in DATA["pages"].items() if lb not in written]
    for short in planned:
        assert f"{short} *(to come)*" in text


def test_a_planned_page_becomes_a_link_once_it_is_in_the_toc():
    # every page is written now: take one out of the toc to make it planned again
    label, page = next(iter(DATA["pages"].items()))
    without = [f for f in TOC if f != page["file"]]
    assert not is_written(label, DATA, without)
    assert is_written(label, DATA, without + [page["file"]])
    assert href(page["file"]).endswith(".html")
