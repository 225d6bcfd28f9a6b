"""Figures of the page "Containers, namespaces and cgroups" ({ref}`sec-containers-and-cgroups`).

* :func:`opening_animation`: eight threads on eight CPUs spend a quota of four CPUs in half of
  each period and stand throttled for the other half.
* :func:`structure_diagram`: one kernel; a container's process, what its namespaces let it
  see and what its cgroup lets it use; the two calls that look past both.
* :func:`throttle_schedule` and :func:`throttle_timeline_figure` (matplotlib): CPUs in use
  over time under a quota, from the model :func:`helpers.models.cgroups.throttled_wall_s`.
* :func:`pool_figure` (matplotlib): measured wall time of a thread pool against its size,
  with the model.

Every number drawn comes from the arguments.

Used by: foundations/containers-and-cgroups.md.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import units
from ..models import cgroups as cgm
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "throttle_schedule",
           "throttle_timeline_figure", "pool_figure"]


def opening_animation() -> Figure:
    """Eight threads, a quota of four CPUs: run half a period, throttled the other half."""
    c = Canvas(760, 300, "A quota of four CPUs spent by eight threads in half a period",
               uid="cgr-open", description=(
                   "Animated timeline. Eight rows, one per CPU, each running one thread of a "
                   "container whose cgroup grants four CPUs' worth of time per period. Three "
                   "periods pass from left to right. In each period all eight threads run for "
                   "the first half, which spends the quota, then all eight stand throttled "
                   "(grey) until the next period begins. The work that four CPUs could do "
                   "evenly is done in bursts, and every request waits out the grey half."))
    host, acc = PALETTE["host"], PALETTE["accent"]
    x0, per_w, lanes, lane_h, y0 = 130, 200, 8, 20, 56
    n_per = 3
    dur = 7.5
    c.text(380, 22, "8 threads, quota = 4 CPUs per period: run, then wait", size=14,
           weight="600")
    for i in range(lanes):
        c.text(x0 - 10, y0 + i * lane_h + lane_h / 2, f"CPU {i}", size=11, anchor="end",
               fill=MUTED)
    frac = 1.0 / n_per
    for k in range(n_per):
        xs = x0 + k * per_w
        c.line(xs, y0 - 8, xs, y0 + lanes * lane_h + 4, dash="4 3")
        c.text(xs + per_w / 2, y0 + lanes * lane_h + 20, f"period {k + 1}", size=11.5,
               fill=MUTED)
        t_a, t_b, t_c = k * frac, (k + 0.5) * frac, (k + 1) * frac
        for i in range(lanes):
            y = y0 + i * lane_h + 3
            run = Canvas.animate("width", [0, 0, per_w / 2, per_w / 2, 0], dur_s=dur,
                                 key_times=[0, t_a, t_b, 0.999, 1])
            c.rect(xs, y, 0, lane_h - 6, fill=host, stroke="none", rx=2, opacity=0.85,
                   children=run)
            wait = Canvas.animate("width", [0, 0, per_w / 2, per_w / 2, 0], dur_s=dur,
                                  key_times=[0, t_b, t_c, 0.999, 1])
            c.rect(xs + per_w / 2, y, 0, lane_h - 6, fill=PALETTE["neutral"], stroke="none",
                   rx=2, opacity=0.35, children=wait)
    xe = x0 + n_per * per_w
    c.line(xe, y0 - 8, xe, y0 + lanes * lane_h + 4, dash="4 3")
    sweep = (Canvas.animate("x1", [x0, xe, xe], dur_s=dur, key_times=[0, 0.999, 1])
             + Canvas.animate("x2", [x0, xe, xe], dur_s=dur, key_times=[0, 0.999, 1]))
    c.raw(f'<line x1="{x0}" y1="{y0 - 10}" x2="{x0}" y2="{y0 + lanes * lane_h + 6}" '
          f'stroke="{acc}" stroke-width="2">{sweep}</line>')
    c.mark_animated()
    ly = y0 + lanes * lane_h + 44
    c.rect(170, ly - 7, 18, 12, fill=host, stroke="none", rx=2, opacity=0.85)
    c.text(194, ly, "running: the quota is being spent", size=12, anchor="start")
    c.rect(430, ly - 7, 18, 12, fill=PALETTE["neutral"], stroke="none", rx=2, opacity=0.35)
    c.text(454, ly, "throttled: quota spent, wait", size=12, anchor="start")
    c.text(380, ly + 24, "Click to pause.", size=11.5, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """One kernel, one container: namespaces decide what it sees, cgroups what it uses."""
    c = Canvas(780, 360, "A container is a process with namespaces and a cgroup",
               uid="cgr-struct", description=(
                   "Diagram. At the bottom, one Linux kernel shared by every container on the "
                   "host. Above it, a container: an inference server process with its threads. "
                   "On the left, its namespaces (pid, net, mnt, uts, ipc, user, cgroup), which "
                   "decide what it can see. On the right, its cgroup's controllers (cpu with "
                   "cpu.max, cpuset, memory with memory.max, pids, io), which decide how much "
                   "it can use. A dashed arrow shows that os.cpu_count() and /proc/meminfo "
                   "report the host's CPUs and memory, looking past the cgroup."))
    host, mem, net, q, acc = (PALETTE["host"], PALETTE["memory"], PALETTE["network"],
                              PALETTE["queue"], PALETTE["accent"])
    c.box(20, 290, 740, 50, "Linux kernel", sublabel="one per host, shared by every container",
          color=PALETTE["neutral"], size=13, fill_opacity=0.12)
    c.rect(250, 40, 280, 220, fill="none", stroke=host, stroke_width=1.6, rx=10, dash="6 4")
    c.text(390, 56, "container", size=12.5, fill=MUTED)
    c.box(280, 72, 220, 60, "inference server", sublabel="one process", color=host, size=13)
    for k in range(4):
        c.box(290 + k * 52, 150, 46, 30, f"T{k}", color=host, size=11, fill_opacity=0.22)
    c.text(390, 200, "threads sized by os.cpu_count()?", size=11.5, fill=MUTED)
    # namespaces
    c.text(120, 40, "namespaces: what it sees", size=12.5, weight="600")
    for i, name in enumerate(("pid", "net", "mnt", "uts", "ipc", "user", "cgroup")):
        c.box(30 + (i % 2) * 100, 56 + (i // 2) * 44, 90, 34, name, color=net, size=12)
    c.line(222, 140, 276, 110, stroke=net, arrow=True)
    # cgroups
    c.text(660, 40, "cgroup: what it uses", size=12.5, weight="600")
    for i, (name, sub) in enumerate((("cpu", "cpu.max"), ("cpuset", "cpuset.cpus"),
                                     ("memory", "memory.max"), ("pids", "pids.max"),
                                     ("io", "io.max"))):
        c.box(580, 52 + i * 44, 170, 38, name, sublabel=sub, color=q, size=11.5)
    c.line(578, 140, 504, 110, stroke=q, arrow=True)
    c.path("M 300 232 C 300 262, 250 270, 225 288", stroke=acc, dash="5 4", arrow=True)
    c.text(115, 250, "os.cpu_count(), /proc/meminfo:", size=11, fill=acc, anchor="middle")
    c.text(115, 264, "the host's numbers", size=11, fill=acc, anchor="middle")
    return c.figure()


def throttle_schedule(*, cpu_work_s: float, threads: int, cores: int, quota_s: float,
                      period_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Step function of CPUs in use over time under the quota: (times_s, cpus), where
    ``cpus[i]`` holds from ``times_s[i]`` to ``times_s[i + 1]``. It ends when the work is
    done, at :func:`~helpers.models.cgroups.throttled_wall_s`."""
    total = cgm.throttled_wall_s(cpu_work_s=cpu_work_s, n_threads=threads, n_cores=cores,
                                 quota_s=quota_s, period_s=period_s)
    p = min(int(threads), int(cores))
    if quota_s == math.inf or p * period_s <= quota_s:
        return np.array([0.0, total]), np.array([float(p), 0.0])
    times, cpus = [], []
    t, left = 0.0, float(cpu_work_s)
    while left > 1e-15 * cpu_work_s:
        run = min(quota_s, left) / p
        times += [t, t + run]
        cpus += [float(p), 0.0]
        left -= run * p
        t += period_s
    # Drop the last (empty) throttled segment: the work ends when the last run does.
    return np.array(times[:-1]), np.array(cpus[:-1])


