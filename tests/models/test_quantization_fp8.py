"""The FP8 models of helpers.models.quantization (issue 19 item 5): per-tensor and row-wise
FP8 quantization, the rounding-error and product-error models, the speed-up bound and the KV
batch that fits. Each three ways: limits, an independent oracle, a published number."""

import math

import pytest
import torch

from helpers import specs
from helpers.models import numerics, transformer
from helpers.models import quantization as qz


# --- published numbers ----------------------------------------------------------------------

def test_micikevicius_table_1():
    # Micikevicius et al. (2022), "FP8 Formats for Deep Learning", table 1: E4M3's largest
    # normal 448 = 1.75 x 2^8, smallest normal 2^-6, smallest subnormal 2^-9; E5M2's largest
    # 57344 = 1.75 x 2^15; mantissa bits 3 and 2
    assert qz.fp8_step(448.0) == 1.0 and qz.fp8_step(57344.0, "fp8_e5m2") == 1.0
    assert torch.finfo(torch.float8_e4m3fn).max == numerics.max_finite("fp8_e4m3") == 448.0
    assert numerics.min_normal("fp8_e4m3") == 2.0 ** -6
    assert numerics.machine_epsilon("fp8_e4m3") == 2.0 ** -3
    # the smallest subnormal survives quantization, half of it rounds to zero (ties to even)
    q, s = qz.fp8_quantize(torch.tensor([[448.0, 2.0 ** -9, 2.0 ** -10, -448.0]]))
    assert float(s) == 1.0 and q.float().tolist() == [[448.0, 2.0 ** -9, 0.0, -448.0]]


def test_h200_datasheet_ratio_and_llama_kv_bytes():
    g = specs.H200_SXM   # 1978.9 dense FP8 TFLOP/s against 989.4 dense BF16 (datasheet)
    assert qz.low_precision_speedup_bound(g.peak_flop_per_s("fp8"),
                                          g.peak_flop_per_s("bf16")) == pytest.approx(2.0, rel=1e-3)
    # Llama-3-8B: 32 layers x 8 KV heads x 128 dims x 2 (K, V) = 65536 elements per token
    per_token = transformer.kv_cache_bytes_per_token(transformer.LLAMA3_8B, 2.0)
    assert per_token == 131072
    assert qz.kv_max_batch(120e9, 16e9, per_token, 8192) == 96


# --- limits and invariants ------------------------------------------------------------------

def test_error_model_limits():
    assert qz.relative_rounding_rms("fp8_e4m3") == pytest.approx(
        2.0 ** -3 / math.sqrt(12) * math.sqrt(3 / (8 * math.log(2))))
    # each extra mantissa bit halves the error; E5M2 (2 bits) is twice E4M3's
    assert qz.relative_rounding_rms("fp8_e5m2") == pytest.approx(2 * qz.relative_rounding_rms())
    assert qz.relative_rounding_rms("bf16") == pytest.approx(qz.relative_rounding_rms() / 16)
    # wider operands: the error tends to the output's rounding alone
    assert qz.fp8_matmul_rel_rms_error("fp32", "fp32", "bf16") == pytest.approx(
        qz.relative_rounding_rms("bf16"), rel=1e-4)
    # two equal operands' errors add in quadrature
    assert qz.fp8_matmul_rel_rms_error(out_fmt="fp32") == pytest.approx(
        math.sqrt(2) * qz.relative_rounding_rms(), rel=1e-9)


def test_kv_batch_limits():
    per_token = 131072.0
    # halving the element (FP8) doubles the batch, up to the floor
    b16 = qz.kv_max_batch(141e9, 16e9, per_token, 4096)
    b8 = qz.kv_max_batch(141e9, 16e9, per_token / 2, 4096)
    assert b8 in (2 * b16, 2 * b16 + 1)
    assert qz.kv_max_batch(16e9, 16e9, per_token, 1) == 0          # no room left
    assert qz.kv_max_batch(per_token * 10, 0, per_token, 10) == 1   # exactly one fits


def test_quantize_keeps_the_largest_value_and_scales_rows():
    x = torch.tensor([[1.0, -0.5, 0.25], [1000.0, 3.0, -2.0]])
    q, s = qz.fp8_quantize(x, rowwise=True)
    assert q.dtype == torch.float8_e4m3fn and tuple(s.shape) == (2, 1)
    assert torch.equal(q.float().abs().amax(dim=1), torch.tensor([448.0, 448.0]))
    assert torch.allclose(q.float() * s, x, rtol=2.0 ** -4)   # within the unit roundoff
    q, s = qz.fp8_quantize(torch.zeros(2, 3))                  # zeros stay zeros
    assert float(s) > 0 and not bool(q.float().any())
    q, s = qz.fp8_quantize(x, fmt="fp8_e5m2")
    assert q.dtype == torch.float8_e5m2 and float(s) * 57344 == pytest.approx(1000.0)


