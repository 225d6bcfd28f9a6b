"""Figures of the page "Kernel fusion, softmax and attention" ({ref}`sec-fusion-and-attention`).

* :func:`opening_animation`: one block of queries held on chip while the blocks of keys and
  values stream past it; the running max and sum of the online softmax update at each step
  (also the opening of the lab {ref}`sec-lab-attention`);
* :func:`structure_diagram`: the page's argument, from fusing an elementwise chain to
  IO-aware attention and recomputation;
* :func:`traffic_figure`: HBM bytes of standard attention and FlashAttention against sequence
  length, for a head dimension and an on-chip memory size (the page's explorer);
* :func:`fusion_figure`: bytes of an unfused and a fused elementwise chain (or softmax).

Used by: chapters/fusion-and-attention.md.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import ScalarFormatter

from .. import units
from ..models import attention as model
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "traffic_figure", "fusion_figure"]


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
               uid="fus-open", description=(
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
    """The page's argument: fusion, then the online softmax, then IO-aware attention."""
    c = Canvas(800, 300, "From fusing an elementwise chain to IO-aware attention",
               uid="fus-struct", description=(
                   "Diagram in four steps. One: an elementwise chain run as k kernels moves 2k "
                   "passes over memory, fused it moves 2. Two: a softmax needs a row's max and "
                   "sum before it can normalize; the online softmax gets both in one pass by "
                   "rescaling. Three: attention is a matrix product, a softmax and a matrix "
                   "product; with the online softmax the three fuse into one kernel that never "
                   "writes the N x N scores (FlashAttention). Four: the backward pass needs the "
                   "probabilities; recomputing them from Q and K costs FLOP, storing them costs "
                   "bytes, and the ridge point of the roofline decides."))
    mem, acc, comp, q = PALETTE["memory"], PALETTE["accent"], PALETTE["compute"], PALETTE["queue"]
    steps = [("1. fuse a chain", "k kernels: 2k passes", "one kernel: 2 passes", mem),
             ("2. online softmax", "max, then sum: 2 passes", "running max and sum: 1", acc),
             ("3. IO-aware attention", "scores in HBM: 4N^2", "scores on chip: O(N^2 d^2/M)",
              comp),
             ("4. recompute or store", "store P: 2N^2 b bytes", "recompute: 2N^2 d FLOP", q)]
    w, gap = 182, 14
    for i, (title, before, after, color) in enumerate(steps):
        x = 12 + i * (w + gap)
        c.box(x, 30, w, 50, title, color=color, size=13.5)
        c.text(x + w / 2, 110, "before", size=11.5, fill=MUTED)
        c.box(x, 120, w, 44, before, color=PALETTE["neutral"], size=12, fill_opacity=0.08)
        c.text(x + w / 2, 190, "after", size=11.5, fill=MUTED)
        c.box(x, 200, w, 44, after, color=color, size=12, fill_opacity=0.12)
        if i < len(steps) - 1:
            c.line(x + w, 55, x + w + gap - 1, 55, stroke=MUTED, arrow=True)
    c.text(400, 276, "Each step trades a pass over memory for work on chip; the roofline "
                     "says when that pays.", size=12.5, fill=MUTED)
    return c.figure()


def traffic_figure(seq_len: int, head_dim: int, sram_bytes: float, *,
                   bytes_per_element: float = 2.0, mark: bool = True):
    """HBM bytes per head of standard attention and FlashAttention against sequence length.

    Standard attention from :func:`helpers.models.attention.standard_attention_hbm_bytes`;
    FlashAttention from :func:`~helpers.models.attention.flash_attention_hbm_bytes` with the
    block size of Algorithm 1 for an on-chip memory of ``sram_bytes``. ``seq_len`` is marked.
    """
    b = float(bytes_per_element)
    sram_elements = int(sram_bytes // b)
    _, bc = model.flash_block_sizes(sram_elements, head_dim)
    ns = np.unique(np.geomspace(256, 131072, 25).astype(int))
    std = [model.standard_attention_hbm_bytes(int(n), head_dim, b) for n in ns]
    fl = [model.flash_attention_hbm_bytes(int(n), head_dim, b, block_cols=bc) for n in ns]
    fig, ax = new_figure(width_in=6.4, height_in=3.6)
    ax.plot(ns, np.array(std) / units.MB, color=PALETTE["memory"], lw=2,
            label="standard (Algorithm 0)")
    ax.plot(ns, np.array(fl) / units.MB, color=PALETTE["accent"], lw=2,
            label=f"FlashAttention (B_c = {bc})")
    if mark:
        s = model.standard_attention_hbm_bytes(seq_len, head_dim, b)
        f = model.flash_attention_hbm_bytes(seq_len, head_dim, b, block_cols=bc)
        ax.plot([seq_len, seq_len], [f / units.MB, s / units.MB], "o", color="#59636e")
        ax.annotate(f"{s / f:.3g}x fewer bytes", (seq_len, f / units.MB),
                    textcoords="offset points", xytext=(8, -14), fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("HBM bytes per head (MB)")
    ax.set_title(f"d = {head_dim}, on-chip memory {sram_bytes / units.KiB:.0f} KiB, "
                 f"{b:g}-byte elements", fontsize=10)
    ax.legend(fontsize=9)
    plt.close(fig)
    return fig


def fusion_figure(sizes: Sequence[float], unfused_s: Sequence[float], fused_s: Sequence[float],
                  predicted_ratio: float, *, title: str):
    """Measured time of an unfused and a fused softmax per size, with the byte ratio drawn.

    ``sizes`` in bytes of the input; the measured ratio unfused/fused is plotted against the
    model's ``predicted_ratio`` (the ratio of bytes moved).
    """
    x = np.asarray(sizes, dtype=float)
    u, f = np.asarray(unfused_s, dtype=float), np.asarray(fused_s, dtype=float)
    if not (x.size and x.size == u.size == f.size) or np.any(u <= 0) or np.any(f <= 0):
        raise ValueError("need matching, positive sizes and times")
    fig, ax = new_figure(width_in=6.0, height_in=3.2)
    ax.plot(x / units.MiB, u / f, "o-", color=PALETTE["memory"], label="measured: unfused / fused")
    ax.axhline(predicted_ratio, color=PALETTE["accent"], ls="--",
               label=f"model: ratio of bytes, {predicted_ratio:.3g}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("input size (MiB)")
    ax.set_ylabel("time ratio")
    ax.set_ylim(0, max(float(np.max(u / f)), predicted_ratio) * 1.25)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=9)
    plt.close(fig)
    return fig
