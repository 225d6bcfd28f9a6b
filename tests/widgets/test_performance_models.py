"""Tests of helpers.widgets.performance_models: explorers build, redraw, and show the models'
numbers."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.models import amdahl, decode_bandwidth, queueing, roofline  # noqa: E402
from helpers.widgets import performance_models as pw  # noqa: E402

STAGES = {"tokenize": 0.002, "queue": 0.3, "prefill": 0.016, "decode": 2.5, "network": 0.04}


def _controls(box):
    """The value widgets of an explorer (its second child holds them)."""
    return list(box.children[1].children)


def test_roofline_explorer_builds_and_redraws():
    box = pw.roofline_explorer("h200", "fp8", intensity=3.0)
    assert isinstance(box, widgets.VBox)
    gpu, precision, intensity = _controls(box)
    assert gpu.value == "H200 SXM" and precision.value == "fp8"
    assert intensity.value == pytest.approx(3.0)
    intensity.value = 1000.0
    gpu.value = "A100 SXM 80GB"  # no fp8 peak: the explorer shows a message, not an error


def test_draw_roofline_title_reports_the_model():
    gpu = specs.H100_SXM
    fig = pw.draw_roofline(gpu.name, "bf16", 1.0)
    rate = roofline.attainable_flop_per_s(1.0, gpu.peak_flop_per_s("bf16"), gpu.hbm_bytes_per_s)
    title = fig.axes[0].get_title()
    assert units.fmt_rate(rate, "FLOP/s") in title and "memory-bound" in title
    plt.close(fig)
    fig = pw.draw_roofline(gpu.name, "fp4", 1.0)
    assert "no dense fp4 peak" in fig.axes[0].texts[0].get_text()
    plt.close(fig)


def test_decode_explorer():
    kw = dict(n_params=8e9, bytes_per_element=2.0, kv_bytes_per_token=131072.0)
    box = pw.decode_explorer(batch=32, context_tokens=4096, **kw)
    batch, context = _controls(box)
    assert round(batch.value) == 32 and round(context.value) == 4096
    batch.value = 128
    fig = pw.draw_decode(32, 4096, **kw)
    rate = decode_bandwidth.decode_tokens_per_s(16e9, 131072.0 * 4096, 32, 3.35e12, 8e9,
                                                989.4e12)
    assert f"H100 SXM {rate:,.0f}" in fig.axes[0].get_title()
    plt.close(fig)


def test_amdahl_explorer():
    box = pw.amdahl_explorer(STAGES, ["prefill", "decode"], factor=2.0)
    (factor,) = _controls(box)
    factor.value = 10.0
    fig = pw.draw_amdahl(2.0, stage_times_s=STAGES, gpu_stages=["prefill", "decode"])
    whole = amdahl.request_speedup(STAGES, {"prefill": 2.0, "decode": 2.0})
    assert f"request {whole:.3g}x faster" in fig.axes[0].get_title()
    plt.close(fig)


def test_queue_explorer():
    box = pw.queue_explorer(0.05, utilization=0.7, n_customers=20_000)
    (rho,) = _controls(box)
    assert rho.value == pytest.approx(0.7)
    rho.value = 0.9
    fig = pw.draw_queue(0.7, service_time_s=0.05, n_customers=20_000)
    mean = queueing.mm1_mean_time_in_system_s(14.0, 20.0)
    assert f"mean {units.fmt_time(mean)}" in fig.axes[0].get_title()
    plt.close(fig)
