"""Tests of helpers.widgets.measurement: the simulated timings and the explorer."""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers.models import stats
from helpers.widgets import measurement as wm


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_simulated_median_without_outliers():
    x = wm.simulated_timings(200_001, median_s=2e-3, sigma=0.3, seed=4)
    assert np.median(x) == pytest.approx(2e-3, rel=0.01)
    assert np.all(x > 0)


def test_outliers_are_the_requested_share_and_size():
    base = wm.simulated_timings(100_000, sigma=0.0, seed=1)
    x = wm.simulated_timings(100_000, sigma=0.0, outlier_fraction=0.05, outlier_factor=8, seed=1)
    assert np.all(base == 1e-3)
    assert set(np.unique(x).round(12)) == {1e-3, 8e-3}
    assert float(np.mean(x > 1e-3)) == pytest.approx(0.05, abs=0.003)


def test_reproducible():
    assert np.array_equal(wm.simulated_timings(50, seed=3), wm.simulated_timings(50, seed=3))


@pytest.mark.parametrize("kw", [dict(n=0), dict(n=2.5), dict(median_s=0.0), dict(sigma=-1.0),
                                dict(outlier_fraction=0.5), dict(outlier_factor=0.5)])
def test_bad_input(kw):
    with pytest.raises(ValueError):
        wm.simulated_timings(**{"n": 10, **kw})


def test_draw_reports_both_intervals():
    fig = wm.draw_ci(100, 0.2, 0.02)
    title = fig.axes[0].get_title()
    assert title.startswith("n = 100: median CI ±") and "mean CI ±" in title
    x = wm.simulated_timings(100, median_s=1e-3, sigma=0.2, outlier_fraction=0.02, seed=0)
    ci = stats.median_ci(x)
    assert f"{ci.width / 2 / np.median(x):.1%}" in title


def test_draw_below_six_samples_has_no_median_interval():
    fig = wm.draw_ci(5, 0.2, 0.0)
    assert "median CI" not in fig.axes[0].get_title()


def test_outliers_widen_the_mean_interval_more_than_the_median_one():
    def widths(frac):
        x = wm.simulated_timings(400, sigma=0.1, outlier_fraction=frac, seed=2)
        return (stats.median_ci(x).width / np.median(x), stats.mean_ci(x).width / x.mean())

    med0, mean0 = widths(0.0)
    med1, mean1 = widths(0.05)
    assert mean1 / mean0 > 3 * (med1 / med0)


def test_explorer_builds():
    box = wm.ci_explorer()
    assert isinstance(box, widgets.VBox)
    sliders = box.children[1].children
    assert [s.value for s in sliders] == [50, 0.2, 0.02]
    sliders[0].value = 200  # redraws without error
