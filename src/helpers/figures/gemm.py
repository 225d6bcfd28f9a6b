"""Figures of the matrix-multiplication lesson ({ref}`sec-gemm`) and its lab ({ref}`sec-lab-gemm`).

* :func:`opening_animation`: the tiles of C filled by CTAs wave after wave on a few SMs; the last
  wave is partly empty, and the share of idle slots is the wave-quantization loss.
* :func:`structure_diagram`: where a tile's operands live on the way to the tensor cores: HBM,
  L2, shared memory (``stages`` buffers), registers.
* :func:`lab_structure_diagram`: what the lab measures and checks.
* Plots (matplotlib, the book's style): :func:`rate_vs_size_figure` (rate against size, with the
  wave model's efficiency), :func:`config_figure` (the tiling sweep against cuBLAS).

Every number drawn is computed from the arguments; none is typed here.

Used by: chapters/gemm.md, labs/gemm.md.
"""

from __future__ import annotations

from typing import Sequence

from .. import units
from ..models import gemm as gm
from .style import COLORS, new_figure
from .svg import BACKGROUND, MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "lab_structure_diagram",
           "rate_vs_size_figure", "config_figure"]

GREY = PALETTE["neutral"]


def opening_animation(m_tiles: int = 6, n_tiles: int = 8, sms: int = 20) -> Figure:
    """Tiles of C (``m_tiles x n_tiles``) computed by ``sms`` CTAs at a time, in waves."""
    tiles = gm.tile_count(m_tiles, n_tiles, 1, 1)
    n_waves = gm.waves(tiles, sms)
    eff = gm.wave_efficiency(tiles, sms)
    c = Canvas(760, 320, "Tiles of C are computed in waves; the last wave is partly empty",
               uid="gemm-open", description=(
                   f"Animated grid of {m_tiles} by {n_tiles} output tiles of a matrix product. "
                   f"A GPU with {sms} SMs computes {sms} tiles at a time, one per SM, in "
                   f"{n_waves} waves; the tiles of each wave light up together. The last wave "
                   f"has only {tiles - (n_waves - 1) * sms} tiles, so most SMs idle during it: "
                   f"the GEMM uses {eff:.0%} of its SM-slots."))
    colors = [PALETTE["memory"], PALETTE["compute"], PALETTE["accent"], PALETTE["host"],
              PALETTE["queue"], PALETTE["network"]]
    size, gap, x0, y0 = 34.0, 4.0, 40.0, 50.0
    dur = 2.0 * (n_waves + 1)
    c.text(x0 + n_tiles * (size + gap) / 2, 30, "C: one tile per CTA", size=13, weight="600")
    order = gm.grouped_tile_order(m_tiles, n_tiles, 1)
    for p, (i, j) in enumerate(order):
        w = p // sms
        x, y = x0 + j * (size + gap), y0 + i * (size + gap)
        c.rect(x, y, size, size, fill="none", stroke=GREY, stroke_width=1)
        on = (w + 1) / (n_waves + 1)
        show = Canvas.animate("opacity", [0, 0, 0.85, 0.85], key_times=[0, on, min(on + 0.05, 1), 1],
                              dur_s=dur)
        c.rect(x + 2, y + 2, size - 4, size - 4, fill=colors[w % len(colors)], stroke="none",
               opacity=0, children=show)
    # The SMs, busy or idle in each wave.
    sx, sy = 380.0, 60.0
    c.text(sx, 30, f"{sms} SMs, one CTA each", size=13, anchor="start", weight="600")
    for w in range(n_waves):
        busy = min(sms, tiles - w * sms)
        y = sy + w * 46
        c.text(sx, y + 10, f"wave {w + 1}", size=12, anchor="start", fill=MUTED)
        for s in range(sms):
            x = sx + 55 + s * 13
            on = (w + 1) / (n_waves + 1)
            fill = colors[w % len(colors)] if s < busy else "none"
            show = Canvas.animate("opacity", [0.15, 0.15, 1, 1], key_times=[0, on, min(on + 0.05, 1), 1],
                                  dur_s=dur)
            c.rect(x, y, 11, 20, fill=fill, stroke=GREY, stroke_width=0.8, rx=2, opacity=0.15,
                   children=show)
        c.text(sx + 55 + sms * 13 + 6, y + 10, f"{busy}/{sms}", size=12, anchor="start")
    c.text(sx, sy + n_waves * 46 + 14, f"{tiles} tiles on {n_waves} x {sms} slots: {eff:.0%} busy",
           size=13, anchor="start", weight="600", fill=PALETTE["accent"])
    c.text(380, 305, "Click to pause. A GEMM's time is set by its waves, not its tiles.",
           size=12, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram(stages: int = 3) -> Figure:
    """HBM -> L2 -> shared memory (``stages`` buffers) -> registers / tensor cores."""
    c = Canvas(780, 260, "Where a tile's operands travel on the way to the tensor cores",
               uid="gemm-struct", description=(
                   f"Diagram. A and B live in HBM. Their tiles pass through the L2 cache, shared "
                   f"by all SMs, into shared memory, where {stages} pipeline buffers let the "
                   f"next tiles load while the tensor cores multiply the current ones; the "
                   f"accumulator tile stays in registers for the whole K-loop and is written "
                   f"to C once, in the epilogue."))
    mem, comp, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    c.box(20, 90, 130, 70, "HBM", sublabel="A, B, C", color=mem)
    c.box(190, 90, 130, 70, "L2 cache", sublabel="shared by all SMs", color=mem)
    for s in reversed(range(stages)):  # the back buffers peek out above and to the right
        x, y = 360 + 8 * s, 95 - 8 * s
        c.rect(x, y, 160, 60, fill=BACKGROUND, stroke="none")
        c.box(x, y, 160, 60, "shared memory" if s == 0 else "",
              sublabel=f"{stages} stages (A, B tiles)" if s == 0 else None, color=acc)
    c.box(580, 90, 180, 70, "registers", sublabel="accumulator -> tensor cores", color=comp)
    c.line(152, 125, 188, 125, stroke=mem, arrow=True)
    c.line(322, 125, 358, 125, stroke=mem, arrow=True)
    c.line(522, 125, 578, 125, stroke=acc, arrow=True)
    c.path("M 670 162 C 670 230, 85 230, 85 162", stroke=comp, arrow=True, dash="5 4")
    c.text(380, 242, "epilogue: C written once per tile (cast, bias, activation fused here)",
           size=12, fill=MUTED)
    c.text(255, 75, "a wave's CTAs share A, B panels", size=11, fill=MUTED)
    c.text(440, 175, "next tiles load while the current ones multiply", size=11, fill=MUTED)
    return c.figure()


def lab_structure_diagram() -> Figure:
    """The GEMM lab: check, sweep tilings, sweep sizes, compare with cuBLAS and the model."""
    c = Canvas(780, 280, "What the GEMM lab measures and what it checks", uid="labgemm-struct",
               description=(
                   "Diagram. The book's Triton GEMM is first checked against float64 on small "
                   "and odd shapes. On a GPU a sweep of tilings (block sizes, pipeline stages, "
                   "grouped ordering) at size 8192 in bf16 picks the fastest, which is compared "
                   "with torch.matmul (cuBLAS) across sizes, where the wave-quantization model "
                   "predicts the dips; fp32 is compared with TF32 off and on. The reader's own "
                   "kernel is graded at the end."))
    mem, comp, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    c.box(20, 30, 170, 56, "check", sublabel="float64, odd shapes", color=GREY)
    c.box(20, 110, 170, 56, "tiling sweep", sublabel="blocks, stages, GROUP_M", color=acc)
    c.box(20, 190, 170, 56, "size sweep", sublabel="1024 ... 8192", color=mem)
    c.line(105, 88, 105, 108, stroke=GREY, arrow=True)
    c.line(105, 168, 105, 188, stroke=acc, arrow=True)
    c.box(290, 110, 190, 56, "vs torch.matmul", sublabel="share of cuBLAS, of peak", color=comp)
    c.box(290, 190, 190, 56, "wave model", sublabel="ceil(tiles / SMs)", color=mem)
    c.line(192, 138, 288, 138, stroke=acc, arrow=True)
    c.line(192, 218, 288, 218, stroke=mem, arrow=True)
    c.box(580, 110, 180, 56, "H200 reference", sublabel="beside your machine", color=GREY)
    c.box(580, 190, 180, 56, "grade", sublabel="your K-loop", color=PALETTE["host"])
    c.line(482, 138, 578, 138, stroke=GREY, arrow=True)
    c.line(482, 218, 578, 218, stroke=GREY, arrow=True)
    return c.figure()


def rate_vs_size_figure(rows: Sequence[dict], *, title: str, peak_flop_per_s: float | None = None):
    """Rate against size for torch (and Triton when present; rows timed from a CUDA graph also
    show the Triton kernel timed one call per interval, hollow and dotted), with the wave
    model's efficiency on a second axis. ``rows`` are :func:`helpers.labs.analysis.gemm.size_rows` (or the same keys)."""
    if not rows:
        raise ValueError("need at least one row")
    fig, ax = new_figure(width_in=7.5, height_in=3.6)
    ns = [r["n"] for r in rows]
    top = max(r["torch_flop_per_s"] for r in rows)
    scale, unit = (units.T, "TFLOP/s") if top >= units.T else (units.G, "GFLOP/s")
    ax.plot(ns, [r["torch_flop_per_s"] / scale for r in rows], "o-", color=COLORS["compute"],
            label="torch.matmul")
    if any(r.get("triton_flop_per_s") for r in rows):
        ax.plot(ns, [(r["triton_flop_per_s"] or float("nan")) / scale for r in rows], "s-",
                color=COLORS["accent"], label="Triton (best tiling)")
    graphed = [r for r in rows if r.get("graph") and r.get("triton_call_flop_per_s")]
    if graphed:  # the same kernel timed one Python call per interval: the launcher shows
        ax.plot([r["n"] for r in graphed], [r["triton_call_flop_per_s"] / scale for r in graphed],
                "s:", color=COLORS["accent"], mfc="none", label="Triton, one call per interval")
    if peak_flop_per_s:
        ax.axhline(peak_flop_per_s / scale, color=COLORS["neutral"], ls="--", lw=1,
                   label="dense peak")
    ax.set_xlabel("matrix size n (n x n x n)")
    ax.set_ylabel(f"rate ({unit})")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    if all("wave_efficiency" in r for r in rows):
        ax2 = ax.twinx()
        ax2.plot(ns, [r["wave_efficiency"] for r in rows], ":", color=COLORS["memory"],
                 marker="x", label="wave efficiency (model)")
        ax2.set_ylim(0, 1.05)
        ax2.set_ylabel("wave efficiency (model)", color=COLORS["memory"])
        ax2.legend(loc="lower center", fontsize=8)
    return fig


def config_figure(rows: Sequence[dict], *, torch_flop_per_s: float, title: str):
    """Horizontal bars: each tiling's rate; a line at torch's. Failed tilings are marked."""
    if not rows:
        raise ValueError("need at least one row")
    fig, ax = new_figure(width_in=7.5, height_in=0.35 * len(rows) + 1.2)
    names = [r["name"] for r in rows]
    vals = [(r["flop_per_s"] or 0.0) / units.T for r in rows]
    ax.barh(names, vals, color=[COLORS["accent"] if r["flop_per_s"] else COLORS["neutral"]
                                for r in rows])
    for y, r in enumerate(rows):
        if not r["flop_per_s"]:
            ax.text(1, y, "does not fit (shared memory)", va="center", fontsize=8)
    ax.axvline(torch_flop_per_s / units.T, color=COLORS["compute"], ls="--", label="torch.matmul")
    ax.invert_yaxis()
    ax.set_xlabel("rate (TFLOP/s)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return fig
