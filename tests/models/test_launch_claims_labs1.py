"""Tests of the launch-overhead lab's size models in helpers.models.launch: graph_kernel_time_s
and launch_crossover_bytes (limits, an event-by-event pipeline as oracle, bad input)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import launch

times = st.floats(min_value=1e-7, max_value=1e-3, allow_nan=False, allow_infinity=False)
rates = st.floats(min_value=1e9, max_value=1e13, allow_nan=False, allow_infinity=False)


def simulate_eager_per_kernel(n: int, launch_s: float, kernel_s: float) -> float:
    """Oracle: event-by-event host and device (as tests/models/test_launch.py), per kernel."""
    device_free = 0.0
    for i in range(n):
        device_free = max((i + 1) * launch_s, device_free) + kernel_s
    return device_free / n


def test_a_kernel_of_no_bytes_costs_the_fixed_node_cost_and_bytes_add_at_the_bandwidth():
    assert launch.graph_kernel_time_s(0.0, 1e-6, 4e12) == 1e-6
    assert launch.graph_kernel_time_s(8e9, 1e-6, 4e12) == pytest.approx(1e-6 + 2e-3)
    # doubling the bandwidth halves the memory term only
    a, b = (launch.graph_kernel_time_s(4e6, 1e-6, m) for m in (2e12, 4e12))
    assert a - 1e-6 == pytest.approx(2 * (b - 1e-6))


@given(times, times, rates)
def test_at_the_crossover_device_time_equals_the_launch(t_l, t_kg, m):
    b = launch.launch_crossover_bytes(t_l, t_kg, m)
    if t_l <= t_kg:
        assert b == 0.0
    else:
        assert launch.graph_kernel_time_s(b, t_kg, m) == pytest.approx(t_l, rel=1e-9)


@pytest.mark.parametrize("factor, bound", [(0.25, "launch"), (4.0, "device")])
def test_the_crossover_separates_launch_bound_from_work_bound_in_a_simulated_pipeline(factor, bound):
    t_l, t_kg, m = 8e-6, 1e-6, 4e12
    b_star = launch.launch_crossover_bytes(t_l, t_kg, m)
    t_k = launch.graph_kernel_time_s(factor * b_star, t_kg, m)
    per_kernel = simulate_eager_per_kernel(2000, t_l, t_k)
    want = t_l if bound == "launch" else t_k
    assert per_kernel == pytest.approx(want, rel=2e-3)


@pytest.mark.parametrize("call", [
    lambda: launch.graph_kernel_time_s(-1.0, 1e-6, 4e12),
    lambda: launch.graph_kernel_time_s(1.0, 0.0, 4e12),
    lambda: launch.graph_kernel_time_s(1.0, 1e-6, 0.0),
    lambda: launch.launch_crossover_bytes(0.0, 1e-6, 4e12),
    lambda: launch.launch_crossover_bytes(1e-6, float("nan"), 4e12),
])
def test_bad_input_names_the_argument(call):
    with pytest.raises(ValueError, match="_s|_bytes"):
        call()
