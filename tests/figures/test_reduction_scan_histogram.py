"""Figures of the reduction, scan and histogram page: SVG whose counts come from the models,
and plots that draw the models' numbers. (Validity, determinism and theme:
tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import reduction_scan_histogram as fig  # noqa: E402
from helpers.models import parallel_patterns as pp  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("values", [[3, 1, 7, 0, 4, 1, 6, 3], [1, 2], list(range(16))])
def test_animation_draws_the_tree_the_model_counts(values):
    root = ET.fromstring(fig.opening_animation(values).svg)
    levels = [g for g in root.iter(f"{SVG_NS}g") if g.find(f"{SVG_NS}animate") is not None]
    assert len(levels) == pp.tree_reduction_span(len(values))
    nodes = sum(len(g.findall(f"{SVG_NS}circle")) for g in levels)
    assert nodes == pp.tree_reduction_work(len(values))  # one node per addition
    last = [t.text for t in levels[-1].iter(f"{SVG_NS}text")]
    assert str(sum(values)) in last  # the root holds the total


def test_animation_and_diagram_reject_bad_input():
    with pytest.raises(ValueError):
        fig.opening_animation([1, 2, 3])
    with pytest.raises(ValueError):
        fig.structure_diagram(32, 100)


def test_structure_diagram_states_the_model_steps():
    root = ET.fromstring(fig.structure_diagram(32, 1024).svg)
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG_NS}text"))
    assert f"shuffles: {pp.warp_shuffle_steps(32)} steps" in texts
    assert f"{pp.block_reduction_steps(1024)} steps in all" in texts


def test_work_figure_plots_the_models():
    ns = [16, 256, 4096]
    f = fig.work_figure(ns)
    ys = {line.get_label(): list(line.get_ydata()) for line in f.axes[0].get_lines()}
    assert ys["Hillis-Steele"] == [pp.hillis_steele_scan_work(n) / n for n in ns]
    assert ys["Blelloch (work-efficient)"] == [pp.blelloch_scan_work(n) / n for n in ns]
    with pytest.raises(ValueError):
        fig.work_figure([1])


def test_contention_and_histogram_figures():
    f = fig.contention_figure(256, np.linspace(0, 2, 5), [64])
    lines = f.axes[0].get_lines()
    shared, private = lines[0].get_ydata(), lines[1].get_ydata()
    assert shared[0] == pytest.approx(1.0) and np.allclose(private, shared / 64)
    p = pp.zipf_probabilities(64, 1.0)
    h = fig.histogram_figure(1000.0, p, shown=10)
    heights = [b.get_height() for b in h.axes[0].patches]
    assert len(heights) == 10 and heights[0] == pytest.approx(1000.0 * p[0])
    with pytest.raises(ValueError):
        fig.contention_figure(256, [], [64])
