"""The pipe model of the fused attention kernel: the tiles each program computes (against the
kernel's own loop bounds), list scheduling (limits and Graham's bounds), and the per-tile
cycles of the tensor cores, the special-function units and the FP32 pipes."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import attention as att


def kernel_tiles(n, bm, bn, causal):
    """Oracle: the key blocks the book's kernel visits per program, walked with its own loops
    (``attention_fwd_kernel``: below-diagonal blocks, then the diagonal ones; or the full
    blocks, then the partial one)."""
    out = []
    for start_m in range(math.ceil(n / bm)):
        count = 0
        if causal:
            lo = start_m * bm
            count += len(range(0, lo, bn))
            count += len(range(lo, min(lo + bm, n), bn))
        else:
            full = (n // bn) * bn
            count += len(range(0, full, bn)) + len(range(full, n, bn))
        out.append(count)
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.sampled_from([16, 32, 64, 128]), st.sampled_from([16, 32, 64, 128]),
       st.booleans())
def test_program_tiles_are_the_kernels_loop_trip_counts(n, bm, bn, causal):
    if causal and bm % bn:
        with pytest.raises(ValueError, match="multiple"):
            att.flash2_program_tiles(n, block_rows=bm, block_cols=bn, causal=True)
        return
    got = att.flash2_program_tiles(n, block_rows=bm, block_cols=bn, causal=causal)
    assert got == kernel_tiles(n, bm, bn, causal)
    # every needed score is computed: the tiles cover N^2 (or the N(N+1)/2 of the mask)
    need = n * (n + 1) / 2 if causal else n * n
    assert sum(got) * bm * bn >= need


def test_causal_tiles_tend_to_half_and_the_diagonal_costs_one_block_row_more():
    n, b = 1 << 16, 128
    full = sum(att.flash2_program_tiles(n, block_rows=b, block_cols=b))
    causal = sum(att.flash2_program_tiles(n, block_rows=b, block_cols=b, causal=True))
    tr = n // b
    assert causal == tr * (tr + 1) // 2 and full == tr * tr
    assert causal / full == pytest.approx(0.5, rel=2 / tr)
    # at N = 4 blocks the diagonal's whole tiles are 25 % more than N^2 / 2
    small = att.flash2_program_tiles(4 * b, block_rows=b, block_cols=b, causal=True)
    assert sum(small) * b * b / ((4 * b) ** 2 / 2) == pytest.approx(1.25)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 100), min_size=1, max_size=60), st.integers(1, 9))
def test_list_schedule_bounds(durations, workers):
    t = att.list_schedule_makespan(durations, workers)
    total, longest = sum(durations), max(durations)
    assert t >= max(longest, total / workers) - 1e-9          # no schedule beats these
    assert t <= total / workers + longest * (1 - 1 / workers) + 1e-9  # Graham 1969


def test_list_schedule_limits():
    assert att.list_schedule_makespan([2.0] * 264, 132) == 4.0      # two whole waves
    assert att.list_schedule_makespan([2.0] * 265, 132) == 6.0      # one program more: a third
    assert att.list_schedule_makespan([1.0, 2.0, 3.0], 1) == 6.0    # one worker: the sum
    assert att.list_schedule_makespan([5.0, 1.0, 1.0], 8) == 5.0    # many: the longest
    for bad in (lambda: att.list_schedule_makespan([1.0], 0),
                lambda: att.list_schedule_makespan([-1.0], 2),
                lambda: att.list_schedule_makespan([], 2)):
        with pytest.raises(ValueError):
            bad()
