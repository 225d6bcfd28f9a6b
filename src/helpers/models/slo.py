r"""Useful outcomes of a serving system: SLO attainment and goodput, with and without admission.

A request *meets its SLO* when its latency objective holds (here: the time to its first token
is at most a target). **SLO attainment** is the share of requests that meet it; **goodput** is
the rate of requests that meet it:

.. math::

    \text{goodput} = \lambda\,(1 - P_{\text{block}})\,P(\text{meet} \mid \text{admitted})
                                                            \qquad\text{(eq-goodput)}

Throughput counts every completion; goodput counts only the useful ones, so it can fall while
throughput keeps rising. With an unbounded queue past saturation (:math:`\lambda \ge c\mu`)
the wait grows without limit and the steady-state goodput is zero; a bounded queue
(admission control) turns the excess away and keeps the admitted requests fast.

References
----------
* Zhong, Y. et al. (2024), "DistServe: Disaggregating Prefill and Decoding for
  Goodput-optimized Large Language Model Serving", OSDI 2024, section 1 and 2: goodput as the
  request rate served within the TTFT and TPOT SLOs at an attainment target (e.g. 90 %).
* Harchol-Balter, M. (2013), *Performance Modeling and Design of Computer Systems*, chapter 14
  (M/M/k and M/M/k/k).
* Kleinrock, L. (1975), *Queueing Systems, Volume 1*, section 3.7 (M/M/m/K).
"""

from __future__ import annotations

import math

from . import queueing as q
from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = ["goodput_per_s", "overload_wait_attainment", "wait_slo_attainment",
           "wait_slo_goodput_per_s"]


def goodput_per_s(arrival_rate_per_s: float, blocking_probability: float,
                  admitted_attainment: float) -> float:
    r"""Requests per second that are admitted AND meet their SLO.

    .. math:: G = \lambda\,(1 - P_{\text{block}})\,A_{\text{admitted}}     (the page labels this eq-goodput)

    Parameters
    ----------
    arrival_rate_per_s : float
        Offered rate :math:`\lambda` (requests/s, >= 0).
    blocking_probability : float
        Share turned away by admission control, in [0, 1].
    admitted_attainment : float
        Share of the admitted that meet the SLO, in [0, 1].

    References
    ----------
    Zhong et al. (2024), DistServe, section 2 (goodput).

    Examples
    --------
    >>> goodput_per_s(100.0, 0.2, 0.9)
    72.0
    """
    _checks.fraction("blocking_probability", blocking_probability)
    _checks.fraction("admitted_attainment", admitted_attainment)
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    block = _unit("blocking_probability", blocking_probability)
    att = _unit("admitted_attainment", admitted_attainment)
    return lam * (1.0 - block) * att


def _unit(name: str, value) -> float:
    x = float(value)
    if not (math.isfinite(x) and 0.0 <= x <= 1.0):
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return x


def overload_wait_attainment(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                             servers: int, n_requests: int) -> float:
    r"""Share (dimensionless) of a FINITE run of ``n_requests`` that waits at most ``slo_s`` in an
    overloaded unbounded queue (:math:`\lambda > c\mu`), by the fluid approximation.

    The backlog grows at :math:`\lambda - c\mu` per second, so request :math:`i` (arriving at
    :math:`i/\lambda`) waits about :math:`i\,(1/(c\mu) - 1/\lambda)`; it meets the objective
    :math:`d` while :math:`i \le i^\star`:

    .. math:: A \approx \min\!\left(1,\ \frac{d}{n\,\big(1/(c\mu) - 1/\lambda\big)}\right)

    The steady state has no such share (it tends to zero as the run grows).

    References
    ----------
    Kleinrock, L. (1976), *Queueing Systems, Volume 2*, chapter 2 (the fluid approximation);
    this book's simulator is the oracle (:func:`helpers.sim.queue.simulate_multi_server`).

    Examples
    --------
    Twice the capacity, 100 requests, an objective of 10 mean service times on one server:

    >>> round(overload_wait_attainment(10.0, 2.0, 1.0, 1, 100), 3)
    0.2
    """
    d = _positive("slo_s", slo_s, allow_zero=True)
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _positive_int("servers", servers)
    n = _positive_int("n_requests", n_requests)
    growth = 1.0 / (c * mu) - 1.0 / lam
    if growth <= 0:
        raise ValueError(f"the queue is not overloaded: arrival_rate_per_s={lam!r} <= "
                         f"servers * service_rate_per_s={c * mu!r}; use wait_slo_attainment")
    return min(1.0, d / (n * growth))


def wait_slo_attainment(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                        servers: int, *, capacity: int | None = None,
                        n_requests: int | None = None) -> tuple[float, float]:
    r"""(blocking probability, attainment among the admitted) of a wait objective ``slo_s`` for
    ``servers`` exponential servers fed by Poisson arrivals.

    .. math:: \text{unbounded: } (0,\ 1 - C(c, a)\,e^{-(c\mu-\lambda)d}); \qquad
        \text{capacity } K\text{: } (\pi_K,\ P(W_q \le d \mid \text{admitted}))

    An unbounded queue at or past saturation gives attainment 0 (the steady state), or, with
    ``n_requests``, the fluid share of that finite run (:func:`overload_wait_attainment`).

    References
    ----------
    Harchol-Balter (2013), chapter 14; Kleinrock (1975), section 3.7.

    Examples
    --------
    >>> [round(x, 4) for x in wait_slo_attainment(20.0, 100 / 1800, 1 / 180, 14)]
    [0.0, 0.8884]
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _positive_int("servers", servers)
    if capacity is not None:
        return (q.mmck_blocking_probability(lam, mu, c, capacity),
                q.mmck_wait_attainment(slo_s, lam, mu, c, capacity))
    if lam < c * mu:
        return 0.0, q.mmc_wait_attainment(slo_s, lam, mu, c)
    if n_requests is None or lam == c * mu:
        _positive("slo_s", slo_s, allow_zero=True)
        return 0.0, 0.0
    return 0.0, overload_wait_attainment(slo_s, lam, mu, c, n_requests)


def wait_slo_goodput_per_s(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                           servers: int, *, capacity: int | None = None,
                           n_requests: int | None = None) -> float:
    r"""Goodput (requests/s meeting a wait objective) of the queue of :func:`wait_slo_attainment`.

    .. math:: G = \lambda\,(1 - P_{\text{block}})\,A_{\text{admitted}}

    References
    ----------
    Zhong et al. (2024), DistServe, section 2; Harchol-Balter (2013), chapter 14.

    Examples
    --------
    Past saturation an unbounded queue has no steady-state goodput; a bounded one keeps some:

    >>> wait_slo_goodput_per_s(1.0, 3.0, 1.0, 2)
    0.0
    >>> round(wait_slo_goodput_per_s(1.0, 3.0, 1.0, 2, capacity=4), 2)
    1.41
    """
    block, att = wait_slo_attainment(slo_s, arrival_rate_per_s, service_rate_per_s, servers,
                                     capacity=capacity, n_requests=n_requests)
    return goodput_per_s(arrival_rate_per_s, block, att)
