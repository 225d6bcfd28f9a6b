"""Figures of {ref}`sec-numerics-and-transformers`: the opening animation, the structure
diagrams (a decoder block with its weight shapes; the bit layouts of the formats) and plots.

Every number drawn comes from :mod:`helpers.models.numerics`,
:mod:`helpers.models.transformer` or :mod:`helpers.specs`.

Used by: chapters/numerics-and-transformers.md.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from .. import specs
from ..models import numerics as nm
from ..models import transformer as tm
from ..units import GB
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, TEXT, Canvas, Figure, _num, esc

__all__ = ["opening_animation", "structure_diagram", "bit_layouts", "spacing_figure",
           "summation_figure", "intensity_figure", "memory_figure", "FORMAT_LABELS"]

#: How the page writes each format's name.
FORMAT_LABELS = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16", "fp16": "fp16",
                 "fp8_e4m3": "fp8 e4m3", "fp8_e5m2": "fp8 e5m2", "int8": "int8",
                 "int4": "int4"}


def _phase_dot(c: Canvas, path: str, t0: float, t1: float, total: float, *, r: float = 6,
               color: str = PALETTE["accent"]) -> None:
    """A dot that is hidden except between ``t0`` and ``t1`` seconds of a ``total`` cycle,
    when it travels along ``path``."""
    a, b = t0 / total, t1 / total
    eps = 0.002
    c.mark_animated()
    c.raw(
        f'<circle r="{_num(float(r))}" fill="{esc(color)}" opacity="0">'
        f'<animateMotion path="{esc(path)}" dur="{_num(total)}s" repeatCount="indefinite" '
        f'keyPoints="0;0;1;1" keyTimes="0;{_num(a)};{_num(b)};1" calcMode="linear"/>'
        f'<animate attributeName="opacity" values="0;0;1;1;0;0" '
        f'keyTimes="0;{_num(a)};{_num(a + eps)};{_num(b)};{_num(b + eps)};1" '
        f'dur="{_num(total)}s" repeatCount="indefinite"/></circle>'
    )


def _phase_text(c: Canvas, x: float, y: float, content: str, t0: float, t1: float,
                total: float, *, size: float = 13, fill: str = TEXT, weight=None,
                anchor: str = "middle") -> None:
    """Text shown only between ``t0`` and ``t1`` of the cycle."""
    a, b = t0 / total, t1 / total
    fade = min(0.02, (b - a) / 2)  # key times must never decrease
    anim = c.animate("opacity", [0, 0, 1, 1, 0, 0], dur_s=total,
                     key_times=[0, a, a + fade, b - fade, b, 1])
    c.text(x, y, content, size=size, fill=fill, weight=weight, anchor=anchor,
           children=anim)


def opening_animation(cfg: tm.TransformerConfig = tm.LLAMA3_8B) -> Figure:
    """Prefill pushes every prompt token through the layers in one pass; decode pushes one
    token per pass, and every pass streams all the weights out of memory again."""
    total = 12.0
    c = Canvas(720, 270, title="Prefill versus decode in a decoder-only transformer",
               uid="num-opening",
               description="Six prompt tokens cross the layers together; then generated "
                           "tokens cross one at a time while weights stream from HBM each time.")
    n_bytes = tm.weight_bytes(tm.parameter_count(cfg), 2.0)
    c.box(18, 95, 132, 80, "HBM", sublabel=f"{n_bytes / GB:.0f} GB of weights",
          color=PALETTE["memory"], size=13)
    c.text(84, 80, f"{cfg.name}, bf16", size=11.5, fill=MUTED)
    x0, x1 = 250, 530
    n_cols = 4
    width = (x1 - x0) / n_cols
    for i in range(n_cols):
        label = f"layer {i + 1}" if i < n_cols - 1 else f"… layer {cfg.n_layers}"
        c.rect(x0 + i * width + 6, 60, width - 12, 150, fill=PALETTE["compute"], stroke="none",
               opacity=0.10)
        c.rect(x0 + i * width + 6, 60, width - 12, 150, stroke=PALETTE["compute"],
               stroke_width=1.8)
        c.text(x0 + i * width + width / 2, 198, label, size=11, weight="600")
    c.text((x0 + x1) / 2, 38, f"{cfg.n_layers} decoder layers", size=13, fill=MUTED)
    c.text(200, 236, "tokens in", size=12, fill=MUTED)
    c.text(600, 236, "next token", size=12, fill=MUTED)
    c.line(150, 135, x0 - 4, 135, stroke=PALETTE["memory"], width=1.5, dash="4 4", arrow=True)
    # prefill: six prompt tokens travel side by side in one pass (0 - 3.4 s)
    ys = [85, 102, 119, 136, 153, 170]
    for y in ys:
        _phase_dot(c, f"M200,{y} L600,{y}", 0.4, 3.4, total, color=PALETTE["accent"])
    for k in range(4):  # the weights stream once for the whole prompt
        _phase_dot(c, "M150,135 L250,135", 0.4 + 0.6 * k, 1.0 + 0.6 * k, total, r=4,
                   color=PALETTE["memory"])
    _phase_text(c, 360, 252, "prefill: the whole prompt in one pass, each weight used 6 times",
                0.2, 3.6, total, weight="600")
    # decode: one token per pass, the weights stream again every pass
    for step in range(4):
        t0 = 4.0 + 2.0 * step
        _phase_dot(c, "M200,128 L600,128", t0, t0 + 1.6, total, color=PALETTE["queue"])
        for k in range(3):
            _phase_dot(c, "M150,135 L250,135", t0 + 0.5 * k, t0 + 0.5 * k + 0.6, total, r=4,
                       color=PALETTE["memory"])
        _phase_text(c, 640 + 16 * step - 24, 128, "●", t0 + 1.6, total - 0.2, total,
                    fill=PALETTE["queue"], size=14)
    _phase_text(c, 360, 252, "decode: one token per pass, every weight read again for it",
                4.0, total - 0.2, total, weight="600")
    return c.figure()


def structure_diagram(cfg: tm.TransformerConfig = tm.LLAMA3_8B) -> Figure:
    """A decoder block with the shape of every weight matrix and the KV cache of one token."""
    d, q, kv = cfg.d_model, cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    counts = tm.parameter_counts(cfg)
    c = Canvas(720, 470, title=f"The parts of {cfg.name} and the shapes of their weights",
               uid="num-structure",
               description="Embedding, a repeated block of attention and MLP with weight "
                           "shapes, and the output head; the KV cache beside attention.")
    col = PALETTE
    cx, w = 250, 300
    c.box(cx, 14, w, 40, "token embedding", sublabel=f"{cfg.vocab_size:,} × {d:,}",
          color=col["neutral"], size=12)
    c.rect(cx - 20, 70, w + 40, 290, fill="none", stroke=MUTED, dash="6 5", rx=10)
    c.text(cx - 10, 84, f"× {cfg.n_layers} layers", anchor="start", size=12, fill=MUTED)
    c.box(cx, 96, w, 26, "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm",
          sublabel=None, color=col["neutral"], size=11)
    c.box(cx, 130, w, 100, "", color=col["compute"])
    c.text(cx + w / 2, 144, f"attention: {cfg.n_heads} query heads, {cfg.n_kv_heads} K/V heads",
           size=12, weight="600")
    rows = [f"W_q  {d:,} × {q:,}", f"W_k, W_v  {d:,} × {kv:,} each", f"W_o  {q:,} × {d:,}"]
    for i, a in enumerate(rows):
        c.text(cx + 12, 164 + 19 * i, a, anchor="start", size=11.5)
    c.text(cx + w - 12, 164, f"d_h = {cfg.head_dim}", anchor="end", size=11.5, fill=MUTED)
    c.text(cx + w - 12, 202, f"{counts['attention'] / cfg.n_layers / 1e6:.1f} M per layer",
           anchor="end", size=11, fill=MUTED)
    c.box(cx, 238, w, 26, "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm",
          color=col["neutral"], size=11)
    c.box(cx, 272, w, 78, "", color=col["compute"])
    mlp_name = "SwiGLU MLP" if cfg.mlp == "swiglu" else "MLP"
    c.text(cx + w / 2, 286, mlp_name, size=12, weight="600")
    gate = "W_gate, W_up" if cfg.mlp == "swiglu" else "W_up"
    c.text(cx + 12, 308, f"{gate}  {d:,} × {cfg.d_ff:,}", anchor="start", size=11.5)
    c.text(cx + 12, 328, f"W_down  {cfg.d_ff:,} × {d:,}", anchor="start", size=11.5)
    c.text(cx + w - 12, 328, f"{counts['mlp'] / cfg.n_layers / 1e6:.0f} M per layer",
           anchor="end", size=11, fill=MUTED)
    c.box(cx, 372, w, 26, "final norm", color=col["neutral"], size=11)
    head = "output head (tied)" if cfg.tie_embeddings else "output head"
    c.box(cx, 408, w, 40, head, sublabel=f"{d:,} × {cfg.vocab_size:,} → logits",
          color=col["neutral"], size=12)
    # KV cache beside attention
    per_tok = tm.kv_cache_bytes_per_token(cfg, 2.0)
    c.box(590, 140, 120, 80, "KV cache", sublabel=f"{per_tok / 1024:.0f} KiB / token", size=12,
          color=col["memory"])
    c.text(650, 234, "bf16, all layers", size=10.5, fill=MUTED)
    c.line(cx + w, 180, 588, 180, stroke=col["memory"], both=True)
    # the residual stream on the left
    c.line(200, 54, 200, 430, stroke=col["accent"], width=2, arrow=True)
    c.text(190, 230, "residual stream", size=11.5, fill=col["accent"], anchor="end")
    c.text(190, 248, f"width d = {d:,}", size=11.5, fill=col["accent"], anchor="end")
    # Totals on the left margin
    total = counts["total"]
    c.text(20, 20, f"{cfg.name}", anchor="start", size=13, weight="600")
    c.text(20, 40, f"{total / 1e9:.2f} B parameters", anchor="start", size=12, fill=MUTED)
    return c.figure()


def bit_layouts(names=("fp32", "tf32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3", "int8",
                       "int4")) -> Figure:
    """Each format's bits side by side: sign, exponent and mantissa fields to scale."""
    cell, left, top, row_h = 17.0, 110, 40, 34
    c = Canvas(left + 32 * cell + 190, top + row_h * len(names) + 20,
               title="Bit layouts of the number formats", uid="num-bits",
               description="Sign, exponent and mantissa fields of fp32, tf32, bf16, fp16, fp8 "
                           "e5m2, fp8 e4m3, int8 and int4, one square per bit.")
    colors = {"sign": PALETTE["accent"], "exponent": PALETTE["memory"],
              "mantissa": PALETTE["compute"], "int": PALETTE["host"]}
    legend = [("sign", "sign"), ("exponent", "exponent"), ("mantissa", "mantissa"),
              ("int", "two's-complement integer")]
    lx = left
    for key, label in legend:
        c.rect(lx, 10, 12, 12, fill=colors[key], stroke="none", rx=2)
        c.text(lx + 17, 16, label, anchor="start", size=11.5)
        lx += 30 + 7.2 * len(label)
    for i, name in enumerate(names):
        f = nm.number_format(name)
        y = top + i * row_h
        c.text(left - 12, y + cell / 2, FORMAT_LABELS[name], anchor="end", size=13, weight="600")
        if isinstance(f, nm.FloatFormat):
            fields = ["sign"] + ["exponent"] * f.exponent_bits + ["mantissa"] * f.mantissa_bits
            note = f"{f.exponent_bits} + {f.mantissa_bits} bits, max {nm.max_finite(f):.3g}"
        else:
            fields = ["int"] * f.bits
            note = f"{f.bits} bits, {-(2 ** (f.bits - 1))} … {2 ** (f.bits - 1) - 1}"
        for j, kind in enumerate(fields):
            c.rect(left + j * cell, y, cell - 2, cell, fill=colors[kind], stroke="none", rx=2,
                   opacity=0.85)
        if f.storage_bits > f.bits:  # tf32: stored in 32 bits, 13 of them ignored
            for j in range(f.bits, f.storage_bits):
                c.rect(left + j * cell, y, cell - 2, cell, fill="none", stroke=MUTED, rx=2,
                       dash="2 2", stroke_width=1)
        c.text(left + 32 * cell + 10, y + cell / 2, note, anchor="start", size=11, fill=MUTED)
    return c.figure()


