"""Tests of helpers.widgets.reduction_scan_histogram: the explorer builds, redraws and starts
at the page's values."""

import matplotlib

matplotlib.use("Agg")


from helpers.models import parallel_patterns as pp  # noqa: E402
from helpers.widgets import reduction_scan_histogram as rw  # noqa: E402


def test_histogram_explorer_builds_redraws_and_starts_at_the_page_values():
    box = rw.histogram_explorer(exponent=1.0, n_bins=256, copies=64)
    exponent, bins, copies = list(box.children[1].children)
    assert (exponent.value, bins.value, copies.value) == (1.0, 256, 64)
    exponent.value = 0.0
    bins.value = 16
    copies.value = 1


def test_draw_histogram_titles_the_model_contention():
    f = rw.draw_histogram(1.0, 256, 64)
    c = pp.contention_factor(pp.zipf_probabilities(256, 1.0))
    assert f"{c:.3g} x the mean" in f.axes[0].get_title()
    assert f"{c / 64:.3g} x" in f.axes[0].get_title()
