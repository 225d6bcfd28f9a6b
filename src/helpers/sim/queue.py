r"""A seeded simulation of a first-come-first-served single-server queue.

Customers arrive at random times, wait for one server, are served in arrival order and leave.
The events are arrivals and departures; for one server and first-come-first-served order they
follow exactly from the recursion (customer :math:`i` starts when it has arrived and its
predecessor has left):

.. math::

    s_i = \max(a_i,\ d_{i-1}), \qquad d_i = s_i + S_i

which this module evaluates for a whole run at once, in closed form over cumulative sums
(:math:`d_i = C_i + \max_{j \le i}(a_j - C_{j-1})`, :math:`C_i = \sum_{k \le i} S_k`).

By default arrivals are a Poisson process (exponential gaps) and service times are exponential,
which makes it the M/M/1 queue of :mod:`helpers.models.queueing`; any other service-time (or
gap) sampler can be passed, e.g. :func:`deterministic` for the M/D/1 queue or :func:`empirical`
to replay measured service times.

The statistics of a :class:`QueueTrace` are measured, not derived from the formulas: the mean
number in the system is the time average of the number present, integrated over the
observation window, so a test of Little's law compares two independent measurements.

>>> tr = simulate_mm1(40.0, 50.0, 20_000, seed=1)
>>> round(tr.utilization(), 2)
0.8

Used by: chapters/performance-models.md, chapters/production-inference.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..models import stats

from ..models._checks import positive as _positive
from ..models._checks import positive_int as _positive_int

__all__ = ["Sampler", "exponential", "deterministic", "empirical", "QueueTrace",
           "simulate_fifo_queue", "simulate_mm1", "MultiServerTrace", "simulate_multi_server",
           "simulate_mmc"]

#: A sampler draws ``n`` non-negative durations (s) from a numpy Generator.
Sampler = Callable[[np.random.Generator, int], np.ndarray]



def exponential(mean_s: float) -> Sampler:
    """Exponentially distributed durations with the given mean (s): memoryless service or gaps.

    >>> exponential(0.5)(np.random.default_rng(0), 3).round(3).tolist()
    [0.34, 0.51, 0.01]
    """
    mean_s = _positive("mean_s", mean_s)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(mean_s, size=n)

    return draw


def deterministic(value_s: float) -> Sampler:
    """Every duration equal to ``value_s`` (s): the "D" of an M/D/1 queue.

    >>> deterministic(0.02)(np.random.default_rng(0), 2).tolist()
    [0.02, 0.02]
    """
    value_s = _positive("value_s", value_s)

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, value_s)

    return draw


def empirical(samples_s) -> Sampler:
    """Durations resampled with replacement from measured ``samples_s`` (s).

    >>> empirical([0.01, 0.02])(np.random.default_rng(0), 4).tolist()
    [0.02, 0.02, 0.02, 0.01]
    """
    samples = stats.as_samples(samples_s, name="samples_s")
    if np.any(samples < 0):
        raise ValueError("samples_s must be durations >= 0")
    samples = samples.copy()

    def draw(rng: np.random.Generator, n: int) -> np.ndarray:
        return samples[rng.integers(0, samples.size, size=n)]

    return draw


@dataclass(frozen=True)
class QueueTrace:
    """Every customer's arrival, service start and departure time (s) in one simulated run.

    Statistics ignore the first ``warmup`` customers (the queue starts empty, which is not
    its steady state) and are measured over the window from the first counted arrival to the
    last arrival.
    """

    arrival_s: np.ndarray
    start_s: np.ndarray
    departure_s: np.ndarray
    warmup: int

    # -- per-customer quantities (counted customers only) --------------------------------
    @property
    def time_in_system_s(self) -> np.ndarray:
        """Departure minus arrival (s) of each counted customer."""
        return (self.departure_s - self.arrival_s)[self.warmup:]

    @property
    def wait_s(self) -> np.ndarray:
        """Service start minus arrival (s) of each counted customer."""
        return (self.start_s - self.arrival_s)[self.warmup:]

    @property
    def n_counted(self) -> int:
        return int(self.arrival_s.size - self.warmup)

    def mean_time_in_system_s(self) -> float:
        """Average time in system (s) of the counted customers."""
        return float(np.mean(self.time_in_system_s))

    def mean_wait_s(self) -> float:
        """Average wait before service (s) of the counted customers."""
        return float(np.mean(self.wait_s))

    def time_in_system_percentile_s(self, percentile: float) -> float:
        """The ``percentile`` (0-100) of the counted customers' time in system (s)."""
        return stats.percentile(self.time_in_system_s, percentile)

    # -- time averages over the observation window ---------------------------------------
    @property
    def window_s(self) -> tuple[float, float]:
        """(start, end) of the observation window (s)."""
        return float(self.arrival_s[self.warmup]), float(self.arrival_s[-1])

    def _integral(self, times: np.ndarray) -> float:
        """Integral over the window of the count of ``times`` at or before t."""
        t0, t1 = self.window_s
        return float(np.sum(np.clip(t1 - np.maximum(times, t0), 0.0, None)))

    def mean_number_in_system(self) -> float:
        """Time-averaged number of customers present (waiting or in service) in the window."""
        t0, t1 = self.window_s
        area = self._integral(self.arrival_s) - self._integral(self.departure_s)
        return area / (t1 - t0)

    def arrival_rate_per_s(self) -> float:
        """Arrivals per second observed in the window."""
        t0, t1 = self.window_s
        return (self.n_counted - 1) / (t1 - t0)

    def utilization(self) -> float:
        """Fraction of the window during which the server was busy."""
        t0, t1 = self.window_s
        busy = np.clip(np.minimum(self.departure_s, t1) - np.maximum(self.start_s, t0), 0.0, None)
        return float(np.sum(busy)) / (t1 - t0)


