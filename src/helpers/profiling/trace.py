r"""A profile reader: load a PyTorch profiler trace and turn it into evidence.

``torch.profiler`` writes a Chrome-trace JSON file (``export_chrome_trace``, optionally
gzipped): a list of events, each with a name, a category, a start ``ts`` and a duration
``dur`` in microseconds, a process ``pid`` and a thread ``tid``. On a GPU machine the
categories that matter are

* ``cpu_op``: an ATen operator on a host thread (``aten::mm``, ``aten::item``, ...);
* ``cuda_runtime`` / ``cuda_driver``: a CUDA API call on the host (``cudaLaunchKernel``,
  ``cudaStreamSynchronize``, ``cudaMemcpyAsync``), with ``args.correlation``;
* ``kernel``, ``gpu_memcpy``, ``gpu_memset``: work on the device, ``pid`` = device,
  ``args.stream`` = stream, ``args.correlation`` = the runtime call that launched it;
* ``ac2g`` flow events (``ph`` ``s``/``f``) that draw the same launch-to-kernel link.

This module parses that into :class:`Event` records (SI seconds) and answers the questions of
the profiling page: which kernels take the time (:func:`top_ops`), how busy the device was and
where it sat idle and why (:func:`utilization`, :func:`idle_gaps`), whether launches cost more
than the kernels they launch (:func:`launch_stats`), and a causal :func:`finding`. On a trace
with no device activity (recorded on a CPU) the same functions analyse the CPU operators and
say so (:attr:`Trace.has_device`, :attr:`Report.subject`).

Everything here is a pure function of parsed data; reading a trace needs no torch.

Three models of the page live here too, because they are what a trace is read against:

.. math::

    T_\mathrm{step} \approx n_k \max(t_\mathrm{launch}, t_\mathrm{kernel}) + \sum_j g_j
    \qquad\text{(eq-prof-launch-bound)}

    U = T_\mathrm{busy} / T_\mathrm{wall}                      \qquad\text{(eq-prof-utilization)}

    T' = \max(T - t_\mathrm{blocked},\ T_\mathrm{busy})      \qquad\text{(eq-prof-sync-fix)}

References
----------
* PyTorch, "torch.profiler" API documentation and the "Profiling your PyTorch Module" recipe:
  the trace format, ``export_chrome_trace``, the event categories.
* Holistic Trace Analysis (HTA) documentation, "Temporal breakdown" and "Idle time breakdown":
  GPU idle time split into host wait and kernel wait, the definitions followed here.
* NVIDIA, CUDA C++ Programming Guide, "Asynchronous concurrent execution": launches return
  before the kernel runs; synchronising calls block the host.

Used by: chapters/profiling.md.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .. import units
from ..models import _checks, launch

__all__ = [
    "Event", "Trace", "OpStat", "Gap", "Launch", "LaunchStats", "Finding", "Report",
    "load_trace", "parse_trace", "work_events", "top_ops", "busy_time_s", "utilization",
    "idle_gaps", "blocked_time_s", "launch_stats", "step_times_s", "finding", "analyse",
    "launch_bound_time_s", "gpu_utilization", "sync_removed_time_s", "SYNC_PATTERN",
]

US = 1e-6  # Chrome traces count microseconds
EPS_S = 1e-10  # below the traces' resolution (ns): intervals closer than this touch

#: Host calls that block the host until the device has caught up (or that imply it).
SYNC_PATTERN = re.compile(
    r"(cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|cudaStreamWaitEvent|"
    r"cuStreamSynchronize|cuCtxSynchronize|cudaMemcpy(?!Async)|aten::item|"
    r"aten::_local_scalar_dense|aten::nonzero|aten::is_nonzero|aten::equal)")
_LAUNCH = re.compile(r"(cudaLaunchKernel|cuLaunchKernel|cudaLaunchCooperativeKernel|"
                     r"cudaGraphLaunch|cuLaunch|cudaMemcpyAsync|cudaMemsetAsync)")

_KIND = {
    "cpu_op": "cpu_op", "operator": "cpu_op",
    "user_annotation": "annotation", "python_function": "python",
    "cuda_runtime": "runtime", "runtime": "runtime", "cuda_driver": "runtime",
    "kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "memcpy": "memcpy",
    "memset": "memset", "gpu_user_annotation": "gpu_annotation",
}
DEVICE_KINDS = ("kernel", "memcpy", "memset")
HOST_KINDS = ("cpu_op", "runtime", "annotation", "python")


@dataclass(frozen=True)
class Event:
    """One complete event of a trace, in seconds from the start of the trace."""

    name: str
    kind: str           # cpu_op, runtime, annotation, python, kernel, memcpy, memset, ...
    start_s: float
    dur_s: float
    pid: str
    tid: str            # the host thread, or the device stream for device events
    correlation: int | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.dur_s

    @property
    def on_device(self) -> bool:
        return self.kind in DEVICE_KINDS


@dataclass(frozen=True)
class Trace:
    """A parsed trace: its events sorted by start, the launch-to-kernel links, metadata."""

    events: tuple[Event, ...]
    #: correlation id -> (index of the host call, indices of the device work it started); a
    #: kernel launch starts one kernel, a CUDA graph launch many
    flows: Mapping[int, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def has_device(self) -> bool:
        """True if the trace holds any kernel, memcpy or memset (a GPU trace)."""
        return any(e.on_device for e in self.events)

    @property
    def start_s(self) -> float:
        """Start of the profiled window: the first host or device event (0 if none)."""
        ev = [e.start_s for e in self.events if e.kind in HOST_KINDS + DEVICE_KINDS]
        return min(ev, default=0.0)

    @property
    def wall_s(self) -> float:
        """The profiled window: first start to last end over host and device events."""
        ev = [e for e in self.events if e.kind in HOST_KINDS + DEVICE_KINDS]
        if not ev:
            return 0.0
        return max(e.end_s for e in ev) - min(e.start_s for e in ev)

    def of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]


# --- reading ---------------------------------------------------------------------------------

def load_trace(path) -> Trace:
    """Read a Chrome-trace file written by ``torch.profiler`` (``.json`` or ``.json.gz``)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be an existing trace file, got {str(path)!r}")
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rt", encoding="utf-8") as fh:
            obj = json.load(fh)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{p.name} is not a JSON trace: {exc}") from None
    trace = parse_trace(obj)
    return Trace(trace.events, trace.flows, {**trace.meta, "path": str(p)})


