"""Tests of helpers.models.queueing against limits, the event simulation, published numbers."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import queueing as qm
from helpers.sim import queue as qs

utilizations = st.floats(min_value=0.0, max_value=0.999, allow_nan=False)
service_rates = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


# --- limits and invariants ---------------------------------------------------------------

@given(utilizations, service_rates)
def test_mm1_identities(rho, mu):
    lam = rho * mu
    w = qm.mm1_mean_time_in_system_s(lam, mu)
    assert w == pytest.approx(qm.mm1_mean_wait_s(lam, mu) + 1 / mu, rel=1e-9)
    # Little's law holds inside the formulas: L = lambda W and L_q = lambda W_q
    assert qm.mm1_mean_number_in_system(lam, mu) == pytest.approx(lam * w, rel=1e-9, abs=1e-12)
    assert qm.mm1_mean_number_in_queue(lam, mu) == pytest.approx(
        lam * qm.mm1_mean_wait_s(lam, mu), rel=1e-9, abs=1e-12)
    # The time in system is exponential: its median is ln 2 times the mean.
    assert qm.mm1_time_in_system_percentile_s(50, lam, mu) == pytest.approx(math.log(2) * w,
                                                                          rel=1e-9)
    # M/G/1 with exponential service (scv = 1) is M/M/1.
    assert qm.mg1_mean_wait_s(lam, 1 / mu, 1.0) == pytest.approx(qm.mm1_mean_wait_s(lam, mu),
                                                                 rel=1e-9, abs=1e-15)


def test_latency_grows_without_bound_as_utilization_approaches_one():
    mu = 100.0
    rhos = [0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999]
    means = [qm.mm1_mean_time_in_system_s(r * mu, mu) for r in rhos]
    p99s = [qm.mm1_time_in_system_percentile_s(99, r * mu, mu) for r in rhos]
    assert all(a < b for a, b in zip(means, means[1:]))
    assert all(a < b for a, b in zip(p99s, p99s[1:]))
    assert means[-1] > 1e4 / mu  # ten thousand service times and counting
    for r, m in zip(rhos, means):
        assert m * (1 - r) == pytest.approx(1 / mu, rel=1e-9)  # W (1 - rho) = 1/mu


def test_no_load_limit():
    assert qm.mm1_mean_time_in_system_s(0.0, 50.0) == pytest.approx(0.02)
    assert qm.mm1_mean_wait_s(0.0, 50.0) == 0.0
    assert qm.mm1_wait_percentile_s(99, 0.0, 50.0) == 0.0


@given(st.floats(min_value=0.05, max_value=0.95), st.floats(min_value=1.0, max_value=99.9))
def test_wait_percentile_matches_its_tail(rho, p):
    mu = 10.0
    w = qm.mm1_wait_percentile_s(p, rho * mu, mu)
    tail = rho * math.exp(-(mu - rho * mu) * w)  # P(W_q > w)
    if w > 0:
        assert tail == pytest.approx(1 - p / 100, rel=1e-9)
    else:
        assert 1 - rho >= p / 100 - 1e-12  # enough arrivals find the server idle


@given(st.floats(min_value=0.01, max_value=0.98), st.floats(min_value=50.0, max_value=99.9))
def test_capacity_inverts_the_latency(rho, p):
    mu = 20.0
    target = qm.mm1_mean_time_in_system_s(rho * mu, mu)
    assert qm.mm1_max_arrival_rate_per_s(mu, target) == pytest.approx(rho * mu, rel=1e-9)
    target_p = qm.mm1_time_in_system_percentile_s(p, rho * mu, mu)
    assert qm.mm1_max_arrival_rate_per_s(mu, target_p, percentile=p) == pytest.approx(
        rho * mu, rel=1e-9)


def test_little_solves_for_each_unknown():
    for lam, w in [(20.0, 2.5), (0.3, 7.0), (1e6, 1e-6)]:
        n = qm.little_number_in_system(lam, w)
        assert qm.little_arrival_rate_per_s(n, w) == pytest.approx(lam)
        assert qm.little_time_in_system_s(n, lam) == pytest.approx(w)


# --- the event simulation as oracle ------------------------------------------------------

@pytest.mark.parametrize("rho,tol_mean,tol_p99", [(0.5, 0.02, 0.05), (0.8, 0.04, 0.10)])
def test_mm1_formulas_against_simulation(rho, tol_mean, tol_p99):
    mu = 50.0
    lam = rho * mu
    tr = qs.simulate_mm1(lam, mu, 1_000_000, seed=2024)
    assert tr.mean_time_in_system_s() == pytest.approx(qm.mm1_mean_time_in_system_s(lam, mu),
                                                       rel=tol_mean)
    assert tr.mean_wait_s() == pytest.approx(qm.mm1_mean_wait_s(lam, mu), rel=tol_mean)
    assert tr.mean_number_in_system() == pytest.approx(qm.mm1_mean_number_in_system(lam, mu),
                                                       rel=tol_mean)
    # time-averaged number waiting = number present minus number in service
    assert tr.mean_number_in_system() - tr.utilization() == pytest.approx(
        qm.mm1_mean_number_in_queue(lam, mu), rel=1.5 * tol_mean)
    assert tr.utilization() == pytest.approx(rho, rel=0.01)
    for p in (50, 90, 99):
        assert tr.time_in_system_percentile_s(p) == pytest.approx(
            qm.mm1_time_in_system_percentile_s(p, lam, mu), rel=tol_p99)
    for p in (90, 99):
        sim_wait = float(np.percentile(tr.wait_s, p))
        assert sim_wait == pytest.approx(qm.mm1_wait_percentile_s(p, lam, mu), rel=tol_p99)


def test_mm1_tail_is_exponential_in_simulation():
    """P(T > t) from the trace against exp(-(mu - lambda) t) at several t."""
    lam, mu = 30.0, 50.0
    tr = qs.simulate_mm1(lam, mu, 1_000_000, seed=7)
    t = tr.time_in_system_s
    # Tolerances are about four standard deviations of the estimate over 30 seeds: the far
    # tail is rarer and the customers' times are correlated, so it is noisier.
    for k, tol in [(0.5, 0.02), (1.0, 0.03), (2.0, 0.05), (4.0, 0.12)]:
        x = k / (mu - lam)
        assert float(np.mean(t > x)) == pytest.approx(math.exp(-k), rel=tol)


def test_md1_wait_is_half_the_mm1_wait():
    """Pollaczek-Khinchin with constant service (scv = 0), against a simulated M/D/1 queue."""
    lam, s = 40.0, 0.020
    tr = qs.simulate_fifo_queue(lam, qs.deterministic(s), 1_000_000, seed=11)
    assert tr.mean_wait_s() == pytest.approx(qm.mg1_mean_wait_s(lam, s, 0.0), rel=0.03)
    assert qm.mg1_mean_wait_s(lam, s, 0.0) == pytest.approx(0.5 * qm.mm1_mean_wait_s(lam, 1 / s))


def test_mg1_with_a_two_point_service_distribution():
    """A service time of 5 ms or 45 ms with equal odds: mean 25 ms, scv = 0.64."""
    values = np.array([0.005, 0.045])
    mean, scv = values.mean(), values.var() / values.mean() ** 2
    lam = 24.0  # rho = 0.6
    tr = qs.simulate_fifo_queue(lam, qs.empirical(values), 1_000_000, seed=5)
    assert tr.mean_wait_s() == pytest.approx(qm.mg1_mean_wait_s(lam, mean, scv), rel=0.04)


# --- published numbers -------------------------------------------------------------------

def test_hennessy_patterson_appendix_d5_disk():
    """H&P 5th ed., appendix D.5: 40 I/Os per second to a disk with a 20 ms service time is
    80 % utilized; a request waits 80 ms and completes in 100 ms; 3.2 wait on average. With
    a 10 ms disk: 40 % utilized, 6.7 ms waiting, 16.7 ms in all."""
    lam, mu = 40.0, 1 / 0.020
    assert qm.utilization(lam, 0.020) == pytest.approx(0.8)
    assert qm.mm1_mean_wait_s(lam, mu) == pytest.approx(0.080)
    assert qm.mm1_mean_time_in_system_s(lam, mu) == pytest.approx(0.100)
    assert qm.mm1_mean_number_in_queue(lam, mu) == pytest.approx(3.2)
    fast = 1 / 0.010
    assert qm.utilization(lam, 0.010) == pytest.approx(0.4)
    assert round(qm.mm1_mean_wait_s(lam, fast) * 1e3, 1) == 6.7
    assert round(qm.mm1_mean_time_in_system_s(lam, fast) * 1e3, 1) == 16.7


def test_little_and_graves_wine_cellar():
    """Little and Graves (2008), chapter 5: a 240-bottle rack about 2/3 full, 8 bottles
    bought a month: W = L / lambda = 160 / 96 per year, about 1.67 years."""
    assert round(qm.little_time_in_system_s(240 * 2 / 3, 8 * 12), 2) == 1.67


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("rho", [1.0, 1.5])
def test_unstable_queue_is_an_error(rho):
    for fn in (qm.mm1_mean_time_in_system_s, qm.mm1_mean_wait_s, qm.mm1_mean_number_in_system,
               qm.mm1_mean_number_in_queue):
        with pytest.raises(ValueError, match=r"must be in \[0, 1\) for a stable queue"):
            fn(rho * 10.0, 10.0)
    with pytest.raises(ValueError, match="utilization"):
        qm.utilization(rho * 10.0, 0.1)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_bad_rates(bad):
    with pytest.raises(ValueError, match=r"arrival_rate_per_s must be a finite number in \[0"):
        qm.mm1_mean_time_in_system_s(bad, 10.0)
    with pytest.raises(ValueError, match=r"service_rate_per_s must be a finite number in \(0"):
        qm.mm1_mean_time_in_system_s(1.0, bad)
    with pytest.raises(ValueError, match="time_in_system_s"):
        qm.little_number_in_system(1.0, bad)
    with pytest.raises(ValueError, match="service_scv"):
        qm.mg1_mean_wait_s(1.0, 0.1, bad)


@pytest.mark.parametrize("bad", [-1, 100, float("nan")])
def test_bad_percentile(bad):
    with pytest.raises(ValueError, match=r"percentile must be in \[0, 100\)"):
        qm.mm1_time_in_system_percentile_s(bad, 1.0, 10.0)


def test_unreachable_latency_target():
    with pytest.raises(ValueError, match="target_s must exceed"):
        qm.mm1_max_arrival_rate_per_s(50.0, 0.010)  # shorter than one 20 ms service
    with pytest.raises(ValueError, match="target_s must exceed"):
        qm.mm1_max_arrival_rate_per_s(50.0, 0.050, percentile=99)
    with pytest.raises(ValueError, match="little_time|arrival_rate_per_s"):
        qm.little_time_in_system_s(1.0, 0.0)


# --- c servers: Erlang B and C, M/M/c, M/M/c/K -------------------------------------------

servers_st = st.integers(min_value=1, max_value=200)


@given(servers_st, st.floats(min_value=0.0, max_value=0.999))
def test_erlang_c_limits_and_identities(c, rho):
    a = rho * c
    pw = qm.erlang_c(c, a)
    assert 0.0 <= pw <= 1.0
    # waiting is at least as likely as blocking with no room (Erlang C >= Erlang B)
    assert pw >= qm.erlang_b(c, a) - 1e-12
    # Little's law inside the formula: L_q = lambda W_q = C a / (c - a)
    assert 1.0 * a * qm.mmc_mean_wait_s(a, 1.0, c) == pytest.approx(pw * a / (c - a), rel=1e-9,
                                                                    abs=1e-12)


@given(st.floats(min_value=0.0, max_value=0.999), service_rates)
def test_one_server_is_mm1(rho, mu):
    lam = rho * mu
    assert qm.erlang_c(1, rho) == pytest.approx(rho, abs=1e-12)
    assert qm.mmc_mean_wait_s(lam, mu, 1) == pytest.approx(qm.mm1_mean_wait_s(lam, mu), rel=1e-9,
                                                           abs=1e-15)
    assert qm.mmc_wait_percentile_s(95, lam, mu, 1) == pytest.approx(
        qm.mm1_wait_percentile_s(95, lam, mu), rel=1e-9, abs=1e-15)
    assert qm.mgc_mean_wait_s(lam, 1 / mu, 1, 0.3) == pytest.approx(
        qm.mg1_mean_wait_s(lam, 1 / mu, 0.3), rel=1e-9, abs=1e-15)


def test_erlang_c_against_its_textbook_sum_and_pooling_helps():
    def textbook(c, a):  # the closed form with factorials, fine for small c
        top = a ** c / math.factorial(c) * c / (c - a)
        return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)

    for c, a in [(2, 1.5), (3, 2.0), (10, 6.0), (14, 10.0), (40, 35.0)]:
        assert qm.erlang_c(c, a) == pytest.approx(textbook(c, a), rel=1e-12)
    # the same per-server utilization waits less with more servers (pooling)
    waits = [qm.mmc_mean_wait_s(0.8 * c, 1.0, c) for c in (1, 2, 4, 8, 16)]
    assert waits == sorted(waits, reverse=True)
    assert qm.erlang_c(400, 399.0) < 1.0 and qm.erlang_b(400, 1e4) < 1.0  # no overflow


def test_attainment_and_percentile_invert_each_other():
    lam, mu, c = 7.0, 1.0, 8
    for p in (50, 90, 99, 99.9):
        w = qm.mmc_wait_percentile_s(p, lam, mu, c)
        if w > 0:
            assert qm.mmc_wait_attainment(w, lam, mu, c) == pytest.approx(p / 100, rel=1e-9)
    assert qm.mmc_wait_attainment(0.0, lam, mu, c) == pytest.approx(1 - qm.erlang_c(c, 7.0))


@given(st.integers(1, 12), st.integers(0, 30), st.floats(0.01, 20.0))
def test_mmck_is_a_distribution_and_tends_to_mmc(c, extra, a):
    k = c + extra
    pi = qm.mmck_state_probabilities(a, 1.0, c, k)
    assert len(pi) == k + 1 and math.fsum(pi) == pytest.approx(1.0)
    assert 0.0 <= qm.mmck_blocking_probability(a, 1.0, c, k) < 1.0
    assert 0.0 <= qm.mmck_wait_attainment(0.5, a, 1.0, c, k) <= 1.0 + 1e-12


def test_mmck_limits():
    # K = c is Erlang B; a huge K below saturation is M/M/c
    assert qm.mmck_blocking_probability(6.0, 1.0, 4, 4) == pytest.approx(qm.erlang_b(4, 6.0))
    assert qm.mmck_wait_attainment(0.3, 3.0, 1.0, 4, 400) == pytest.approx(
        qm.mmc_wait_attainment(0.3, 3.0, 1.0, 4), rel=1e-9)
    # past saturation a bigger cap blocks less but makes the admitted wait longer
    b = [qm.mmck_blocking_probability(12.0, 1.0, 4, k) for k in (4, 8, 16)]
    att = [qm.mmck_wait_attainment(0.5, 12.0, 1.0, 4, k) for k in (4, 8, 16)]
    assert b == sorted(b, reverse=True) and att == sorted(att, reverse=True)
    # M/M/1/K blocking in closed form: (1 - r) r^K / (1 - r^(K+1))
    r, k = 1.5, 5
    assert qm.mmck_blocking_probability(r, 1.0, 1, k) == pytest.approx(
        (1 - r) * r ** k / (1 - r ** (k + 1)))


def test_servers_needed_with_reserve():
    lam, mu = 50.0, 1.0
    c = qm.mmc_servers_needed(lam, mu, 0.2, 0.95)
    assert qm.mmc_wait_attainment(0.2, lam, mu, c) >= 0.95
    assert qm.mmc_wait_attainment(0.2, lam, mu, c - 1) < 0.95 if c - 1 > lam / mu else True
    assert qm.mmc_servers_needed(lam, mu, 0.2, 0.95, reserve=0.25) >= c
    assert qm.mmc_servers_needed(lam, mu, 0.2, 0.95, reserve=0.25) == qm.mmc_servers_needed(
        1.25 * lam, mu, 0.2, 0.95)


# --- the oracle: the c-server simulator -------------------------------------------------

@pytest.mark.parametrize("lam,c", [(1.5, 2), (3.2, 4), (6.0, 8)])
def test_mmc_formulas_match_simulation(lam, c):
    tr = qs.simulate_mmc(lam, 1.0, c, 60_000, seed=7)
    assert tr.mean_wait_s() == pytest.approx(qm.mmc_mean_wait_s(lam, 1.0, c), rel=0.12)
    assert float(np.mean(tr.wait_s > 0)) == pytest.approx(qm.erlang_c(c, lam), abs=0.02)
    assert tr.wait_attainment(0.3) == pytest.approx(qm.mmc_wait_attainment(0.3, lam, 1.0, c),
                                                    abs=0.02)


@pytest.mark.parametrize("lam,c,k", [(6.0, 4, 8), (2.0, 2, 3), (20.0, 8, 12)])
def test_mmck_formulas_match_simulation(lam, c, k):
    tr = qs.simulate_mmc(lam, 1.0, c, 60_000, seed=3, capacity=k)
    assert tr.blocking_fraction() == pytest.approx(qm.mmck_blocking_probability(lam, 1.0, c, k),
                                                   abs=0.01)
    assert tr.wait_attainment(0.2) == pytest.approx(
        qm.mmck_wait_attainment(0.2, lam, 1.0, c, k), abs=0.015)


# --- published numbers ---------------------------------------------------------------------

def test_erlangc_package_example():
    """ErlangC R package 0.1.0, README: 100 calls in 30 min, 180 s each, 14 agents, 20 s target:
    traffic intensity 10, wait probability 0.1741319, service level 0.88835, average speed of
    answer 7.83593701177724 s, agents needed for an 80 % service level: 14."""
    lam, mu = 100 / 1800, 1 / 180
    assert lam / mu == pytest.approx(10.0)
    assert qm.erlang_c(14, 10.0) == pytest.approx(0.1741319, abs=5e-8)
    assert qm.mmc_wait_attainment(20.0, lam, mu, 14) == pytest.approx(0.88835, abs=5e-6)
    assert qm.mmc_mean_wait_s(lam, mu, 14) == pytest.approx(7.83593701177724, rel=1e-9)
    assert qm.mmc_servers_needed(lam, mu, 20.0, 0.80) == 14


def test_c_server_errors():
    with pytest.raises(ValueError, match="servers"):
        qm.erlang_c(0, 0.5)
    with pytest.raises(ValueError, match="servers"):
        qm.erlang_c(2.5, 0.5)
    with pytest.raises(ValueError, match="offered_load"):
        qm.erlang_c(2, 2.0)
    with pytest.raises(ValueError, match="stable M/M/c"):
        qm.mmc_mean_wait_s(4.0, 1.0, 4)
    with pytest.raises(ValueError, match="capacity"):
        qm.mmck_blocking_probability(1.0, 1.0, 4, 3)
    with pytest.raises(ValueError, match="attainment"):
        qm.mmc_servers_needed(1.0, 1.0, 0.1, 1.0)
    with pytest.raises(ValueError, match="slo_s"):
        qm.mmc_wait_attainment(-1.0, 1.0, 1.0, 2)