def throttle_timeline_figure(*, cpu_work_s: float, threads: int, cores: int, quota_s: float,
                             period_s: float, ax=None):
    """CPUs in use over time under a quota (the model), with the quota's average marked."""
    fig, ax = new_figure(height_in=3.0) if ax is None else (ax.figure, ax)
    t, cpus = throttle_schedule(cpu_work_s=cpu_work_s, threads=threads, cores=cores,
                                quota_s=quota_s, period_s=period_s)
    total = cgm.throttled_wall_s(cpu_work_s=cpu_work_s, n_threads=threads, n_cores=cores,
                                 quota_s=quota_s, period_s=period_s)
    edges = np.append(t, total)
    ax.stairs(cpus, edges / units.ms, fill=True, color=COLORS["host"], alpha=0.75,
              label=f"{min(threads, cores)} threads running")
    qc = cgm.quota_cpus(quota_s, period_s)
    if math.isfinite(qc):
        ax.axhline(qc, color=COLORS["accent"], ls="--", lw=1.5, label=f"quota: {qc:.3g} CPUs")
        for k in range(int(total / period_s) + 1):
            ax.axvline(k * period_s / units.ms, color=COLORS["neutral"], ls=":", lw=0.8)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("CPUs in use")
    ax.set_xlim(0, max(total, period_s) / units.ms * 1.02)
    ax.set_ylim(0, max(min(threads, cores), qc if math.isfinite(qc) else 0) * 1.25)
    ax.set_title(f"{cpu_work_s / units.ms:.3g} ms of CPU work finishes after "
                 f"{total / units.ms:.3g} ms", fontsize=11)
    ax.legend(loc="upper right")
    return fig


def pool_figure(threads: Sequence[int], measured_s: Sequence[float],
                model_s: Sequence[float], *, cores: int, ax=None):
    """Measured wall time of the pool against its size (log x), with the model's line."""
    fig, ax = new_figure(height_in=3.2) if ax is None else (ax.figure, ax)
    n = np.asarray(threads, dtype=float)
    ax.semilogx(n, np.asarray(measured_s) / units.ms, "o-", color=COLORS["memory"], ms=6,
                base=2, label="measured here (median)")
    ax.semilogx(n, np.asarray(model_s) / units.ms, "--", color=COLORS["accent"], base=2,
                label="model: W / min(n, c)")
    ax.axvline(cores, color=COLORS["neutral"], ls=":", lw=1.2)
    ax.annotate(f"usable CPUs: {cores}", (cores, 0.95), xycoords=("data", "axes fraction"),
                xytext=(4, 0), textcoords="offset points", fontsize=9, color=COLORS["neutral"])
    ax.set_xlabel("threads in the pool")
    ax.set_ylabel("wall time (ms)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower left")
    return fig
