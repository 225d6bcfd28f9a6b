"""Figures of the lab "Weight-only int8 quantization" ({ref}`sec-lab-quantization`).

* :func:`opening_animation`: the same row of weights streamed from HBM in bf16 and in int8 with
  one scale: the int8 row is half as long, so it arrives in half the time;
* :func:`structure_diagram`: the lab's three measurements (error, memory, speed) and what each
  is compared with;
* :func:`error_figure`: per-layer RMS weight error of each scheme against the rounding model;
* :func:`speed_figure`: time of the decode matmul per path against the bandwidth bound.

Used by: labs/quantization.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "error_figure", "speed_figure",
           "IMPL_LABELS", "SCHEME_LABELS"]

IMPL_LABELS = {"dense": "16-bit matmul (torch)", "naive": "dequantize, then matmul (torch)",
               "int8": "int8 Triton kernel"}
_IMPL_COLORS = {"dense": PALETTE["memory"], "naive": PALETTE["neutral"], "int8": PALETTE["accent"]}
SCHEME_LABELS = {"int8-tensor": "int8, one scale per tensor", "int8-channel": "int8, per row",
                 "int4-g32": "int4, groups of 32", "int4-g64": "int4, groups of 64",
                 "int4-g128": "int4, groups of 128"}
_SCHEME_COLORS = {"int8-tensor": PALETTE["queue"], "int8-channel": PALETTE["accent"],
                  "int4-g32": PALETTE["memory"], "int4-g64": PALETTE["network"],
                  "int4-g128": PALETTE["host"]}


def opening_animation(n_weights: int = 16) -> Figure:
    """A row of ``n_weights`` weights streaming from HBM to an SM, in bf16 and in int8."""
    if n_weights < 2:
        raise ValueError(f"n_weights must be >= 2, got {n_weights!r}")
    c = Canvas(780, 250, "The same row of weights, in bf16 and in int8, on its way to the SM",
               uid="labquant-open", description=(
                   f"Animation. Two lanes from HBM to an SM. Top: a row of {n_weights} bf16 "
                   f"weights, two bytes each, slides across. Bottom: the same row as int8 codes, "
                   f"one byte each, plus one scale; it is half as long and arrives in half the "
                   f"time. At the SM the codes are multiplied by the scale (dequantized) in "
                   f"registers before the multiply-adds."))
    mem, acc, comp = PALETTE["memory"], PALETTE["accent"], PALETTE["compute"]
    c.box(20, 40, 90, 170, "HBM", color=mem, size=15)
    c.box(650, 40, 110, 170, "SM", sublabel="w = s * q", color=comp, size=15)
    dur = 4.0
    lanes = ((80, "bf16: 2 bytes per weight", 2.0, mem), (170, "int8: 1 byte + one scale", 1.0, acc))
    cell = 16.0
    for y, label, width_bytes, color in lanes:
        c.text(380, y - 34, label, size=13, weight="600", fill=color)
        c.line(115, y, 645, y, stroke=MUTED, dash="3 5")
        length = n_weights * cell * width_bytes / 2 + (8 if width_bytes == 1 else 0)
        start, end = 118.0, 645.0 - length
        travel = dur * (length / (n_weights * cell))  # time to pass: proportional to bytes
        frac = min(travel / dur, 1.0)
        for i in range(n_weights):
            w = cell * width_bytes / 2
            x0 = start + i * w
            anim = Canvas.animate("x", [x0, x0 + (end - start), x0 + (end - start)],
                                  key_times=[0, frac, 1], dur_s=dur)
            c.rect(x0, y - 12, w - 1.5, 24, fill=color, stroke="none", opacity=0.75,
                   rx=2, children=anim)
        if width_bytes == 1:  # the scale rides at the end of the int8 row
            x0 = start + n_weights * cell / 2
            anim = Canvas.animate("x", [x0, x0 + (end - start), x0 + (end - start)],
                                  key_times=[0, frac, 1], dur_s=dur)
            c.rect(x0, y - 12, 7, 24, fill=comp, stroke="none", rx=2, children=anim)
    c.text(380, 232, "decode reads every weight once per step: half the bytes, "
           "at most half the time", size=12, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """The lab's three measurements and the model each one is set against."""
    c = Canvas(800, 270, "Three measurements of a quantized model, each against its model",
               uid="labquant-struct", description=(
                   "Diagram. Error: book-lm's projection matrices quantized per tensor, per "
                   "row (int8) and in groups (int4); per-layer RMS error against s/sqrt(12), "
                   "bits per byte and greedy agreement against the unquantized model. Memory: "
                   "bytes of the model's state against codes plus scales per weight. Speed: a "
                   "decode-shaped matmul, 16-bit torch vs dequantize-then-matmul vs the int8 "
                   "Triton kernel, each checked against float64, then timed, against bytes over "
                   "the measured copy bandwidth."))
    acc, mem, comp, host = PALETTE["accent"], PALETTE["memory"], PALETTE["compute"], PALETTE["host"]
    c.box(20, 20, 240, 150, "", color=acc)
    c.text(140, 48, "1. error", size=15, weight="700", fill=acc)
    c.text(140, 90, "book-lm, 5 schemes", size=12)
    c.text(140, 110, "per layer: RMS error", size=12, fill=MUTED)
    c.text(140, 128, "bits per byte, greedy text", size=12, fill=MUTED)
    c.box(280, 20, 240, 150, "", color=mem)
    c.text(400, 48, "2. memory", size=15, weight="700", fill=mem)
    c.text(400, 90, "bytes of the state", size=12)
    c.text(400, 110, "codes + fp16 scales", size=12, fill=MUTED)
    c.text(400, 128, "rest kept in bf16", size=12, fill=MUTED)
    c.box(540, 20, 240, 150, "", color=comp)
    c.text(660, 48, "3. speed", size=15, weight="700", fill=comp)
    c.text(660, 90, "M x K times K x N, M <= 16", size=12)
    c.text(660, 110, "bf16 | dequantize + matmul", size=12, fill=MUTED)
    c.text(660, 128, "| int8 Triton kernel", size=12, fill=MUTED)
    models = (("s / sqrt(12), within 1 % bits/byte", 140, acc),
              ("N (b + 16 / G) / 8 bytes", 400, mem),
              ("bytes / copy bandwidth", 660, comp))
    for text, x, color in models:
        c.line(x, 172, x, 200, stroke=color, arrow=True)
        c.box(x - 120, 202, 240, 44, text, sublabel="the model", color=host, size=12,
              fill_opacity=0.08)
    return c.figure()


