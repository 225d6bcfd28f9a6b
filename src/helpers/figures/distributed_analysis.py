"""Figures of the distributed-analysis lesson and the data-parallel lab.

* :func:`opening_animation`: two ranks' timelines, with gradient buckets' all-reduces starting
  during the backward pass and only the last one left exposed (the bucket model);
* :func:`structure_diagram`: the parts of a data-parallel step and of its analysis;
* :func:`timeline_figure`: a measured, aligned timeline (compute and communication lanes per
  rank) from :func:`helpers.labs.data_parallel.timeline_of`;
* :func:`step_bars_figure`: model vs measured step and exposed communication per configuration.

Used by: chapters/distributed-analysis.md, labs/data-parallel.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "timeline_figure", "step_bars_figure",
           "buckets_figure"]

GREY = PALETTE["neutral"]


def _schedule(forward_s: float, backward_s: float, comm_s: Sequence[float]):
    """Start and end of each bucket's all-reduce under the bucket model (equal buckets)."""
    k = len(comm_s)
    end, out = forward_s, []
    for i, c in enumerate(comm_s):
        start = max(forward_s + backward_s * (i + 1) / k, end)
        end = start + c
        out.append((start, end))
    return out


def opening_animation(*, forward_s: float = 1.0, backward_s: float = 2.0,
                      comm_s: Sequence[float] = (0.35, 0.35, 0.35, 0.35),
                      straggler_delay_s: float = 0.25) -> Figure:
    """Two ranks run forward and backward; each finished bucket's all-reduce starts at once.

    Rank 1 is slower by ``straggler_delay_s``: every all-reduce waits for it, so rank 0 idles.
    """
    if not comm_s:
        raise ValueError("comm_s must list at least one bucket")
    sched = _schedule(forward_s + straggler_delay_s, backward_s, comm_s)
    step = max(forward_s + straggler_delay_s + backward_s, sched[-1][1])
    c = Canvas(760, 290, "Two ranks of a data-parallel step: all-reduces overlap the backward pass",
               uid="dist-open", description=(
                   "Animated timelines of two ranks. Each runs a forward pass, then a backward "
                   "pass that fills gradient buckets one after another; as soon as a bucket is "
                   "full its all-reduce starts on a communication lane and runs while the "
                   "backward pass continues. Only the last bucket's all-reduce is left after the "
                   "backward pass: that is the exposed communication. Rank 1 is slightly slower, "
                   "and every all-reduce waits for it."))
    x0, x1 = 120.0, 720.0
    scale = (x1 - x0) / (step * 1.05)
    X = lambda t: x0 + t * scale
    dur = 7.0
    lanes = [("rank 0", 0.0, 40.0), ("rank 1", straggler_delay_s, 150.0)]
    for name, delay, y in lanes:
        c.text(20, y + 14, name, size=13, anchor="start", weight="600")
        c.text(20, y + 48, "comm", size=11, anchor="start", fill=MUTED)
        c.line(x0, y + 70, x1, y + 70, stroke=GREY, width=1)
        segs = [(0.0, forward_s + delay, PALETTE["compute"], "forward", 0.25),
                (forward_s + delay, forward_s + delay + backward_s, PALETTE["memory"],
                 "backward", 0.25)]
        for a, b, col, label, op in segs:
            grow = Canvas.animate("width", [0, 0, (b - a) * scale, (b - a) * scale],
                                  key_times=[0, a / step * 0.8, b / step * 0.8, 1], dur_s=dur)
            c.rect(X(a), y, (b - a) * scale, 28, fill=col, stroke="none", opacity=0.75,
                   rx=3, children=grow)
            c.text(X((a + b) / 2), y + 14, label, size=12)
        for i, (a, b) in enumerate(sched):
            grow = Canvas.animate("width", [0, 0, (b - a) * scale, (b - a) * scale],
                                  key_times=[0, a / step * 0.8, b / step * 0.8, 1], dur_s=dur)
            col = PALETTE["accent"] if i == len(sched) - 1 else PALETTE["network"]
            c.rect(X(a), y + 36, (b - a) * scale, 24, fill=col, stroke="none", opacity=0.8,
                   rx=3, children=grow)
        if delay == 0.0 and straggler_delay_s > 0:
            c.text(X(forward_s + backward_s), y - 8, "rank 0 idles, waiting for rank 1", size=11,
                   anchor="end", fill=MUTED)
    compute_end = forward_s + straggler_delay_s + backward_s
    c.line(X(compute_end), 30, X(compute_end), 240, stroke=GREY, dash="4 4")
    c.line(X(sched[-1][1]), 30, X(sched[-1][1]), 240, stroke=PALETTE["accent"], dash="4 4")
    c.text((X(compute_end) + X(sched[-1][1])) / 2, 256, "exposed", size=12,
           fill=PALETTE["accent"], weight="600")
    cursor = Canvas.animate("x1", [x0, x1, x1], key_times=[0, 0.8, 1], dur_s=dur) + \
        Canvas.animate("x2", [x0, x1, x1], key_times=[0, 0.8, 1], dur_s=dur)
    c.raw(f'<line x1="{x0}" y1="30" x2="{x0}" y2="240" stroke="{GREY}" stroke-width="1.2" '
          f'opacity="0.7">{cursor}</line>')
    c.text(x0, 278, "time", size=12, anchor="start", fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """The parts of a data-parallel step and of the analysis that reads it."""
    c = Canvas(760, 300, "A data-parallel step and how this chapter analyses it", uid="dist-struct",
               description=(
                   "Left: each rank holds a full model replica, computes forward and backward on "
                   "its share of the batch, hands gradient buckets to an all-reduce that averages "
                   "them across ranks, and applies the same optimizer step. Right: per-rank "
                   "profiler traces are aligned on one clock at a collective, split into "
                   "compute and communication, and reduced to MFU, scaling efficiency, exposed "
                   "communication and the slowest rank."))
    for i, y in enumerate((30, 160)):
        c.box(20, y, 120, 40, f"rank {i}", color=PALETTE["host"], sublabel="batch shard")
        c.box(160, y, 150, 40, "forward + backward", color=PALETTE["compute"], size=12)
        c.box(330, y, 90, 40, "buckets", color=PALETTE["memory"], sublabel="gradients")
        c.line(140, y + 20, 160, y + 20, arrow=True)
        c.line(310, y + 20, 330, y + 20, arrow=True)
        c.line(420, y + 20, 445, 115 if i == 0 else 135, arrow=True, stroke=PALETTE["network"])
    c.box(445, 100, 120, 50, "all-reduce", color=PALETTE["network"], sublabel="ring: NCCL / gloo")
    c.text(505, 250, "then every rank takes", size=11, fill=MUTED)
    c.text(505, 266, "the same optimizer step", size=11, fill=MUTED)
    c.box(585, 20, 160, 40, "per-rank traces", color=PALETTE["queue"], size=12)
    c.box(585, 80, 160, 40, "align at a collective", color=PALETTE["queue"], size=12)
    c.box(585, 140, 160, 40, "compute | comm lanes", color=PALETTE["queue"], size=12)
    c.box(585, 200, 160, 70, "MFU, scaling eff.,", color=PALETTE["accent"], size=12,
          sublabel="exposed comm, straggler")
    for y in (60, 120, 180):
        c.line(665, y, 665, y + 20, arrow=True)
    return c.figure()


def timeline_figure(timeline: Mapping, *, title: str):
    """Per rank, a compute lane and a communication lane of the aligned profiled step (ms)."""
    ranks = timeline.get("ranks") or []
    if not ranks:
        raise ValueError("timeline must hold at least one rank")
    fig, ax = new_figure(width_in=7.2, height_in=1.0 + 0.9 * len(ranks))
    ticks, labels = [], []
    for i, r in enumerate(ranks):
        base = 2.2 * (len(ranks) - 1 - i)
        comp = [(a * 1e3, (b - a) * 1e3) for a, b in r["compute"]]
        comm = [(a * 1e3, (b - a) * 1e3) for a, b in r["comm"]]
        ax.broken_barh(comp, (base + 1.0, 0.8), color=PALETTE["compute"])
        ax.broken_barh(comm, (base, 0.8), color=PALETTE["network"])
        ticks += [base + 1.4, base + 0.4]
        labels += [f"rank {r['rank']} compute", f"rank {r['rank']} comm"]
    ax.set_yticks(ticks, labels)
    ax.set_xlabel("time after the anchor all-reduce (ms)")
    ax.set_title(title)
    ax.set_xlim(left=0)
    plt.close(fig)  # shown once, by the cell that returns it
    return fig


def step_bars_figure(configs: Mapping[str, Mapping[str, float]], *, title: str):
    """Model vs measured step time, split into compute and exposed communication (ms)."""
    if not configs:
        raise ValueError("configs must name at least one configuration")
    fig, ax = new_figure(width_in=7.0, height_in=3.2)
    names = list(configs)
    for i, name in enumerate(names):
        cfg = configs[name]
        for j, (kind, step, exposed) in enumerate((
                ("model", cfg["step_s"], cfg["exposed_comm_s"]),
                ("measured", cfg["measured_step_s"], cfg["measured_exposed_s"]))):
            y = i * 3 + j
            ax.barh(y, (step - exposed) * 1e3, color=PALETTE["compute"], alpha=0.8,
                    label="compute" if (i, j) == (0, 0) else None)
            ax.barh(y, exposed * 1e3, left=(step - exposed) * 1e3, color=PALETTE["accent"],
                    label="exposed communication" if (i, j) == (0, 0) else None)
            ax.text(step * 1e3, y, f" {kind}", va="center", fontsize=9)
    ax.set_yticks([i * 3 + 0.5 for i in range(len(names))], [n.replace("_", " ") for n in names])
    ax.set_xlabel("step time (ms)")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=2, fontsize=8)
    plt.close(fig)  # shown once, by the cell that returns it
    return fig


def buckets_figure(n_buckets: Sequence[int], step_s: Sequence[float], compute_s: float):
    """Modelled step time against the number of gradient buckets, beside the computation (ms)."""
    if not n_buckets or len(n_buckets) != len(step_s):
        raise ValueError("n_buckets and step_s must be non-empty and of equal length")
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    ax.plot(list(n_buckets), [t * 1e3 for t in step_s], "o-", color=PALETTE["network"],
            label="bucket model")
    ax.axhline(compute_s * 1e3, color=PALETTE["compute"], ls="--", label="computation alone")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("number of gradient buckets")
    ax.set_ylabel("step time (ms)")
    ax.legend(fontsize=9)
    plt.close(fig)  # shown once, by the cell that returns it
    return fig
