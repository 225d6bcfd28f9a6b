"""Figures of the page "Distributed model parallelism" ({ref}`sec-parallelism`).

* :func:`opening_animation`: a 1F1B pipeline step filling, running and draining on four GPUs;
  every operation appears when the schedule simulator starts it, and the idle cells that remain
  are the bubble.
* :func:`structure_diagram`: a ``dp x tp x pp`` mesh of ranks, each labelled with its global
  rank (:func:`helpers.models.parallelism.rank_of`), and the traffic of each axis.
* Plots (matplotlib): :func:`timeline_figure` (a simulated schedule as a Gantt chart) and
  :func:`zero_memory_figure` (per-rank model state under each ZeRO stage).

Every number drawn comes from :mod:`helpers.sim.pipeline` or
:mod:`helpers.models.parallelism`; none is typed here.

Used by: chapters/parallelism.md.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..models import parallelism as par
from ..sim import pipeline as pipe
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "timeline_figure", "zero_memory_figure"]

F_COLOR, B_COLOR = PALETTE["memory"], PALETTE["compute"]


def _detached(fig):
    """Remove ``fig`` from pyplot's registry so a notebook shows it once."""
    plt.close(fig)
    return fig


# --- SVG: opening animation --------------------------------------------------------------

def opening_animation(*, pp: int = 4, n_microbatches: int = 8, forward_s: float = 1.0,
                      backward_s: float = 2.0, seconds_per_unit: float = 0.25) -> Figure:
    """A 1F1B step simulated by :func:`helpers.sim.pipeline.simulate`, drawn as it runs.

    ``seconds_per_unit`` is animation seconds per unit of simulated time; the finished timeline
    stays on screen for a few seconds, then the cycle repeats.
    """
    if not (1 <= int(pp) <= 6 and 1 <= int(n_microbatches) <= 12):
        raise ValueError(f"pp must be in [1, 6] and n_microbatches in [1, 12] to fit the "
                         f"drawing, got {pp!r} and {n_microbatches!r}")
    if not seconds_per_unit > 0:
        raise ValueError(f"seconds_per_unit must be > 0, got {seconds_per_unit!r}")
    tl = pipe.simulate("1f1b", pp=pp, n_microbatches=n_microbatches, forward_s=forward_s,
                       backward_s=backward_s)
    span = tl.makespan_s
    bubble = tl.bubble_fraction()
    hold = 4.0
    dur = span * seconds_per_unit + hold
    x0, x1, y0, row_h = 90.0, 770.0, 60.0, 44.0
    height = y0 + pp * row_h + 70
    c = Canvas(800, height, "A 1F1B pipeline step fills, runs and drains", uid="par-open",
               description=(
                   f"Animated timeline. {pp} GPUs each hold one stage of the model. "
                   f"{n_microbatches} micro-batches pass forward (blue) through the stages and "
                   f"then backward (orange). Each GPU alternates one forward and one backward "
                   f"once the pipeline is full. The empty cells at the start and the end are the "
                   f"pipeline bubble: {bubble:.0%} of the step on every GPU."))
    c.mark_animated()

    def sx(t: float) -> float:
        return x0 + (x1 - x0) * t / span

    def kt(t: float) -> float:
        return round(min(max(t * seconds_per_unit / dur, 0.0), 1.0), 4)

    c.text(x0, 28, "time →", size=13, anchor="start", fill=MUTED)
    c.text(x1, 28, f"F = forward, B = backward, number = micro-batch; {pp} stages, "
                   f"{n_microbatches} micro-batches", size=12, anchor="end", fill=MUTED)
    for s in range(pp):
        y = y0 + s * row_h
        c.text(x0 - 12, y + row_h / 2 - 4, f"GPU {s}", size=13, anchor="end", weight="600")
        c.rect(x0, y, x1 - x0, row_h - 8, fill="none", stroke=MUTED, stroke_width=0.8, rx=2,
               dash="3 3")
    for o in tl.ops:
        y = y0 + o.stage * row_h
        k = kt(o.start_s)
        show = Canvas.animate("opacity", [0, 0, 0.9, 0.9], key_times=[0, k, min(k + 0.002, 1), 1],
                              dur_s=dur)
        color = F_COLOR if o.kind == "F" else B_COLOR
        w = sx(o.end_s) - sx(o.start_s)
        c.raw("<g opacity=\"0\">" + show)
        c.rect(sx(o.start_s) + 1, y + 1, w - 2, row_h - 10, fill=color, stroke="none", rx=3)
        c.text(sx(o.start_s) + w / 2, y + (row_h - 8) / 2, f"{o.kind}{o.microbatch}", size=11,
               fill="#ffffff", weight="600")
        c.raw("</g>")
    # A cursor sweeping the timeline.
    cursor = Canvas.animate("x1", [x0, x0, x1, x1], key_times=[0, 0, kt(span), 1], dur_s=dur)
    cursor2 = Canvas.animate("x2", [x0, x0, x1, x1], key_times=[0, 0, kt(span), 1], dur_s=dur)
    ybot = y0 + pp * row_h - 8
    c.raw(f'<line x1="{x0}" y1="{y0 - 6}" x2="{x0}" y2="{ybot + 6}" stroke="{PALETTE["accent"]}"'
          f' stroke-width="2">{cursor}{cursor2}</line>')
    done = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(span), kt(span) + 0.01, 1],
                          dur_s=dur)
    c.text(400, ybot + 34, f"idle cells = the bubble: {bubble:.0%} of the step on each GPU",
           size=14, weight="600", fill=PALETTE["accent"], children=done)
    c.text(x0, ybot + 34, "Click to pause.", size=12, anchor="start", fill=MUTED)
    return c.figure()


