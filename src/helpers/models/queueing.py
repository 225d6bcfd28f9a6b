r"""Queues: Little's law, utilization, and the M/M/1 (and M/G/1) waiting-time formulas.

Little's law relates three long-run averages of any stable system that items enter and leave:

.. math::

    L = \lambda W                                                \qquad\text{(eq-little)}

(mean number inside = arrival rate x mean time inside). It needs no assumption about the
arrival or service distributions. The M/M/1 queue adds assumptions (Poisson arrivals at rate
:math:`\lambda`, exponential service at rate :math:`\mu`, one server, first come first served)
and in exchange gives whole distributions. With utilization :math:`\rho = \lambda/\mu < 1`:

.. math::

    W = \frac{1/\mu}{1 - \rho}, \qquad
    P(T > t) = e^{-(\mu - \lambda) t}                            \qquad\text{(eq-mm1-mean, eq-mm1-tail)}

so the mean and every percentile of the time in system grow without bound as :math:`\rho \to 1`.
:mod:`helpers.sim.queue` simulates the same queue event by event; the tests use it as an
oracle for every formula here.

Introduced in {ref}`sec-performance-models`.

References
----------
* Little, J. D. C. (1961), "A proof for the queuing formula: L = lambda W", Operations
  Research 9(3), 383-387.
* Little, J. D. C. and Graves, S. C. (2008), "Little's Law", chapter 5 of *Building
  Intuition* (Chhajed and Lowe, eds.), Springer: the wine-cellar example (160 bottles,
  8 bought a month: about 1.67 years in the cellar).
* Kleinrock, L. (1975), *Queueing Systems, Volume 1: Theory*, Wiley: section 3.2 (M/M/1,
  mean number and mean time in system) and chapter 5 (M/G/1: the Pollaczek-Khinchin mean
  value formula, and the exponential system-time distribution of M/M/1 as its special case).
* Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
  Approach*, 5th ed., appendix D.5 (queuing theory): a disk serving 40 I/Os per second with a
  20 ms service time is 80 % utilized, waits 80 ms in the queue and responds in 100 ms.
"""

from __future__ import annotations

import math

from ._checks import positive as _positive

__all__ = [
    "little_number_in_system", "little_arrival_rate_per_s", "little_time_in_system_s",
    "utilization", "mm1_mean_number_in_system", "mm1_mean_number_in_queue",
    "mm1_mean_time_in_system_s", "mm1_mean_wait_s", "mm1_time_in_system_percentile_s",
    "mm1_wait_percentile_s", "mm1_max_arrival_rate_per_s", "mg1_mean_wait_s",
]



def _percentile(value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and 0 <= value < 100):
        raise ValueError(f"percentile must be in [0, 100), got {value!r}")
    return value


def _rho(arrival_rate_per_s: float, service_rate_per_s: float) -> tuple[float, float, float]:
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    rho = lam / mu
    if rho >= 1:
        raise ValueError(
            f"utilization arrival_rate_per_s / service_rate_per_s must be in [0, 1) for a "
            f"stable queue, got {lam!r} / {mu!r} = {rho!r}"
        )
    return lam, mu, rho


# --- Little's law ------------------------------------------------------------------------

def little_number_in_system(arrival_rate_per_s: float, time_in_system_s: float) -> float:
    r"""Mean number of items in a system (dimensionless), by Little's law: :math:`L = \lambda W`.

    Parameters
    ----------
    arrival_rate_per_s : float
        Long-run arrival rate :math:`\lambda` (items/s, >= 0).
    time_in_system_s : float
        Mean time an item spends inside, :math:`W` (s, >= 0).

    Returns
    -------
    float
        :math:`L`, the time-averaged number inside.

    Assumptions
    -----------
    The system is stable (long-run arrival rate equals departure rate) and the averages
    exist; nothing is assumed about distributions, the number of servers or the order of
    service.

    References
    ----------
    Little (1961), Operations Research 9(3).

    Examples
    --------
    Requests arriving at 20 per second that each take 2.5 s keep 50 in flight:

    >>> little_number_in_system(20.0, 2.5)
    50.0
    """
    return (_positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
            * _positive("time_in_system_s", time_in_system_s, allow_zero=True))


def little_arrival_rate_per_s(number_in_system: float, time_in_system_s: float) -> float:
    r"""Arrival rate (items/s) from Little's law: :math:`\lambda = L / W`.

    Examples
    --------
    >>> little_arrival_rate_per_s(50.0, 2.5)
    20.0
    """
    return (_positive("number_in_system", number_in_system, allow_zero=True)
            / _positive("time_in_system_s", time_in_system_s))