def simulate_fifo_queue(arrival_rate_per_s: float, service: Sampler, n_customers: int, *,
                        seed: int, warmup_fraction: float = 0.1,
                        interarrival: Sampler | None = None) -> QueueTrace:
    """Simulate ``n_customers`` through a first-come-first-served single-server queue.

    Parameters
    ----------
    arrival_rate_per_s : float
        Mean arrival rate (customers/s, > 0). Gaps are exponential (Poisson arrivals)
        unless ``interarrival`` is given, in which case it must have mean
        ``1 / arrival_rate_per_s`` and the rate is only used to check that.
    service : Sampler
        Draws service times (s), e.g. :func:`exponential`, :func:`deterministic`,
        :func:`empirical`.
    n_customers : int
        Customers to simulate (>= 10).
    seed : int
        Seed of the numpy Generator: the same seed gives the same run.
    warmup_fraction : float
        Leading share of customers left out of the statistics, in [0, 0.9].

    Returns
    -------
    QueueTrace
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s)
    n = _positive_int("n_customers", n_customers, minimum=10)
    warmup_fraction = float(warmup_fraction)
    if not 0.0 <= warmup_fraction <= 0.9:
        raise ValueError(f"warmup_fraction must be in [0, 0.9], got {warmup_fraction!r}")
    rng = np.random.default_rng(seed)
    gaps = (interarrival or exponential(1.0 / lam))(rng, n)
    service_s = np.asarray(service(rng, n), dtype=np.float64)
    if gaps.shape != (n,) or service_s.shape != (n,):
        raise ValueError("samplers must return one duration per customer")
    if np.any(gaps < 0) or np.any(service_s < 0) or not np.all(np.isfinite(service_s)):
        raise ValueError("samplers must return finite durations >= 0")
    arrival = np.cumsum(gaps)
    # d_i = C_i + max_{j<=i} (a_j - C_{j-1}), the closed form of d_i = max(a_i, d_{i-1}) + S_i.
    cum = np.cumsum(service_s)
    cum_before = cum - service_s
    departure = cum + np.maximum.accumulate(arrival - cum_before)
    # Start times from the recursion itself (exact: no cancellation), then departures.
    start = np.maximum(arrival, np.concatenate(([-np.inf], departure[:-1])))
    departure = start + service_s
    warmup = min(int(n * warmup_fraction), n - 2)
    return QueueTrace(arrival_s=arrival, start_s=start, departure_s=departure, warmup=warmup)


def simulate_mm1(arrival_rate_per_s: float, service_rate_per_s: float, n_customers: int, *,
                 seed: int, warmup_fraction: float = 0.1) -> QueueTrace:
    """Simulate an M/M/1 queue: Poisson arrivals, exponential service at ``service_rate_per_s``.

    The queue must be stable: ``arrival_rate_per_s < service_rate_per_s``.
    """
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    if lam >= mu:
        raise ValueError(f"arrival_rate_per_s must be below service_rate_per_s={mu!r} for a "
                         f"stable queue, got {lam!r}")
    return simulate_fifo_queue(lam, exponential(1.0 / mu), n_customers, seed=seed,
                               warmup_fraction=warmup_fraction)


# --- c servers, one FIFO queue, optional admission cap ----------------------------------------

@dataclass(frozen=True)
class MultiServerTrace:
    """Every request's arrival, service start and departure (s) through ``servers`` servers fed by
    one first-come-first-served queue; ``admitted`` is False for requests turned away because
    ``capacity`` were already inside (their start and departure are NaN)."""

    arrival_s: np.ndarray
    start_s: np.ndarray
    departure_s: np.ndarray
    admitted: np.ndarray
    servers: int
    capacity: int | None

    @property
    def wait_s(self) -> np.ndarray:
        """Start minus arrival (s) of the admitted requests."""
        return (self.start_s - self.arrival_s)[self.admitted]

    def blocking_fraction(self) -> float:
        """Share of arrivals turned away."""
        return float(1.0 - np.mean(self.admitted))

    def wait_attainment(self, slo_s: float) -> float:
        """Share of admitted requests that waited at most ``slo_s``."""
        w = self.wait_s
        return float(np.mean(w <= slo_s)) if w.size else float("nan")

    def mean_wait_s(self) -> float:
        return float(np.mean(self.wait_s))


def simulate_multi_server(arrival_s, service_s, servers: int, *,
                          capacity: int | None = None) -> MultiServerTrace:
    """Replay given arrival times (s, non-decreasing) and service times (s) through ``servers``
    first-come-first-served servers; with ``capacity`` an arrival that finds that many requests
    inside (waiting or in service) is turned away.

    Deterministic: the same arrays give the same trace. Each admitted request starts when it
    has arrived and the earliest-free server is free (one queue, FIFO order).

    >>> tr = simulate_multi_server([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], 2)
    >>> tr.start_s.tolist()
    [0.0, 0.0, 1.0]
    >>> simulate_multi_server([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], 2, capacity=2).admitted.tolist()
    [True, True, False]
    """
    import heapq

    arrival = np.asarray(arrival_s, dtype=np.float64)
    service = np.asarray(service_s, dtype=np.float64)
    c = _positive_int("servers", servers)
    if arrival.ndim != 1 or arrival.shape != service.shape or arrival.size == 0:
        raise ValueError("arrival_s and service_s must be 1-D arrays of one equal, non-zero length")
    if not (np.all(np.isfinite(arrival)) and np.all(np.isfinite(service)) and np.all(service >= 0)):
        raise ValueError("arrival_s must be finite and service_s finite and >= 0")
    if np.any(np.diff(arrival) < 0):
        raise ValueError("arrival_s must be non-decreasing (requests in arrival order)")
    if capacity is not None:
        capacity = _positive_int("capacity", capacity)
        if capacity < c:
            raise ValueError(f"capacity must be >= servers={c}, got {capacity}")
    n = arrival.size
    start = np.full(n, np.nan)
    depart = np.full(n, np.nan)
    admitted = np.zeros(n, dtype=bool)
    free = [0.0] * c          # when each server next becomes free (a min-heap)
    inside: list[float] = []  # departures of admitted requests still inside (a min-heap)
    for i in range(n):
        a = arrival[i]
        while inside and inside[0] <= a:
            heapq.heappop(inside)
        if capacity is not None and len(inside) >= capacity:
            continue
        s = max(a, heapq.heappop(free))
        d = s + service[i]
        heapq.heappush(free, d)
        heapq.heappush(inside, d)
        start[i], depart[i], admitted[i] = s, d, True
    return MultiServerTrace(arrival, start, depart, admitted, c, capacity)


def simulate_mmc(arrival_rate_per_s: float, service_rate_per_s: float, servers: int,
                 n_customers: int, *, seed: int, capacity: int | None = None) -> MultiServerTrace:
    """Simulate an M/M/c (or, with ``capacity``, M/M/c/K) queue: Poisson arrivals, exponential
    service at ``service_rate_per_s`` per server. Unbounded queues must be stable."""
    lam = _positive("arrival_rate_per_s", arrival_rate_per_s)
    mu = _positive("service_rate_per_s", service_rate_per_s)
    c = _positive_int("servers", servers)
    n = _positive_int("n_customers", n_customers, minimum=10)
    if capacity is None and lam >= c * mu:
        raise ValueError(f"arrival_rate_per_s must be below servers * service_rate_per_s = "
                         f"{c * mu!r} without a capacity, got {lam!r}")
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1.0 / lam, size=n))
    return simulate_multi_server(arrival, rng.exponential(1.0 / mu, size=n), c,
                                 capacity=capacity)
