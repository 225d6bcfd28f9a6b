"""Measuring the scheduler from user space: how late a sleeping thread wakes, and what share of a
CPU each of too many busy processes gets.

* :class:`Hogs` starts ``n`` processes that spin on the CPU until stopped, and reports the CPU
  time each received over its wall time (``time.process_time`` inside each).
* :func:`sleep_overshoot` asks ``time.sleep`` for a duration many times and returns how much
  later than asked each wake-up came: timer slack plus the wait for a CPU.
* :func:`scheduler_settings` reads what the kernel exposes (``/proc/sys/kernel/sched_*``, the
  debugfs files when mounted) and returns ``{}`` where nothing is readable.

Processes, not threads, make the load: Python threads would queue on the interpreter lock and
measure it instead of the scheduler. Introduced in {ref}`sec-os-scheduling`.

Used by: foundations/os-scheduling.md.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import numpy as np

__all__ = ["Hogs", "sleep_overshoot", "scheduler_settings"]


def _spin(stop, out) -> None:
    c0, t0 = time.process_time(), time.perf_counter()
    x = 0
    while not stop.is_set():
        for _ in range(20_000):
            x += 1
    out.put((time.process_time() - c0, time.perf_counter() - t0))


class Hogs:
    """``with Hogs(n) as h: ...`` runs ``n`` CPU-bound processes; after the block,
    ``h.shares`` holds each one's CPU time over its wall time (fraction of one CPU)."""

    def __init__(self, n: int):
        if isinstance(n, bool) or int(n) != n or n < 0:
            raise ValueError(f"n must be an integer >= 0, got {n!r}")
        self.n = int(n)
        self.shares: list[float] = []
        self._ctx = mp.get_context("fork")

    def __enter__(self) -> "Hogs":
        self._stop = self._ctx.Event()
        self._out = self._ctx.Queue()
        self._procs = [self._ctx.Process(target=_spin, args=(self._stop, self._out), daemon=True)
                       for _ in range(self.n)]
        for p in self._procs:
            p.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        got = [self._out.get(timeout=10) for _ in self._procs]
        for p in self._procs:
            p.join(timeout=10)
        self.shares = [cpu / wall for cpu, wall in got if wall > 0]


def sleep_overshoot(duration_s: float = 1e-3, n: int = 200) -> np.ndarray:
    """Seconds each of ``n`` calls of ``time.sleep(duration_s)`` lasted beyond ``duration_s``."""
    if not (duration_s > 0) or int(n) < 1:
        raise ValueError(f"need duration_s > 0 and n >= 1, got {duration_s!r}, {n!r}")
    out = np.empty(int(n))
    for i in range(int(n)):
        t0 = time.perf_counter()
        time.sleep(duration_s)
        out[i] = time.perf_counter() - t0 - duration_s
    return out


def scheduler_settings(proc: str | Path = "/proc/sys/kernel",
                       debugfs: str | Path = "/sys/kernel/debug/sched") -> dict[str, str]:
    """Readable scheduler knobs: ``sched_*`` files under ``proc`` and, when debugfs is mounted
    and readable, ``base_slice_ns`` and friends under ``debugfs``."""
    out = {}
    for root in (Path(proc), Path(debugfs)):
        try:
            files = sorted(root.iterdir())
        except OSError:
            continue
        for f in files:
            if f.is_file() and (f.name.startswith("sched_") or root == Path(debugfs)):
                try:
                    out[f.name] = f.read_text().strip()
                except OSError:
                    pass
    return out