def little_time_in_system_s(number_in_system: float, arrival_rate_per_s: float) -> float:
    r"""Mean time in system (s) from Little's law: :math:`W = L / \lambda`.

    Examples
    --------
    Little and Graves's wine cellar: 160 bottles on average, 96 bought a year, so a bottle
    stays about 1.67 years:

    >>> round(little_time_in_system_s(160.0, 96.0), 2)
    1.67
    """
    return (_positive("number_in_system", number_in_system, allow_zero=True)
            / _positive("arrival_rate_per_s", arrival_rate_per_s))


# --- Utilization -------------------------------------------------------------------------

def utilization(arrival_rate_per_s: float, mean_service_s: float) -> float:
    r"""Fraction of time (dimensionless) a single server is busy: :math:`\rho = \lambda\,E[S]`.

    This is Little's law applied to the server alone (at most one item in service).

    Raises ``ValueError`` when :math:`\rho \ge 1`: work then arrives faster than the server
    can do it, the queue grows without bound and no steady state exists.

    Examples
    --------
    >>> round(utilization(40.0, 0.020), 6)
    0.8
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    s = _positive("mean_service_s", mean_service_s)
    rho = lam * s
    if rho >= 1:
        raise ValueError(f"utilization arrival_rate_per_s * mean_service_s must be in [0, 1) "
                         f"for a stable queue, got {lam!r} * {s!r} = {rho!r}")
    return rho


# --- M/M/1 -------------------------------------------------------------------------------

def mm1_mean_number_in_system(arrival_rate_per_s: float, service_rate_per_s: float) -> float:
    r"""Mean number in an M/M/1 system (dimensionless): :math:`\rho / (1 - \rho)`.

    References
    ----------
    Kleinrock (1975), section 3.2.

    Examples
    --------
    >>> round(mm1_mean_number_in_system(40.0, 50.0), 6)
    4.0
    """
    _, _, rho = _rho(arrival_rate_per_s, service_rate_per_s)
    return rho / (1.0 - rho)


def mm1_mean_number_in_queue(arrival_rate_per_s: float, service_rate_per_s: float) -> float:
    r"""Mean number waiting (not in service) in an M/M/1 queue: :math:`\rho^2 / (1 - \rho)`.

    Examples
    --------
    Hennessy and Patterson's disk (40 I/Os per second, 20 ms each) has 3.2 requests waiting:

    >>> round(mm1_mean_number_in_queue(40.0, 50.0), 6)
    3.2
    """
    _, _, rho = _rho(arrival_rate_per_s, service_rate_per_s)
    return rho * rho / (1.0 - rho)


def mm1_mean_time_in_system_s(arrival_rate_per_s: float, service_rate_per_s: float) -> float:
    r"""Mean time (s) an item spends in an M/M/1 system, waiting plus service.

    .. math:: W = \frac{1/\mu}{1 - \rho} = \frac{1}{\mu - \lambda}     (the page labels this eq-mm1-mean)

    Parameters
    ----------
    arrival_rate_per_s : float
        Poisson arrival rate :math:`\lambda` (items/s, >= 0).
    service_rate_per_s : float
        Service rate :math:`\mu` (items/s, > 0): the mean service time is :math:`1/\mu`.

    Returns
    -------
    float
        :math:`W` (s).

    Assumptions
    -----------
    Poisson arrivals, independent exponential service times, one server, first come first
    served, unlimited waiting room, steady state (:math:`\rho = \lambda/\mu < 1`).

    References
    ----------
    Kleinrock (1975), section 3.2.

    Examples
    --------
    Hennessy and Patterson's disk, 40 I/Os per second at 20 ms each, responds in 100 ms:

    >>> round(mm1_mean_time_in_system_s(40.0, 50.0) * 1e3, 6)
    100.0
    """
    lam, mu, _ = _rho(arrival_rate_per_s, service_rate_per_s)
    return 1.0 / (mu - lam)


def mm1_mean_wait_s(arrival_rate_per_s: float, service_rate_per_s: float) -> float:
    r"""Mean time (s) an item waits in an M/M/1 queue before service starts: :math:`\rho/(\mu - \lambda)`.

    Examples
    --------
    >>> round(mm1_mean_wait_s(40.0, 50.0) * 1e3, 6)
    80.0
    """
    lam, mu, rho = _rho(arrival_rate_per_s, service_rate_per_s)
    return rho / (mu - lam)


def mm1_time_in_system_percentile_s(percentile: float, arrival_rate_per_s: float,
                                    service_rate_per_s: float) -> float:
    r"""The given percentile (s) of the time in an M/M/1 system.

    The time in system is exponential with rate :math:`\mu - \lambda`, so
    :math:`P(T > t) = e^{-(\mu-\lambda)t}` and the :math:`p`-th percentile is

    .. math:: t_p = \frac{-\ln(1 - p/100)}{\mu - \lambda}     (the page labels this eq-mm1-tail)

    Parameters
    ----------
    percentile : float
        :math:`p` in [0, 100), e.g. 99 for the p99.
    arrival_rate_per_s, service_rate_per_s : float
        :math:`\lambda` and :math:`\mu` as in :func:`mm1_mean_time_in_system_s`.

    Returns
    -------
    float
        :math:`t_p` (s).

    Assumptions
    -----------
    As :func:`mm1_mean_time_in_system_s`, first come first served.

    References
    ----------
    Kleinrock (1975), chapter 5 (the M/M/1 system-time distribution as the exponential
    special case of M/G/1).

    Examples
    --------
    The p99 is :math:`\ln 100 \approx 4.6` times the mean:

    >>> round(mm1_time_in_system_percentile_s(99, 40.0, 50.0) * 1e3, 1)
    460.5
    """
    p = _percentile(percentile)
    lam, mu, _ = _rho(arrival_rate_per_s, service_rate_per_s)
    return -math.log1p(-p / 100.0) / (mu - lam)


def mm1_wait_percentile_s(percentile: float, arrival_rate_per_s: float,
                          service_rate_per_s: float) -> float:
    r"""The given percentile (s) of the wait before service in an M/M/1 queue.

    An arrival finds the server idle with probability :math:`1-\rho` and then waits zero;
    otherwise its wait is exponential with rate :math:`\mu - \lambda`, so
    :math:`P(W_q > t) = \rho\,e^{-(\mu-\lambda)t}` and

    .. math:: w_p = \max\!\left(0,\ \frac{\ln\big(\rho / (1 - p/100)\big)}{\mu - \lambda}\right)

    Examples
    --------
    At 40 % utilization more than half of all arrivals do not wait at all:

    >>> mm1_wait_percentile_s(50, 40.0, 100.0)
    0.0
    """
    p = _percentile(percentile)
    lam, mu, rho = _rho(arrival_rate_per_s, service_rate_per_s)
    if rho == 0:
        return 0.0
    return max(0.0, math.log(rho / (1.0 - p / 100.0)) / (mu - lam))


def mm1_max_arrival_rate_per_s(service_rate_per_s: float, target_s: float,
                               percentile: float | None = None) -> float:
    r"""Largest arrival rate (items/s) at which an M/M/1 queue meets a latency target.

    For the mean, solve :math:`1/(\mu - \lambda) \le T` for :math:`\lambda`; for the
    :math:`p`-th percentile, solve eq-mm1-tail:

    .. math:: \lambda_{\max} = \mu - \frac{-\ln(1 - p/100)}{T}

    Raises ``ValueError`` if the target is unreachable even with no load (the target is
    shorter than the corresponding statistic of a lone service time).

    Examples
    --------
    A server that takes 20 ms per item and must keep the mean time in system under 100 ms
    can take 40 items per second:

    >>> round(mm1_max_arrival_rate_per_s(50.0, 0.100), 6)
    40.0
    """
    mu = _positive("service_rate_per_s", service_rate_per_s)
    target = _positive("target_s", target_s)
    k = 1.0 if percentile is None else -math.log1p(-_percentile(percentile) / 100.0)
    lam = mu - k / target
    if lam <= 0:
        raise ValueError(f"target_s must exceed {k / mu!r} s (the unloaded value) for "
                         f"service_rate_per_s={mu!r}, got {target!r}")
    return lam


# --- M/G/1 -------------------------------------------------------------------------------

def mg1_mean_wait_s(arrival_rate_per_s: float, mean_service_s: float,
                    service_scv: float) -> float:
    r"""Mean wait (s) before service in an M/G/1 queue: the Pollaczek-Khinchin formula.

    .. math:: W_q = \frac{\rho\,E[S]\,(1 + c_s^2)}{2\,(1 - \rho)}

    Parameters
    ----------
    arrival_rate_per_s : float
        Poisson arrival rate :math:`\lambda` (items/s, >= 0).
    mean_service_s : float
        Mean service time :math:`E[S]` (s, > 0).
    service_scv : float
        Squared coefficient of variation of the service time, :math:`c_s^2 =
        \mathrm{Var}[S]/E[S]^2` (>= 0): 1 for exponential (M/M/1), 0 for constant (M/D/1).

    Returns
    -------
    float
        :math:`W_q` (s).

    Assumptions
    -----------
    Poisson arrivals, independent identically distributed service times, one server, first
    come first served, :math:`\rho = \lambda E[S] < 1`.

    References
    ----------
    Kleinrock (1975), chapter 5, the Pollaczek-Khinchin mean value formula.

    Examples
    --------
    Constant service times halve the M/M/1 wait:

    >>> round(mg1_mean_wait_s(40.0, 0.020, 0.0) * 1e3, 6)
    40.0
    """
    rho = utilization(arrival_rate_per_s, mean_service_s)
    scv = _positive("service_scv", service_scv, allow_zero=True)
    return rho * float(mean_service_s) * (1.0 + scv) / (2.0 * (1.0 - rho))
