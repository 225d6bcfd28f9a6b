r"""Failures and checkpoints: cluster MTBF, lost work, Young's and Daly's intervals, goodput.

A job that runs on :math:`N` nodes whose failures are independent and exponential, each with a
mean time between failures :math:`M_\text{node}`, is interrupted at the rate of all of them
together, so the whole job sees

.. math::

    M = M_\text{node} / N                                       \qquad\text{(eq-ft-mtbf)}

A job checkpoints every :math:`\tau` seconds of useful work, each checkpoint costing
:math:`\delta`; after a failure it restarts (cost :math:`R`) from the last checkpoint and redoes
the work since. Young (1974) minimised the first-order waste :math:`\delta/\tau + \tau/(2M)`
and found :math:`\tau = \sqrt{2\delta M}`; Daly (2006) solved the complete model, in which
failures may also strike during checkpoints and restarts, whose expected wall time for a
solution time :math:`T_s` is

.. math::

    T_w(\tau) = M e^{R/M}\left(e^{(\tau + \delta)/M} - 1\right)\frac{T_s}{\tau}
                                                                 \qquad\text{(eq-ft-daly-wall)}

:mod:`helpers.sim.failures` simulates the same job failure by failure; the tests use it as the
oracle of :func:`expected_wall_time_s` and :func:`goodput`.

Introduced in {ref}`sec-fault-tolerance`.

References
----------
* Young, J. W. (1974), "A first order approximation to the optimum checkpoint interval",
  Communications of the ACM 17(9), 530-531.
* Daly, J. T. (2006), "A higher order estimate of the optimum checkpoint interval for restart
  dumps", Future Generation Computer Systems 22(3), 303-312: the complete cost function, its
  perturbation solution for the optimum, and figures 3-5 (M = 24 h, 6 h and 15 min with delta = 5 min and R = 10 min:
  tau_opt = 117, 57 and 9.1 min).
* Dubey, A. et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, section 3.3.4 and
  table 5: 419 unexpected interruptions in 54 days of pre-training on 16,384 H100 GPUs.

Used by: chapters/fault-tolerance.md, labs/checkpointing.md.
"""

from __future__ import annotations

import math

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int

__all__ = ["cluster_mtbf_s", "failure_probability", "expected_failures",
           "per_unit_mtbf_s", "expected_lost_work_s", "young_interval_s", "daly_interval_s",
           "expected_wall_time_s", "goodput", "first_order_goodput"]


def cluster_mtbf_s(node_mtbf_s: float, n_nodes: int) -> float:
    r"""Mean time between failures of a job on ``n_nodes`` nodes (s): :math:`M = M_\text{node}/N`.

    .. math::

        M = M_\text{node} / N     (the page labels this eq-ft-mtbf)

    Parameters
    ----------
    node_mtbf_s : float
        Mean time between failures of one node (or GPU), :math:`M_\text{node}` (s, > 0).
    n_nodes : int
        Number of nodes :math:`N` the job needs, all of them (>= 1).

    Returns
    -------
    float
        :math:`M`, the mean time between interruptions of the job (s).

    Assumptions
    -----------
    Failures of different nodes are independent and each node fails as a Poisson process (an
    exponential time between failures), so the job's failures are a Poisson process whose rate
    is the sum of the nodes' rates; one failure anywhere stops the whole synchronous job.

    References
    ----------
    Dubey et al. (2024), The Llama 3 Herd of Models, section 3.3.4.

    Examples
    --------
    A GPU that fails once in about five and a half years (48,000 h), times 16,384 GPUs, gives
    a job interrupted about every three hours:

    >>> round(cluster_mtbf_s(48_000 * 3600.0, 16_384) / 3600, 2)
    2.93
    """
    return _positive("node_mtbf_s", node_mtbf_s) / _positive_int("n_nodes", n_nodes)


def per_unit_mtbf_s(observed_s: float, n_failures: int, n_units: int) -> float:
    r"""Mean time between failures of one unit (s) from a fleet's count: :math:`N T / k`.

    .. math::

        M_\text{unit} = \frac{N\,T}{k}

    The maximum-likelihood estimate for exponential failures: ``n_units`` units watched for
    ``observed_s`` seconds failed ``n_failures`` times in all.

    References
    ----------
    Dubey et al. (2024), The Llama 3 Herd of Models, table 5 (419 unexpected interruptions,
    54 days, 16,384 GPUs).

    Examples
    --------
    >>> round(per_unit_mtbf_s(54 * 86400.0, 419, 16_384) / (86400 * 365), 1)
    5.8
    """
    t = _positive("observed_s", observed_s)
    k = _positive_int("n_failures", n_failures)
    return _positive_int("n_units", n_units) * t / k


