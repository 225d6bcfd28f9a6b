"""Tests of helpers.models.decode_bandwidth: limits, byte counts against allocated tensors,
agreement with the roofline, published numbers, errors."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import specs
from helpers.models import decode_bandwidth as db
from helpers.models import roofline as rl

batches = st.integers(min_value=1, max_value=4096)
byte_counts = st.floats(min_value=1e6, max_value=1e12, allow_nan=False)


# --- limits and invariants ---------------------------------------------------------------

@given(byte_counts, byte_counts, batches)
def test_rate_grows_with_batch_towards_the_kv_limit(w, kv, b):
    bw = 3.35e12
    r1 = db.decode_tokens_per_s_upper_bound(w, kv, b, bw)
    r2 = db.decode_tokens_per_s_upper_bound(w, kv, b + 1, bw)
    assert r1 < r2 < bw / kv  # more sequences share the weights, never past one KV per token


@given(byte_counts, byte_counts, batches)
def test_doubling_bandwidth_doubles_the_memory_bound_rate(w, kv, b):
    r1 = db.decode_tokens_per_s_upper_bound(w, kv, b, 2e12)
    r2 = db.decode_tokens_per_s_upper_bound(w, kv, b, 4e12)
    assert r2 == pytest.approx(2 * r1, rel=1e-12)


def test_batch_one_with_no_cache_is_bandwidth_over_weights():
    assert db.decode_tokens_per_s_upper_bound(16e9, 0.0, 1, 3.35e12) == pytest.approx(
        3.35e12 / 16e9)


@given(byte_counts, batches)
def test_step_time_with_compute_is_never_below_the_memory_bound(kv, b):
    n, w = 8e9, 16e9
    lower = db.decode_step_time_lower_bound_s(w, kv, b, 3.35e12)
    full = db.decode_step_time_s(w, kv, b, 3.35e12, n, 989.4e12)
    assert full >= lower * (1 - 1e-12)
    if b <= db.decode_compute_bound_batch(2.0, 989.4e12, 3.35e12):
        assert full == pytest.approx(lower, rel=1e-12)  # below B*, arithmetic is hidden


def test_large_batch_limit_with_compute():
    """As B grows, tokens/s tends to 1 / (K/beta + 2N/P): every token pays its KV and its FLOP."""
    w, kv, n, bw, p = 16e9, 0.5e9, 8e9, 3.35e12, 989.4e12
    rate = db.decode_tokens_per_s(w, kv, 10**9, bw, n, p)
    assert rate == pytest.approx(1 / (kv / bw + 2 * n / p), rel=1e-6)


def test_compute_bound_batch_balances_the_two_terms():
    for gpu in (specs.H100_SXM, specs.H200_SXM, specs.A100_SXM_80GB):
        p, bw = gpu.peak_flop_per_s("bf16"), gpu.hbm_bytes_per_s
        b_star = db.decode_compute_bound_batch(2.0, p, bw)
        n = 8e9
        assert 2 * b_star * n / p == pytest.approx(n * 2.0 / bw, rel=1e-12)
        assert b_star == pytest.approx(rl.ridge_intensity_flop_per_byte(p, bw), rel=1e-12)


def test_h200_over_h100_is_the_bandwidth_ratio():
    """Same compute, more bandwidth: the memory-bound token rate scales with bandwidth."""
    w = db.weight_bytes(8e9, 2.0)
    h100 = db.decode_tokens_per_s_upper_bound(w, 0.0, 1, specs.H100_SXM.hbm_bytes_per_s)
    h200 = db.decode_tokens_per_s_upper_bound(w, 0.0, 1, specs.H200_SXM.hbm_bytes_per_s)
    assert h200 / h100 == pytest.approx(4.8 / 3.35, rel=1e-12)


# --- independent oracles -----------------------------------------------------------------

def _llama3_8b_like_weights(dtype):
    """Weight tensors of a Llama-3-8B-shaped model on the meta device (no memory used).

    Shapes from Grattafiori et al. (2024), table 3: 32 layers, width 4096, FFN 14336,
    32 query heads and 8 KV heads of 128; vocabulary 128256; untied embeddings.
    """
    d, f, layers, h_kv, hd, vocab = 4096, 14336, 32, 8, 128, 128256
    meta = dict(device="meta", dtype=dtype)
    tensors = [torch.empty(vocab, d, **meta), torch.empty(vocab, d, **meta),  # embed, lm head
               torch.empty(d, **meta)]  # final norm
    for _ in range(layers):
        tensors += [torch.empty(d, d, **meta), torch.empty(h_kv * hd, d, **meta),
                    torch.empty(h_kv * hd, d, **meta), torch.empty(d, d, **meta),
                    torch.empty(f, d, **meta), torch.empty(f, d, **meta),
                    torch.empty(d, f, **meta), torch.empty(d, **meta), torch.empty(d, **meta)]
    return tensors


@pytest.mark.parametrize("dtype,bytes_per_element", [(torch.bfloat16, 2.0),
                                                     (torch.float32, 4.0),
                                                     (torch.float8_e4m3fn, 1.0)])
def test_weight_and_kv_bytes_against_meta_tensors(dtype, bytes_per_element):
    tensors = _llama3_8b_like_weights(dtype)
    n_params = sum(t.numel() for t in tensors)
    assert 8.0e9 < n_params < 8.1e9  # "8B"
    allocated = sum(t.nbytes for t in tensors)
    assert db.weight_bytes(n_params, bytes_per_element) == allocated
    batch, seq = 4, 8192
    kv = torch.empty(2, 32, batch, 8, seq, 128, device="meta", dtype=dtype)  # K and V
    kv_per_sequence = kv.nbytes / batch
    assert db.decode_step_bytes(allocated, kv_per_sequence, batch) == allocated + kv.nbytes


def test_step_time_is_two_roofline_kernels():
    """The KV read (memory only) plus the weight matmuls (a roofline kernel of 2BN FLOP)."""
    w, kv, n, bw, p = 16e9, 1e9, 8e9, 3.35e12, 989.4e12
    for b in (1, 16, 256, 1024, 8192):
        kv_read = rl.kernel_time_lower_bound_s(0.0, b * kv, p, bw)
        matmuls = rl.kernel_time_lower_bound_s(2 * b * n, w, p, bw)
        assert db.decode_step_time_s(w, kv, b, bw, n, p) == pytest.approx(kv_read + matmuls,
                                                                          rel=1e-12)


# --- published numbers -------------------------------------------------------------------

def test_scaling_book_pop_quiz():
    """Austin et al. (2025), "All About Transformer Inference", pop quiz: a 30B int8 model,
    8192-token contexts at 100 kB/token, 16 TPU v5e chips (8.1e11 bytes/s, 1.97e14 FLOP/s):
    "at least (4 * 819e6 + 30e9) / (16 * 8.1e11) = 2.5 ms" for 4 sequences, and "roughly
    21ms" for 256."""
    kv = 100e3 * 8192
    t4 = db.decode_step_time_lower_bound_s(30e9, kv, 4, 16 * 8.1e11)
    assert 2.5e-3 <= t4 < 2.6e-3  # the book truncates 2.57 ms to 2.5
    t256 = db.decode_step_time_s(30e9, kv, 256, 16 * 8.1e11, 30e9, 16 * 1.97e14)
    assert round(t256 * 1e3) == 21


