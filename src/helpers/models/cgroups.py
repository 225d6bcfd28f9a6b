r"""CPU limits of a container: the quota a cgroup grants, the CPUs a process may use, and the
wall time of CPU-bound work when the quota throttles it.

A Linux control group (cgroup) can cap the CPU time its processes use with *CFS bandwidth
control*: in every period of :math:`P` seconds the group may run for at most :math:`Q`
seconds of CPU time, summed over all its threads and cores, and its threads are stopped
(throttled) until the next period once the quota is spent. The kernel documentation gives the
rule and its examples (``Documentation/scheduler/sched-bwc.rst``, section "Examples"); cgroup
v2 writes the same pair as ``cpu.max`` = ``"$MAX $PERIOD"`` (``Documentation/admin-guide/
cgroup-v2.rst``, section "CPU Interface Files").

Symbols (the page {ref}`sec-containers-and-cgroups` uses the same): :math:`Q` quota
(``quota_s``), :math:`P` period (``period_s``), :math:`C_q = Q/P` the quota in CPUs,
:math:`n` runnable threads, :math:`c` cores the threads may run on, :math:`W` CPU work
(``cpu_work_s``, CPU-seconds).

Used by: foundations/containers-and-cgroups.md.
"""

from __future__ import annotations

import math

from ._checks import positive, positive_int
from . import _checks

__all__ = ["quota_cpus", "effective_cpus", "throttled_wall_s", "throttle_slowdown"]


def quota_cpus(quota_s: float, period_s: float) -> float:
    r"""CPUs' worth of time a CFS bandwidth quota grants (dimensionless): :math:`C_q = Q/P`.

    .. math:: C_q = Q / P            (the page labels this eq-cgr-quota)

    Parameters
    ----------
    quota_s : float
        Quota :math:`Q` (s of CPU time per period), > 0. Pass ``math.inf`` for no limit
        (``cpu.max`` = ``max``, or ``cpu.cfs_quota_us`` = -1), which gives ``inf``.
    period_s : float
        Period :math:`P` (s), > 0; the kernel's default is 0.1 s.

    Returns
    -------
    float
        :math:`C_q`, CPUs (may be fractional, and may exceed the host's cores).

    Assumptions
    -----------
    The long-run average only: within a period the group may run on more CPUs than
    :math:`C_q` and then be throttled (see :func:`throttled_wall_s`).

    References
    ----------
    Linux kernel documentation, ``scheduler/sched-bwc.rst``, section "Examples": a 250 ms
    quota per 250 ms period is 1 CPU; 1000 ms per 500 ms is 2 CPUs; 10 ms per 50 ms is 20 %
    of 1 CPU.

    Examples
    --------
    >>> [round(quota_cpus(q, p), 9) for q, p in ((0.25, 0.25), (1.0, 0.5), (0.01, 0.05))]
    [1.0, 2.0, 0.2]
    >>> quota_cpus(math.inf, 0.1)
    inf
    """
    period_s = positive("period_s", period_s)
    if isinstance(quota_s, (int, float)) and quota_s == math.inf:
        return math.inf
    quota_s = positive("quota_s", quota_s)
    return quota_s / period_s


def effective_cpus(*, host_cpus: int, affinity_cpus: int, quota_cpus: float = math.inf) -> float:
    r"""CPUs a process can keep busy on average (dimensionless): the least of three limits.

    .. math:: c_{\text{eff}} = \min(c_{\text{host}},\ c_{\text{affinity}},\ C_q)
              (the page labels this eq-cgr-effective)

    Parameters
    ----------
    host_cpus : int
        Logical CPUs of the host, what ``os.cpu_count()`` reports (>= 1).
    affinity_cpus : int
        CPUs in the process's affinity mask (``len(os.sched_getaffinity(0))``; the cgroup's
        ``cpuset`` is part of it), 1 <= ``affinity_cpus`` <= ``host_cpus``.
    quota_cpus : float
        The CFS quota in CPUs, :func:`quota_cpus` (> 0; ``inf`` for none).

    Returns
    -------
    float
        :math:`c_{\text{eff}}`, CPUs.

    Assumptions
    -----------
    A long-run average for CPU-bound threads; bursts within one period can be wider (up to
    ``affinity_cpus``), and other tenants on the same cores can take more.

    References
    ----------
    Python documentation, ``os.cpu_count`` (the host's CPUs, not the usable ones) and
    ``os.sched_getaffinity``; ``sched-bwc.rst`` for the quota.

    Examples
    --------
    The container of the page's title: a host of 128 CPUs, all in the affinity mask, and a
    quota of 4 CPUs.

    >>> effective_cpus(host_cpus=128, affinity_cpus=128, quota_cpus=4.0)
    4.0
    """
    host = positive_int("host_cpus", host_cpus)
    aff = positive_int("affinity_cpus", affinity_cpus)
    if aff > host:
        raise ValueError(f"affinity_cpus must be in [1, host_cpus={host}], got {affinity_cpus!r}")
    q = math.inf if quota_cpus == math.inf else positive("quota_cpus", quota_cpus)
    return float(min(host, aff, q))


