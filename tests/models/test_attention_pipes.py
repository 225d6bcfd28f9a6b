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


# --- per-tile cycles and the time they add up to -------------------------------------------------

from helpers import specs  # noqa: E402

H200 = specs.H200_SXM
RATES = dict(tensor_fma_per_clock=H200.tensor_fma_per_clock_per_sm["bf16"], sfu_ops_per_clock=16,
             fma_ops_per_clock=H200.fp32_lanes_per_sm, alu_ops_per_clock=64)


def test_the_tensor_term_is_the_datasheet_peak_and_the_sfu_rate_is_the_papers():
    # the products of a tile at the per-SM rate, on every SM at the tensor clock: the bf16 peak
    c = att.flash2_tile_cycles(128, block_rows=128, block_cols=128, fma_ops_per_score=0,
                               alu_ops_per_score=0, **RATES)
    flop = 4 * 128 * 128 * 128
    rate = flop / c["tensor"] * H200.sm_count * H200.tensor_boost_clock_hz
    assert rate == pytest.approx(H200.peak_flop_per_s("bf16"), rel=1e-3)
    # FlashAttention-3, Section 3.1: 3.9 TFLOP/s of special functions on an H100 SXM5, the
    # same SM count and clock as the H200
    sfu = RATES["sfu_ops_per_clock"] * H200.sm_count * H200.tensor_boost_clock_hz
    assert sfu == pytest.approx(3.9e12, rel=0.01)
    assert H200.peak_flop_per_s("bf16") / sfu == pytest.approx(256, rel=1e-3)
    # one exponential per score costs as long as the products at d = 64, half as long at 128
    for d, ratio in ((64, 1.0), (128, 0.5)):
        c = att.flash2_tile_cycles(d, block_rows=128, block_cols=64, fma_ops_per_score=0,
                                   alu_ops_per_score=0, **RATES)
        assert (c["exp"] - 4 * 128 / 16) / c["tensor"] == pytest.approx(ratio)


def test_tile_terms_count_every_operation_once():
    c = att.flash2_tile_cycles(64, block_rows=128, block_cols=64, fma_ops_per_score=3,
                               alu_ops_per_score=1.5, exp_per_score=1, **RATES)
    scores = 128 * 64
    assert c["exp"] == (scores + 4 * 128) / 16             # one per score, alpha by 4 per row
    assert c["fma"] == (3 * scores + 128 * 64) / 128       # and the accumulator's rescale
    assert c["alu"] == 1.5 * scores / 64
    assert c["total"] == c["tensor"] + c["exp"] + c["fma"] + c["alu"]
    zero = att.flash2_tile_cycles(64, block_rows=128, block_cols=64, fma_ops_per_score=0,
                                  alu_ops_per_score=0, exp_per_score=0, **RATES)
    assert zero["alu"] == 0 and zero["exp"] == 4 * 128 / 16


def pipe_time(n, d, **kw):
    args = dict(block_rows=128, block_cols=64, n_sms=132, clock_hz=H200.tensor_boost_clock_hz,
                fma_ops_per_score=3, alu_ops_per_score=1.5, n_heads=32, batch=16384 // n)
    args.update(RATES)
    args.update(kw)
    return att.flash2_attention_pipe_time_s(n, d, **args)


def test_pipe_time_is_the_peak_time_when_only_the_products_count():
    # whole waves (4096 programs would be 31.03 waves of 132: take 132 x 32 programs)
    t = pipe_time(4096, 64, sfu_ops_per_clock=1e30, fma_ops_per_clock=1e30,
                  alu_ops_per_clock=1e30, n_heads=33, batch=4)
    flop = att.attention_flop(4096, 64, n_heads=33, batch=4)
    assert t == pytest.approx(flop / H200.peak_flop_per_s("bf16"), rel=1e-4)  # 989.4 rounded


def test_pipe_time_against_whole_waves_of_equal_programs():
    n, d, r, c0 = 2048, 64, 2, 3000.0
    terms = att.flash2_tile_cycles(d, block_rows=128, block_cols=64, fma_ops_per_score=3,
                                   alu_ops_per_score=1.5, **RATES)
    c = att.flash2_sm_tile_cycles(terms, r)
    programs = 32 * 8 * (n // 128)
    waves = math.ceil(programs / (132 * r))
    want = waves * (c0 + r * (n // 64) * c) / H200.tensor_boost_clock_hz
    assert pipe_time(n, d, programs_per_sm=r, program_overhead_cycles=c0) == pytest.approx(want)
    # the causal mask: about half the tiles, never less than half
    full, causal = pipe_time(n, d), pipe_time(n, d, causal=True)
    assert 0.5 * full < causal < 0.6 * full
    # more work per score or more overhead per program never makes it faster
    assert pipe_time(n, d, fma_ops_per_score=4) > pipe_time(n, d)
    assert pipe_time(n, d, program_overhead_cycles=1.0) > pipe_time(n, d)


def test_sm_tile_cycles_limits():
    t = {"tensor": 512.0, "exp": 544.0, "fma": 281.0, "alu": 232.0}
    # one program: its chain, the products then the softmax (the ALU's work under the exps)
    assert att.flash2_sm_tile_cycles(t, 1) == 512 + 544 + 281
    # two: the products hide under the other program's softmax; the softmax pipes set it
    assert att.flash2_sm_tile_cycles(t, 2) == 544 + 281 + 232
    # many programs, products heavier than the softmax: the tensor cores set it
    heavy = dict(t, tensor=5000.0)
    assert att.flash2_sm_tile_cycles(heavy, 8) == 5000.0
    # never below any single resource, never above the chain, never slower with more programs
    for r in range(1, 6):
        c = att.flash2_sm_tile_cycles(t, r)
        assert max(t["tensor"], t["exp"] + t["fma"] + t["alu"]) <= c <= 512 + 544 + 281 + 232
        assert c <= att.flash2_sm_tile_cycles(t, max(1, r - 1))
    with pytest.raises(ValueError, match="alu"):
        att.flash2_sm_tile_cycles({"tensor": 1.0, "exp": 1.0, "fma": 1.0}, 1)
    with pytest.raises(ValueError, match="programs_per_sm"):
        att.flash2_sm_tile_cycles(t, 0)