def failure_probability(duration_s: float, mtbf_s: float) -> float:
    r"""Probability (dimensionless) of at least one failure in ``duration_s``: :math:`1 - e^{-T/M}`.

    .. math::

        P(\text{failure within } T) = 1 - e^{-T/M}     (the page labels this eq-ft-mtbf)

    References
    ----------
    Young (1974), CACM 17(9): failures as a Poisson process.

    Examples
    --------
    A job as long as its MTBF fails at least once with probability 1 - 1/e:

    >>> round(failure_probability(3600.0, 3600.0), 3)
    0.632
    """
    t = _positive("duration_s", duration_s, allow_zero=True)
    return -math.expm1(-t / _positive("mtbf_s", mtbf_s))


def expected_failures(duration_s: float, mtbf_s: float) -> float:
    r"""Expected number of failures (dimensionless) in ``duration_s`` of running: :math:`T/M`.

    .. math::

        E[k] = T / M

    References
    ----------
    Young (1974), CACM 17(9).

    Examples
    --------
    >>> expected_failures(54 * 24 * 3600.0, 3 * 3600.0)
    432.0
    """
    return (_positive("duration_s", duration_s, allow_zero=True)
            / _positive("mtbf_s", mtbf_s))


def expected_lost_work_s(interval_s: float, restart_s: float = 0.0) -> float:
    r"""Expected time lost to one failure (s), to first order: :math:`\tau/2 + R`.

    .. math::

        t_\text{lost} = \frac{\tau}{2} + R     (the page labels this eq-ft-lost)

    A failure strikes, on average, halfway through the interval since the last checkpoint, so
    half an interval of work is redone, plus the restart.

    Assumptions
    -----------
    First order: the interval is short beside the MTBF (:math:`\tau \ll M`), so failures are
    spread evenly over an interval; Daly's complete model (:func:`expected_wall_time_s`) drops
    this assumption.

    References
    ----------
    Young (1974), CACM 17(9); Daly (2006), FGCS 22(3), section 2.

    Examples
    --------
    Checkpointing every 30 minutes with a 10-minute restart loses 25 minutes per failure:

    >>> expected_lost_work_s(1800.0, 600.0) / 60
    25.0
    """
    return (_positive("interval_s", interval_s) / 2
            + _positive("restart_s", restart_s, allow_zero=True))


def young_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    r"""Young's optimum compute time between checkpoints (s): :math:`\tau = \sqrt{2\delta M}`.

    .. math::

        \tau_\text{Young} = \sqrt{2\,\delta\,M}     (the page labels this eq-ft-young)

    Parameters
    ----------
    checkpoint_s : float
        Time to write one checkpoint, :math:`\delta` (s, > 0).
    mtbf_s : float
        Mean time between failures of the job, :math:`M` (s, > 0).

    Assumptions
    -----------
    Minimises the first-order waste per unit of work, :math:`\delta/\tau + \tau/(2M)`;
    accurate when :math:`\delta \ll M`.

    References
    ----------
    Young (1974), CACM 17(9), 530-531.

    Examples
    --------
    A 5-minute checkpoint with a 24-hour MTBF (Daly's figure 3): every 120 minutes.

    >>> young_interval_s(300.0, 86400.0) / 60
    120.0
    """
    return math.sqrt(2 * _positive("checkpoint_s", checkpoint_s) * _positive("mtbf_s", mtbf_s))


def daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    r"""Daly's higher-order optimum compute time between checkpoints (s).

    .. math::

        \tau_\text{Daly} = \sqrt{2\delta M}\left[1 + \tfrac{1}{3}\sqrt{\tfrac{\delta}{2M}}
            + \tfrac{1}{9}\tfrac{\delta}{2M}\right] - \delta \quad (\delta < 2M),
        \qquad \tau_\text{Daly} = M \quad (\delta \ge 2M)

    Parameters
    ----------
    checkpoint_s : float
        Time to write one checkpoint, :math:`\delta` (s, > 0).
    mtbf_s : float
        Mean time between failures of the job, :math:`M` (s, > 0).

    Assumptions
    -----------
    Poisson failures, also during checkpoints and restarts; the restart time does not change
    the optimum. A perturbation solution of the minimum of :func:`expected_wall_time_s`.

    References
    ----------
    Daly (2006), FGCS 22(3), the perturbation solution; figures 3-5 give 117, 57 and 9.1 minutes for
    M = 24 h, 6 h and 15 min with a 5-minute checkpoint.

    Examples
    --------
    >>> [round(daly_interval_s(300.0, m * 60) / 60, 1) for m in (1440, 360, 15)]
    [116.7, 56.7, 9.1]
    """
    d = _positive("checkpoint_s", checkpoint_s)
    m = _positive("mtbf_s", mtbf_s)
    if d >= 2 * m:
        return m
    x = d / (2 * m)
    return math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d


