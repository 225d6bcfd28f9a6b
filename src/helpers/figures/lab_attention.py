"""Figures of the lab "Attention: naive vs fused" ({ref}`sec-lab-attention`).

* :func:`opening_animation`: that of {ref}`sec-fusion-and-attention`
  (:func:`helpers.figures.fusion_and_attention.opening_animation`), whose mechanism the lab
  times;
* :func:`structure_diagram`: the three implementations the lab times and what each moves
  through HBM;
* :func:`rate_figure`: FLOP/s of each implementation against sequence length.

Used by: labs/attention.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .fusion_and_attention import opening_animation
from .style import finish_panels, log2_panel, panel_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "rate_figure", "IMPL_LABELS"]

IMPL_LABELS = {"naive": "naive (scores in HBM)", "fused": "fused Triton kernel",
               "sdpa": "torch SDPA"}
_COLORS = {"naive": PALETTE["memory"], "fused": PALETTE["accent"], "sdpa": PALETTE["host"]}


def structure_diagram() -> Figure:
    """The three implementations the lab times, and the HBM traffic of each."""
    c = Canvas(800, 300, "Three ways to compute attention, and what each moves through HBM",
               uid="labatt-struct", description=(
                   "Diagram. Naive: three kernels (Q K^T, softmax, times V) write the N x N "
                   "scores and probabilities to HBM and read them back, about 4 N^2 elements "
                   "per head. Fused Triton kernel: one kernel per block of queries loops over "
                   "the key/value blocks with an online softmax; HBM sees Q and O once and K, V "
                   "once per query block. torch SDPA: the library's own fused kernel, chosen by "
                   "torch. Each is checked against float64 before timing; the model predicts "
                   "the time from FLOP and bytes (roofline)."))
    mem, acc, host, comp = PALETTE["memory"], PALETTE["accent"], PALETTE["host"], PALETTE["compute"]
    y = 30
    c.text(20, y, "naive", anchor="start", size=14, weight="700", fill=mem)
    for i, (lab, sub) in enumerate((("S = Q K^T", "writes N x N"), ("P = softmax(S)",
                                                                     "reads, writes N x N"),
                                    ("O = P V", "reads N x N"))):
        x = 130 + i * 210
        c.box(x, y - 18, 180, 44, lab, sublabel=sub, color=mem, size=12.5)
        if i < 2:
            c.line(x + 180, y + 4, x + 208, y + 4, stroke=MUTED, arrow=True)
    y = 110
    c.text(20, y, "fused", anchor="start", size=14, weight="700", fill=acc)
    c.box(130, y - 18, 600, 44, "one kernel: for each K, V block: scores, online softmax, "
          "accumulate", sublabel="HBM: Q and O once, K and V once per query block", color=acc,
          size=12.5)
    y = 190
    c.text(20, y, "SDPA", anchor="start", size=14, weight="700", fill=host)
    c.box(130, y - 18, 600, 44, "torch.nn.functional.scaled_dot_product_attention",
          sublabel="the backend torch picks (recorded from the profiler)", color=host,
          size=12.5)
    c.box(130, 240, 600, 44, "check vs float64, then time with bench()",
          sublabel="model: max(FLOP / peak, bytes / bandwidth) on the H200", color=comp,
          size=12.5, fill_opacity=0.08)
    return c.figure()


def rate_figure(panels: Mapping[str, Sequence[Mapping]], *, title: str):
    """FLOP/s against sequence length per implementation; one panel per ``panels`` key.

    Each panel is a list of rows from :func:`helpers.labs.analysis.attention.point_rows` (one head
    dimension and mask); missing implementations are skipped.
    """
    fig, axes = panel_figure(panels, height_in=3.6, sharey=True)
    for ax, (name, rows) in zip(axes, panels.items()):
        for impl, label in IMPL_LABELS.items():
            pts = [(r["seq_len"], r[f"{impl}_flop_per_s"]) for r in rows
                   if r.get(f"{impl}_flop_per_s")]
            if pts:
                x, y = zip(*pts)
                ax.plot(x, np.array(y) / 1e12, "o-", ms=4, lw=1.4, color=_COLORS[impl],
                        label=label)
        log2_panel(ax, name, xlabel="sequence length N")
    return finish_panels(fig, axes, ylabel="TFLOP/s (useful FLOP)", title=title,
                         legend_fontsize=8.5)
