"""Tests of helpers.models.simd: limits and invariants, independent oracles (NumPy's own view
of a register's bytes; a brute-force search for the crossing of two measured lines), and the
lane counts of SSE2 published by Intel."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.bench import cpu_info
from helpers.models import simd

# --- published numbers ------------------------------------------------------------------------


def test_sse2_lanes_as_intel_lists_them():
    # Intel optimization manual, chapter 2: SSE2 operates on two packed doubles, or on 16
    # bytes, 8 words, 4 doublewords, 2 quadwords in a 128-bit register.
    assert simd.simd_lanes(128, 64) == 2
    assert [simd.simd_lanes(128, b) for b in (8, 16, 32, 64)] == [16, 8, 4, 2]


# --- limits and invariants ------------------------------------------------------------------

@given(st.sampled_from([128, 256, 512, 1024, 2048]), st.sampled_from([8, 16, 32, 64]))
def test_doubling_the_width_doubles_the_lanes_and_halving_the_type_too(w, b):
    assert simd.simd_lanes(2 * w, b) == 2 * simd.simd_lanes(w, b)
    if b > 8:
        assert simd.simd_lanes(w, b // 2) == 2 * simd.simd_lanes(w, b)


@given(st.floats(0, 1e-3), st.floats(1e-12, 1e-6), st.floats(0, 1e-3), st.floats(1.01, 1e4))
def test_at_the_crossover_both_times_are_equal(cv, ev, cs, ratio):
    es = ev * ratio
    n = simd.crossover_elements(cv, ev, cs, es)
    if n > 0:
        assert simd.affine_time_s(n, cv, ev) == pytest.approx(simd.affine_time_s(n, cs, es),
                                                              rel=1e-9)
    else:
        assert cv <= cs


# --- independent oracles ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int8", "int16"])
@pytest.mark.parametrize("bits", [128, 256, 512])
def test_lanes_match_numpys_view_of_a_register(bits, dtype):
    register = np.zeros(bits // 8, dtype=np.uint8)
    assert register.view(dtype).size == simd.simd_lanes(bits, np.dtype(dtype).itemsize * 8)


def test_lanes_agree_with_the_flag_reader():
    # helpers.bench.cpu_info maps CPU flags to fp32 lanes of the widest vector FMA.
    assert cpu_info.fp32_simd_lanes({"avx512f"}) == simd.simd_lanes(512, 32)
    assert cpu_info.fp32_simd_lanes({"avx2", "fma"}) == simd.simd_lanes(256, 32)
    assert cpu_info.fp32_simd_lanes({"asimd"}) == simd.simd_lanes(128, 32)


def test_crossover_matches_a_brute_force_search():
    cv, ev, cs, es = 2.5e-6, 2e-10, 0.3e-6, 35e-9
    n = np.arange(0, 1000)
    first = int(n[cv + ev * n < cs + es * n][0])
    assert math.ceil(simd.crossover_elements(cv, ev, cs, es)) == first


def test_fit_recovers_a_line():
    c, e = simd.fit_affine(8, 1e-6 + 8 * 3e-9, 4096, 1e-6 + 4096 * 3e-9)
    assert c == pytest.approx(1e-6) and e == pytest.approx(3e-9)


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: simd.simd_lanes(0, 32),
    lambda: simd.simd_lanes(128, 48),
    lambda: simd.crossover_elements(1e-6, 1e-9, 0, 1e-9),
    lambda: simd.affine_time_s(-1, 0, 1e-9),
    lambda: simd.fit_affine(10, 1e-6, 5, 2e-6),
    lambda: simd.fit_affine(5, 2e-6, 10, 1e-6),
    lambda: simd.affine_time_s(1, math.nan, 1e-9),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