# --- plots ------------------------------------------------------------------------------

def spacing_figure(names=("fp32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3")):
    """Gap between neighbouring representable numbers against magnitude, for each format.

    The horizontal extent of a curve is the format's range (smallest subnormal to largest
    finite value); its height is the absolute spacing, whose ratio to the value is between
    the unit roundoff and machine epsilon in the normal range.
    """
    fig, ax = new_figure(width_in=7.2, height_in=3.9)
    for name in names:
        f = nm.number_format(name)
        sub = np.logspace(math.log10(nm.min_subnormal(f)), math.log10(nm.min_normal(f)), 50)
        x = np.concatenate([sub, [nm.max_finite(f)]])
        gap = np.concatenate([nm.min_subnormal(f) / sub, [nm.machine_epsilon(f)]])
        ax.loglog(x, gap, label=FORMAT_LABELS[name])
    ax.set_xlabel("magnitude of the value")
    ax.set_ylabel("gap to the next number / value")
    ax.set_title("Range (width) and precision (height) of each format")
    fig.legend(loc="outside lower center", ncols=len(names))
    ax.set_ylim(1e-8, 2)
    return fig


def summation_figure(n_terms: np.ndarray, rel_errors: dict, stall_values: dict | None = None):
    """Relative error of a running sum against the number of terms, one line per format."""
    fig, ax = new_figure(width_in=7.2, height_in=3.6)
    for label, err in rel_errors.items():
        ax.loglog(n_terms, np.maximum(err, 1e-12), label=label)
    ax.set_xlabel("terms added")
    ax.set_ylabel("relative error vs fp64")
    ax.set_title("Running sums kept in each format")
    ax.legend(loc="lower right")
    return fig


