"""Figures of the page "Quantization and speculative decoding"
({ref}`sec-quantization-and-speculation`) and of its lab ({ref}`sec-lab-speculative`).

* :func:`opening_animation`: a draft model proposes tokens one at a time; the target checks
  them all in one pass, keeps the agreeing prefix and adds its own token;
* :func:`structure_diagram`: the two levers of the page (fewer bytes per weight, fewer target
  passes per token) and the models that price each;
* :func:`quantization_figure`: one weight row's histogram with its int4 grid, and the round-trip
  error of each granularity with and without one outlier weight;
* :func:`speedup_figure`: tokens per cycle and speedup against the draft length, from
  :mod:`helpers.models.speculative` (the explorer of :mod:`helpers.widgets.quantization_speculation`
  redraws it);
* :func:`lab_figure`: measured tokens per cycle and speedup of the lab beside the model.

Used by: chapters/quantization-and-speculation.md, labs/speculative.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..models import quantization as quant
from ..models import speculative as spec
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "quantization_figure", "speedup_figure",
           "lab_figure"]


def opening_animation(draft: str = "the cat", target: str = "the car",
                      ) -> Figure:
    """Draft tokens appear one by one; the target's single pass marks each kept or rejected.

    ``draft`` and ``target`` are the two models' greedy continuations (same length); the
    accepted prefix is where they agree, and the target's token at the first disagreement is
    the correction the cycle adds.
    """
    if len(draft) != len(target) or not draft:
        raise ValueError("draft and target must be non-empty strings of the same length")
    g = len(draft)
    k = next((i for i in range(g) if draft[i] != target[i]), g)
    dur = 1.0 * g + 5.0
    c = Canvas(820, 300, "Speculative decoding: draft several tokens, verify them in one pass",
               uid="qs-open", description=(
                   f"Animation. A small draft model writes {g} characters one step at a time "
                   f"('{draft}'). Then the large target model reads all of them in one forward "
                   f"pass and computes its own choice at each position ('{target}'). The first "
                   f"{k} drafts agree and are kept; at the first disagreement the target's own "
                   "token replaces the draft, and the rest is discarded. One target pass has "
                   f"produced {k + 1} tokens instead of one."))
    acc, comp, mem = PALETTE["accent"], PALETTE["compute"], PALETTE["memory"]
    c.box(20, 30, 150, 60, "draft model", sublabel="small, one step each", color=mem, size=13)
    c.box(20, 190, 150, 60, "target model", sublabel="large, one pass", color=comp, size=13)
    w = 62
    xs = [210 + i * (w + 6) for i in range(g + 1)]
    c.mark_animated()
    t_draft_end = 0.5 + g * 1.0
    for i, ch in enumerate(draft):
        t0 = (0.5 + i * 1.0) / dur
        show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, t0, t0 + 0.02, 1],
                              dur_s=dur)
        c.rect(xs[i], 40, w, 40, fill=mem, stroke="none", opacity=0, children=show)
        c.text(xs[i] + w / 2, 60, repr(ch)[1:-1] if ch != " " else "␣", size=16,
               weight="600", children=Canvas.animate("opacity", [0, 0, 1, 1],
                                                     key_times=[0, t0, t0 + 0.02, 1], dur_s=dur))
    # the verification pass: one sweep over every position at once
    tv = t_draft_end / dur
    sweep = Canvas.animate("opacity", [0, 0, 0.35, 0.35, 0, 0],
                           key_times=[0, tv, tv + 0.03, tv + 0.15, tv + 0.2, 1], dur_s=dur)
    c.rect(xs[0] - 4, 36, xs[g - 1] + w - xs[0] + 8, 214, fill=comp, stroke="none", opacity=0,
           children=sweep)
    t_mark = (t_draft_end + 1.2) / dur
    for i, ch in enumerate(target):
        ok = i < k
        color = PALETTE["host"] if ok else (acc if i == k else PALETTE["neutral"])
        show = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, t_mark, t_mark + 0.02, 1],
                              dur_s=dur)
        label = "✓" if ok else ("✗" if i == k else "–")
        c.text(xs[i] + w / 2, 125, label, size=20, weight="700", fill=color, children=show)
        if i <= k:
            c.rect(xs[i], 200, w, 40, fill=color, stroke="none", opacity=0,
                   children=Canvas.animate("opacity", [0, 0, 0.35, 0.35],
                                           key_times=[0, t_mark, t_mark + 0.02, 1], dur_s=dur))
            c.text(xs[i] + w / 2, 220, repr(ch)[1:-1] if ch != " " else "␣", size=16,
                   weight="600", children=Canvas.animate("opacity", [0, 0, 1, 1],
                                                         key_times=[0, t_mark, t_mark + 0.02, 1],
                                                         dur_s=dur))
    t_end = (t_draft_end + 2.4) / dur
    c.text(410, 280, f"one target pass: {k} drafts kept + 1 token of its own = {k + 1} tokens",
           size=14, weight="600", fill=acc,
           children=Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, t_end, t_end + 0.02, 1],
                                   dur_s=dur))
    c.text(xs[0], 150, "target checks every draft position at once", anchor="start", size=12,
           fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Two levers on a memory-bound decode step and the model that prices each."""
    c = Canvas(820, 270, "Two ways to make a decode step cheaper per token", uid="qs-struct",
               description=(
                   "Diagram. A decode step reads every weight once. Left branch: quantization "
                   "stores each weight in fewer bits (int8, int4 in groups with a scale each), "
                   "so fewer bytes are read; its price is the rounding error, at most half a "
                   "step, RMS step over root twelve, and an outlier that stretches the step. "
                   "Right branch: speculative decoding lets a small draft propose g tokens and "
                   "the target verify them in one pass, so one read of the weights yields "
                   "several tokens; its price is the draft's cost c per token and the "
                   "acceptance rate alpha."))
    acc, comp, mem, host = PALETTE["accent"], PALETTE["compute"], PALETTE["memory"], PALETTE["host"]
    c.box(260, 15, 300, 56, "decode step: read every weight once", sublabel="time ≈ bytes / bandwidth",
          color=comp, size=14)
    c.box(20, 110, 360, 56, "quantization: fewer bytes per weight",
          sublabel="int8 / int4 + one scale per group", color=mem, size=14)
    c.box(440, 110, 360, 56, "speculation: more tokens per weight read",
          sublabel="draft g tokens, verify in one pass", color=acc, size=14)
    c.line(360, 71, 200, 108, stroke=mem, arrow=True)
    c.line(460, 71, 620, 108, stroke=acc, arrow=True)
    c.box(20, 200, 170, 56, "bits per weight", sublabel="b + 16 / G", color=mem, size=13)
    c.box(210, 200, 170, 56, "rounding error", sublabel="≤ s/2, RMS s/√12", color=mem, size=13)
    c.box(440, 200, 170, 56, "tokens per cycle", sublabel="(1−α^(g+1))/(1−α)", color=acc, size=13)
    c.box(630, 200, 170, 56, "speedup", sublabel="÷ (g c + 1)", color=host, size=13)
    for x in (105, 295):
        c.line(x, 166, x, 198, stroke=mem, arrow=True)
    for x in (525, 715):
        c.line(x, 166, x, 198, stroke=acc, arrow=True)
    return c.figure()


