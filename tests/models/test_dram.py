"""Tests of helpers.models.dram: limits and invariants, independent oracles (a simulated memory
with a fixed number of outstanding requests; random page placement), published numbers."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import dram

pos = st.floats(1e-12, 1e12, allow_nan=False, allow_infinity=False)


# --- published numbers ------------------------------------------------------------------------

@pytest.mark.parametrize("name, mts, peak", [("DDR3-1600 / PC3-12800", 1600e6, 12.8e9),
                                             ("DDR3-1333 / PC3-10600", 1333e6, 10.664e9),
                                             ("DDR3-800 / PC3-6400", 800e6, 6.4e9)])
def test_module_names_are_reproduced(name, mts, peak):
    # Kingston, "Why 1600?" DDR3 table: module classification PC3-nnnnn is the peak in MB/s
    # (PC3-10600 rounds 10,664 MB/s down).
    assert dram.dram_peak_bytes_per_s(transfers_per_s=mts) == pytest.approx(peak)


def test_linux_default_distances_claim_a_factor_of_two():
    # Linux: LOCAL_DISTANCE 10, REMOTE_DISTANCE 20 when firmware gives no SLIT.
    assert dram.slit_latency_ratio(dram.LINUX_REMOTE_DISTANCE) == 2.0
    assert dram.slit_latency_ratio(dram.LINUX_LOCAL_DISTANCE) == 1.0


# --- limits and invariants ------------------------------------------------------------------

@given(pos, st.integers(1, 16))
def test_peak_is_linear_in_channels(r, c):
    one = dram.dram_peak_bytes_per_s(transfers_per_s=r)
    assert dram.dram_peak_bytes_per_s(transfers_per_s=r, channels=c) == pytest.approx(c * one)


@given(pos, pos)
def test_lines_in_flight_scales_with_bandwidth_and_latency(b, t):
    n = dram.lines_in_flight(b, t)
    assert dram.lines_in_flight(2 * b, t) == pytest.approx(2 * n)
    assert dram.lines_in_flight(b, 2 * t) == pytest.approx(2 * n)
    assert dram.lines_in_flight(b, t, line_bytes=128) == pytest.approx(n / 2)


@given(st.floats(1e-9, 1e-6), st.floats(1.0, 5.0), st.floats(0.0, 1.0))
def test_numa_latency_lies_between_local_and_remote(tl, rho, f):
    t = dram.numa_mean_latency_s(tl, rho * tl, f)
    assert tl * (1 - 1e-12) <= t <= rho * tl * (1 + 1e-12)
    assert dram.numa_mean_latency_s(tl, rho * tl, 0.0) == pytest.approx(tl)
    assert dram.numa_mean_latency_s(tl, rho * tl, 1.0) == pytest.approx(rho * tl)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_interleaving_leaves_one_node_in_n_local(n):
    assert dram.interleaved_remote_fraction(n) == pytest.approx(1 - 1 / n)


# --- independent oracles ---------------------------------------------------------------------

def test_lines_in_flight_matches_a_simulated_memory():
    # A memory that answers every request after a fixed latency and holds at most `slots`
    # requests at once: issue whenever a slot is free, count the bytes delivered, and check
    # that the window N = B t / line recovers the number of slots.
    latency, line, slots, horizon = 100e-9, 64.0, 12, 1e-4
    free_at = [0.0] * slots
    delivered = 0
    while True:
        k = int(np.argmin(free_at))
        start = free_at[k]
        if start + latency > horizon:
            break
        free_at[k] = start + latency
        delivered += 1
    bandwidth = delivered * line / horizon
    assert dram.lines_in_flight(bandwidth, latency, line) == pytest.approx(slots, rel=2e-3)  # edge: last round


def test_numa_latency_matches_random_page_placement():
    rng = np.random.default_rng(7)
    n_pages, n_loads, tl, tr = 4096, 200_000, 90e-9, 170e-9
    remote = rng.random(n_pages) < 0.5          # half the pages land on the other node
    pages = rng.integers(0, n_pages, n_loads)   # uniform loads over the pages
    times = np.where(remote[pages], tr, tl)
    f = float(np.mean(remote[pages]))
    assert dram.numa_mean_latency_s(tl, tr, f) == pytest.approx(times.mean(), rel=1e-12)


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: dram.dram_peak_bytes_per_s(transfers_per_s=0),
    lambda: dram.dram_peak_bytes_per_s(transfers_per_s=1e9, channels=0),
    lambda: dram.dram_peak_bytes_per_s(transfers_per_s=1e9, bus_bytes=math.nan),
    lambda: dram.lines_in_flight(-1.0, 1e-7),
    lambda: dram.lines_in_flight(1e9, 0.0),
    lambda: dram.numa_mean_latency_s(100e-9, 50e-9, 0.5),
    lambda: dram.numa_mean_latency_s(100e-9, 200e-9, 1.5),
    lambda: dram.interleaved_remote_fraction(0),
    lambda: dram.slit_latency_ratio(5),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
