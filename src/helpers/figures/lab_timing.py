"""Figures of the lab "Timing kernels correctly" ({ref}`sec-lab-timing`).

* :func:`methods_figure`: for each operation, the time every timing method reported, on a log
  scale, beside the roofline's lower bound;
* :func:`warmup_figure`: the first repetitions of an operation, in order.

The lab's opening animation and structure diagram are those of {ref}`sec-measurement`
(:mod:`helpers.figures.measurement`), whose mechanism this lab measures on a GPU.

Used by: labs/timing.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import units
from .style import new_figure
from .svg import PALETTE

__all__ = ["METHOD_LABELS", "methods_figure", "warmup_figure"]

#: Display names of the timing methods, in the order the lab introduces them.
METHOD_LABELS = {
    "host_no_sync_s": "host timer, no sync",
    "host_sync_s": "host timer + sync",
    "events_s": "one pair of events",
    "bench_s": "bench(): median",
    "backlogged_s": "events, queue kept full",
}
_COLORS = [PALETTE["accent"], PALETTE["host"], PALETTE["queue"], PALETTE["compute"],
           PALETTE["memory"]]


def methods_figure(times_s: Mapping[str, Mapping[str, float | None]],
                   bounds_s: Mapping[str, float] | None = None, *, title: str):
    """Grouped bars: ``times_s[operation][method]`` (seconds, log scale); ``None`` is skipped.

    ``bounds_s[operation]``, when given, is drawn as a dashed line across the operation's group.
    """
    if not times_s:
        raise ValueError("times_s must name at least one operation")
    ops = list(times_s)
    methods = [m for m in METHOD_LABELS if any(times_s[o].get(m) is not None for o in ops)]
    fig, ax = new_figure(width_in=7.2, height_in=4.0)
    width = 0.8 / max(len(methods), 1)
    values = []
    for j, method in enumerate(methods):
        xs, ys = [], []
        for i, op in enumerate(ops):
            v = times_s[op].get(method)
            if v is not None:
                if not v > 0:
                    raise ValueError(f"time of {op}/{method} must be > 0, got {v!r}")
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(v)
        values += ys
        ax.bar(xs, ys, width=width * 0.92, color=_COLORS[j % len(_COLORS)],
               label=METHOD_LABELS[method])
    for i, op in enumerate(ops):
        if bounds_s and op in bounds_s:
            ax.hlines(bounds_s[op], i - 0.45, i + 0.45, colors="#59636e", linestyles="--", lw=1.3)
            values.append(bounds_s[op])
    ax.set_yscale("log")
    ax.set_ylim(min(values) / 3, max(values) * 4)
    ax.set_xticks(range(len(ops)), [op.replace("_", " ") for op in ops])
    ax.set_ylabel("reported time (s)")
    ax.set_title(title)
    ax.legend(fontsize=8.5, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.1),
              frameon=False)
    if bounds_s:
        ax.text(0.01, 0.02, "dashed: roofline lower bound", transform=ax.transAxes, fontsize=8.5,
                color="#59636e")
    plt.close(fig)
    return fig


def warmup_figure(series_s: Mapping[str, Sequence[float]], *, title: str):
    """Each operation's warm-up repetitions in order, divided by its own final median."""
    if not series_s:
        raise ValueError("series_s must name at least one operation")
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    for name, vals in series_s.items():
        v = np.asarray(vals, dtype=float)
        if v.ndim != 1 or v.size < 2 or np.any(v <= 0):
            raise ValueError(f"series {name!r} needs at least 2 positive times")
        ax.plot(np.arange(1, v.size + 1), v / np.median(v), "o-", ms=3, lw=1.2,
                label=f"{name} (median {units.fmt_time(float(np.median(v)))})")
    ax.axhline(1.0, color="#59636e", lw=1, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("warm-up repetition")
    ax.set_ylabel("time / median")
    ax.set_title(title)
    ax.legend(fontsize=8.5)
    plt.close(fig)
    return fig
