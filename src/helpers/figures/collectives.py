"""Figures of the page "Network topology and collective communication" ({ref}`sec-collectives`)
and of its lab ({ref}`sec-lab-collectives`).

* :func:`opening_animation`: four ranks on a ring pass chunks: a reduce-scatter (each chunk
  gathers contributions as it travels), then an all-gather (the reduced chunks go around).
* :func:`structure_diagram`: a cluster: GPUs, NVLink to an NVSwitch inside a node, one NIC per
  GPU, leaf and spine switches between nodes.
* :func:`cost_figure`: ring and tree all-reduce time against message size (alpha-beta model).
* :func:`measured_figure`: measured times of one or more runs beside the fitted model;
  :func:`busbw_figure`: their bus bandwidth against size.
* :func:`batching_figure`: per-call time of one call per interval against a batch of calls per
  interval (and the host enqueue time and a CUDA-graph replay where measured).
* :func:`algorithms_figure`: the alpha-beta(-gamma) time of ring, recursive doubling,
  Rabenseifner, Bruck and pairwise algorithms against size, with times measured on gloo ranks.

Used by: chapters/collectives.md, labs/collectives.md.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..models import collectives as model
import matplotlib.pyplot as plt

from .style import COLORS, new_figure
from .svg import BORDER, MUTED, PALETTE, TEXT, Canvas, Figure, _num, esc

__all__ = ["ring_states", "opening_animation", "structure_diagram", "cost_figure",
           "measured_figure", "busbw_figure", "batching_figure", "algorithms_figure"]

_CHUNK_COLORS = [PALETTE["memory"], PALETTE["compute"], PALETTE["host"], PALETTE["queue"],
                 PALETTE["network"], PALETTE["accent"]]


def ring_states(p: int) -> tuple[list[list[tuple[int, int, int]]], list[np.ndarray]]:
    """The ring all-reduce, step by step: per step the sends ``(src, dst, chunk)``, and after
    each step the number of ranks' contributions every rank holds in every chunk.

    ``states[0]`` is the start (every rank holds its own contribution: all ones); the last
    state is all ``p`` (every rank holds the full sum of every chunk).

    >>> sends, states = ring_states(4)
    >>> len(sends), states[3].tolist()[0], int(states[-1].min())
    (6, [1, 4, 3, 2], 4)
    """
    count = np.ones((p, p), dtype=int)
    sends, states = [], [count.copy()]
    for phase in ("rs", "ag"):
        for s in range(p - 1):
            step = []
            for r in range(p):
                k = (r - s) % p if phase == "rs" else (r + 1 - s) % p
                step.append((r, (r + 1) % p, k))
            new = count.copy()
            for src, dst, k in step:
                new[dst, k] = count[dst, k] + count[src, k] if phase == "rs" else count[src, k]
            count = new
            sends.append(step)
            states.append(count.copy())
    return sends, states


def opening_animation(p: int = 4, step_s: float = 1.3) -> Figure:
    """Four ranks on a ring: reduce-scatter, then all-gather, chunk by chunk (loops)."""
    sends, states = ring_states(p)
    n_steps = len(sends)
    total = (n_steps + 2) * step_s  # one still frame before and after
    w, h = 680, 380
    c = Canvas(w, h, "Ring all-reduce: a reduce-scatter, then an all-gather", "coll-open",
               description=f"{p} ranks on a ring; every step, each rank sends one chunk to its "
                           "right neighbour. Shading shows how many ranks' data a chunk holds.")
    cx, cy, rad = 250, 190, 120
    pos = [(cx + rad * math.sin(2 * math.pi * r / p), cy - rad * math.cos(2 * math.pi * r / p))
           for r in range(p)]
    bw, bh = 120, 64
    for r, (x, y) in enumerate(pos):  # the ring's links
        x2, y2 = pos[(r + 1) % p]
        c.path(_arc(x, y, x2, y2, cx, cy), stroke=BORDER, width=1.4, dash="4 4", arrow=True)
    for r, (x, y) in enumerate(pos):
        c.box(x - bw / 2, y - bh / 2, bw, bh, "", color=PALETTE["neutral"])
        c.text(x, y - bh / 2 + 13, f"rank {r}", size=12, weight="600")
        cw = (bw - 20) / p
        for k in range(p):
            vals = [0.12 + 0.88 * (s[r, k] - 1) / (p - 1) for s in states]
            vals = [vals[0]] + vals + [vals[-1]]
            key = [i / (n_steps + 2) for i in range(n_steps + 2)] + [1.0]
            anim = Canvas.animate("fill-opacity", [*vals], dur_s=total, key_times=key,
                                  calc_mode="discrete")
            c.rect(x - bw / 2 + 10 + k * cw, y - 4, cw - 3, 22, fill=_CHUNK_COLORS[k % 6],
                   stroke=_CHUNK_COLORS[k % 6], stroke_width=1, rx=3, children=anim)
    for i, step in enumerate(sends):  # the chunks in flight
        t0, t1 = (i + 1) * step_s / total, (i + 1.85) * step_s / total
        for src, dst, k in step:
            (x1, y1), (x2, y2) = pos[src], pos[dst]
            d = _arc(x1, y1, x2, y2, cx, cy)
            c.raw(f'<circle r="7" fill="{esc(_CHUNK_COLORS[k % 6])}" opacity="0">'
                  f'<animateMotion path="{esc(d)}" dur="{_num(total)}s" repeatCount="indefinite" '
                  f'keyPoints="0;0;1;1" keyTimes="0;{_num(t0)};{_num(t1)};1" calcMode="linear"/>'
                  f'<animate attributeName="opacity" values="0;0;1;1;0;0" '
                  f'keyTimes="0;{_num(t0 - 0.001)};{_num(t0)};{_num(t1)};{_num(t1 + 0.001)};1" '
                  f'dur="{_num(total)}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    # the caption: which phase and step
    x0 = 470
    c.text(x0, 60, "every step: each rank sends", size=12, anchor="start", fill=MUTED)
    c.text(x0, 78, "one chunk (1/p of the buffer)", size=12, anchor="start", fill=MUTED)
    c.text(x0, 96, "to its right neighbour", size=12, anchor="start", fill=MUTED)
    labels = ["start"] + [f"reduce-scatter {s + 1}/{p - 1}" for s in range(p - 1)] + \
             [f"all-gather {s + 1}/{p - 1}" for s in range(p - 1)] + ["done: every rank has the sum"]
    for i, lab in enumerate(labels):
        vis = ["hidden"] * (n_steps + 2)
        vis[i] = "visible"
        anim = Canvas.animate("visibility", vis + [vis[-1]], dur_s=total,
                              key_times=[j / (n_steps + 2) for j in range(n_steps + 2)] + [1.0],
                              calc_mode="discrete")
        c.raw(f'<text x="{x0}" y="140" font-size="14" font-weight="600" text-anchor="start" '
              f'fill="{esc(TEXT)}" visibility="hidden">{esc(lab)}{anim}</text>')
    c.text(x0, 180, "shading = how many ranks'", size=12, anchor="start", fill=MUTED)
    c.text(x0, 198, "contributions a chunk holds", size=12, anchor="start", fill=MUTED)
    c.text(x0, 240, f"2(p - 1) = {2 * (p - 1)} steps,", size=12, anchor="start")
    c.text(x0, 258, "each moving n/p bytes per link", size=12, anchor="start")
    return c.figure()


def _arc(x1, y1, x2, y2, cx, cy, bend: float = 0.18) -> str:
    """A curve from (x1, y1) to (x2, y2) bowing away from the centre (cx, cy)."""
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    dx, dy = mx - cx, my - cy
    norm = math.hypot(dx, dy) or 1.0
    length = math.hypot(x2 - x1, y2 - y1)
    qx, qy = mx + dx / norm * bend * length, my + dy / norm * bend * length
    return f"M{_num(x1)},{_num(y1)} Q{_num(qx)},{_num(qy)} {_num(x2)},{_num(y2)}"


def structure_diagram(gpus_per_node: int = 4, nodes: int = 2) -> Figure:
    """A small cluster: nodes of GPUs on an NVSwitch, a NIC per GPU, leaf and spine switches."""
    w, h = 720, 420
    c = Canvas(w, h, "A GPU cluster: NVLink inside a node, a leaf-spine network between nodes",
               "coll-struct",
               description="Each node: GPUs joined by NVLink through NVSwitch; each GPU has its "
                           "own NIC to a leaf switch; leaf switches connect through spine switches.")
    node_w = 300
    gx = [30, 390]
    for n in range(nodes):
        x0 = gx[n]
        c.rect(x0, 200, node_w, 200, fill="none", stroke=BORDER, dash="5 4", rx=10)
        c.text(x0 + 10, 390, f"node {n}", size=12, anchor="start", fill=MUTED)
        c.box(x0 + 40, 330, node_w - 80, 36, "NVSwitch", color=PALETTE["network"], size=12)
        step = (node_w - 30) / gpus_per_node
        for g in range(gpus_per_node):
            x = x0 + 15 + g * step
            c.box(x, 265, step - 10, 40, f"GPU {n * gpus_per_node + g}", color=PALETTE["compute"],
                  size=11)
            c.line(x + (step - 10) / 2, 305, x + (step - 10) / 2, 330, stroke=PALETTE["network"],
                   width=2.5)
            c.box(x + 4, 212, step - 18, 28, "NIC", color=PALETTE["host"], size=10)
            c.line(x + (step - 10) / 2, 240, x + (step - 10) / 2, 265, stroke=PALETTE["host"],
                   width=1.5)
    leaves = [(60 + i * 160, 120) for i in range(4)]
    for i, (x, y) in enumerate(leaves):
        c.box(x, y, 120, 32, f"leaf {i}", color=PALETTE["memory"], size=11)
    spines = [(200, 30), (420, 30)]
    for i, (x, y) in enumerate(spines):
        c.box(x, y, 120, 32, f"spine {i}", color=PALETTE["memory"], size=11)
    for lx, ly in leaves:
        for sx, sy in spines:
            c.line(lx + 60, ly, sx + 60, sy + 32, stroke=PALETTE["memory"], width=1.2, opacity=0.7)
    for n in range(nodes):  # NIC g of every node goes to a leaf (rail-style wiring)
        step = (node_w - 30) / gpus_per_node
        for g in range(gpus_per_node):
            x = gx[n] + 15 + g * step + (step - 10) / 2
            lx, ly = leaves[g % len(leaves)]
            c.line(x, 212, lx + 60, ly + 32, stroke=PALETTE["host"], width=1, opacity=0.55)
    c.text(w - 10, 95, "scale-out: InfiniBand or Ethernet,", size=11, anchor="end", fill=MUTED)
    c.text(w - 10, 110, "one NIC per GPU", size=11, anchor="end", fill=MUTED)
    c.text(w - 10, 182, "scale-up: NVLink through NVSwitch", size=11, anchor="end", fill=MUTED)
    return c.figure()


def cost_figure(ranks: int, alpha_s: float, beta_s_per_byte: float, *,
                marker_bytes: float | None = None, sizes=None):
    """Ring and tree all-reduce time (alpha-beta) against message size, with busbw on the right."""
    sizes = np.logspace(0, 10, 200) if sizes is None else np.asarray(sizes, float)
    ring = model.ring_allreduce_time_s(sizes, ranks, alpha_s, beta_s_per_byte)
    tree = model.tree_allreduce_time_s(sizes, ranks, alpha_s, beta_s_per_byte)
    fig, (ax, bx) = new_figure(1, 2, width_in=8.6, height_in=3.5)
    ax.loglog(sizes, ring, label="ring", color=COLORS["network"])
    ax.loglog(sizes, tree, label="tree (binomial)", color=COLORS["queue"], ls="--")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("all-reduce time (s)")
    ax.legend()
    f = model.busbw_factor("all_reduce", ranks)
    with np.errstate(divide="ignore", invalid="ignore"):
        bx.semilogx(sizes, sizes / ring * f / 1e9, color=COLORS["network"], label="ring")
        bx.semilogx(sizes, sizes / tree * f / 1e9, color=COLORS["queue"], ls="--", label="tree")
    if beta_s_per_byte > 0:
        bx.axhline(1 / beta_s_per_byte / 1e9, color=COLORS["neutral"], lw=1, ls=":",
                   label="link bandwidth 1/β")
    bx.set_xlabel("message size (bytes)")
    bx.set_ylabel("bus bandwidth (GB/s)")
    bx.legend()
    if marker_bytes is not None:
        for a in (ax, bx):
            a.axvline(marker_bytes, color=COLORS["accent"], lw=1.1, alpha=0.7)
    plt.close(fig)
    return fig


_RUN_COLORS = (COLORS["network"], COLORS["compute"], COLORS["memory"], COLORS["host"])


def _finish(fig, ax, ylabel: str, title: str, legend_size: float):
    """Label a size-axis panel, add its title and legend, close the figure and return it."""
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=legend_size)
    plt.close(fig)
    return fig


def measured_figure(runs: Mapping[str, Sequence[dict]], *, title: str = ""):
    """Measured times (dots) and the fitted model (lines) of each run; ``runs`` maps a label to
    rows of :func:`helpers.labs.analysis.collectives.rows`."""
    fig, ax = new_figure(width_in=7.0, height_in=3.8)
    for (label, rows), col in zip(runs.items(), _RUN_COLORS):
        if not rows:
            continue
        n = [r["message_bytes"] for r in rows]
        ax.loglog(n, [r["measured_s"] for r in rows], "o", color=col, ms=5, label=f"{label}, measured")
        ax.loglog(n, [r["model_s"] for r in rows], "-", color=col, lw=1.3, alpha=0.8,
                  label=f"{label}, fitted α-β")
    return _finish(fig, ax, "time (s)", title, 8.5)


def busbw_figure(runs: Mapping[str, Sequence[dict]], *, link_bytes_per_s: float | None = None,
                 link_label: str = "", title: str = ""):
    """Bus bandwidth against message size for each run (rows as in :func:`measured_figure`)."""
    fig, ax = new_figure(width_in=7.0, height_in=3.6)
    for (label, rows), col in zip(runs.items(), _RUN_COLORS):
        if rows:
            ax.semilogx([r["message_bytes"] for r in rows],
                        [r["busbw_bytes_per_s"] / 1e9 for r in rows], "o-", color=col, ms=4,
                        label=label)
    if link_bytes_per_s:
        ax.axhline(link_bytes_per_s / 1e9, color=COLORS["neutral"], lw=1, ls=":", label=link_label)
    return _finish(fig, ax, "bus bandwidth (GB/s)", title, 8.5)


def batching_figure(runs: Mapping[str, Sequence[dict]], *, title: str = ""):
    """Per-call time against message size, one call per timed interval (dispatch included,
    open circles) and a batch of k calls per interval (filled), with the host enqueue time and
    the CUDA-graph replay where the run has them; ``runs`` maps a label to rows of
    :func:`helpers.labs.analysis.collectives.batching`."""
    fig, ax = new_figure(width_in=7.0, height_in=3.8)
    for (label, rows), col in zip(runs.items(), _RUN_COLORS):
        if not rows:
            continue
        n = [r["message_bytes"] for r in rows]
        ax.loglog(n, [r["single_s"] for r in rows], "o", mfc="none", color=col, ms=5,
                  label=f"{label}, one call per interval")
        ax.loglog(n, [r["batched_s"] for r in rows], "o-", color=col, ms=4, lw=1,
                  label=f"{label}, batched, per call")
        if all(r.get("enqueue_s") for r in rows):
            ax.loglog(n, [r["enqueue_s"] for r in rows], ":", color=col, lw=1.3,
                      label=f"{label}, host enqueue, per call")
        if all(r.get("graph_s") for r in rows):
            ax.loglog(n, [r["graph_s"] for r in rows], "s--", color=col, ms=3, lw=1,
                      label=f"{label}, CUDA graph replay, per call")
    return _finish(fig, ax, "time per call (s)", title, 8)


#: Panels of :func:`algorithms_figure`: title and the algorithms it draws (line style).
_ALGO_PANELS = (
    ("all-reduce", (("ring_all_reduce", "-"), ("recursive_doubling_all_reduce", "--"),
                    ("rabenseifner_all_reduce", "-."))),
    ("all-gather and all-to-all", (("ring_all_gather", "-"), ("recursive_doubling_all_gather", ":"),
                                   ("bruck_all_gather", "--"), ("pairwise_all_to_all", "-."),
                                   ("bruck_all_to_all", (0, (1, 1))))),
)
_ALGO_COLORS = (COLORS["network"], COLORS["compute"], COLORS["memory"], COLORS["host"],
                COLORS["queue"])


def algorithms_figure(rows: Sequence[dict], constants: dict, *, title: str = "", sizes=None):
    """Model time against message size of each algorithm (lines, from ``constants``: alpha,
    beta, gamma as :func:`helpers.labs.analysis.collectives.algorithm_constants` gives them) and
    the measured times (dots; ``rows`` of
    :func:`helpers.labs.analysis.collectives.algorithm_rows` for one rank count). The fitted
    algorithm's dots are filled, the predicted ones open."""
    p = constants["ranks"]
    measured = [r["message_bytes"] for r in rows]
    lo, hi = (min(measured) / 2, max(measured) * 2) if measured else (1e2, 1e7)
    sizes = np.logspace(math.log10(lo), math.log10(hi), 120) if sizes is None else sizes
    a, b = max(constants["alpha_s"], 0.0), max(constants["beta_s_per_byte"], 0.0)
    g = constants.get("gamma_s_per_byte", 0.0)
    fig, axes = new_figure(1, 2, width_in=9.4, height_in=3.8)
    for ax, (panel, algos) in zip(axes, _ALGO_PANELS):
        for (name, ls), col in zip(algos, _ALGO_COLORS):
            f = model.ALGORITHM_TIMES[name]
            if name == "recursive_doubling_all_gather" and p & (p - 1):
                continue
            kw = {"gamma_s_per_byte": g} if name.endswith("all_reduce") else {}
            label = name.replace("_", " ")
            ax.loglog(sizes, f(sizes, p, a, b, **kw), ls=ls, color=col, lw=1.3, label=label)
            pts = [r for r in rows if r["algorithm"] == name]
            if pts:
                ax.loglog([r["message_bytes"] for r in pts], [r["measured_s"] for r in pts],
                          "o", color=col, ms=5, mfc=col if pts[0]["fitted"] else "none")
        ax.set_title(f"{panel}, {p} ranks" + (f" ({title})" if title else ""), fontsize=10)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("time (s)")
        ax.legend(fontsize=7.5)
    plt.close(fig)
    return fig
