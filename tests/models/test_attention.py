"""Models of softmax fusion and attention traffic: limits, oracles (simulated loops, torch's
softmax), and the FlashAttention paper's published measurement."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
import torch

from helpers.models import attention as att
from helpers.models import roofline


def torch_softmax(x, axis=-1):
    """Oracle: PyTorch's float64 softmax (an implementation independent of this module)."""
    return torch.softmax(torch.as_tensor(np.asarray(x), dtype=torch.float64), dim=axis).numpy()

# --- fusion -------------------------------------------------------------------------------------


@given(st.integers(1, 10**7), st.integers(1, 20), st.sampled_from([1.0, 2.0, 4.0]))
def test_fused_chain_moves_k_times_fewer_bytes(n, k, b):
    un = att.elementwise_chain_bytes(n, k, b, fused=False)
    fu = att.elementwise_chain_bytes(n, k, b, fused=True)
    assert un == pytest.approx(k * fu)
    assert att.fusion_saved_bytes(n, k, b) == pytest.approx(un - fu)
    assert att.fusion_saved_bytes(n, 1, b) == 0  # one operation: nothing to fuse


def test_fusion_time_is_the_roofline_memory_time_of_the_saved_bytes():
    saved = att.fusion_saved_bytes(1 << 20, 5, 2.0)
    assert att.fusion_time_saved_s(1 << 20, 5, 2.0, 3e12) == pytest.approx(
        roofline.memory_time_s(saved, 3e12))


def _count_unfused_softmax(rows, cols):
    """Oracle: walk the five kernels and add up the elements each reads and writes."""
    kernels = [  # (matrix reads, row-vector reads, matrix writes, row-vector writes)
        ("max", 1, 0, 0, 1), ("sub", 1, 1, 1, 0), ("exp", 1, 0, 1, 0), ("sum", 1, 0, 0, 1),
        ("div", 1, 1, 1, 0)]
    total = 0
    for _, mr, vr, mw, vw in kernels:
        total += (mr + mw) * rows * cols + (vr + vw) * rows
    assert len(kernels) == att.UNFUSED_SOFTMAX_PASSES
    return total


@given(st.integers(1, 4096), st.integers(1, 4096), st.sampled_from([2.0, 4.0]))
def test_softmax_bytes_against_a_kernel_by_kernel_count(rows, cols, b):
    assert att.softmax_unfused_bytes(rows, cols, b) == _count_unfused_softmax(rows, cols) * b
    assert att.softmax_fused_bytes(rows, cols, b) == 2 * rows * cols * b
    # wide rows: the unfused softmax moves four times the bytes
    if cols >= 1024:
        ratio = att.softmax_unfused_bytes(rows, cols, b) / att.softmax_fused_bytes(rows, cols, b)
        assert 4.0 < ratio < 4.01


# --- online softmax -----------------------------------------------------------------------------

finite_rows = arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 40)),
                     elements=st.floats(-80, 80))


