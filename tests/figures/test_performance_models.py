"""Tests of helpers.figures.performance_models: SVG whose
numbers come from the specs and models; plots that draw what the models compute.
(Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.figures import performance_models as pm  # noqa: E402
from helpers.models import amdahl, decode_bandwidth, queueing, roofline  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def _parse(fig):
    return ET.fromstring(fig.svg)


def _texts(root):
    return [el.text or "" for el in root.iter(f"{SVG_NS}text")]


def test_figures_have_distinct_uids():
    uids = {_parse(f()).get("data-figure") for f in (pm.opening_animation, pm.structure_diagram)}
    assert len(uids) == 2


def test_animation_moves_and_diagram_does_not():
    anim, diag = pm.opening_animation(), pm.structure_diagram()
    assert anim.animated and "<animateMotion" in anim.svg and "<animate " in anim.svg
    assert not diag.animated and "<animate" not in diag.svg
    assert repr(anim).startswith("Animation:") and repr(diag).startswith("Diagram:")


@pytest.mark.parametrize("gpu", [specs.H100_SXM, specs.H200_SXM, specs.A100_SXM_80GB])
def test_animation_numbers_come_from_the_spec(gpu):
    texts = " ".join(_texts(_parse(pm.opening_animation(gpu))))
    w = decode_bandwidth.weight_bytes(8e9, 2.0)
    assert units.fmt_rate(gpu.hbm_bytes_per_s, "B/s") in texts
    assert units.fmt_time(roofline.memory_time_s(w, gpu.hbm_bytes_per_s)) in texts
    assert units.fmt_time(roofline.compute_time_s(16e9, gpu.peak_flop_per_s("bf16"))) in texts


def test_roofline_figure_draws_the_model():
    gpu = specs.H100_SXM
    fig = pm.roofline_figure(gpu, "bf16", kernels=[("k", 1.0)], marker=10.0,
                             others=[specs.A100_SXM_80GB])
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    roof = [ln for ln in ax.get_lines() if ln.get_label() == f"{gpu.name}, bf16"][0]
    x, y = roof.get_data()
    np.testing.assert_allclose(y, roofline.attainable_flop_per_s(
        x, gpu.peak_flop_per_s("bf16"), gpu.hbm_bytes_per_s) / 1e12)
    assert max(y) == pytest.approx(gpu.peak_flop_per_s("bf16") / 1e12)
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert dots[0].get_ydata()[0] == pytest.approx(gpu.hbm_bytes_per_s / 1e12)  # I = 1


def test_decode_rate_figure_draws_the_model_and_capacity():
    gpu = specs.H100_SXM
    kv = 536870912.0
    fig = pm.decode_rate_figure([gpu], weight_bytes=16e9, n_params=8e9,
                                kv_bytes_per_sequence=kv)
    ax = fig.axes[0]
    solid = [ln for ln in ax.get_lines() if ln.get_label() == gpu.name][0]
    b, rate = solid.get_data()
    expect = [decode_bandwidth.decode_tokens_per_s(16e9, kv, int(x), gpu.hbm_bytes_per_s, 8e9,
                                                   gpu.peak_flop_per_s("bf16")) for x in b]
    np.testing.assert_allclose(rate, expect)
    verticals = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert verticals[0].get_xdata()[0] == pytest.approx((gpu.hbm_bytes - 16e9) / kv)


def test_request_figure_bars_add_up():
    stages = {"a": 0.1, "gpu": 0.6, "b": 0.3}
    fig = pm.request_figure(stages, {"gpu": 3.0})
    ax = fig.axes[0]
    ends = {}
    for patch in ax.patches:
        row = round(patch.get_y() + patch.get_height() / 2)
        ends[row] = max(ends.get(row, 0.0), patch.get_x() + patch.get_width())
    assert ends[0] == pytest.approx(1.0)
    assert ends[1] == pytest.approx(amdahl.request_time_s(stages, {"gpu": 3.0}))


def test_amdahl_and_queue_figures():
    fig = pm.amdahl_figure([0.5, 0.9], max_factor=50, highlight=(0.9, 2.0))
    curves = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("f =")]
    assert len(curves) == 2
    assert curves[1].get_ydata()[-1] == pytest.approx(amdahl.amdahl_speedup(0.9, 50))
    fig = pm.queue_figure(0.05, simulated=[(0.5, 0.1, 0.46)], highlight=0.5)
    mean = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "mean (formula)"][0]
    rho, t_ms = mean.get_data()
    assert t_ms[-1] == pytest.approx(queueing.mm1_mean_time_in_system_s(rho[-1] * 20, 20) * 1e3)


def test_empirical_roofline_figure():
    fig = pm.empirical_roofline_figure(100e9, 10e9, 8e9, [("k", 2.0, 15e9)], machine="m")
    ax = fig.axes[0]
    assert ax.get_title() == "Empirical roofline of m"
    roof = [ln for ln in ax.get_lines() if ln.get_label() == "roof from read bandwidth"][0]
    x, y = roof.get_data()
    assert max(y) == pytest.approx(100.0) and y[0] == pytest.approx(x[0] * 10.0)


def test_empirical_roofline_legend_covers_no_measured_point():
    """Issue 22: on a CPU the legend covered a measured point; it now sits below the axes."""
    points = [(f"k{i}", x, r) for i, (x, r) in enumerate(
        [(0.05, 0.4e9), (0.3, 2e9), (5.0, 30e9), (200.0, 60e9), (900.0, 20e9)])]
    fig = pm.empirical_roofline_figure(100e9, 10e9, 8e9, points, machine="m")
    ax = fig.axes[0]
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(dots) == len(points)
    for ln in dots:
        x, y = ln.get_xydata()[0]
        px, py = ax.transData.transform((x, y))
        assert not box.contains(px, py), (x, y)
    assert box.y1 <= ax.get_window_extent().y0  # below the plot area
