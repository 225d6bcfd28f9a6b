"""Tests of helpers.widgets.custom_operators: the explorer draws what the models say."""

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.models import gated_activation as ga  # noqa: E402
from helpers.widgets import custom_operators as w  # noqa: E402


def test_times_follow_the_pass_counts():
    t = w.gate_times_s(1000, 2.0, 1e9)
    assert t[(False, "forward")] == pytest.approx(5 * 2000 / 1e9)
    assert t[(True, "backward")] == pytest.approx(5 * 2000 / 1e9)
    eager = t[(False, "forward")] + t[(False, "backward")]
    fused = t[(True, "forward")] + t[(True, "backward")]
    assert eager / fused == pytest.approx(
        (ga.swiglu_passes(fused=False) + ga.swiglu_passes(fused=False, direction="backward"))
        / (ga.swiglu_passes(fused=True) + ga.swiglu_passes(fused=True, direction="backward")))


def test_explorer_builds_and_redraws():
    box = w.traffic_explorer(mem_bytes_per_s=4.8e12, gpu_name="H200")
    sliders = list(box.children[1].children)
    assert len(sliders) == 3
    sliders[0].value = 1024  # redraw without error
    fig = w.draw_traffic(1024, 4096, 2.0, mem_bytes_per_s=4.8e12, gpu_name="H200")
    assert len(fig.axes[0].patches) == 4
    plt.close(fig)
