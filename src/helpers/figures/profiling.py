"""Figures of the page "GPU profiling and instruction analysis" ({ref}`sec-profiling`).

* :func:`opening_animation`: a host thread and a GPU, drawn as a timeline twice. Above, the
  host reads a result back after every step: it blocks, the GPU drains, and the GPU row has
  gaps while the host waits and launches again. Below, the same steps without the read-back:
  the gaps close and the run ends sooner.
* :func:`structure_diagram`: the levels of evidence, from symptom to instruction, with the
  question each answers and the tools that answer it.
* :func:`timeline_figure`: a parsed trace (:mod:`helpers.profiling.trace`) drawn as a
  timeline, host rows above device rows, idle gaps shaded and blocking calls highlighted.

Every number drawn is computed from the arguments; none is typed here.

Used by: chapters/profiling.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt

from .. import units
from ..models import _checks
from ..profiling import trace as tr
from .style import new_figure
from .svg import MUTED, PALETTE, TEXT, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "timeline_figure", "schedule"]

MUTED_HEX = "#59636e"


@dataclass(frozen=True)
class Schedule:
    """Host and device intervals of a simulated run: lists of (start_s, end_s, label)."""

    host: tuple[tuple[float, float, str], ...]
    device: tuple[tuple[float, float, str], ...]
    end_s: float


def schedule(*, n_steps: int, kernels_per_step: int, launch_s: float, kernel_s: float,
             python_s: float, sync_every_step: bool) -> Schedule:
    """Simulate one host thread launching into one stream (the toy behind the animation).

    Each step the host spends ``python_s`` in Python, then launches ``kernels_per_step`` kernels
    (``launch_s`` each); a kernel starts when its launch is done and the previous kernel has
    finished. With ``sync_every_step`` the host then blocks until the device is idle; without
    it, the host blocks once, after the last step.
    """
    n = _checks.positive_int("n_steps", n_steps)
    k = _checks.positive_int("kernels_per_step", kernels_per_step)
    L = _checks.positive("launch_s", launch_s)
    K = _checks.positive("kernel_s", kernel_s)
    P = _checks.positive("python_s", python_s, allow_zero=True)
    host, dev = [], []
    h = dev_end = 0.0
    for step in range(n):
        if P > 0:
            host.append((h, h + P, "python"))
            h += P
        for _ in range(k):
            host.append((h, h + L, "launch"))
            h += L
            start = max(h, dev_end)
            dev.append((start, start + K, "kernel"))
            dev_end = start + K
        if sync_every_step or step == n - 1:
            end = max(h, dev_end)
            if end > h:
                host.append((h, end, "sync"))
            h = end
    return Schedule(tuple(host), tuple(dev), max(h, dev_end))


def _gaps(device, min_s=0.0):
    out = []
    for (a0, a1, _), (b0, _b1, _l) in zip(device, device[1:]):
        if b0 - a1 > min_s:
            out.append((a1, b0))
    return out


# --- SVG: opening animation ----------------------------------------------------------------

def opening_animation(*, n_steps: int = 3, kernels_per_step: int = 4, launch_s: float = 3e-6,
                      kernel_s: float = 8e-6, python_s: float = 12e-6) -> Figure:
    """Two timelines of the same steps: with a host sync every step (gaps), and without."""
    flawed = schedule(n_steps=n_steps, kernels_per_step=kernels_per_step, launch_s=launch_s,
                      kernel_s=kernel_s, python_s=python_s, sync_every_step=True)
    fixed = schedule(n_steps=n_steps, kernels_per_step=kernels_per_step, launch_s=launch_s,
                     kernel_s=kernel_s, python_s=python_s, sync_every_step=False)
    idle = [sum(b - a for a, b in _gaps(s.device)) for s in (flawed, fixed)]
    total = flawed.end_s * 1.04
    x0, x1 = 130.0, 740.0

    def X(t: float) -> float:
        return x0 + (x1 - x0) * t / total

    c = Canvas(760, 330, "A host sync every step leaves the GPU idle; without it the gaps close",
               uid="prof-open", description=(
                   f"Animated timeline, drawn twice. Above: {n_steps} decode steps of "
                   f"{kernels_per_step} kernels each, with the host reading a result back after "
                   f"every step; the GPU row has gaps totalling {units.fmt_time(idle[0])} and the "
                   f"run takes {units.fmt_time(flawed.end_s)}. Below: the same steps without the "
                   f"read-back; the host launches ahead, the GPU gaps total "
                   f"{units.fmt_time(idle[1])}, and the run takes "
                   f"{units.fmt_time(fixed.end_s)}."))
    c.mark_animated()
    dur, sweep = 8.0, 0.8
    colors = {"python": PALETTE["neutral"], "launch": PALETTE["host"], "sync": PALETTE["accent"],
              "kernel": PALETTE["compute"]}

    def kt(t: float) -> float:
        return round(sweep * t / total, 4)

    def appear(t0: float, t1: float) -> str:
        a = kt(t0)
        b = max(kt(t1), a + 0.0001)
        return Canvas.animate("opacity", [0, 0, 1, 1], key_times=[0, a, b, 1], dur_s=dur)

    panels = [(flawed, 40, "with .item() every step", idle[0]),
              (fixed, 185, "without it", idle[1])]
    lane_h = 30
    for sched, y, title, idle_s in panels:
        c.text(x0, y, f"{title}: {units.fmt_time(sched.end_s)}, GPU idle "
                      f"{units.fmt_time(idle_s)}", anchor="start", size=13, weight="600")
        yh, yd = y + 14, y + 14 + lane_h + 10
        c.text(x0 - 10, yh + lane_h / 2, "host (CPU)", anchor="end", size=12)
        c.text(x0 - 10, yd + lane_h / 2, "GPU", anchor="end", size=12)
        for yy in (yh, yd):
            c.rect(x0, yy, x1 - x0, lane_h, fill="none", stroke=MUTED, stroke_width=1, rx=3,
                   dash="4 4")
        for a, b, label in sched.host:
            c.rect(X(a), yh + 4, max(X(b) - X(a), 1.5), lane_h - 8, fill=colors[label],
                   stroke="none", rx=1.5, opacity=0, children=appear(a, b))
        for a, b in _gaps(sched.device):
            c.rect(X(a), yd + 2, X(b) - X(a), lane_h - 4, fill=PALETTE["accent"], stroke="none",
                   rx=1, opacity=0, children=appear(a, b).replace('values="0;0;1;1"',
                                                                  'values="0;0;0.22;0.22"'))
        for a, b, _ in sched.device:
            c.rect(X(a), yd + 4, max(X(b) - X(a), 1.5), lane_h - 8, fill=colors["kernel"],
                   stroke="none", rx=1.5, opacity=0, children=appear(a, b))
    # legend
    lx = 140
    for label, name in (("python", "Python"), ("launch", "launch"), ("sync", "blocked in sync"),
                        ("kernel", "kernel")):
        c.rect(lx, 292, 14, 12, fill=colors[label], stroke="none", rx=2)
        c.text(lx + 20, 298, name, anchor="start", size=12)
        lx += 32 + 8 * len(name)
    c.rect(lx, 292, 14, 12, fill=PALETTE["accent"], stroke="none", rx=2, opacity=0.22)
    c.text(lx + 20, 298, "GPU idle", anchor="start", size=12)
    now = Canvas.animate("x1", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    now2 = Canvas.animate("x2", [x0, x1, x1], key_times=[0, sweep, 1], dur_s=dur)
    c.raw(f'<line x1="{x0}" y1="50" x2="{x0}" y2="{185 + 14 + 2 * lane_h + 14}" '
          f'stroke="{MUTED}" stroke-width="1.5">{now}{now2}</line>')
    c.text(380, 320, "Click to pause. Same kernels, same order: only the wait differs.",
           size=12, fill=MUTED)
    return c.figure()


# --- SVG: structure diagram ----------------------------------------------------------------

LEVELS = (
    ("symptom", "slow? how slow?", ("wall time per step", "nvidia-smi utilization")),
    ("timeline", "where is time lost?", ("torch.profiler", "Nsight Systems")),
    ("kernel", "which kernel? what bound?", ("Nsight Compute", "speed of light, roofline")),
    ("source", "which line?", ("Nsight Compute", "source view, -lineinfo")),
    ("instruction", "why does it stall?", ("SASS view", "warp stall reasons")),
)


def structure_diagram() -> Figure:
    """The levels of evidence, left to right, each with its question and its tools."""
    c = Canvas(820, 300, "Levels of profiling evidence, from symptom to instruction",
               uid="prof-struct", description=(
                   "Diagram. Five boxes left to right, each narrowing the last: symptom (is it "
                   "slow, by how much: wall time, utilization), timeline (where is time lost: "
                   "torch.profiler, Nsight Systems), kernel (which kernel and what limits it: "
                   "Nsight Compute), source (which line: the source view), instruction (why it "
                   "stalls: SASS and warp stall reasons). Below, a causal finding: symptom, "
                   "evidence, cause, predicted effect of the fix, then the measurement that "
                   "confirms it."))
    cols = [PALETTE["neutral"], PALETTE["host"], PALETTE["compute"], PALETTE["memory"],
            PALETTE["network"]]
    w, gap, x, y = 146, 16, 12, 40
    c.text(410, 18, "Narrow the question one level at a time", size=14, weight="700")
    for i, ((name, question, tools), color) in enumerate(zip(LEVELS, cols)):
        c.box(x, y, w, 64, name, sublabel=question, color=color, size=13.5)
        c.rect(x, y + 74, w, 62, fill="none", stroke=color, stroke_width=1, rx=4, dash="3 3")
        for j, tool in enumerate(tools):
            c.text(x + w / 2, y + 94 + 20 * j, tool, size=11.5, fill=TEXT)
        if i < len(LEVELS) - 1:
            c.line(x + w + 1, y + 32, x + w + gap - 1, y + 32, stroke=MUTED, arrow=True)
        x += w + gap
    c.text(410, 198, "tools at each level (dashed)", size=11.5, fill=MUTED)
    steps = [("symptom", PALETTE["neutral"]), ("evidence", PALETTE["host"]),
             ("cause", PALETTE["compute"]), ("predicted effect", PALETTE["memory"]),
             ("measure the fix", PALETTE["accent"])]
    w2, x = 140, 30
    c.text(410, 222, "A causal finding", size=13, weight="700")
    for i, (label, color) in enumerate(steps):
        c.box(x, 240, w2, 40, label, color=color, size=12.5)
        if i < len(steps) - 1:
            c.line(x + w2 + 1, 260, x + w2 + 19, 260, stroke=MUTED, arrow=True)
        x += w2 + 20
    return c.figure()


# --- matplotlib: a trace's timeline --------------------------------------------------------

def timeline_figure(trace: tr.Trace, *, start_s: float | None = None,
                    end_s: float | None = None, gap_threshold_s: float = 10e-6,
                    title: str = "Timeline of a profiled run"):
    """Draw ``trace`` as a timeline: one row per host thread, one per device stream.

    Host rows show the outermost CPU operators (blocking ones in the accent colour) and, below
    them, runtime calls; device rows show kernels and copies. Idle gaps longer than
    ``gap_threshold_s`` are shaded. ``start_s`` and ``end_s`` (trace times, as in
    :class:`~helpers.profiling.trace.Event`) zoom into a window; by default the whole profiled
    window from :attr:`~helpers.profiling.trace.Trace.start_s` is drawn, and the time axis
    counts from the window's start.
    """
    if not trace.events:
        raise ValueError("the trace has no events to draw")
    lo = (trace.start_s if start_s is None
          else _checks.positive("start_s", start_s, allow_zero=True))
    hi = (max(e.end_s for e in trace.events) if end_s is None
          else _checks.positive("end_s", end_s))
    if hi <= lo:
        raise ValueError(f"end_s must be > start_s, got {start_s!r}, {end_s!r}")
    scale, unit = _scale(hi - lo)
    rows: dict[str, list[tuple[float, float, str]]] = {}
    ops = trace.of("cpu_op")
    top_host = tr.work_events(tr.Trace(tuple(ops)))
    for e in top_host:
        colour = PALETTE["accent"] if tr.SYNC_PATTERN.search(e.name) else PALETTE["host"]
        rows.setdefault(f"host {e.tid}\nCPU ops", []).append((e.start_s, e.dur_s, colour))
    for e in trace.of("runtime"):
        colour = PALETTE["accent"] if tr.SYNC_PATTERN.search(e.name) else PALETTE["queue"]
        rows.setdefault(f"host {e.tid}\nCUDA API", []).append((e.start_s, e.dur_s, colour))
    for e in trace.of(*tr.DEVICE_KINDS):
        colour = PALETTE["compute"] if e.kind == "kernel" else PALETTE["memory"]
        rows.setdefault(f"GPU {e.pid}\nstream {e.tid}", []).append((e.start_s, e.dur_s, colour))
    names = list(rows)
    fig, ax = new_figure(width_in=7.2, height_in=0.7 + 0.55 * len(names))
    for i, name in enumerate(names):
        y = len(names) - 1 - i
        bars = [(a, d, col) for a, d, col in rows[name] if a + d >= lo and a <= hi]
        device_row = name.startswith("GPU")
        min_w = (hi - lo) * scale * 1.5e-3  # a sub-pixel kernel still shows as a thin line
        for col in sorted({b[2] for b in bars}):
            ax.broken_barh([((a - lo) * scale, max(d * scale, min_w)) for a, d, cc in bars
                            if cc == col], (y - 0.35, 0.7), facecolors=col,
                           edgecolors="none" if device_row else "white",
                           linewidth=0 if device_row else 0.4)
    for g in tr.idle_gaps(trace, gap_threshold_s):
        if g.end_s < lo or g.start_s > hi:
            continue
        ax.axvspan((g.start_s - lo) * scale, (g.end_s - lo) * scale, color=PALETTE["accent"],
                   alpha=0.15, lw=0)
    ax.set_yticks(range(len(names)), names[::-1], fontsize=8.5)
    ax.set_xlim(0, (hi - lo) * scale)
    ax.set_ylim(-0.6, len(names) - 0.4)
    into = lo - trace.start_s
    ax.set_xlabel(f"time ({unit})" + (f", from {units.fmt_time(into)} into the window"
                                      if into > 0 else ""))
    ax.grid(axis="y", visible=False)
    ax.set_title(title)
    plt.close(fig)
    return fig


def _scale(t: float) -> tuple[float, str]:
    for scale, unit in ((1e6, "µs"), (1e3, "ms")):
        if t * scale < 5000:
            return scale, unit
    return 1.0, "s"