def intensity_figure(cfg: tm.TransformerConfig = tm.LLAMA3_8B, *, gpus=(specs.H100_SXM,
                     specs.H200_SXM), decode_batches=(1, 8, 64), prefill_tokens=(2048,)):
    """Weight arithmetic intensity against tokens in flight, with the GPUs' ridge points."""
    fig, ax = new_figure(width_in=7.2, height_in=3.8)
    tokens = np.unique(np.logspace(0, 4.3, 200).astype(int))
    inten = [tm.forward_intensity_flop_per_byte(cfg, n_tokens=int(t), bytes_per_element=2.0)
             for t in tokens]
    ax.loglog(tokens, inten, color=COLORS["memory"], label=f"{cfg.name} weights, bf16")
    attn = tm.decode_attention_intensity_flop_per_byte(cfg, kv_bytes_per_element=2.0)
    ax.axhline(attn, color=COLORS["network"], ls=":",
               label="decode attention over the KV cache")
    for g, ls in zip(gpus, ("--", "-.")):
        ridge = g.ridge_intensity_flop_per_byte("bf16")
        ax.axhline(ridge, color=COLORS["compute"], ls=ls, lw=1.5,
                   label=f"{g.name} ridge, bf16 ({ridge:.0f} FLOP/B)")
    for b in decode_batches:
        i = tm.forward_intensity_flop_per_byte(cfg, n_tokens=b, bytes_per_element=2.0)
        ax.plot([b], [i], "o", color=COLORS["queue"])
        ax.annotate(f"decode, batch {b}", (b, i), textcoords="offset points", xytext=(6, -12),
                    fontsize=9)
    for t in prefill_tokens:
        i = tm.forward_intensity_flop_per_byte(cfg, n_tokens=t, bytes_per_element=2.0)
        ax.plot([t], [i], "s", color=COLORS["accent"])
        ax.annotate(f"prefill, {t} tokens", (t, i), textcoords="offset points",
                    xytext=(-40, 10), fontsize=9)
    ax.set_xlabel("tokens in flight per weight read")
    ax.set_ylabel("FLOP per byte")
    ax.set_title("Decode sits below the ridge, prefill above it")
    ax.legend(loc="upper left", fontsize=8.5)
    return fig


