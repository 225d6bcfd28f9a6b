"""Tests of helpers.widgets.containers_and_cgroups: the explorer builds, redraws, and shows the
model's number."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers import units  # noqa: E402
from helpers.models import cgroups as cgm  # noqa: E402
from helpers.widgets import containers_and_cgroups as cw  # noqa: E402


def test_explorer_builds_and_redraws():
    box = cw.throttle_explorer()
    assert isinstance(box, widgets.VBox)
    threads, quota, work = box.children[1].children
    assert threads.value == 128 and quota.value == pytest.approx(4.0)
    threads.value = 4
    quota.value = 16.0
    work.value = 50.0


def test_draw_reports_the_models_wall_time():
    fig = cw.draw_throttle(32, 2.0, 500.0, cores=64, period_s=0.1)
    t = cgm.throttled_wall_s(cpu_work_s=0.5, n_threads=32, n_cores=64, quota_s=0.2, period_s=0.1)
    assert f"{t / units.ms:.3g} ms" in fig.axes[0].get_title()
    plt.close(fig)
