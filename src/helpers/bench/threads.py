"""Measuring threads, processes and context switches on this machine
({ref}`sec-threads-and-processes`).

* :func:`usable_cpus`: the CPUs this process may run on (its affinity mask), beside
  ``os.cpu_count()``, which counts the machine's;
* :func:`thread_spawn` and :func:`process_spawn`: the time to create, run and join one thread
  (``threading``) or one process (``os.fork`` and ``waitpid``) that does nothing;
* :func:`pingpong`: the round trip of one byte between two processes through two pipes, with
  both pinned to one CPU (every round trip is two context switches) or left to the scheduler;
* :func:`gil_scaling`: the time of a fixed amount of work done by one thread and split over
  several, for pure-Python work (which holds the GIL) and for NumPy work (which releases it).

Used by: foundations/threads-and-processes.md.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from .timing import BenchResult, bench

__all__ = ["usable_cpus", "thread_spawn", "process_spawn", "pingpong", "gil_scaling"]


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (``sched_getaffinity``; all CPUs where unsupported)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _noop():
    return None


def thread_spawn(*, budget_s: float = 0.1) -> BenchResult:
    """Time ``Thread(target=noop).start(); join()``."""
    def run():
        t = threading.Thread(target=_noop)
        t.start()
        t.join()
    return bench(run, name="thread create+join", warmup_s=0.01, budget_s=budget_s, env=False)


def process_spawn(*, budget_s: float = 0.2) -> BenchResult | None:
    """Time ``os.fork()`` of a child that exits at once, and ``waitpid``; None without fork."""
    if not hasattr(os, "fork"):
        return None

    def run():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise RuntimeError(f"child exited with status {status}")
    return bench(run, name="fork+wait", warmup_s=0.01, budget_s=budget_s, env=False)


def pingpong(n_round_trips: int = 2000, *, same_cpu: bool = True) -> float | None:
    """Seconds per round trip of one byte between this process and a forked child.

    With ``same_cpu`` both are pinned to this process's first usable CPU, so each round trip
    is two context switches on that CPU. Returns None where fork or affinity is missing. The
    parent's affinity is restored afterwards.
    """
    if not hasattr(os, "fork") or (same_cpu and not hasattr(os, "sched_setaffinity")):
        return None
    if n_round_trips < 1:
        raise ValueError(f"n_round_trips must be >= 1, got {n_round_trips!r}")
    p2c_r, p2c_w = os.pipe()
    c2p_r, c2p_w = os.pipe()
    saved = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if same_cpu:
        os.sched_setaffinity(0, {usable_cpus()[0]})
    try:
        pid = os.fork()
        if pid == 0:  # child: echo every byte back, then exit
            try:
                for _ in range(n_round_trips + 1):
                    os.write(c2p_w, os.read(p2c_r, 1))
            finally:
                os._exit(0)
        os.write(p2c_w, b"x")   # one warm-up round trip, so the child is running
        os.read(c2p_r, 1)
        t0 = time.perf_counter_ns()
        for _ in range(n_round_trips):
            os.write(p2c_w, b"x")
            os.read(c2p_r, 1)
        elapsed = (time.perf_counter_ns() - t0) * 1e-9
        os.waitpid(pid, 0)
    finally:
        for fd in (p2c_r, p2c_w, c2p_r, c2p_w):
            os.close(fd)
        if saved is not None and same_cpu:
            os.sched_setaffinity(0, saved)
    return elapsed / n_round_trips


def _py_work(n: int) -> float:
    s = 0.0
    for i in range(n):
        s += i * 0.5
    return s


def gil_scaling(n_threads: int, *, kind: str = "python", size: int = 200_000,
                budget_s: float = 0.2) -> BenchResult:
    """Time a fixed job split over ``n_threads`` threads (created before timing).

    ``kind="python"``: a pure-Python loop of ``size`` iterations in total (holds the GIL).
    ``kind="numpy"``: ``size`` float64 elements of sorting in total (NumPy releases the GIL).
    """
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads!r}")
    if kind == "python":
        def piece():
            _py_work(size // n_threads)
    elif kind == "numpy":
        arrays = [np.random.default_rng(k).random(size // n_threads) for k in range(n_threads)]

        def piece_k(k):
            np.sort(arrays[k])
    else:
        raise ValueError(f"kind must be 'python' or 'numpy', got {kind!r}")

    def run():
        if kind == "python":
            ts = [threading.Thread(target=piece) for _ in range(n_threads)]
        else:
            ts = [threading.Thread(target=piece_k, args=(k,)) for k in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return bench(run, name=f"{kind} x{n_threads} threads", warmup_s=0.02, budget_s=budget_s,
                 env=False)
