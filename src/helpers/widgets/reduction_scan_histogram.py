"""Explorers of the page "Parallel reduction, scan and histograms"
({ref}`sec-reduction-scan-histogram`).

* :func:`histogram_explorer`: move the Zipf exponent of the keys, the number of bins and the
  number of private copies; see the expected updates per bin and how many times the hottest bin
  outnumbers the mean, for one shared table and per private copy
  (:func:`helpers.figures.reduction_scan_histogram.histogram_figure`).

It calls the tested models of :mod:`helpers.models.parallel_patterns`. The static book shows it
at its initial values, the ones the page discusses.

Used by: chapters/reduction-scan-histogram.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures import reduction_scan_histogram as figs
from ..models import parallel_patterns as pp
from . import explorer, float_slider, int_slider

__all__ = ["histogram_explorer", "draw_histogram"]


def draw_histogram(exponent: float, n_bins: int, copies: int, n_updates: float = 1e6):
    """The explorer's figure: expected updates per bin for Zipf keys, with the contention."""
    p = pp.zipf_probabilities(n_bins, exponent)
    c = pp.contention_factor(p)
    return figs.histogram_figure(
        n_updates, p, title=f"s = {exponent:.2f}: hottest bin {c:.3g} x the mean; "
                            f"per copy of {copies}: {c / copies:.3g} x")


def histogram_explorer(*, exponent: float = 1.0, n_bins: int = 256,
                       copies: int = 64) -> widgets.VBox:
    """Controls for the Zipf exponent, the bins and the private copies above the histogram."""
    controls = {
        "exponent": float_slider("Zipf exponent s", exponent, 0.0, 2.0, 0.05),
        "n_bins": int_slider("bins", n_bins, 2, 1024),
        "copies": int_slider("private copies", copies, 1, 256),
    }
    return explorer(draw_histogram, controls, title="Histogram of skewed keys: the hottest bin")
