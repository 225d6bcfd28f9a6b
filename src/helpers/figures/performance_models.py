"""Figures of the page "Performance models and metrics" ({ref}`sec-performance-models`).

* :func:`opening_animation`: one decode step of a language model: bytes stream from HBM into
  the compute units, which finish each chunk in a flash and wait for the next.
* :func:`structure_diagram`: the path of one chat request and the model that covers each part.
* Plots (matplotlib, the book's style): :func:`roofline_figure`, :func:`decode_rate_figure`,
  :func:`request_figure`, :func:`amdahl_figure`, :func:`queue_figure`,
  :func:`empirical_roofline_figure`.

Every number drawn is computed from the arguments (specs, model outputs, measurements); none
is typed here.

Used by: chapters/performance-models.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .. import specs, units
from ..models import amdahl, decode_bandwidth, queueing, roofline
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "roofline_figure", "decode_rate_figure",
           "request_figure", "amdahl_figure", "queue_figure", "empirical_roofline_figure"]


GREY = PALETTE["neutral"]


# --- SVG: opening animation --------------------------------------------------------------

def opening_animation(gpu: specs.GPUSpec = specs.H100_SXM, *, n_params: float = 8e9,
                      bytes_per_element: float = 2.0, precision: str = "bf16") -> Figure:
    """A decode step, animated: weights stream out of HBM; the SMs flash briefly and wait.

    The labels give the step's bytes, the HBM bandwidth, the time to stream the weights and
    the time the same step's arithmetic needs at the peak rate, all computed from ``gpu``.
    """
    w_bytes = decode_bandwidth.weight_bytes(n_params, bytes_per_element)
    t_mem = roofline.memory_time_s(w_bytes, gpu.hbm_bytes_per_s)
    t_comp = roofline.compute_time_s(2 * n_params, gpu.peak_flop_per_s(precision))
    c = Canvas(760, 290, "One decode step: bytes stream from HBM while arithmetic waits",
               uid="pm-open", description=(
                   f"Animated diagram. Weight bytes travel from the HBM of an {gpu.name} to its "
                   f"streaming multiprocessors along three lanes. Each multiprocessor lights up "
                   f"briefly when bytes arrive and is idle the rest of the time: streaming "
                   f"{units.fmt_bytes(w_bytes)} takes {units.fmt_time(t_mem)}, the arithmetic "
                   f"on them {units.fmt_time(t_comp)}."))
    dur = 3.0  # seconds of animation per cycle
    mem, comp = PALETTE["memory"], PALETTE["compute"]

    # HBM: a stack of weight blocks; a cursor sweeps down the stack once per cycle.
    c.box(20, 40, 170, 200, "", color=mem, fill_opacity=0.08)
    c.text(105, 28, f"HBM: {units.fmt_bytes(w_bytes)} of weights", size=13, weight="600")
    for row in range(8):
        for col in range(4):
            c.rect(34 + col * 38, 52 + row * 22, 32, 16, fill=mem, stroke="none", rx=3,
                   opacity=0.55)
    sweep = Canvas.animate("y", [50, 50 + 7 * 22], dur_s=dur, calc_mode="linear")
    c.rect(30, 50, 156, 20, fill="none", stroke=PALETTE["accent"], stroke_width=2.2, rx=4,
           children=sweep)

    # Lanes from HBM to the SMs, with bytes (dots) moving along them.
    lane_y = [95, 140, 185]
    for y in lane_y:
        c.line(190, y, 470, y, stroke=mem, width=2, opacity=0.35)
    c.text(330, 62, f"{units.fmt_rate(gpu.hbm_bytes_per_s, 'B/s')} (HBM bandwidth)", size=12.5,
          fill=MUTED)
    n_dots = 4
    for i, y in enumerate(lane_y):
        for j in range(n_dots):
            begin = (j + i / len(lane_y)) * dur / n_dots
            c.moving_dot(f"M192,{y} L468,{y}", dur_s=dur / 2, begin_s=begin, r=6, color=mem)

    # SMs: a grid of compute units that flash when a chunk arrives.
    c.box(470, 40, 200, 200, "", color=comp, fill_opacity=0.06)
    c.text(570, 28, f"SMs: {units.fmt_rate(gpu.peak_flop_per_s(precision), 'FLOP/s')} "
          f"({precision})", size=13, weight="600")
    for row in range(4):
        for col in range(4):
            x, y = 486 + col * 46, 56 + row * 44
            delay = ((row * 4 + col) % n_dots) * dur / n_dots / 2 + dur / 2 * 0.9
            flash = Canvas.animate("opacity", [0.15, 0.15, 0.95, 0.15, 0.15],
                                   key_times=[0, 0.55, 0.6, 0.7, 1], dur_s=dur / 2,
                                   begin_s=delay)
            c.rect(x, y, 36, 32, fill=comp, stroke="none", rx=4, opacity=0.15, children=flash)
    # Legend and the two times that decide the step.
    c.text(690, 95, "streaming", size=12, anchor="start", fill=MUTED)
    c.text(690, 113, units.fmt_time(t_mem), size=15, anchor="start", weight="700", fill=mem)
    c.text(690, 160, "arithmetic", size=12, anchor="start", fill=MUTED)
    c.text(690, 178, units.fmt_time(t_comp), size=15, anchor="start", weight="700", fill=comp)
    c.text(380, 270, "Click to pause. Each token of every sequence needs every weight once; "
          "the units spend most of the step waiting.", size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram --------------------------------------------------------------

def structure_diagram() -> Figure:
    """The stages of one chat request, left to right, and which model covers which part."""
    c = Canvas(780, 330, "A chat request's path and the four models of this page",
               uid="pm-struct", description=(
                   "Diagram. A request goes from the client over the network to the API server "
                   "(tokenization), waits in a queue, then runs on the GPU: prefill once, then a "
                   "decode loop that reads weights and KV cache from HBM into the SMs; tokens "
                   "stream back over the network. Little's law and the M/M/1 queue describe the "
                   "queue; the roofline bounds each GPU kernel; the decode-bandwidth model bounds "
                   "the decode loop; Amdahl's law combines the stages into the user's latency."))
    acc, mem, comp = PALETTE["accent"], PALETTE["memory"], PALETTE["compute"]
    y, h = 120, 64
    stages = [
        (20, 90, "Client", "prompt", PALETTE["host"]),
        (140, 100, "Network", "to server", PALETTE["network"]),
        (270, 105, "API server", "tokenize", PALETTE["host"]),
        (405, 95, "Queue", "wait", PALETTE["queue"]),
    ]
    for x, w, label, sub, color in stages:
        c.box(x, y, w, h, label, sublabel=sub, color=color)
    for (x1, w1, *_), (x2, *_rest) in zip(stages, stages[1:]):
        c.line(x1 + w1, y + h / 2, x2 - 2, y + h / 2, stroke=GREY, arrow=True)
    # GPU with its two parts.
    gx, gw = 530, 230
    c.rect(gx, 70, gw, 170, fill="none", stroke=comp, stroke_width=1.8, rx=8)
    c.text(gx + gw / 2, 86, "GPU: prefill, then decode loop", size=12.5, weight="600")
    c.box(gx + 12, 100, 84, 120, "HBM", sublabel="weights, KV", color=mem)
    c.box(gx + 134, 100, 84, 120, "SMs", sublabel="arithmetic", color=comp)
    c.line(gx + 98, 140, gx + 132, 140, stroke=mem, width=2.4, arrow=True)
    c.line(gx + 132, 180, gx + 98, 180, stroke=mem, width=1.4, arrow=True, dash="4 3")
    c.text(gx + 115, 128, "read", size=10.5, fill=MUTED)
    c.text(gx + 115, 194, "write", size=10.5, fill=MUTED)
    c.line(500, y + h / 2, gx - 2, y + h / 2, stroke=GREY, arrow=True)
    # Tokens back to the client.
    c.path(f"M{gx + gw / 2},240 L{gx + gw / 2},262 L65,262 L65,{y + h + 2}", stroke=GREY,
           arrow=True, dash="5 4")
    c.text(300, 275, "tokens stream back over the network", size=11.5, fill=MUTED)
    # Which model covers which part.
    c.path("M20,52 L20,44 L760,44 L760,52", stroke=acc, width=1.6)
    c.text(390, 30, "Amdahl's law: the user sees the sum of the stages", size=13, fill=acc,
           weight="600")
    c.text(452, 205, "Little's law", size=12, fill=acc, weight="600")
    c.text(452, 221, "M/M/1 queue", size=12, fill=acc, weight="600")
    c.text(gx + gw / 2, 296, "roofline: each kernel", size=12, fill=acc, weight="600")
    c.text(gx + gw / 2, 313, "decode bandwidth: HBM to SMs", size=12, fill=acc, weight="600")
    c.line(gx + gw / 2, 284, gx + gw / 2, 244, stroke=acc, width=1.2, dash="3 3")
    return c.figure()


# --- matplotlib plots --------------------------------------------------------------------

def _log_intensity_grid(lo: float = 1e-2, hi: float = 1e4) -> np.ndarray:
    return np.logspace(np.log10(lo), np.log10(hi), 400)


def roofline_figure(gpu: specs.GPUSpec, precision: str = "bf16", *,
                    kernels: Sequence[tuple[str, float]] = (), marker: float | None = None,
                    others: Sequence[specs.GPUSpec] = (), ax=None):
    """Attainable FLOP/s against arithmetic intensity for ``gpu`` (log-log), with kernels.

    ``kernels`` are (label, intensity) pairs placed on the roof; ``marker`` highlights one
    intensity (the explorer's); ``others`` draws further GPUs' roofs, thinner.
    """
    fig, ax = new_figure() if ax is None else (ax.figure, ax)
    grid = _log_intensity_grid()
    for other in others:
        if precision in other.dense_flop_per_s:
            ax.loglog(grid, roofline.attainable_flop_per_s(
                grid, other.peak_flop_per_s(precision), other.hbm_bytes_per_s) / units.T,
                lw=1.2, alpha=0.6, label=other.name)
    peak, bw = gpu.peak_flop_per_s(precision), gpu.hbm_bytes_per_s
    ridge = roofline.ridge_intensity_flop_per_byte(peak, bw)
    ax.loglog(grid, roofline.attainable_flop_per_s(grid, peak, bw) / units.T,
              color=COLORS["accent"], lw=2.4, label=f"{gpu.name}, {precision}")
    ax.axvline(ridge, color=COLORS["neutral"], lw=1, ls=":")
    ax.annotate(f"ridge {ridge:.3g} FLOP/B", (ridge, peak / units.T), xytext=(6, -16),
                textcoords="offset points", fontsize=9, color=COLORS["neutral"])
    for i, (label, intensity) in enumerate(kernels):
        rate = roofline.attainable_flop_per_s(intensity, peak, bw)
        color = COLORS["memory"] if intensity < ridge else COLORS["compute"]
        ax.plot([intensity], [rate / units.T], "o", color=color, ms=7, zorder=5)
        ax.annotate(label, (intensity, rate / units.T), xytext=(6, -12 if i % 2 else 6),
                    textcoords="offset points", fontsize=9)
    if marker is not None:
        rate = roofline.attainable_flop_per_s(marker, peak, bw)
        ax.plot([marker], [rate / units.T], "D", color=COLORS["accent"], ms=9, zorder=6)
        ax.axvline(marker, color=COLORS["accent"], lw=1, alpha=0.4)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable rate (TFLOP/s)")
    ax.set_xlim(grid[0], grid[-1])
    ax.legend(loc="lower right")
    return fig


def decode_rate_figure(gpus: Sequence[specs.GPUSpec], *, weight_bytes: float, n_params: float,
                       kv_bytes_per_sequence: float, precision: str = "bf16",
                       batches: Sequence[int] = tuple(2**k for k in range(0, 11)), ax=None):
    """Decode tokens/s against batch for each GPU: the HBM bound and the roofline estimate.

    A dotted line marks the batch at which the weights and the batch's KV caches fill HBM.
    """
    fig, ax = new_figure() if ax is None else (ax.figure, ax)
    b = np.asarray(batches)
    for gpu in gpus:
        bw, peak = gpu.hbm_bytes_per_s, gpu.peak_flop_per_s(precision)
        mem = [decode_bandwidth.decode_tokens_per_s_upper_bound(
            weight_bytes, kv_bytes_per_sequence, int(x), bw) for x in b]
        full = [decode_bandwidth.decode_tokens_per_s(
            weight_bytes, kv_bytes_per_sequence, int(x), bw, n_params, peak) for x in b]
        line, = ax.loglog(b, mem, lw=1.2, ls="--", alpha=0.8)
        ax.loglog(b, full, lw=2.2, color=line.get_color(), label=gpu.name)
        if kv_bytes_per_sequence > 0 and gpu.hbm_bytes > weight_bytes:
            fits = (gpu.hbm_bytes - weight_bytes) / kv_bytes_per_sequence
            if b[0] <= fits <= b[-1]:
                ax.axvline(fits, color=line.get_color(), lw=1, ls=":")
                ax.annotate(f"HBM full at {fits:.0f}", (fits, 0.0),
                            xycoords=("data", "axes fraction"),
                            xytext=(3, 4 + 14 * len(ax.texts)), textcoords="offset points",
                            fontsize=8.5, color=line.get_color())
    ax.set_xlabel("batch (sequences decoded together)")
    ax.set_ylabel("tokens/s, all sequences")
    ax.legend(title="solid: with compute roof; dashed: HBM only", loc="upper left")
    return fig


def request_figure(stage_times_s: Mapping[str, float], speedups: Mapping[str, float], *,
                   labels: tuple[str, str] = ("before", "after"), ax=None):
    """Two horizontal stacked bars: a request's stages before and after some speedups."""
    fig, ax = new_figure(height_in=2.7) if ax is None else (ax.figure, ax)
    palette = [COLORS["host"], COLORS["queue"], COLORS["compute"], COLORS["accent"],
               COLORS["network"], COLORS["memory"], COLORS["neutral"]]
    rows = [(labels[0], {k: 1.0 for k in stage_times_s}), (labels[1], dict(speedups))]
    for r, (label, s) in enumerate(rows):
        left = 0.0
        for i, (name, t) in enumerate(stage_times_s.items()):
            width = t / float(s.get(name, 1.0))
            ax.barh(r, width, left=left, color=palette[i % len(palette)],
                    label=name if r == 0 else None, edgecolor="white")
            left += width
        ax.text(left, r, f"  {units.fmt_time(left)}", va="center", fontsize=9.5)
    ax.set_yticks([0, 1], [row[0] for row in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (s)")
    total = sum(stage_times_s.values())
    ax.set_xlim(0, total * 1.18)
    ax.legend(ncols=len(stage_times_s), loc="upper center", bbox_to_anchor=(0.5, -0.32),
              fontsize=8.5)
    ax.grid(axis="y", visible=False)
    return fig


def amdahl_figure(fractions: Sequence[float], *, max_factor: float = 100.0,
                  highlight: tuple[float, float] | None = None, ax=None):
    """Whole-task speedup against the improved part's factor, one curve per fraction."""
    fig, ax = new_figure() if ax is None else (ax.figure, ax)
    s = np.logspace(0, np.log10(max_factor), 200)
    for f in fractions:
        line, = ax.semilogx(s, [amdahl.amdahl_speedup(f, x) for x in s], label=f"f = {f:.2g}")
        limit = amdahl.amdahl_limit(f)
        ax.axhline(limit, color=line.get_color(), lw=0.8, ls=":")
    if highlight is not None:
        f, factor = highlight
        ax.plot([factor], [amdahl.amdahl_speedup(f, factor)], "D", color=COLORS["accent"], ms=8)
    ax.set_xlabel("factor s by which the improved part gets faster")
    ax.set_ylabel("speedup of the whole")
    ax.legend(title="dotted: limit 1/(1-f)")
    return fig


def queue_figure(service_time_s: float, *, simulated: Sequence[tuple[float, float, float]] = (),
                 highlight: float | None = None, percentile: float = 99.0, rho_max: float = 0.97,
                 ax=None):
    """M/M/1 mean and p99 time in system against utilization, with simulated points.

    ``simulated`` holds (utilization, simulated mean, simulated percentile) triples, in
    seconds; ``highlight`` marks one utilization (the explorer's).
    """
    fig, ax = new_figure() if ax is None else (ax.figure, ax)
    mu = 1.0 / service_time_s
    rho = np.linspace(0.0, rho_max, 300)
    mean = [queueing.mm1_mean_time_in_system_s(r * mu, mu) for r in rho]
    tail = [queueing.mm1_time_in_system_percentile_s(percentile, r * mu, mu) for r in rho]
    to_ms = 1.0 / units.ms
    ax.plot(rho, np.asarray(mean) * to_ms, color=COLORS["memory"], label="mean (formula)")
    ax.plot(rho, np.asarray(tail) * to_ms, color=COLORS["compute"],
            label=f"p{percentile:g} (formula)")
    if simulated:
        r, m, p = (np.asarray(v) for v in zip(*simulated))
        ax.plot(r, m * to_ms, "o", color=COLORS["memory"], mfc="white", label="mean (simulated)")
        ax.plot(r, p * to_ms, "s", color=COLORS["compute"], mfc="white",
                label=f"p{percentile:g} (simulated)")
    if highlight is not None:
        ax.axvline(highlight, color=COLORS["accent"], lw=1.2, alpha=0.6)
    ax.axhline(service_time_s * to_ms, color=COLORS["neutral"], lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_xlabel("utilization ρ = λ / μ")
    ax.set_ylabel("time in system (ms)")
    ax.legend(loc="upper left")
    return fig


def empirical_roofline_figure(peak_flop_per_s: float, read_bytes_per_s: float,
                              copy_bytes_per_s: float,
                              points: Sequence[tuple[str, float, float]] = (), *,
                              machine: str = "this machine", ax=None):
    """A measured roofline: matmul peak, read and copy bandwidth roofs, and measured kernels.

    ``points`` are (label, intensity FLOP/byte, measured FLOP/s) triples.
    """
    fig, ax = new_figure() if ax is None else (ax.figure, ax)
    grid = _log_intensity_grid(1e-2, 1e3)
    g = units.G
    ax.loglog(grid, roofline.attainable_flop_per_s(grid, peak_flop_per_s, read_bytes_per_s) / g,
              color=COLORS["accent"], lw=2.4, label="roof from read bandwidth")
    ax.loglog(grid, roofline.attainable_flop_per_s(grid, peak_flop_per_s, copy_bytes_per_s) / g,
              color=COLORS["neutral"], lw=1.3, ls="--", label="roof from copy bandwidth")
    ridge = roofline.ridge_intensity_flop_per_byte(peak_flop_per_s, read_bytes_per_s)
    ax.axvline(ridge, color=COLORS["neutral"], lw=1, ls=":")
    for i, (label, intensity, rate) in enumerate(points):
        ax.plot([intensity], [rate / g], "o", color=COLORS["memory"] if intensity < ridge
                else COLORS["compute"], ms=7, zorder=5)
        ax.annotate(label, (intensity, rate / g), xytext=(6, 6 if i % 2 == 0 else -13),
                    textcoords="offset points", fontsize=8.5)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("rate (GFLOP/s)")
    ax.set_title(f"Empirical roofline of {machine}")
    # Below the axes: measured points can sit anywhere under the roofs, so a legend inside
    # the plot could cover one (it did, on a CPU whose matmul fell in the lower right).
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, frameon=False)
    return fig