def _num(value, what: str, i: int) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"event {i}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"event {i}: {what} must be finite, got {value!r}")
    return v


def parse_trace(obj) -> Trace:
    """Normalise a Chrome trace (the dict ``torch.profiler`` writes, or its event list).

    Complete events (``ph == "X"``) become :class:`Event` records with times in seconds from
    the earliest event; metadata and instant events are dropped; ``ac2g`` flow pairs and
    ``args.correlation`` both link a launch to its kernel. Raises ``ValueError`` for input that
    is not a trace (no event list, an event without a name, a negative duration, ...).
    """
    if isinstance(obj, Mapping):
        if "traceEvents" not in obj:
            raise ValueError("a trace dict must have a 'traceEvents' list")
        raw, meta = obj["traceEvents"], {k: v for k, v in obj.items() if k != "traceEvents"}
    else:
        raw, meta = obj, {}
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ValueError(f"traceEvents must be a list of events, got {type(raw).__name__}")
    complete, flow_start, flow_end = [], {}, {}
    for i, ev in enumerate(raw):
        if not isinstance(ev, Mapping):
            raise ValueError(f"event {i} must be a JSON object, got {type(ev).__name__}")
        ph = ev.get("ph")
        if ph in ("s", "f") and ev.get("cat") == "ac2g":
            ts = _num(ev.get("ts"), "ts", i) * US
            (flow_start if ph == "s" else flow_end)[ev.get("id")] = (ts, str(ev.get("pid")),
                                                                    str(ev.get("tid")))
            continue
        if ph != "X":
            continue
        name = ev.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"event {i} has no name")
        ts = _num(ev.get("ts"), "ts", i)
        dur = _num(ev.get("dur", 0.0), "dur", i)
        if dur < 0:
            raise ValueError(f"event {i} ({name}): dur must be >= 0, got {dur!r}")
        args = ev.get("args") or {}
        corr = args.get("correlation")
        kind = _KIND.get(str(ev.get("cat", "")).lower(), "other")
        tid = args.get("stream", ev.get("tid")) if kind in DEVICE_KINDS else ev.get("tid")
        complete.append((ts, dur, name, kind, str(ev.get("pid")), str(tid),
                         int(corr) if isinstance(corr, (int, float)) and corr >= 0 else None))
    t0 = min((c[0] for c in complete), default=0.0)
    complete.sort(key=lambda c: (c[0], -c[1]))
    events = tuple(Event(name, kind, (ts - t0) * US, dur * US, pid, tid, corr)
                   for ts, dur, name, kind, pid, tid, corr in complete)
    # Launch -> kernel links: by correlation id, confirmed by flow events where present.
    host_by_corr, dev_by_corr = {}, {}
    for idx, e in enumerate(events):
        if e.correlation is None:
            continue
        if e.kind == "runtime":
            host_by_corr.setdefault(e.correlation, idx)
        elif e.on_device:
            dev_by_corr.setdefault(e.correlation, []).append(idx)
    flows = {c: (host_by_corr[c], tuple(dev_by_corr[c])) for c in dev_by_corr if c in host_by_corr}
    meta = {**meta, "n_flow_events": len(set(flow_start) & set(flow_end))}
    return Trace(events, flows, meta)


