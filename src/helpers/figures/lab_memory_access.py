"""Figures of the lab "Memory access patterns" ({ref}`sec-lab-memory-access`, page
``labs/memory-access.md``); the models come from :mod:`helpers.models.memory_access`.

* :func:`opening_animation`: one warp of 32 threads reads 32 floats at stride 1, then at
  stride 8; the sectors the memory system must fetch light up;
* :func:`structure_diagram`: the lab's three measurements, each with its model, and the grader;
* :func:`stride_figure`: useful bandwidth against stride, measured and predicted;
* :func:`transpose_figure`: the transposes and a copy, as a fraction of a bandwidth.

Used by: labs/memory-access.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..models.memory_access import FP32_BYTES as ELEMENT_BYTES
from ..models.memory_access import SECTOR_BYTES, WARP_SIZE, predicted_efficiency
from .style import new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "stride_figure", "transpose_figure"]


def opening_animation(strides: Sequence[int] = (1, 8), n_sectors: int = 32,
                      phase_s: float = 3.0) -> Figure:
    """A warp's 32 threads reading at each stride in turn; fetched sectors light up."""
    if not strides or any(s < 1 for s in strides):
        raise ValueError(f"strides must be >= 1, got {strides!r}")
    per_sector = SECTOR_BYTES // ELEMENT_BYTES
    if max(strides) * (WARP_SIZE - 1) // per_sector >= n_sectors:
        raise ValueError(f"n_sectors={n_sectors} cannot hold a warp at stride {max(strides)}")
    cell, x0 = 22.0, 24.0
    width = x0 * 2 + n_sectors * cell
    c = Canvas(width, 250, "A warp reading at stride 1, then at stride 8", "labmem-open",
               description="32 threads each read one 4-byte float. At stride 1 their floats "
               "share 4 sectors of 32 bytes; at stride 8 every thread needs its own sector, so "
               "8 times the bytes are fetched for the same useful data.")
    total = phase_s * len(strides)
    ty, my = 48.0, 170.0
    c.text(width / 2, 16, "one warp: 32 threads, one float each", size=12, fill=MUTED)
    for t in range(WARP_SIZE):
        c.circle(x0 + (t + 0.5) * cell, ty, 6, fill=PALETTE["compute"])
    c.text(width / 2, my + 40, "memory: 32-byte sectors (8 floats each)", size=12, fill=MUTED)
    for k, s in enumerate(strides):
        n = len(strides)
        vis = [1 if i == k else 0 for i in range(n)]
        anim = Canvas.animate("opacity", vis, dur_s=total, key_times=[i / n for i in range(n)],
                              calc_mode="discrete")
        sectors = sorted({t * s // per_sector for t in range(WARP_SIZE)})
        eff = predicted_efficiency(s, ELEMENT_BYTES)
        body = []
        for t in range(WARP_SIZE):
            sec = t * s // per_sector
            slot = (t * s) % per_sector
            x2 = x0 + sec * cell + (slot + 0.5) * cell / per_sector
            body.append(f'<line x1="{x0 + (t + 0.5) * cell:.1f}" y1="{ty + 7:.1f}" x2="{x2:.1f}" '
                        f'y2="{my - 2:.1f}" stroke="{PALETTE["compute"]}" stroke-width="1" '
                        f'opacity="0.55"/>')
        for sec in sectors:
            body.append(f'<rect x="{x0 + sec * cell + 1:.1f}" y="{my:.1f}" width="{cell - 2:.1f}" '
                        f'height="22" rx="3" fill="{PALETTE["memory"]}" opacity="0.55"/>')
        label = (f"stride {s}: {len(sectors)} sectors fetched = {len(sectors) * SECTOR_BYTES} bytes "
                 f"for {WARP_SIZE * ELEMENT_BYTES} useful bytes (efficiency {eff:.1%})")
        body.append(f'<text x="{width / 2:.1f}" y="{my + 70:.1f}" font-size="13" '
                    f'text-anchor="middle" dominant-baseline="middle" '
                    f'fill="var(--pst-color-text-base, var(--jp-content-font-color1, #1f2328))" '
                    f'font-weight="600">{label}</text>')
        c.raw(f'<g opacity="{1 if k == 0 else 0}">{anim}{"".join(body)}</g>')
    for sec in range(n_sectors):
        c.rect(x0 + sec * cell + 1, my, cell - 2, 22, rx=3, fill="none", stroke=PALETTE["memory"],
               stroke_width=1)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """The lab's three measurements, the model each is compared with, and the grader."""
    c = Canvas(760, 230, "The memory-access lab: three measurements and their models",
               "labmem-struct", description="Strided read, transposes and bank conflicts, each "
               "beside its model; the grader checks the reader's tiled transpose.")
    cols = [("strided read", "sum every s-th float", "useful B/s = η(s) × HBM B/s",
             PALETTE["memory"]),
            ("transpose", "torch, naive, tiled (Triton)", "time ≥ bytes / (η B/s)",
             PALETTE["compute"]),
            ("bank conflicts", "CUDA C tile[32][32] vs [32][33]", "passes = gcd(pitch, 32)",
             PALETTE["accent"])]
    w, gap = 220, 25
    for i, (name, what, model, color) in enumerate(cols):
        x = 25 + i * (w + gap)
        c.box(x, 20, w, 60, name, sublabel=what, color=color)
        c.line(x + w / 2, 82, x + w / 2, 112, arrow=True)
        c.box(x, 114, w, 44, model, color=PALETTE["neutral"], size=11.5, fill_opacity=0.08)
    c.box(25 + w + gap, 180, w, 40, "grade: your tiled transpose", color=PALETTE["host"], size=12)
    c.line(25 + 1.5 * w + gap, 160, 25 + 1.5 * w + gap, 178, arrow=True)
    return c.figure()


def stride_figure(panels: Mapping[str, Mapping[str, Sequence[float]]], *, title: str):
    """Useful bandwidth against stride, one panel per machine (log-log).

    ``panels[name]`` holds ``strides``, ``measured`` (bytes/s) and ``model`` (bytes/s).
    """
    if not panels:
        raise ValueError("panels must hold at least one machine")
    fig, axes = new_figure(1, len(panels), width_in=3.7 * len(panels) + 0.6, height_in=3.3,
                           squeeze=False)
    for ax, (name, p) in zip(axes[0], panels.items()):
        s = list(p["strides"])
        if not (len(s) == len(p["measured"]) == len(p["model"])) or not s:
            raise ValueError(f"panel {name!r}: strides, measured and model must have one length")
        ax.plot(s, [v / 1e9 for v in p["model"]], "--", color=PALETTE["neutral"], label="model")
        ax.plot(s, [v / 1e9 for v in p["measured"]], "o-", color=PALETTE["memory"],
                label="measured")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(s, [str(v) for v in s])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("stride (elements)")
        ax.set_ylabel("useful bandwidth (GB/s)")
        ax.set_title(name, fontsize=10.5)
        ax.legend()
    fig.suptitle(title, fontsize=12)
    plt.close(fig)
    return fig


def transpose_figure(panels: Mapping[str, Mapping[str, float]], reference_bytes_per_s:
                     Mapping[str, float], *, title: str):
    """Bars: each transpose's bandwidth over a reference bandwidth, one group per machine."""
    if not panels:
        raise ValueError("panels must hold at least one machine")
    fig, ax = new_figure(width_in=6.8, height_in=3.2)
    ops = []
    for p in panels.values():
        ops += [o for o in p if o not in ops]
    width = 0.8 / len(ops)
    colors = [PALETTE["host"], PALETTE["neutral"], PALETTE["compute"], PALETTE["memory"]]
    for j, op in enumerate(ops):
        xs, ys = [], []
        for i, (name, p) in enumerate(panels.items()):
            if op in p:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(p[op] / reference_bytes_per_s[name])
        ax.bar(xs, ys, width=width * 0.92, color=colors[j % len(colors)], label=op.replace("_", " "))
    ax.set_xticks(range(len(panels)), list(panels))
    ax.set_ylabel("bytes/s over the reference")
    ax.set_title(title)
    ax.legend(fontsize=8.5)
    plt.close(fig)
    return fig
