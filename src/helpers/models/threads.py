r"""Threads and processes: what creating workers costs, and what a context switch costs.

The models of {ref}`sec-threads-and-processes`:

* :func:`parallel_time_s` and :func:`best_worker_count`: the time of a job split over
  ``n`` workers that are created one after another (``eq-thr-spawn`` on the page);
* :func:`switch_s_from_round_trip`: the cost of one context switch from a pipe ping-pong
  between two processes on one CPU (``eq-thr-pingpong``).

The GIL's effect is Amdahl's law with the Python-bytecode share as the serial part:
:func:`helpers.models.amdahl.amdahl_speedup`.

Symbols: :math:`W` the job's work on one worker (s), :math:`n` workers, :math:`s` the cost of
creating one worker (s), :math:`T_{rt}` a ping-pong round trip (s), :math:`t_{cs}` one switch.

Used by: foundations/threads-and-processes.md.
"""

from __future__ import annotations

import math

from ._checks import positive, positive_int
from . import _checks

__all__ = ["parallel_time_s", "best_worker_count", "switch_s_from_round_trip"]


def parallel_time_s(work_s: float, n_workers: int, spawn_s: float) -> float:
    r"""Time of a job of ``work_s`` split evenly over ``n_workers`` created one by one (s).

    .. math:: T(n) = n\,s + \frac{W}{n}          (the page labels this eq-thr-spawn)

    Parameters
    ----------
    work_s : float
        :math:`W`, the job's time on one worker (s).
    n_workers : int
        :math:`n`, workers, each given :math:`W/n` (at most as many as free cores).
    spawn_s : float
        :math:`s`, the time to create (and later join) one worker (s), measured on the page.

    Returns
    -------
    float
        :math:`T(n)` (s).

    Assumptions
    -----------
    The work divides evenly and runs in parallel once started (one core per worker, no
    lock such as the GIL); workers are created serially by one parent.

    Examples
    --------
    >>> round(parallel_time_s(1e-3, 4, 50e-6) * 1e6, 6)   # 4 x 50 us + 250 us
    450.0
    """
    w = positive("work_s", work_s)
    n = positive_int("n_workers", n_workers)
    s = positive("spawn_s", spawn_s, allow_zero=True)
    return n * s + w / n


def best_worker_count(work_s: float, spawn_s: float, max_workers: int) -> int:
    r"""The worker count in [1, ``max_workers``] that minimises :func:`parallel_time_s`.

    The continuous optimum is :math:`n^* = \sqrt{W/s}`; the integer answer is the better of
    its floor and ceiling, clipped to the cores available.

    >>> best_worker_count(1e-3, 50e-6, 64), best_worker_count(1.0, 50e-6, 8)
    (4, 8)
    """
    _checks.finite_ratio("work_s", positive("work_s", work_s),
                         "spawn_s", positive("spawn_s", spawn_s))
    w = positive("work_s", work_s)
    s = positive("spawn_s", spawn_s)
    m = positive_int("max_workers", max_workers)
    root = math.sqrt(w / s)
    cands = {min(m, max(1, math.floor(root))), min(m, max(1, math.ceil(root)))}
    return min(sorted(cands), key=lambda n: parallel_time_s(w, n, s))


def switch_s_from_round_trip(round_trip_s: float, switches_per_round_trip: int = 2) -> float:
    r"""One context switch's cost from a ping-pong round trip on one CPU (s).

    .. math:: t_{cs} = \frac{T_{rt}}{2}           (the page labels this eq-thr-pingpong)

    Two processes pinned to the same CPU pass a byte back and forth through two pipes; each
    round trip blocks each process once, so the CPU switches twice. The result includes the
    pipe's read and write system calls, so it is an upper bound on the bare switch.

    Parameters
    ----------
    round_trip_s : float
        :math:`T_{rt}`, the measured time of one round trip (s).
    switches_per_round_trip : int
        Switches per round trip (2 when both processes share one CPU).

    References
    ----------
    McVoy and Staelin (1996), "lmbench: Portable tools for performance analysis", USENIX ATC,
    its context-switch benchmark (a token passed around a ring of processes through pipes).

    Examples
    --------
    >>> round(switch_s_from_round_trip(5e-6) * 1e6, 6)
    2.5
    """
    t = positive("round_trip_s", round_trip_s)
    k = positive_int("switches_per_round_trip", switches_per_round_trip)
    return t / k
