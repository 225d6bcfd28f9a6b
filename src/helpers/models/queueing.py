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

With :math:`c` identical servers fed by one first-come-first-served queue (M/M/c), an arrival
waits only when all :math:`c` are busy, which happens with the Erlang C probability
:math:`C(c, a)` of the offered load :math:`a = \lambda/\mu` (in erlangs); the wait, when there
is one, is exponential with rate :math:`c\mu - \lambda`:

.. math::

    P(W_q > t) = C(c, a)\, e^{-(c\mu - \lambda) t}                 \qquad\text{(eq-erlang-c-tail)}

A bounded queue (M/M/c/K: at most :math:`K` requests inside, the rest turned away) is always
stable; it trades a blocking probability for a bounded wait. That is admission control.
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
* Harchol-Balter, M. (2013), *Performance Modeling and Design of Computer Systems*,
  Cambridge University Press, chapter 14 (M/M/k: the Erlang C formula, the mean wait
  :math:`C/(k\mu - \lambda)`, and M/M/k/k blocking, Erlang B).
* Kleinrock (1975), section 3.5 (M/M/m) and 3.6-3.7 (finite storage, M/M/m/K).
* ErlangC R package 0.1.0 (Damonsoul), its README example: 100 calls per 30 minutes of
  180 s each on 14 agents, a wait probability of 0.1741319, a service level (answered within
  20 s) of 0.88835 and a mean wait of 7.836 s.
* Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
  Approach*, 5th ed., appendix D.5 (queuing theory): a disk serving 40 I/Os per second with a
  20 ms service time is 80 % utilized, waits 80 ms in the queue and responds in 100 ms.

