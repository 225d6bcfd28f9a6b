"""Figures of the page "CPU architecture" ({ref}`sec-cpu-architecture`).

* :func:`opening_animation`: instructions flow through a pipeline, several per cycle, and each
  vector instruction works on a row of lanes at once.
* :func:`structure_diagram`: a core's front end, scheduler, execution ports (vector FMA units,
  load and store units) and caches; cores side by side on one chip.
* :func:`peak_figure` (matplotlib): the peak of eq-cpu-peak for several assumptions against a
  measured matrix product.

Every number drawn comes from the arguments.

Used by: foundations/cpu-architecture.md.
"""

from __future__ import annotations

from typing import Mapping

from .. import units
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "peak_figure"]

_STAGES = ("fetch", "decode", "schedule", "execute", "retire")


def opening_animation(*, lanes: int = 16, width: int = 4) -> Figure:
    """A pipeline of five stages, ``width`` instructions per cycle, ``lanes`` lanes each."""
    if lanes < 1 or width < 1:
        raise ValueError(f"lanes and width must be >= 1, got {lanes}, {width}")
    c = Canvas(760, 260, "A core: a pipeline that finishes several wide instructions per cycle",
               uid="cpu-open", description=(
                   f"Animated diagram. Five pipeline stages side by side: fetch, decode, "
                   f"schedule, execute, retire. Groups of {width} instructions move one stage "
                   f"to the right every clock cycle, so every stage is busy with a different "
                   f"group at once. Below, one vector instruction is drawn as a row of "
                   f"{lanes} lanes that all compute in the same cycle."))
    comp, host, acc = PALETTE["compute"], PALETTE["host"], PALETTE["accent"]
    sw, x0 = 130, 40
    for i, name in enumerate(_STAGES):
        c.box(x0 + i * (sw + 12), 40, sw, 90, "", color=host if i != 3 else comp,
              fill_opacity=0.1)
        c.text(x0 + i * (sw + 12) + sw / 2, 30, name, size=12.5, weight="600")
    dur, n_stages = 5.0, len(_STAGES)
    step = sw + 12
    for g in range(n_stages):
        for k in range(width):
            y = 52 + k * (72 / width)
            begin = g * dur / n_stages  # negative begin: every group already in flight
            c.raw(f'<rect x="-45" y="0" width="90" height="{64 / width - 3:.1f}" rx="3" '
                  f'fill="{acc}" opacity="{0.25 + 0.17 * g:.2f}"><animateMotion path="M{x0 + sw / 2},{y:.1f} '
                  f'L{x0 + sw / 2 + (n_stages - 1) * step},{y:.1f}" dur="{dur}s" '
                  f'begin="-{begin:.2f}s" repeatCount="indefinite" calcMode="discrete" '
                  f'keyPoints="0;0.25;0.5;0.75;1;1" keyTimes="0;0.2;0.4;0.6;0.8;1"/></rect>')
    c.mark_animated()
    c.text(380, 150, f"every cycle, each stage holds a different group of {width} instructions",
           size=12, fill=MUTED)
    lx = 380 - lanes * 22 / 2
    for j in range(lanes):
        flash = Canvas.animate("opacity", [0.2, 0.2, 0.9, 0.2], key_times=[0, 0.6, 0.7, 1],
                               dur_s=dur / n_stages)
        c.rect(lx + j * 22, 178, 18, 26, fill=comp, stroke="none", rx=3, opacity=0.2,
               children=flash)
    c.text(380, 222, f"one vector instruction: {lanes} lanes, one multiply-add each, "
           "in the same cycle", size=12, fill=MUTED)
    c.text(380, 247, "Click to pause.", size=11.5, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Inside one core, and cores on a chip."""
    c = Canvas(780, 300, "Inside a CPU core", uid="cpu-struct", description=(
        "Diagram. A core: the front end fetches and decodes instructions; a scheduler sends "
        "them out of order to execution ports: two vector units that do fused multiply-adds, "
        "integer units, and load and store units connected to the L1 data cache, backed by L2. "
        "Beside it, more cores of the same chip share the L3 and one clock domain."))
    host, comp, mem, q = PALETTE["host"], PALETTE["compute"], PALETTE["memory"], PALETTE["queue"]
    c.rect(14, 14, 540, 272, fill="none", stroke=host, stroke_width=1.8, rx=10)
    c.text(284, 32, "one core", size=13.5, weight="600")
    c.box(30, 50, 140, 60, "front end", sublabel="fetch, decode", color=host, size=12)
    c.box(200, 50, 150, 60, "scheduler", sublabel="out of order", color=q, size=12)
    c.line(170, 80, 198, 80, stroke=MUTED, arrow=True)
    ports = [("FMA unit", "vector", comp), ("FMA unit", "vector", comp),
             ("integer", "ALU", host), ("load/store", "to L1", mem)]
    for i, (name, sub, col) in enumerate(ports):
        x = 30 + i * 128
        c.box(x, 140, 116, 56, name, sublabel=sub, color=col, size=12)
        c.line(275, 110, x + 58, 138, stroke=MUTED, width=1.2, arrow=True)
    c.box(30, 218, 240, 50, "L2", sublabel="private", color=mem, size=12)
    c.box(290, 218, 250, 50, "L1 data cache", sublabel="private", color=mem, size=12)
    c.line(442, 196, 442, 216, stroke=mem, both=True)
    c.line(272, 243, 288, 243, stroke=mem, both=True)
    c.box(380, 50, 160, 60, "registers", sublabel="vector: 128-512 bits", color=comp, size=12)
    for k in range(3):
        c.rect(580 + k * 10, 30 + k * 10, 150, 150, fill="none", stroke=host, stroke_width=1.2,
               rx=8, opacity=0.7)
    c.text(665, 130, "more cores", size=12.5, fill=MUTED)
    c.box(580, 210, 180, 58, "L3, memory", sublabel="shared by the cores", color=mem, size=12)
    return c.figure()


def peak_figure(peaks_flop_per_s: Mapping[str, float], measured_flop_per_s: float, *,
                measured_label: str = "measured matmul", ax=None):
    """Horizontal bars: the peak under each assumption, and the measured rate (GFLOP/s)."""
    fig, ax = new_figure(height_in=2.2 + 0.35 * len(peaks_flop_per_s)) if ax is None else (
        ax.figure, ax)
    names = list(peaks_flop_per_s) + [measured_label]
    vals = [v / units.GFLOP for v in peaks_flop_per_s.values()] + [measured_flop_per_s / units.GFLOP]
    colors = [COLORS["neutral"]] * len(peaks_flop_per_s) + [COLORS["compute"]]
    bars = ax.barh(names, vals, color=colors)
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:.3g}", (v, b.get_y() + b.get_height() / 2), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("GFLOP/s (fp32)")
    ax.set_xlim(0, max(vals) * 1.18)
    return fig
