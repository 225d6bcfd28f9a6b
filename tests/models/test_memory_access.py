"""Tests of helpers.models.memory_access: limits, a byte-enumerating oracle, published numbers,
errors."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import memory_access as ma

strides = st.integers(min_value=0, max_value=300)
elem_sizes = st.sampled_from([1, 2, 4, 8, 16])
bases = st.integers(min_value=0, max_value=4096)
threads = st.integers(min_value=1, max_value=64)
segments = st.sampled_from([32, 64, 128])


# --- the oracle: enumerate every byte ------------------------------------------------------

def oracle_segments(stride, b, base, n, seg):
    """Every byte each thread reads, put into a set of segment indices. No formulas shared
    with the model beyond integer division."""
    touched = set()
    for t in range(n):
        start = base + t * stride * b
        for byte in range(start, start + b):
            touched.add(byte // seg)
    return len(touched)


def oracle_conflict_degree(word_indices, n_banks=32):
    """Passes by simulation: each pass serves at most one distinct word per bank (any number
    of threads reading that word); repeat until every thread is served."""
    pending = list(word_indices)
    passes = 0
    while pending:
        passes += 1
        chosen = {}
        for w in pending:
            chosen.setdefault(w % n_banks, w)
        pending = [w for w in pending if chosen[w % n_banks] != w]
    return passes


@given(strides, elem_sizes, bases, threads, segments)
def test_closed_form_matches_byte_enumeration(stride, b, base, n, seg):
    expected = oracle_segments(stride, b, base, n, seg)
    got = ma.sectors_per_request(stride_elements=stride, bytes_per_element=b, base_bytes=base,
                                 n_threads=n, segment_bytes=seg)
    assert got == expected
    addrs = ma.warp_addresses_bytes(stride_elements=stride, bytes_per_element=b,
                                    base_bytes=base, n_threads=n)
    assert ma.segments_touched(addrs, bytes_per_element=b, segment_bytes=seg) == expected


@pytest.mark.parametrize("stride, b, base, n, seg", [
    (9, 4, 28, 2, 32),    # the gap between two accesses is exactly one aligned sector
    (9, 4, 28, 32, 32),
    (3, 16, 8, 32, 32),   # 16-byte elements not aligned to their size straddle sectors
    (5, 8, 4, 7, 64),
    (0, 16, 24, 32, 32),  # broadcast of an element that straddles two sectors
])
def test_closed_form_edge_cases_match_byte_enumeration(stride, b, base, n, seg):
    assert ma.sectors_per_request(stride_elements=stride, bytes_per_element=b, base_bytes=base,
                                  n_threads=n, segment_bytes=seg) == oracle_segments(
        stride, b, base, n, seg)


@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=32),
       st.sampled_from([3, 4, 8, 32]), segments)
def test_arbitrary_address_lists_match_enumeration(addrs, b, seg):
    touched = {byte // seg for a in addrs for byte in range(a, a + b)}
    assert ma.segments_touched(addrs, bytes_per_element=b, segment_bytes=seg) == len(touched)


@given(st.lists(st.integers(min_value=0, max_value=4095), min_size=1, max_size=32))
def test_conflict_degree_matches_a_pass_by_pass_simulation(word_indices):
    addrs = [4 * w for w in word_indices]
    assert ma.bank_conflict_degree(addrs) == oracle_conflict_degree(word_indices)


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=1, max_value=64))
def test_strided_conflict_closed_form_matches_enumeration(stride, n):
    addrs = [4 * stride * t for t in range(n)]
    assert ma.strided_bank_conflict_degree(stride, n_threads=n) == ma.bank_conflict_degree(addrs)
    assert ma.bank_conflict_degree(addrs) == oracle_conflict_degree([stride * t for t in range(n)])


def test_bank_matches_numpy_view_of_a_float_tile():
    """Bank of element (r, c) of a 32x33 float32 array, from numpy's own byte offsets."""
    tile = np.zeros((32, 33), dtype=np.float32)
    offsets = np.array([[r * tile.strides[0] + c * tile.strides[1] for c in range(33)]
                        for r in range(32)])
    column = offsets[:, 5]
    assert sorted(ma.bank_of_address(column).tolist()) == list(range(32))
    assert ma.bank_conflict_degree(column) == 1
    assert ma.bank_conflict_degree(np.zeros((32, 32), np.float32).strides[0] * np.arange(32)) == 32