# --- what does the work ------------------------------------------------------------------------

def _self_times(events: Sequence[Event]) -> list[float]:
    """Self time of each event: its duration minus that of its direct children on its thread."""
    self_s = [e.dur_s for e in events]
    by_thread: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        by_thread[(e.pid, e.tid)].append(i)
    for idxs in by_thread.values():
        stack: list[int] = []
        for i in sorted(idxs, key=lambda j: (events[j].start_s, -events[j].dur_s)):
            e = events[i]
            while stack and events[stack[-1]].end_s <= e.start_s:
                stack.pop()
            if stack:
                self_s[stack[-1]] -= e.dur_s
            stack.append(i)
    return [max(s, 0.0) for s in self_s]


def work_events(trace: Trace) -> list[Event]:
    """The events whose time is the "work" of the trace.

    On a GPU trace: kernels, memcpys and memsets. On a CPU-only trace: the outermost CPU
    operators of each thread (an ``aten::matmul`` but not the ``aten::mm`` inside it), the
    CPU's analogue of a kernel.
    """
    if trace.has_device:
        return trace.of(*DEVICE_KINDS)
    ops = trace.of("cpu_op")
    out, ends = [], {}
    for e in ops:  # sorted by start, longest first
        key = (e.pid, e.tid)
        if e.start_s >= ends.get(key, -math.inf):
            out.append(e)
            ends[key] = e.end_s
        else:
            ends[key] = max(ends[key], e.end_s)
    return out


@dataclass(frozen=True)
class OpStat:
    """Time spent in one kernel (or, on a CPU trace, one operator) name."""

    name: str
    count: int
    total_s: float
    mean_s: float
    share: float  # of the total over all names


def top_ops(trace: Trace, n: int = 10) -> list[OpStat]:
    """The ``n`` kernel names (CPU operators on a CPU trace) with the most total time.

    Kernel time is each kernel's duration; operator time is *self* time (nested operators are
    not counted twice), so the shares add up to one over all names.
    """
    n = _checks.positive_int("n", n)
    if trace.has_device:
        ev = trace.of(*DEVICE_KINDS)
        t = [e.dur_s for e in ev]
    else:
        ev = trace.of("cpu_op")
        t = _self_times(ev)
    tot, cnt = defaultdict(float), defaultdict(int)
    for e, s in zip(ev, t):
        tot[e.name] += s
        cnt[e.name] += 1
    grand = sum(tot.values())
    ranked = sorted(tot, key=lambda k: (-tot[k], k))[:n]
    return [OpStat(k, cnt[k], tot[k], tot[k] / cnt[k], tot[k] / grand if grand > 0 else 0.0)
            for k in ranked]