# --- SVG: structure diagram --------------------------------------------------------------

def structure_diagram(*, dp: int = 2, tp: int = 4, pp: int = 2) -> Figure:
    """The ranks of a ``dp x tp x pp`` mesh: columns are pipeline stages, rows data-parallel
    replicas, and inside each box the tensor-parallel ranks (consecutive, one NVLink domain)."""
    if not (1 <= dp <= 4 and 1 <= tp <= 8 and 1 <= pp <= 4):
        raise ValueError(f"dp <= 4, tp <= 8 and pp <= 4 fit the drawing, got {dp}, {tp}, {pp}")
    world = dp * tp * pp
    cell, gap = 34, 6
    box_w = tp * (cell + gap) + 24
    box_h = cell + 46
    col_gap, row_gap = 90, 34
    left, top = 150, 70
    width = max(800, left + pp * box_w + (pp - 1) * col_gap + 60)
    height = top + dp * box_h + (dp - 1) * row_gap + 150
    c = Canvas(width, height, f"A {dp} x {tp} x {pp} mesh of {world} ranks", uid="par-mesh",
               description=(
                   f"Diagram. {world} GPUs arranged as {dp} data-parallel replicas (rows) of a "
                   f"model cut into {pp} pipeline stages (columns); each stage is split over "
                   f"{tp} tensor-parallel GPUs with consecutive ranks. Tensor-parallel GPUs "
                   f"all-reduce activations inside every layer; neighbouring stages pass "
                   f"activations forward and gradients back; replicas all-reduce (or, with "
                   f"ZeRO, reduce-scatter and all-gather) gradients once per step."))
    tpc, ppc, dpc = PALETTE["compute"], PALETTE["memory"], PALETTE["network"]
    for i_p in range(pp):
        bx = left + i_p * (box_w + col_gap)
        c.text(bx + box_w / 2, top - 30, f"pipeline stage {i_p}", size=13, weight="700")
        c.text(bx + box_w / 2, top - 13, f"layer block {i_p + 1} of {pp}", size=11,
               fill=MUTED)
        for i_d in range(dp):
            by = top + i_d * (box_h + row_gap)
            c.box(bx, by, box_w, box_h, "", color=tpc, fill_opacity=0.07)
            c.text(bx + box_w / 2, by + 13, f"tensor-parallel group ({tp} GPUs)", size=10.5,
                   fill=MUTED)
            for i_t in range(tp):
                r = par.rank_of(i_d=i_d, i_p=i_p, i_t=i_t, dp=dp, tp=tp, pp=pp)
                cx = bx + 12 + i_t * (cell + gap)
                c.rect(cx, by + 28, cell, cell, fill=tpc, stroke="none", rx=4, opacity=0.8)
                c.text(cx + cell / 2, by + 28 + cell / 2, str(r), size=12, fill="#ffffff",
                       weight="700")
            if i_p + 1 < pp:
                c.line(bx + box_w + 4, by + box_h / 2 - 6, bx + box_w + col_gap - 4,
                       by + box_h / 2 - 6, stroke=ppc, arrow=True, width=2)
                c.line(bx + box_w + col_gap - 4, by + box_h / 2 + 6, bx + box_w + 4,
                       by + box_h / 2 + 6, stroke=ppc, arrow=True, width=2, dash="4 3")
    for i_d in range(dp):
        by = top + i_d * (box_h + row_gap)
        c.text(left - 14, by + box_h / 2, f"replica {i_d}", size=13, anchor="end", weight="600")
    if dp > 1:
        ytop, ybot = top + 10, top + (dp - 1) * (box_h + row_gap) + box_h - 10
        c.line(left - 110, ytop, left - 110, ybot, stroke=dpc, both=True, width=2)
    ly = top + dp * box_h + (dp - 1) * row_gap + 30
    c.rect(30, ly - 8, 16, 12, fill=tpc, stroke="none", rx=2, opacity=0.8)
    c.text(54, ly - 2, f"tensor parallel (t = {tp}): weights split {tp} ways; two all-reduces of "
                       "activations per layer, forward and backward (NVLink)", size=12,
           anchor="start")
    c.line(30, ly + 24, 46, ly + 24, stroke=ppc, width=2, arrow=True)
    c.text(54, ly + 24, f"pipeline (p = {pp}): activations forward, gradients back (dashed), one "
                        "message per micro-batch", size=12, anchor="start")
    c.line(38, ly + 40, 38, ly + 56, stroke=dpc, width=2, both=True)
    c.text(54, ly + 48, f"data parallel (N_d = {dp}): gradients all-reduced once per step; "
                        "ZeRO shards optimizer state, gradients, weights", size=12, anchor="start")
    c.text(54, ly + 74, f"rank = i_t + t (i_d + N_d i_p): world = {dp} x {tp} x {pp} = {world}",
           size=12, anchor="start", fill=MUTED)
    return c.figure()


