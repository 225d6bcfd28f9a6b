"""Figures of the page "GPU and accelerator architecture" ({ref}`sec-gpu-architecture`).

* :func:`opening_animation`: one SM at work: four warp schedulers each issue an instruction
  from a ready warp every clock, while warps waiting on memory sit out and bytes climb from
  HBM through L2 and shared memory to the registers.
* :func:`structure_diagram`: the hierarchy the page walks down: GPU -> SMs -> an SM's four
  partitions (warp scheduler, register file, FP32 lanes, tensor core) -> L1/shared memory ->
  L2 -> HBM, with each level's size taken from :mod:`helpers.specs`.
* Plots (matplotlib, the book's style): :func:`derived_vs_datasheet_figure`,
  :func:`memory_hierarchy_figure`.

Every number drawn is computed from the arguments (specs and :mod:`helpers.models.gpu_peaks`);
none is typed here.

Used by: chapters/gpu-architecture.md.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import specs, units
from ..models import gpu_peaks
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "derived_vs_datasheet_figure",
           "memory_hierarchy_figure", "hierarchy_levels", "Table", "spec_table"]

_UNPUBLISHED = "not published"


def _need(gpu: specs.GPUSpec, *names: str) -> None:
    missing = [n for n in names if getattr(gpu, n) in (None, {})]
    if missing:
        raise ValueError(f"{gpu.name} does not publish {missing}; pick a GPU whose "
                         "architecture fields are set (A100, H100 or H200)")


# --- SVG: opening animation --------------------------------------------------------------

def opening_animation(gpu: specs.GPUSpec = specs.H200_SXM, *, precision: str = "bf16") -> Figure:
    """One SM of ``gpu`` issuing warps, animated; bytes climb the memory hierarchy beside it.

    Each of the SM's warp schedulers holds a few warps. Every tick, each scheduler lights one
    ready warp and sends its instruction to a pipeline (FP32 lanes or the tensor core); warps
    drawn hollow are waiting for memory and are skipped. The labels give the SM count, the
    per-SM rate at ``precision`` and the per-SM share of HBM bandwidth, all from ``gpu``.
    """
    _need(gpu, "sm_count", "warp_schedulers_per_sm", "fp32_lanes_per_sm", "tensor_cores_per_sm",
          "tensor_fma_per_clock_per_sm")
    n_part = int(gpu.warp_schedulers_per_sm)
    clock = gpu_peaks.clock_for_precision_hz(gpu, precision)
    fma = gpu_peaks.fma_per_clock_per_sm(gpu, precision)
    flop_clk = gpu_peaks.FLOP_PER_FMA * fma
    b_clk = gpu_peaks.bytes_per_clock_per_sm(gpu.hbm_bytes_per_s, gpu.sm_count, clock)
    lanes = gpu.fp32_lanes_per_sm // n_part
    c = Canvas(780, 340, f"One SM of an {gpu.name}: warp schedulers issue while warps wait on memory",
               uid="arch-open", description=(
                   f"Animated diagram of one of the {gpu.sm_count} streaming multiprocessors of "
                   f"an {gpu.name}. Its {n_part} warp schedulers each pick one ready warp per "
                   f"clock and send its instruction to the FP32 lanes or the tensor core; warps "
                   f"waiting for data are skipped. On the left, bytes move from HBM through the "
                   f"L2 cache into shared memory. The SM can do {flop_clk:.0f} {precision} FLOP "
                   f"per clock but receives only {b_clk:.3g} bytes per clock of HBM bandwidth."))
    mem, comp, q, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["queue"], PALETTE["accent"]
    tick = 0.5  # seconds of animation per "clock"
    n_ticks = 8
    dur = tick * n_ticks

    # Memory hierarchy, bottom (HBM) to top (shared memory), on the left.
    levels = [(250, "HBM", units.fmt_bytes(gpu.hbm_bytes)),
              (150, "L2", units.fmt_bytes(gpu.l2_bytes, binary=True) if gpu.l2_bytes else "L2"),
              (50, "L1 / shared", units.fmt_bytes(gpu.l1_smem_bytes_per_sm, binary=True)
               + " per SM" if gpu.l1_smem_bytes_per_sm else "")]
    for y, label, sub in levels:
        c.box(20, y, 150, 60, label, sublabel=sub, color=mem)
    for j in range(3):
        c.moving_dot("M95,250 L95,210 L95,150 L95,110 L170,80 L214,80", dur_s=dur * 0.75,
                     begin_s=j * dur / 3, r=5, color=mem)
    c.line(95, 248, 95, 212, stroke=mem, width=1.5, opacity=0.5)
    c.line(95, 148, 95, 112, stroke=mem, width=1.5, opacity=0.5)
    c.text(95, 326, f"{units.fmt_rate(gpu.hbm_bytes_per_s, 'B/s')} shared by {gpu.sm_count} SMs",
           size=11.5, fill=MUTED)

    # The SM and its partitions.
    sx, sy, sw, sh = 215, 28, 545, 282
    c.rect(sx, sy, sw, sh, fill="none", stroke=comp, stroke_width=2, rx=10)
    c.text(sx + sw / 2, sy + 14, f"one SM of {gpu.sm_count}: {flop_clk:.0f} FLOP per clock "
           f"({precision}), {b_clk:.3g} bytes per clock from HBM", size=12.5, weight="600")
    pw, gap = (sw - 20 - (n_part - 1) * 10) / n_part, 10
    n_warps = 6
    waiting = {(p, w) for p in range(n_part) for w in range(n_warps) if (3 * p + 2 * w) % 5 == 0}
    for p in range(n_part):
        px = sx + 10 + p * (pw + gap)
        py = sy + 32
        c.rect(px, py, pw, sh - 44, fill=q, stroke="none", opacity=0.05, rx=6)
        c.box(px + 6, py + 4, pw - 12, 30, "warp scheduler", color=q, size=11)
        # Warps: small bars; hollow ones wait on memory.
        ready = [w for w in range(n_warps) if (p, w) not in waiting]
        for w in range(n_warps):
            wy = py + 42 + w * 17
            if (p, w) in waiting:
                c.rect(px + 10, wy, pw - 20, 12, fill="none", stroke=mem, stroke_width=1.2,
                       rx=3, dash="3 2")
            else:
                c.rect(px + 10, wy, pw - 20, 12, fill=q, stroke="none", rx=3, opacity=0.35)
        c.text(px + pw / 2, py + 42 + n_warps * 17 + 6, "warps (32 threads each)", size=9.5,
               fill=MUTED)
        # The highlight steps through the ready warps, one per tick.
        order = [ready[(k + p) % len(ready)] for k in range(n_ticks)]
        ys = [py + 41 + w * 17 for w in order] + [py + 41 + order[0] * 17]
        hop = Canvas.animate("y", ys, dur_s=dur, calc_mode="discrete",
                             key_times=[k / n_ticks for k in range(n_ticks)] + [1])
        c.rect(px + 8, ys[0], pw - 16, 14, fill="none", stroke=acc, stroke_width=2.2, rx=3,
               children=hop)
        # Pipelines at the bottom.
        base = sy + sh - 62
        c.box(px + 6, base, pw / 2 - 9, 44, f"{lanes} FP32", sublabel="lanes", color=comp,
              size=10.5)
        c.box(px + pw / 2 + 3, base, pw / 2 - 9, 44, "tensor", sublabel="core", color=comp,
              size=10.5)
        for k in range(n_ticks):
            target = px + (pw / 4 if (k + p) % 3 else 3 * pw / 4)
            _issue_dot(c, f"M{px + pw / 2:.1f},{py + 34} L{target:.1f},{base}", period_s=dur,
                       begin_s=k * tick, share=1 / n_ticks, color=acc)
    return c.figure()


def _issue_dot(c: Canvas, path_d: str, *, period_s: float, begin_s: float, share: float,
               color: str) -> None:
    """A dot that runs along ``path_d`` during the first ``share`` of every ``period_s``,
    starting at ``begin_s``, and is invisible the rest of the period."""
    c.mark_animated()
    kt = f"0;{share:.4f};1"
    c.raw(f'<circle r="4" fill="{color}" opacity="0">'
          f'<animateMotion path="{path_d}" dur="{period_s:g}s" begin="{begin_s:g}s" '
          f'repeatCount="indefinite" keyPoints="0;1;1" keyTimes="{kt}" calcMode="linear"/>'
          f'<animate attributeName="opacity" values="1;1;0;0" '
          f'keyTimes="0;{share:.4f};{share:.4f};1" dur="{period_s:g}s" begin="{begin_s:g}s" '
          f'repeatCount="indefinite"/></circle>')


# --- SVG: structure diagram --------------------------------------------------------------

def structure_diagram(gpu: specs.GPUSpec = specs.H200_SXM) -> Figure:
    """GPU -> SMs -> one SM's partitions -> L1/shared -> L2 -> HBM, sized from ``gpu``."""
    _need(gpu, "sm_count", "warp_schedulers_per_sm", "fp32_lanes_per_sm", "fp64_lanes_per_sm",
          "tensor_cores_per_sm", "register_file_bytes_per_sm", "l1_smem_bytes_per_sm", "l2_bytes")
    n_part = int(gpu.warp_schedulers_per_sm)
    c = Canvas(800, 400, f"The parts of an {gpu.name}, from the whole GPU down to one SM partition",
               uid="arch-struct", description=(
                   f"Diagram. Left: the GPU as a grid of {gpu.sm_count} SMs sharing an L2 cache "
                   f"of {units.fmt_bytes(gpu.l2_bytes, binary=True)} and "
                   f"{units.fmt_bytes(gpu.hbm_bytes)} of HBM. Right: one SM enlarged, with "
                   f"{n_part} partitions, each a warp scheduler, a register file and its own "
                   f"FP32 lanes, FP64 lanes and tensor core, above an L1 data cache and shared "
                   f"memory of {units.fmt_bytes(gpu.l1_smem_bytes_per_sm, binary=True)}."))
    mem, comp, q, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["queue"], PALETTE["accent"]
    # Left: the GPU, its SMs drawn one square each.
    gx, gy, gw = 20, 40, 300
    c.text(gx + gw / 2, 22, f"GPU: {gpu.sm_count} SMs", size=14, weight="600")
    cols = 14
    rows = -(-gpu.sm_count // cols)
    cell = (gw - 20) / cols
    for i in range(gpu.sm_count):
        r, k = divmod(i, cols)
        highlight = i == cols - 1
        c.rect(gx + 10 + k * cell, gy + 10 + r * cell, cell - 3, cell - 3,
               fill=acc if highlight else comp, stroke="none", rx=2,
               opacity=0.9 if highlight else 0.45)
    sm_bottom = gy + 10 + rows * cell
    c.box(gx, sm_bottom + 14, gw, 42, f"L2 cache: {units.fmt_bytes(gpu.l2_bytes, binary=True)}",
          sublabel="shared by every SM", color=mem, size=12)
    c.box(gx, sm_bottom + 72, gw, 42,
          f"HBM: {units.fmt_bytes(gpu.hbm_bytes)}, {units.fmt_rate(gpu.hbm_bytes_per_s, 'B/s')}",
          sublabel="off-chip, stacked beside the GPU", color=mem, size=12)
    c.line(gx + gw / 2, sm_bottom + 70, gx + gw / 2, sm_bottom + 58, stroke=mem, both=True)
    c.line(gx + gw / 2, sm_bottom + 12, gx + gw / 2, sm_bottom + 2, stroke=mem, both=True)
    # Zoom lines from the highlighted SM to the enlarged one.
    sx, sy, sw, sh = 360, 40, 420, 330
    hx = gx + 10 + cols * cell - 3  # right edge of the highlighted SM (top-right square)
    c.line(hx, gy + 10, sx, sy, stroke=acc, width=1, dash="4 3")
    c.line(hx, gy + 10 + cell - 3, sx, sy + sh, stroke=acc, width=1, dash="4 3")
    c.rect(sx, sy, sw, sh, fill="none", stroke=acc, stroke_width=2, rx=10)
    c.text(sx + sw / 2, 22, "one SM (streaming multiprocessor)", size=14, weight="600")
    pw = (sw - 20 - (n_part - 1) * 8) / n_part
    regs = gpu.register_file_bytes_per_sm / n_part
    for p in range(n_part):
        px = sx + 10 + p * (pw + 8)
        c.rect(px, sy + 10, pw, 230, fill=q, stroke="none", opacity=0.05, rx=6)
        c.box(px + 4, sy + 16, pw - 8, 40, "warp", sublabel="scheduler", color=q, size=11)
        c.box(px + 4, sy + 62, pw - 8, 40, "registers",
              sublabel=units.fmt_bytes(regs, binary=True), color=mem, size=11)
        c.box(px + 4, sy + 108, pw - 8, 40, f"{gpu.fp32_lanes_per_sm // n_part} FP32",
              sublabel="lanes", color=comp, size=11)
        c.box(px + 4, sy + 154, pw - 8, 36, f"{gpu.fp64_lanes_per_sm // n_part} FP64",
              sublabel="lanes", color=comp, size=10.5)
        c.box(px + 4, sy + 196, pw - 8, 38,
              f"{gpu.tensor_cores_per_sm // n_part} tensor core", color=comp, size=10.5)
    c.text(sx + sw / 2, sy + 256, f"{n_part} partitions, one warp instruction issued per "
           "partition per clock", size=11, fill=MUTED)
    c.box(sx + 10, sy + 270, sw - 20, 48,
          f"L1 data cache + shared memory: {units.fmt_bytes(gpu.l1_smem_bytes_per_sm, binary=True)}",
          sublabel=(f"up to {units.fmt_bytes(gpu.max_smem_bytes_per_sm, binary=True)} as shared "
                    "memory" if gpu.max_smem_bytes_per_sm else None), color=mem, size=12)
    return c.figure()


# --- data for the hierarchy table and plot ------------------------------------------------

def hierarchy_levels(gpu: specs.GPUSpec) -> list[dict]:
    """The memory levels of ``gpu``: name, capacity per SM and per GPU (bytes), bandwidth
    (bytes/s, ``None`` where NVIDIA publishes none)."""
    _need(gpu, "sm_count", "register_file_bytes_per_sm", "l1_smem_bytes_per_sm", "l2_bytes",
          "smem_bytes_per_clock_per_sm", "boost_clock_hz")
    n = gpu.sm_count
    smem_bw = gpu_peaks.smem_bytes_per_s(n, gpu.smem_bytes_per_clock_per_sm, gpu.boost_clock_hz)
    return [
        dict(name="registers", per_sm=gpu.register_file_bytes_per_sm,
             total=gpu_peaks.per_gpu(gpu.register_file_bytes_per_sm, n), bytes_per_s=None),
        dict(name="L1 / shared memory", per_sm=gpu.l1_smem_bytes_per_sm,
             total=gpu_peaks.per_gpu(gpu.l1_smem_bytes_per_sm, n), bytes_per_s=smem_bw),
        dict(name="L2 cache", per_sm=None, total=gpu.l2_bytes, bytes_per_s=None),
        dict(name="HBM", per_sm=None, total=gpu.hbm_bytes, bytes_per_s=gpu.hbm_bytes_per_s),
    ]


# --- the spec table ------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    """A small table that renders as HTML in the book and as aligned text elsewhere."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self.rows)
        cap = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        return (f'<table class="table book-table">{cap}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    def __repr__(self) -> str:
        widths = [max(len(r[i]) for r in (self.header, *self.rows)) for i in range(len(self.header))]
        lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in (self.header, *self.rows)]
        return "\n".join(lines)


def _fmt(value, fmt) -> str:
    return _UNPUBLISHED if value in (None, {}) else fmt(value)


def spec_table(gpus: Sequence[specs.GPUSpec] = specs.GPUS, *, precision: str = "bf16") -> Table:
    """The architecture numbers of ``gpus``, one column per GPU, from :mod:`helpers.specs`;
    the last two rows are the datasheet's dense ``precision`` peak and eq-peak-flops' value."""
    def derived(g):
        try:
            return units.fmt_rate(gpu_peaks.derived_peak_flop_per_s(g, precision), "FLOP/s")
        except ValueError:
            return "cannot derive"

    def mhz(x):
        return f"{x / units.M:.0f} MHz"

    rows = [
        ("architecture", lambda g: g.architecture),
        ("compute capability", lambda g: _fmt(g.compute_capability, lambda c: f"{c[0]}.{c[1]}")),
        ("SMs", lambda g: _fmt(g.sm_count, str)),
        ("boost clock, FP32/FP64", lambda g: _fmt(g.boost_clock_hz, mhz)),
        (f"boost clock, {precision} tensor", lambda g: _fmt(g.tensor_boost_clock_hz, mhz)),
        ("FP32 lanes per SM", lambda g: _fmt(g.fp32_lanes_per_sm, str)),
        ("tensor cores per SM", lambda g: _fmt(g.tensor_cores_per_sm, str)),
        (f"dense {precision} FMA per clock per SM",
         lambda g: _fmt(g.tensor_fma_per_clock_per_sm.get(precision), lambda v: f"{v:.0f}")),
        ("register file per SM", lambda g: _fmt(g.register_file_bytes_per_sm,
                                                lambda v: units.fmt_bytes(v, binary=True))),
        ("L1 + shared memory per SM", lambda g: _fmt(g.l1_smem_bytes_per_sm,
                                                     lambda v: units.fmt_bytes(v, binary=True))),
        ("L2 cache", lambda g: _fmt(g.l2_bytes, lambda v: units.fmt_bytes(v, binary=True))),
        ("HBM capacity", lambda g: units.fmt_bytes(g.hbm_bytes)),
        ("HBM bus width", lambda g: _fmt(g.hbm_bus_width_bits, lambda v: f"{v} bits")),
        ("HBM bandwidth", lambda g: units.fmt_rate(g.hbm_bytes_per_s, "B/s")),
        (f"dense {precision} peak, datasheet",
         lambda g: units.fmt_rate(g.peak_flop_per_s(precision), "FLOP/s")),
        (f"dense {precision} peak, derived", derived),
    ]
    return Table(header=("", *(g.name for g in gpus)),
                 rows=tuple((label, *(get(g) for g in gpus)) for label, get in rows),
                 caption="Architecture numbers from NVIDIA's whitepapers and datasheets "
                         "(helpers.specs); capacities on chip in binary units.")


# --- matplotlib plots --------------------------------------------------------------------

def derived_vs_datasheet_figure(gpus: Sequence[specs.GPUSpec], *, ax=None):
    """Each published dense peak (x) against the one derived from unit counts and clocks (y),
    log-log; the points lie on the diagonal when the derivation is right."""
    fig, ax = new_figure(height_in=4.0, width_in=6.2) if ax is None else (ax.figure, ax)
    markers = "osD^v"
    lo, hi = np.inf, 0.0
    for i, gpu in enumerate(gpus):
        xs, ys, labels = [], [], []
        for precision, printed in gpu.dense_flop_per_s.items():
            try:
                derived = gpu_peaks.derived_peak_flop_per_s(gpu, precision)
            except ValueError:
                continue
            xs.append(printed / units.T)
            ys.append(derived / units.T)
            labels.append(precision)
        if not xs:
            continue
        ax.loglog(xs, ys, markers[i % len(markers)], ms=8, mfc="none", mew=1.8, label=gpu.name)
        if i == 0:  # label the first GPU's points, one label per distinct peak
            by_point: dict[tuple[float, float], list[str]] = {}
            for x, y, lab in zip(xs, ys, labels):
                by_point.setdefault((x, y), []).append(lab)
            for (x, y), labs in by_point.items():
                ax.annotate(", ".join(labs), (x, y), xytext=(7, -12), textcoords="offset points",
                            fontsize=8.5)
        lo, hi = min(lo, *xs), max(hi, *xs)
    grid = np.array([lo / 1.5, hi * 1.5])
    ax.loglog(grid, grid, color=COLORS["neutral"], lw=1, ls=":", label="derived = datasheet")
    ax.set_xlabel("datasheet dense peak (TFLOP/s)")
    ax.set_ylabel("derived 2 n u f (TFLOP/s)")
    ax.legend(loc="upper left")
    return fig


def memory_hierarchy_figure(gpu: specs.GPUSpec, *, ax=None):
    """Capacity of each memory level of ``gpu`` (log scale), labelled with its bandwidth where
    published or derived."""
    fig, ax = new_figure(height_in=3.0) if ax is None else (ax.figure, ax)
    levels = hierarchy_levels(gpu)
    names = [lv["name"] for lv in levels]
    caps = [lv["total"] for lv in levels]
    colors = [COLORS["compute"], COLORS["queue"], COLORS["network"], COLORS["memory"]]
    ax.barh(range(len(levels)), caps, color=colors, alpha=0.8)
    for k, lv in enumerate(levels):
        bw = lv["bytes_per_s"]
        note = units.fmt_rate(bw, "B/s") if bw else "bandwidth not published"
        size = units.fmt_bytes(lv["total"], binary=lv["name"] != "HBM")  # on chip: binary units
        ax.text(lv["total"] * 1.15, k, f"{size}  ({note})", va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_yticks(range(len(levels)), names)
    ax.invert_yaxis()
    ax.set_xlim(min(caps) / 3, max(caps) * 300)
    ax.set_xlabel(f"capacity on the whole {gpu.name} (bytes)")
    ax.grid(axis="y", visible=False)
    return fig