def test_row_major_strides_match_numpy():
    for shape in [(7,), (3, 5), (2, 3, 4, 5), (4, 8, 512, 128)]:
        x = np.empty(shape, dtype=np.float16)
        assert ma.row_major_strides_elements(shape) == tuple(s // x.itemsize for s in x.strides)


# --- limits and invariants ------------------------------------------------------------------

def test_stride_one_four_byte_warp_is_four_sectors_and_fully_efficient():
    assert ma.sectors_per_request(stride_elements=1, bytes_per_element=4) == 4
    assert ma.strided_efficiency(stride_elements=1, bytes_per_element=4) == 1.0
    assert ma.lines_per_request(stride_elements=1, bytes_per_element=4) == 1


@pytest.mark.parametrize("b", [1, 2, 4, 8, 16])
def test_large_stride_costs_one_sector_per_thread(b):
    for stride in (32, 1000, 10**6):
        assert ma.sectors_per_request(stride_elements=stride, bytes_per_element=b) == 32
        assert ma.strided_efficiency(stride_elements=stride, bytes_per_element=b) == b / 32


@given(st.integers(min_value=1, max_value=200), elem_sizes, segments)
def test_sectors_grow_with_stride_and_efficiency_shrinks(stride, b, seg):
    kw = dict(bytes_per_element=b, segment_bytes=seg)
    assert (ma.sectors_per_request(stride_elements=stride + 1, **kw)
            >= ma.sectors_per_request(stride_elements=stride, **kw))
    e1 = ma.strided_efficiency(stride_elements=stride, **kw)
    e2 = ma.strided_efficiency(stride_elements=stride + 1, **kw)
    assert 0 < e2 <= e1 <= 1


@given(strides, elem_sizes, bases, threads)
def test_sectors_are_bounded_by_the_bytes_and_by_the_threads(stride, b, base, n):
    got = ma.sectors_per_request(stride_elements=stride, bytes_per_element=b, base_bytes=base,
                                 n_threads=n)
    distinct_bytes = b * (n if stride else 1)
    assert got >= math.ceil(distinct_bytes / 32)
    assert got <= n * (math.ceil(b / 32) + 1)


@given(st.integers(min_value=1, max_value=512), elem_sizes, st.sampled_from([32, 64]))
def test_long_stream_amplification_is_the_limit_of_the_warp_formula(stride, b, seg):
    n = 4096  # a long aligned stream: edge segments no longer matter
    moved = ma.sectors_per_request(stride_elements=stride, bytes_per_element=b, n_threads=n,
                                   segment_bytes=seg) * seg
    amp = ma.bytes_moved_per_useful_byte(stride_elements=stride, bytes_per_element=b,
                                         segment_bytes=seg)
    assert moved / (n * b) == pytest.approx(amp, rel=0.02)
    assert 1 <= amp <= seg / min(b, seg)


def test_broadcast_is_one_sector_and_one_pass():
    assert ma.sectors_per_request(stride_elements=0, bytes_per_element=4) == 1
    assert ma.strided_efficiency(stride_elements=0) == 4 / 32
    assert ma.bank_conflict_degree([12] * 32) == 1


@given(st.integers(min_value=1, max_value=4096))
def test_padding_makes_any_tile_conflict_free(tile_dim):
    pad = ma.min_padding_words(tile_dim)
    assert 0 <= pad < 32
    assert ma.tile_column_conflict_degree(tile_dim, padding_words=pad) == 1
    assert all(ma.tile_column_conflict_degree(tile_dim, padding_words=q) > 1 for q in range(pad))


def test_derated_bandwidth_scales_the_peak():
    assert ma.derated_bandwidth_bytes_per_s(3.35e12, 1.0) == 3.35e12
    assert ma.derated_bandwidth_bytes_per_s(2e12, 0.25) == pytest.approx(5e11)


# --- published numbers ------------------------------------------------------------------------

def test_best_practices_guide_coalescing_examples():
    """CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory" (4-byte words):
    adjacent words -> four 32-byte transactions; sequential but misaligned -> five segments,
    "approximately 4/5th" of the throughput; stride 2 -> eight L2 sectors and "50% of
    load/store efficiency"; large strides -> "32 32-byte segments ... for the 32 threads"."""
    assert ma.sectors_per_request(stride_elements=1) == 4
    assert ma.sectors_per_request(stride_elements=1, base_bytes=4) == 5
    assert ma.strided_efficiency(stride_elements=1, base_bytes=4) == pytest.approx(4 / 5)
    assert ma.sectors_per_request(stride_elements=2) == 8
    assert ma.strided_efficiency(stride_elements=2) == 0.5
    assert ma.sectors_per_request(stride_elements=64) == 32
    # "offsets that are multiples of 8 words result in four 32-byte transactions"
    for offset_words in range(33):
        n = ma.sectors_per_request(stride_elements=1, base_bytes=4 * offset_words)
        assert n == (4 if offset_words % 8 == 0 else 5)
    # "permuted within or across the four segments, still only four" transactions
    perm = np.random.default_rng(0).permutation(32) * 4
    assert ma.segments_touched(perm, bytes_per_element=4) == 4


def test_programming_guide_divided_by_eight():
    """CUDA C++ Programming Guide, "Device Memory Accesses": a 32-byte transaction for each
    thread's 4-byte access divides throughput by 8."""
    eta = ma.strided_efficiency(stride_elements=8, bytes_per_element=4)
    assert 1 / eta == 8
    assert ma.derated_bandwidth_bytes_per_s(8.0, eta) == 1.0


def test_programming_guide_bank_examples():
    """CUDA C++ Programming Guide, "Compute Capability 5.x", shared memory: strides of one and
    three 32-bit words are conflict-free, stride two is a two-way conflict; threads reading
    the same word within a bank (a broadcast) cause no conflict."""
    assert [ma.strided_bank_conflict_degree(s) for s in (1, 2, 3)] == [1, 2, 1]
    # Figure "Irregular Shared Memory Accesses", middle: threads 3, 4, 6, 7 and 9 read the same
    # word in bank 5, the other threads distinct banks: conflict-free.
    words = list(range(32))
    for t in (3, 4, 6, 7, 9):
        words[t] = 5
    assert ma.bank_conflict_degree([4 * w for w in words]) == 1
    # left: a random permutation of the banks is conflict-free
    perm = np.random.default_rng(1).permutation(32)
    assert ma.bank_conflict_degree(4 * perm) == 1


def test_best_practices_guide_padded_tile():
    """CUDA C++ Best Practices Guide, "Shared Memory in Matrix Multiplication (C=AA^T)": writing
    a column of a w x w tile (w = 32) makes "every thread of the warp hit the same bank";
    TILE_DIM+1 makes the stride 33 banks, "equivalent to a unit stride": no conflicts."""
    assert ma.tile_column_conflict_degree(32) == 32
    assert ma.tile_column_conflict_degree(32, padding_words=1) == 1
    assert ma.strided_bank_conflict_degree(33) == ma.strided_bank_conflict_degree(1) == 1


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(stride_elements=-1), "stride_elements must be an integer >= 0"),
    (dict(stride_elements=1.5), "stride_elements must be an integer >= 0"),
    (dict(stride_elements=1, bytes_per_element=0), "bytes_per_element must be an integer >= 1"),
    (dict(stride_elements=1, bytes_per_element=0.5), "bytes_per_element must be an integer"),
    (dict(stride_elements=1, base_bytes=-4), "base_bytes must be an integer >= 0"),
    (dict(stride_elements=1, n_threads=0), "n_threads must be an integer >= 1"),
    (dict(stride_elements=1, segment_bytes=0), "segment_bytes must be an integer >= 1"),
    (dict(stride_elements=float("nan")), "stride_elements must be an integer"),
])
def test_sectors_reject_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ma.sectors_per_request(**kwargs)