def memory_figure(cfg: tm.TransformerConfig = tm.LLAMA3_8B, *, weight_format: str = "bf16",
                  kv_format: str = "bf16", batch: int = 16, context: int = 8192,
                  gpu: specs.GPUSpec = specs.H100_SXM):
    """Weights + KV cache (serving) and the 16-byte-per-parameter state (training) against
    one GPU's HBM."""
    n = tm.parameter_count(cfg)
    w = tm.weight_bytes(n, nm.bytes_per_element(weight_format))
    kv = tm.kv_cache_bytes(batch=batch, seq_len=context, n_layers=cfg.n_layers,
                           n_kv_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
                           bytes_per_element=nm.bytes_per_element(kv_format))
    state = tm.training_state_bytes(n)
    fig, ax = new_figure(width_in=7.2, height_in=3.2)
    ax.barh([1], [w / GB], color=COLORS["memory"],
            label=f"weights ({FORMAT_LABELS[weight_format]})")
    ax.barh([1], [kv / GB], left=[w / GB], color=COLORS["queue"],
            label=f"KV cache ({FORMAT_LABELS[kv_format]}, {batch} × {context} tokens)")
    ax.barh([0], [state / GB], color=COLORS["compute"],
            label="training state (16 bytes/parameter)")
    ax.axvline(gpu.hbm_bytes / GB, color=COLORS["accent"], ls="--",
               label=f"one {gpu.name}: {gpu.hbm_bytes / GB:.0f} GB")
    ax.set_yticks([0, 1], ["training", "serving"])
    ax.set_xlabel("GB")
    ax.set_title(f"{cfg.name}: memory against one GPU")
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    ax.grid(axis="y", visible=False)
    return fig


def close(fig) -> None:
    """Close a figure (pages display it first)."""
    plt.close(fig)
