"""Tests of the memory-access lab's prediction models (helpers.models.memory_access, the block
"the memory-access lab's truth loop"): limits, a segment-enumerating oracle, and the numbers
the models' sources and the lab's page state."""

import math

import numpy as np
import pytest

from helpers.models import memory_access as ma


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 8, 16, 32, 64])
@pytest.mark.parametrize("access", [32, 64, 128])
def test_dram_bytes_per_element_against_enumerated_segments(stride, access):
    n = 4096  # a long stream: every aligned access_bytes segment any element touches is moved
    addresses = np.arange(n, dtype=np.int64) * stride * 4
    moved = ma.segments_touched(addresses, bytes_per_element=4, segment_bytes=access) * access
    # the last segment of the stream is partial: allow that one segment
    assert ma.dram_bytes_per_element(stride, 4, access_bytes=access) == pytest.approx(
        moved / n, abs=access / n)


def test_dram_bytes_limits():
    assert ma.dram_bytes_per_element(1) == 4.0  # contiguous: the data itself
    assert ma.dram_bytes_per_element(8, access_bytes=32) == 32.0  # the sector model's floor
    assert ma.dram_bytes_per_element(16) == ma.dram_bytes_per_element(10**6) == 64.0
    assert ma.DRAM_ACCESS_BYTES == 2 * ma.SECTOR_BYTES


def test_read_time_and_stream_rate_are_inverse():
    n, dirty = 2**25, 50 * 2**20
    rate = ma.stream_rate_bytes_per_s(n, 1, 42.0e-6, dirty_bytes=dirty)
    assert ma.strided_read_time_s(n, 1, mem_bytes_per_s=rate, dirty_bytes=dirty) == \
        pytest.approx(42.0e-6)
    # without the write-back, the time is the bytes moved over the rate, doubling per stride
    t = [ma.strided_read_time_s(n, s, mem_bytes_per_s=4e12) for s in (1, 2, 4, 8, 16, 32)]
    assert [b / a for a, b in zip(t, t[1:])] == pytest.approx([2, 2, 2, 2, 1])
    assert t[0] == pytest.approx(n * 4 / 4e12)
    # dirty bytes add the same time at every stride
    extra = ma.strided_read_time_s(n, 8, mem_bytes_per_s=4e12, dirty_bytes=1e9) - t[3]
    assert extra == pytest.approx(1e9 / 4e12)


def test_transpose_from_copy_matches_the_sector_bound_with_32_byte_accesses():
    m = n = 8192
    ratio = (ma.predicted_transpose_time_s(m, n, 4.8e12, write_stride=m)
             / ma.predicted_transpose_time_s(m, n, 4.8e12))
    assert ma.transpose_time_from_copy_s(1.0, write_stride=m, access_bytes=32) == pytest.approx(
        ratio) == pytest.approx(4.5)  # the docstring's, and the page's, 4.5
    assert ma.transpose_time_from_copy_s(2.0) == 2.0  # tiled: a copy's time
    assert ma.transpose_time_from_copy_s(1.0, write_stride=m) == 8.5  # 64 bytes per write


def test_smem_bound_counts_passes_and_falls_back_to_hbm():
    kw = dict(n_sms=132, clock_hz=1.98e9, mem_bytes_per_s=4.8e12)
    t0 = ma.smem_transpose_min_time_s(8192, 8192, padding_words=0, **kw)
    tiles = (8192 // 32) ** 2
    passes = tiles * (32 + 32 * ma.tile_column_conflict_degree(32))  # row stores + column reads
    assert t0 == pytest.approx(passes / (132 * 1.98e9))
    assert t0 * 1e6 == pytest.approx(264.8, abs=0.05)
    t1 = ma.smem_transpose_min_time_s(8192, 8192, padding_words=1, **kw)
    assert t1 == pytest.approx(ma.predicted_transpose_time_s(8192, 8192, 4.8e12))  # HBM-bound
    # a partial tile still costs a whole tile's passes
    small = ma.smem_transpose_min_time_s(33, 32, padding_words=0, n_sms=1, clock_hz=1.0,
                                         mem_bytes_per_s=1e30)
    assert small == 2 * 32 * 33


@pytest.mark.parametrize("call, match", [
    (lambda: ma.dram_bytes_per_element(0), "stride"),
    (lambda: ma.dram_bytes_per_element(1, access_bytes=0), "access_bytes"),
    (lambda: ma.stream_rate_bytes_per_s(10, 1, 0.0), "time_s"),
    (lambda: ma.stream_rate_bytes_per_s(10, 1, 1.0, dirty_bytes=-1), "dirty_bytes"),
    (lambda: ma.strided_read_time_s(10, 1, mem_bytes_per_s=math.nan), "mem_bytes_per_s"),
    (lambda: ma.transpose_time_from_copy_s(-1.0), "copy_time_s"),
    (lambda: ma.smem_transpose_min_time_s(32, 32, padding_words=-1, n_sms=1, clock_hz=1.0,
                                          mem_bytes_per_s=1.0), "padding_words"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
