"""The one matplotlib style of the book's plots.

Figures are PNG (nbval never compares PNG bytes; SVG from matplotlib carries a date and random
ids). They have a white card background so they stay legible on the dark theme too.

Library only: no page imports it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Mapping

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import ScalarFormatter

from .svg import PALETTE

__all__ = ["book_style", "new_figure", "COLORS", "panel_figure", "log2_panel", "finish_panels"]

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


# --- a row of panels, one per case of a sweep (the labs' rate figures) ---------------------------

def panel_figure(panels: Mapping, *, height_in: float, **kw):
    """A row of panels, one per key of ``panels``, 3.4 in each (6 in at least): ``(fig, axes)``
    with ``axes`` a 1-D array; ``kw`` goes to :func:`new_figure` (e.g. ``sharey=True``).
    ValueError if ``panels`` is empty."""
    if not panels:
        raise ValueError("panels must name at least one panel")
    fig, axes = new_figure(1, len(panels), width_in=max(6.0, 3.4 * len(panels) + 0.6),
                           height_in=height_in, **kw)
    return fig, np.atleast_1d(axes)


def log2_panel(ax, title: str, *, xlabel: str) -> None:
    """Finish one panel of a sweep: x on a base-2 log scale with plain numbers as tick labels,
    the x label, and the panel's title."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)


def finish_panels(fig, axes, *, ylabel: str, title: str, legend_fontsize: float):
    """Put the y label and the legend on the first panel and the title above all; close the
    figure (a page displays the returned object once) and return it."""
    first = np.atleast_1d(axes)[0]
    first.set_ylabel(ylabel)
    first.legend(fontsize=legend_fontsize)
    fig.suptitle(title, fontsize=11)
    plt.close(fig)
    return fig
