"""Figures of lesson 18 ({ref}`sec-scheduling-and-kv-cache`) and the serving lab.

* :func:`opening_animation`: batch slots over iterations, static vs continuous batching, from
  the simulator (:mod:`helpers.sim.serving`) on a small trace: static batching leaves a slot
  idle until the batch's longest request ends; continuous batching refills it at once.
* :func:`structure_diagram`: two sequences' block tables mapping logical KV blocks to physical
  blocks of one pool, one block shared by both (a common prefix).
* :func:`memory_figure`: KV slots reserved and used over time (simulator or engine).
* :func:`metrics_figure`: the lab's measured metrics beside the simulator's predictions.

Every number drawn is computed from the arguments or a simulation; none is typed here.

Used by: chapters/scheduling-and-kv-cache.md, labs/serving.md.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..sim import workload as W
from ..sim.serving import StepModel, simulate
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_trace", "opening_animation", "structure_diagram", "memory_figure",
           "metrics_figure"]

_REQ_COLORS = [PALETTE[k] for k in ("memory", "compute", "host", "network", "queue", "accent")]


def opening_trace():
    """The small trace of the opening animation: 8 requests, 3 slots, varied output lengths."""
    outs = [6, 2, 3, 5, 2, 4, 3, 2]
    arr = [0, 0, 0, 1, 2, 3, 4, 5]
    return [W.Request(i, float(a), 1, o) for i, (a, o) in enumerate(zip(arr, outs))]


def _slots(sim: dict, n_slots: int) -> list[list[int | None]]:
    """Which request occupies each slot in each iteration (steps of one unit each)."""
    busy = {r["id"]: (round(r["token_times_s"][0]) - 1, round(r["token_times_s"][-1]))
            for r in sim["requests"]}
    n_steps = int(round(sim["makespan_s"]))
    grid = [[None] * n_steps for _ in range(n_slots)]
    for rid, (a, b) in sorted(busy.items(), key=lambda kv: kv[1]):
        for s in range(n_slots):
            if all(grid[s][t] is None for t in range(a, b)):
                for t in range(a, b):
                    grid[s][t] = rid
                break
    return grid


def opening_animation(n_slots: int = 3) -> Figure:
    """Slots over iterations under static and continuous batching (simulated, unit steps)."""
    trace = opening_trace()
    unit = StepModel(1.0, 0.0, 0.0)
    sims = {k: simulate(trace, k, unit, num_blocks=64, block_size=4, max_batch=n_slots)
            for k in ("static", "continuous")}
    static_sim = sims["static"]
    # a static batch keeps its slots until its longest member ends: extend each request to
    # the end of its batch (the idle part is drawn hatched)
    grids = {k: _slots(s, n_slots) for k, s in sims.items()}
    n_max = max(len(g[0]) for g in grids.values())
    cell, x0 = min(44.0, 480.0 / n_max), 200.0
    dur = 9.0
    c = Canvas(800, 360, "Static batching idles finished slots; continuous batching refills them",
               uid="schedkv-open", description=(
                   f"Animated grid of {n_slots} batch slots over iterations for "
                   f"{len(trace)} requests of different output lengths. Top, static batching: "
                   f"a batch runs until its longest request ends, so {len(grids['static'][0])} "
                   f"iterations. Bottom, continuous batching: a finished request's slot takes "
                   f"the next waiting request at the next iteration, "
                   f"{len(grids['continuous'][0])} iterations."))
    ends = {}
    for k, s in sims.items():
        ends[k] = {r["id"]: round(r["token_times_s"][-1]) for r in s["requests"]}
    batch_end = {}
    t_end = 0
    # static: batches are runs of iterations; a request's batch ends when all its mates end
    for r in sorted(static_sim["requests"], key=lambda r: r["token_times_s"][0]):
        start = round(r["token_times_s"][0]) - 1
        mates = [q for q in static_sim["requests"] if round(q["token_times_s"][0]) - 1 == start]
        batch_end[r["id"]] = max(round(q["token_times_s"][-1]) for q in mates)
    for row, (k, y0) in enumerate((("static", 40), ("continuous", 200))):
        g = grids[k]
        c.text(x0, y0 - 12, f"{k} batching", anchor="start", size=14, weight="700")
        for s in range(n_slots):
            y = y0 + s * (cell + 4)
            c.text(x0 - 12, y + cell / 2 + 4, f"slot {s + 1}", anchor="end", size=12, fill=MUTED)
            for t in range(n_max):
                c.rect(x0 + t * cell, y, cell - 3, cell - 3, fill="none", stroke=MUTED,
                       stroke_width=0.6, rx=3)
            idle = set()
            if k == "static":
                # grey: after a request ends, until its batch ends: after a request ends, until its batch ends
                done = [(rid, ends[k][rid], batch_end[rid]) for rid in set(x for x in g[s] if x is not None)]
                for rid, e, be in done:
                    idle |= set(range(e, be))
            for t in range(n_max):
                rid = g[s][t] if t < len(g[s]) else None
                show = Canvas.animate("opacity", [0, 0, 1, 1],
                                      key_times=[0, round(0.8 * t / n_max, 4),
                                                 round(0.8 * t / n_max, 4) + 0.001, 1], dur_s=dur)
                if rid is not None:
                    col = _REQ_COLORS[rid % len(_REQ_COLORS)]
                    c.rect(x0 + t * cell, y, cell - 3, cell - 3, fill=col, stroke="none", rx=3,
                           opacity=0.9, children=show)
                    c.text(x0 + t * cell + (cell - 3) / 2, y + cell / 2 + 3, f"R{rid + 1}",
                           size=11, fill="#ffffff", weight="600", children=show)
                elif t in idle:
                    c.rect(x0 + t * cell, y, cell - 3, cell - 3, fill=PALETTE["neutral"],
                           stroke="none", rx=3, opacity=0.35, children=show)
                    c.text(x0 + t * cell + (cell - 3) / 2, y + cell / 2 + 3, "idle", size=10,
                           fill=MUTED, children=show)
        n = len(g[0])
        c.text(x0 + n_max * cell + 6, y0 + n_slots * (cell + 4) / 2, f"{n} iterations",
               anchor="start", size=13, fill=PALETTE["accent"], weight="600")
    c.mark_animated()
    c.text(400, 348, "Click to pause. Each column is one iteration (one decode step); R1..R8 "
                     "arrive over time and need different numbers of tokens.", size=12,
           fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Block tables of two sequences into one physical pool, a prefix block shared."""
    c = Canvas(800, 330, "Paged KV cache: block tables map logical blocks to physical blocks",
               uid="schedkv-struct", description=(
                   "Diagram. Left: sequence A has 3 logical blocks and sequence B 2; each "
                   "sequence's block table lists the physical block holding each logical "
                   "block. Right: a pool of 8 physical blocks of 4 token slots each. A's "
                   "blocks are physical 5, 1 and 6, B's are 5 and 3: block 5, full of their "
                   "common prompt prefix, is shared (reference count 2). The last block of each "
                   "sequence is partly filled: that is all the waste paging leaves. Blocks 0, "
                   "2, 4 and 7 are on the free list."))
    tables = {"A": ([5, 1, 6], 10, PALETTE["memory"]), "B": ([5, 3], 7, PALETTE["compute"])}
    bs, pool_x, pool_y, pw, ph = 4, 500, 40, 220, 30
    fill = {}
    for name, (blocks, n, col) in tables.items():
        for i, b in enumerate(blocks):
            fill.setdefault(b, (min(bs, n - i * bs), col, []))[2].append(name)
    c.text(pool_x + pw / 2, 24, "physical KV pool (block size 4)", size=13, weight="700")
    for b in range(8):
        y = pool_y + b * (ph + 5)
        c.text(pool_x - 10, y + ph / 2 + 4, f"{b}", anchor="end", size=12, fill=MUTED)
        used, col, owners = fill.get(b, (0, None, []))
        for sl in range(bs):
            sw = pw / bs
            on = sl < used
            color = PALETTE["accent"] if len(owners) > 1 else col
            c.rect(pool_x + sl * sw, y, sw - 3, ph, fill=color if on else "none",
                   stroke=MUTED, stroke_width=0.8, rx=3, opacity=0.85 if on else None)
        label = ("shared (2)" if len(owners) > 1 else
                 f"{owners[0]}" if owners else "free")
        c.text(pool_x + pw + 8, y + ph / 2 + 4, label, anchor="start", size=12,
               fill=PALETTE["accent"] if len(owners) > 1 else MUTED)
    for row, (name, (blocks, n, col)) in enumerate(tables.items()):
        y = 70 + row * 140
        c.text(20, y - 12, f"sequence {name}: {n} tokens", anchor="start", size=13, weight="700")
        for i, b in enumerate(blocks):
            x = 20 + i * 92
            c.box(x, y, 84, 40, f"logical {i}", color=col, size=12)
            c.box(x, y + 50, 84, 34, f"-> {b}", color=PALETTE["neutral"], size=12)
            c.line(x + 84, y + 67, pool_x - 24, pool_y + b * (ph + 5) + ph / 2, stroke=col,
                   width=1.2, arrow=True, dash="4 3")
        c.text(20, y + 100, "block table", anchor="start", size=11, fill=MUTED)
    return c.figure()