# --- independent oracles --------------------------------------------------------------------

def test_quantize_against_the_books_own_e4m3_rounding():
    """Each code is round-to-nearest-even of x / s on E4M3's grid, as helpers.models.numerics
    computes it in plain Python (an implementation independent of torch's cast)."""
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(7, 33, generator=gen, dtype=torch.float64) * 3
    for rowwise in (False, True):
        q, s = qz.fp8_quantize(x, rowwise=rowwise)
        scaled = (x.float() / s).double()
        want = [[numerics.round_to_format(float(v), "fp8_e4m3") for v in row] for row in scaled]
        assert q.double().tolist() == want


def test_product_error_model_against_a_float64_simulation():
    """Gaussian operands quantized per tensor and per row, multiplied in float64, rounded to
    bf16: the relative RMS error against the exact product is within the lab's tolerance of
    the model (the lab's claim ``fp8_error`` uses the same tolerance on the H200)."""
    from helpers.labs.quantization import FP8_CLAIMS

    gen = torch.Generator().manual_seed(11)
    model = qz.fp8_matmul_rel_rms_error()
    for rowwise in (False, True):
        x = torch.randn(192, 1024, generator=gen, dtype=torch.float64)
        w = torch.randn(256, 1024, generator=gen, dtype=torch.float64) * 0.02
        (xq, sx), (wq, sw) = qz.fp8_quantize(x, rowwise=rowwise), qz.fp8_quantize(w, rowwise=rowwise)
        y = x @ w.T
        got = ((xq.double() * sx.double()) @ (wq.double() * sw.double()).T).to(torch.bfloat16)
        err = float((got.double() - y).pow(2).mean().sqrt() / y.pow(2).mean().sqrt())
        assert abs(model / err - 1) < FP8_CLAIMS["fp8_error"].tolerance
        # one operand's rounding: the per-element relative RMS error is the rounding model's
        rel = float(((xq.double() * sx.double() - x) / x).pow(2).mean().sqrt())
        assert rel == pytest.approx(qz.relative_rounding_rms(), rel=0.03)


def test_kv_batch_against_allocated_caches():
    """The batch from the model is the number of whole per-sequence caches (allocated, their
    nbytes summed) that fit in the memory left by the weights."""
    cfg, ctx = transformer.LLAMA3_8B, 16
    for dtype in (torch.bfloat16, torch.float8_e4m3fn):
        one = torch.empty(2, cfg.n_layers, cfg.n_kv_heads, ctx, cfg.head_dim, dtype=dtype,
                          device="meta")
        per_seq = one.numel() * one.element_size()
        per_token = transformer.kv_cache_bytes_per_token(cfg, one.element_size())
        memory, weights = 10.5 * per_seq + 1000, 1000
        b = qz.kv_max_batch(memory, weights, per_token, ctx)
        assert b == 10 and b * per_seq <= memory - weights < (b + 1) * per_seq


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: qz.fp8_step(0.0), "amax"),
    (lambda: qz.fp8_step(1.0, "fp8_e3m4"), "fmt"),
    (lambda: qz.fp8_quantize(torch.ones(3)), "x must be a 2-D"),
    (lambda: qz.fp8_quantize(torch.ones(2, 2, dtype=torch.int32)), "x must be a 2-D"),
    (lambda: qz.fp8_quantize(torch.tensor([[1.0, float("nan")]])), "finite"),
    (lambda: qz.fp8_quantize(torch.ones(2, 2), fmt="int8"), "fmt"),
    (lambda: qz.relative_rounding_rms("int8"), "int8"),
    (lambda: qz.low_precision_speedup_bound(0.0, 1.0), "low_peak_flop_per_s"),
    (lambda: qz.low_precision_speedup_bound(1.0, float("nan")), "high_peak_flop_per_s"),
    (lambda: qz.kv_max_batch(-1.0, 0.0, 1.0, 1), "memory_bytes"),
    (lambda: qz.kv_max_batch(1.0, 2.0, 1.0, 1), "weight_bytes"),
    (lambda: qz.kv_max_batch(1.0, 0.0, 0.0, 1), "kv_bytes_per_token"),
    (lambda: qz.kv_max_batch(1.0, 0.0, 1.0, 0), "context_len"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