Used by: chapters/performance-models.md, chapters/production-inference.md, labs/load.md.
"""

from __future__ import annotations

import math

from ._checks import positive as _positive
from . import _checks

MAX_SERVERS = 10**6  # the Erlang recurrences run once per server: a bigger count would hang

__all__ = [
    "little_number_in_system", "little_arrival_rate_per_s", "little_time_in_system_s",
    "utilization", "mm1_mean_number_in_system", "mm1_mean_number_in_queue",
    "mm1_mean_time_in_system_s", "mm1_mean_wait_s", "mm1_time_in_system_percentile_s",
    "mm1_wait_percentile_s", "mm1_max_arrival_rate_per_s", "mg1_mean_wait_s",
    "erlang_b", "erlang_c", "mmc_mean_wait_s", "mmc_mean_time_in_system_s",
    "mmc_wait_percentile_s", "mmc_wait_attainment", "mgc_mean_wait_s",
    "mmck_state_probabilities", "mmck_blocking_probability", "mmck_wait_attainment",
    "mmc_servers_needed", "erlang_c_max_load", "mmc_max_arrival_rate_per_s",
]

#: The inverses bisect over the Erlang recurrence (once per server per step): a bound on the
#: servers keeps one call well under a second.
MAX_INVERSE_SERVERS = 10**4



def _percentile(value: float) -> float:
    v = _checks.as_float(value)
    if v is None:  # None, a bool, a string: the wrong type
        raise ValueError(f"percentile must be in [0, 100), got {value!r}")
    value = v
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


# --- c servers: Erlang B and C, M/M/c, M/M/c/K -------------------------------------------

def _servers(servers, name: str = "servers") -> int:
    if isinstance(servers, bool) or not isinstance(servers, (int,)) and not (
            isinstance(servers, float) and servers.is_integer()):
        raise ValueError(f"{name} must be a whole number >= 1, got {servers!r}")
    c = int(servers)
    if c < 1:
        raise ValueError(f"{name} must be >= 1, got {servers!r}")
    _checks.at_most(name, c, MAX_SERVERS, "the recurrences run once per server")
    return c


def _stable_mmc(arrival_rate_per_s, service_rate_per_s, servers) -> tuple[float, float, int, float]:
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _servers(servers)
    if lam >= c * mu:
        raise ValueError(
            f"arrival_rate_per_s must be below servers * service_rate_per_s = {c * mu!r} for a "
            f"stable M/M/c queue, got {lam!r} (utilization {lam / (c * mu)!r}); bound the queue "
            f"(mmck_*) or add servers")
    return lam, mu, c, lam / mu


def erlang_b(servers: int, offered_load: float) -> float:
    r"""Probability (dimensionless) that an arrival finds all ``servers`` busy in an M/M/c/c
    system, which has no waiting room and turns it away: the Erlang B formula.

    .. math:: B(c, a) = \frac{a^c / c!}{\sum_{k=0}^{c} a^k / k!}

    evaluated with the stable recursion :math:`B(0) = 1`, :math:`B(k) = a B(k-1) / (k + a
    B(k-1))`.

    Parameters
    ----------
    servers : int
        :math:`c` (>= 1).
    offered_load : float
        :math:`a = \lambda / \mu` in erlangs (>= 0): the mean number of busy servers if none
        were ever short.

    Returns
    -------
    float
        :math:`B(c, a)` in [0, 1).

    References
    ----------
    Harchol-Balter (2013), chapter 14 (M/M/k/k); Kleinrock (1975), section 3.6.

    Examples
    --------
    >>> round(erlang_b(1, 1.0), 6)
    0.5
    """
    c = _servers(servers)
    a = _positive("offered_load", offered_load, allow_zero=True)
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def erlang_c(servers: int, offered_load: float) -> float:
    r"""Probability (dimensionless) that an arrival must wait in an M/M/c queue: Erlang C.

    .. math:: C(c, a) = \frac{\dfrac{a^c}{c!}\dfrac{c}{c - a}}{\sum_{k=0}^{c-1} \dfrac{a^k}{k!}
        + \dfrac{a^c}{c!}\dfrac{c}{c - a}} = \frac{c\,B(c, a)}{c - a\,(1 - B(c, a))}

    (the page labels this eq-erlang-c). It is the probability that all :math:`c` servers are
    busy, which by PASTA (Poisson arrivals see time averages) is what an arrival finds.

    Parameters
    ----------
    servers : int
        :math:`c` (>= 1).
    offered_load : float
        :math:`a = \lambda/\mu` in erlangs, with :math:`0 \le a < c` (each server's
        utilization :math:`\rho = a/c < 1`).

    Returns
    -------
    float
        :math:`C(c, a)` in [0, 1); for one server it is :math:`\rho`.

    Assumptions
    -----------
    Poisson arrivals, independent exponential service times, :math:`c` identical servers
    fed by one first-come-first-served queue with unlimited room, steady state.

    References
    ----------
    Harchol-Balter (2013), chapter 14; ErlangC R package 0.1.0, README example (14 agents,
    10 erlangs: 0.1741319).

    Examples
    --------
    The ErlangC package's example: 10 erlangs offered to 14 agents:

    >>> round(erlang_c(14, 10.0), 7)
    0.1741319
    """
    c = _servers(servers)
    a = _positive("offered_load", offered_load, allow_zero=True)
    if a >= c:
        raise ValueError(f"offered_load must be below servers={c} for a stable queue, got {a!r}")
    b = erlang_b(c, a)
    return c * b / (c - a * (1.0 - b))


def mmc_mean_wait_s(arrival_rate_per_s: float, service_rate_per_s: float, servers: int) -> float:
    r"""Mean wait (s) before service in an M/M/c queue.

    .. math:: W_q = \frac{C(c, \lambda/\mu)}{c\mu - \lambda}     (the page labels this eq-mmc-wait)

    Parameters
    ----------
    arrival_rate_per_s : float
        Poisson arrival rate :math:`\lambda` (requests/s, >= 0, below :math:`c\mu`).
    service_rate_per_s : float
        Each server's rate :math:`\mu` (requests/s, > 0); mean service time :math:`1/\mu`.
    servers : int
        :math:`c` (>= 1).

    Returns
    -------
    float
        :math:`W_q` (s).

    References
    ----------
    Harchol-Balter (2013), chapter 14.

    Examples
    --------
    The ErlangC package's example: a mean wait ("average speed of answer") of 7.836 s:

    >>> round(mmc_mean_wait_s(100 / 1800, 1 / 180, 14), 3)
    7.836
    """
    lam, mu, c, a = _stable_mmc(arrival_rate_per_s, service_rate_per_s, servers)
    return erlang_c(c, a) / (c * mu - lam)


def mmc_mean_time_in_system_s(arrival_rate_per_s: float, service_rate_per_s: float,
                              servers: int) -> float:
    r"""Mean time (s) in an M/M/c system, wait plus service: :math:`W = W_q + 1/\mu`.

    .. math:: W = \frac{C(c, \lambda/\mu)}{c\mu - \lambda} + \frac{1}{\mu}

    References
    ----------
    Harchol-Balter (2013), chapter 14.

    Examples
    --------
    One server is M/M/1 (Hennessy and Patterson's disk: 100 ms):

    >>> round(mmc_mean_time_in_system_s(40.0, 50.0, 1) * 1e3, 6)
    100.0
    """
    lam, mu, c, _ = _stable_mmc(arrival_rate_per_s, service_rate_per_s, servers)
    return mmc_mean_wait_s(lam, mu, c) + 1.0 / mu


def mmc_wait_attainment(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                        servers: int) -> float:
    r"""Fraction (dimensionless) of arrivals whose wait before service is at most ``slo_s`` in an
    M/M/c queue: the SLO attainment of a waiting-time (or time-to-first-token) objective.

    .. math:: P(W_q \le d) = 1 - C(c, \lambda/\mu)\, e^{-(c\mu - \lambda)\, d}

    Parameters
    ----------
    slo_s : float
        The objective :math:`d` on the wait (s, >= 0).
    arrival_rate_per_s, service_rate_per_s, servers
        As :func:`mmc_mean_wait_s`.

    Returns
    -------
    float
        In [0, 1].

    References
    ----------
    Harchol-Balter (2013), chapter 14; ErlangC R package 0.1.0, README example (a service
    level of 0.88835 for a 20 s target).

    Examples
    --------
    >>> round(mmc_wait_attainment(20.0, 100 / 1800, 1 / 180, 14), 5)
    0.88835
    """
    d = _positive("slo_s", slo_s, allow_zero=True)
    lam, mu, c, a = _stable_mmc(arrival_rate_per_s, service_rate_per_s, servers)
    return 1.0 - erlang_c(c, a) * math.exp(-(c * mu - lam) * d)


def mmc_wait_percentile_s(percentile: float, arrival_rate_per_s: float,
                          service_rate_per_s: float, servers: int) -> float:
    r"""The given percentile (s) of the wait before service in an M/M/c queue.

    Inverting eq-erlang-c-tail:

    .. math:: w_p = \max\!\left(0,\ \frac{\ln\big(C(c, a) / (1 - p/100)\big)}{c\mu - \lambda}\right)

    References
    ----------
    Harchol-Balter (2013), chapter 14.

    Examples
    --------
    With one server it is the M/M/1 percentile:

    >>> round(mmc_wait_percentile_s(99, 40.0, 50.0, 1), 6) == round(mm1_wait_percentile_s(99, 40.0, 50.0), 6)
    True
    """
    p = _percentile(percentile)
    lam, mu, c, a = _stable_mmc(arrival_rate_per_s, service_rate_per_s, servers)
    pw = erlang_c(c, a)
    if pw == 0:
        return 0.0
    return max(0.0, math.log(pw / (1.0 - p / 100.0)) / (c * mu - lam))


def mgc_mean_wait_s(arrival_rate_per_s: float, mean_service_s: float, servers: int,
                    service_scv: float) -> float:
    r"""Approximate mean wait (s) in an M/G/c queue: the M/M/c wait scaled by the service
    time's variability (the Allen-Cunneen / Lee-Longton approximation).

    .. math:: W_q^{M/G/c} \approx \frac{1 + c_s^2}{2}\, W_q^{M/M/c}

    Exact for one server (Pollaczek-Khinchin) and for exponential service (:math:`c_s^2 = 1`).

    References
    ----------
    Harchol-Balter (2013), chapter 24 (M/G/k approximations); Kleinrock (1975), chapter 5 for
    the one-server case.

    Examples
    --------
    >>> round(mgc_mean_wait_s(40.0, 0.020, 1, 0.0) * 1e3, 6)
    40.0
    """
    s = _positive("mean_service_s", mean_service_s)
    scv = _positive("service_scv", service_scv, allow_zero=True)
    return 0.5 * (1.0 + scv) * mmc_mean_wait_s(arrival_rate_per_s, 1.0 / s, servers)


def _capacity(servers: int, capacity: int) -> tuple[int, int]:
    c = _servers(servers)
    k = _servers(capacity, "capacity")
    if k < c:
        raise ValueError(f"capacity (the most requests inside, waiting or served) must be >= "
                         f"servers={c}, got {capacity!r}")
    return c, k


def mmck_state_probabilities(arrival_rate_per_s: float, service_rate_per_s: float, servers: int,
                             capacity: int) -> list[float]:
    r"""Steady-state probabilities :math:`\pi_0 .. \pi_K` of :math:`n` requests inside an M/M/c/K
    system (``capacity`` = :math:`K` places: :math:`c` in service, :math:`K - c` waiting).

    .. math:: \pi_n \propto \frac{a^n}{n!}\ (n \le c), \qquad
        \pi_n \propto \frac{a^c}{c!}\left(\frac{a}{c}\right)^{n-c}\ (c < n \le K)

    Stable at any load, overload included.

    References
    ----------
    Kleinrock (1975), section 3.7; Harchol-Balter (2013), chapter 14.

    Examples
    --------
    >>> [round(p, 3) for p in mmck_state_probabilities(1.0, 1.0, 1, 2)]
    [0.333, 0.333, 0.333]
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c, k = _capacity(servers, capacity)
    a = lam / mu
    if not math.isfinite(a):
        raise ValueError(f"arrival_rate_per_s / service_rate_per_s must be finite, "
                         f"got {lam!r} / {mu!r}")
    # Work with ratios pi_n / pi_{n-1} to avoid overflow: lam / (min(n, c) mu).
    w = [1.0]
    for n in range(1, k + 1):
        w.append(w[-1] * a / min(n, c))
        if w[-1] > 1e250:  # renormalize on the fly; the shape is what matters
            w = [x / 1e250 for x in w]
    total = math.fsum(w)
    if not math.isfinite(total):  # a / min(n, c) overflowed a float between renormalizations
        raise ValueError(f"arrival_rate_per_s / service_rate_per_s is too large for the state "
                         f"probabilities, got {lam!r} / {mu!r}")
    return [x / total for x in w]


def mmck_blocking_probability(arrival_rate_per_s: float, service_rate_per_s: float, servers: int,
                              capacity: int) -> float:
    r"""Fraction (dimensionless) of arrivals turned away by an M/M/c/K system because it is full.

    .. math:: P_{\text{block}} = \pi_K     (the page labels this eq-mmck-block)

    (by PASTA, an arrival sees the time-average state). With :math:`K = c` it is Erlang B.

    References
    ----------
    Kleinrock (1975), section 3.7; Harchol-Balter (2013), chapter 14.

    Examples
    --------
    >>> round(mmck_blocking_probability(2.0, 1.0, 2, 2), 6) == round(erlang_b(2, 2.0), 6)
    True
    """
    return mmck_state_probabilities(arrival_rate_per_s, service_rate_per_s, servers, capacity)[-1]


def mmck_wait_attainment(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                         servers: int, capacity: int) -> float:
    r"""Fraction (dimensionless) of ADMITTED arrivals whose wait is at most ``slo_s`` in an
    M/M/c/K system.

    An admitted arrival that finds :math:`n \ge c` inside waits for :math:`n - c + 1`
    departures, each after an exponential time of rate :math:`c\mu` (an Erlang distribution):

    .. math:: P(W_q \le d \mid \text{admitted}) = 1 - \sum_{n=c}^{K-1}
        \frac{\pi_n}{1 - \pi_K}\, \sum_{i=0}^{n-c} e^{-c\mu d} \frac{(c\mu d)^i}{i!}

    References
    ----------
    Kleinrock (1975), section 3.7 (state probabilities); the Erlang waiting time of a FIFO
    queue is standard (Harchol-Balter 2013, chapter 14).

    Examples
    --------
    No waiting room, no wait:

    >>> mmck_wait_attainment(0.0, 5.0, 1.0, 2, 2)
    1.0
    """
    d = _positive("slo_s", slo_s, allow_zero=True)
    c, k = _capacity(servers, capacity)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    pi = mmck_state_probabilities(arrival_rate_per_s, mu, c, k)
    admitted = 1.0 - pi[-1]
    if admitted <= 0:
        raise ValueError(f"arrival_rate_per_s={arrival_rate_per_s!r} blocks every request "
                         f"(service_rate_per_s={mu!r}, capacity={k}): no admitted request to time")
    x = c * mu * d
    miss = 0.0
    term, tail = math.exp(-x), 0.0  # tail = P(Erlang(j, c mu) > d) = sum_{i<j} e^-x x^i / i!
    for n in range(c, k):
        j = n - c  # index of the newest Poisson term included
        if j > 0:
            term *= x / j
        tail += term
        miss += pi[n] * min(1.0, tail)
    return min(1.0, max(0.0, 1.0 - miss / admitted))


def mmc_servers_needed(arrival_rate_per_s: float, service_rate_per_s: float, slo_s: float,
                       attainment: float, *, reserve: float = 0.0) -> int:
    r"""Fewest servers (an integer) for an M/M/c queue to meet a waiting-time objective at a load
    raised by a reserve (headroom for bursts, failures and rollouts).

    .. math:: c^\star = \min\{c : P(W_q \le d) \ge \alpha \text{ at arrival rate }
        (1 + r)\lambda\}

    Parameters
    ----------
    arrival_rate_per_s, service_rate_per_s : float
        :math:`\lambda` (>= 0) and :math:`\mu` (> 0).
    slo_s : float
        :math:`d`, the wait objective (s, >= 0).
    attainment : float
        :math:`\alpha` in (0, 1): the share of requests that must meet it.
    reserve : float
        :math:`r` (>= 0): provision for :math:`(1+r)\lambda`.

    References
    ----------
    Harchol-Balter (2013), chapter 14 (capacity provisioning with Erlang C); ErlangC R
    package 0.1.0, README example (14 agents for 10 erlangs and an 80 % service level).

    Examples
    --------
    The ErlangC package's call centre: 14 agents reach the 0.80 service level within 20 s
    (and 13 do not):

    >>> mmc_servers_needed(100 / 1800, 1 / 180, 20.0, 0.80)
    14
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    d = _positive("slo_s", slo_s, allow_zero=True)
    alpha = _checks.real("attainment", attainment, low=0, high=1)
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise ValueError(f"attainment must be in (0, 1), got {attainment!r}")
    r = _positive("reserve", reserve, allow_zero=True)
    load = lam * (1.0 + r)
    _checks.at_most("arrival_rate_per_s * (1 + reserve) / service_rate_per_s", load / mu,
                    float(MAX_SERVERS), "the servers needed must stay within MAX_SERVERS")
    c = max(1, math.floor(load / mu) + 1)
    while mmc_wait_attainment(d, load, mu, c) < alpha:
        c += 1
    return c


def _bisect_largest(ok, lo: float, hi: float) -> float:
    """Largest x in [lo, hi) with ok(x), for ok true at lo and monotone (true then false)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def erlang_c_max_load(servers: int, wait_probability: float) -> float:
    r"""Largest offered load (erlangs) ``servers`` can carry with at most ``wait_probability`` of arrivals waiting: Erlang C inverted.

    .. math:: a^\star(c, p) = \max\{a \in [0, c) : C(c, a) \le p\}

    :math:`C(c, a)` (:func:`erlang_c`) rises from 0 at :math:`a = 0` to 1 as :math:`a \to c`,
    so the inverse is one number, found by bisection.

    Parameters
    ----------
    servers : int
        :math:`c` (1 to :data:`MAX_INVERSE_SERVERS`).
    wait_probability : float
        :math:`p` in (0, 1): the largest acceptable share of arrivals that wait.

    Returns
    -------
    float
        :math:`a^\star` (erlangs), below :math:`c`; times :math:`\mu` it is the largest
        arrival rate.

    References
    ----------
    Harchol-Balter (2013), chapter 14 (capacity provisioning); ErlangC R package 0.1.0,
    README example (14 agents at 10 erlangs: C = 0.1741319).

    Examples
    --------
    >>> round(erlang_c_max_load(14, 0.1741319), 4)
    10.0
    >>> round(erlang_c_max_load(1, 0.5), 6)   # one server: C = rho
    0.5
    """
    c = _servers(servers)
    _checks.at_most("servers", c, MAX_INVERSE_SERVERS, "the bisection runs the recurrence "
                    "once per server per step")
    p = _checks.real("wait_probability", wait_probability, low=0.0, high=1.0)
    if not 0.0 < p < 1.0:
        raise ValueError(f"wait_probability must be in (0, 1), got {wait_probability!r}")
    return _bisect_largest(lambda a: erlang_c(c, a) <= p, 0.0, float(c))


def mmc_max_arrival_rate_per_s(service_rate_per_s: float, servers: int, slo_s: float,
                               attainment: float) -> float:
    r"""Largest arrival rate (1/s) at which ``servers`` M/M/c servers still meet a wait objective.

    .. math:: \lambda^\star = \max\{\lambda < c\mu : 1 - C(c, \lambda/\mu)\,
        e^{-(c\mu - \lambda) d} \ge \alpha\}

    The inverse of :func:`mmc_wait_attainment` in the arrival rate (and the rate form of
    :func:`mmc_servers_needed`, which inverts it in the servers): the load a deployment of
    :math:`c` replicas can take before its SLO attainment drops below :math:`\alpha`.

    Parameters
    ----------
    service_rate_per_s : float
        :math:`\mu` (> 0).
    servers : int
        :math:`c` (1 to :data:`MAX_INVERSE_SERVERS`).
    slo_s : float
        :math:`d` (s, >= 0).
    attainment : float
        :math:`\alpha` in (0, 1).

    Returns
    -------
    float
        :math:`\lambda^\star` (requests/s).

    References
    ----------
    ErlangC R package 0.1.0, README example (14 agents, 100 calls per 30 minutes of 180 s
    each, service level 0.88835 within 20 s).

    Examples
    --------
    >>> round(mmc_max_arrival_rate_per_s(1 / 180, 14, 20.0, 0.88835) * 1800, 2)
    100.0
    """
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _servers(servers)
    _checks.at_most("servers", c, MAX_INVERSE_SERVERS, "the bisection runs the recurrence "
                    "once per server per step")
    d = _positive("slo_s", slo_s, allow_zero=True)
    alpha = _checks.real("attainment", attainment, low=0.0, high=1.0)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"attainment must be in (0, 1), got {attainment!r}")
    _checks.finite_ratio("servers * service_rate_per_s", c * mu, "1", 1.0)
    return _bisect_largest(lambda lam: mmc_wait_attainment(d, lam, mu, c) >= alpha,
                           0.0, c * mu)
