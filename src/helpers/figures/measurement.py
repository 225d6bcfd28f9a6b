"""Figures of the page "Performance measurement and benchmarking" ({ref}`sec-measurement`).

* :func:`opening_animation`: a host thread launches three kernels in a blink and stops its
  timer; the device is still working through them long after.
* :func:`structure_diagram`: what runs where (host, stream, device, events, clocks) and the
  stages of the one benchmark helper, from the correctness check to the decision.
* Plots (matplotlib, the book's style): :func:`three_ways_figure`, :func:`naive_loop_figure`,
  :func:`first_calls_figure`, :func:`resolution_figure`, :func:`distribution_figure`,
  :func:`ci_width_figure`, :func:`cache_figure`, :func:`comparison_figure`.

Every number drawn is computed from the arguments (measurements or model outputs); none is
typed here.

Used by: chapters/measurement.md, labs/timing.md.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .. import units
from ..models import measurement, stats
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, TEXT, Canvas, Figure

#: Muted text colour for matplotlib (plots are PNG on a white card; no CSS variables there).
MUTED_HEX = "#59636e"

__all__ = ["opening_animation", "structure_diagram", "three_ways_figure", "naive_loop_figure",
           "first_calls_figure", "resolution_figure", "distribution_figure", "ci_width_figure",
           "cache_figure", "comparison_figure"]


# --- SVG: opening animation ----------------------------------------------------------------

def opening_animation(*, launch_s: float = 5e-6, kernel_s: Sequence[float] = (40e-6, 25e-6,
                                                                               55e-6)) -> Figure:
    """Host launches vs device work, animated, with the two timers that disagree.

    A "now" line sweeps left to right. On the host lane each launch is a sliver of
    ``launch_s``; on the device lane each kernel (``kernel_s``) starts when the previous one
    ends. The host timer stops after the last launch; events bracket the device's work.
    Durations are schematic inputs, drawn to scale; the labels are computed from them.
    """
    kernel_s = [float(k) for k in kernel_s]
    if not kernel_s or min(kernel_s) <= 0 or not launch_s > 0:
        raise ValueError(f"launch_s and every kernel_s must be > 0, got {launch_s!r}, {kernel_s!r}")
    n = len(kernel_s)
    host_end = n * launch_s
    starts, t = [], launch_s  # the first kernel can start once its launch is done
    for i, k in enumerate(kernel_s):
        t = max(t, (i + 1) * launch_s)
        starts.append(t)
        t += k
    device_end = t
    total = device_end * 1.08
    x0, x1 = 150.0, 730.0

    def X(time_s: float) -> float:
        return x0 + (x1 - x0) * time_s / total

    host, dev, acc = PALETTE["host"], PALETTE["compute"], PALETTE["accent"]
    c = Canvas(760, 270, "A host timer around a launch stops long before the device finishes",
               uid="meas-open", description=(
                   f"Animated timeline. The host thread launches {n} kernels, each launch taking "
                   f"{units.fmt_time(launch_s)}; a timer around the launches reads "
                   f"{units.fmt_time(host_end)}. The device runs the kernels one after another "
                   f"and finishes after {units.fmt_time(device_end)}, which events recorded "
                   f"before and after the kernels measure."))
    dur = 7.0      # seconds per animation cycle
    sweep = 0.8    # fraction of the cycle the "now" line takes to cross
    lane_h = 46
    y_host, y_dev = 60, 150

    def kt(time_s: float) -> float:  # animation key time at which the sweep reaches time_s
        return round(sweep * time_s / total, 4)

    c.text(x0 - 12, y_host + lane_h / 2, "host (CPU)", anchor="end", size=13, weight="600")
    c.text(x0 - 12, y_dev + lane_h / 2, "device (GPU)", anchor="end", size=13, weight="600")
    for y in (y_host, y_dev):
        c.rect(x0, y, x1 - x0, lane_h, fill="none", stroke=MUTED, stroke_width=1, rx=4,
               dash="4 4")
    # Launches on the host lane, and the arrow each sends down to the stream.
    for i in range(n):
        a, b = i * launch_s, (i + 1) * launch_s
        w = max(X(b) - X(a), 3.0)
        grow = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(a), kt(b), 1], dur_s=dur)
        c.rect(X(a), y_host + 8, w, lane_h - 16, fill=host, stroke="none", rx=2, opacity=0,
               children=grow)
        a_kt, b_kt = kt(b), kt(b) + 0.06
        c.raw(f'<circle r="4" fill="{host}" opacity="0">'
              f'<animateMotion path="M{X(b):.1f},{y_host + lane_h} L{X(starts[i]):.1f},{y_dev}" '
              f'dur="{dur:g}s" keyPoints="0;0;1;1" keyTimes="0;{a_kt};{b_kt};1" '
              f'calcMode="linear" repeatCount="indefinite"/>'
              f'<animate attributeName="opacity" values="0;0;1;1;0;0" '
              f'keyTimes="0;{a_kt};{a_kt + 0.001:.4f};{b_kt};{b_kt + 0.001:.4f};1" dur="{dur:g}s" '
              f'repeatCount="indefinite"/></circle>')
    # Kernels on the device lane grow as the sweep passes them.
    for i, (s, k) in enumerate(zip(starts, kernel_s)):
        w = X(s + k) - X(s)
        grow = Canvas.animate("width", [0, 0, w, w], key_times=[0, kt(s), kt(s + k), 1],
                              dur_s=dur)
        c.rect(X(s), y_dev + 6, 0, lane_h - 12, fill=dev, stroke="none", rx=3, opacity=0.85,
               children=grow)
        show = Canvas.animate("opacity", [0, 0, 1, 1],
                              key_times=[0, kt(s + k), kt(s + k) + 0.01, 1], dur_s=dur)
        c.text(X(s) + w / 2, y_dev + lane_h / 2, f"kernel {i + 1}", size=12, fill="#ffffff",
               weight="600", children=show)
    # The host timer: starts at 0, stops after the last launch.
    stop = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(host_end),
                                                             kt(host_end) + 0.01, 1], dur_s=dur)
    c.mark_animated()
    c.raw(f'<g opacity="0">{stop}')
    c.line(X(0), y_host - 14, X(host_end), y_host - 14, stroke=acc, width=2.5, both=True)
    c.text(X(host_end) + 8, y_host - 14, f"host timer: {units.fmt_time(host_end)} "
                                         "(it measured the launches)", anchor="start", size=12.5,
           fill=acc, weight="600")
    c.raw("</g>")
    # The events: bracket the device's work once it is done.
    done = Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, kt(device_end),
                                                             kt(device_end) + 0.01, 1], dur_s=dur)
    c.raw(f'<g opacity="0">{done}')
    c.line(X(starts[0]), y_dev + lane_h + 16, X(device_end), y_dev + lane_h + 16,
           stroke=PALETTE["memory"], width=2.5, both=True)
    c.text((X(starts[0]) + X(device_end)) / 2, y_dev + lane_h + 34,
           f"events: {units.fmt_time(device_end - starts[0])} of device work", size=12.5,
           fill=PALETTE["memory"], weight="600")
    c.raw("</g>")
    # The "now" line.
    now = Canvas.animate("x1", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    now2 = Canvas.animate("x2", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    c.raw(f'<line x1="{x0}" y1="{y_host - 4}" x2="{x0}" y2="{y_dev + lane_h + 4}" '
          f'stroke="{MUTED}" stroke-width="1.5">{now}{now2}</line>')
    c.text(380, 258, "Click to pause. Launching only enqueues work; the device runs it later, "
                     "in order.", size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram ----------------------------------------------------------------

def structure_diagram() -> Figure:
    """Top: host, stream, device, events and the two clocks. Bottom: the benchmark pipeline."""
    c = Canvas(800, 360, "The parts of a measurement, and the stages of the benchmark helper",
               uid="meas-struct", description=(
                   "Diagram. Top row: the host thread runs Python and reads the host clock; it "
                   "enqueues kernels and events on a stream; the device executes the stream in "
                   "order and stamps the events with its own clock. Bottom row: the benchmark "
                   "helper checks the result against a reference, times the first call apart, "
                   "warms up by time, times repetitions (flushing the cache between them if "
                   "asked), summarizes them with the median, its confidence interval and the "
                   "outliers, records the environment, and supports one decision."))
    host, dev, mem, q, acc = (PALETTE["host"], PALETTE["compute"], PALETTE["memory"],
                              PALETTE["queue"], PALETTE["accent"])
    # Top row: what runs where.
    c.text(400, 20, "What runs where", size=14, weight="700")
    c.box(20, 40, 170, 70, "Host thread", sublabel="Python, launches", color=host)
    c.box(250, 40, 250, 70, "Stream (FIFO)", sublabel="kernels and events, in order", color=q)
    c.box(560, 40, 220, 70, "Device", sublabel="runs kernels, stamps events", color=dev)
    c.line(190, 75, 248, 75, stroke=MUTED, arrow=True)
    c.line(500, 75, 558, 75, stroke=MUTED, arrow=True)
    c.box(20, 130, 170, 46, "host clock", sublabel="perf_counter", color=host, size=12,
          fill_opacity=0.06)
    c.box(560, 130, 220, 46, "device clock", sublabel="CUDA events", color=mem, size=12,
          fill_opacity=0.06)
    c.line(105, 110, 105, 128, stroke=MUTED, dash="3 3")
    c.line(670, 110, 670, 128, stroke=MUTED, dash="3 3")
    c.text(375, 150, "synchronize(): the host waits for the stream to drain", size=12,
           fill=MUTED)
    c.path("M 500 100 C 440 130, 260 130, 190 100", stroke=MUTED, dash="4 3", arrow=True)
    # Bottom row: the pipeline of bench().
    c.text(400, 205, "What bench() does, in order", size=14, weight="700")
    stages = [("check", "vs reference", acc), ("first call", "timed apart", host),
              ("warm-up", "by time", q), ("repetitions", "events or clock", dev),
              ("statistics", "median, CI, MAD", mem), ("report", "+ environment", PALETTE["neutral"]),
              ("decision", "faster?", acc)]
    w, gap, x, y = 98, 9, 23, 228
    for i, (label, sub, color) in enumerate(stages):
        c.box(x, y, w, 58, label, sublabel=sub, color=color, size=12.5)
        if i < len(stages) - 1:
            c.line(x + w, y + 29, x + w + gap - 1, y + 29, stroke=MUTED, arrow=True)
        x += w + gap
    c.text(400, 312, "cache flush (optional): between repetitions, outside the timed region",
           size=12, fill=MUTED)
    c.text(400, 340, "Each stage has its own section on this page.", size=12, fill=TEXT)
    return c.figure()


# --- matplotlib plots ----------------------------------------------------------------------

def three_ways_figure(times_s: Mapping[str, float], kernel_s: float):
    """Bar chart (log scale) of the three ways of timing the same launches."""
    labels = {"host_no_sync_s": "host timer,\nno sync", "host_sync_s": "host timer\n+ sync",
              "events_s": "events"}
    missing = set(labels) - set(times_s)
    if missing:
        raise ValueError(f"times_s lacks {sorted(missing)}")
    if not kernel_s > 0:
        raise ValueError(f"kernel_s must be > 0, got {kernel_s!r}")
    fig, ax = new_figure(width_in=6.4, height_in=3.2)
    keys = list(labels)
    vals = [times_s[k] for k in keys]
    colors = [PALETTE["accent"], PALETTE["host"], PALETTE["memory"]]
    bars = ax.bar([labels[k] for k in keys], vals, color=colors)
    for bar, v in zip(bars, vals):
        ax.text(bar.get_x() + bar.get_width() / 2, v * 1.15, units.fmt_time(v), ha="center",
                va="bottom", fontsize=10)
    ax.axhline(kernel_s, color=MUTED_HEX, ls="--", lw=1.2)
    ax.text(-0.4, kernel_s * 1.25, f"work launched: {units.fmt_time(kernel_s)}", ha="left",
            va="bottom", fontsize=9.5, color=MUTED_HEX)
    ax.set_yscale("log")
    ax.set_ylim(min(vals) / 3, max(vals) * 6)
    ax.set_ylabel("measured time (s)")
    ax.set_title("The same launches, timed three ways")
    return _detached(fig)


def naive_loop_figure(times_s: Sequence[float], kernel_s: float, max_pending: int):
    """Host-timed launches in a loop without synchronization, on a bounded queue."""
    t = np.asarray(times_s, dtype=float)
    if t.ndim != 1 or t.size == 0 or np.any(t < 0):
        raise ValueError("times_s must be a non-empty sequence of non-negative times")
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    idx = np.arange(1, t.size + 1)
    ax.plot(idx, np.maximum(t, 1e-7), "o-", color=PALETTE["accent"], ms=4, lw=1.2)
    ax.axhline(kernel_s, color=PALETTE["compute"], ls="--", lw=1.2,
               label=f"kernel: {units.fmt_time(kernel_s)}")
    ax.axvline(max_pending + 1.5, color=MUTED_HEX, ls=":", lw=1.2,
               label=f"queue full ({max_pending} waiting)")
    ax.set_yscale("log")
    ax.set_xlabel("launch number")
    ax.set_ylabel("host-timed launch (s)")
    ax.set_title("A loop that forgot to synchronize: the queue decides what it measures")
    ax.legend(loc="center right")
    return _detached(fig)


def first_calls_figure(series: Mapping[str, Sequence[float]]):
    """Time of each of the first calls of several operations (log scale), call 1 highlighted."""
    if not series:
        raise ValueError("series must name at least one operation")
    fig, ax = new_figure(width_in=6.4, height_in=3.2)
    for name, vals in series.items():
        v = np.asarray(vals, dtype=float)
        if v.ndim != 1 or v.size < 2 or np.any(v <= 0):
            raise ValueError(f"series {name!r} needs at least 2 positive times")
        line, = ax.plot(np.arange(1, v.size + 1), v, "o-", ms=4, lw=1.4, label=name)
        ax.plot([1], [v[0]], "o", ms=9, mfc="none", mec=line.get_color(), mew=1.6)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("call number")
    ax.set_ylabel("time of the call (s)")
    ax.set_title("The first call is not like the others")
    ax.legend()
    return _detached(fig)


def resolution_figure(resolutions_s: Mapping[str, float], *, target: float = 0.01):
    r"""The quantization bound ``res / T`` against the timed interval ``T`` for each clock.

    Each line is :math:`\epsilon(T) = r / T` (``eq-meas-quantization``,
    :func:`helpers.models.measurement.timer_quantization_error`); the dotted line is the
    ``target`` relative error; where a line crosses it is the shortest interval worth timing.
    """
    if not resolutions_s or min(resolutions_s.values()) <= 0:
        raise ValueError("resolutions_s must map clock names to positive resolutions")
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target!r}")
    fig, ax = new_figure(width_in=6.4, height_in=3.2)
    lo = min(resolutions_s.values()) / 3
    hi = max(resolutions_s.values()) / target * 30
    T = np.logspace(np.log10(lo), np.log10(hi), 200)
    for name, r in resolutions_s.items():
        error = [measurement.timer_quantization_error(r, float(t)) for t in T]
        line, = ax.plot(T, error, label=f"{name}: r = {units.fmt_time(r)}")
        ax.plot([measurement.min_interval_s(r, target)], [target], "o", color=line.get_color())
    ax.axhline(target, color=MUTED_HEX, ls=":", lw=1.2)
    ax.text(hi, target * 1.15, f"{target:.0%} error", ha="right", va="bottom", fontsize=9.5,
            color=MUTED_HEX)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("timed interval T (s)")
    ax.set_ylabel("worst relative error r / T")
    ax.set_title("How long an interval must be for a clock to time it")
    ax.legend(loc="lower left")
    return _detached(fig)


def distribution_figure(samples_s: Sequence[float], *, confidence: float = 0.95,
                        title: str = "Repeated timings of one operation"):
    """Histogram of timings with the median, its CI, the mean, p99 and the MAD outliers."""
    x = stats.as_samples(samples_s, min_n=6)
    if np.any(x <= 0):
        raise ValueError("samples_s must be positive times")
    s = stats.summarize(x)
    ci = stats.median_ci(x, confidence)
    out = stats.mad_outliers(x)
    fig, ax = new_figure(width_in=6.8, height_in=3.4)
    scale, unit = _time_scale(s.median)
    xs = x * scale
    top = np.percentile(xs, 99.5)
    bins = np.linspace(xs.min(), max(top, xs.min() * 1.01), 60)
    ax.hist(np.clip(xs, None, bins[-1]), bins=bins, color=PALETTE["memory"], alpha=0.75)
    ax.axvspan(ci.low * scale, ci.high * scale, color=PALETTE["host"], alpha=0.25,
               label=f"{confidence:.0%} CI of the median")
    ax.axvline(s.median * scale, color=PALETTE["host"], lw=2, label="median")
    ax.axvline(s.mean * scale, color=PALETTE["compute"], lw=2, ls="--", label="mean")
    ax.axvline(s.p99 * scale, color=PALETTE["queue"], lw=1.5, ls=":", label="p99")
    if out.any():
        ax.plot(np.clip(xs[out], None, bins[-1]), np.zeros(int(out.sum())), "|",
                color=PALETTE["accent"], ms=14, mew=1.5, label=f"MAD outliers ({int(out.sum())})")
    ax.set_xlabel(f"time per call ({unit}); the last bin holds everything beyond p99.5")
    ax.set_ylabel("repetitions")
    ax.set_title(title)
    ax.legend(fontsize=9)
    return _detached(fig)


def _detached(fig):
    """Remove ``fig`` from pyplot's registry, so a notebook shows it once (as the cell's value
    or through ``glue``), not a second time when the inline backend flushes open figures."""
    plt.close(fig)
    return fig


def _time_scale(t: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")):
        if t * scale < 1000:
            return scale, unit
    return 1.0, "s"


def ci_width_figure(samples_s: Sequence[float], ns: Sequence[int], *, confidence: float = 0.95):
    """Relative half-width of the median's and the mean's CI on the first ``n`` samples."""
    x = stats.as_samples(samples_s, min_n=6)
    ns = [int(n) for n in ns if stats.min_samples_for_ci(50, confidence) <= n <= x.size]
    if len(ns) < 2:
        raise ValueError("need at least two sample sizes between 6 and len(samples_s)")
    med, mean = [], []
    for n in ns:
        sub = x[:n]
        m = stats.percentile(sub, 50)
        med.append(stats.median_ci(sub, confidence).width / 2 / m)
        mean.append(stats.mean_ci(sub, confidence).width / 2 / float(sub.mean()))
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    ax.plot(ns, np.array(med) * 100, "o-", color=PALETTE["host"], label="median (order statistics)")
    ax.plot(ns, np.array(mean) * 100, "s--", color=PALETTE["compute"], label="mean (Student t)")
    ref = med[0] * np.sqrt(ns[0] / np.asarray(ns)) * 100
    ax.plot(ns, ref, ":", color=MUTED_HEX, label=r"$\propto 1/\sqrt{n}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("repetitions n")
    ax.set_ylabel("CI half-width (% of estimate)")
    ax.set_title("More repetitions, narrower intervals")
    ax.legend()
    return _detached(fig)


def cache_figure(medians_s: Mapping[str, float], work_bytes: float):
    """Bars of the same read timed warm and after flushes of growing size, as bandwidth."""
    if not medians_s or min(medians_s.values()) <= 0:
        raise ValueError("medians_s must map labels to positive times")
    if not work_bytes > 0:
        raise ValueError(f"work_bytes must be > 0, got {work_bytes!r}")
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    names = list(medians_s)
    bw = [work_bytes / medians_s[k] / 1e9 for k in names]
    bars = ax.bar(names, bw, color=[PALETTE["compute"]] + [PALETTE["memory"]] * (len(names) - 1))
    for bar, v in zip(bars, bw):
        ax.text(bar.get_x() + bar.get_width() / 2, v, f"{v:.3g}", ha="center", va="bottom",
                fontsize=10)
    ax.set_ylabel("read bandwidth (GB/s)")
    ax.set_title(f"Summing {units.fmt_bytes(work_bytes)}: where do the bytes come from?")
    return _detached(fig)


def comparison_figure(baseline_s: Sequence[float], candidate_s: Sequence[float],
                      comparison: stats.Comparison, *, names: tuple[str, str] = ("baseline",
                                                                                "candidate")):
    """Left: both timing distributions. Right: the speedup's CI against the decision band."""
    a = stats.as_samples(baseline_s, min_n=2)
    b = stats.as_samples(candidate_s, min_n=2)
    fig, (ax1, ax2) = new_figure(1, 2, width_in=7.2, height_in=3.2,
                                 gridspec_kw={"width_ratios": [1.4, 1]})
    scale, unit = _time_scale(float(np.median(np.concatenate([a, b]))))
    parts = ax1.boxplot([a * scale, b * scale], orientation="horizontal", widths=0.5,
                        showfliers=True, patch_artist=True)
    ax1.set_yticks([1, 2], list(names))
    for patch, color in zip(parts["boxes"], (PALETTE["neutral"], PALETTE["host"])):
        patch.set_facecolor(color)
        patch.set_alpha(0.5)
    ax1.set_xlabel(f"time per call ({unit})")
    ax1.set_title("Timings")
    ci, d = comparison.ci, comparison.min_effect
    ax2.axvspan(1 / (1 + d), 1 + d, color=MUTED_HEX, alpha=0.15,
                label=f"within {d:.0%}: no difference that matters")
    ax2.axvline(1.0, color=MUTED_HEX, lw=1)
    ax2.errorbar([comparison.speedup], [0], xerr=[[comparison.speedup - ci.low],
                                                   [ci.high - comparison.speedup]],
                 fmt="o", color=PALETTE["accent"], capsize=6, lw=2,
                 label=f"speedup, {ci.confidence:.0%} CI")
    lo = min(ci.low, 1 / (1 + d)) * 0.97
    hi = max(ci.high, 1 + d) * 1.03
    ax2.set_xlim(lo, hi)
    ax2.set_yticks([])
    ax2.set_xlabel(f"speedup of {names[1]} over {names[0]}")
    ax2.set_title(f"Verdict: {comparison.verdict}")
    ax2.set_ylim(-1, 1.6)
    ax2.legend(loc="upper center", fontsize=8)
    return _detached(fig)