def _union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1] + EPS_S:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def busy_time_s(trace: Trace) -> float:
    """Time during which at least one work event (:func:`work_events`) was running."""
    return sum(b - a for a, b in _union((e.start_s, e.end_s) for e in work_events(trace)))


def utilization(trace: Trace) -> float:
    """Busy time over the profiled window (:func:`gpu_utilization` of the trace); 0 if empty."""
    wall = trace.wall_s
    return gpu_utilization(busy_time_s(trace), wall) if wall > 0 else 0.0


# --- where the device waited --------------------------------------------------------------------

@dataclass(frozen=True)
class Gap:
    """An interval on one stream (a thread, on a CPU trace) with no work, and what the host did."""

    start_s: float
    dur_s: float
    stream: str
    host: tuple[str, ...]   # host events overlapping the gap, by start (outermost first)
    sync: str | None        # the first of them that blocks the host, if any

    @property
    def end_s(self) -> float:
        return self.start_s + self.dur_s


def idle_gaps(trace: Trace, threshold_s: float = 10e-6) -> list[Gap]:
    """Intervals longer than ``threshold_s`` between consecutive work events of one stream.

    Each gap carries the host events (CPU operators, runtime calls) that overlap it, and the
    first of those that blocks the host (matches :data:`SYNC_PATTERN`). A blocking call under a
    gap is the signature of a host synchronisation: the device ran dry while the host waited
    for it, and the next kernel could start only after the call returned and the host launched
    it. On a CPU trace (no device) nothing is attributed to a sync.
    """
    threshold_s = _checks.positive("threshold_s", threshold_s, allow_zero=True)
    by_stream: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for e in work_events(trace):
        by_stream[(e.pid, e.tid)].append(e)
    host = trace.of("cpu_op", "runtime")
    device = trace.has_device
    gaps = []
    for (pid, tid), evs in sorted(by_stream.items()):
        end = None
        for a, b in _union((e.start_s, e.end_s) for e in evs):
            if end is not None and a - end > max(threshold_s, EPS_S):
                gaps.append(_describe_gap(end, a, f"{pid}:{tid}", host, device))
            end = b
    return sorted(gaps, key=lambda g: g.start_s)


def _describe_gap(a: float, b: float, stream: str, host: Sequence[Event],
                  device: bool) -> Gap:
    cover = [e for e in host if e.start_s < b and e.end_s > a]  # sorted: outermost first
    names = tuple(dict.fromkeys(e.name for e in cover))
    sync = next((nm for nm in names if SYNC_PATTERN.search(nm)), None) if device else None
    return Gap(a, b - a, stream, names, sync)


def blocked_time_s(trace: Trace) -> float:
    """Host time spent inside blocking calls (:data:`SYNC_PATTERN`), nested calls counted once.

    Zero on a CPU trace: there is no device to wait for.
    """
    if not trace.has_device:
        return 0.0
    ev = [e for e in trace.of("cpu_op", "runtime") if SYNC_PATTERN.search(e.name)]
    return sum(b - a for a, b in _union((e.start_s, e.end_s) for e in ev))


# --- launches ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Launch:
    """A host launch call and the device work it started (one kernel, or a graph's many)."""

    name: str
    kernel: str         # the first kernel's name
    n_kernels: int
    launch_s: float     # host time in the launch call
    kernel_s: float     # device time of the work it started, summed
    delay_s: float      # first kernel's start minus launch start (queueing + launch latency)


