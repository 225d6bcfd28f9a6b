"""Figures of the lab "Reduction and fused softmax" ({ref}`sec-lab-reduction-softmax`).

* :func:`opening_animation`: the unfused softmax sends the tensor between memory and the SMs
  eight times (five passes); the fused kernel sends it twice;
* :func:`structure_diagram`: the lab's measurements, the bound each is held to, and the grader;
* :func:`bandwidth_figure`: achieved bytes/s of each operation against the row length, one
  panel per storage type, with the measured copy and the datasheet bandwidth as lines.

Used by: labs/reduction-softmax.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "bandwidth_figure", "OP_STYLE"]

#: Label, colour and marker of each operation in the plots.
OP_STYLE = {
    "triton_softmax": ("softmax, Triton (fused)", PALETTE["accent"], "o"),
    "torch_softmax": ("softmax, torch", PALETTE["compute"], "s"),
    "unfused_softmax": ("softmax, unfused torch", PALETTE["queue"], "v"),
    "triton_sum": ("row sum, Triton", PALETTE["memory"], "D"),
    "torch_sum": ("row sum, torch", PALETTE["host"], "^"),
}


def opening_animation(period_s: float = 8.0) -> Figure:
    """Trips of the tensor between HBM and the SMs: unfused (8) beside fused (2)."""
    if not period_s > 0:
        raise ValueError(f"period_s must be > 0, got {period_s!r}")
    c = Canvas(760, 290, "Unfused softmax: eight trips of the tensor; fused: two",
               "labred-open", description="Left: max, subtract, exp, sum and divide run as "
               "five kernels; each reads the whole tensor from HBM and three write a whole "
               "tensor back. Right: one fused kernel reads each row once, keeps its maximum "
               "and sum in registers, and writes the result once.")
    hbm_y, sm_y = 205.0, 40.0
    c.box(20, hbm_y, 470, 44, "HBM", sublabel="the tensor, 256 MiB", color=PALETTE["memory"])
    c.box(520, hbm_y, 220, 44, "HBM", sublabel="the tensor, 256 MiB", color=PALETTE["memory"])
    c.text(255, 16, "unfused: 5 kernels, 8 tensor-sized trips", size=12.5, fill=MUTED)
    c.text(630, 16, "fused: 1 kernel, 2 trips", size=12.5, fill=MUTED)
    stages = [("max", False), ("x − m", True), ("exp", True), ("sum", False), ("÷ s", True)]
    w, gap = 82, 14
    trips = []
    for i, (name, writes) in enumerate(stages):
        x = 20 + i * (w + gap)
        c.box(x, sm_y, w, 50, name, sublabel="kernel", color=PALETTE["compute"], size=12)
        c.line(x + 22, hbm_y - 2, x + 22, sm_y + 54, stroke=PALETTE["memory"], arrow=True)
        trips.append((x + 22, hbm_y - 2, x + 22, sm_y + 54))
        if writes:
            c.line(x + w - 22, sm_y + 54, x + w - 22, hbm_y - 2, stroke=PALETTE["compute"],
                   arrow=True)
            trips.append((x + w - 22, sm_y + 54, x + w - 22, hbm_y - 2))
    c.box(560, sm_y, 140, 50, "fused softmax", sublabel="max, sum in registers",
          color=PALETTE["accent"], size=12)
    fused = [(590, hbm_y - 2, 590, sm_y + 54), (670, sm_y + 54, 670, hbm_y - 2)]
    c.line(*fused[0], stroke=PALETTE["memory"], arrow=True)
    c.line(*fused[1], stroke=PALETTE["accent"], arrow=True)
    step = period_s / len(trips)
    for k, (x1, y1, x2, y2) in enumerate(trips):
        c.moving_dot(f"M{x1},{y1} L{x2},{y2}", dur_s=period_s, begin_s=k * step, r=5,
                     color=PALETTE["memory"] if y1 > y2 else PALETTE["compute"])
    for k, (x1, y1, x2, y2) in enumerate(fused):
        c.moving_dot(f"M{x1},{y1} L{x2},{y2}", dur_s=period_s, begin_s=k * period_s / 2, r=5,
                     color=PALETTE["memory"] if y1 > y2 else PALETTE["accent"])
    c.text(380, 274, "bytes moved: 8N (unfused) against 2N (fused)", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The lab's measurements, the bound each is held to, and the grader."""
    c = Canvas(760, 230, "The reduction and softmax lab: measurements and their bounds",
               "labred-struct", description="A copy sets the memory roof; the row sums and "
               "the softmaxes are each held to the bytes they must move at that rate; the "
               "grader checks the reader's fused softmax.")
    cols = [("copy", "dst.copy_(x)", "the roof: 2N bytes / t", PALETTE["memory"]),
            ("row sum", "torch.sum, Triton", "N bytes at the roof", PALETTE["host"]),
            ("softmax", "torch, Triton, unfused", "2N (fused), 8N (unfused)", PALETTE["accent"])]
    w, gap = 220, 25
    for i, (name, what, model, color) in enumerate(cols):
        x = 25 + i * (w + gap)
        c.box(x, 20, w, 60, name, sublabel=what, color=color)
        c.line(x + w / 2, 82, x + w / 2, 112, arrow=True)
        c.box(x, 114, w, 44, model, color=PALETTE["neutral"], size=11.5, fill_opacity=0.08)
    x = 25 + 2 * (w + gap)
    c.box(x, 180, w, 40, "grade: your fused softmax", color=PALETTE["compute"], size=12)
    c.line(x + w / 2, 160, x + w / 2, 178, arrow=True)
    return c.figure()


def bandwidth_figure(panels: Mapping[str, Sequence[Mapping]], lines: Mapping[str, Mapping[str, float]],
                     *, title: str):
    """Achieved bytes/s against the row length, one panel per storage type.

    ``panels[dtype]`` is a list of rows with ``op``, ``cols`` and ``bytes_per_s``;
    ``lines[dtype]`` maps a label (e.g. "measured copy") to a bandwidth drawn as a line.
    """
    if not panels:
        raise ValueError("panels must hold at least one storage type")
    fig, axes = new_figure(1, len(panels), width_in=3.6 * len(panels) + 0.6, height_in=3.4,
                           squeeze=False, sharey=True)
    for ax, (dtype, rows) in zip(axes[0], panels.items()):
        cols = sorted({r["cols"] for r in rows})
        for op, (label, color, marker) in OP_STYLE.items():
            pts = sorted((r["cols"], r["bytes_per_s"]) for r in rows if r["op"] == op)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] / 1e12 for p in pts], marker=marker,
                        color=color, label=label)
        for (label, bw), dash in zip((lines.get(dtype) or {}).items(), ("--", ":")):
            ax.axhline(bw / 1e12, color=PALETTE["neutral"], linestyle=dash, linewidth=1.3,
                       label=label)
        ax.set_xscale("log", base=2)
        if cols:
            ax.set_xticks(cols, [str(v) for v in cols])
        ax.set_xlabel("row length (elements)")
        ax.set_title(dtype, fontsize=10.5)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("achieved TB/s")
    axes[0][-1].legend(fontsize=7.5, loc="lower right")
    fig.suptitle(title, fontsize=12)
    plt.close(fig)
    return fig
