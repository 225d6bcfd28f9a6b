"""Tests of helpers.models.checkpointing: limits, the Monte Carlo oracle, Daly's and Meta's numbers."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import checkpointing as ck
from helpers.sim.failures import simulate_job

HOUR, MIN, DAY = 3600.0, 60.0, 86400.0


# --- published numbers -------------------------------------------------------------------

@pytest.mark.parametrize("mtbf_min, published_min", [(1440, 117), (360, 57), (15, 9.1)])
def test_daly_figures_3_to_5_optimum_reproduced(mtbf_min, published_min):
    # Daly (2006), figures 3-5: delta = 5 min, R = 10 min; tau_opt = 117, 57 and 9.1 min.
    got = ck.daly_interval_s(5 * MIN, mtbf_min * MIN) / MIN
    assert got == pytest.approx(published_min, abs=0.5 if published_min > 10 else 0.05)


def test_llama3_table5_about_one_interruption_every_three_hours():
    # Dubey et al. (2024), table 5: 419 unexpected interruptions in 54 days on 16,384 GPUs.
    job_mtbf = 54 * DAY / 419
    assert job_mtbf / HOUR == pytest.approx(3.09, abs=0.01)
    per_gpu = ck.per_unit_mtbf_s(54 * DAY, 419, 16_384)
    assert ck.cluster_mtbf_s(per_gpu, 16_384) == pytest.approx(job_mtbf)
    assert per_gpu / (365 * DAY) == pytest.approx(5.78, abs=0.01)


# --- limits and invariants ----------------------------------------------------------------

@given(st.floats(1e-3, 1e3), st.floats(1e3, 1e7))
def test_daly_tends_to_young_as_the_checkpoint_becomes_cheap(delta, mtbf):
    young, daly = ck.young_interval_s(delta, mtbf), ck.daly_interval_s(delta, mtbf)
    x = delta / (2 * mtbf)
    # Daly = Young (1 + sqrt(x)/3 + x/9) - delta: the relative gap is O(sqrt(x))
    assert abs(daly - young) / young <= math.sqrt(x) / 3 + x / 9 + delta / young + 1e-12


def test_daly_caps_at_the_mtbf_when_a_checkpoint_outlasts_two_mtbfs():
    assert ck.daly_interval_s(300.0, 100.0) == 100.0
    assert ck.daly_interval_s(199.0, 100.0) < 200.0


@given(st.floats(1.0, 1e3), st.floats(0.0, 1e3), st.floats(1e4, 1e6))
@settings(max_examples=50)
def test_daly_interval_minimises_the_complete_wall_time(delta, restart, mtbf):
    tau = ck.daly_interval_s(delta, mtbf)
    best = ck.expected_wall_time_s(1e6, tau, delta, restart, mtbf)
    for f in (0.5, 0.8, 1.25, 2.0):
        assert best <= ck.expected_wall_time_s(1e6, f * tau, delta, restart, mtbf) * (1 + 1e-9)


@given(st.floats(1.0, 1e3), st.floats(1e4, 1e7))
def test_young_minimises_the_first_order_waste(delta, mtbf):
    tau = ck.young_interval_s(delta, mtbf)
    g = ck.first_order_goodput(tau, delta, 0.0, mtbf)
    for f in (0.7, 1.4):
        assert g >= ck.first_order_goodput(f * tau, delta, 0.0, mtbf) - 1e-12


def test_without_failures_only_the_checkpoints_cost_time():
    assert ck.goodput(10.0, 1.0, 5.0, 1e15) == pytest.approx(10 / 11)


@given(st.floats(10.0, 1e4), st.floats(0.1, 100.0), st.floats(0.0, 100.0))
def test_first_order_goodput_is_the_limit_of_daly_for_a_long_mtbf(tau, delta, restart):
    # with failures negligible, Daly gives tau / (tau + delta) and the first order
    # 1 - delta / tau: they agree up to a term in (delta / tau)^2
    mtbf = 1e12
    gap = abs(ck.first_order_goodput(tau, delta, restart, mtbf) - ck.goodput(tau, delta, restart, mtbf))
    assert gap <= (delta / tau) ** 2 + 1e-6


def test_failure_probability_and_expected_failures():
    assert ck.failure_probability(0.0, 10.0) == 0.0
    assert ck.failure_probability(1e-6, 1.0) == pytest.approx(1e-6, rel=1e-5)
    assert ck.expected_failures(30.0, 10.0) == 3.0
    assert ck.expected_lost_work_s(20.0, 5.0) == 15.0


def test_cluster_mtbf_divides_by_the_nodes():
    assert ck.cluster_mtbf_s(1000.0, 1) == 1000.0
    assert ck.cluster_mtbf_s(1000.0, 8) == 125.0


# --- the Monte Carlo oracle ------------------------------------------------------------------

@pytest.mark.parametrize("tau, delta, restart, mtbf", [
    (10.0, 1.0, 2.0, 50.0), (30.0, 5.0, 10.0, 40.0), (5.0, 0.5, 0.0, 200.0)])
def test_the_wall_time_formula_matches_the_simulation(tau, delta, restart, mtbf):
    work = 20 * tau
    runs = simulate_job(work_s=work, interval_s=tau, checkpoint_s=delta, restart_s=restart,
                        mtbf_s=mtbf, n_runs=3000, seed=7)
    lo, hi = runs.wall_ci_s(z=4.0)
    assert lo <= ck.expected_wall_time_s(work, tau, delta, restart, mtbf) <= hi


def test_the_first_order_formula_is_off_when_the_interval_nears_the_mtbf():
    # the simulation sides with Daly, not with the first-order model, at tau = M / 2
    tau, delta, restart, mtbf = 50.0, 5.0, 5.0, 100.0
    runs = simulate_job(work_s=20 * tau, interval_s=tau, checkpoint_s=delta, restart_s=restart,
                        mtbf_s=mtbf, n_runs=3000, seed=3)
    daly = ck.goodput(tau, delta, restart, mtbf)
    first = ck.first_order_goodput(tau, delta, restart, mtbf)
    assert abs(runs.mean_goodput - daly) < 0.02 < abs(runs.mean_goodput - first)


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: ck.cluster_mtbf_s(-1.0, 4), lambda: ck.cluster_mtbf_s(10.0, 0),
    lambda: ck.young_interval_s(0.0, 10.0), lambda: ck.daly_interval_s(1.0, float("nan")),
    lambda: ck.expected_wall_time_s(10.0, 0.0, 1.0, 1.0, 10.0),
    lambda: ck.goodput(1.0, -1.0, 0.0, 10.0), lambda: ck.failure_probability(-1.0, 1.0),
    lambda: ck.per_unit_mtbf_s(10.0, 0, 4), lambda: ck.expected_lost_work_s(1.0, -2.0)])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
