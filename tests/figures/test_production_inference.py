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
