"""Tests for the SVG writer behind the book's animations and structure diagrams."""

import xml.etree.ElementTree as ET

import pytest

from helpers.figures.svg import Canvas, Figure, PALETTE, arc_path

NS = "{http://www.w3.org/2000/svg}"


def _diagram():
    c = Canvas(300, 100, "Two boxes", uid="t-diag", description="A test diagram")
    c.box(10, 20, 80, 40, "HBM", color=PALETTE["memory"], sublabel="141 GB")
    c.box(200, 20, 80, 40, "SM", color=PALETTE["compute"])
    c.line(90, 40, 200, 40, arrow=True)
    return c


def test_output_is_well_formed_svg_with_title_and_viewbox():
    fig = _diagram().figure()
    root = ET.fromstring(fig.svg)
    assert root.tag == f"{NS}svg"
    assert root.get("viewBox") == "0 0 300 100"
    assert root.find(f"{NS}title").text == "Two boxes"
    assert root.get("role") == "img"
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert texts == ["HBM", "141 GB", "SM"]


def test_same_calls_give_the_same_bytes():
    # Determinism is what lets nbval compare figures like any other output.
    assert _diagram().figure().svg == _diagram().figure().svg


def test_ids_are_prefixed_so_figures_can_share_a_page():
    fig = _diagram().figure()
    ids = [el.get("id") for el in ET.fromstring(fig.svg).iter() if el.get("id")]
    assert ids and all(i.startswith("t-diag-") for i in ids)


def test_arrow_markers_are_defined_once_per_colour():
    c = Canvas(100, 100, "arrows", uid="t-arrows")
    for _ in range(3):
        c.line(0, 0, 50, 50, arrow=True)
    c.line(0, 0, 50, 50, arrow=True, stroke="#ff0000")
    root = ET.fromstring(c.figure().svg)
    assert len(list(root.iter(f"{NS}marker"))) == 2


def test_static_and_animated_figures():
    static = _diagram().figure()
    assert not static.animated and "<animate" not in static.svg
    assert repr(static) == "Diagram: Two boxes"
    c = _diagram()
    c.moving_dot("M0,0 L100,0", dur_s=2, begin_s=0.5)
    anim = c.figure()
    assert anim.animated and repr(anim) == "Animation: Two boxes"
    root = ET.fromstring(anim.svg)
    motion = next(root.iter(f"{NS}animateMotion"))
    assert motion.get("dur") == "2s" and motion.get("repeatCount") == "indefinite"
    assert "pauseAnimations" in root.get("onclick")   # click to pause/resume


def test_text_is_escaped():
    c = Canvas(100, 50, "a < b & c", uid="t-esc")
    c.text(10, 10, "<script>")
    fig = c.figure()
    assert "<script>" not in fig.svg
    assert ET.fromstring(fig.svg).find(f"{NS}title").text == "a < b & c"


def test_html_repr_wraps_in_a_figure_element():
    html = _diagram().figure()._repr_html_()
    assert html.startswith('<figure class="book-svg book-diagram"') and html.endswith("</figure>")


def test_theme_colours_use_css_variables_with_fallbacks():
    fig = _diagram().figure()
    assert "var(--pst-color-text-base" in fig.svg and "#1f2328" in fig.svg


def test_animate_element():
    el = Canvas.animate("opacity", [0, 1, 0], dur_s=1.5, key_times=[0, 0.5, 1])
    root = ET.fromstring(el)
    assert root.get("values") == "0;1;0" and root.get("dur") == "1.5s"
    assert root.get("keyTimes") == "0;0.5;1"


def test_arc_path_endpoints():
    d = arc_path(0, 0, 100, 0)
    assert d.startswith("M0,0 Q") and d.endswith(" 100,0")


@pytest.mark.parametrize("uid", ["Bad", "1abc", "a b", ""])
def test_bad_uid_rejected(uid):
    with pytest.raises(ValueError, match="uid"):
        Canvas(10, 10, "x", uid=uid)


def test_bad_size_rejected():
    with pytest.raises(ValueError, match="width and height"):
        Canvas(0, 10, "x", uid="ok")


def test_save(tmp_path):
    path = tmp_path / "d.svg"
    _diagram().figure().save(path)
    assert ET.parse(path).getroot().tag == f"{NS}svg"


def test_figure_is_a_dataclass_with_svg_text():
    fig = Figure(svg="<svg/>", title="t")
    assert fig.svg == "<svg/>" and not fig.animated
