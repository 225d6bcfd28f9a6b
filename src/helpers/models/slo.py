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

Used by: chapters/production-inference.md, labs/load.md.
"""

from __future__ import annotations

import math

import numpy as np

from . import queueing as q
from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = ["goodput_per_s", "overload_wait_attainment", "wait_slo_attainment",
           "mgc_wait_slo_attainment", "startup_overload_wait_attainment",
           "wait_slo_goodput_per_s", "joint_slo_attainment", "goodput_from_curve_per_s",
           "disaggregated_goodput_per_s", "replicas_needed"]


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


def _overload(slo_s, arrival_rate_per_s, service_rate_per_s, servers, n_requests):
    r"""The checked arguments of an overloaded run and the wait's growth per request,
    :math:`1/(c\mu) - 1/\lambda` (s); a ValueError when the queue is not overloaded."""
    d = _positive("slo_s", slo_s, allow_zero=True)
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _positive_int("servers", servers)
    n = _positive_int("n_requests", n_requests)
    growth = 1.0 / (c * mu) - 1.0 / lam
    if growth <= 0:
        raise ValueError(f"the queue is not overloaded: arrival_rate_per_s={lam!r} <= "
                         f"servers * service_rate_per_s={c * mu!r}; use wait_slo_attainment")
    return d, mu, c, n, growth


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
    d, mu, c, n, growth = _overload(slo_s, arrival_rate_per_s, service_rate_per_s, servers,
                                    n_requests)
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


def startup_overload_wait_attainment(slo_s: float, arrival_rate_per_s: float,
                                     service_rate_per_s: float, servers: int,
                                     n_requests: int) -> float:
    r"""Share (dimensionless) of a FINITE run of ``n_requests`` that waits at most ``slo_s`` in an
    overloaded unbounded queue that starts EMPTY, by the fluid approximation with its start-up.

    The first :math:`c` requests find a free server; after that the servers, busy from the
    start, release one request every :math:`1/(c\mu)`, so request :math:`i` (from 0, arriving
    at :math:`i/\lambda`) starts at about :math:`(i - c + 1)/(c\mu)` and waits
    :math:`i\,(1/(c\mu) - 1/\lambda) - (c - 1)/(c\mu)`. It meets :math:`d` while

    .. math:: i \le i^\star = \frac{d + (c - 1)/(c\mu)}{1/(c\mu) - 1/\lambda},\qquad
       A \approx \min\!\left(1,\ \frac{\lfloor i^\star \rfloor + 1}{n}\right)

    :func:`overload_wait_attainment` counts from servers already busy, :math:`d/(n\,(1/(c\mu) -
    1/\lambda))`, and so leaves out the :math:`c` free servers a run begins with.

    References
    ----------
    Kleinrock, L. (1976), *Queueing Systems, Volume 2*, chapter 2 (the fluid approximation);
    the simulator :func:`helpers.sim.queue.simulate_multi_server` is the oracle.

    Examples
    --------
    Twice the capacity of 4 servers, 100 requests, an objective of 10 mean service times:

    >>> round(startup_overload_wait_attainment(10.0, 8.0, 1.0, 4, 100), 3)
    0.87
    """
    d, mu, c, n, growth = _overload(slo_s, arrival_rate_per_s, service_rate_per_s, servers,
                                    n_requests)
    last = (d + (c - 1) / (c * mu)) / growth  # the last request index that meets d
    if last >= n:  # every request of the run (also an objective too large to count in)
        return 1.0
    return min(1.0, (math.floor(last) + 1) / n)


def mgc_wait_slo_attainment(slo_s: float, arrival_rate_per_s: float, service_rate_per_s: float,
                            servers: int, *, service_scv: float, capacity: int | None = None,
                            n_requests: int | None = None) -> tuple[float, float]:
    r"""(blocking probability, attainment among the admitted) of a wait objective ``slo_s`` for
    ``servers`` servers with GENERAL service times (mean :math:`1/\mu`, squared coefficient of
    variation :math:`c_s^2`) fed by Poisson arrivals: a two-moment approximation.

    Allen and Cunneen's approximation scales the M/M/c mean wait by :math:`(c_a^2 + c_s^2)/2`
    (:math:`c_a^2 = 1` for Poisson arrivals); scaling the whole wait distribution the same way
    gives the exponential-service answer of :func:`wait_slo_attainment` at a stretched
    objective:

    .. math:: A_{M/G/c}(d) \approx A_{M/M/c}\!\left(\frac{2d}{1 + c_s^2}\right)

    Blocking with a cap :math:`K` is M/M/c/K's. An unbounded queue past saturation with
    ``n_requests`` takes the fluid share of a run that starts empty
    (:func:`startup_overload_wait_attainment`), which no service variability enters.

    Parameters
    ----------
    slo_s : float
        The wait objective :math:`d` (s).
    arrival_rate_per_s, service_rate_per_s : float
        :math:`\lambda` and :math:`\mu` (1/s).
    servers : int
        :math:`c`.
    service_scv : float
        :math:`c_s^2 = \operatorname{Var}(S)/E[S]^2` (0 for constant service, 1 exponential).
    capacity, n_requests : int, optional
        As in :func:`wait_slo_attainment`.

    Returns
    -------
    tuple of float
        Blocking probability and the admitted requests' attainment.

    Assumptions
    -----------
    The wait distribution keeps its M/M/c shape and only stretches with :math:`c_s^2`; exact for
    the mean of M/G/1 (the Pollaczek-Khinchine formula), an approximation for :math:`c > 1`
    and for the tail.

    References
    ----------
    Allen, A. O. (1990), *Probability, Statistics, and Queueing Theory*, 2nd ed., section 6.3
    (the Allen-Cunneen approximation for GI/G/c); Whitt, W. (1993), "Approximations for the
    GI/G/m queue", *Production and Operations Management* 2(2), section 2 (two-moment
    approximations that rescale the M/M/m wait).

    Examples
    --------
    Constant service halves the mean wait of one server, so an objective of ``d`` is met as
    often as ``2 d`` with exponential service:

    >>> b, a = mgc_wait_slo_attainment(0.5, 0.5, 1.0, 1, service_scv=0.0)
    >>> round(a, 4) == round(wait_slo_attainment(1.0, 0.5, 1.0, 1)[1], 4)
    True
    """
    d = _positive("slo_s", slo_s, allow_zero=True)
    scv = _positive("service_scv", service_scv, allow_zero=True)
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s, allow_zero=True)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _positive_int("servers", servers)
    if capacity is None and lam >= c * mu and n_requests is not None and lam > c * mu:
        return 0.0, startup_overload_wait_attainment(d, lam, mu, c, n_requests)
    return wait_slo_attainment(2.0 * d / (1.0 + scv), lam, mu, c, capacity=capacity,
                               n_requests=n_requests)


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


def joint_slo_attainment(ttft_s, tpot_s, ttft_slo_s: float, tpot_slo_s: float) -> float:
    r"""Share (dimensionless) of requests that meet BOTH their TTFT and their TPOT objectives.

    .. math:: A = \frac{1}{n}\sum_i \mathbf{1}[\text{TTFT}_i \le d_1 \wedge
        \text{TPOT}_i \le d_2]

    Not the product or the minimum of the two separate attainments: a request that misses
    either objective is lost once, so the joint share is at most the smaller one and at least
    their sum minus 1.

    Parameters
    ----------
    ttft_s, tpot_s : sequence of float
        Each request's time to first token and time per output token (s, >= 0), paired.
    ttft_slo_s, tpot_slo_s : float
        :math:`d_1`, :math:`d_2` (s, >= 0).

    References
    ----------
    Zhong et al. (2024), DistServe, sections 1 and 2: SLO attainment counts the requests that
    meet both the TTFT and the TPOT requirement.

    Examples
    --------
    >>> joint_slo_attainment([0.1, 0.3, 0.2, 0.1], [0.03, 0.02, 0.05, 0.04], 0.25, 0.04)
    0.5
    """
    a = _checks.positive_array("ttft_s", ttft_s, allow_zero=True, allow_empty=False)
    b = _checks.positive_array("tpot_s", tpot_s, allow_zero=True, allow_empty=False)
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    _checks.same_length("ttft_s", a, "tpot_s", b)
    d1 = _positive("ttft_slo_s", ttft_slo_s, allow_zero=True)
    d2 = _positive("tpot_slo_s", tpot_slo_s, allow_zero=True)
    return float(np.mean((a <= d1) & (b <= d2)))


def goodput_from_curve_per_s(rates_per_s, attainments, target: float) -> float:
    r"""Goodput (requests/s) read from a measured attainment-versus-rate curve: the largest rate whose attainment is at least ``target``.

    .. math:: G = \max\{\lambda : A(\lambda) \ge \alpha\}

    The curve is linear between measured points; the goodput is where it first falls below
    :math:`\alpha` (so a later recovery, which is noise, is ignored). Returns 0.0 when even
    the lowest rate misses, and the highest rate measured when none does (the curve does not
    reach the knee: goodput is at least that).

    Parameters
    ----------
    rates_per_s : sequence of float
        Offered rates, increasing (requests/s, >= 0).
    attainments : sequence of float
        The SLO attainment measured at each (in [0, 1]), paired.
    target : float
        :math:`\alpha` in (0, 1], e.g. DistServe's 0.9.

    References
    ----------
    Zhong et al. (2024), DistServe, section 1: "per-GPU goodput, defined as the maximum request
    rate that can be served adhering to the SLO attainment goal (say, 90%)".

    Examples
    --------
    >>> round(goodput_from_curve_per_s([1.0, 2.0, 3.0], [0.99, 0.95, 0.75], 0.9), 6)
    2.25
    """
    r = np.atleast_1d(_checks.positive_array("rates_per_s", rates_per_s, allow_zero=True,
                                             allow_empty=False))
    _checks.real_array("attainments", attainments)
    a = np.atleast_1d(np.asarray(attainments, dtype=np.float64))
    _checks.same_length("rates_per_s", r, "attainments", a)
    if np.any((a < 0) | (a > 1)):
        raise ValueError(f"attainments must be fractions in [0, 1], got {list(a)!r}")
    if np.any(np.diff(r) <= 0):
        raise ValueError(f"rates_per_s must increase, got {list(r)!r}")
    alpha = _checks.real("target", target, low=0.0, high=1.0)
    if alpha <= 0:
        raise ValueError(f"target must be in (0, 1], got {target!r}")
    if a[0] < alpha:
        return 0.0
    for i in range(1, len(r)):
        if a[i] < alpha:
            x0, x1, y0, y1 = r[i - 1], r[i], a[i - 1], a[i]
            return float(x0 + (y0 - alpha) * (x1 - x0) / (y0 - y1))
    return float(r[-1])


def disaggregated_goodput_per_s(prefill_goodput_per_s: float, decode_goodput_per_s: float,
                                n_prefill: int, n_decode: int) -> float:
    r"""Goodput (requests/s) of a disaggregated deployment: the slower of its two pools.

    .. math:: G = \min(n_p\,G_p,\ n_d\,G_d)

    Every request passes through one prefill and one decode instance, so the pool with the
    smaller total goodput sets the rate. Divide by the GPUs used for the per-GPU goodput.

    Parameters
    ----------
    prefill_goodput_per_s, decode_goodput_per_s : float
        :math:`G_p`, :math:`G_d`: the goodput of one instance of each phase (requests/s).
    n_prefill, n_decode : int
        :math:`n_p`, :math:`n_d` (>= 1).

    References
    ----------
    Zhong et al. (2024), DistServe, section 1: 5.6 rps for prefill and 10 rps for decoding on
    one A100 each; 2 prefill GPUs and 1 decoding GPU serve 10 rps, 3.3 rps per GPU, 2.1x the
    colocated 1.6.

    Examples
    --------
    >>> g = disaggregated_goodput_per_s(5.6, 10.0, 2, 1)
    >>> g, round(g / 3, 1)
    (10.0, 3.3)
    """
    gp = _positive("prefill_goodput_per_s", prefill_goodput_per_s, allow_zero=True)
    gd = _positive("decode_goodput_per_s", decode_goodput_per_s, allow_zero=True)
    n_p = _positive_int("n_prefill", n_prefill)
    n_d = _positive_int("n_decode", n_decode)
    return min(n_p * gp, n_d * gd)


def replicas_needed(target_rate_per_s: float, goodput_per_replica_per_s: float) -> int:
    r"""Replicas (count) to serve a target load within the SLO: :math:`\lceil \lambda / G \rceil`.

    Each replica (one instance, or one prefill-decode group) serves its goodput :math:`G`;
    the load splits evenly across replicas.

    Assumptions
    -----------
    The goodput was measured with the same arrival process per replica as the split load gives
    (Poisson splits into Poisson), and replicas do not interfere.

    References
    ----------
    Zhong et al. (2024), DistServe, section 1 and 4: scale the goodput-optimal allocation "via
    replication until meeting the user-required traffic rate".

    Examples
    --------
    The 2P1D group above (10 rps) for 45 rps: 5 groups, 15 GPUs.

    >>> replicas_needed(45.0, 10.0)
    5
    """
    lam = _positive("target_rate_per_s", target_rate_per_s, allow_zero=True)
    g = _positive("goodput_per_replica_per_s", goodput_per_replica_per_s)
    n = _checks.finite_ratio("target_rate_per_s", lam, "goodput_per_replica_per_s", g)
    _checks.at_most("target_rate_per_s / goodput_per_replica_per_s", n, float(_checks.MAX_INT))
    return max(0, math.ceil(n - 1e-12 * n))
