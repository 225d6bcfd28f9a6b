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
        with pytest.raises(ValueError, match="bytes_per_element"):
            fn(4, 4, bad)
    with pytest.raises(ValueError, match="method"):
        rf.softmax_accesses_per_element("flash")


# --- GEMM fixed cost ------------------------------------------------------------------------

def test_half_performance_size():
    # Hockney's n_1/2: at F = R t0 the rate is exactly half the asymptotic one
    r, t0 = 7.5e14, 4e-6
    assert gm.rate_with_fixed_cost_flop_per_s(r * t0, r, t0) == pytest.approx(r / 2)


@given(st.floats(1e6, 1e15), st.floats(1e12, 1e16), st.floats(0.0, 1e-3))
def test_fixed_cost_limits(flop, rate, t0):
    t = gm.time_with_fixed_cost_s(flop, rate, t0)
    assert t == pytest.approx(t0 + flop / rate)
    # no fixed cost: the plain rate; a fixed cost never speeds a product up
    assert gm.rate_with_fixed_cost_flop_per_s(flop, rate, 0.0) == pytest.approx(rate)
    assert gm.rate_with_fixed_cost_flop_per_s(flop, rate, t0) <= rate * (1 + 1e-12)


@given(st.floats(1e8, 1e12), st.floats(1.5, 10.0), st.floats(1e13, 1e16), st.floats(0.0, 1e-4))
def test_two_points_recover_the_line_they_were_built_from(f1, ratio, rate, t0):
    # the oracle is the construction: two products on one t0 + F/R line give back t0 and R
    flops = (f1, f1 * ratio)
    times = tuple(gm.time_with_fixed_cost_s(f, rate, t0) for f in flops)
    got_t0, got_rate = gm.fixed_s_and_rate_flop_per_s(flops, times)
    assert got_rate == pytest.approx(rate, rel=1e-6)
    assert got_t0 == pytest.approx(t0, abs=1e-9 * max(times))


def test_two_points_on_the_h200_probe():
    # the lab's H200 probe at n = 1024 (K = 256 and 512, 6.46 and 8.76 us from a graph):
    # about 4.2 us of fixed cost and 233 TFLOP/s per extra step; carried to K = 1024 the line
    # gives 13.4 us, against 13.1 us measured for the 1024^3 product in the same run
    f = [2.0 * 1024 * 1024 * k for k in (256, 512)]
    t0, rate = gm.fixed_s_and_rate_flop_per_s(f, (6.46e-6, 8.76e-6))
    assert t0 == pytest.approx(4.16e-6, rel=0.01) and rate == pytest.approx(233.4e12, rel=0.01)
    assert gm.time_with_fixed_cost_s(2.0 * 1024 ** 3, rate, t0) == pytest.approx(13.36e-6, rel=0.01)


def test_fixed_cost_fades_with_size():
    r, t0 = 7.5e14, 4e-6
    rates = [gm.rate_with_fixed_cost_flop_per_s(2.0 * n ** 3, r, t0) / r for n in (1024, 2048, 8192)]
    assert rates[0] < rates[1] < rates[2] < 1
    assert rates[2] > 0.99  # a 8192^3 product: the start-up is under 1 % of its time


def test_fixed_cost_arguments_are_checked():
    with pytest.raises(ValueError, match="rate_flop_per_s"):
        gm.time_with_fixed_cost_s(1e9, 0.0, 1e-6)
    with pytest.raises(ValueError, match="fixed_s"):
        gm.time_with_fixed_cost_s(1e9, 1e15, -1e-6)
    with pytest.raises(ValueError, match="grow"):  # times that fall as the work grows
        gm.fixed_s_and_rate_flop_per_s((1e9, 2e9), (5e-6, 4e-6))
    with pytest.raises(ValueError, match="negative fixed cost"):
        gm.fixed_s_and_rate_flop_per_s((1e9, 2e9), (1e-6, 5e-6))
    with pytest.raises(ValueError, match="pair"):
        gm.fixed_s_and_rate_flop_per_s((1e9, 2e9, 3e9), (1e-6, 2e-6, 3e-6))
    assert math.isfinite(gm.time_with_fixed_cost_s(0.0, 1e15, 0.0))
