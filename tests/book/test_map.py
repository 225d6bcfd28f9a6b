"""The learning map's data against the table of contents, the pages themselves and the source books."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from helpers import book_map
from helpers.book_map import (LAYERS, built_pages, chapter_name, chapter_pages, chapters_markdown, href,
                              is_written, load_map, not_covered_markdown, page_sources, sources_markdown,
                              validate_map)
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


# --- the source books: page -> chapters, chapter -> pages, and what is not covered ---


def test_the_shipped_map_validates_and_every_page_has_sources_or_a_reason():
    validate_map(DATA)
    for label, page in DATA["pages"].items():
        assert "sources" in page, label
        assert page["sources"] or page.get("reason"), f"{label}: sources: [] needs a reason"
    assert set(DATA["source_books"]) == {"fregly", "alpe"}
    assert sum(bool(s) for s in page_sources(DATA).values()) > len(DATA["pages"]) // 2


def _bad(mutate):
    data = copy.deepcopy(DATA)
    mutate(data)
    return data


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["pages"]["sec-gemm"]["sources"].append("fregly-99"), "fregly-99"),
    (lambda d: d["pages"]["sec-gemm"].pop("sources"), "sec-gemm"),
    (lambda d: d["pages"]["sec-notation"].pop("reason"), "sec-notation"),
    (lambda d: d["pages"]["sec-gemm"].update(sources="fregly-9"), "sec-gemm"),
    (lambda d: d["source_chapters"]["fregly-2"].update(book="knuth"), "knuth"),
    (lambda d: d["not_covered"][0]["read"].append("petrov-9"), "petrov-9"),
    (lambda d: d["not_covered"][0].pop("why"), "AMD ROCm"),
], ids=["unknown-chapter", "no-sources", "empty-without-reason", "not-a-list", "unknown-book",
        "unknown-read-key", "no-why"])
def test_bad_sources_raise_a_value_error_naming_the_entry(mutate, needle):
    data = _bad(mutate)
    with pytest.raises(ValueError, match=re.escape(needle)):
        validate_map(data)


def test_load_map_rejects_a_file_with_an_unknown_source_key(tmp_path):
    data = _bad(lambda d: d["pages"]["sec-intro"]["sources"].append("nobody-1"))
    path = tmp_path / "map.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match="sec-intro.*nobody-1"):
        load_map(path)


def test_the_chapter_table_is_the_page_table_turned_around():
    forward, reverse = page_sources(DATA), chapter_pages(DATA)
    assert set(reverse) == set(DATA["source_chapters"])
    pairs = {(lb, k) for lb, ks in forward.items() for k in ks}
    assert pairs == {(lb, k) for k, lbs in reverse.items() for lb in lbs}


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]


def _label(cell: str) -> set[str]:
    return set(re.findall(r"<(sec-[a-z0-9-]+)>`", cell)) | {
        lb for lb, p in DATA["pages"].items() if f"{p['short']} *(to come)*" in cell}


def test_the_rendered_tables_agree_with_each_other():
    # Read both rendered tables back and check that each is the reverse of the other.
    names = {chapter_name(k, DATA): k for k in DATA["source_chapters"]}
    forward = set()
    rows = _rows(sources_markdown(ROOT, DATA).text)[1:]
    assert len(rows) == len(DATA["pages"])
    for page, follows in rows:
        (lb,) = _label(page)
        if follows.startswith("*no chapter:*"):
            assert not DATA["pages"][lb]["sources"]
            continue
        forward |= {(lb, names[n.strip()]) for n in follows.split(",")}
    backward, unfollowed = set(), []
    for row in _rows(chapters_markdown(ROOT, DATA).text):
        if row[0] == "Chapter":
            continue
        key = names[row[0]]
        if row[2] == "*no page follows it*":
            unfollowed.append(key)
        backward |= {(lb, key) for lb in _label(row[2])}
    assert forward == backward and forward
    assert unfollowed == [k for k, lbs in chapter_pages(DATA).items() if not lbs]


def test_a_chapter_no_page_follows_is_shown_and_pointed_to():
    data = _bad(lambda d: [p["sources"].remove("alpe-12") for p in d["pages"].values()
                           if "alpe-12" in p["sources"]])
    assert chapter_pages(data)["alpe-12"] == []
    assert "| Rubinovich Ch 12 | GPU Communication | *no page follows it* |" in chapters_markdown(ROOT, data).text
    # every chapter of the shipped map that no page follows is named under "not covered"
    read = {r for item in DATA["not_covered"] for r in item["read"] if isinstance(r, str)}
    assert {k for k, lbs in chapter_pages(DATA).items() if not lbs} <= read


def test_not_covered_renders_every_entry_with_why_and_where_to_read():
    text = not_covered_markdown(DATA).text
    items = [ln for ln in text.splitlines() if ln.startswith("- ")]
    assert len(items) == len(DATA["not_covered"])
    for item, line in zip(DATA["not_covered"], items):
        assert f"**{item['topic']}.**" in line and item["why"] in line and "*Read instead:*" in line
    topics = " ".join(i["topic"] for i in DATA["not_covered"])
    for needed in ("ROCm", "MLIR", "Kubernetes operators", "RPC", "Failure detection",
                   "Replication", "consensus"):
        assert needed in topics, needed
    assert "Petrov, Database Internals, Ch 9" in text and "https://raft.github.io/" in text


def test_l4_promises_only_what_its_pages_teach():
    scope = DATA["layers"]["L4"]["scope"].lower()
    for untaught in ("rpc", "failure detection", "replication", "consensus"):
        assert untaught not in scope
    page = (ROOT / "map.md").read_text()
    assert "the book does not teach them" in page


def test_control_ownership_description_names_every_owning_layer():
    controls = yaml.safe_load((ROOT / "src" / "helpers" / "book_controls.yml").read_text())
    desc = DATA["pages"]["sec-control-ownership"]["desc"].lower()
    missing = [layer["name"] for layer in controls["layers"].values() if layer["name"].lower() not in desc]
    assert not missing, f"control ownership's map line omits: {missing}"
