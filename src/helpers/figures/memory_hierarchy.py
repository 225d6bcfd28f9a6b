"""Figures of the page "Caches and the memory hierarchy" ({ref}`sec-memory-hierarchy`).

* :func:`opening_animation`: loads fall through the hierarchy until a level holds their line;
  the deeper the level, the longer the trip.
* :func:`structure_diagram`: core, L1, L2, L3 and DRAM, with what each level is made of and
  who shares it.
* :func:`working_set_figure` (matplotlib): measured time per load against working set, with
  the AMAT model and the cache sizes the OS reports.
* :func:`line_probe_figure` (matplotlib): time per step against the offset of the second load.

Every number drawn comes from the arguments.

Used by: foundations/memory-hierarchy.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .. import units
from ..models import memory_hierarchy as mh
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "working_set_figure", "line_probe_figure"]

_LEVELS = ("L1", "L2", "L3", "DRAM")


def opening_animation() -> Figure:
    """Three loads, animated: one hits L1, one L2, one goes all the way to DRAM."""
    c = Canvas(760, 280, "A load falls through the hierarchy until a level holds its line",
               uid="memh-open", description=(
                   "Animated diagram. A core sits on the left; to its right, four boxes of "
                   "growing size: L1, L2, L3 and DRAM. Three loads leave the core in turn. The "
                   "first finds its line in L1 and returns at once; the second misses L1 and "
                   "returns from L2; the third misses every cache, travels to DRAM and returns "
                   "much later with a whole cache line, which is copied into each cache on the "
                   "way back."))
    host, mem, acc = PALETTE["host"], PALETTE["memory"], PALETTE["accent"]
    xs = [150, 270, 420, 590]
    widths = [80, 110, 130, 150]
    heights = [70, 110, 150, 200]
    c.box(20, 100, 100, 80, "core", color=host)
    for x, w, h, name, op in zip(xs, widths, heights, _LEVELS, (0.3, 0.22, 0.16, 0.1)):
        c.box(x, 140 - h / 2, w, h, name, color=mem, fill_opacity=op)
    c.text(380, 24, "nearer is smaller and faster; farther is larger and slower", size=12.5,
           fill=MUTED)
    dur = 6.0
    targets = [xs[0] + widths[0] / 2, xs[1] + widths[1] / 2, xs[3] + widths[3] / 2]
    colors = [PALETTE["host"], PALETTE["queue"], acc]
    for k, (tx, col) in enumerate(zip(targets, colors)):
        t0 = k / 3
        span = [0.06, 0.1, 0.14][k]  # the last trip ends before the cycle does
        y = 120 + 20 * k
        c.raw(f'<circle r="6" fill="{col}" opacity="0"><animateMotion path="M122,{y} L{tx},{y} '
              f'L122,{y}" dur="{dur}s" keyPoints="0;0;0.5;1;1" keyTimes="0;{t0:.3f};'
              f'{t0 + span:.3f};{t0 + 2 * span:.3f};1" calcMode="linear" '
              f'repeatCount="indefinite"/><animate attributeName="opacity" values="0;0;1;1;0;0" '
              f'keyTimes="0;{t0:.3f};{t0 + 0.005:.3f};{t0 + 2 * span:.3f};'
              f'{t0 + 2 * span + 0.005:.3f};1" dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    c.text(380, 262, "Click to pause. Each trip is a load; the third pays the full memory "
           "latency.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The levels of a CPU's memory hierarchy, what they are made of and who shares them."""
    c = Canvas(780, 300, "The memory hierarchy of one CPU socket", uid="memh-struct",
               description=(
                   "Diagram. Two cores, each with a private L1 data cache and a private L2. "
                   "Both share a last-level cache (L3) on the chip, which connects through the "
                   "memory controller to DRAM modules. Lines of 64 bytes move between levels. "
                   "Labels say the technology (SRAM on the chip, DRAM off it) and which levels "
                   "are private and which shared."))
    host, mem, net = PALETTE["host"], PALETTE["memory"], PALETTE["network"]
    for k, x in enumerate((30, 230)):
        c.box(x, 30, 160, 44, f"core {k}", sublabel="registers", color=host, size=12)
        c.box(x, 86, 160, 40, "L1 data", sublabel="private", color=mem, size=12,
              fill_opacity=0.26)
        c.box(x, 138, 160, 40, "L2", sublabel="private", color=mem, size=12, fill_opacity=0.18)
        c.line(x + 80, 74, x + 80, 86, stroke=mem, both=True)
        c.line(x + 80, 126, x + 80, 138, stroke=mem, both=True)
        c.line(x + 80, 178, x + 80, 192, stroke=mem, both=True)
    c.box(30, 192, 360, 40, "L3 (last-level cache)", sublabel="shared by all cores",
          color=mem, size=12, fill_opacity=0.12)
    c.rect(18, 20, 384, 222, fill="none", stroke=host, stroke_width=1.4, rx=10, dash="6 4")
    c.text(210, 256, "one chip: SRAM caches", size=12, fill=MUTED)
    c.box(540, 110, 200, 110, "DRAM", sublabel="main memory, off the chip", color=mem,
          fill_opacity=0.08)
    c.line(390, 212, 538, 170, stroke=net, width=2.2, both=True)
    c.text(462, 176, "memory bus", size=11.5, fill=MUTED)
    c.text(600, 50, "each arrow moves whole cache lines", size=12, fill=MUTED)
    c.text(600, 70, "farther levels: more bytes, more latency", size=12, fill=MUTED)
    return c.figure()


