"""Tests of helpers.models.cpu_peak: invariants, an independent oracle (counting the lanes of a
simulated issue schedule), the published Core i7 920 peak, and the errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import cpu_peak as cp
from helpers.models import gpu_peaks, queueing


@given(st.integers(1, 256), st.floats(1e8, 6e9), st.sampled_from([128, 256, 512]),
       st.sampled_from([16, 32, 64]), st.integers(1, 4), st.sampled_from([1, 2]))
def test_peak_is_a_product_of_its_parts(cores, clock, bits, elem, units, f):
    p = cp.cpu_peak_flop_per_s(n_cores=cores, clock_hz=clock, simd_bits=bits, element_bits=elem,
                               vector_units=units, flop_per_lane_op=f)
    assert p == pytest.approx(cores * clock * units * (bits // elem) * f)
    # doubling any one part doubles the peak; halving the element width doubles the lanes
    assert cp.cpu_peak_flop_per_s(n_cores=2 * cores, clock_hz=clock, simd_bits=bits,
                                  element_bits=elem, vector_units=units,
                                  flop_per_lane_op=f) == pytest.approx(2 * p)
    if elem > 16:
        assert cp.cpu_peak_flop_per_s(n_cores=cores, clock_hz=clock, simd_bits=bits,
                                      element_bits=elem // 2, vector_units=units,
                                      flop_per_lane_op=f) == pytest.approx(2 * p)


def test_oracle_counts_the_flop_of_a_simulated_schedule():
    """Issue one op per unit per cycle for a number of cycles, count lane-FLOP one by one."""
    bits, elem, units, f, cycles = 256, 32, 2, 2, 1000
    flop = 0
    for _cycle in range(cycles):
        for _unit in range(units):
            for _lane in range(bits // elem):
                flop += f
    assert cp.flop_per_cycle_per_core(bits, elem, units, f) * cycles == flop


def test_ops_in_flight_is_littles_law():
    for lat, rate in [(4, 2), (5, 1), (3.5, 0.5)]:
        assert cp.ops_in_flight(lat, rate) == pytest.approx(
            queueing.little_number_in_system(rate, lat))


def test_hennessy_patterson_core_i7_920_peak():
    # H&P 5th ed., figure 4.11: 42.66 GFLOP/s fp64 (4 cores, 2.66 GHz, SSE add + SSE multiply).
    p = cp.cpu_peak_flop_per_s(n_cores=4, clock_hz=8e9 / 3, simd_bits=128, element_bits=64,
                           vector_units=2, flop_per_lane_op=1)
    assert p == pytest.approx(42.66e9, rel=1e-3)


@pytest.mark.parametrize("kw, match", [
    (dict(n_cores=0), "n_cores"), (dict(clock_hz=0.0), "clock_hz"),
    (dict(simd_bits=100), "multiple"),
    (dict(vector_units=0), "vector_units"), (dict(flop_per_lane_op=3), "flop_per_lane_op"),
    (dict(clock_hz=float("nan")), "clock_hz")])
def test_errors(kw, match):
    args = dict(n_cores=4, clock_hz=2e9, simd_bits=256, element_bits=32, vector_units=2,
                flop_per_lane_op=2)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        cp.cpu_peak_flop_per_s(**args)
    with pytest.raises(ValueError):
        cp.ops_in_flight(-1, 2)


def test_agrees_with_the_gpu_peak_model_counting_a_core_as_an_sm():
    # 8 fp32 lanes x 2 FMA units = 16 FMA per clock per core
    assert cp.cpu_peak_flop_per_s(n_cores=8, clock_hz=3e9, simd_bits=256, element_bits=32,
                              vector_units=2) == pytest.approx(
        gpu_peaks.sm_peak_flop_per_s(8, 16, 3e9))