@dataclass(frozen=True)
class LaunchStats:
    """Launch overhead over a trace's linked launches (see :func:`launch_stats`)."""

    launches: tuple[Launch, ...]
    n: int
    median_launch_s: float
    median_kernel_s: float
    frac_shorter_than_launch: float
    total_launch_s: float
    total_kernel_s: float


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    if not s:
        return 0.0
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def launch_stats(trace: Trace) -> LaunchStats:
    """Pair each launch call with its kernels (by correlation id) and compare their times.

    A kernel shorter than its launch call leaves the device waiting for the next launch: the
    step is *launch-bound* (eq-prof-launch-bound). A CUDA graph launch is compared with the
    summed time of all the kernels it started. A CPU trace has no launches: ``n == 0``.
    """
    out = []
    for host_idx, dev_idxs in trace.flows.values():
        h = trace.events[host_idx]
        if not _LAUNCH.search(h.name):
            continue
        ds = [trace.events[i] for i in dev_idxs]
        out.append(Launch(h.name, ds[0].name, len(ds), h.dur_s, sum(d.dur_s for d in ds),
                          min(d.start_s for d in ds) - h.start_s))
    out.sort(key=lambda x: x.delay_s)
    ls = [x.launch_s for x in out]
    ks = [x.kernel_s for x in out]
    shorter = sum(k < l for k, l in zip(ks, ls))
    return LaunchStats(tuple(out), len(out), _median(ls), _median(ks),
                       shorter / len(out) if out else 0.0, sum(ls), sum(ks))


def step_times_s(trace: Trace, pattern: str = r"ProfilerStep#\d+|step") -> list[float]:
    """Durations of the annotated steps (``record_function`` or the profiler's schedule)."""
    rx = re.compile(rf"^(?:{pattern})$")
    return [e.dur_s for e in trace.of("annotation") if rx.match(e.name)]


# --- the models ------------------------------------------------------------------------------------

def launch_bound_time_s(*, n_kernels: int, launch_s: float, kernel_s: float,
                        sync_gaps_s: float = 0.0) -> float:
    r"""Time of a step of ``n_kernels`` back-to-back launches plus synchronisation gaps (s).

    .. math:: T_\mathrm{step} \approx n_k \max(t_\mathrm{launch}, t_\mathrm{kernel})
              + \sum_j g_j                                     \quad\text{(eq-prof-launch-bound)}

    Parameters
    ----------
    n_kernels : int
        Kernels launched in the step, :math:`n_k` (>= 0).
    launch_s : float
        Host time to launch one kernel, :math:`t_\mathrm{launch}` (s, > 0).
    kernel_s : float
        Device time of one kernel, :math:`t_\mathrm{kernel}` (s, > 0).
    sync_gaps_s : float
        Total device idle time the step's synchronisations add, :math:`\sum_j g_j` (s, >= 0).

    Returns
    -------
    float
        :math:`T_\mathrm{step}` (s).

    Assumptions
    -----------
    One host thread launches into one stream; the host does nothing but launch between syncs,
    so the slower of the two (host launching, device running) sets the pace; kernels are
    alike (use medians for a mixed trace).

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Asynchronous transfers and overlapping"; the launch
    cost is a measured input. It is :func:`helpers.models.launch.eager_time_s` with the sync
    gaps as its synchronisation term, extended to a step of no kernels.

    Examples
    --------
    A thousand kernels of two microseconds, each taking five to launch, and no syncs:

    >>> launch_bound_time_s(n_kernels=1000, launch_s=5e-6, kernel_s=2e-6)
    0.005
    """
    n = _checks.positive_int("n_kernels", n_kernels, minimum=0)
    tl = _checks.positive("launch_s", launch_s)
    tk = _checks.positive("kernel_s", kernel_s)
    g = _checks.positive("sync_gaps_s", sync_gaps_s, allow_zero=True)
    if n == 0:
        return g
    # The same model as the launch-overhead lab's, with the step's sync gaps as its sync term.
    return float(launch.eager_time_s(n, tl, tk, sync_s=g))


def gpu_utilization(busy_s: float, wall_s: float) -> float:
    r"""Fraction of a window during which the device ran work (dimensionless).

    .. math:: U = T_\mathrm{busy} / T_\mathrm{wall}              \quad\text{(eq-prof-utilization)}

    Parameters
    ----------
    busy_s : float
        Time with at least one kernel running, :math:`T_\mathrm{busy}` (s, >= 0).
    wall_s : float
        The window, :math:`T_\mathrm{wall}` (s, > 0, >= ``busy_s``).

    Returns
    -------
    float
        :math:`U` in [0, 1].

    Assumptions
    -----------
    "Busy" means a kernel is resident, not that its SMs are saturated: this is the coarse
    utilisation ``nvidia-smi`` reports, and a busy device can still be far below its roofline.

    References
    ----------
    NVIDIA, NVML API reference, ``nvmlDeviceGetUtilizationRates`` ("percent of time over the
    past sample period during which one or more kernels was executing on the GPU").

    Examples
    --------
    >>> gpu_utilization(3e-3, 4e-3)
    0.75
    """
    w = _checks.positive("wall_s", wall_s)
    b = _checks.positive("busy_s", busy_s, allow_zero=True)
    if b > w * (1 + 1e-9):
        raise ValueError(f"busy_s must be <= wall_s ({wall_s!r}), got {busy_s!r}")
    return min(b / w, 1.0)


