"""Figures of the reduction and softmax lab: a plot that draws the
numbers it is given. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import lab_reduction_softmax as fig  # noqa: E402
from helpers.labs import reduction_softmax as lab  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def test_animation_counts_the_trips_the_runner_counts():
    root = ET.fromstring(fig.opening_animation().svg)
    dots = [c for c in root.iter(f"{SVG_NS}circle") if c.find(f"{SVG_NS}animateMotion") is not None]
    # unfused: 5 reads + 3 writes of the tensor; fused: 1 + 1 (the runner's byte counts / N)
    passes = lab.unfused_passes(1, 1 << 20, 1)
    trips = sum(1 for _, r, w in passes if r >= 1 << 20) + sum(1 for _, r, w in passes if w >= 1 << 20)
    assert trips == 8 and len(dots) == trips + 2
    with pytest.raises(ValueError):
        fig.opening_animation(0)


def test_bandwidth_figure_plots_the_given_rates():
    rows = [{"op": "triton_softmax", "cols": c, "bytes_per_s": b}
            for c, b in ((1024, 3e12), (4096, 3.5e12))]
    f = fig.bandwidth_figure({"fp32": rows}, {"fp32": {"measured copy": 4e12}}, title="t")
    ax = f.axes[0]
    ys = [tuple(line.get_ydata()) for line in ax.get_lines()]
    assert (3.0, 3.5) in ys and (4.0, 4.0) in ys
    with pytest.raises(ValueError):
        fig.bandwidth_figure({}, {}, title="t")