def test_other_functions_reject_bad_arguments():
    with pytest.raises(ValueError, match="at least one address"):
        ma.segments_touched([], bytes_per_element=4)
    with pytest.raises(ValueError, match="integers >= 0"):
        ma.segments_touched([-4, 0], bytes_per_element=4)
    with pytest.raises(ValueError, match="integers >= 0"):
        ma.segments_touched([0.5], bytes_per_element=4)
    with pytest.raises(ValueError, match="requested_bytes must be <= moved_bytes"):
        ma.coalescing_efficiency(256, 128)
    with pytest.raises(ValueError, match="moved_bytes must be a finite number"):
        ma.coalescing_efficiency(1, 0)
    with pytest.raises(ValueError, match="efficiency must be a fraction"):
        ma.derated_bandwidth_bytes_per_s(1e12, 0.0)
    with pytest.raises(ValueError, match="efficiency must be a fraction"):
        ma.derated_bandwidth_bytes_per_s(1e12, 1.5)
    with pytest.raises(ValueError, match="mem_bytes_per_s must be a finite number"):
        ma.derated_bandwidth_bytes_per_s(float("nan"), 0.5)
    with pytest.raises(ValueError, match="address_bytes must be integers >= 0"):
        ma.bank_of_address(-1)
    with pytest.raises(ValueError, match="address_bytes must be integers >= 0"):
        ma.bank_of_address(2.5)
    with pytest.raises(ValueError, match="at least one address"):
        ma.bank_conflict_degree([])
    with pytest.raises(ValueError, match="stride_words must be an integer >= 0"):
        ma.strided_bank_conflict_degree(-2)
    with pytest.raises(ValueError, match="tile_dim must be an integer >= 1"):
        ma.tile_column_conflict_degree(0)
    with pytest.raises(ValueError, match="padding_words must be an integer >= 0"):
        ma.tile_column_conflict_degree(32, padding_words=-1)
    with pytest.raises(ValueError, match="stride_elements must be an integer >= 1"):
        ma.bytes_moved_per_useful_byte(stride_elements=0)
    with pytest.raises(ValueError, match="shape must have at least one axis"):
        ma.row_major_strides_elements(())
    with pytest.raises(ValueError, match=r"shape\[1\] must be an integer >= 1"):
        ma.row_major_strides_elements((4, 0))


