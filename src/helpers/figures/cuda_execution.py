"""Figures of the page "CUDA execution and synchronization" ({ref}`sec-cuda-execution`).

* :func:`opening_animation`: the blocks of a grid are dealt to SMs in waves; each SM holds as
  many blocks as its resources allow, and the last wave runs part-empty (the tail).
* :func:`structure_diagram`: grid -> blocks -> warps -> threads, and what each maps onto in
  the GPU (the whole GPU, one SM, one scheduler, one lane with its registers).
* :func:`streams_diagram`: two streams, an event that orders them, and a host call that
  waits (``.item()``).
* Plots (matplotlib, the book's style): :func:`occupancy_curve_figure` (occupancy against
  registers per thread for several block sizes) and :func:`limits_figure` (blocks per SM
  allowed by each resource, the binding one highlighted).

Every number drawn is computed from the arguments (the SM limits of :mod:`helpers.specs` and
the model :mod:`helpers.models.occupancy`); none is typed here.

Used by: chapters/cuda-execution.md.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import specs
from ..models import occupancy as occ
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "streams_diagram",
           "occupancy_curve_figure", "limits_figure"]

#: Muted text colour for matplotlib (plots are PNG on a white card; no CSS variables there).
MUTED_HEX = "#59636e"


def _detached(fig):
    """Remove ``fig`` from pyplot's registry so a notebook shows it once."""
    plt.close(fig)
    return fig


# --- SVG: opening animation --------------------------------------------------------------

