"""Tests of helpers.models.launch: limits, a simulated host-device pipeline, a published pair."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import launch

times = st.floats(min_value=1e-7, max_value=1e-3, allow_nan=False, allow_infinity=False)
counts = st.integers(min_value=1, max_value=5000)


def simulate_eager(n: int, launch_s: float, kernel_s: float) -> float:
    """Oracle: event-by-event host and device. The host finishes launch i at (i+1) t_l; the
    device starts kernel i when it has been launched and the previous kernel has finished."""
    device_free = 0.0
    for i in range(n):
        launched = (i + 1) * launch_s
        device_free = max(launched, device_free) + kernel_s
    return device_free


# --- limits and invariants ---------------------------------------------------------------

@given(counts, times, times)
def test_eager_matches_a_simulated_pipeline_up_to_one_stage(n, t_l, t_k):
    # The pipeline's total is n times the slower stage plus one pass of the faster one.
    sim = simulate_eager(n, t_l, t_k)
    model = launch.eager_time_s(n, t_l, t_k, sync_s=min(t_l, t_k))
    assert model == pytest.approx(sim, rel=1e-9)


@given(counts, times, times, times, times)
def test_graph_wins_exactly_beyond_the_crossover(n, t_l, t_k, t_g, t_kg):
    n_star = launch.crossover_n_kernels(t_l, t_k, t_g, t_kg)
    eager = launch.eager_time_s(n, t_l, t_k)
    graph = launch.graph_time_s(n, t_g, t_kg)
    if n > n_star * (1 + 1e-9):
        assert graph < eager * (1 + 1e-9)
    elif n < n_star * (1 - 1e-9):
        assert graph > eager * (1 - 1e-9)


@given(times, times, times, times)
def test_speedup_tends_to_the_per_kernel_ratio(t_l, t_k, t_g, t_kg):
    big = 10**9
    assert launch.graph_speedup(big, t_l, t_k, t_g, t_kg) == pytest.approx(
        max(t_l, t_k) / t_kg, rel=1e-3)


@given(times, times)
def test_launch_bound_fraction_is_zero_when_work_bound_and_below_one(t_l, t_k):
    f = launch.launch_bound_fraction(t_l, t_k)
    assert 0.0 <= f < 1.0
    if t_k >= t_l:
        assert f == 0.0
    else:  # the idle share of a launch-bound chain, from the simulation
        n = 50
        sim = simulate_eager(n, t_l, t_k)
        assert f == pytest.approx(1 - n * t_k / (sim - t_k), rel=1e-9)


@given(counts, times, times)
def test_serial_is_never_faster_than_overlapped(n, t_l, t_k):
    assert launch.serial_time_s(n, t_l, t_k) >= launch.eager_time_s(n, t_l, t_k)
    assert launch.serial_time_s(n, t_l, t_k) <= 2 * launch.eager_time_s(n, t_l, t_k) * (1 + 1e-12)


def test_crossover_edges():
    assert launch.crossover_n_kernels(5e-6, 1e-6, 10e-6, 5e-6) == math.inf  # no per-kernel saving
    assert launch.crossover_n_kernels(5e-6, 1e-6, 1e-6, 1e-6, sync_s=2e-6) == 0.0
    assert launch.crossover_n_kernels(5e-6, 2e-6, 9e-6, 2e-6) == pytest.approx(3.0)


def test_arrays_broadcast():
    ns = np.array([1, 10, 100])
    assert np.allclose(launch.eager_time_s(ns, 5e-6, 2e-6), ns * 5e-6)
    assert np.allclose(launch.graph_time_s(ns, 1e-5, 2e-6), 1e-5 + ns * 2e-6)


# --- oracle: the fit against numpy's polynomial fit ------------------------------------------

def test_fit_line_recovers_known_parameters_and_agrees_with_polyfit():
    rng = np.random.default_rng(0)
    ns = np.array([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000])
    t = 7e-6 + 4.5e-6 * ns
    a, b = launch.fit_line(ns, t)
    assert (a, b) == pytest.approx((7e-6, 4.5e-6), rel=1e-9)
    noisy = t * (1 + 0.02 * rng.standard_normal(ns.size))
    a, b = launch.fit_line(ns, noisy)
    slope, intercept = np.polyfit(ns, noisy, 1)
    assert (a, b) == pytest.approx((intercept, slope), rel=1e-9)


# --- published: CUDA.jl's RK4 example (docs, "Graphs") ---------------------------------------

def test_reproduces_the_cudajl_rk4_pair():
    # 80 broadcast kernels: about 260 µs launched normally, 70 µs as a graph, 3.5 µs of CPU
    # time for the graph launch. A launch-bound chain (kernels far shorter than a launch)
    # implies t_l = 260/80 µs; the graph's fixed cost is its CPU time.
    n, eager_s, graph_s, graph_cpu_s = 80, 260e-6, 70e-6, 3.5e-6
    t_l = eager_s / n
    t_kg = (graph_s - graph_cpu_s) / n
    assert launch.eager_time_s(n, t_l, 0.5e-6) == pytest.approx(eager_s, rel=1e-12)
    assert launch.graph_time_s(n, graph_cpu_s, t_kg) == pytest.approx(graph_s, rel=1e-12)
    assert launch.graph_speedup(n, t_l, 0.5e-6, graph_cpu_s, t_kg) == pytest.approx(260 / 70)
    # and the model's prediction: with these costs a graph pays from the second kernel on
    assert 1 < launch.crossover_n_kernels(t_l, 0.5e-6, graph_cpu_s, t_kg) < 2


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: launch.eager_time_s(0, 1e-6, 1e-6),
    lambda: launch.eager_time_s(2.5, 1e-6, 1e-6),
    lambda: launch.eager_time_s(True, 1e-6, 1e-6),
    lambda: launch.eager_time_s(10, -1e-6, 1e-6),
    lambda: launch.eager_time_s(10, 1e-6, math.nan),
    lambda: launch.eager_time_s(10, 1e-6, 1e-6, sync_s=-1.0),
    lambda: launch.eager_time_s(np.array([1, 0]), 1e-6, 1e-6),
    lambda: launch.graph_time_s(10, -1e-6, 1e-6),
    lambda: launch.graph_time_s(10, 1e-6, 0.0),
    lambda: launch.serial_time_s(10, 0.0, 1e-6),
    lambda: launch.crossover_n_kernels(1e-6, 1e-6, 1e-6, math.inf),
    lambda: launch.launch_bound_fraction(0.0, 1e-6),
    lambda: launch.fit_line([1, 1, 1], [1e-6, 2e-6, 3e-6]),
    lambda: launch.fit_line([1, 2], [1e-6]),
    lambda: launch.fit_line([1, 2], [1e-6, -1e-6]),
    lambda: launch.fit_line([], []),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
