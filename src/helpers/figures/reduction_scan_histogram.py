"""Figures of the page "Parallel reduction, scan and histograms" ({ref}`sec-reduction-scan-histogram`).

* :func:`opening_animation`: eight values folded by a tree reduction, one level per beat;
  each node lights up when its two inputs are ready;
* :func:`structure_diagram`: the levels of a GPU reduction: lanes of a warp (shuffles), warps of
  a block (shared memory), blocks of a grid (a second pass or atomics);
* :func:`work_figure`: additions of the sequential, Hillis-Steele and Blelloch scans against
  ``n`` (from :mod:`helpers.models.parallel_patterns`);
* :func:`contention_figure`: the hottest bin's share of a histogram's updates against a Zipf
  exponent, for one shared table and for privatized copies;
* :func:`histogram_figure`: expected updates per bin (hottest first) and their mean.

Used by: chapters/reduction-scan-histogram.md.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..models import parallel_patterns as pp
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "work_figure", "contention_figure",
           "histogram_figure"]


def opening_animation(values: Sequence[int] = (3, 1, 7, 0, 4, 1, 6, 3),
                      beat_s: float = 1.2) -> Figure:
    """A binary tree reduction of ``values`` (a power of two, up to 16), level by level."""
    vals = [int(v) for v in values]
    n = len(vals)
    if n < 2 or n > 16 or n & (n - 1):
        raise ValueError(f"values must hold a power of two between 2 and 16 numbers, got {n}")
    levels = pp.tree_reduction_span(n)
    cell, x0, dy, label_w = 72.0, 24.0, 62.0, 150.0
    width = x0 * 2 + n * cell + label_w
    height = 70 + levels * dy + 40
    c = Canvas(width, height, f"A tree reduction of {n} values in {levels} steps", "red-open",
               description=f"{n} numbers are added in pairs, then pairs of sums, until one "
               f"total remains: {pp.tree_reduction_work(n)} additions in {levels} steps, where a "
               f"loop would take {n - 1} steps.")
    total = (levels + 2) * beat_s
    row = vals[:]
    xs = [x0 + (i + 0.5) * cell for i in range(n)]
    y = 40.0
    for i, v in enumerate(row):
        c.circle(xs[i], y, 17, fill=PALETTE["memory"], opacity=0.85)
        c.text(xs[i], y, str(v), size=13, weight="600")
    for lvl in range(1, levels + 1):
        y_new = 40.0 + lvl * dy
        start = lvl / (levels + 2)
        show = Canvas.animate("opacity", [0, 0, 1, 1], dur_s=total,
                              key_times=[0, start, min(start + 0.05, 0.99), 1])
        new_row, new_xs = [], []
        body = []
        for j in range(0, len(row), 2):
            s = row[j] + row[j + 1]
            x = (xs[j] + xs[j + 1]) / 2
            for k in (j, j + 1):
                body.append(f'<line x1="{xs[k]:.1f}" y1="{y_new - dy + 18:.1f}" x2="{x:.1f}" '
                            f'y2="{y_new - 18:.1f}" stroke="{PALETTE["neutral"]}" '
                            f'stroke-width="1.4"/>')
            color = PALETTE["accent"] if lvl == levels else PALETTE["compute"]
            body.append(f'<circle cx="{x:.1f}" cy="{y_new:.1f}" r="17" fill="{color}" '
                        f'opacity="0.85"/>')
            body.append(f'<text x="{x:.1f}" y="{y_new:.1f}" font-size="13" font-weight="600" '
                        f'text-anchor="middle" dominant-baseline="middle" '
                        f'fill="var(--pst-color-text-base, var(--jp-content-font-color1, '
                        f'#1f2328))">{s}</text>')
            new_row.append(s)
            new_xs.append(x)
        body.append(f'<text x="{width - 8:.1f}" y="{y_new:.1f}" font-size="11.5" '
                    f'text-anchor="end" dominant-baseline="middle" fill="{MUTED}">step {lvl}: '
                    f'{len(new_row)} addition{"s" if len(new_row) > 1 else ""}</text>')
        c.raw(f'<g opacity="0">{show}{"".join(body)}</g>')
        row, xs = new_row, new_xs
    c.text((width - label_w) / 2, height - 16, f"work {pp.tree_reduction_work(n)} additions, span {levels} "
           f"steps", size=12.5, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram(warp_size: int = 32, block_size: int = 1024) -> Figure:
    """The three levels of a GPU reduction and what joins each level to the next."""
    if block_size % warp_size or block_size < warp_size:
        raise ValueError(f"block_size must be a multiple of warp_size, got {block_size}, "
                         f"{warp_size}")
    warps = block_size // warp_size
    c = Canvas(760, 250, "A reduction on a GPU: warp, block, grid", "red-struct",
               description=f"Lanes of a warp combine with shuffles in "
               f"{pp.warp_shuffle_steps(warp_size)} steps; the {warps} warp sums of a block meet "
               "in shared memory; the block sums of the grid meet in a second kernel pass or "
               "through atomic additions.")
    cols = [("warp", f"{warp_size} lanes, registers",
             f"shuffles: {pp.warp_shuffle_steps(warp_size)} steps", PALETTE["compute"]),
            ("block", f"{warps} warps, shared memory",
             f"sync, then one warp: {pp.block_reduction_steps(block_size, warp_size)} steps in all",
             PALETTE["memory"]),
            ("grid", "many blocks, HBM", "second pass or atomics", PALETTE["network"])]
    w, gap = 220, 25
    for i, (name, what, how, color) in enumerate(cols):
        x = 25 + i * (w + gap)
        c.box(x, 24, w, 62, name, sublabel=what, color=color)
        c.box(x, 120, w, 46, how, color=PALETTE["neutral"], size=11.5, fill_opacity=0.08)
        c.line(x + w / 2, 88, x + w / 2, 118, arrow=True)
        if i < 2:
            c.line(x + w + 3, 55, x + w + gap - 3, 55, arrow=True, stroke=MUTED)
    c.text(380, 200, "each level folds its inputs into one value and hands it to the next",
           size=12, fill=MUTED)
    c.text(380, 224, "scans and histograms reuse the same levels", size=12, fill=MUTED)
    return c.figure()


def work_figure(ns: Sequence[int]):
    """Additions per element of three scans against ``n`` (log scale in ``n``)."""
    ns = [int(n) for n in ns]
    if not ns or min(ns) < 2:
        raise ValueError("ns must hold sizes >= 2")
    fig, ax = new_figure(width_in=6.4, height_in=3.3)
    ax.plot(ns, [(n - 1) / n for n in ns], "o-", color=PALETTE["host"], label="sequential loop")
    ax.plot(ns, [pp.blelloch_scan_work(n) / n for n in ns], "s-", color=PALETTE["memory"],
            label="Blelloch (work-efficient)")
    ax.plot(ns, [pp.hillis_steele_scan_work(n) / n for n in ns], "^-", color=PALETTE["compute"],
            label="Hillis-Steele")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements n")
    ax.set_ylabel("additions per element")
    ax.set_ylim(bottom=0)
    ax.legend()
    plt.close(fig)
    return fig


def contention_figure(n_bins: int, exponents: Sequence[float], copies: Sequence[int]):
    """Updates to the hottest bin over the mean bin's, per table, against the Zipf exponent."""
    s = np.asarray(exponents, dtype=float)
    if s.size == 0 or len(copies) == 0:
        raise ValueError("exponents and copies must be non-empty")
    fig, ax = new_figure(width_in=6.4, height_in=3.3)
    factors = np.array([pp.contention_factor(pp.zipf_probabilities(n_bins, e)) for e in s])
    ax.plot(s, factors, color=PALETTE["compute"], label="one shared table")
    for c, style in zip(copies, ("--", ":", "-.")):
        ax.plot(s, factors / c, style, color=PALETTE["memory"],
                label=f"{c} private copies (per copy)")
    ax.axhline(1.0, color=PALETTE["neutral"], linewidth=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("Zipf exponent s (0 = uniform)")
    ax.set_ylabel("hottest bin / mean bin")
    ax.set_title(f"{n_bins} bins", fontsize=10.5)
    ax.legend(fontsize=8.5)
    plt.close(fig)
    return fig


def histogram_figure(n_updates: float, bin_probs, *, shown: int = 32, title: str = ""):
    """Expected updates per bin, hottest first (the first ``shown`` bins), and the mean."""
    p = np.sort(np.asarray(bin_probs, dtype=float))[::-1]
    hot = pp.hottest_bin_updates(n_updates, p)
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    k = min(shown, p.size)
    ax.bar(range(1, k + 1), n_updates * p[:k], color=PALETTE["memory"])
    ax.axhline(n_updates / p.size, color=PALETTE["compute"], linestyle="--",
               label="mean bin")
    ax.set_xlabel("bin (hottest first)")
    ax.set_ylabel("expected updates")
    ax.set_title(title or f"hottest bin: {hot:.3g} updates, "
                 f"{pp.contention_factor(p):.3g} x the mean", fontsize=10.5)
    ax.legend()
    plt.close(fig)
    return fig