# --- the lab's predictions (labs/memory-access.md), moved from its runner ---------------

def warp_efficiency_by_enumeration(stride, element_bytes, segment_bytes):
    """Independent oracle: the set of segments that 32 threads' bytes fall into."""
    touched = {(t * stride * element_bytes + byte) // segment_bytes
               for t in range(32) for byte in range(element_bytes)}
    return 32 * element_bytes / (len(touched) * segment_bytes)


@given(st.integers(1, 300), st.sampled_from([1, 2, 4, 8]), st.sampled_from([32, 64, 128]))
def test_efficiency_matches_byte_enumeration(stride, element_bytes, segment_bytes):
    assert ma.predicted_efficiency(stride, element_bytes, segment_bytes=segment_bytes) == \
        pytest.approx(warp_efficiency_by_enumeration(stride, element_bytes, segment_bytes))


@given(st.integers(1, 200), st.sampled_from([1, 2, 4, 8]))
def test_efficiency_never_rises_with_stride_and_floors_at_one_element_per_sector(stride, b):
    e0 = ma.predicted_efficiency(stride, b)
    e1 = ma.predicted_efficiency(stride + 1, b)
    assert 0 < e1 <= e0 <= 1
    assert e0 >= b / ma.SECTOR_BYTES  # every thread pays at most one whole sector
    assert ma.predicted_efficiency(1, b) == 1.0


def test_predicted_efficiency_reproduces_the_guide():
    # CUDA C++ Best Practices Guide, "Strided Accesses": a stride of 2 gives 50% load efficiency;
    # a unit stride of 4-byte words fills four 32-byte sectors exactly.
    assert ma.predicted_efficiency(2, 4) == 0.5
    assert ma.predicted_efficiency(1, 4) == 1.0
    assert ma.predicted_efficiency(32, 4) == 4 / 32


def test_conflict_degree_against_bank_enumeration_and_the_padding_trick():
    for tile in (8, 16, 31, 32, 33, 64):
        for pad in (0, 1, 2):
            pitch = tile + pad
            banks = [(t * pitch) % 32 for t in range(32)]  # a warp walking down one column
            assert ma.predicted_conflict_degree(tile, pad) == max(banks.count(b) for b in banks)
    # tile[32][32]: all 32 threads on one bank; tile[32][33]: none share one (Harris 2013)
    assert ma.predicted_conflict_degree(32, 0) == 32
    assert ma.predicted_conflict_degree(32, 1) == 1


@pytest.mark.parametrize("call", [
    lambda: ma.predicted_efficiency(0, 4),
    lambda: ma.predicted_efficiency(1, 0),
    lambda: ma.predicted_efficiency(1, 3),  # does not divide a sector
    lambda: ma.predicted_efficiency(1.5, 4),
    lambda: ma.predicted_efficiency(True, 4),
    lambda: ma.predicted_conflict_degree(0),
    lambda: ma.predicted_conflict_degree(32, -1),
])
def test_predictions_reject_bad_arguments(call):
    with pytest.raises(ValueError):
        call()

def test_cpu_tier_predictions_use_cache_lines():
    assert math.isclose(ma.predicted_efficiency(16, 4, segment_bytes=64), 1 / 16)


def test_predicted_bandwidth_and_transpose_time_follow_the_efficiency():
    assert ma.predicted_strided_bytes_per_s([1, 2, 8], 4.8e12) == pytest.approx([4.8e12, 2.4e12, 0.6e12])
    t = ma.predicted_transpose_time_s(8192, 8192, 4.8e12)
    assert t == pytest.approx(2 * 8192 * 8192 * 4 / 4.8e12)  # a tiled transpose: a copy's time
    naive = ma.predicted_transpose_time_s(8192, 8192, 4.8e12, write_stride=8192)
    assert naive / t == pytest.approx((1 + 1 / ma.predicted_efficiency(8192, 4)) / 2)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="mem_bytes_per_s"):
            ma.predicted_strided_bytes_per_s([1], bad)
        with pytest.raises(ValueError, match="mem_bytes_per_s"):
            ma.predicted_transpose_time_s(4, 4, bad)
