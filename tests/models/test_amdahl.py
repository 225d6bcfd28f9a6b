"""Tests of helpers.models.amdahl: limits, an independent oracle, published numbers, errors."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import amdahl

fractions = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
factors = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)


# --- limits and invariants ---------------------------------------------------------------

@given(fractions, factors)
def test_speedup_is_bounded_by_the_limit_and_by_the_factor(f, s):
    speedup = amdahl.amdahl_speedup(f, s)
    assert speedup <= amdahl.amdahl_limit(f) * (1 + 1e-12)
    if s >= 1:
        assert 1.0 <= speedup * (1 + 1e-12) and speedup <= s * (1 + 1e-12)
    else:  # a slowdown of the part slows the whole, by at most the factor
        assert s * (1 - 1e-12) <= speedup <= 1.0 + 1e-12


@given(fractions)
def test_limit_is_reached_as_the_factor_grows(f):
    if f < 1 - 1e-6:
        assert amdahl.amdahl_speedup(f, 1e15) == pytest.approx(amdahl.amdahl_limit(f), rel=1e-6)


@given(fractions, factors, factors)
def test_speedup_grows_with_the_factor(f, s1, s2):
    lo, hi = sorted((s1, s2))
    assert amdahl.amdahl_speedup(f, lo) <= amdahl.amdahl_speedup(f, hi) * (1 + 1e-12)


def test_edge_cases():
    assert amdahl.amdahl_speedup(0.0, 1e6) == 1.0  # nothing improved
    assert amdahl.amdahl_speedup(1.0, 7.0) == pytest.approx(7.0)  # everything improved
    assert amdahl.amdahl_speedup(0.5, 1.0) == 1.0  # improved by nothing
    assert amdahl.amdahl_limit(1.0) == math.inf


@given(st.floats(min_value=0.01, max_value=0.99), st.floats(min_value=1.0001, max_value=1e4))
def test_required_factor_inverts_the_speedup(f, s):
    target = amdahl.amdahl_speedup(f, s)
    if target < amdahl.amdahl_limit(f) * (1 - 1e-9):
        assert amdahl.required_factor(f, target) == pytest.approx(s, rel=1e-6)


# --- independent oracle: time the stages one by one --------------------------------------

def test_request_speedup_matches_a_stage_by_stage_timeline():
    """Lay the stages end to end on a timeline (cumulative sums), speed some, compare ends."""
    rng = np.random.default_rng(0)
    names = ["tokenize", "queue", "prefill", "decode", "network"]
    for _ in range(200):
        times = dict(zip(names, rng.uniform(0.001, 2.0, size=len(names))))
        chosen = rng.choice(names, size=rng.integers(1, len(names) + 1), replace=False)
        speedups = {name: float(rng.uniform(0.5, 20.0)) for name in chosen}
        ends_before = np.cumsum([times[n] for n in names])
        ends_after = np.cumsum([times[n] / speedups.get(n, 1.0) for n in names])
        assert amdahl.request_time_s(times, speedups) == pytest.approx(ends_after[-1], rel=1e-12)
        assert amdahl.request_speedup(times, speedups) == pytest.approx(
            ends_before[-1] / ends_after[-1], rel=1e-12)
        if len(chosen) == 1:  # one improved stage is Amdahl's law itself
            (name,) = chosen
            f = times[name] / ends_before[-1]
            assert amdahl.request_speedup(times, speedups) == pytest.approx(
                amdahl.amdahl_speedup(f, speedups[name]), rel=1e-12)


# --- published numbers -------------------------------------------------------------------

def test_hennessy_patterson_web_server():
    """H&P 5th ed., section 1.9: computation is 40 % of the time and 10x faster: 1.56."""
    assert round(amdahl.amdahl_speedup(0.4, 10), 2) == 1.56


def test_bryant_ohallaron_section_1_9_1():
    """CS:APP 3rd ed., section 1.9.1: alpha = 0.6, k = 3 gives 1.67x, and at most 2.5x."""
    assert round(amdahl.amdahl_speedup(0.6, 3), 2) == 1.67
    assert amdahl.amdahl_limit(0.6) == pytest.approx(2.5)


def test_amdahl_1967_five_to_seven_times():
    """Amdahl (1967): sequential housekeeping is 40 % of executed instructions, reducible by
    a factor of two but improbably by three, so overhead alone caps throughput at "five to
    seven times the sequential processing rate"."""
    assert amdahl.amdahl_limit(1 - 0.40 / 2) == pytest.approx(5.0)
    assert 7.0 <= amdahl.amdahl_limit(1 - 0.40 / 3) < 8.0


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [-0.1, 1.1, float("nan")])
def test_fraction_must_be_in_unit_interval(bad):
    with pytest.raises(ValueError, match=r"fraction_improved must be a fraction in \[0, 1\]"):
        amdahl.amdahl_speedup(bad, 2.0)
    with pytest.raises(ValueError, match="fraction_improved"):
        amdahl.amdahl_limit(bad)


@pytest.mark.parametrize("bad", [0.0, -2.0, -float("inf"), float("nan")])
def test_factor_must_be_positive(bad):  # +inf is the limit N = inf (test_amdahl_i23.py)
    with pytest.raises(ValueError, match=r"factor must be a finite number in \(0, inf\)"):
        amdahl.amdahl_speedup(0.5, bad)


def test_unreachable_target_is_an_error():
    with pytest.raises(ValueError, match=r"target_speedup must be in \(0, 2\.5\)"):
        amdahl.required_factor(0.6, 2.5)


def test_stage_errors():
    with pytest.raises(ValueError, match="at least one stage"):
        amdahl.request_time_s({})
    with pytest.raises(ValueError, match=r"stage_times_s\['gpu'\] must be in \[0, inf\)"):
        amdahl.request_time_s({"gpu": -1.0})
    with pytest.raises(ValueError, match="not in stage_times_s"):
        amdahl.request_speedup({"gpu": 1.0}, {"cpu": 2.0})
    with pytest.raises(ValueError, match=r"speedups\['gpu'\]"):
        amdahl.request_speedup({"gpu": 1.0}, {"gpu": 0.0})
    with pytest.raises(ValueError, match="positive total"):
        amdahl.request_speedup({"gpu": 0.0})