def throttled_wall_s(*, cpu_work_s: float, n_threads: int, n_cores: int, quota_s: float,
                     period_s: float) -> float:
    r"""Wall time (s) of CPU-bound work spread over ``n_threads`` threads under a CFS quota.

    With :math:`p = \min(n, c)` threads running at once, the group spends its quota
    :math:`Q` in :math:`Q/p` seconds of each period. If :math:`p \le Q/P` it is never
    throttled and the work takes :math:`W/p`. Otherwise it runs :math:`k = \lceil W/Q\rceil - 1`
    full periods and then finishes the rest at :math:`p` CPUs:

    .. math:: T = \begin{cases} W/p & p P \le Q \\ k P + (W - kQ)/p & \text{otherwise}
              \end{cases}        (the page labels this eq-cgr-throttle)

    Parameters
    ----------
    cpu_work_s : float
        Total CPU work :math:`W` (CPU-seconds), > 0.
    n_threads : int
        Runnable threads :math:`n` sharing the work evenly, >= 1.
    n_cores : int
        Cores the threads may run on, :math:`c` (the affinity mask), >= 1.
    quota_s, period_s : float
        Quota :math:`Q` per period :math:`P` (s); ``quota_s = math.inf`` for no quota.

    Returns
    -------
    float
        :math:`T` (s).

    Assumptions
    -----------
    The work starts at a period boundary with the full quota; the threads stay runnable and
    busy until the end (perfectly divisible work); no burst allowance (``cpu.max.burst`` = 0);
    the quota is charged exactly, without the per-CPU slices of the real scheduler; the cores
    are not shared with other groups.

    References
    ----------
    The throttling rule of ``sched-bwc.rst`` (quota per period, threads stopped until the next
    period once it is spent). Its "20 % of 1 CPU" example (10 ms per 50 ms) makes one
    CPU-second of single-threaded work take 4.96 s: 99 full periods and 10 ms more, close to
    the 5 s that the average of 0.2 CPU gives.

    Examples
    --------
    >>> round(throttled_wall_s(cpu_work_s=1.0, n_threads=1, n_cores=1, quota_s=0.01,
    ...                        period_s=0.05), 3)
    4.96
    >>> round(throttled_wall_s(cpu_work_s=0.4, n_threads=128, n_cores=128, quota_s=0.4,
    ...                        period_s=0.1), 5)
    0.00313
    """
    if quota_s != math.inf:
        _checks.finite_ratio("cpu_work_s", positive("cpu_work_s", cpu_work_s),
                             "quota_s", positive("quota_s", quota_s))
    w = positive("cpu_work_s", cpu_work_s)
    n = positive_int("n_threads", n_threads)
    c = positive_int("n_cores", n_cores)
    period = positive("period_s", period_s)
    p = min(n, c)
    if quota_s == math.inf:
        return w / p
    q = positive("quota_s", quota_s)
    if p * period <= q:
        return w / p
    # Full periods before the last: ceil(W/Q) - 1, with a guard against W/Q = 100.00000001.
    k = max(0, math.ceil(w / q * (1 - 1e-12)) - 1)
    return k * period + (w - k * q) / p


def throttle_slowdown(*, cpu_work_s: float, n_threads: int, n_cores: int, quota_s: float,
                      period_s: float) -> float:
    r"""How many times longer the work takes under the quota than without it (dimensionless):
    :math:`T / (W/p)`, from :func:`throttled_wall_s`.

    >>> round(throttle_slowdown(cpu_work_s=0.4, n_threads=128, n_cores=128, quota_s=0.4,
    ...                         period_s=0.1), 1)
    1.0
    >>> round(throttle_slowdown(cpu_work_s=4.0, n_threads=128, n_cores=128, quota_s=0.4,
    ...                         period_s=0.1), 1)
    28.9
    """
    t = throttled_wall_s(cpu_work_s=cpu_work_s, n_threads=n_threads, n_cores=n_cores,
                         quota_s=quota_s, period_s=period_s)
    p = min(positive_int("n_threads", n_threads), positive_int("n_cores", n_cores))
    return t * p / float(cpu_work_s)