def working_set_figure(working_sets_bytes: Sequence[float], latencies_s: Sequence[float], *,
                       cache_bytes: Mapping[str, float] | None = None,
                       model_latencies: tuple[Sequence[float], float] | None = None, ax=None):
    """Time per dependent load against working set (log x), with the reported cache sizes.

    ``cache_bytes`` maps level names ("L1d", "L2", "L3") to sizes drawn as vertical lines;
    ``model_latencies`` = (per-level latencies, memory latency) draws :func:`chase_latency_s`.
    """
    fig, ax = new_figure(height_in=3.6) if ax is None else (ax.figure, ax)
    ws = np.asarray(working_sets_bytes, dtype=float)
    lat = np.asarray(latencies_s, dtype=float)
    ax.semilogx(ws / units.KiB, lat / units.ns, "o-", color=COLORS["memory"], ms=5,
                label="measured here")
    levels = {k: v for k, v in (cache_bytes or {}).items() if k in ("L1d", "L2", "L3")}
    for name, size in levels.items():
        ax.axvline(size / units.KiB, color=COLORS["neutral"], ls=":", lw=1.2)
        ax.annotate(f"{name} {units.fmt_bytes(size, binary=True)}", (size / units.KiB, 0.97),
                    xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=8.5, color=COLORS["neutral"])
    if model_latencies is not None and levels:
        per_level, mem = model_latencies
        grid = np.logspace(np.log10(ws.min()), np.log10(ws.max()), 200)
        sizes = list(levels.values())
        pred = [mh.chase_latency_s(w, sizes, per_level, mem) for w in grid]
        ax.semilogx(grid / units.KiB, np.asarray(pred) / units.ns, color=COLORS["accent"],
                    lw=1.8, ls="--", label="AMAT model, reported sizes")
    ax.set_xlabel("working set (KiB)")
    ax.set_ylabel("time per load (ns)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")
    return fig


def line_probe_figure(offsets_bytes: Sequence[float], times_s: Sequence[float], *,
                      line_bytes: float | None = None, ax=None):
    """Time per two-load step against the second load's offset; a line marks ``line_bytes``."""
    fig, ax = new_figure(height_in=3.2) if ax is None else (ax.figure, ax)
    ax.semilogx(offsets_bytes, np.asarray(times_s) / units.ns, "o-", color=COLORS["compute"],
                ms=5, base=2)
    if line_bytes:
        ax.axvline(line_bytes, color=COLORS["neutral"], ls=":", lw=1.2)
        ax.annotate(f"{line_bytes:.0f} bytes", (line_bytes, 0.05),
                    xycoords=("data", "axes fraction"), xytext=(4, 0),
                    textcoords="offset points", fontsize=9, color=COLORS["neutral"])
    ax.set_xlabel("offset of the second load (bytes)")
    ax.set_ylabel("time per step (ns)")
    ax.set_ylim(bottom=0)
    return fig
