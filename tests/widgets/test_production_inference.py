"""Tests of helpers.widgets.production_inference: the explorer builds, redraws, states the model."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.models import queueing as qm  # noqa: E402
from helpers.widgets import production_inference as pw  # noqa: E402


def test_explorer_builds_and_redraws():
    box = pw.slo_explorer(arrival_rate_per_s=30.0, servers=4, service_ms=100.0, slo_ms=50.0,
                          queue_cap=4)
    assert isinstance(box, widgets.VBox)
    rate, servers, service, slo, cap = list(box.children[1].children)
    assert servers.value == 4 and rate.value == pytest.approx(30.0)
    rate.value = 200.0  # past capacity: must still draw
    cap.value = 20


def test_title_reports_the_models_numbers():
    fig = pw.draw_slo(30.0, 4, 100.0, 50.0, 4)
    title = fig.axes[0].get_title()
    assert f"{qm.mmc_wait_attainment(0.05, 30.0, 10.0, 4):.0%} meet" in title
    assert f": {qm.mmc_servers_needed(30.0, 10.0, 0.05, pw.TARGET, reserve=pw.RESERVE)}" in title
    plt.close(fig)
    over = pw.draw_slo(80.0, 4, 100.0, 50.0, 4).axes[0].get_title()
    assert "unbounded 0% meet" in over
    plt.close("all")


def test_bad_input_raises():
    with pytest.raises(ValueError):
        pw.draw_slo(10.0, 0, 100.0, 50.0, 4)