def error_figure(errors: Sequence[Mapping], *, title: str):
    """Per-layer RMS weight error relative to the layer's weight RMS, per scheme, with the
    rounding model's value (s / sqrt(12)) as an open marker."""
    if not errors:
        raise ValueError("errors must not be empty")
    fig, ax = new_figure(1, 1, width_in=7.4, height_in=3.6)
    layers = list(dict.fromkeys(e["layer"] for e in errors))
    schemes = list(dict.fromkeys(e["scheme"] for e in errors))
    x = np.arange(len(layers))
    for j, name in enumerate(schemes):
        rows = {e["layer"]: e for e in errors if e["scheme"] == name}
        meas = [rows[l]["rms_error"] / rows[l]["weight_rms"] for l in layers]
        mod = [rows[l]["rms_model"] / rows[l]["weight_rms"] for l in layers]
        color = _SCHEME_COLORS.get(name, PALETTE["neutral"])
        ax.plot(x, meas, "o", ms=4.5, color=color, label=SCHEME_LABELS.get(name, name))
        ax.plot(x, mod, "_", ms=11, mew=1.6, color=color)
    ax.set_yscale("log")
    ax.set_xticks(x, [l.replace("blocks.", "").replace(".attn.", " ").replace(".mlp.", " ")
                      for l in layers], rotation=90, fontsize=7)
    ax.set_ylabel("RMS error / RMS weight")
    ax.set_title(title + "  (dots: measured, dashes: s/sqrt(12))", fontsize=10)
    ax.legend(fontsize=7.5, ncol=3, loc="center left")
    plt.close(fig)
    return fig


def speed_figure(rows: Sequence[Mapping], *, title: str):
    """Median time per path against tokens per step ``M`` (from
    :func:`helpers.labs.analysis.quantization.speed_rows`), each with its bandwidth bound dashed."""
    if not rows:
        raise ValueError("rows must not be empty")
    fig, ax = new_figure(1, 1, width_in=6.4, height_in=3.6)
    ms = [r["m"] for r in rows]
    for impl, label in IMPL_LABELS.items():
        t = [r[f"{impl}_s"] for r in rows]
        color = _IMPL_COLORS[impl]
        if all(v is not None for v in t):
            ax.plot(ms, np.array(t) * 1e6, "o-", ms=5, lw=1.6, color=color, label=label)
            ax.plot(ms, np.array([r[f"{impl}_bound_s"] for r in rows]) * 1e6, "--", lw=1.1,
                    color=color, alpha=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ms, [str(m) for m in ms])
    ax.set_xlabel("tokens per step M")
    ax.set_ylabel("time (us)")
    ax.set_title(title + "  (dashed: bytes / copy bandwidth)", fontsize=10)
    ax.legend(fontsize=8)
    plt.close(fig)
    return fig
