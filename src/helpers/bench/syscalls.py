"""Measuring system calls and profilers on this machine.

* :func:`repeat_calls` turns "call ``fn`` ``n`` times" into one callable for
  :func:`helpers.bench.bench` (a single system call is too short for the clock).
* :func:`proc_io` reads ``/proc/self/io``, whose ``syscr`` and ``syscw`` count this process's
  read and write system calls (Linux, with task I/O accounting).
* :func:`read_in_chunks` reads a file with ``os.read`` calls of a given size.
* :func:`strace_counts` runs a Python snippet under ``strace -c`` if ``strace`` is installed
  and tracing is allowed, and returns the calls per system call.
* :class:`SamplingProfiler` samples one thread's innermost Python function at a fixed interval
  from another thread, the way a sampling profiler does; :func:`two_phase_work` is a workload
  whose true split between two functions is known.

Introduced in {ref}`sec-syscalls-and-profiling`.

Used by: foundations/syscalls-and-profiling.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

__all__ = ["repeat_calls", "proc_io", "read_in_chunks", "strace_counts", "SamplingProfiler",
           "two_phase_work", "work_a", "work_b"]


def repeat_calls(fn, n: int):
    """A callable that calls ``fn()`` ``n`` times and returns the last result."""
    if n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")

    def run():
        out = None
        for _ in range(n):
            out = fn()
        return out

    return run


def proc_io(path: str = "/proc/self/io") -> dict[str, int]:
    """The counters of ``/proc/self/io`` (``syscr``, ``syscw``, ``rchar``, ...); empty if the
    file is absent."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        try:
            out[k.strip()] = int(v)
        except ValueError:
            continue
    return out


def read_in_chunks(path, chunk_bytes: int) -> int:
    """Read ``path`` to the end with ``os.read(fd, chunk_bytes)``; return the bytes read."""
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be an integer >= 1, got {chunk_bytes!r}")
    fd = os.open(path, os.O_RDONLY)
    total = 0
    try:
        while True:
            b = os.read(fd, chunk_bytes)
            if not b:
                return total
            total += len(b)
    finally:
        os.close(fd)


def strace_counts(code: str, *, timeout_s: float = 60.0) -> dict[str, int] | None:
    """Run ``python -c code`` under ``strace -c -f`` and return {system call: calls}, or None
    if ``strace`` is missing or may not trace (containers often forbid ``ptrace``)."""
    exe = shutil.which("strace")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "strace.txt")
        try:
            proc = subprocess.run([exe, "-c", "-f", "-o", out, sys.executable, "-c", code],
                                  capture_output=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode != 0 or not os.path.exists(out):
            return None
        counts = {}
        with open(out) as fh:
            lines = fh.read().splitlines()
        for line in lines:
            parts = line.split()
            if len(parts) >= 5 and parts[0].replace(".", "").isdigit() and parts[-1] != "total":
                try:
                    counts[parts[-1]] = int(parts[3])
                except ValueError:
                    continue
        return counts or None


def work_a(n: int) -> int:
    """Busy arithmetic, ``n`` iterations (the same loop as :func:`work_b`)."""
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1_000_003
    return x


def work_b(n: int) -> int:
    """Busy arithmetic, ``n`` iterations (the same loop as :func:`work_a`)."""
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1_000_003
    return x


def two_phase_work(total_iters: int, fraction_a: float, *, slices: int = 50) -> int:
    """Split ``total_iters`` iterations between :func:`work_a` (``fraction_a`` of them) and
    :func:`work_b`, interleaved in ``slices`` rounds so a sampler sees both throughout.
    Because the loops are identical, the true share of time in ``work_a`` is ``fraction_a``."""
    per = total_iters // slices
    na = int(round(per * fraction_a))
    acc = 0
    for _ in range(slices):
        acc ^= work_a(na)
        acc ^= work_b(per - na)
    return acc


class SamplingProfiler:
    """Sample the innermost Python function of one thread every ``interval_s`` seconds.

    Use as a context manager around the code to profile, in the thread to be sampled. The
    sampler runs on its own thread and reads ``sys._current_frames()``; it needs the GIL for
    each sample, so samples are taken at the interpreter's switch points, and the interval is
    a target, not a guarantee (see :attr:`n_samples`).
    """

    def __init__(self, interval_s: float = 0.001):
        if not interval_s > 0:
            raise ValueError(f"interval_s must be a finite number in (0, inf), got {interval_s!r}")
        self.interval_s = interval_s
        self.counts: Counter = Counter()
        self._stop = threading.Event()
        self._target = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            frame = sys._current_frames().get(self._target)
            if frame is not None:
                self.counts[frame.f_code.co_name] += 1
            time.sleep(self.interval_s)

    def __enter__(self) -> "SamplingProfiler":
        self._target = threading.get_ident()
        # Let the interpreter switch threads at least twice per interval, so the sampler gets
        # the GIL when it wakes (the default switch interval is 5 ms).
        self._saved_switch = sys.getswitchinterval()
        sys.setswitchinterval(min(self._saved_switch, self.interval_s / 2))
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._saved_switch)

    @property
    def n_samples(self) -> int:
        return sum(self.counts.values())

    def share(self, name: str, among=None) -> float:
        """Fraction of samples in ``name`` (among the functions ``among``, if given)."""
        pool = self.counts if among is None else {k: self.counts[k] for k in among}
        total = sum(pool.values())
        return pool.get(name, 0) / total if total else float("nan")
