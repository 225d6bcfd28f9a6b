"""Models added for the reduction-softmax and GEMM labs (issue 17, brief kern17): the softmax
and row-sum traffic counters, the online-softmax access counts of Milakov and Gimelshein
(2018), and the fixed-cost (Hockney ``t0 + F / R``) time of a GEMM."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import gemm as gm
from helpers.models import roofline as rf


# --- softmax traffic ------------------------------------------------------------------------

def test_one_element_limits():
    # one element: a row sum reads it and writes it; a fused softmax the same
    assert rf.row_sum_bytes(1, 1, 4) == 8.0
    assert rf.softmax_bytes(1, 1, 4) == 8.0
    # five passes over one element: 8 tensor accesses and 4 per-row ones
    assert rf.unfused_softmax_bytes(1, 1, 4) == 48.0


@given(st.integers(1, 1 << 14), st.integers(1, 1 << 14), st.sampled_from([1, 2, 4, 8]))
def test_counters_against_an_element_by_element_oracle(rows, cols, esize):
    n, r = rows * cols * esize, rows * esize
    # oracle: what each tensor op touches, listed by hand from the five-line softmax
    touched = {"max": (n, r), "subtract": (n + r, n), "exp": (n, n), "sum": (n, r),
               "divide": (n + r, n)}
    got = {name: (rd, wr) for name, rd, wr in rf.unfused_softmax_pass_bytes(rows, cols, esize)}
    assert got == touched
    assert rf.unfused_softmax_bytes(rows, cols, esize) == sum(a + b for a, b in touched.values())
    assert rf.softmax_bytes(rows, cols, esize) == 2 * n
    assert rf.row_sum_bytes(rows, cols, esize) == n + r


def test_accesses_match_the_paper():
    # Milakov and Gimelshein (2018), section 2-3: naive 3, safe 4, online 3 accesses/element
    assert {m: rf.softmax_accesses_per_element(m) for m in ("naive", "safe", "online")} == \
        {"naive": 3, "safe": 4, "online": 3}
    # their abstract: the online softmax is "up to 1.3x" faster, the 4/3 of a memory-bound pass
    ratio = rf.softmax_traffic_bytes(64, 4096, 2, "safe") / rf.softmax_traffic_bytes(64, 4096, 2, "online")
    assert ratio == pytest.approx(4 / 3) and round(ratio, 1) == 1.3
    # a fused kernel that keeps each row on chip moves two accesses' worth, less than online
    assert rf.softmax_traffic_bytes(64, 4096, 2, "online") == 1.5 * rf.softmax_bytes(64, 4096, 2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None, "4"])
def test_counters_refuse_bad_shapes(bad):
    for fn in (rf.row_sum_bytes, rf.softmax_bytes, rf.unfused_softmax_bytes):
        with pytest.raises(ValueError, match="rows"):
            fn(bad, 4, 4)
        with pytest.raises(ValueError, match="element_bytes"):
            fn(4, 4, bad)
    with pytest.raises(ValueError, match="method"):
        rf.softmax_accesses_per_element("flash")


# --- GEMM fixed cost ------------------------------------------------------------------------

def test_half_performance_size():
    # Hockney's n_1/2: at F = R t0 the rate is exactly half the asymptotic one
    r, t0 = 7.5e14, 4e-6
    assert gm.rate_with_fixed_cost_flop_per_s(r * t0, r, t0) == pytest.approx(r / 2)


@given(st.floats(1e6, 1e15), st.floats(1e12, 1e16), st.floats(0.0, 1e-3))
def test_fixed_cost_limits_and_inverse(flop, rate, t0):
    t = gm.time_with_fixed_cost_s(flop, rate, t0)
    assert t == pytest.approx(t0 + flop / rate)
    # the estimator recovers t0 from a time built with it (the oracle is the construction)
    assert gm.fixed_cost_s(t, flop, rate) == pytest.approx(t0, abs=1e-12 * max(t, 1.0))
    # no fixed cost: the plain rate; a fixed cost never speeds a product up
    assert gm.rate_with_fixed_cost_flop_per_s(flop, rate, 0.0) == pytest.approx(rate)
    assert gm.rate_with_fixed_cost_flop_per_s(flop, rate, t0) <= rate * (1 + 1e-12)


def test_fixed_cost_fades_with_size():
    r, t0 = 7.5e14, 4e-6
    rates = [gm.rate_with_fixed_cost_flop_per_s(2.0 * n ** 3, r, t0) / r for n in (1024, 2048, 8192)]
    assert rates[0] < rates[1] < rates[2] < 1
    assert rates[2] > 0.99  # a 8192^3 product: the start-up is under 1 % of its time


def test_fixed_cost_is_never_negative_and_checks_arguments():
    assert gm.fixed_cost_s(1e-6, 2e9, 1e15) == 0.0  # measured faster than the rate allows
    with pytest.raises(ValueError, match="measured_s"):
        gm.fixed_cost_s(0.0, 1e9, 1e15)
    with pytest.raises(ValueError, match="rate_flop_per_s"):
        gm.time_with_fixed_cost_s(1e9, 0.0, 1e-6)
    with pytest.raises(ValueError, match="fixed_s"):
        gm.time_with_fixed_cost_s(1e9, 1e15, -1e-6)
    assert math.isfinite(gm.time_with_fixed_cost_s(0.0, 1e15, 0.0))
