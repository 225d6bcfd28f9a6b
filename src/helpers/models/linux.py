r"""Linux limits and signals as an inference server meets them: descriptors, CPU time, shutdown.

Three small models, each about a mechanism the operating system applies to a serving process
whether or not its authors thought about it:

* **File descriptors.** Every open connection, file, pipe and socket costs one descriptor, and
  the soft ``RLIMIT_NOFILE`` limit caps them: :func:`connection_capacity`.
* **CPU time.** The kernel charges a process's user and system time in clock ticks
  (``/proc/<pid>/stat`` fields 14 and 15); divided by wall time it is the utilization that
  ``top`` shows: :func:`ticks_to_s`, :func:`cpu_utilization`.
* **Shutdown.** ``SIGTERM`` asks a process to stop, ``SIGKILL`` stops it. A server that drains
  (stops accepting, finishes what it holds) exits after its longest in-flight request; one that is
  killed loses the work done on every request it held: :func:`graceful_exit_s`,
  :func:`killed_work_s`.

Introduced in {ref}`sec-linux-for-inference`.

References
----------
* Kerrisk, M. (2010), *The Linux Programming Interface*, No Starch Press: chapter 36 (process
  resources: ``RLIMIT_NOFILE``), chapters 20-22 (signals; ``SIGKILL`` cannot be caught).
* The Linux man-pages project, ``getrlimit(2)`` (``RLIMIT_NOFILE``: "a value one greater than
  the maximum file descriptor number that can be opened") and ``proc_pid_stat(5)`` (``utime`` and
  ``stime`` in clock ticks, ``sysconf(_SC_CLK_TCK)``).
* Kubernetes documentation, "Termination of Pods": ``SIGTERM``, then
  ``SIGKILL`` after a grace period of 30 seconds by default.

Used by: foundations/linux-for-inference.md.
"""

from __future__ import annotations

import math
from typing import Sequence

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = ["connection_capacity", "ticks_to_s", "cpu_utilization", "graceful_exit_s",
           "killed_work_s", "K8S_GRACE_S", "STD_STREAMS"]

#: Kubernetes' default grace period between SIGTERM and SIGKILL (documentation: Termination of Pods).
K8S_GRACE_S = 30.0
#: Descriptors every process starts with: stdin, stdout, stderr.
STD_STREAMS = 3


def connection_capacity(nofile_soft: int, fds_in_use: int, fds_per_connection: int = 1) -> int:
    r"""Connections a process can still open before ``open``/``accept`` fail with ``EMFILE``.

    .. math:: C = \left\lfloor \frac{L_{\mathrm{nofile}} - D_{\mathrm{used}}}{d} \right\rfloor

    Parameters
    ----------
    nofile_soft : int
        The soft ``RLIMIT_NOFILE`` limit :math:`L_{\mathrm{nofile}}` (``ulimit -n``), >= 1.
    fds_in_use : int
        Descriptors already open, :math:`D_{\mathrm{used}}` (at least the three standard streams
        in a normal process; model files, logs, the listening socket...), 0 <= D <= L.
    fds_per_connection : int
        Descriptors each connection holds, :math:`d` (1 for a plain socket; more if each
        request also opens a file or a pipe to a worker).

    Returns
    -------
    int
        :math:`C`, the connections that still fit.

    Assumptions
    -----------
    The kernel hands out the lowest free descriptor number and refuses any number at or above
    the soft limit, so the count of free slots is the limit minus the descriptors in use; no
    descriptor is closed meanwhile.

    References
    ----------
    ``getrlimit(2)``, ``RLIMIT_NOFILE``; Kerrisk (2010) section 36.3.

    >>> connection_capacity(1024, 3)
    1021
    """
    limit = _positive_int("nofile_soft", nofile_soft)
    used = _positive_int("fds_in_use", fds_in_use, minimum=0)
    per = _positive_int("fds_per_connection", fds_per_connection)
    if used > limit:
        raise ValueError(f"fds_in_use ({used}) cannot exceed the limit ({limit})")
    return (limit - used) // per


