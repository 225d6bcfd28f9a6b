"""Figures of the page "GPU memory optimization" ({ref}`sec-memory-optimization`).

* :func:`opening_animation`: a warp's 32 threads send their addresses to memory; the sectors
  they touch light up. Top: neighbouring elements (coalesced). Bottom: a stride.
* :func:`structure_diagram`: registers, shared memory (banks) and L1, L2, HBM, with the unit
  each level moves.
* Plots (matplotlib, the book's style): :func:`request_figure` (one request's sectors),
  :func:`sectors_figure` (sectors and efficiency against stride), :func:`bank_figure`
  (distinct words per bank), :func:`cpu_stride_figure` (the CPU check).

Every number drawn is computed from the arguments through :mod:`helpers.models.memory_access`;
none is typed here.

Used by: chapters/memory-optimization.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import specs, units
from ..models import memory_access as ma
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "request_figure", "sectors_figure",
           "bank_figure", "cpu_stride_figure"]

MUTED_HEX = "#59636e"


# --- SVG: opening animation ----------------------------------------------------------------

def _panel(c: Canvas, *, y: float, stride: int, b: int, dur: float, label: str,
           x0: float = 48.0, width: float = 704.0) -> None:
    """One warp request: 32 thread squares at ``y``, memory (its sectors) at ``y + 92``."""
    n = ma.WARP_SIZE
    seg = ma.SECTOR_BYTES
    addrs = ma.warp_addresses_bytes(stride_elements=stride, bytes_per_element=b)
    n_sec = ma.sectors_per_request(stride_elements=stride, bytes_per_element=b)
    eta = ma.strided_efficiency(stride_elements=stride, bytes_per_element=b)
    span = int(addrs[-1]) + b
    span = -(-span // seg) * seg                      # whole sectors
    px = width / span                                 # pixels per byte
    mem, acc = PALETTE["memory"], PALETTE["accent"]
    tw = width / n
    c.text(x0, y - 14, label, anchor="start", size=13, weight="600")
    c.text(x0 + width, y - 14,
           f"{n_sec} sectors moved, {n_sec * seg:,} B for {n * b:,} B used: "
           f"{100 * eta:.3g} % efficient",
           anchor="end", size=12.5, fill=acc, weight="600")
    for t in range(n):
        c.rect(x0 + t * tw + 1, y, tw - 2, 18, fill=PALETTE["compute"], stroke="none", rx=2,
               opacity=0.75)
    ym = y + 92
    c.rect(x0, ym, width, 26, fill="none", stroke=MUTED, stroke_width=1, rx=2)
    touched = set()
    for a in addrs:
        touched.update(range(int(a) // seg, (int(a) + b - 1) // seg + 1))
    t_light = 0.55  # key time at which the touched sectors light up
    for k in range(span // seg):
        x = x0 + k * seg * px
        if k in touched:
            glow = Canvas.animate("opacity", [0.08, 0.08, 0.7, 0.7, 0.08],
                                  key_times=[0, t_light, t_light + 0.05, 0.95, 1], dur_s=dur)
            c.rect(x, ym, seg * px, 26, fill=mem, stroke="none", rx=0, opacity=0.08,
                   children=glow)
        c.line(x, ym, x, ym + 26, stroke=MUTED, width=0.6)
    for a in addrs:  # the bytes the threads asked for
        c.rect(x0 + int(a) * px, ym + 6, max(b * px, 1.2), 14, fill=acc, stroke="none", rx=0,
               opacity=0.9)
    c.mark_animated()
    for t, a in enumerate(addrs):
        x_from, x_to = x0 + (t + 0.5) * tw, x0 + (int(a) + b / 2) * px
        begin = 0.01 * t
        c.raw(f'<circle r="3" fill="{PALETTE["compute"]}" opacity="0">'
              f'<animateMotion path="M{x_from:.1f},{y + 20} L{x_to:.1f},{ym - 2}" dur="{dur:g}s" '
              f'keyPoints="0;0;1;1" keyTimes="0;{begin:.2f};{0.45 + begin:.2f};1" '
              f'calcMode="linear" repeatCount="indefinite"/>'
              f'<animate attributeName="opacity" values="0;1;1;0;0" '
              f'keyTimes="0;{begin + 0.01:.2f};{0.45 + begin:.2f};{0.5 + begin:.2f};1" '
              f'dur="{dur:g}s" repeatCount="indefinite"/></circle>')
    c.text(x0, ym + 40, f"memory: {span:,} bytes, drawn as {seg}-byte sectors",
           anchor="start", size=11.5, fill=MUTED)


def opening_animation(*, stride_elements: int = 8, bytes_per_element: int = 4) -> Figure:
    """Two warp requests, animated: 32 threads read 4-byte elements side by side (top) and
    ``stride_elements`` apart (bottom); every sector holding a requested byte lights up."""
    n_sec = ma.sectors_per_request(stride_elements=stride_elements,
                                   bytes_per_element=bytes_per_element)
    c = Canvas(800, 372, "A warp's loads are served in 32-byte sectors", uid="mem-open",
               description=(
                   f"Animated diagram. Two rows of 32 threads each load one "
                   f"{bytes_per_element}-byte element. In the top row neighbouring threads read "
                   f"neighbouring elements and "
                   f"{ma.sectors_per_request(stride_elements=1, bytes_per_element=bytes_per_element)}"
                   f" sectors light up. In the bottom row the threads are {stride_elements} "
                   f"elements apart and {n_sec} sectors light up for the same useful bytes."))
    dur = 4.0
    _panel(c, y=36, stride=1, b=bytes_per_element, dur=dur,
           label="coalesced: thread t reads element t")
    _panel(c, y=200, stride=stride_elements, b=bytes_per_element, dur=dur,
           label=f"strided: thread t reads element {stride_elements}·t")
    c.text(400, 362, "Click to pause. Magenta: bytes the threads asked for. Blue: sectors moved.",
           size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram ----------------------------------------------------------------

def structure_diagram(gpu: specs.GPUSpec = specs.H200_SXM) -> Figure:
    """Registers, shared memory (32 banks) and L1 on each SM, then L2 and HBM; the arrows say
    in which unit each level moves data."""
    c = Canvas(800, 330, "Where a load goes, and the unit each level moves",
               uid="mem-struct", description=(
                   f"Diagram. Inside each SM: registers (private to a thread), shared memory "
                   f"in {ma.N_BANKS} banks of {ma.BANK_WORD_BYTES} bytes, and the L1 cache. "
                   f"L1 and L2 hold {ma.LINE_BYTES}-byte lines of {ma.SECTOR_BYTES}-byte "
                   f"sectors; the L2 is shared by all SMs; HBM ({units.fmt_bytes(gpu.hbm_bytes)}"
                   f", {units.fmt_rate(gpu.hbm_bytes_per_s, 'B/s')} on the {gpu.name}) is "
                   f"read and written in sectors."))
    comp, mem, q, acc = PALETTE["compute"], PALETTE["memory"], PALETTE["queue"], PALETTE["accent"]
    c.box(20, 30, 430, 190, "", color=comp, fill_opacity=0.05)
    c.text(235, 46, f"one SM (of {gpu.sm_count} on the {gpu.name})", size=13, weight="600")
    c.box(40, 64, 180, 60, "registers", sublabel="private to each thread", color=comp)
    c.box(250, 64, 180, 60, "shared memory", sublabel=f"{ma.N_BANKS} banks × {ma.BANK_WORD_BYTES} B",
          color=acc)
    c.box(40, 150, 390, 54, "L1 cache", sublabel=f"{ma.LINE_BYTES}-B lines = 4 × "
                                                 f"{ma.SECTOR_BYTES}-B sectors", color=mem)
    # bank strip inside shared memory
    for k in range(ma.N_BANKS):
        c.rect(254 + k * 5.4, 116, 4.4, 5, fill=acc, stroke="none", rx=0,
               opacity=0.4 + 0.5 * (k % 2))
    c.box(500, 80, 270, 70, "L2 cache", sublabel="shared by all SMs; lines and sectors",
          color=mem)
    c.box(500, 220, 270, 80, f"HBM: {units.fmt_bytes(gpu.hbm_bytes)}",
          sublabel=f"{units.fmt_rate(gpu.hbm_bytes_per_s, 'B/s')}, moved in "
                   f"{ma.SECTOR_BYTES}-B sectors", color=mem)
    c.line(130, 126, 130, 148, stroke=MUTED, both=True)
    c.line(340, 126, 340, 148, stroke=MUTED, both=True)
    c.line(430, 177, 498, 125, stroke=MUTED, both=True)
    c.line(635, 150, 635, 218, stroke=MUTED, both=True)
    c.text(462, 140, "sectors", size=11.5, fill=MUTED, anchor="start")
    c.text(645, 185, "sectors", size=11.5, fill=MUTED, anchor="start")
    c.text(235, 248, "a warp = 32 threads issuing one load together", size=12.5, weight="600")
    c.text(235, 270, f"global loads: count the {ma.SECTOR_BYTES}-byte sectors touched",
           size=12, fill=MUTED)
    c.text(235, 290, "shared memory: count the distinct words per bank", size=12, fill=MUTED)
    c.text(235, 310, "registers: no transactions, but a limited number per SM", size=12,
           fill=MUTED)
    return c.figure()


# --- matplotlib plots ----------------------------------------------------------------------

def request_figure(stride_elements: int, bytes_per_element: int, base_bytes: int = 0):
    """One warp request drawn as memory: requested bytes (orange) and sectors moved (blue)."""
    addrs = ma.warp_addresses_bytes(stride_elements=stride_elements,
                                    bytes_per_element=bytes_per_element, base_bytes=base_bytes)
    seg = ma.SECTOR_BYTES
    n_sec = ma.sectors_per_request(stride_elements=stride_elements,
                                   bytes_per_element=bytes_per_element, base_bytes=base_bytes)
    eta = ma.strided_efficiency(stride_elements=stride_elements,
                                bytes_per_element=bytes_per_element, base_bytes=base_bytes)
    lo = (int(addrs.min()) // seg) * seg
    hi = -(-(int(addrs.max()) + bytes_per_element) // seg) * seg
    fig, ax = new_figure(width_in=7.0, height_in=1.9)
    touched = set()
    for a in addrs:
        touched.update(range(int(a) // seg, (int(a) + bytes_per_element - 1) // seg + 1))
    for k in range(lo // seg, hi // seg):
        ax.add_patch(_rect(k * seg, 0, seg, 1, COLORS["memory"], 0.55 if k in touched else 0.06))
    for a in addrs:
        ax.add_patch(_rect(int(a), 0.25, bytes_per_element, 0.5, COLORS["accent"], 0.95))
    for k in range(lo // seg, hi // seg + 1):
        ax.axvline(k * seg, color=MUTED_HEX, lw=0.4)
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("byte address")
    ax.set_title(f"stride {stride_elements} × {bytes_per_element} B: {n_sec} sectors "
                 f"({n_sec * seg} B) for {ma.WARP_SIZE * bytes_per_element if stride_elements else bytes_per_element} B used, "
                 f"efficiency {eta:.1%}", fontsize=10.5)
    return fig


def _rect(x, y, w, h, color, alpha):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=color, alpha=alpha, edgecolor="none")


def sectors_figure(strides: Sequence[int] = tuple(range(1, 33)),
                   bytes_per_element: Sequence[int] = (2, 4, 8), *,
                   highlight: int | None = None):
    """Sectors per warp request (left) and coalescing efficiency (right) against stride."""
    fig, (ax1, ax2) = new_figure(1, 2, width_in=7.2, height_in=3.0)
    s = np.asarray(strides, dtype=int)
    for b, color in zip(bytes_per_element, (COLORS["memory"], COLORS["compute"], COLORS["host"],
                                           COLORS["network"])):
        n = [ma.sectors_per_request(stride_elements=int(k), bytes_per_element=b) for k in s]
        e = [ma.strided_efficiency(stride_elements=int(k), bytes_per_element=b) for k in s]
        ax1.plot(s, n, "o-", ms=3, color=color, label=f"{b}-byte elements")
        ax2.plot(s, np.asarray(e) * 100, "o-", ms=3, color=color)
    if highlight is not None:
        for ax in (ax1, ax2):
            ax.axvline(highlight, color=MUTED_HEX, ls=":", lw=1.2)
    ax1.set_xlabel("stride (elements)")
    ax1.set_ylabel("sectors per warp request")
    ax1.set_title("Traffic of one request")
    ax1.legend(loc="lower right")
    ax2.set_xlabel("stride (elements)")
    ax2.set_ylabel("useful bytes / moved bytes (%)")
    ax2.set_ylim(0, 105)
    ax2.set_title("Coalescing efficiency")
    return fig


def bank_figure(addresses_bytes: Sequence[int], *, title: str = ""):
    """Distinct words requested from each of the 32 banks by one warp; the tallest bar is
    the number of passes (the conflict degree)."""
    a = np.asarray(addresses_bytes, dtype=np.int64)
    words = np.unique(a // ma.BANK_WORD_BYTES)
    counts = np.bincount(words % ma.N_BANKS, minlength=ma.N_BANKS)
    degree = ma.bank_conflict_degree(a)
    fig, ax = new_figure(width_in=7.0, height_in=2.4)
    ax.bar(np.arange(ma.N_BANKS), counts, color=COLORS["accent"], width=0.8)
    ax.axhline(degree, color=MUTED_HEX, ls="--", lw=1)
    ax.set_xlabel("bank")
    ax.set_ylabel("distinct words")
    ax.set_xlim(-0.8, ma.N_BANKS - 0.2)
    ax.set_ylim(0, max(degree, 1) * 1.25 + 0.5)
    ax.set_title(title or f"{degree}-way: the request takes {degree} pass"
                          f"{'es' if degree > 1 else ''}", fontsize=10.5)
    return fig


def cpu_stride_figure(strides: Sequence[int], measured_slowdown: Sequence[float], *,
                      bytes_per_element: int, line_bytes: int = 64):
    """Measured time per useful element against stride, relative to stride 1 (dots), and the
    line model's traffic amplification (line) for ``line_bytes`` lines."""
    s = np.asarray(strides, dtype=int)
    m = np.asarray(measured_slowdown, dtype=float)
    if s.shape != m.shape or s.size == 0 or np.any(m <= 0):
        raise ValueError("strides and measured_slowdown must be equal-length, non-empty, > 0")
    fine = np.unique(np.geomspace(1, s.max(), 200).astype(int))
    pred = [ma.bytes_moved_per_useful_byte(stride_elements=int(k),
                                           bytes_per_element=bytes_per_element,
                                           segment_bytes=line_bytes) for k in fine]
    fig, ax = new_figure(width_in=6.4, height_in=3.2)
    ax.plot(fine, pred, color=COLORS["memory"], label=f"model: {line_bytes}-byte lines")
    ax.plot(s, m, "o", color=COLORS["accent"], label="measured (this machine)")
    ax.axvline(line_bytes / bytes_per_element, color=MUTED_HEX, ls=":", lw=1.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("stride (elements)")
    ax.set_ylabel("time per useful element\n(relative to stride 1)")
    ax.set_title("Strided read on the CPU")
    ax.legend(loc="upper left")
    return fig
