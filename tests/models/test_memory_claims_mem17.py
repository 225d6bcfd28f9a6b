"""Issue 16 for the memory models: one name per quantity and one body per check.

The derated bandwidth (eta x peak) no longer shares a name with latency_bandwidth's n/T(n);
the CPU's cache line is defined once (models.dram) and the GPU's L1 line has its own name; the
address check of segments_touched and bank_conflict_degree is one function, and the strided
read's HBM bytes are one sum, for its rate and its time."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.bench import cache_probe
from helpers.labs import memory_access as lab
from helpers.models import dram, latency_bandwidth
from helpers.models import memory_access as ma


def test_the_two_bandwidths_have_two_names():
    assert not hasattr(ma, "effective_bandwidth_bytes_per_s")
    assert ma.derated_bandwidth_bytes_per_s(4.8e12, 0.125) == pytest.approx(0.6e12)
    # latency_bandwidth's keeps its meaning: size over the time of a transfer
    assert latency_bandwidth.effective_bandwidth_bytes_per_s(1000.0, 1e-6, 1e9) == pytest.approx(
        1000.0 / (1e-6 + 1000.0 / 1e9))


def test_one_cpu_line_and_a_named_gpu_line():
    assert dram.CPU_LINE_BYTES == 64 and isinstance(dram.CPU_LINE_BYTES, int)
    assert cache_probe.CPU_LINE_BYTES is dram.CPU_LINE_BYTES
    assert lab.CPU_LINE_BYTES is dram.CPU_LINE_BYTES
    assert not hasattr(dram, "LINE_BYTES") and not hasattr(cache_probe, "LINE_BYTES")
    assert ma.GPU_L1_LINE_BYTES == 4 * ma.SECTOR_BYTES == 128
    assert ma.lines_per_request(stride_elements=32) == 32  # one 128-byte line per thread


@pytest.mark.parametrize("bad, match", [([], "at least one address"), ([-4, 0], "integers >= 0"),
                                        ([0.5], "integers >= 0"), (["a"], "integers >= 0"),
                                        ([float("nan")], "integers >= 0")])
def test_both_address_models_reject_the_same_inputs(bad, match):
    with pytest.raises(ValueError, match=match):
        ma.segments_touched(bad, bytes_per_element=4)
    with pytest.raises(ValueError, match=match):
        ma.bank_conflict_degree(bad)


def test_both_address_models_accept_integer_valued_floats():
    addr = [8.0 * t for t in range(32)]
    assert ma.bank_conflict_degree(addr) == ma.bank_conflict_degree([8 * t for t in range(32)]) == 2
    assert ma.segments_touched(np.array(addr), bytes_per_element=4) == 8


@pytest.mark.parametrize("stride", [1, 2, 8, 16, 64])
def test_rate_and_time_of_a_strided_read_are_inverse(stride):
    n, dirty = 2**25, 50 * 2**20
    t = ma.strided_read_time_s(n, stride, mem_bytes_per_s=4.0e12, dirty_bytes=dirty)
    assert t == pytest.approx((n * min(4 * stride, 64) + dirty) / 4.0e12)
    assert ma.stream_rate_bytes_per_s(n, stride, t, dirty_bytes=dirty) == pytest.approx(4.0e12)
    with pytest.raises(ValueError, match="dirty_bytes"):
        ma.strided_read_time_s(n, stride, mem_bytes_per_s=4.0e12, dirty_bytes=-1.0)
    with pytest.raises(ValueError, match="n_elements"):
        ma.stream_rate_bytes_per_s(0, stride, t)


def test_accesses_abut_up_to_one_access_apart():
    assert [ma.accesses_abut(s) for s in (1, 2, 8, 16, 17, 32)] == [True] * 4 + [False] * 2
    assert ma.accesses_abut(32, access_bytes=128) and not ma.accesses_abut(2, 64, access_bytes=64)
    with pytest.raises(ValueError, match="stride"):
        ma.accesses_abut(0)


def test_the_shipped_counters_show_the_models_bytes_and_the_dense_streams():
    """The H200's ncu counters (labs/reference/h200/memory_access_counters.json) against the
    models: DRAM bytes per float are dram_bytes_per_element's at every stride and span, and
    the DRAM's throughput is higher for every stride whose accesses abut than for any whose
    accesses do not."""
    from helpers.labs import memory_access_worker
    from helpers.labs.analysis import memory_access as view

    counters = memory_access_worker.counters_reference()
    if counters is None:
        pytest.skip("memory_access_counters.json not shipped yet")
    rows = view.counter_rows(counters)
    assert rows and not counters["measurements"]["errors"]
    for r in rows:
        assert r["dram_bytes_per_float"] == pytest.approx(ma.dram_bytes_per_element(r["stride"]),
                                                          rel=0.01)
    full = [r for r in rows if r["layout"] != "span_sweep"]
    dense = [r["dram_pct"] for r in full if ma.accesses_abut(r["stride"]) and r["stride"] > 1]
    sparse = [r["dram_pct"] for r in full if not ma.accesses_abut(r["stride"])]
    assert dense and sparse and min(dense) > max(sparse)
