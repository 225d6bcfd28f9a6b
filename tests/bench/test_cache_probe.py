"""Tests of helpers.bench.cache_probe: the chase visits every line once, the C kernels agree
with NumPy, and the measured latencies order the way the hierarchy says."""

import numpy as np
import math

import pytest

from helpers.bench import cache_probe as cp

needs_cc = pytest.mark.skipif(not cp.available(), reason="no C compiler for the cache probes")


@pytest.mark.parametrize("ws", [128, 4096, 100_000])
def test_chase_cycle_is_one_cycle_through_every_line(ws):
    nxt, start = cp.chase_cycle(ws, seed=3)
    n_lines = ws // cp.CPU_LINE_BYTES
    per = cp.CPU_LINE_BYTES // 8
    seen, i = set(), start
    for _ in range(n_lines):
        assert i % per == 0 and i not in seen
        seen.add(i)
        i = int(nxt[i])
    assert i == start and len(seen) == n_lines
    assert nxt.ctypes.data % 4096 == 0


def test_chase_cycle_rejects_tiny_sets():
    with pytest.raises(ValueError, match="two"):
        cp.chase_cycle(64)


@needs_cc
def test_kernel_agrees_with_numpy_and_small_sets_are_faster():
    small = cp.chase_latency(16 * 1024, steps=1 << 16, budget_s=0.05)
    big = cp.chase_latency(64 * 2**20, steps=1 << 15, budget_s=0.05)
    # Fastest repetitions: other programs on a shared machine only ever add time, so the L1
    # side's best needs one undisturbed repetition and load can only widen the gap. (The
    # medians are not compared: under load they could be.)
    fast_small, fast_big = small.result.min_s / small.steps, big.result.min_s / big.steps
    assert 0 < small.seconds_per_load and 0 < big.seconds_per_load
    assert fast_big / fast_small > 5  # memory is far slower than L1


@needs_cc
def test_line_probe_times_both_offsets():
    """Whether the second load misses beyond the line is the foundations page's measurement,
    shown with its sanity check (helpers.bench.sanity), not a timed assertion here: a busy or
    prefetching machine can hide it (CONTRIBUTING: no unit test depends on an idle machine)."""
    inside = cp.line_probe(16, n_regions=8192, budget_s=0.05)
    beyond = cp.line_probe(256, n_regions=8192, budget_s=0.05)
    for p in (inside, beyond):
        assert math.isfinite(p.seconds_per_load) and p.seconds_per_load > 0
        assert p.steps > 0 and p.result.min_s > 0
    assert (inside.offset_bytes, beyond.offset_bytes) == (16.0, 256.0)


def test_line_probe_rejects_bad_offsets():
    for bad in (0, 12, 4096, -8):
        with pytest.raises(ValueError):
            cp.line_probe(bad)
