"""Tests of helpers.figures.fault_tolerance and helpers.figures.lab_checkpointing."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import fault_tolerance as ft  # noqa: E402
from helpers.figures import lab_checkpointing as lf  # noqa: E402
from helpers.models import checkpointing as ck  # noqa: E402


def test_opening_animation_is_animated_svg_and_checks_its_inputs():
    fig = ft.opening_animation()
    assert fig.animated and "<animate" in fig.svg and "failure" in fig.svg
    with pytest.raises(ValueError):
        ft.opening_animation(fail_at=1.0)


def test_structure_diagram_names_the_steps_of_a_safe_save():
    svg = ft.structure_diagram().svg
    for word in ("fsync", "os.replace", "SHA-256", "M = M_node / N"):
        assert word in svg


def test_goodput_curve_is_daly_and_peaks_near_daly_interval():
    delta, restart, mtbf = 300.0, 600.0, 86400.0
    tau = ck.daly_interval_s(delta, mtbf)
    daly, first = ft.goodput_curve([tau / 2, tau, 2 * tau], delta, restart, mtbf)
    assert daly[1] > daly[0] and daly[1] > daly[2]
    assert daly[1] == pytest.approx(ck.goodput(tau, delta, restart, mtbf))
    assert all(f <= d + 1e-9 for f, d in zip(first, daly))
    fig = ft.goodput_figure(delta, restart, mtbf, title="t")
    assert plt.get_fignums() == [] and len(fig.axes[0].lines) >= 4


def _result():
    lives = [{"resumed_step": 0, "last_step": 12, "saved": [10], "killed": True, "kind": "step"},
             {"resumed_step": 10, "last_step": 20, "saved": [], "killed": True, "kind": "write"},
             {"resumed_step": 10, "last_step": 30, "saved": [20, 30], "killed": False,
              "kind": "none"}]
    pts = [{"interval_s": 0.01, "goodput": 0.6, "sim_goodput_p05": 0.5, "sim_goodput_p95": 0.7}]
    return {"measurements": {"kills": {"lives": lives},
                             "interval": {"checkpoint_s": 0.005, "restart_s": 0.002,
                                          "mtbf_s": 0.1, "points": pts}}}


def test_lab_figures_draw_from_a_result():
    fig = lf.kill_timeline(_result(), title="k")
    assert len(fig.axes[0].patches) == 3
    fig = lf.interval_figure(_result(), title="i")
    assert fig.axes[0].get_xlabel().endswith("(ms)")
    with pytest.raises(ValueError):
        lf.kill_timeline({"measurements": {"kills": {"lives": []}}}, title="k")
