"""Tests of helpers.figures.control_ownership: one band per layer, one linked chip per setting.
(Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

from helpers import book_controls
from helpers.figures import control_ownership as fig

SVG_NS = "{http://www.w3.org/2000/svg}"


def test_every_setting_is_a_chip_linking_to_its_layers_section():
    data = book_controls.load_controls()
    svg = fig.layers_diagram().svg
    root = ET.fromstring(svg)
    links = root.findall(f".//{SVG_NS}a")
    assert len(links) == len(data["settings"])
    titles = [a.find(f"{SVG_NS}title").text for a in links]
    assert titles == [s["name"] for layer in book_controls.by_layer(data).values() for s in layer]
    anchors = {"#" + book_controls.anchor(layer["name"]) for layer in data["layers"].values()}
    assert {a.get("href") for a in links} == anchors
    for layer in data["layers"].values():
        assert f">{layer['name']}<" in svg
    assert not fig.layers_diagram().animated


def test_chips_do_not_overlap_and_stay_inside_the_figure():
    root = ET.fromstring(fig.layers_diagram().svg)
    width = float(root.get("viewBox").split()[2])
    boxes = []
    for a in root.findall(f".//{SVG_NS}a"):
        r = a.find(f"{SVG_NS}rect")
        x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
        boxes.append((x, y, w, h))
        assert x + w <= width - 8
        # the chip is wide enough for its text at the estimated advance
        assert w >= fig._text_w(a.find(f"{SVG_NS}title").text) + 19
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1:]:
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1


def test_text_width_estimate_is_wider_for_capitals():
    assert fig._text_w("NCCL_ALGO") > fig._text_w("nccl_algo") > fig._text_w("nccl.algo")
    assert fig._text_w("") == 0