def quantization_figure(row, *, outlier_factor: float = 20.0, group_size: int = 32,
                        title: str = "One weight row of book-lm"):
    """Left: a weight row's histogram with the int4 per-channel grid and the g32 group grids'
    typical step. Right: RMS round-trip error of the row's matrix per granularity (int8 and
    int4), as is and with one weight multiplied by ``outlier_factor``.

    ``row`` is a 2-D weight matrix (numpy); its first row is drawn."""
    w = np.asarray(row, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] % group_size:
        raise ValueError(f"row must be a 2-D matrix whose width divides by {group_size}, got "
                         f"shape {w.shape}")
    fig, (ax1, ax2) = new_figure(1, 2, width_in=8.6, height_in=3.4)
    r = w[0]
    s4 = float(quant.absmax_scales(w[:1], "channel", bits=4)[0, 0])
    ax1.hist(r, bins=60, color=PALETTE["memory"], alpha=0.75)
    for q in range(-7, 8):
        ax1.axvline(q * s4, color=PALETTE["accent"], lw=0.8, alpha=0.7)
    ax1.set_xlabel("weight value")
    ax1.set_ylabel("count")
    ax1.set_title(f"{title}: int4 grid (per row)", fontsize=10)
    w2 = w.copy()
    w2[0, int(np.argmax(np.abs(w[0])))] *= outlier_factor
    labels, base, hit = [], [], []
    for bits in (8, 4):
        for gran in quant.GRANULARITIES:
            g = group_size if gran == "group" else None
            e1 = np.sqrt(np.mean((quant.fake_quantize(w, gran, bits=bits, group_size=g) - w) ** 2))
            mask = np.ones_like(w2, dtype=bool)
            mask[0, int(np.argmax(np.abs(w[0])))] = False
            e2 = np.sqrt(np.mean(((quant.fake_quantize(w2, gran, bits=bits, group_size=g) - w2)
                                  [mask]) ** 2))
            labels.append(f"int{bits}\n{gran if gran != 'group' else f'g{group_size}'}")
            base.append(e1)
            hit.append(e2)
    x = np.arange(len(labels))
    ax2.bar(x - 0.2, base, 0.4, color=PALETTE["memory"], label="as trained")
    ax2.bar(x + 0.2, hit, 0.4, color=PALETTE["accent"],
            label=f"one weight ×{outlier_factor:g}")
    ax2.set_yscale("log")
    ax2.set_xticks(x, labels, fontsize=8)
    ax2.set_ylabel("RMS error of the other weights")
    ax2.set_title("Round-trip error by granularity", fontsize=10)
    ax2.legend(fontsize=8)
    plt.close(fig)
    return fig


