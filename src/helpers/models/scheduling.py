r"""Sharing processors: the CPU share and wake-up wait under Linux's fair scheduler, and a GPU
shared by time slicing or by partitioning.

Linux's fair scheduler (CFS, and EEVDF since Linux 6.6) gives each runnable thread of equal
weight an equal share of the CPUs and runs it for a slice before another may run. The slice a
CPU-bound thread gets is the *base slice*, ``0.75 ms * (1 + ilog2(ncpus))`` with ``ncpus``
capped at 8 (``kernel/sched/fair.c``, ``sysctl_sched_base_slice``, Linux 6.6 to 6.13; 0.70 ms
from Linux 6.14).

Symbols (the page {ref}`sec-os-scheduling` uses the same): :math:`n` runnable threads,
:math:`c` cores, :math:`q` slice, :math:`W` work (s of processor time), :math:`k` tenants
sharing a GPU, :math:`s` the cost of one context switch, :math:`f` a partition's fraction.

Used by: foundations/os-scheduling.md.
"""

from __future__ import annotations

import math

from ._checks import fraction, positive, positive_int
from . import _checks

__all__ = ["base_slice_s", "cpu_share", "round_robin_wait_bound_s", "time_sliced_completion_s",
           "partitioned_completion_s"]


def base_slice_s(n_cpus: int, normalized_slice_s: float = 0.75e-3) -> float:
    r"""The fair scheduler's base slice (s): :math:`q = q_0 (1 + \lfloor \log_2 \min(c, 8) \rfloor)`.

    .. math:: q = q_0 \left(1 + \lfloor \log_2 \min(c, 8) \rfloor\right)   (eq-sched-slice)

    Parameters
    ----------
    n_cpus : int
        Online CPUs :math:`c` (>= 1).
    normalized_slice_s : float
        :math:`q_0` (s), 0.75 ms in Linux 6.6 to 6.13, 0.70 ms from 6.14.

    Returns
    -------
    float
        :math:`q` (s), with the kernel's default logarithmic scaling.

    References
    ----------
    Linux ``kernel/sched/fair.c``: "(default: 0.75 msec * (1 + ilog(ncpus)), units:
    nanoseconds)"; ``get_update_sysctl_factor()`` caps ``ncpus`` at 8.

    Examples
    --------
    >>> [round(base_slice_s(c) * 1e3, 3) for c in (1, 2, 4, 8, 128)]
    [0.75, 1.5, 2.25, 3.0, 3.0]
    """
    c = positive_int("n_cpus", n_cpus)
    q0 = positive("normalized_slice_s", normalized_slice_s)
    return q0 * (1 + int(math.floor(math.log2(min(c, 8)))))


def cpu_share(n_runnable: int, n_cores: int) -> float:
    r"""Fraction of one CPU each of :math:`n` equal CPU-bound threads gets on :math:`c` cores.

    .. math:: \phi = \min\left(1, \frac{c}{n}\right)          (eq-sched-share)

    >>> cpu_share(2, 2), cpu_share(8, 2)
    (1.0, 0.25)
    """
    n = positive_int("n_runnable", n_runnable)
    c = positive_int("n_cores", n_cores)
    return min(1.0, c / n)


def round_robin_wait_bound_s(n_runnable: int, n_cores: int, slice_s: float) -> float:
    r"""Longest wait (s) of a thread that becomes runnable behind CPU-bound threads taking turns.

    With :math:`n` runnable threads (the woken one included) on :math:`c` cores, each core holds
    :math:`m = \lceil n / c \rceil` of them; in strict round robin the newcomer waits for at
    most the other :math:`m - 1` slices:

    .. math:: w_{\max} = (\lceil n / c \rceil - 1) \, q          (eq-sched-wait)

    Assumptions: equal weights, threads spread evenly over cores, no preemption of a running
    slice in the newcomer's favour (EEVDF often grants one, so real waits are usually shorter).

    >>> round_robin_wait_bound_s(2, 2, 1.5e-3), round_robin_wait_bound_s(5, 2, 1.5e-3)
    (0.0, 0.003)
    """
    n = positive_int("n_runnable", n_runnable)
    c = positive_int("n_cores", n_cores)
    q = positive("slice_s", slice_s)
    return (math.ceil(n / c) - 1) * q


def time_sliced_completion_s(*, work_s: float, n_tenants: int, slice_s: float,
                             switch_s: float = 0.0) -> float:
    r"""Completion time (s) of a job needing ``work_s`` of a GPU shared by time slicing.

    The :math:`k` tenants are always busy and take turns of :math:`q`; every turn costs a
    context switch :math:`s`. The job runs :math:`j = \lceil W/q \rceil` slices, and between two
    of them the other :math:`k-1` tenants run theirs:

    .. math:: T = W + (j - 1)\left[(k - 1) q + k s\right]          (eq-sched-timeslice)

    Assumptions: the job starts at the beginning of its own slice; the other tenants never
    finish early; MPS and MIG are modelled by :func:`partitioned_completion_s` instead.

    >>> time_sliced_completion_s(work_s=0.010, n_tenants=4, slice_s=0.002)
    0.034
    """
    _checks.finite_ratio("work_s", positive("work_s", work_s),
                         "slice_s", positive("slice_s", slice_s))
    w = positive("work_s", work_s)
    k = positive_int("n_tenants", n_tenants)
    q = positive("slice_s", slice_s)
    s = positive("switch_s", switch_s, allow_zero=True)
    j = max(1, math.ceil(w / q - 1e-12))  # at least one slice: work below 1e-12 slices gave j = 0
    if j == 1:  # done within the first slice: no wait (and no 0 * inf for a huge slice)
        return w + 0.0
    return w + (j - 1) * ((k - 1) * q + k * s)


def partitioned_completion_s(*, work_s: float, gpu_fraction: float) -> float:
    r"""Completion time (s) of ``work_s`` of whole-GPU work on a partition holding a fraction
    :math:`f` of the GPU (a MIG instance, or an MPS client limited to a share of the SMs):

    .. math:: T = W / f          (eq-sched-partition)

    Assumes the work scales with the SMs (and, for MIG, the memory bandwidth) it is given.

    >>> partitioned_completion_s(work_s=0.010, gpu_fraction=0.25)
    0.04
    """
    w = positive("work_s", work_s)
    f = fraction("gpu_fraction", gpu_fraction)
    if f == 0:
        raise ValueError(f"gpu_fraction must be a fraction in (0, 1], got {gpu_fraction!r}")
    return w / f
