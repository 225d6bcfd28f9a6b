"""Tests of helpers.models.quantization: invariants, oracles (torch's quantizer, a loop), sources."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from helpers.models import quantization as q

# Weights below ~1e-300 make absmax / qmax underflow to a zero scale (every code 0): a float64
# limit, not a quantizer property; random examples (no derandomize) found 5e-324.
finite = st.floats(-100, 100, allow_nan=False, width=64).filter(lambda x: x == 0 or abs(x) > 1e-300)


# --- limits and invariants --------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(w=arrays(np.float64, (3, 8), elements=finite),
       gran=st.sampled_from(q.GRANULARITIES), bits=st.sampled_from([8, 4, 3]))
def test_round_trip_error_is_at_most_half_a_step(w, gran, bits):
    g = 4 if gran == "group" else None
    s = q.absmax_scales(w, gran, bits=bits, group_size=g)
    codes = q.quantize(w, s, bits=bits)
    assert np.all(codes == np.round(codes)) and np.all(np.abs(codes) <= q.qmax(bits))
    err = np.abs(q.dequantize(codes, s) - w)
    step = np.broadcast_to(np.repeat(s, w.shape[1] // s.shape[1], axis=1), w.shape)
    assert np.all(err <= q.max_rounding_error(np.maximum(step, 1e-300)) * (1 + 1e-12) + 1e-300)
    # the block's largest magnitude lands exactly on +-qmax (no clipping, no wasted codes)
    if np.abs(w).max() > 0:
        assert np.abs(codes).max() == q.qmax(bits)
    # a second round trip changes nothing
    once = q.fake_quantize(w, gran, bits=bits, group_size=g)
    np.testing.assert_allclose(q.fake_quantize(once, gran, bits=bits, group_size=g), once,
                               rtol=1e-12, atol=1e-12)


def test_finer_granularity_never_has_a_larger_step():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 256))
    t = q.absmax_scales(w, "tensor")
    c = q.absmax_scales(w, "channel")
    g = q.absmax_scales(w, "group", group_size=32)
    assert np.all(c <= t) and np.all(g <= c)
    # a group as wide as the row is per-channel
    np.testing.assert_array_equal(q.absmax_scales(w, "group", group_size=256), c)
    e = [np.sqrt(np.mean((q.fake_quantize(w, k, bits=4, group_size=32) - w) ** 2))
         for k in q.GRANULARITIES]
    assert e[0] > e[1] > e[2]


def test_rms_error_of_values_spread_over_many_steps_is_step_over_sqrt12():
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, size=(1, 200_000))
    s = float(q.absmax_scales(w, "tensor")[0, 0])
    rms = np.sqrt(np.mean((q.fake_quantize(w, "tensor") - w) ** 2))
    assert rms == pytest.approx(q.rms_rounding_error(s), rel=0.01)


def test_one_outlier_inflates_the_per_tensor_error_k_times():
    rng = np.random.default_rng(2)
    w = rng.uniform(-1, 1, size=(8, 4096))
    w[0, 0] = 1.0
    base = np.sqrt(np.mean((q.fake_quantize(w, "tensor") - w)[:, 1:] ** 2))
    w2 = w.copy()
    w2[0, 0] = 20.0
    hit = np.sqrt(np.mean((q.fake_quantize(w2, "tensor") - w2)[:, 1:] ** 2))
    assert hit / base == pytest.approx(20, rel=0.05)
    assert q.outlier_levels(1.0, 20.0) == pytest.approx(127 / 20)
    assert q.outlier_levels(1.0, 1.0) == q.qmax(8)
    # per channel, the outlier only hurts its own row
    rows = np.sqrt(np.mean((q.fake_quantize(w2, "channel") - w2)[1:] ** 2))
    assert rows == pytest.approx(base, rel=0.05)


def test_all_zero_block_quantizes_to_zero():
    w = np.zeros((2, 4))
    w[1] = [1, -2, 3, 0.5]
    s = q.absmax_scales(w, "channel")
    assert s[0, 0] == 0
    out = q.fake_quantize(w, "channel")
    assert np.all(out[0] == 0) and np.all(np.isfinite(out))


def test_memory_per_format():
    assert q.bits_per_weight(4, group_size=128) == 4.125
    assert q.bits_per_weight("int8") == 8
    assert q.quantized_weight_bytes(1e9, 8) == 1e9
    # int4 g128 is a little more than a quarter of bf16
    assert q.quantized_weight_bytes(1e9, 4, group_size=128) / 2e9 == pytest.approx(4.125 / 16)


# --- oracles ----------------------------------------------------------------------------

def test_per_channel_int8_matches_torch_fake_quantize():
    g = torch.Generator().manual_seed(3)
    w = torch.randn(32, 64, generator=g)
    s = q.absmax_scales(w, "channel")
    mine = q.fake_quantize(w, "channel")
    ref = torch.fake_quantize_per_channel_affine(w, s.ravel(), torch.zeros(32, dtype=torch.int32),
                                                 0, -127, 127)
    # torch multiplies by 1/s where we divide by s: a value on a half step may round the
    # other way, so nearly all agree exactly and none differs by more than one step
    assert (mine == ref).double().mean() > 0.99
    assert bool(((mine - ref).abs() <= s * 1.0001).all())
    t = q.fake_quantize(w, "tensor")
    st_ = float(q.absmax_scales(w, "tensor"))
    ref_t = torch.fake_quantize_per_tensor_affine(w, st_, 0, -127, 127)
    assert (t == ref_t).double().mean() > 0.99


def test_group_int4_matches_a_plain_loop():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 12))
    out = q.fake_quantize(w, "group", bits=4, group_size=4)
    ref = np.empty_like(w)
    for r in range(3):
        for k in range(0, 12, 4):
            blk = w[r, k:k + 4]
            s = np.abs(blk).max() / 7
            ref[r, k:k + 4] = s * np.clip(np.round(blk / s), -7, 7)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-15)


def test_torch_and_numpy_agree_and_torch_keeps_dtype():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 16))
    for gran in q.GRANULARITIES:
        a = q.fake_quantize(w, gran, bits=4, group_size=8)
        b = q.fake_quantize(torch.from_numpy(w), gran, bits=4, group_size=8)
        np.testing.assert_allclose(a, b.numpy(), atol=1e-12)
    t = torch.randn(4, 16, dtype=torch.bfloat16)
    assert q.fake_quantize(t, "channel").dtype == torch.bfloat16


# --- published numbers ------------------------------------------------------------------

def test_llama_cpp_q4_0_and_q8_0_block_sizes():
    # ggml/src/ggml-common.h: block_q4_0 = fp16 d + 32 nibbles = 18 bytes per 32 weights,
    # block_q8_0 = fp16 d + 32 int8 = 34 bytes per 32 weights.
    assert q.bits_per_weight(4, group_size=32) * 32 / 8 == 18
    assert q.bits_per_weight(8, group_size=32) * 32 / 8 == 34
    assert q.bits_per_weight(4, group_size=32) == 4.5


def test_llm_int8_absmax_scale_is_127_over_max():
    # Dettmers et al. (2022), section 2.1: X_i8 = round(127 / max|X| * X)
    w = np.array([[0.3, -2.0, 1.1]])
    codes = q.quantize(w, q.absmax_scales(w, "tensor"))
    np.testing.assert_array_equal(codes, np.round(127 / 2.0 * w))


# --- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: q.absmax_scales(np.ones(4)), "2-D"),
    (lambda: q.absmax_scales(np.ones((2, 4)), "row"), "granularity"),
    (lambda: q.absmax_scales(np.ones((2, 6)), "group", group_size=4), "divide"),
    (lambda: q.absmax_scales(np.ones((2, 6)), "group"), "group_size"),
    (lambda: q.absmax_scales(np.array([[1.0, np.nan]])), "finite"),
    (lambda: q.qmax(1), "bits"),
    (lambda: q.qmax("bf16"), "integer format"),
    (lambda: q.quantize(np.ones((2, 4)), np.ones((3, 1))), "do not fit"),
    (lambda: q.outlier_levels(2.0, 1.0), "outlier_absmax"),
    (lambda: q.max_rounding_error(-1.0), "scale"),
    (lambda: q.bits_per_weight(4, group_size=0), "group_size"),
    (lambda: q.quantized_weight_bytes(-5, 4), "n_params"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