def speedup_figure(acceptance: float, draft_len: int, cost_ratio: float, *, max_len: int = 12,
                   alphas: Sequence[float] = (0.5, 0.7, 0.8, 0.9)):
    """Tokens per cycle (left) and speedup (right) against the draft length, for the chosen
    acceptance rate and a few others; the chosen point and the best draft length marked."""
    if not 1 <= draft_len <= max_len:
        raise ValueError(f"draft_len must lie in [1, {max_len}], got {draft_len}")
    fig, (ax1, ax2) = new_figure(1, 2, width_in=8.6, height_in=3.4)
    gs = np.arange(0, max_len + 1)
    cols = [PALETTE["neutral"], PALETTE["queue"], PALETTE["host"], PALETTE["network"]]
    for a, col in zip(alphas, cols):
        if abs(a - acceptance) < 1e-9:
            continue
        ax1.plot(gs, [spec.expected_tokens_per_cycle(a, g) for g in gs], color=col, lw=1,
                 alpha=0.7, label=f"α = {a:g}")
        ax2.plot(gs, [spec.speedup(a, g, cost_ratio) for g in gs], color=col, lw=1, alpha=0.7)
    n = [spec.expected_tokens_per_cycle(acceptance, g) for g in gs]
    s = [spec.speedup(acceptance, g, cost_ratio) for g in gs]
    ax1.plot(gs, n, color=PALETTE["accent"], lw=2.2, label=f"α = {acceptance:.2f}")
    ax1.plot(gs, gs + 1, color=MUTED_HEX, lw=1, ls=":", label="all accepted")
    ax1.plot([draft_len], [n[draft_len]], "o", color=PALETTE["accent"], ms=7)
    ax2.plot(gs, s, color=PALETTE["accent"], lw=2.2)
    ax2.plot([draft_len], [s[draft_len]], "o", color=PALETTE["accent"], ms=7)
    best = spec.optimal_draft_length(acceptance, cost_ratio, max_len=max_len)
    if best:
        ax2.axvline(best, color=PALETTE["accent"], lw=1, ls="--")
        ax2.text(best, ax2.get_ylim()[1], f" best g = {best}", va="top", fontsize=8)
    ax2.axhline(1.0, color=MUTED_HEX, lw=1, ls=":")
    ax1.set_xlabel("draft length g")
    ax1.set_ylabel("tokens per cycle")
    ax1.legend(fontsize=8)
    ax2.set_xlabel("draft length g")
    ax2.set_ylabel(f"speedup at c = {cost_ratio:.2f}")
    ax1.set_title(f"g = {draft_len}: {n[draft_len]:.2f} tokens per cycle", fontsize=10)
    ax2.set_title(f"speedup {s[draft_len]:.2f}x", fontsize=10)
    plt.close(fig)
    return fig


MUTED_HEX = "#7d8590"


def lab_figure(runs: Mapping[str, Sequence[Mapping]], *, title: str):
    """Measured tokens per cycle and speedup per draft length (markers) beside the model at each
    run's own acceptance rate and cost ratio (dashed lines), and the speedup model with each
    draft length's measured verification ratio ``v`` (dotted, crosses). ``runs[name]`` is a
    list of :func:`helpers.labs.analysis.speculative.sweep_rows`."""
    if not runs or not any(runs.values()):
        raise ValueError("runs must hold at least one non-empty sweep")
    fig, (ax1, ax2) = new_figure(1, 2, width_in=8.6, height_in=3.4)
    cols = [PALETTE["accent"], PALETTE["memory"]]
    for (name, rows), col in zip(runs.items(), cols):
        if not rows:
            continue
        g = [r["draft_len"] for r in rows]
        a, c = rows[0]["alpha"], rows[0]["c"]
        gg = np.arange(1, max(g) + 1)
        ax1.plot(gg, [spec.expected_tokens_per_cycle(a, k) for k in gg], color=col, lw=1.2,
                 ls="--", label=f"{name}: model, α = {a:.2f}")
        ax1.plot(g, [r["tokens_per_cycle"] for r in rows], "o", color=col,
                 label=f"{name}: measured")
        ax2.plot(gg, [spec.speedup(a, k, c) for k in gg], color=col, lw=1.2, ls="--",
                 label=f"{name}: model, c = {c:.2f}")
        if all("speedup_model_v" in r for r in rows):
            ax2.plot(g, [r["speedup_model_v"] for r in rows], color=col, lw=1.0, ls=":",
                     marker="x", ms=5, label=f"{name}: model with measured v")
        ax2.plot(g, [r["speedup"] for r in rows], "o", color=col, label=f"{name}: measured")
    ax2.axhline(1.0, color=MUTED_HEX, lw=1, ls=":")
    ax1.set_xlabel("draft length g")
    ax1.set_ylabel("tokens per cycle")
    ax2.set_xlabel("draft length g")
    ax2.set_ylabel("speedup over greedy decoding")
    ax1.legend(fontsize=7.5)
    ax2.legend(fontsize=7.5)
    fig.suptitle(title, fontsize=10)
    plt.close(fig)
    return fig
