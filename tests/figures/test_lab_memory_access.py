"""Figures of the memory-access lab: SVG whose counts come from the model, and plots that draw
the numbers they are given. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import lab_memory_access as fig  # noqa: E402
from helpers.models.memory_access import predicted_efficiency  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def test_animation_lights_the_sectors_the_model_counts():
    root = ET.fromstring(fig.opening_animation((1, 8)).svg)
    groups = [g for g in root.iter(f"{SVG_NS}g") if g.find(f"{SVG_NS}animate") is not None]
    assert len(groups) == 2
    lit = [sum(1 for r in g.iter(f"{SVG_NS}rect")) for g in groups]
    # sectors fetched = useful bytes / (efficiency x sector bytes)
    assert lit == [round(128 / (predicted_efficiency(s, 4) * 32)) for s in (1, 8)] == [4, 32]
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert "12.5%" in texts and "100.0%" in texts


def test_animation_rejects_strides_that_do_not_fit():
    with pytest.raises(ValueError):
        fig.opening_animation((1, 64))
    with pytest.raises(ValueError):
        fig.opening_animation((0,))


def test_stride_figure_plots_the_given_values():
    f = fig.stride_figure({"H200": {"strides": [1, 2, 4], "measured": [4e12, 2e12, 1e12],
                                    "model": [4.8e12, 2.4e12, 1.2e12]}}, title="t")
    ax = f.axes[0]
    ys = sorted(tuple(line.get_ydata()) for line in ax.get_lines())
    assert ys == sorted([(4800.0, 2400.0, 1200.0), (4000.0, 2000.0, 1000.0)])
    with pytest.raises(ValueError):
        fig.stride_figure({"x": {"strides": [1], "measured": [1.0, 2.0], "model": [1.0]}}, title="t")


def test_transpose_figure_normalises_by_the_reference():
    f = fig.transpose_figure({"H200": {"copy": 4e12, "tiled": 2e12}}, {"H200": 4e12}, title="t")
    heights = sorted(p.get_height() for p in f.axes[0].patches)
    assert heights == [0.5, 1.0]
    with pytest.raises(ValueError):
        fig.transpose_figure({}, {}, title="t")