def test_databricks_mbu_example():
    """Agarwal et al. (2023), "Model Bandwidth Utilization": a 7B 16-bit model with a 14 ms
    time per output token moves 14 GB in 14 ms, 1 TB/s, which is 50 % of 2 TB/s."""
    moved = db.weight_bytes(7e9, 2.0)
    assert db.bandwidth_utilization(moved, 14e-3, 2e12) == pytest.approx(0.5)
    # the same example read the other way: the bound is half the measured time
    assert db.decode_step_time_lower_bound_s(moved, 0.0, 1, 2e12) == pytest.approx(7e-3)


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_batch_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        db.decode_step_bytes(1e9, 1e6, bad)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bandwidth_and_weights_must_be_positive(bad):
    with pytest.raises(ValueError, match=r"mem_bytes_per_s must be a finite number in \(0"):
        db.decode_step_time_lower_bound_s(1e9, 0.0, 1, bad)
    with pytest.raises(ValueError, match="weight_bytes"):
        db.decode_step_bytes(bad, 0.0, 1)
    with pytest.raises(ValueError, match="bytes_per_element"):
        db.weight_bytes(8e9, bad)
    with pytest.raises(ValueError, match="time_s"):
        db.bandwidth_utilization(1e9, bad, 1e12)


def test_kv_bytes_must_be_non_negative():
    with pytest.raises(ValueError, match=r"kv_cache_bytes_per_sequence must be a finite number in \[0"):
        db.decode_step_bytes(1e9, -1.0, 1)
