"""Figures of the page "System calls and profiling" ({ref}`sec-syscalls-and-profiling`).

* :func:`opening_animation`: a program reads a file in small pieces, crossing into the kernel
  for every one; then in large pieces, crossing rarely.
* :func:`structure_diagram`: user space, the system-call boundary, the kernel, and where each
  kind of tool looks (counters, tracers, samplers).
* :func:`chunked_read_figure` (matplotlib): measured time to read a file against the chunk
  size, with the model.

Every number drawn comes from the arguments.

Used by: foundations/syscalls-and-profiling.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from .style import COLORS, new_figure
from .svg import BACKGROUND, MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "chunked_read_figure"]


def opening_animation() -> Figure:
    """Many small reads cross the boundary often; a few large reads cross it rarely."""
    c = Canvas(760, 270, "Every system call crosses into the kernel and back",
               uid="sys-open", description=(
                   "Animated diagram. Two horizontal bands: user space above, the kernel "
                   "below, separated by the system-call boundary. On the left, a program "
                   "reading a file in small pieces: a dot crosses down into the kernel and "
                   "back up many times, each crossing a fixed cost. On the right, the same "
                   "file read in large pieces: the dot crosses only twice, carrying more "
                   "each time."))
    host, mem, acc = PALETTE["host"], PALETTE["memory"], PALETTE["accent"]
    c.rect(20, 40, 720, 80, fill=host, stroke="none", opacity=0.12, rx=8)
    c.rect(20, 150, 720, 80, fill=mem, stroke="none", opacity=0.12, rx=8)
    c.text(36, 58, "user space: the program", size=12, anchor="start", fill=MUTED)
    c.text(36, 216, "kernel: the page cache, the file system", size=12, anchor="start",
           fill=MUTED)
    c.line(20, 135, 740, 135, stroke=acc, dash="6 4", width=1.6)
    c.rect(300, 126, 160, 18, fill=BACKGROUND, stroke="none", rx=3)
    c.text(380, 135, "system-call boundary", size=11.5, fill=acc, weight="600",
           baseline="central")
    dur = 6.0
    small = " ".join(f"L{60 + 28 * k},80 L{74 + 28 * k},190 L{88 + 28 * k},80" for k in range(10))
    c.moving_dot(f"M60,80 {small}", dur_s=dur, color=acc, r=6)
    big = "M470,80 L530,190 L590,80 L650,190 L710,80"
    c.moving_dot(big, dur_s=dur, color=mem, r=9)
    c.text(200, 252, "small reads: many crossings", size=12.5, weight="600")
    c.text(590, 252, "large reads: few crossings", size=12.5, weight="600")
    c.text(380, 20, "Click to pause.", size=11, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """User space, the boundary, the kernel, and the observation tools."""
    c = Canvas(780, 330, "Where profiling tools look", uid="sys-struct", description=(
        "Diagram. Top: user space, with the application, the Python interpreter and the C "
        "library. Middle: the system-call boundary. Bottom: the kernel, with the file "
        "system, the page cache, the network stack and the scheduler. On the right, three "
        "kinds of tool: counters (/proc/self/io, /proc/self/status) read totals the kernel "
        "keeps; tracers (strace, cProfile) record every event and slow the program; samplers "
        "(perf, py-spy) look at the program at intervals and cost little."))
    host, mem, acc, q = PALETTE["host"], PALETTE["memory"], PALETTE["accent"], PALETTE["queue"]
    c.rect(20, 20, 500, 110, fill="none", stroke=host, stroke_width=1.4, rx=10, dash="6 4")
    c.text(60, 36, "user space", size=12, fill=MUTED)
    for i, name in enumerate(("application", "Python interpreter", "C library")):
        c.box(36 + i * 160, 52, 150, 56, name, color=host, size=12)
    c.line(20, 150, 520, 150, stroke=acc, dash="6 4", width=1.6)
    c.rect(120, 141, 300, 18, fill=BACKGROUND, stroke="none", rx=3)
    c.text(270, 150, "system calls: read, write, mmap, futex, ...", size=11.5, fill=acc,
           baseline="central", weight="600")
    c.rect(20, 170, 500, 140, fill="none", stroke=mem, stroke_width=1.4, rx=10, dash="6 4")
    c.text(50, 186, "kernel", size=12, fill=MUTED)
    for i, name in enumerate(("file system", "page cache", "network stack", "scheduler")):
        c.box(36 + (i % 2) * 240, 200 + (i // 2) * 52, 220, 42, name, color=mem, size=12)
    tools = [("counters", "/proc/self/io: totals", 40), ("tracers", "strace, cProfile: every event", 140),
             ("samplers", "perf, py-spy: every interval", 240)]
    for name, sub, y in tools:
        c.box(560, y, 200, 70, name, sublabel=sub, color=q, size=12)
    c.line(558, 75, 522, 230, stroke=q, arrow=True)
    c.line(558, 175, 522, 150, stroke=q, arrow=True)
    c.line(558, 275, 522, 80, stroke=q, arrow=True, dash="4 3")
    return c.figure()


def chunked_read_figure(chunks_bytes: Sequence[float], times_s: Sequence[float], *,
                        model_s: Sequence[float] | None = None, ax=None):
    """Measured time to read a file against the chunk size (log-log), with the model."""
    fig, ax = new_figure(height_in=3.2) if ax is None else (ax.figure, ax)
    c = np.asarray(chunks_bytes, dtype=float)
    ax.loglog(c, np.asarray(times_s) / units.ms, "o", color=COLORS["memory"], ms=6, base=2,
              label="measured here (median)")
    if model_s is not None:
        ax.loglog(c, np.asarray(model_s) / units.ms, "--", color=COLORS["accent"], base=2,
                  label="model: calls x t_sys + N / B")
    ax.set_xlabel("bytes per read call")
    ax.set_ylabel("time to read the file (ms)")
    ax.legend(loc="upper right")
    return fig