def expected_wall_time_s(work_s: float, interval_s: float, checkpoint_s: float,
                         restart_s: float, mtbf_s: float) -> float:
    r"""Expected wall time (s) of ``work_s`` of computation under Poisson failures (Daly).

    .. math::

        T_w = M e^{R/M}\left(e^{(\tau + \delta)/M} - 1\right)\frac{T_s}{\tau}     (the page labels this eq-ft-daly-wall)

    Parameters
    ----------
    work_s : float
        Solution time :math:`T_s`: the useful computation, failure-free and checkpoint-free (s).
    interval_s : float
        Compute time between checkpoints, :math:`\tau` (s, > 0).
    checkpoint_s : float
        Time to write a checkpoint, :math:`\delta` (s, >= 0).
    restart_s : float
        Time from a failure to computing again, :math:`R` (s, >= 0).
    mtbf_s : float
        Mean time between failures, :math:`M` (s, > 0).

    Returns
    -------
    float
        :math:`T_w`, the expected wall time.

    Assumptions
    -----------
    The work is :math:`T_s/\tau` segments, each of :math:`\tau` compute followed by a
    checkpoint; failures are a Poisson process at rate :math:`1/M` at all times, including
    during checkpoints and restarts; a failure loses the segment in progress, and each restart
    starts from the last completed checkpoint. Exact for this model when :math:`T_s/\tau`
    is an integer.

    References
    ----------
    Daly (2006), FGCS 22(3), the complete cost function.

    Examples
    --------
    With no failures in sight (M very large) only the checkpoints cost time:

    >>> round(expected_wall_time_s(100.0, 10.0, 1.0, 5.0, 1e12), 6)
    110.0
    """
    ts = _positive("work_s", work_s, allow_zero=True)
    tau = _positive("interval_s", interval_s)
    d = _positive("checkpoint_s", checkpoint_s, allow_zero=True)
    r = _positive("restart_s", restart_s, allow_zero=True)
    m = _positive("mtbf_s", mtbf_s)
    try:
        return m * math.exp(r / m) * math.expm1((tau + d) / m) * ts / tau
    except OverflowError:
        raise ValueError(f"restart_s / mtbf_s and (interval_s + checkpoint_s) / mtbf_s must be "
                         f"small enough for exp() (below about 709), got restart_s={r!r}, "
                         f"interval_s={tau!r}, checkpoint_s={d!r}, mtbf_s={m!r}") from None


def goodput(interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    r"""Goodput (dimensionless): the share of wall time spent on useful work, :math:`T_s/T_w`.

    .. math::

        G = \frac{T_s}{T_w} = \frac{\tau}{M e^{R/M}\left(e^{(\tau + \delta)/M} - 1\right)}

    References
    ----------
    Daly (2006), FGCS 22(3), the complete cost function.

    Examples
    --------
    Daly's figure 3 at its optimum (M = 24 h, delta = 5 min, R = 10 min, tau = 117 min):

    >>> round(goodput(117 * 60.0, 300.0, 600.0, 86400.0), 3)
    0.913
    """
    tau = _positive("interval_s", interval_s)
    return tau / expected_wall_time_s(tau, tau, checkpoint_s, restart_s, mtbf_s)


def first_order_goodput(interval_s: float, checkpoint_s: float, restart_s: float,
                        mtbf_s: float) -> float:
    r"""Goodput (dimensionless) to first order: one minus the wasted fractions, Young's model.

    .. math::

        G_1 = 1 - \frac{\delta}{\tau} - \frac{\tau/2 + R}{M}

    Clipped at 0. Accurate when :math:`\delta, \tau, R \ll M`; it is the expression Young
    minimised, and it overestimates the goodput as the interval approaches the MTBF.

    References
    ----------
    Young (1974), CACM 17(9).

    Examples
    --------
    >>> round(first_order_goodput(7200.0, 300.0, 600.0, 86400.0), 4)
    0.9097
    """
    tau = _positive("interval_s", interval_s)
    d = _positive("checkpoint_s", checkpoint_s, allow_zero=True)
    r = _positive("restart_s", restart_s, allow_zero=True)
    m = _positive("mtbf_s", mtbf_s)
    return max(0.0, 1 - d / tau - (tau / 2 + r) / m)