def sync_removed_time_s(*, wall_s: float, blocked_s: float, busy_s: float) -> float:
    r"""Predicted window (s) once the host stops blocking on the device.

    .. math:: T' = \max(T - t_\mathrm{blocked},\ T_\mathrm{busy})   \quad\text{(eq-prof-sync-fix)}

    Parameters
    ----------
    wall_s : float
        The measured window, :math:`T` (s, > 0).
    blocked_s : float
        Host time inside blocking calls, :math:`t_\mathrm{blocked}` (s, in [0, T]).
    busy_s : float
        Device busy time, :math:`T_\mathrm{busy}` (s, in [0, T]).

    Returns
    -------
    float
        :math:`T'` (s).

    Assumptions
    -----------
    The host's other work (Python, launches) stays the same and now overlaps the device's; the
    device's work stays the same. So the window loses the blocked time, but cannot fall below
    the time the device needs anyway. Extra copies or a later read-back are not counted.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Asynchronous transfers and overlapping transfers
    with computation"; Holistic Trace Analysis documentation, "Idle time breakdown" ("host
    wait").

    Examples
    --------
    A window of ten milliseconds with four of them blocked and three of device work:

    >>> round(sync_removed_time_s(wall_s=10e-3, blocked_s=4e-3, busy_s=3e-3), 6)
    0.006
    """
    T = _checks.positive("wall_s", wall_s)
    tb = _checks.positive("blocked_s", blocked_s, allow_zero=True)
    tu = _checks.positive("busy_s", busy_s, allow_zero=True)
    for name, v in (("blocked_s", tb), ("busy_s", tu)):
        if v > T * (1 + 1e-9):
            raise ValueError(f"{name} must be <= wall_s ({wall_s!r}), got {v!r}")
    return max(T - tb, tu)


# --- the causal finding ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Report:
    """Everything :func:`analyse` reads from a trace, ready for :func:`finding`."""

    subject: str                 # "GPU kernels" or "CPU operators (no device activity)"
    wall_s: float
    busy_s: float
    utilization: float
    top: tuple[OpStat, ...]
    gaps: tuple[Gap, ...]
    gap_s: float
    sync_gap_s: float
    blocked_s: float
    sync_names: tuple[str, ...]
    launches: LaunchStats
    steps_s: tuple[float, ...]


def analyse(trace: Trace, *, top_n: int = 5, gap_threshold_s: float = 10e-6) -> Report:
    """Run every reader of this module over ``trace`` and collect the results."""
    gaps = idle_gaps(trace, gap_threshold_s)
    sync = [g for g in gaps if g.sync]
    names = tuple(sorted({g.sync for g in sync}, key=lambda s: -sum(g.dur_s for g in sync
                                                                    if g.sync == s)))
    busy = busy_time_s(trace)
    return Report(
        "GPU kernels" if trace.has_device else "CPU operators (no device activity in this trace)",
        trace.wall_s, busy, utilization(trace), tuple(top_ops(trace, top_n)), tuple(gaps),
        sum(g.dur_s for g in gaps), sum(g.dur_s for g in sync), blocked_time_s(trace), names,
        launch_stats(trace),
        tuple(step_times_s(trace)))


@dataclass(frozen=True)
class Finding:
    """A causal statement with its numbers: symptom -> evidence -> cause -> predicted effect."""

    cause: str                   # "host-sync", "launch-bound", "kernel-bound", "cpu-overhead"
    symptom: str
    evidence: str
    explanation: str
    prediction: str
    wall_s: float
    predicted_wall_s: float

    @property
    def predicted_speedup(self) -> float:
        return self.wall_s / self.predicted_wall_s if self.predicted_wall_s > 0 else math.inf

    def text(self) -> str:
        return (f"Symptom: {self.symptom} Evidence: {self.evidence} "
                f"Cause: {self.explanation} Prediction: {self.prediction}")