# --- matplotlib: timeline and memory ------------------------------------------------------

def timeline_figure(timeline: pipe.Timeline, *, ax=None, title: str | None = None):
    """A simulated schedule as a Gantt chart: one row per rank, forward and backward bars
    labelled with their micro-batch; the title gives the measured bubble."""
    if not isinstance(timeline, pipe.Timeline):
        raise ValueError(f"timeline must be a helpers.sim.pipeline.Timeline, got "
                         f"{type(timeline).__name__}")
    own = ax is None
    if own:
        fig, ax = new_figure(width_in=7.6, height_in=0.5 * timeline.pp + 1.2)
    else:
        fig = ax.figure
    for o in timeline.ops:
        color = F_COLOR if o.kind == "F" else B_COLOR
        alpha = 1.0 - 0.45 * (o.chunk % 2)
        ax.barh(o.stage, o.end_s - o.start_s, left=o.start_s, height=0.8, color=color,
                alpha=alpha, edgecolor="white", linewidth=0.6)
        if o.end_s - o.start_s >= 0.025 * timeline.makespan_s:
            ax.text((o.start_s + o.end_s) / 2, o.stage, str(o.microbatch), ha="center",
                    va="center", fontsize=7.5, color="white")
    ax.set_yticks(range(timeline.pp), [f"GPU {s}" for s in range(timeline.pp)])
    ax.invert_yaxis()
    ax.set_xlim(0, timeline.makespan_s)
    ax.set_xlabel("time (units of one forward of one micro-batch)")
    ax.grid(axis="y", visible=False)
    name = {"gpipe": "GPipe", "1f1b": "1F1B",
            "interleaved": f"interleaved 1F1B (v = {timeline.chunks})"}[timeline.schedule]
    ax.set_title(title or f"{name}: p = {timeline.pp}, m = {timeline.n_microbatches}, "
                          f"bubble {timeline.bubble_fraction():.1%}", loc="left")
    return _detached(fig) if own else fig


def zero_memory_figure(n_params: float, *, dp: int, capacity_bytes: float | None = None,
                       ax=None):
    """Per-rank bytes of weights, gradients and optimizer state under ZeRO stages 0-3
    (:func:`helpers.models.parallelism.zero_model_state_bytes_per_rank`), in GB, with an
    optional line at a GPU's memory."""
    own = ax is None
    if own:
        fig, ax = new_figure(width_in=6.4, height_in=3.2)
    else:
        fig = ax.figure
    parts = [("weights (16-bit)", dict(weight_bytes_per_param=2.0, grad_bytes_per_param=0.0,
                                       optimizer_state_bytes_per_param=0.0), PALETTE["memory"]),
             ("gradients (16-bit)", dict(weight_bytes_per_param=0.0, grad_bytes_per_param=2.0,
                                         optimizer_state_bytes_per_param=0.0), PALETTE["host"]),
             ("optimizer state (K = 12)", dict(weight_bytes_per_param=0.0,
                                               grad_bytes_per_param=0.0,
                                               optimizer_state_bytes_per_param=12.0),
              PALETTE["compute"])]
    labels = ["DP", "ZeRO-1\n(os)", "ZeRO-2\n(os+g)", "ZeRO-3\n(os+g+p)"]
    bottoms = [0.0] * 4
    for name, kw, color in parts:
        vals = [par.zero_model_state_bytes_per_rank(n_params, dp=dp, zero_stage=s, **kw) / 1e9
                for s in range(4)]
        ax.bar(labels, vals, bottom=bottoms, color=color, label=name, width=0.6)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    for i, tot in enumerate(bottoms):
        ax.text(i, tot, f"{tot:,.0f} GB" if tot >= 100 else f"{tot:.3g} GB", ha="center",
                va="bottom", fontsize=9)
    if capacity_bytes is not None:
        ax.axhline(capacity_bytes / 1e9, color=PALETTE["accent"], linestyle="--", linewidth=1.2)
        ax.text(-0.4, capacity_bytes / 1e9, "one GPU's memory", ha="left", va="bottom",
                fontsize=9, color=PALETTE["accent"])
    ax.set_ylabel("model state per rank (GB)")
    ax.set_title(f"{n_params / 1e9:.3g}B parameters on N_d = {dp} ranks", loc="left")
    top = max(bottoms + ([capacity_bytes / 1e9] if capacity_bytes is not None else []))
    ax.set_ylim(0, 1.15 * top)
    ax.legend(loc="center right")
    ax.grid(axis="x", visible=False)
    return _detached(fig) if own else fig
