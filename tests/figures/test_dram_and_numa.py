"""Tests of helpers.figures.dram_and_numa: the plot draws
what the model computes. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import dram_and_numa as fig  # noqa: E402
from helpers.models import dram  # noqa: E402


def test_the_animation_moves_and_the_diagram_does_not():
    assert fig.opening_animation().animated and "animateMotion" in fig.opening_animation().svg
    assert not fig.structure_diagram().animated


def test_latency_plot_draws_the_model():
    f = fig.numa_latency_figure(100e-9, [1.5, 2.0])
    line = f.axes[0].lines[1]  # first line is ratio 1.5; [1] is its interleaved point
    x, y = line.get_data()
    assert y[0] == pytest.approx(dram.numa_mean_latency_s(100e-9, 150e-9, 0.5) * 1e9)
    curve = f.axes[0].lines[2].get_data()
    assert np.allclose(curve[1][[0, -1]], [100.0, 200.0])
    plt.close("all")
