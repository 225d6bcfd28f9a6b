"""The one matplotlib style of the book's plots.

Figures are PNG (nbval never compares PNG bytes; SVG from matplotlib carries a date and random
ids). They have a white card background so they stay legible on the dark theme too.
"""

from __future__ import annotations

from contextlib import contextmanager

import matplotlib as mpl
import matplotlib.pyplot as plt

from .svg import PALETTE

__all__ = ["book_style", "new_figure", "COLORS"]

#: Plot colours, the same semantic palette as the SVG figures.
COLORS = dict(PALETTE)

_RC = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "axes.edgecolor": "#444c56",
    "axes.labelcolor": "#1f2328",
    "axes.titlesize": 12,
    "axes.titleweight": "semibold",
    "axes.labelsize": 11,
    "axes.grid": True,
    "grid.color": "#d0d7de",
    "grid.linewidth": 0.6,
    "grid.alpha": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": "#1f2328",
    "ytick.color": "#1f2328",
    "legend.frameon": False,
    "legend.fontsize": 9.5,
    "font.size": 10.5,
    "lines.linewidth": 2.0,
    "axes.prop_cycle": mpl.cycler(color=[PALETTE["memory"], PALETTE["compute"], PALETTE["host"],
                                         PALETTE["network"], PALETTE["queue"], PALETTE["accent"],
                                         PALETTE["neutral"]]),
}


@contextmanager
def book_style():
    """Context manager applying the book's rcParams."""
    with mpl.rc_context(_RC):
        yield


def new_figure(nrows: int = 1, ncols: int = 1, *, width_in: float = 7.0, height_in: float = 3.6,
               **kw):
    """``plt.subplots`` in the book style, with a sensible default size for a page column."""
    with book_style():
        fig, ax = plt.subplots(nrows, ncols, figsize=(width_in, height_in), layout="constrained", **kw)
    return fig, ax
