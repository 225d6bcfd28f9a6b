"""Figures of the lab "Attention: naive vs fused" ({ref}`sec-lab-attention`).

* :func:`opening_animation`: one block of queries held on chip while the blocks of keys and
  values stream past it; the running max and sum of the online softmax update at each step;
* :func:`structure_diagram`: the three implementations the lab times and what each moves
  through HBM;
* :func:`rate_figure`: FLOP/s of each implementation against sequence length.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import ScalarFormatter
import numpy as np

from ..models import attention as model
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "rate_figure", "IMPL_LABELS"]

IMPL_LABELS = {"naive": "naive (scores in HBM)", "fused": "fused Triton kernel",
               "sdpa": "torch SDPA"}
_COLORS = {"naive": PALETTE["memory"], "fused": PALETTE["accent"], "sdpa": PALETTE["host"]}


def opening_animation(scores: Sequence[float] = (0.4, 1.9, 0.7, 2.6, 1.1, 0.2)) -> Figure:
    """A query block on chip; key/value blocks stream through; ``m`` and ``l`` update.

    ``scores`` is one query row's largest score in each key block (schematic); the running
    max ``m`` and sum ``l`` shown after each block come from
    :func:`helpers.models.attention.online_softmax_update` (one score per block).
    """
    s = [float(x) for x in scores]
    if len(s) < 2:
        raise ValueError("scores must have at least two blocks")
    nb = len(s)
    m, ell = -np.inf, 0.0
    states = []
    for x in s:
        m, ell = model.online_softmax_update(m, ell, np.array([x]))
        states.append((float(m), float(ell)))
    dur = 1.4 * nb + 1.0
    c = Canvas(800, 330, "A block of queries stays on chip while keys and values stream past",
               uid="labatt-open", description=(
                   f"Animation. Top: the HBM holds K and V split into {nb} blocks. Bottom: the "
                   "on-chip memory of one program holds a block of Q, the running max m, the "
                   "running sum l and the output accumulator. Each step one K/V block moves "
                   "into the chip, a block of scores is computed and discarded, and m and l "
                   "update; when the max grows, l and the accumulator are rescaled by "
                   "exp(m_old - m_new). The N x N score matrix never reaches HBM."))
    mem, acc, comp = PALETTE["memory"], PALETTE["accent"], PALETTE["compute"]
    c.box(20, 20, 760, 90, "", color=mem, fill_opacity=0.06)
    c.text(34, 36, "HBM", anchor="start", size=13, weight="700", fill=mem)
    bw = 100
    xs = [70 + i * (bw + 14) for i in range(nb)]
    for i, x in enumerate(xs):
        c.box(x, 48, bw, 48, f"K{i + 1}, V{i + 1}", color=mem, size=13)
    c.box(20, 150, 760, 150, "", color=comp, fill_opacity=0.05)
    c.text(34, 166, "on chip (one program)", anchor="start", size=13, weight="700", fill=comp)
    c.box(40, 185, 120, 90, "Q block", sublabel="loaded once", color=acc, size=13)
    c.box(190, 185, 150, 90, "", color=mem, fill_opacity=0.08)
    c.text(265, 200, "current K, V block", size=12, fill=MUTED)
    c.box(370, 185, 120, 90, "S = Q K^T", sublabel="scores, discarded", color=comp, size=13)
    c.box(520, 185, 240, 90, "", color=acc, fill_opacity=0.06)
    c.text(640, 200, "running state", size=12, fill=MUTED)
    c.mark_animated()
    step = 1.4
    for i, x in enumerate(xs):
        t0 = (0.4 + i * step) / dur
        t1 = (0.4 + i * step + 0.8) / dur
        t2 = min((0.4 + (i + 1) * step) / dur, 0.999)
        # the block travels from HBM into the chip, then fades
        anim_x = Canvas.animate("x", [x, x, 215, 215], key_times=[0, t0, t1, 1], dur_s=dur)
        anim_y = Canvas.animate("y", [48, 48, 215, 215], key_times=[0, t0, t1, 1], dur_s=dur)
        anim_o = Canvas.animate("opacity", [0, 0, 0.9, 0.9, 0, 0],
                                key_times=[0, t0, t0 + 0.01, t2 - 0.01, t2, 1], dur_s=dur)
        c.rect(x, 48, bw, 48, fill=mem, stroke="none", opacity=0, rx=6,
               children=anim_x + anim_y + anim_o)
        mi, li = states[i]
        grew = i == 0 or s[i] > states[i - 1][0]
        # the state stays on screen until the next block's state replaces it
        t3 = min((0.4 + (i + 1) * step + 0.8) / dur, 0.999) if i < nb - 1 else 0.999
        show = Canvas.animate("opacity", [0, 0, 1, 1, 0, 0],
                              key_times=[0, t1, t1 + 0.001, t3 - 0.001, t3, 1], dur_s=dur)
        c.text(640, 225, f"after block {i + 1}: m = {mi:.2f}, l = {li:.2f}", size=13,
               weight="600", children=show)
        note = ("max grew: rescale l and acc by exp(m_old - m_new)" if grew and i
                else ("first block: m = its max" if i == 0 else "max unchanged: no rescale"))
        c.text(640, 252, note, size=11.5, fill=acc if grew and i else MUTED, children=show)
    c.text(400, 318, "Click to pause. Only Q, K, V and O cross the HBM boundary; the scores "
                     "live in registers for one step.", size=12, fill=MUTED)
    return c.figure()


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

    Each panel is a list of rows from :func:`helpers.labs.attention.point_rows` (one head
    dimension and mask); missing implementations are skipped.
    """
    if not panels:
        raise ValueError("panels must name at least one panel")
    fig, axes = new_figure(1, len(panels), width_in=max(6.0, 3.4 * len(panels) + 0.6),
                           height_in=3.6, sharey=True)
    for ax, (name, rows) in zip(np.atleast_1d(axes), panels.items()):
        for impl, label in IMPL_LABELS.items():
            pts = [(r["seq_len"], r[f"{impl}_flop_per_s"]) for r in rows
                   if r.get(f"{impl}_flop_per_s")]
            if pts:
                x, y = zip(*pts)
                ax.plot(x, np.array(y) / 1e12, "o-", ms=4, lw=1.4, color=_COLORS[impl],
                        label=label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_xlabel("sequence length N")
        ax.set_title(name, fontsize=10)
    np.atleast_1d(axes)[0].set_ylabel("TFLOP/s (useful FLOP)")
    np.atleast_1d(axes)[0].legend(fontsize=8.5)
    fig.suptitle(title, fontsize=11)
    plt.close(fig)
    return fig
