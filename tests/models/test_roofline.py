"""Tests of helpers.models.roofline: limits, an independent oracle, published numbers, errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import specs
from helpers.models import roofline as rl

rates = st.floats(min_value=1e6, max_value=1e18, allow_nan=False, allow_infinity=False)
bandwidths = st.floats(min_value=1e6, max_value=1e15, allow_nan=False, allow_infinity=False)
intensities = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
amounts = st.floats(min_value=1.0, max_value=1e15, allow_nan=False, allow_infinity=False)


# --- limits and invariants ---------------------------------------------------------------

@given(rates, bandwidths)
def test_roofline_is_continuous_at_the_ridge(peak, bw):
    ridge = rl.ridge_intensity_flop_per_byte(peak, bw)
    at = rl.attainable_flop_per_s(ridge, peak, bw)
    below = rl.attainable_flop_per_s(ridge * (1 - 1e-9), peak, bw)
    above = rl.attainable_flop_per_s(ridge * (1 + 1e-9), peak, bw)
    assert at == pytest.approx(peak, rel=1e-12)
    assert below == pytest.approx(peak, rel=1e-8)
    assert above == pytest.approx(peak, rel=1e-12)


@given(intensities, intensities, rates, bandwidths)
def test_roofline_is_monotone_and_under_both_roofs(i1, i2, peak, bw):
    lo, hi = sorted((i1, i2))
    r_lo, r_hi = rl.attainable_flop_per_s(lo, peak, bw), rl.attainable_flop_per_s(hi, peak, bw)
    assert r_lo <= r_hi
    assert r_hi <= peak and r_hi <= hi * bw * (1 + 1e-12)


@given(amounts, amounts, rates, bandwidths)
def test_doubling_bytes_doubles_a_memory_bound_time(flop, n_bytes, peak, bw):
    if flop / peak >= n_bytes / bw:  # make it memory-bound
        flop = 0.5 * n_bytes / bw * peak
    t1 = rl.kernel_time_lower_bound_s(flop, n_bytes, peak, bw)
    t2 = rl.kernel_time_lower_bound_s(flop, 2 * n_bytes, peak, bw)
    assert t2 == pytest.approx(2 * t1, rel=1e-12)
    # ... and leaves a compute-bound one alone
    t3 = rl.kernel_time_lower_bound_s(4 * flop * (n_bytes / bw) / (flop / peak), n_bytes / 8,
                                      peak, bw)
    t4 = rl.kernel_time_lower_bound_s(4 * flop * (n_bytes / bw) / (flop / peak), n_bytes / 4,
                                      peak, bw)
    assert t3 == pytest.approx(t4, rel=1e-12)


@given(amounts, amounts, rates, bandwidths)
def test_no_overlap_time_is_between_one_and_two_bounds(flop, n_bytes, peak, bw):
    lower = rl.kernel_time_lower_bound_s(flop, n_bytes, peak, bw)
    serial = rl.kernel_time_no_overlap_s(flop, n_bytes, peak, bw)
    assert lower <= serial <= 2 * lower * (1 + 1e-12)


@given(amounts, amounts, rates, bandwidths)
def test_bound_kind_names_the_longer_term(flop, n_bytes, peak, bw):
    kind = rl.bound_kind(flop / n_bytes, peak, bw)
    t_c, t_m = flop / peak, n_bytes / bw
    if not math.isclose(t_c, t_m, rel_tol=1e-9):
        assert kind == ("memory-bound" if t_m > t_c else "compute-bound")


def test_rate_from_time_bound_is_the_roofline():
    """F over the time bound equals the attainable rate at I = F / Q, for every regime."""
    peak, bw = 989.4e12, 3.35e12
    for intensity in [0.01, 1.0, 100.0, 295.3, 1e4]:
        n_bytes = 1e9
        flop = intensity * n_bytes
        rate = flop / rl.kernel_time_lower_bound_s(flop, n_bytes, peak, bw)
        assert rate == pytest.approx(rl.attainable_flop_per_s(intensity, peak, bw), rel=1e-12)


def test_arrays_match_scalars():
    grid = np.logspace(-2, 4, 50)
    arr = rl.attainable_flop_per_s(grid, 67e12, 3.35e12)
    assert isinstance(arr, np.ndarray)
    assert arr.tolist() == [rl.attainable_flop_per_s(float(g), 67e12, 3.35e12) for g in grid]
    assert isinstance(rl.attainable_flop_per_s(1.0, 67e12, 3.35e12), float)


# --- independent oracles -----------------------------------------------------------------

def _pipelined_time(flop, n_bytes, peak, bw, n_chunks):
    """Brute force: load chunk i+1 while computing chunk i (double buffering)."""
    t_load, t_comp = n_bytes / bw / n_chunks, flop / peak / n_chunks
    load_done = comp_done = 0.0
    for _ in range(n_chunks):
        load_done = load_done + t_load  # the memory bus streams chunks back to back
        comp_done = max(comp_done, load_done) + t_comp  # compute needs its chunk loaded
    return comp_done


@pytest.mark.parametrize("intensity", [0.1, 10.0, 295.0, 3000.0])
def test_time_bound_is_the_limit_of_a_pipelined_kernel(intensity):
    peak, bw = 989.4e12, 3.35e12
    n_bytes = 1e9
    flop = intensity * n_bytes
    bound = rl.kernel_time_lower_bound_s(flop, n_bytes, peak, bw)
    for n_chunks in (1, 10, 1000):
        t = _pipelined_time(flop, n_bytes, peak, bw, n_chunks)
        assert t >= bound * (1 - 1e-12)  # never beats the bound
    assert t == pytest.approx(bound, rel=2e-3)  # and approaches it with fine chunks
    assert _pipelined_time(flop, n_bytes, peak, bw, 1) == pytest.approx(
        rl.kernel_time_no_overlap_s(flop, n_bytes, peak, bw), rel=1e-12)  # no overlap at all


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (3, 5, 7), (8, 1, 16), (16, 4, 2)])
def test_matmul_counts_against_brute_force_and_nbytes(m, n, k):
    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32) + 0.5
    b = rng.random((k, n), dtype=np.float32) + 0.5
    flop = 0
    c = np.zeros((m, n), dtype=np.float32)
    for i in range(m):
        for j in range(n):
            for p in range(k):
                c[i, j] += a[i, p] * b[p, j]
                flop += 2  # one multiply, one add
    assert np.allclose(c, a @ b, rtol=1e-5)
    assert rl.matmul_flop(m, n, k) == flop
    assert rl.matmul_min_bytes(m, n, k, 4.0) == a.nbytes + b.nbytes + c.nbytes
    assert rl.matmul_min_bytes(m, n, k, 0.5) == (a.nbytes + b.nbytes + c.nbytes) / 8


def test_spec_ridge_agrees_with_the_model():
    for gpu in specs.GPUS:
        for precision in gpu.dense_flop_per_s:
            assert gpu.ridge_intensity_flop_per_byte(precision) == pytest.approx(
                rl.ridge_intensity_flop_per_byte(gpu.peak_flop_per_s(precision),
                                                 gpu.hbm_bytes_per_s), rel=1e-15)


# --- published numbers -------------------------------------------------------------------

def test_hennessy_patterson_figure_4_11():
    """H&P 5th ed., figure 4.11: SX-9 (102.4 GFLOP/s, 162 GB/s) vs Core i7 920 (42.66, 16.4)."""
    sx9, i7 = (102.4e9, 162e9), (42.66e9, 16.4e9)
    # "At an arithmetic intensity of 0.25 FLOP/byte, the SX-9 is 10x faster at 40.5 GFLOP/sec
    # versus 4.1 GFLOP/sec for the Core i7."
    assert rl.attainable_flop_per_s(0.25, *sx9) == pytest.approx(40.5e9, rel=1e-12)
    assert rl.attainable_flop_per_s(0.25, *i7) == pytest.approx(4.1e9, rel=1e-12)
    assert round(rl.attainable_flop_per_s(0.25, *sx9) / rl.attainable_flop_per_s(0.25, *i7)) == 10
    # "at an arithmetic intensity of 4 FLOP/byte ... both processors operate at peak ...
    # the SX-9 ... is 2.4x faster"
    assert rl.bound_kind(4.0, *sx9) == rl.bound_kind(4.0, *i7) == "compute-bound"
    ratio = rl.attainable_flop_per_s(4.0, *sx9) / rl.attainable_flop_per_s(4.0, *i7)
    assert round(ratio, 1) == 2.4


def test_williams_figure_1a_opteron_x2():
    """Williams et al. (2009), figure 1a: 17.6 GFLOP/s peak, 15 GB/s measured bandwidth.

    SpMV's operational intensity (0.17 to 0.25 FLOP/byte, section "Sparse matrix-vector
    multiplication") is below the ridge, so it is memory-bound there.
    """
    ridge = rl.ridge_intensity_flop_per_byte(17.6e9, 15e9)
    assert ridge == pytest.approx(1.1733, abs=1e-4)
    for spmv in (0.17, 0.25):
        assert rl.bound_kind(spmv, 17.6e9, 15e9) == "memory-bound"
        assert rl.attainable_flop_per_s(spmv, 17.6e9, 15e9) == pytest.approx(spmv * 15e9)


def test_h100_bf16_ridge():
    """CONTRIBUTING's example and the H100 datasheet: 989.4 TFLOP/s over 3.35 TB/s."""
    assert round(rl.ridge_intensity_flop_per_byte(
        specs.H100_SXM.peak_flop_per_s("bf16"), specs.H100_SXM.hbm_bytes_per_s), 1) == 295.3


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_rates_must_be_positive_and_finite(bad):
    for call, name in [
        (lambda: rl.ridge_intensity_flop_per_byte(bad, 1.0), "peak_flop_per_s"),
        (lambda: rl.ridge_intensity_flop_per_byte(1.0, bad), "mem_bytes_per_s"),
        (lambda: rl.attainable_flop_per_s(1.0, bad, 1.0), "peak_flop_per_s"),
        (lambda: rl.memory_time_s(1.0, bad), "mem_bytes_per_s"),
        (lambda: rl.compute_time_s(1.0, bad), "peak_flop_per_s"),
        (lambda: rl.arithmetic_intensity_flop_per_byte(1.0, bad), "n_bytes"),
    ]:
        with pytest.raises(ValueError, match=name) as info:
            call()
        assert "(0, inf)" in str(info.value) and repr(float(bad)) in str(info.value)


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_amounts_must_be_non_negative(bad):
    with pytest.raises(ValueError, match=r"flop must be a finite number in \[0, inf\)"):
        rl.kernel_time_lower_bound_s(bad, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="n_bytes"):
        rl.memory_time_s(bad, 1.0)
    with pytest.raises(ValueError, match="intensity_flop_per_byte"):
        rl.attainable_flop_per_s(np.array([1.0, bad]), 1.0, 1.0)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_matmul_shapes_must_be_positive_integers(bad):
    with pytest.raises(ValueError, match="m must be a positive integer"):
        rl.matmul_flop(bad, 1, 1)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        rl.matmul_min_bytes(1, 1, bad, 2.0)
