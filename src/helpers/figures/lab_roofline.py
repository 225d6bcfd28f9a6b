"""Figures of the lab "Measuring the roofline" ({ref}`sec-lab-roofline`).

* :func:`opening_animation`: the intensity sweep walking along a GPU's fp32 roofline: each
  doubling of the FMAs per element doubles the intensity; the rate climbs the slanted memory
  roof, turns at the ridge and runs along the flat compute roof.
* :func:`structure_diagram`: the lab's three measurements, what each pins down, and the check
  of the model's predicted time against the measured one.
* Plots (matplotlib, the book's style): :func:`roofline_panels` (measured points on a roofline,
  one panel per machine) and :func:`sweep_error_figure` (model error per sweep point).

Every number drawn is computed from the arguments; none is typed here.

Used by: labs/roofline.md.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import specs, units
from ..models import roofline
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "roofline_panels", "sweep_error_figure"]

GREY = PALETTE["neutral"]


# --- SVG: opening animation --------------------------------------------------------------

def opening_animation(gpu: specs.GPUSpec = specs.H200_SXM, precision: str = "fp32", *,
                      ks: Sequence[int] = tuple(2**i for i in range(12)),
                      bytes_per_element: float = 8.0) -> Figure:
    """The FMA sweep on ``gpu``'s roofline: a dot visits each ``k`` in turn, log-log axes.

    ``k`` FMAs per element are ``2k`` FLOP per ``bytes_per_element`` bytes moved.
    """
    if not ks or min(ks) < 1:
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    peak, bw = gpu.peak_flop_per_s(precision), gpu.hbm_bytes_per_s
    ridge = roofline.ridge_intensity_flop_per_byte(peak, bw)
    intensities = [2.0 * k / bytes_per_element for k in ks]
    rates = [roofline.attainable_flop_per_s(i, peak, bw) for i in intensities]
    c = Canvas(760, 300, f"The intensity sweep walks along the {gpu.name} roofline",
               uid="labroof-open", description=(
                   f"Animated log-log roofline of an {gpu.name} in {precision}: a slanted memory "
                   f"roof at {units.fmt_rate(bw, 'B/s')} meets a flat compute roof at "
                   f"{units.fmt_rate(peak, 'FLOP/s')} at the ridge, {ridge:.3g} FLOP/byte. A dot "
                   f"steps through a kernel doing k = {ks[0]} to {ks[-1]} dependent multiply-adds "
                   f"per element, climbing the slanted roof and then running along the flat one."))
    x0, x1, y0, y1 = 90.0, 560.0, 250.0, 40.0  # plot box: left, right, bottom, top
    lo_i, hi_i = min(intensities) / 2, max(intensities) * 2
    lo_r, hi_r = min(rates) / 3, peak * 3

    def X(i: float) -> float:
        return x0 + (x1 - x0) * math.log(i / lo_i) / math.log(hi_i / lo_i)

    def Y(r: float) -> float:
        return y0 - (y0 - y1) * math.log(r / lo_r) / math.log(hi_r / lo_r)

    mem, comp, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    c.line(x0, y0, x1, y0, stroke=GREY)
    c.line(x0, y0, x0, y1, stroke=GREY)
    c.text((x0 + x1) / 2, y0 + 26, "arithmetic intensity (FLOP/byte, log)", size=12, fill=MUTED)
    c.text(x0 - 14, (y0 + y1) / 2, "FLOP/s (log)", size=12, fill=MUTED, anchor="end")
    # The two roofs.
    c.line(X(lo_i), Y(lo_i * bw), X(ridge), Y(peak), stroke=mem, width=3)
    c.line(X(ridge), Y(peak), X(hi_i), Y(peak), stroke=comp, width=3)
    c.line(X(ridge), Y(peak), X(ridge), y0, stroke=GREY, dash="4 4")
    c.text(X(ridge), y0 + 10, f"ridge {ridge:.3g}", size=11, fill=MUTED)
    c.text(X(ridge) - 14, Y(peak) - 16, f"{units.fmt_rate(peak, 'FLOP/s')} ({precision})",
           size=12, anchor="end", fill=comp, weight="600")
    c.text(X(lo_i) + 60, Y(lo_i * bw) - 34, f"{units.fmt_rate(bw, 'B/s')} x intensity",
           size=12, anchor="start", fill=mem, weight="600")
    # The sweep: faint points for every k, and a dot that steps through them.
    for i, r in zip(intensities, rates):
        c.circle(X(i), Y(r), 3.5, fill=GREY, opacity=0.6)
    dur = 6.0
    n = len(ks)
    key_times = [j / n for j in range(n)] + [1.0]
    xs = [X(i) for i in intensities] + [X(intensities[-1])]
    ys = [Y(r) for r in rates] + [Y(rates[-1])]
    anim = (Canvas.animate("cx", xs, key_times=key_times, dur_s=dur, calc_mode="discrete")
            + Canvas.animate("cy", ys, key_times=key_times, dur_s=dur, calc_mode="discrete"))
    c.circle(xs[0], ys[0], 8, fill=acc, children=anim)
    # Legend: the kernel and the k now shown.
    lx = 600
    c.text(lx, 60, "the sweep kernel", size=13, anchor="start", weight="600")
    c.text(lx, 82, "read x (4 bytes)", size=12, anchor="start", fill=MUTED)
    c.text(lx, 100, "k times: y = a*y + b", size=12, anchor="start", fill=MUTED)
    c.text(lx, 118, "write y (4 bytes)", size=12, anchor="start", fill=MUTED)
    c.text(lx, 150, "k =", size=14, anchor="start")
    for j, k in enumerate(ks):
        show = Canvas.animate("opacity", [0] * j + [1] + [0] * (n - j - 1) + [0],
                              key_times=key_times, dur_s=dur, calc_mode="discrete")
        c.text(lx + 32, 150, f"{k}", size=16, anchor="start", weight="700", fill=acc,
               children=show)
    c.text(lx, 180, "memory-bound", size=12, anchor="start", fill=mem)
    c.text(lx, 198, "until the ridge,", size=12, anchor="start", fill=MUTED)
    c.text(lx, 216, "then compute-bound", size=12, anchor="start", fill=comp)
    c.text(380, 290, "Click to pause. The lab times this kernel at every k and compares each "
           "time with the roofline's.", size=12, fill=MUTED)
    c.mark_animated()
    return c.figure()


# --- SVG: structure diagram --------------------------------------------------------------

def structure_diagram() -> Figure:
    """The lab's three measurements feed the roofline; the model's times are checked."""
    c = Canvas(780, 300, "What the roofline lab measures and what it checks",
               uid="labroof-struct", description=(
                   "Diagram. Three measurements on the left: a copy (torch's and the book's "
                   "Triton kernel) gives the memory roof; matrix products in bf16, fp32 and TF32 "
                   "give the compute roofs; a sweep kernel with k multiply-adds per element "
                   "gives points across the ridge. They feed the roofline model in the middle, "
                   "whose predicted times are compared with the measured ones on the right, on "
                   "the H200 reference and on the reader's machine. Below, the reader's own "
                   "copy kernel is graded."))
    mem, comp, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    rows = [(40, "copy", "torch and Triton", mem, "memory roof M"),
            (115, "matmul", "bf16, fp32, TF32", comp, "compute roofs P"),
            (190, "FMA sweep", "k = 1 ... 2048", acc, "points across the ridge")]
    for y, label, sub, color, what in rows:
        c.box(20, y, 150, 56, label, sublabel=sub, color=color)
        c.line(172, y + 28, 318, 150, stroke=color, arrow=True, width=1.6)
        c.text(245, y + 14 if y < 150 else y + 46, what, size=11, fill=MUTED)
    c.box(320, 105, 170, 90, "roofline model", sublabel="T >= max(F/P, Q/M)", color=GREY)
    c.line(492, 150, 578, 150, stroke=GREY, arrow=True)
    c.box(580, 70, 180, 70, "predicted vs measured", sublabel="error per point", color=acc)
    c.box(580, 160, 180, 60, "H200 reference", sublabel="beside your machine", color=GREY)
    c.box(580, 235, 180, 52, "grade", sublabel="your Triton copy", color=PALETTE["host"])
    c.line(405, 197, 405, 261, stroke=GREY)
    c.line(405, 261, 578, 261, stroke=GREY, arrow=True)
    c.text(490, 250, "the copy's bound", size=11, fill=MUTED)
    return c.figure()


# --- matplotlib plots --------------------------------------------------------------------

def _grid(lo: float, hi: float) -> np.ndarray:
    return np.logspace(np.log10(lo), np.log10(hi), 300)


def roofline_panels(panels: Sequence[dict], *, width_in: float = 9.5, height_in: float = 3.9):
    """One log-log roofline per panel, with measured points.

    Each panel is a dict: ``title``; ``roofs``, a list of ``(label, peak_flop_per_s,
    mem_bytes_per_s, style)`` with ``style`` ``"main"`` (thick, ridge marked) or ``"aux"``
    (thin, dashed); ``points``, a list of ``(label, intensity_flop_per_byte, flop_per_s)``;
    optional ``note``, text shown when there are no points.
    """
    if not panels:
        raise ValueError("need at least one panel")
    fig, axes = new_figure(1, len(panels), width_in=width_in, height_in=height_in)
    axes = np.atleast_1d(axes)
    for ax, panel in zip(axes, panels):
        intens = [p[1] for p in panel.get("points", [])]
        lo = min(intens + [0.1]) / 2
        hi = max(intens + [1e3]) * 2
        grid = _grid(lo, hi)
        top = max(peak for _, peak, _, _ in panel["roofs"])
        scale, unit = (units.T, "TFLOP/s") if top >= units.T else (units.G, "GFLOP/s")
        for label, peak, bw, style in panel["roofs"]:
            main = style == "main"
            ax.loglog(grid, roofline.attainable_flop_per_s(grid, peak, bw) / scale,
                      color=COLORS["accent"] if main else COLORS["neutral"],
                      lw=2.2 if main else 1.2, ls="-" if main else "--", label=label)
            if main:
                ridge = roofline.ridge_intensity_flop_per_byte(peak, bw)
                ax.axvline(ridge, color=COLORS["neutral"], lw=1, ls=":")
                ax.annotate(f"ridge {ridge:.3g}", (ridge, peak / scale), xytext=(4, -14),
                            textcoords="offset points", fontsize=8.5, color=COLORS["neutral"])
        kinds = set()
        for label, intensity, rate in panel.get("points", []):
            kind = "matmul" if label.startswith("matmul") else "sweep"
            kinds.add(kind)
            color = COLORS["compute"] if kind == "matmul" else COLORS["memory"]
            ax.plot([intensity], [rate / scale], "o", color=color, ms=5.5, zorder=5)
        for kind in sorted(kinds, reverse=True):
            color = COLORS["compute"] if kind == "matmul" else COLORS["memory"]
            ax.plot([], [], "o", color=color, ms=5.5, label=f"{kind} (measured)")
        if not kinds and panel.get("note"):
            ax.text(0.42, 0.4, panel["note"], transform=ax.transAxes, ha="left", va="center",
                    fontsize=10, color=COLORS["neutral"])
        ax.set_title(panel["title"])
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel(f"rate ({unit})")
        ax.legend(loc="lower right", fontsize=8)
    return fig


def sweep_error_figure(series: Sequence[tuple[str, Sequence[dict]]], *, target: float = 0.15,
                       ridge: float | None = None):
    """Model error ``(predicted - measured) / measured`` against intensity, per series.

    ``series`` are ``(label, rows)`` with rows from :func:`helpers.labs.analysis.roofline.sweep_rows`;
    untimed rows are skipped. A band marks +-``target``; ``ridge`` draws the ridge point.
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target!r}")
    fig, ax = new_figure(width_in=7.0, height_in=3.3)
    ax.axhspan(-target, target, color=COLORS["host"], alpha=0.12, label=f"within {target:.0%}")
    ax.axhline(0, color=COLORS["neutral"], lw=1)
    markers = ["o", "s", "^", "D"]
    for j, (label, rows) in enumerate(series):
        pts = [(r["intensity"], r["error"]) for r in rows if r.get("error") is not None]
        if pts:
            xs, ys = zip(*pts)
            ax.semilogx(xs, ys, marker=markers[j % len(markers)], lw=1.4, ms=5, label=label)
    if ridge is not None:
        ax.axvline(ridge, color=COLORS["neutral"], ls=":", lw=1)
        ax.annotate("ridge", (ridge, 0), xytext=(4, 8), textcoords="offset points", fontsize=8.5,
                    color=COLORS["neutral"])
    ax.set_xscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("(predicted - measured) / measured")
    ax.legend(loc="lower left", fontsize=8.5)
    return fig
