"""Tests of helpers.figures.production_inference."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import production_inference as pf  # noqa: E402
from helpers.models import queueing as qm  # noqa: E402


def test_svgs_build_and_are_animated_where_they_should_be():
    anim = pf.opening_animation()
    assert anim.animated and "<animate" in anim.svg and "turned away" in anim.svg
    diag = pf.structure_diagram()
    assert not diag.animated and "admission" in diag.svg and "telemetry" in diag.svg
    with pytest.raises(ValueError):
        pf.opening_animation(servers=3, cap=4, arrivals=5)


def test_goodput_curves_follow_the_models():
    loads = np.array([1.0, 3.0, 3.9, 5.0, 8.0])
    free, capped = pf.goodput_curves(loads, 1.0, 4, 0.5, 8)
    assert free[0] == pytest.approx(1.0 * qm.mmc_wait_attainment(0.5, 1.0, 1.0, 4))
    assert free[-1] == 0.0 and free[-2] == 0.0 and capped[-1] > 0
    fig = pf.goodput_figure(1.0, 4, 0.5, 8, title="t", n_requests=200,
                            rows=[{"policy": "none", "offered_rate_norm": 0.5, "goodput_norm": 0.4},
                                  {"policy": "cap", "offered_rate_norm": 2.0, "goodput_norm": 0.7}])
    assert len(fig.axes[0].lines) >= 6
    plt.close(fig)


def test_attainment_gap_figure_draws_four_series_per_policy():
    rows = [{"factor": f, "policy": p, "measured": 0.9 / f, "formula": 1.0 / f,
             "sim_calibrated": 1.0 / f, "sim_own_service": 0.9 / f}
            for f in (1.0, 2.0) for p in ("none", "cap")]
    fig = pf.attainment_gap_figure(rows, title="t")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert len(ax.lines) == 4
        assert list(ax.lines[0].get_ydata()) == [0.9, 0.45]  # measured, in load order
    plt.close(fig)