def ticks_to_s(ticks: int, clk_tck: int = 100) -> float:
    r"""Seconds of CPU time from clock ticks as ``/proc/<pid>/stat`` reports them.

    .. math:: t = n_{\mathrm{ticks}} / f_{\mathrm{tck}}

    Parameters
    ----------
    ticks : int
        ``utime + stime`` (fields 14 and 15), >= 0.
    clk_tck : int
        Ticks per second, ``sysconf(_SC_CLK_TCK)`` (USER_HZ, 100 on Linux), >= 1.

    Returns
    -------
    float
        CPU seconds.

    References
    ----------
    ``proc_pid_stat(5)``: utime and stime "measured in clock ticks (divide by
    sysconf(_SC_CLK_TCK))".

    >>> ticks_to_s(250)
    2.5
    """
    n = _positive_int("ticks", ticks, minimum=0)
    return n / _positive_int("clk_tck", clk_tck)


def cpu_utilization(cpu_s: float, wall_s: float) -> float:
    r"""CPU utilization of a process: CPU seconds charged per second of wall time.

    .. math:: U = \frac{t_{\mathrm{user}} + t_{\mathrm{sys}}}{T_{\mathrm{wall}}}

    One busy thread gives :math:`U = 1`; :math:`n` busy threads give :math:`U = n` (``top``
    shows it as :math:`100n` percent).

    Parameters
    ----------
    cpu_s : float
        User plus system CPU time over the interval, >= 0.
    wall_s : float
        Length of the interval, > 0.

    Returns
    -------
    float
        :math:`U`.

    References
    ----------
    ``proc_pid_stat(5)`` (utime, stime); Kerrisk (2010) section 10.7 (process time).

    >>> cpu_utilization(0.5, 2.0)
    0.25
    """
    cpu = _positive("cpu_s", cpu_s, allow_zero=True)
    return cpu / _positive("wall_s", wall_s)


def _remaining(values: Sequence[float], name: str) -> list[float]:
    out = [float(v) for v in values]
    if any(not math.isfinite(v) or v < 0 for v in out):
        raise ValueError(f"{name} must be finite and >= 0, got {values!r}")
    return out


def graceful_exit_s(remaining_s: Sequence[float], grace_s: float | None = K8S_GRACE_S) -> float:
    r"""Time from ``SIGTERM`` to exit for a server that drains: its longest in-flight request,
    unless the grace period ends first and ``SIGKILL`` follows.

    .. math:: T_{\mathrm{exit}} = \min\!\left(\max_i r_i,\ G\right)

    Parameters
    ----------
    remaining_s : sequence of float
        Service time left of each request in flight when the signal arrives, :math:`r_i \ge 0`
        (empty: nothing in flight).
    grace_s : float or None
        Grace period :math:`G` before the orchestrator sends ``SIGKILL`` (> 0); None for no
        deadline (the time the drain needs).

    Returns
    -------
    float
        :math:`T_{\mathrm{exit}}` in seconds (the process's own exit cost is neglected).

    Assumptions
    -----------
    The handler stops accepting at once and in-flight requests proceed in parallel, so the last
    one to finish decides; requests are not cut short on purpose.

    References
    ----------
    Kubernetes, "Termination of Pods" (SIGTERM, grace period, SIGKILL);
    Kerrisk (2010) chapter 20.

    >>> graceful_exit_s([0.2, 1.5, 0.7])
    1.5
    """
    _checks.positive_array("remaining_s", _checks.sequence("remaining_s", remaining_s),
                           allow_zero=True)
    r = _remaining(remaining_s, "remaining_s")
    need = max(r, default=0.0)
    return need if grace_s is None else min(need, _positive("grace_s", grace_s))


def killed_work_s(elapsed_s: Sequence[float]) -> float:
    r"""Work thrown away when a server is killed (``SIGKILL``, or a drain cut by the grace
    period): the service time already spent on every request it held.

    .. math:: W_{\mathrm{lost}} = \sum_i e_i

    Parameters
    ----------
    elapsed_s : sequence of float
        Service time already spent on each in-flight request, :math:`e_i \ge 0`.

    Returns
    -------
    float
        :math:`W_{\mathrm{lost}}` in seconds of service; each of those requests also has to be
        retried from the start by its client.

    References
    ----------
    Kerrisk (2010) section 20.2 (``SIGKILL`` cannot be caught, blocked or ignored).

    >>> killed_work_s([0.3, 0.1])
    0.4
    """
    _checks.positive_array("elapsed_s", _checks.sequence("elapsed_s", elapsed_s), allow_zero=True)
    return float(sum(_remaining(elapsed_s, "elapsed_s")))