@settings(deadline=None)
@given(finite_rows, st.integers(1, 50))
def test_online_softmax_equals_the_two_pass_softmax_and_torch(x, block):
    got = att.online_softmax(x, block=block)
    np.testing.assert_allclose(got, att.two_pass_softmax(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got, torch_softmax(x, axis=-1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-12)


@given(finite_rows, st.integers(1, 40))
def test_online_update_gives_the_row_max_and_the_shifted_sum(x, split):
    m, ell = -np.inf, 0.0
    m = np.full(x.shape[0], -np.inf)
    ell = np.zeros(x.shape[0])
    for start in range(0, x.shape[1], split):
        m, ell = att.online_softmax_update(m, ell, x[:, start:start + split])
    np.testing.assert_array_equal(m, x.max(axis=-1))
    np.testing.assert_allclose(ell, np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1),
                               rtol=1e-12)


def test_online_softmax_survives_large_scores_and_forgetting_the_rescale_does_not():
    x = np.array([[1.0, 700.0, 2.0, 710.0]])
    assert np.allclose(att.online_softmax(x, block=1), torch_softmax(x, axis=-1))
    # the wrong update (no rescale of the old sum) gives a different, wrong normalizer
    m, ell = -np.inf, 0.0
    for v in x[0]:
        m_new = max(m, v)
        ell = ell + math.exp(v - m_new)  # forgets ell * exp(m - m_new)
        m = m_new
    assert not math.isclose(ell, np.exp(x - x.max()).sum())


def test_online_softmax_rejects_bad_input():
    for bad in ([], np.float64(1.0), [1.0, np.inf], [np.nan]):
        with pytest.raises(ValueError):
            att.online_softmax(bad)
    with pytest.raises(ValueError):
        att.online_softmax([1.0, 2.0], block=0)
    with pytest.raises(ValueError):
        att.two_pass_softmax([])


# --- attention traffic --------------------------------------------------------------------------

def _simulate_flash2(n, d, br, causal):
    """Oracle: walk the FlashAttention-2 loop (query blocks outer) and count elements moved."""
    moved = 0
    for i in range(math.ceil(n / br)):
        rows = min(br, n - i * br)
        moved += rows * d  # load Q_i
        last = min((i + 1) * br, n) if causal else n
        for j in range(last):  # every key (one at a time; blocking does not change the count)
            moved += 2 * d  # K_j and V_j
        moved += rows * d  # store O_i
    return moved


@given(st.integers(1, 700), st.sampled_from([16, 64, 128]), st.sampled_from([16, 64, 128]),
       st.booleans())
def test_flash2_bytes_against_a_simulated_loop(n, d, br, causal):
    assert att.flash2_attention_hbm_bytes(n, d, 2.0, block_rows=br, causal=causal) == \
        2.0 * _simulate_flash2(n, d, br, causal)


def _simulate_flash1(n, d, bc):
    """Oracle: Algorithm 1 of Dao et al. 2022, element by element (key blocks outer)."""
    moved, stats = n * d, 2 * n  # initialise O, l, m in HBM
    for j in range(math.ceil(n / bc)):
        moved += 2 * min(bc, n - j * bc) * d  # K_j, V_j
        for _ in range(1):  # all query blocks together: Q, O read, O written; l, m read+written
            moved += 3 * n * d
            stats += 4 * n
    return moved, stats


@given(st.integers(1, 2000), st.sampled_from([32, 64, 128]), st.sampled_from([16, 64, 256]))
def test_flash1_bytes_against_algorithm_1(n, d, bc):
    moved, stats = _simulate_flash1(n, d, bc)
    assert att.flash_attention_hbm_bytes(n, d, 2.0, block_cols=bc) == pytest.approx(
        2.0 * moved + 4.0 * stats)


def test_standard_attention_counts_and_the_theorem_2_scaling():
    n, d = 4096, 64
    assert att.standard_attention_hbm_bytes(n, d, 1.0) == 4 * n * n + 4 * n * d
    assert att.standard_attention_backward_hbm_bytes(n, d, 1.0) == 7 * n * n + 8 * n * d
    # FlashAttention: Theta(N^2 d^2 / M): doubling M (hence B_c) about halves the traffic
    small = att.flash_attention_hbm_bytes(n, d, 2.0, block_cols=att.flash_block_sizes(1 << 15, d)[1])
    large = att.flash_attention_hbm_bytes(n, d, 2.0, block_cols=att.flash_block_sizes(1 << 16, d)[1])
    assert 1.8 < small / large < 2.1
    # and quadrupling N multiplies it by about sixteen, standard attention's too
    for f in (lambda n: att.standard_attention_hbm_bytes(n, d, 2.0),
              lambda n: att.flash2_attention_hbm_bytes(n, d, 2.0, block_rows=128)):
        assert 15 < f(4 * n) / f(n) < 16.1


def test_flash_block_sizes_follow_algorithm_1():
    assert att.flash_block_sizes(4 * 64 * 100, 64) == (64, 100)
    assert att.flash_block_sizes(1000, 128) == (2, 2)
    with pytest.raises(ValueError):
        att.flash_block_sizes(32, 64)


def test_flop_and_intensity():
    assert att.attention_flop(1024, 64) == 4 * 1024**2 * 64
    assert att.attention_flop(1024, 64, causal=True) == 2 * 1024**2 * 64
    assert att.attention_flop(100, 16, n_heads=3, batch=2) == 6 * att.attention_flop(100, 16)
    # standard attention's intensity tends to d / b, the fused kernel's to 2 B_r / b
    assert att.attention_intensity_flop_per_byte(1 << 16, 64, 2.0) == pytest.approx(32, rel=1e-2)
    assert att.attention_intensity_flop_per_byte(1 << 16, 64, 2.0, block_rows=128) == \
        pytest.approx(128, rel=1e-2)
    with pytest.raises(ValueError):
        att.attention_intensity_flop_per_byte(1024, 64, 2.0, causal=True)


def test_recomputation_beats_storing_exactly_below_the_ridge():
    peak, bw, b = 989e12, 4.8e12, 2.0
    ridge = peak / bw
    for d in (32, 64, 128, 256, 512):
        faster = att.recompute_time_s(4096, d, peak) < att.store_time_s(4096, b, bw)
        assert faster == (d / b < ridge)


def test_naive_peak_bytes():
    assert att.naive_attention_peak_bytes(8192, 2.0, n_heads=16, batch=2) == 8 * 2**30


def test_published_figure_2_of_the_flashattention_paper():
    # Dao et al. 2022, Figure 2 left: GPT-2 medium (seq. 1024, head dim 64, 16 heads, batch 64)
    # on an A100, forward + backward: standard attention 40.3 GB of HBM reads and writes,
    # FlashAttention 4.4 GB.
    n, d, kw = 1024, 64, dict(n_heads=16, batch=64)
    std = (att.standard_attention_hbm_bytes(n, d, 2.0, **kw)
           + att.standard_attention_backward_hbm_bytes(n, d, 2.0, **kw))
    # Algorithms 0 and 3 count the matrix products and the softmax only; the measured run also
    # applied the causal mask and dropout as separate passes over the N x N matrices, so the
    # count is a lower bound that explains most, not all, of the measurement.
    assert 0.55 * 40.3e9 < std < 40.3e9
    # FlashAttention with the paper's on-chip memory of about 100 KB (fp16 elements) and the
    # block sizes of Algorithm 1: the same order as the measurement, about ten times below
    # standard attention.
    _, bc = att.flash_block_sizes(100_000 // 2, d)
    fl = (att.flash_attention_hbm_bytes(n, d, 2.0, block_cols=bc, **kw)
          + att.flash_attention_backward_hbm_bytes(n, d, 2.0, block_cols=bc, **kw))
    assert 4.4e9 / 2 < fl < 4.4e9 * 2
    assert std / fl > 3


@pytest.mark.parametrize("call", [
    lambda: att.elementwise_chain_bytes(0, 2, 2.0, fused=True),
    lambda: att.elementwise_chain_bytes(10, 0, 2.0, fused=True),
    lambda: att.softmax_fused_bytes(10, 10, -1.0),
    lambda: att.softmax_unfused_bytes(10, 1.5, 2.0),
    lambda: att.attention_flop(0, 64),
    lambda: att.standard_attention_hbm_bytes(10, 64, 0.0),
    lambda: att.flash_attention_hbm_bytes(10, 64, 2.0, block_cols=0),
    lambda: att.flash2_attention_hbm_bytes(10, 64, 2.0, block_rows=-1),
    lambda: att.fusion_time_saved_s(10, 2, 2.0, 0.0),
    lambda: att.recompute_time_s(10, 64, float("nan")),
    lambda: att.store_time_s(10, 2.0, -1.0),
    lambda: att.attention_flop(True, 64),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
