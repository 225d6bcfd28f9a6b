"""Figures of the lab "Decode is memory-bound" ({ref}`sec-lab-decode`).

* :func:`opening_animation`: one decode step; the weights stream from HBM once for the whole
  batch, every sequence's KV cache streams on its own, and one token per sequence comes out;
* :func:`structure_diagram`: what the runner builds, checks, times and compares;
* :func:`rate_figure`: tokens per second against batch size, measured and modelled, on log axes.

Used by: labs/decode.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .style import finish_panels, log2_panel, panel_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "rate_figure"]


def opening_animation(batch: int = 4, dur_s: float = 4.0) -> Figure:
    """One decode step of ``batch`` sequences: the weights are read once, each KV cache once."""
    if not (isinstance(batch, int) and 1 <= batch <= 6):
        raise ValueError(f"batch must be an integer from 1 to 6, got {batch!r}")
    if not dur_s > 0:
        raise ValueError(f"dur_s must be > 0, got {dur_s!r}")
    c = Canvas(820, 330, "One decode step: the weights are read once per step, each KV cache "
               "once per sequence", uid="labdec-open", description=(
                   f"Animation. HBM on the left holds the model's weights and one KV cache per "
                   f"sequence ({batch} sequences). In every step the weights stream to the "
                   f"SMs once, shared by all {batch} sequences, while each sequence's KV cache "
                   f"streams separately; after the step one new token per sequence leaves on "
                   f"the right. Doubling the batch doubles the tokens and the KV traffic but "
                   f"not the weight traffic. Click to pause."))
    mem, kvc, comp, acc = PALETTE["memory"], PALETTE["queue"], PALETTE["compute"], PALETTE["accent"]
    c.text(20, 22, "HBM", anchor="start", size=14, weight="700", fill=mem)
    c.box(20, 40, 250, 70, "weights Q_w", sublabel="read once per step", color=mem)
    h = 150 / batch
    for i in range(batch):
        y = 130 + i * h
        c.box(20, y, 250, h - 8, f"KV cache, sequence {i + 1}", color=kvc, size=11)
    c.box(380, 40, 200, 250, "SMs", sublabel="matrix-vector products, attention", color=comp)
    c.text(700, 22, "new tokens", size=13, weight="700", fill=acc)
    # the weight stream: one train of dots, thick
    for k in range(4):
        c.moving_dot("M270,75 L380,75", dur_s=dur_s / 2, begin_s=k * dur_s / 8, r=7, color=mem)
    for i in range(batch):
        y = 130 + i * h + (h - 8) / 2
        c.moving_dot(f"M270,{y:.1f} L380,{y:.1f}", dur_s=dur_s / 2,
                     begin_s=dur_s / 4 + i * dur_s / (4 * batch), r=4, color=kvc)
        ty = 60 + i * 200 / max(batch, 1)
        c.moving_dot(f"M580,{ty + 20:.1f} L800,{ty + 20:.1f}", dur_s=dur_s / 2,
                     begin_s=dur_s / 2 + i * 0.05, r=6, color=acc)
    c.text(410, 315, "step time >= (Q_w + B Q_kv) / M: the weights' share is divided by the "
           "batch", size=12.5, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The runner: build, check, time, compare."""
    c = Canvas(820, 300, "What the decode lab builds, checks, times and compares",
               uid="labdec-struct", description=(
                   "Diagram in four stages. Build: a decoder (the book's, with an attention "
                   "that reads each key/value head once) with random weights on a GPU, or "
                   "book-lm on a CPU. Check: parameter count, KV-cache bytes equal to the "
                   "model's count, batched decode equal to one-by-one decode, read-once "
                   "attention equal to the book's. Time: for each context length and batch "
                   "size, one decode step with bench(), eagerly and replayed from a CUDA graph. "
                   "Compare: tokens per second against B M / (Q_w + B Q_kv) with the datasheet "
                   "and the measured copy bandwidth."))
    colors = (PALETTE["neutral"], PALETTE["accent"], PALETTE["compute"], PALETTE["memory"])
    stages = (("build", "Decoder, random weights", "bf16 on a GPU, fp32 on a CPU"),
              ("check", "KV nbytes = model", "batched = one by one"),
              ("time", "one decode step", "eager and CUDA graph"),
              ("compare", "B M / (Q_w + B Q_kv)", "datasheet and copy M"))
    for i, ((head, line1, line2), col) in enumerate(zip(stages, colors)):
        x = 20 + i * 200
        c.text(x + 85, 40, head, size=14, weight="700", fill=col)
        c.box(x, 60, 170, 90, line1, sublabel=line2, color=col, size=12)
        if i < 3:
            c.line(x + 172, 105, x + 198, 105, stroke=MUTED, arrow=True)
    c.box(20, 190, 770, 70, "sweep: context S in {short, long} x batch B in 1 ... 256",
          sublabel="the cache holds exactly S tokens per sequence; the step reads all of it",
          color=PALETTE["queue"], size=12.5, fill_opacity=0.08)
    return c.figure()


def rate_figure(panels: Mapping[str, Sequence[Mapping]], *, title: str):
    """Tokens per second against batch size, one panel per ``panels`` key, log-log.

    Each panel is a list of rows of :func:`helpers.labs.analysis.decode.point_rows` (one model and
    context): measured (eager, and CUDA graph where present), the bandwidth bound, the bound
    at the measured copy bandwidth, and the roofline with the compute roof where present.
    """
    fig, axes = panel_figure(panels, height_in=3.8)
    for ax, (name, rows) in zip(axes, panels.items()):
        rows = sorted(rows, key=lambda r: r["batch"])
        b = np.array([r["batch"] for r in rows], dtype=float)
        if not len(b):
            continue
        ax.plot(b, b / np.array([r["bound_s"] for r in rows]), "--", lw=1.4,
                color=PALETTE["memory"], label="model: B M / (Q_w + B Q_kv)")
        ax.plot(b, b / np.array([r["copy_bound_s"] for r in rows]), ":", lw=1.4,
                color=PALETTE["neutral"], label="model at the measured copy rate")
        if all(r.get("roofline_s") for r in rows):
            ax.plot(b, b / np.array([r["roofline_s"] for r in rows]), "-.", lw=1.2,
                    color=PALETTE["compute"], label="with the compute roof")
        ax.plot(b, b / np.array([r["eager_s"] for r in rows]), "o-", ms=4, lw=1.4,
                color=PALETTE["host"], label="measured, eager")
        if all(r.get("graph_s") for r in rows):
            ax.plot(b, b / np.array([r["graph_s"] for r in rows]), "s-", ms=4, lw=1.4,
                    color=PALETTE["accent"], label="measured, CUDA graph")
        log2_panel(ax, name, xlabel="batch B (sequences per step)")
        ax.set_yscale("log")
    return finish_panels(fig, axes, ylabel="tokens per second", title=title, legend_fontsize=8)
