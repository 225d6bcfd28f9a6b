"""Tests of helpers.widgets.gpu_architecture: the explorer builds, redraws and shows the model."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.models import gpu_peaks  # noqa: E402
from helpers.widgets import gpu_architecture as gw  # noqa: E402


def test_explorer_starts_at_the_published_values_and_redraws():
    box = gw.peak_explorer("h200", "bf16")
    assert isinstance(box, widgets.VBox)
    precision, sms, clock = box.children[1].children
    assert precision.value == "bf16" and sms.value == 132
    assert clock.value == pytest.approx(1830.0)
    sms.value = 66
    precision.value = "fp8"


def test_draw_peak_reports_the_model_and_the_datasheet():
    fig = gw.draw_peak("H200 SXM", "bf16", 132, 1830.0)
    h = specs.H200_SXM
    expected = gpu_peaks.sm_peak_flop_per_s(132, 2048, 1830e6)
    assert units.fmt_rate(expected, "FLOP/s") in fig.axes[0].get_title()
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert any(units.fmt_rate(h.peak_flop_per_s("bf16"), "FLOP/s") in lab for lab in labels)
    plt.close(fig)


def test_unknown_gpu_name_raises():
    with pytest.raises(ValueError, match="unknown GPU"):
        gw.draw_peak("V100", "bf16", 80, 1500.0)
