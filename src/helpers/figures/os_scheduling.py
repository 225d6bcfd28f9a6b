"""Figures of the page "OS scheduling and sharing a GPU" ({ref}`sec-os-scheduling`).

* :func:`opening_animation`: two cores, five runnable threads taking turns in slices; the
  request thread (accent) wakes and waits for a turn.
* :func:`structure_diagram`: per-core run queues of the fair scheduler, and the three ways to
  share a GPU (time slicing, MPS, MIG).
* :func:`wakeup_figure` (matplotlib): measured wake-up delay against runnable threads, with
  the round-robin bound.

Every number drawn comes from the arguments.

Used by: foundations/os-scheduling.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "wakeup_figure"]


def opening_animation(*, n_cores: int = 2, n_busy: int = 4, slice_ms: float = 1.4) -> Figure:
    """Busy threads take turns on ``n_cores`` cores; a woken request thread waits for a turn."""
    c = Canvas(760, 260, "Busy threads take turns; a woken thread waits for its slice",
               uid="sched-open", description=(
                   f"Animated timeline of {n_cores} cores. {n_busy} CPU-bound threads take "
                   f"turns in slices of {slice_ms:g} ms, drawn as coloured blocks. Part way "
                   "through, a request-handling thread wakes up (marked by a pink arrow) and "
                   "cannot run until a core finishes its current slice; its wait is shaded."))
    host, acc = PALETTE["host"], PALETTE["accent"]
    x0, lane_h, y0, n_slices, w = 110, 50, 60, 8, 70
    dur = 8.0
    c.text(380, 22, f"{n_busy} busy threads + 1 request thread on {n_cores} cores "
           f"(slice {slice_ms:g} ms)", size=14, weight="600")
    tints = [0.35, 0.55, 0.75, 0.95]
    wake_slot = 3
    for core in range(n_cores):
        y = y0 + core * lane_h
        c.text(x0 - 12, y + lane_h / 2 - 5, f"core {core}", size=12, anchor="end", fill=MUTED)
        for k in range(n_slices):
            t = (core + k * n_cores) % (n_busy + 1)
            is_req = core == 0 and k == wake_slot + 1
            col = acc if is_req else host
            op = 0.9 if is_req else tints[t % len(tints)]
            label = "req" if is_req else f"T{(core + k * n_cores) % n_busy}"
            kt = k / n_slices
            grow = Canvas.animate("width", [0, 0, w - 4, w - 4, 0], dur_s=dur,
                                  key_times=[0, kt, min(kt + 1 / n_slices, 0.998), 0.999, 1])
            c.rect(x0 + k * w, y, 0, lane_h - 14, fill=col, stroke="none", rx=3, opacity=op,
                   children=grow)
            show = Canvas.animate("opacity", [0, 0, 1, 1, 0], dur_s=dur,
                                  key_times=[0, kt, min(kt + 0.02, 0.997), 0.998, 1])
            c.text(x0 + k * w + w / 2 - 2, y + (lane_h - 14) / 2, label, size=11,
                   children=show)
    # wake-up marker and wait
    xw = x0 + wake_slot * w + w * 0.35
    xr = x0 + (wake_slot + 1) * w
    kt = (wake_slot + 0.35) / n_slices
    c.line(xw, y0 - 16, xw, y0 - 2, stroke=acc, width=2, arrow=True)
    c.text(xw, y0 - 24, "request wakes", size=11, fill=acc)
    wait = Canvas.animate("width", [0, 0, xr - xw, xr - xw, 0], dur_s=dur,
                          key_times=[0, kt, (wake_slot + 1) / n_slices, 0.999, 1])
    c.rect(xw, y0 + n_cores * lane_h - 6, 0, 10, fill=acc, stroke="none", rx=2, opacity=0.4,
           children=wait)
    c.text(x0 + n_slices * w / 2, y0 + n_cores * lane_h + 22,
           "shaded: the request's wait for a core (up to one slice per thread ahead of it)",
           size=11.5, fill=MUTED)
    c.text(380, 240, "Click to pause.", size=11.5, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """Run queues of the fair scheduler, and the three ways to share one GPU."""
    c = Canvas(800, 330, "Who runs where: CPU run queues and shared GPUs", uid="sched-struct",
               description=(
                   "Diagram in two halves. Left: the Linux fair scheduler keeps one run queue "
                   "per core; threads wait in it ordered by their virtual deadline, weighted by "
                   "nice value; a woken thread joins a queue; the thread at the front runs for "
                   "a slice. Right: three ways for several processes to share one GPU: time "
                   "slicing (one process at a time, in turns), MPS (kernels of several "
                   "processes run at once on shared SMs), and MIG (the GPU cut into isolated "
                   "instances, each with its own SMs and memory)."))
    host, acc, q, cmp, mem = (PALETTE["host"], PALETTE["accent"], PALETTE["queue"],
                              PALETTE["compute"], PALETTE["memory"])
    c.text(190, 22, "CPU: one run queue per core", size=13, weight="600")
    for core in range(2):
        y = 50 + core * 120
        c.box(30, y, 90, 60, f"core {core}", sublabel="running", color=host, size=12)
        c.text(200, y - 8, "run queue (by virtual deadline)", size=10.5, fill=MUTED)
        for i in range(3):
            c.box(140 + i * 64, y + 10, 56, 40, f"T{core * 3 + i}", color=q, size=11,
                  fill_opacity=0.2)
        c.line(138, y + 30, 122, y + 30, stroke=q, arrow=True)
    c.box(140, 290, 150, 32, "woken thread", color=acc, size=11.5)
    c.line(215, 288, 215, 232, stroke=acc, arrow=True)
    c.text(250, 266, "nice sets weight", size=10.5, fill=MUTED, anchor="start")
    c.line(400, 20, 400, 320, stroke=PALETTE["neutral"], dash="3 4")
    c.text(600, 22, "GPU: three ways to share one", size=13, weight="600")
    c.box(430, 45, 340, 70, "", color=cmp)
    c.text(600, 60, "time slicing: one process at a time, in turns", size=11.5)
    for i, col in enumerate((cmp, mem, host, cmp, mem, host)):
        c.rect(445 + i * 52, 74, 46, 26, fill=col, stroke="none", opacity=0.5)
    c.box(430, 130, 340, 70, "", color=cmp)
    c.text(600, 145, "MPS: kernels of several processes share the SMs", size=11.5)
    for i in range(12):
        col = (cmp, mem, host)[i % 3]
        c.rect(445 + i * 26, 160, 22, 26, fill=col, stroke="none", opacity=0.5)
    c.box(430, 215, 340, 100, "", color=cmp)
    c.text(600, 230, "MIG: isolated instances (SMs + memory each)", size=11.5)
    for i, (wd, col) in enumerate(((130, cmp), (90, mem), (90, host))):
        x = 445 + sum((130, 90, 90)[:i]) + 6 * i
        c.rect(x, 245, wd, 60, fill=col, stroke=col, opacity=0.35)
    return c.figure()


def wakeup_figure(runnable: Sequence[int], p50_s: Sequence[float], p99_s: Sequence[float],
                  bound_s: Sequence[float], *, n_cores: int, ax=None):
    """Measured wake-up delay (median, p99) against runnable threads, with the bound."""
    fig, ax = new_figure(height_in=3.2) if ax is None else (ax.figure, ax)
    n = np.asarray(runnable, dtype=float)
    ax.semilogy(n, np.asarray(p50_s) / units.ms, "o-", color=COLORS["host"], label="median")
    ax.semilogy(n, np.asarray(p99_s) / units.ms, "s-", color=COLORS["queue"], label="99th percentile")
    b = np.asarray(bound_s, dtype=float)
    ok = b > 0
    ax.semilogy(n[ok], b[ok] / units.ms, "--", color=COLORS["accent"],
                label="round-robin bound (ceil(n/c) - 1) q")
    ax.axvline(n_cores, color=COLORS["neutral"], ls=":", lw=1.2)
    ax.annotate(f"cores: {n_cores}", (n_cores, 0.95), xycoords=("data", "axes fraction"),
                xytext=(4, 0), textcoords="offset points", fontsize=9, color=COLORS["neutral"])
    ax.set_xlabel("runnable threads (busy processes + the sleeper)")
    ax.set_ylabel("wake-up delay (ms)")
    ax.legend(loc="upper left")
    return fig
