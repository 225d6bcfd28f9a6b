"""Tests of helpers.figures.containers_and_cgroups: SVG figures, the schedule, the plots."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import containers_and_cgroups as f  # noqa: E402
from helpers.models import cgroups as cgm  # noqa: E402


def test_opening_animation_is_animated_and_described():
    fig = f.opening_animation()
    assert fig.animated and "<animate" in fig.svg and "<desc>" in fig.svg
    assert fig.svg == f.opening_animation().svg  # deterministic


def test_structure_diagram_names_the_parts():
    fig = f.structure_diagram()
    assert not fig.animated
    for word in ("namespaces", "cgroup", "cpu.max", "memory.max", "Linux kernel"):
        assert word in fig.svg


@pytest.mark.parametrize("w, n, c, qc", [(0.8, 128, 128, 4.0), (1.0, 8, 8, 4.0),
                                         (0.3, 2, 2, math.inf), (2.35, 16, 4, 2.5)])
def test_schedule_does_the_work_and_ends_when_the_model_says(w, n, c, qc):
    period = 0.1
    t, cpus = f.throttle_schedule(cpu_work_s=w, threads=n, cores=c, quota_s=qc * period,
                                  period_s=period)
    end = cgm.throttled_wall_s(cpu_work_s=w, n_threads=n, n_cores=c, quota_s=qc * period,
                               period_s=period)
    edges = np.append(t, end)
    assert np.all(np.diff(edges) >= 0)
    assert float(np.sum(cpus * np.diff(edges))) == pytest.approx(w)   # all the work, no more
    if math.isfinite(qc):  # no period uses more than the quota
        for k in range(int(end / period) + 1):
            lo, hi = k * period, (k + 1) * period
            used = sum(cp * max(0.0, min(b, hi) - max(a, lo))
                       for a, b, cp in zip(edges[:-1], edges[1:], cpus))
            assert used <= qc * period * (1 + 1e-9)


def test_plots_draw_and_close():
    fig = f.throttle_timeline_figure(cpu_work_s=0.8, threads=128, cores=128, quota_s=0.4,
                                     period_s=0.1)
    assert "103 ms" in fig.axes[0].get_title()
    plt.close(fig)
    fig = f.pool_figure([1, 2, 4], [0.2, 0.1, 0.1], [0.2, 0.1, 0.1], cores=2)
    assert len(fig.axes[0].lines) >= 2
    plt.close(fig)
