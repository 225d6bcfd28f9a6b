"""Tests of helpers.models.threads: limits and invariants, independent oracles (a brute-force
search over worker counts; a simulated single-CPU ping-pong), and the GIL as Amdahl's law."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import amdahl, threads


@given(st.floats(1e-6, 10.0), st.floats(1e-7, 1e-2), st.integers(1, 256))
def test_best_count_matches_a_brute_force_search(w, s, m):
    best = min(range(1, m + 1), key=lambda n: threads.parallel_time_s(w, n, s))
    got = threads.best_worker_count(w, s, m)
    assert threads.parallel_time_s(w, got, s) == pytest.approx(
        threads.parallel_time_s(w, best, s), rel=1e-12)


@given(st.floats(1e-6, 10.0), st.integers(1, 64))
def test_free_workers_divide_the_work(w, n):
    assert threads.parallel_time_s(w, n, 0.0) == pytest.approx(w / n)
    assert threads.parallel_time_s(w, 1, 0.0) == pytest.approx(w)


def test_optimum_is_the_square_root_rule():
    # T(n) = n s + W/n is smallest at n = sqrt(W/s), where both terms are equal.
    w, s = 1.0, 1e-4
    n = threads.best_worker_count(w, s, 10_000)
    assert n == round(math.sqrt(w / s))
    assert n * s == pytest.approx(w / n)


def test_switch_cost_matches_a_simulated_single_cpu_pingpong():
    # Simulate one CPU: each hand-off costs a write, a switch and a read; the measured round
    # trip divided by two recovers switch + write + read, the upper bound the model promises.
    switch, write, read, rounds = 1.3e-6, 0.4e-6, 0.3e-6, 1000
    clock = 0.0
    for _ in range(rounds):
        for _side in range(2):
            clock += write + switch + read
    per_round = clock / rounds
    assert threads.switch_s_from_round_trip(per_round) == pytest.approx(switch + write + read)
    assert threads.switch_s_from_round_trip(per_round) >= switch


def test_the_gil_is_amdahls_law_with_a_serial_python_share():
    # With every instruction under the GIL, n threads give no speedup; with none, n-fold.
    # Amdahl (1967): the speedup of n workers on a fraction f is 1 / ((1 - f) + f / n).
    assert amdahl.amdahl_speedup(0.0, 2.0) == pytest.approx(1.0)
    assert amdahl.amdahl_speedup(1.0, 2.0) == pytest.approx(2.0)


@pytest.mark.parametrize("call", [
    lambda: threads.parallel_time_s(0.0, 2, 1e-6),
    lambda: threads.parallel_time_s(1.0, 0, 1e-6),
    lambda: threads.parallel_time_s(1.0, 2, -1.0),
    lambda: threads.best_worker_count(1.0, 0.0, 4),
    lambda: threads.best_worker_count(1.0, 1e-3, 0),
    lambda: threads.switch_s_from_round_trip(math.nan),
    lambda: threads.switch_s_from_round_trip(1e-6, 0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
