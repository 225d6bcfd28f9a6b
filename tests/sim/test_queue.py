"""Tests of helpers.sim.queue: the closed-form recursion against a plain event loop, Little's
law on measured traces, determinism, and errors."""

import heapq

import numpy as np
import pytest

from helpers.sim import queue as qs


def _event_loop(gaps, services):
    """A textbook discrete-event simulation: a heap of (time, kind, customer) events."""
    n = len(gaps)
    arrivals = np.cumsum(gaps)
    events = [(float(arrivals[0]), 0, 0)]  # kind 0 = arrival, 1 = departure
    start, depart = np.zeros(n), np.zeros(n)
    waiting, busy, next_arrival = [], False, 1
    while events:
        t, kind, i = heapq.heappop(events)
        if kind == 0:
            if next_arrival < n:
                heapq.heappush(events, (float(arrivals[next_arrival]), 0, next_arrival))
                next_arrival += 1
            if busy:
                waiting.append(i)
            else:
                busy, start[i] = True, t
                heapq.heappush(events, (t + services[i], 1, i))
        else:
            depart[i] = t
            if waiting:
                j = waiting.pop(0)
                start[j] = t
                heapq.heappush(events, (t + services[j], 1, j))
            else:
                busy = False
    return arrivals, start, depart


@pytest.mark.parametrize("sampler", [qs.exponential(0.9), qs.deterministic(0.7),
                                     qs.empirical([0.1, 0.2, 3.0])])
def test_closed_form_matches_an_event_loop(sampler):
    n, lam = 3000, 1.0
    tr = qs.simulate_fifo_queue(lam, sampler, n, seed=3, warmup_fraction=0.0)
    rng = np.random.default_rng(3)  # the same draws, in the same order
    gaps = rng.exponential(1 / lam, size=n)
    services = sampler(rng, n)
    arrivals, start, depart = _event_loop(gaps, services)
    np.testing.assert_allclose(tr.arrival_s, arrivals, rtol=1e-12)
    np.testing.assert_allclose(tr.start_s, start, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(tr.departure_s, depart, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("sampler,lam", [(qs.exponential(0.02), 40.0),
                                         (qs.deterministic(0.02), 45.0),
                                         (qs.empirical([0.001, 0.004, 0.1]), 20.0)])
def test_littles_law_holds_on_measured_traces(sampler, lam):
    """L (time average of the number present) equals lambda (counted) x W (averaged)."""
    tr = qs.simulate_fifo_queue(lam, sampler, 200_000, seed=1)
    L = tr.mean_number_in_system()
    assert L == pytest.approx(tr.arrival_rate_per_s() * tr.mean_time_in_system_s(), rel=2e-3)
    assert tr.arrival_rate_per_s() == pytest.approx(lam, rel=0.01)


def test_trace_invariants_and_determinism():
    a = qs.simulate_mm1(8.0, 10.0, 50_000, seed=42)
    b = qs.simulate_mm1(8.0, 10.0, 50_000, seed=42)
    c = qs.simulate_mm1(8.0, 10.0, 50_000, seed=43)
    assert np.array_equal(a.departure_s, b.departure_s)
    assert not np.array_equal(a.departure_s, c.departure_s)
    assert np.all(a.start_s >= a.arrival_s)  # nobody starts before arriving
    assert np.all(np.diff(a.departure_s) > 0)  # first come, first served
    assert np.all(a.start_s[1:] >= a.departure_s[:-1] - 1e-9)  # one server
    assert a.n_counted == 45_000 and a.wait_s.size == 45_000
    assert 0 < a.utilization() < 1


def test_an_idle_queue_never_waits():
    """Arrivals spaced further apart than the (constant) service never queue."""
    tr = qs.simulate_fifo_queue(1.0, qs.deterministic(0.5), 100, seed=0,
                                interarrival=qs.deterministic(1.0))
    assert np.all(tr.wait_s == 0)
    assert tr.mean_number_in_system() == pytest.approx(0.5, rel=0.02)


def test_errors():
    with pytest.raises(ValueError, match="below service_rate_per_s"):
        qs.simulate_mm1(10.0, 10.0, 1000, seed=0)
    with pytest.raises(ValueError, match="n_customers must be an integer >= 10"):
        qs.simulate_mm1(1.0, 10.0, 5, seed=0)
    with pytest.raises(ValueError, match=r"warmup_fraction must be in \[0, 0.9\]"):
        qs.simulate_mm1(1.0, 10.0, 100, seed=0, warmup_fraction=0.95)
    with pytest.raises(ValueError, match="mean_s"):
        qs.exponential(0.0)
    with pytest.raises(ValueError, match="value_s"):
        qs.deterministic(-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        qs.empirical([0.1, -0.2])
    with pytest.raises(ValueError, match="one duration per customer"):
        qs.simulate_fifo_queue(1.0, lambda rng, n: np.ones(n + 1), 100, seed=0)


def test_multi_server_invariants():
    rng = np.random.default_rng(0)
    arrival = np.cumsum(rng.exponential(0.3, size=500))
    service = rng.exponential(1.0, size=500)
    for cap in (None, 5):
        tr = qs.simulate_multi_server(arrival, service, 3, capacity=cap)
        adm = tr.admitted
        assert np.all(tr.start_s[adm] >= tr.arrival_s[adm])
        assert np.all(np.diff(tr.start_s[adm]) >= -1e-12)  # FIFO: starts in arrival order
        # never more than c in service at once: the (c+1)-th previous start ended before
        s, d = tr.start_s[adm], tr.departure_s[adm]
        busy = [np.sum((s <= t) & (d > t)) for t in s]
        assert max(busy) <= 3
    one = qs.simulate_multi_server(arrival, service, 1)  # one server: the FIFO recursion
    d = np.zeros_like(arrival)
    for i in range(arrival.size):
        d[i] = max(arrival[i], d[i - 1] if i else 0.0) + service[i]
    assert np.allclose(one.departure_s, d)


def test_multi_server_errors():
    with pytest.raises(ValueError, match="non-decreasing"):
        qs.simulate_multi_server([1.0, 0.0], [1.0, 1.0], 1)
    with pytest.raises(ValueError, match="capacity"):
        qs.simulate_multi_server([0.0, 1.0], [1.0, 1.0], 2, capacity=1)
    with pytest.raises(ValueError, match="below"):
        qs.simulate_mmc(2.0, 1.0, 2, 100, seed=0)
