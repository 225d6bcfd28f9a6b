"""Figures of the lab "Launch overhead, occupancy and CUDA graphs" ({ref}`sec-lab-launch-overhead`).

* :func:`opening_animation`: the same chain of tiny kernels twice. Launched one by one, the
  device idles between kernels while the host hands over the next launch; replayed from a
  graph, one launch releases them all and they run back to back.
* :func:`structure_diagram`: the path of a launch (Python, PyTorch's dispatcher, the driver,
  the stream, the SMs) and the path of a graph (capture once, instantiate, replay).
* Plots (matplotlib, the book's style): :func:`chain_figure` (time against the number of
  kernels, measured and fitted) and :func:`size_figure` (per-kernel time against kernel size).

Every number drawn is computed from the arguments; none is typed here.

Used by: labs/launch-overhead.md.
"""

from __future__ import annotations

from typing import Mapping

import matplotlib.pyplot as plt
import numpy as np

from .. import units
from ..models import launch
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "chain_figure", "size_figure"]


# --- SVG: opening animation ----------------------------------------------------------------

def opening_animation(*, launch_s: float = 5e-6, kernel_s: float = 2e-6, graph_launch_s: float = 6e-6,
                      kernel_in_graph_s: float = 2.4e-6, n_kernels: int = 6) -> Figure:
    """Two timelines of ``n_kernels`` tiny kernels: eager launches, then one graph launch.

    Durations are schematic inputs drawn to scale; the totals printed come from
    :func:`helpers.models.launch.eager_time_s` and :func:`~helpers.models.launch.graph_time_s`.
    """
    n = int(n_kernels)
    if n < 1:
        raise ValueError(f"n_kernels must be >= 1, got {n_kernels!r}")
    t_eager = launch.eager_time_s(n, launch_s, kernel_s, sync_s=min(launch_s, kernel_s))
    t_graph = launch.graph_time_s(n, graph_launch_s, kernel_in_graph_s)
    total = max(t_eager, t_graph) * 1.05
    x0, x1 = 170.0, 770.0

    def X(t: float) -> float:
        return x0 + (x1 - x0) * t / total

    dur, sweep = 8.0, 0.8

    def kt(t: float) -> float:
        return round(sweep * t / total, 4)

    host, dev, acc = PALETTE["host"], PALETTE["compute"], PALETTE["accent"]
    c = Canvas(800, 330, "Tiny kernels launched one by one leave the GPU idle; a graph does not",
               uid="lablaunch-open", description=(
                   f"Animated timelines of {n} tiny kernels. Top: each launch takes the host "
                   f"{units.fmt_time(launch_s)} and each kernel the device "
                   f"{units.fmt_time(kernel_s)}, so the device waits for every launch and the "
                   f"chain takes {units.fmt_time(t_eager)}. Bottom: the same kernels captured in a "
                   f"CUDA graph are released by one launch of {units.fmt_time(graph_launch_s)} and "
                   f"run back to back, {units.fmt_time(t_graph)} in all."))
    lane_h = 34
    rows = [("eager", 40, 92), ("graph", 180, 232)]
    for label, yh, yd in rows:
        c.text(x0 - 12, yh + lane_h / 2, f"host ({label})", anchor="end", size=13, weight="600")
        c.text(x0 - 12, yd + lane_h / 2, "GPU", anchor="end", size=13, weight="600")
        for y in (yh, yd):
            c.rect(x0, y, x1 - x0, lane_h, fill="none", stroke=MUTED, stroke_width=1, rx=4,
                   dash="4 4")

    def grow_rect(a: float, b: float, y: float, color: str, text: str | None = None) -> None:
        w = max(X(b) - X(a), 2.5)
        anim = Canvas.animate("width", [0, 0, w, w], key_times=[0, kt(a), kt(b), 1], dur_s=dur)
        c.rect(X(a), y + 5, 0, lane_h - 10, fill=color, stroke="none", rx=2, opacity=0.9,
               children=anim)
        if text:
            show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(b), kt(b) + 0.01, 1],
                                  dur_s=dur)
            c.text(X(a) + w / 2, y + lane_h / 2, text, size=11, fill="#ffffff", weight="600",
                   children=show)

    # Eager: launch i occupies the host from i*t_l to (i+1)*t_l; kernel i starts when launched
    # and the previous kernel is done.
    free = 0.0
    for i in range(n):
        a, b = i * launch_s, (i + 1) * launch_s
        grow_rect(a, b - 0.08 * launch_s, rows[0][1], host)
        start = max(b, free)
        free = start + kernel_s
        grow_rect(start, free, rows[0][2], dev, f"k{i + 1}")
    # Graph: one launch, then the kernels back to back.
    grow_rect(0.0, graph_launch_s, rows[1][1], acc, "graph launch")
    t = graph_launch_s
    for i in range(n):
        grow_rect(t, t + kernel_in_graph_s * 0.94, rows[1][2], dev, f"k{i + 1}")
        t += kernel_in_graph_s
    for (label, yh, yd), end in zip(rows, (free, t)):
        show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(end), kt(end) + 0.01, 1],
                              dur_s=dur)
        c.text(min(X(end) + 8, x1 - 150), yd + lane_h + 16, f"done after {units.fmt_time(end)}",
               anchor="start", size=12.5, fill=acc, weight="600", children=show)
    now1 = Canvas.animate("x1", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    now2 = Canvas.animate("x2", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    c.mark_animated()
    c.raw(f'<line x1="{x0}" y1="30" x2="{x0}" y2="280" stroke="{MUTED}" stroke-width="1.5">'
          f"{now1}{now2}</line>")
    c.text(400, 312, "Click to pause. The gaps on the first GPU lane are launch overhead: the "
                     "GPU waits for the host.", size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram ----------------------------------------------------------------

def structure_diagram() -> Figure:
    """The path of one eager launch, the path of a graph, and what the lab measures on each."""
    c = Canvas(800, 330, "Where a launch spends its time, and what a CUDA graph removes",
               uid="lablaunch-struct", description=(
                   "Diagram. Top row, eager: Python calls a PyTorch operator, the dispatcher "
                   "picks the kernel and allocates the output, the CUDA driver builds the launch "
                   "and pushes it onto a stream, the GPU's SMs run it; every kernel pays the "
                   "first three stages on the host. Bottom row, graph: the chain is captured once "
                   "on a side stream after a warm-up, instantiated once, then each replay is one "
                   "launch that releases all the kernels to the GPU. Labels say what the lab "
                   "measures: host time per launch, device time per kernel, the graph's fixed "
                   "cost, and the compiler's registers and shared memory per kernel."))
    host, dev, q, acc, mem = (PALETTE["host"], PALETTE["compute"], PALETTE["queue"],
                              PALETTE["accent"], PALETTE["memory"])
    c.text(400, 18, "Eager: every kernel pays the whole host path", size=14, weight="700")
    stages = [("Python", "x.neg_()", host), ("PyTorch", "dispatch, allocate", host),
              ("CUDA driver", "build launch", host), ("stream", "FIFO queue", q),
              ("GPU SMs", "run the kernel", dev)]
    w, gap, x, y = 140, 15, 12, 34
    for i, (label, sub, color) in enumerate(stages):
        c.box(x, y, w, 58, label, sublabel=sub, color=color, size=13)
        if i < len(stages) - 1:
            c.line(x + w, y + 29, x + w + gap - 1, y + 29, stroke=MUTED, arrow=True)
        x += w + gap
    c.line(12, 104, 12 + 3 * w + 2 * gap, 104, stroke=host, width=2.5, both=True)
    c.text(12 + (3 * w + 2 * gap) / 2, 120, "host time per launch: perf_counter around the "
                                            "enqueue (t_launch)", size=12, fill=host)
    c.line(12 + 4 * (w + gap), 104, 12 + 5 * w + 4 * gap, 104, stroke=dev, width=2.5, both=True)
    c.text(12 + 4 * (w + gap) + w / 2, 120, "events (t_kernel)", size=12, fill=dev)
    c.text(400, 160, "Graph: the host path is paid once, at capture", size=14, weight="700")
    g = [("warm-up", "side stream", q), ("capture", "record, don't run", acc),
         ("instantiate", "once", acc), ("replay()", "one launch", acc),
         ("GPU SMs", "kernels back to back", dev)]
    x, y = 12, 176
    for i, (label, sub, color) in enumerate(g):
        c.box(x, y, w, 58, label, sublabel=sub, color=color, size=13)
        if i < len(g) - 1:
            c.line(x + w, y + 29, x + w + gap - 1, y + 29, stroke=MUTED, arrow=True)
        x += w + gap
    c.text(12 + 3 * (w + gap) + w / 2, 252, "fixed cost t_graph", size=12, fill=acc)
    c.text(12 + 4 * (w + gap) + w / 2, 252, "t_kernel in graph", size=12, fill=dev)
    c.box(12, 268, 5 * w + 4 * gap, 50, "Each compiled Triton kernel: registers per thread, "
          "spills, shared memory", sublabel="recorded for the occupancy model of lesson 05",
          color=mem, size=12.5, fill_opacity=0.08)
    return c.figure()


# --- matplotlib plots ----------------------------------------------------------------------

def _detached(fig):
    plt.close(fig)
    return fig


def chain_figure(results: Mapping[str, Mapping], *, title: str = "Time of a chain of n tiny kernels"):
    """Log-log plot: measured time of n kernels (markers) and the fitted model lines, per result.

    ``results`` maps a label ("H200 reference", "this machine") to a result dict of the lab
    (its ``measurements`` must hold ``chain`` and ``fits``).
    """
    if not results:
        raise ValueError("results must hold at least one result")
    fig, ax = new_figure(width_in=7.0, height_in=4.0)
    styles = {"eager": ("o", COLORS["compute"]), "graph": ("s", COLORS["accent"]),
              "batched": ("^", COLORS["memory"])}
    names = {"eager": "launched one by one", "graph": "CUDA graph", "batched": "one batched kernel"}
    for j, (label, result) in enumerate(results.items()):
        m = result["measurements"]
        ns = np.array([e["n"] for e in m["chain"]], dtype=float)
        f = m["fits"]
        ls = "-" if j == 0 else ":"
        fill = None if j == 0 else "none"
        for kind, (marker, color) in styles.items():
            if kind not in m["chain"][0]:
                continue
            t = np.array([e[kind]["median_s"] for e in m["chain"]])
            ax.plot(ns, t * 1e6, marker, color=color, mfc=fill,
                    label=f"{names[kind]} ({label})")
        grid = np.geomspace(ns.min(), ns.max(), 50)
        eager_fit = np.maximum(f["eager_fixed_s"] + f["eager_per_kernel_s"] * grid, 1e-9)
        ax.plot(grid, eager_fit * 1e6, ls, color=styles["eager"][1], lw=1.2)
        if "kernel_in_graph_s" in f:
            graph_fit = np.maximum(f["graph_launch_s"] + f["kernel_in_graph_s"] * grid, 1e-9)
            ax.plot(grid, graph_fit * 1e6, ls, color=styles["graph"][1], lw=1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("kernels in the chain, n")
    ax.set_ylabel("time of the chain (µs)")
    ax.set_title(title)
    ax.legend(fontsize=8.5, ncol=1)
    return _detached(fig)


def size_figure(results: Mapping[str, Mapping], *,
                title: str = "Per-kernel time against kernel size"):
    """Per-kernel time (chain time / n) against bytes moved per kernel, eager and graph, with
    each result's host time per launch as a horizontal line."""
    if not results:
        raise ValueError("results must hold at least one result")
    fig, ax = new_figure(width_in=7.0, height_in=4.0)
    for j, (label, result) in enumerate(results.items()):
        m = result["measurements"]
        n = result["settings"]["sweep_n"]
        b = np.array([e["bytes_per_kernel"] for e in m["size_sweep"]])
        fill = None if j == 0 else "none"
        eager = np.array([e["eager"]["median_s"] for e in m["size_sweep"]]) / n
        ax.plot(b, eager * 1e6, "o-", color=COLORS["compute"], mfc=fill, lw=1.2,
                label=f"launched one by one ({label})")
        if "graph" in m["size_sweep"][0]:
            graph = np.array([e["graph"]["median_s"] for e in m["size_sweep"]]) / n
            ax.plot(b, graph * 1e6, "s-", color=COLORS["accent"], mfc=fill, lw=1.2,
                    label=f"CUDA graph ({label})")
        ax.axhline(m["host_enqueue"]["launch_s"] * 1e6, color=COLORS["host"],
                   ls="--" if j == 0 else ":", lw=1.2, label=f"host time per launch ({label})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes read and written per kernel")
    ax.set_ylabel("time per kernel (µs)")
    ax.set_title(title)
    ax.legend(fontsize=8.5)
    return _detached(fig)