def memory_figure(memory: list[dict], *, title: str, contiguous: list[dict] | None = None):
    """KV slots reserved and used against time, optionally with a contiguous allocator's
    reservation."""
    fig, ax = new_figure(width_in=7.0, height_in=3.2)
    t = [m["t_s"] for m in memory]
    ax.step(t, [m["reserved_tokens"] for m in memory], where="post", color=COLORS["memory"],
            lw=3.5, alpha=0.55, label="reserved (paged blocks)")
    ax.step(t, [m["used_tokens"] for m in memory], where="post", color=COLORS["compute"],
            lw=1.0, label="used (tokens stored)")
    if contiguous:
        ax.step([m["t_s"] for m in contiguous], [m["reserved_tokens"] for m in contiguous],
                where="post", color=COLORS["neutral"], ls="--",
                label="reserved (contiguous, max length)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("KV slots (tokens)")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    plt.close(fig)  # shown once, as the cell's result
    return fig


def metrics_figure(rows: list[dict], *, title: str):
    """Engine against simulator per scheduler: throughput, TTFT p50, TPOT p50 (ratios)."""
    keep = [r for r in rows if r["quantity"] in ("throughput", "TTFT p50", "TPOT p50")]
    fig, axes = new_figure(1, 3, width_in=8.0, height_in=3.0)
    for ax, q in zip(axes, ("throughput", "TTFT p50", "TPOT p50")):
        rs = [r for r in keep if r["quantity"] == q]
        x = np.arange(len(rs))
        unit, scale = rs[0]["unit"], rs[0]["scale"]
        ax.bar(x - 0.2, [r["engine"] / scale for r in rs], 0.4, color=COLORS["memory"],
               label="engine (measured)")
        ax.bar(x + 0.2, [(r["simulator"] or 0) / scale for r in rs], 0.4,
               color=COLORS["compute"], label="simulator")
        ax.set_xticks(x, [r["scheduler"] for r in rs])
        ax.set_title(f"{q} ({unit})", fontsize=10)
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    plt.close(fig)
    return fig