def finding(report: Report) -> Finding:
    """State the most likely cause of lost time in ``report``, and what fixing it should buy.

    The rules, in order: if idle gaps with a blocking host call under them hold at least a
    tenth of the window, the cause is a host synchronisation (prediction: eq-prof-sync-fix); else if most launches take
    longer than their kernels, the step is launch-bound; on a CPU trace, time outside any
    operator (a quarter of the window or more) is interpreter overhead; otherwise the top kernel is where the time goes. The
    prediction removes the cause from the window, and is checked against the trace of the
    fixed program.
    """
    T, fmt = report.wall_s, units.fmt_time
    if T <= 0:
        raise ValueError("the trace has no timed events; nothing to find")
    u = report.utilization
    top = report.top[0] if report.top else None
    what = "the device" if report.subject.startswith("GPU") else "the CPU operators"
    symptom = f"{what} ran for {u:.0%} of the {fmt(T)} window."
    L = report.launches
    if report.subject.startswith("GPU") and report.sync_gap_s >= 0.1 * T:
        n = sum(1 for g in report.gaps if g.sync)
        sync = report.sync_names[0]
        pred = sync_removed_time_s(wall_s=T, blocked_s=report.blocked_s, busy_s=report.busy_s)
        return Finding(
            "host-sync", symptom,
            f"{n} idle gaps totalling {fmt(report.sync_gap_s)} ({report.sync_gap_s / T:.0%} of "
            f"the window) each overlap a blocking host call, most often {sync}; the host spent "
            f"{fmt(report.blocked_s)} blocked in such calls.",
            f"the host waits for the device ({sync}) before it launches the next step, so the "
            "device drains and then waits for the host's next launches.",
            f"without the synchronisation the host runs ahead: the window should shrink by the "
            f"blocked time, to about {fmt(pred)} ({T / pred:.2g}x faster).",
            T, pred)
    if L.n and L.frac_shorter_than_launch > 0.5:
        pred = max(report.busy_s, L.total_kernel_s)
        per_kernel = (T - report.blocked_s) / sum(x.n_kernels for x in L.launches)
        return Finding(
            "launch-bound", symptom,
            f"{L.frac_shorter_than_launch:.0%} of {L.n} launch calls started less device work "
            f"({fmt(L.median_kernel_s)} median) than the call took "
            f"({fmt(L.median_launch_s)} median); counting all its work outside blocking "
            f"calls, the host issued one kernel every {fmt(per_kernel)}.",
            "the host cannot launch kernels as fast as the device finishes them, so the "
            "device waits for each launch.",
            f"fusing the kernels or replaying them as a CUDA graph should bring the window "
            f"towards the device's busy time, about {fmt(pred)}.",
            T, pred)
    idle = T - report.busy_s
    if not report.subject.startswith("GPU") and idle >= 0.25 * T:
        return Finding(
            "cpu-overhead", symptom,
            f"{fmt(idle)} ({idle / T:.0%} of the window) passes between operators, "
            f"{len(report.gaps)} gaps of them longer than the threshold.",
            "the Python interpreter and the framework spend that time between operators.",
            f"fewer, larger operators (or a compiled graph) should bring the window towards "
            f"the operators' own time, {fmt(report.busy_s)}.",
            T, report.busy_s)
    if top is None:
        raise ValueError("the trace has no work events; nothing to find")
    rest = T - top.total_s / 2
    unit = "kernel" if report.subject.startswith("GPU") else "operator"
    return Finding(
        "kernel-bound", symptom,
        f"{top.name} takes {top.share:.0%} of the work time ({top.count} calls, "
        f"{fmt(top.mean_s)} each).",
        f"the work itself, not waiting, sets the time; the top {unit} is the place to look "
        "next (Nsight Compute on a GPU).",
        f"halving that {unit}'s time would bring the window to about {fmt(rest)}.",
        T, rest)
