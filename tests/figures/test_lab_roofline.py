"""Tests of helpers.figures.lab_roofline: valid, deterministic SVG whose numbers come from the
specs and the roofline model; plots that draw the roofs and points they are given."""

import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.figures import lab_roofline as lf  # noqa: E402
from helpers.figures.svg import MUTED, PALETTE, TEXT  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"



@pytest.mark.parametrize("make", [lf.opening_animation, lf.structure_diagram])
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert a.svg == b.svg
    root = ET.fromstring(a.svg)
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    uid = root.get("data-figure")
    assert uid.startswith("labroof-") and len(ids) == len(set(ids))
    assert all(i.startswith(uid + "-") for i in ids)
    texts = list(root.iter(f"{SVG_NS}text"))
    # every text is in a theme colour or one of the book's mid-tone semantic colours
    assert all(t.get("fill") in (TEXT, MUTED, *PALETTE.values()) for t in texts)
    assert any(t.get("fill") in (TEXT, MUTED) for t in texts)
    assert not re.search(r'fill="(#000|#000000|#fff|#ffffff|black|white)"', a.svg)
    assert root.find(f"{SVG_NS}desc") is not None


def test_opening_animation_labels_come_from_the_spec():
    gpu = specs.H200_SXM
    fig = lf.opening_animation(gpu, "fp32", ks=(1, 2, 4))
    ridge = gpu.ridge_intensity_flop_per_byte("fp32")
    assert f"ridge {ridge:.3g}" in fig.svg
    assert units.fmt_rate(gpu.hbm_bytes_per_s, "B/s") in fig.svg
    assert fig.animated
    # one faint point per k, and one k label per k
    root = ET.fromstring(fig.svg)
    assert [t.text for t in root.iter(f"{SVG_NS}text") if t.text in ("1", "2", "4")] == ["1", "2", "4"]
    with pytest.raises(ValueError):
        lf.opening_animation(gpu, ks=())


def test_roofline_panels_draw_the_roof_and_the_points():
    peak, bw = 100e12, 2e12
    fig = lf.roofline_panels([{"title": "a", "roofs": [("roof", peak, bw, "main")],
                               "points": [("k=1", 0.25, 0.4e12), ("matmul 64", 100.0, 90e12)]},
                              {"title": "b", "roofs": [("roof", 1e11, 1e10, "main")],
                               "note": "nothing yet"}])
    ax_a, ax_b = fig.axes
    roof = ax_a.lines[0]
    x, y = roof.get_data()
    assert np.allclose(y, np.minimum(peak, x * bw) / units.T)  # drawn in TFLOP/s
    assert ax_b.get_ylabel() == "rate (GFLOP/s)"  # a small machine is drawn in GFLOP/s
    assert any(t.get_text() == "nothing yet" for t in ax_b.texts)
    labels = ax_a.get_legend_handles_labels()[1]
    assert "sweep (measured)" in labels and "matmul (measured)" in labels
    with pytest.raises(ValueError):
        lf.roofline_panels([])


def test_sweep_error_figure_skips_untimed_rows():
    rows = [{"intensity": 1.0, "error": -0.1}, {"intensity": 10.0, "error": None}]
    fig = lf.sweep_error_figure([("a", rows)], ridge=14.0)
    line = [ln for ln in fig.axes[0].lines if ln.get_label() == "a"][0]
    assert list(line.get_xdata()) == [1.0] and list(line.get_ydata()) == [-0.1]
    with pytest.raises(ValueError):
        lf.sweep_error_figure([("a", rows)], target=1.5)
