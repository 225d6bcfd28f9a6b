"""The learning map's figures: deterministic, well-formed SVG, links and planned parts drawn apart."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from helpers.book_map import load_map
from helpers.figures import book_map as fig

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_stack_diagram_is_deterministic_and_well_formed():
    a, b = fig.stack_diagram(), fig.stack_diagram()
    assert a.svg == b.svg
    root = parse(a.svg)
    assert root.tag == f"{NS}svg"
    assert not a.animated
    text = "".join(t.text or "" for t in root.iter(f"{NS}text"))
    for key, layer in load_map()["layers"].items():
        assert f"{key}  {layer['name']}" in text


def test_serving_diagram_is_animated_and_labels_every_box():
    f = fig.serving_diagram()
    assert f.animated and "<animateMotion" in f.svg
    root = parse(f.svg)
    text = " ".join(t.text or "" for t in root.iter(f"{NS}text"))
    for box in load_map()["serving"]["boxes"].values():
        assert box["label"] in text


def test_planned_pages_are_dashed_and_not_links():
    # Every page is drawn once: as a link if it is in the toc, else as a dashed "(to come)" chip.
    svg = fig.stack_diagram(root=None, from_file="map").svg
    n_pages = len(load_map()["pages"])
    n_links = len(re.findall(r"<a href=", svg))
    n_dashed = svg.count("(to come)")
    assert n_links + n_dashed == n_pages


def test_links_are_relative_to_the_page_that_shows_the_figure():
    svg = fig.stack_diagram(from_file="appendix/formulas").svg
    links = re.findall(r'<a href="([^"]+)"', svg)
    assert "../chapters/gpu-architecture.html" in links
    assert "formulas.html" in links


def test_wrap_keeps_words_whole():
    lines = fig._wrap("memory model, concurrency primitives, asynchronous execution", 30)
    assert all(len(ln) <= 30 for ln in lines)
    assert " ".join(lines) == "memory model, concurrency primitives, asynchronous execution"