def opening_animation(*, n_blocks: int = 20, n_sms: int = 4, blocks_per_sm: int = 2,
                      wave_s: float = 1.6) -> Figure:
    """Blocks of a grid dealt to SMs in waves, animated.

    Block ``i`` runs in wave ``i // (n_sms * blocks_per_sm)``; during its wave it sits in a slot
    of an SM, then it finishes and frees the slot for the next wave. ``wave_s`` is the
    animation time per wave (seconds of animation, not of GPU time). The number of waves and
    the filling of the last one come from :func:`helpers.models.occupancy.waves`.
    """
    for name, v in (("n_blocks", n_blocks), ("n_sms", n_sms), ("blocks_per_sm", blocks_per_sm)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if n_blocks > 40 or n_sms > 6 or blocks_per_sm > 4:
        raise ValueError("at most 40 blocks, 6 SMs and 4 blocks per SM fit the drawing")
    if not wave_s > 0:
        raise ValueError(f"wave_s must be > 0, got {wave_s!r}")
    per_wave = n_sms * blocks_per_sm
    n_waves = occ.waves(n_blocks, blocks_per_sm, n_sms)
    last = n_blocks - (n_waves - 1) * per_wave
    dur = (n_waves + 1) * wave_s  # one empty wave at the end, then the cycle repeats
    c = Canvas(780, 330, "The blocks of a grid run on the SMs in waves", uid="cuda-open",
               description=(
                   f"Animated diagram. A grid of {n_blocks} thread blocks waits on the left. "
                   f"{n_sms} SMs on the right each hold {blocks_per_sm} blocks at a time, so "
                   f"{per_wave} blocks run per wave and the grid takes {n_waves} waves. Each "
                   f"block stays on its SM until it finishes. The last wave has {last} blocks "
                   f"for {per_wave} slots."))
    blk, sm_c, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    bw, bh = 40, 26

    # The grid, as a queue of blocks.
    cols = 4
    rows = -(-n_blocks // cols)
    gx, gy = 30, 70
    c.text(gx + cols * (bw + 6) / 2, 40, f"grid: {n_blocks} blocks", size=14, weight="600")
    c.rect(gx - 10, gy - 10, cols * (bw + 6) + 14, rows * (bh + 6) + 14, fill="none",
           stroke=MUTED, stroke_width=1, dash="4 4")

    # The SMs with their slots.
    sx, sy, sm_w = 330, 60, 420
    sm_h = (300 - sy) / n_sms - 8
    slot_pos = []
    for k in range(n_sms):
        y = sy + k * (sm_h + 8)
        c.box(sx, y, sm_w, sm_h, "", color=sm_c, fill_opacity=0.06)
        c.text(sx + 36, y + sm_h / 2, f"SM {k}", size=13, weight="600")
        for j in range(blocks_per_sm):
            x = sx + 80 + j * (bw + 24)
            c.rect(x, y + (sm_h - bh) / 2, bw, bh, fill="none", stroke=MUTED, stroke_width=1,
                   rx=3, dash="3 3")
            slot_pos.append((x, y + (sm_h - bh) / 2))
    c.text(sx + sm_w / 2, 40, f"{n_sms} SMs x {blocks_per_sm} resident blocks = {per_wave} "
                              "slots per wave", size=14, weight="600")

    def kt(t: float) -> float:
        return round(min(max(t / dur, 0.0), 1.0), 4)

    c.mark_animated()
    move = 0.25 * wave_s
    for i in range(n_blocks):
        w, slot = divmod(i, per_wave)
        # Blocks go to SM 0 slot 0, SM 1 slot 0, ... round-robin, as a scheduler spreads them.
        sm, j = slot % n_sms, slot // n_sms
        x0, y0 = gx + (i % cols) * (bw + 6), gy + (i // cols) * (bh + 6)
        x1, y1 = slot_pos[sm * blocks_per_sm + j]
        t_go, t_in, t_done = w * wave_s, w * wave_s + move, (w + 1) * wave_s - 0.05 * wave_s
        dx, dy = x1 - x0, y1 - y0
        keys = [0, kt(t_go), kt(t_in), kt(t_done), kt(t_done + 0.05 * wave_s), 1]
        trans = ";".join(["0,0", "0,0", f"{dx:.1f},{dy:.1f}", f"{dx:.1f},{dy:.1f}",
                          f"{dx:.1f},{dy:.1f}", f"{dx:.1f},{dy:.1f}"])
        c.raw(f'<g><animateTransform attributeName="transform" type="translate" '
              f'values="{trans}" keyTimes="{";".join(str(k) for k in keys)}" dur="{dur:g}s" '
              f'repeatCount="indefinite"/>'
              f'<animate attributeName="opacity" values="1;1;1;1;0;0" '
              f'keyTimes="{";".join(str(k) for k in keys)}" dur="{dur:g}s" '
              f'repeatCount="indefinite"/>')
        color = acc if w == n_waves - 1 else blk
        c.rect(x0, y0, bw, bh, fill=color, stroke="none", rx=3, opacity=0.85)
        c.text(x0 + bw / 2, y0 + bh / 2, f"b{i}", size=11, fill="#ffffff", weight="600")
        c.raw("</g>")

    # Wave counter, and the tail note during the last wave.
    for w in range(n_waves):
        show = Canvas.animate("opacity", [0, 0, 1, 1, 0, 0],
                              key_times=[0, kt(w * wave_s), kt(w * wave_s + 0.01),
                                         kt((w + 1) * wave_s - 0.01), kt((w + 1) * wave_s), 1],
                              dur_s=dur)
        label = f"wave {w + 1} of {n_waves}"
        if w == n_waves - 1 and last < per_wave:
            label += f": the tail, {last} blocks in {per_wave} slots"
        c.text(sx + sm_w / 2, 314, label, size=13, weight="600",
               fill=acc if w == n_waves - 1 else MUTED, children=show)
    c.text(140, 314, "Click to pause.", size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram ------------------------------------------------------------------

def structure_diagram(limits: specs.SMLimits = specs.SM90) -> Figure:
    """Left: the software hierarchy (grid, block, warp, thread). Right: what each maps onto.

    The SM's capacities (warp slots, block slots, registers, shared memory) are read from
    ``limits``.
    """
    if not isinstance(limits, specs.SMLimits):
        raise ValueError(f"limits must be a helpers.specs.SMLimits, got {type(limits).__name__}")
    lim = limits
    c = Canvas(800, 400, "Grids, blocks, warps and threads, and where each one runs",
               uid="cuda-struct", description=(
                   "Diagram. Left, the software hierarchy: a kernel launch is a grid of thread "
                   "blocks; a block is a group of up to "
                   f"{lim.max_threads_per_block} threads split into warps of {lim.warp_size}; "
                   "each thread has its own registers. Right, where each runs: the grid spreads "
                   "over all SMs of the GPU; a block lives on one SM from start to finish and "
                   "shares its shared memory and barrier; a warp is issued by one of the SM's "
                   "schedulers, its threads in lockstep; a thread is one lane. The SM "
                   f"({lim.name}) holds at most {lim.max_blocks_per_sm} blocks, "
                   f"{lim.max_warps_per_sm} warps, {lim.registers_per_sm} registers and "
                   f"{lim.smem_per_sm_bytes // 1024} KiB of shared memory."))
    blk, warp_c, thr, sm_c, mem = (PALETTE["memory"], PALETTE["queue"], PALETTE["host"],
                                   PALETTE["compute"], PALETTE["network"])
    c.text(180, 20, "What you launch", size=14, weight="700")
    c.text(600, 20, "Where it runs", size=14, weight="700")
    rows = [
        ("grid", "all blocks of one launch", PALETTE["accent"], "the whole GPU",
         "blocks go to any SM, in any order"),
        ("block", f"up to {lim.max_threads_per_block} threads", blk, "one SM, start to finish",
         "shares shared memory and __syncthreads()"),
        ("warp", f"{lim.warp_size} threads", warp_c, "one warp scheduler",
         "one instruction for all its threads"),
        ("thread", "its own registers", thr, "one lane", "private registers, spills to local"),
    ]
    y = 40
    for name, sub, color, where, how in rows:
        c.box(30, y, 300, 58, name, sublabel=sub, color=color, size=14)
        c.box(470, y, 300, 58, where, sublabel=how, color=sm_c, size=13, fill_opacity=0.08)
        c.line(332, y + 29, 468, y + 29, stroke=MUTED, arrow=True)
        y += 70
    # Small drawing of the nesting between the rows.
    for k in range(3):
        c.line(180, 98 + 70 * k, 180, 110 + 70 * k, stroke=MUTED, dash="2 3")
    # The SM's budget, from the limits.
    c.box(30, 330, 740, 58, f"One SM of {lim.name}",
          sublabel=(f"{lim.max_blocks_per_sm} block slots, {lim.max_warps_per_sm} warp slots, "
                    f"{lim.registers_per_sm:,} registers in {lim.register_sub_partitions} parts, "
                    f"{lim.smem_per_sm_bytes // 1024} KiB shared memory: a block is placed only "
                    "when all of its needs fit"),
          color=mem, size=13, fill_opacity=0.08)
    return c.figure()


# --- SVG: streams and events -----------------------------------------------------------------

def streams_diagram() -> Figure:
    """Two streams on a timeline: an event recorded on one orders a kernel on the other, and a
    host call that needs a value (``.item()``) waits for the stream to reach it."""
    c = Canvas(800, 300, "Streams, an event between them, and a host call that waits",
               uid="cuda-streams", description=(
                   "Timeline diagram with three lanes. Host: launches kernels A1, A2 on stream "
                   "A, records event e after A1, makes stream B wait for e, launches B1 and B2 "
                   "on stream B, then calls .item(), which blocks until A2 has finished. "
                   "Stream A runs A1 then A2. Stream B runs B1 at once, in parallel with A1, but "
                   "B2 starts only after event e, that is after A1. Work in one stream runs in "
                   "order; across streams, only events order it."))
    host, a_c, b_c, acc = PALETTE["host"], PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    x0 = 150
    lanes = {"host": 50, "stream A": 130, "stream B": 210}
    for name, y in lanes.items():
        c.text(x0 - 14, y + 20, name, anchor="end", size=13, weight="600")
        c.line(x0, y + 40, 780, y + 40, stroke=MUTED, width=1, dash="2 4")
    # Host launches (thin ticks) and the blocking .item().
    launches = ["A1", "rec e", "A2", "B waits e", "B1", "B2"]
    for k, label in enumerate(launches):
        x = 160 + 34 * k
        c.rect(x, 58, 26, 24, fill=host, stroke="none", rx=2, opacity=0.8)
        c.text(x + 13, 94 + 12 * (k % 2), label, size=10.5, fill=MUTED)
    c.rect(370, 58, 330, 24, fill=host, stroke="none", rx=2, opacity=0.25)
    c.text(535, 70, ".item(): the host waits for A2's result", size=12, weight="600")
    # Stream A: A1 then A2; event e between them.
    c.box(190, 138, 230, 34, "A1", color=a_c, size=13)
    c.box(426, 138, 274, 34, "A2", color=a_c, size=13)
    c.line(423, 128, 423, 182, stroke=acc, width=2.5)
    c.text(423, 120, "event e", size=11.5, fill=acc, weight="600")
    # Stream B: B1 runs at once, beside A1; B2 waits for e.
    c.box(330, 218, 86, 34, "B1", color=b_c, size=13)
    c.box(430, 218, 180, 34, "B2 (after e)", color=b_c, size=13)
    c.path("M 423 182 C 423 200, 430 200, 430 216", stroke=acc, dash="4 3", arrow=True)
    # The host's wait ends when A2 ends.
    c.line(700, 136, 700, 84, stroke=MUTED, dash="3 3", arrow=True)
    c.text(465, 282, "In a stream, work runs in launch order. Across streams, only events "
                     "(and the host's waits) order it.", size=12, fill=MUTED)
    return c.figure()


# --- matplotlib plots ----------------------------------------------------------------------

def occupancy_curve_figure(limits: specs.SMLimits = specs.SM90, *,
                           block_sizes: Sequence[int] = (128, 256, 512, 1024),
                           smem_bytes: int = 0, mark_registers: int | None = None):
    """Theoretical occupancy against registers per thread, one line per block size.

    Registers that cannot launch at a block size (too many per block) end that line.
    ``mark_registers`` draws a vertical line at a kernel's register count.
    """
    if not block_sizes:
        raise ValueError("block_sizes must name at least one block size")
    regs = np.arange(1, limits.max_registers_per_thread + 1)
    fig, ax = new_figure(width_in=6.8, height_in=3.4)
    for t in block_sizes:
        ys = []
        for r in regs:
            try:
                ys.append(occ.occupancy(threads_per_block=int(t), registers_per_thread=int(r),
                                        smem_bytes=smem_bytes, limits=limits).fraction)
            except ValueError:
                ys.append(np.nan)
        ax.step(regs, np.array(ys) * 100, where="post", label=f"{t} threads per block")
    if mark_registers is not None:
        ax.axvline(mark_registers, color=MUTED_HEX, ls=":", lw=1.4)
        ax.text(mark_registers + 3, 8, f"{mark_registers} registers", fontsize=9.5,
                color=MUTED_HEX)
    ax.set_xlim(0, limits.max_registers_per_thread + 1)
    ax.set_ylim(0, 105)
    ax.set_xlabel("registers per thread")
    ax.set_ylabel("theoretical occupancy (%)")
    ax.set_title(f"Registers against resident warps, {limits.name}")
    ax.legend(loc="upper right")
    return _detached(fig)


def limits_figure(o: occ.Occupancy, limits: specs.SMLimits):
    """Bars: blocks per SM each resource allows; the binding ones highlighted."""
    if not isinstance(o, occ.Occupancy):
        raise ValueError(f"o must be an Occupancy, got {type(o).__name__}")
    fig, ax = new_figure(width_in=6.4, height_in=2.8)
    names = list(o.by_limit)
    vals = [o.by_limit[k] for k in names]
    cap = limits.max_blocks_per_sm
    colors = [PALETTE["accent"] if k in o.binding else PALETTE["neutral"] for k in names]
    bars = ax.barh(names, [min(v, cap * 1.25) for v in vals], color=colors)
    for bar, v in zip(bars, vals):
        ax.text(bar.get_width() + 0.3, bar.get_y() + bar.get_height() / 2, f"{v}",
                va="center", fontsize=10)
    ax.invert_yaxis()
    ax.set_xlim(0, cap * 1.4)
    ax.set_xlabel("blocks per SM this resource allows")
    ax.set_title(f"{o.blocks_per_sm} blocks x {o.warps_per_block} warps = {o.active_warps} of "
                 f"{o.max_warps} warp slots\noccupancy {o.fraction:.1%}, limited by "
                 f"{' and '.join(o.binding)}", fontsize=10.5)
    return _detached(fig)
