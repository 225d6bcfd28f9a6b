"""helpers.kernels.int8_gemv: the weight-only int8 kernel against float64 dequantize-then-matmul
on fresh random inputs (Triton's interpreter on a CPU), with poisoned outputs, odd sizes, every
activation dtype, and its ValueErrors."""

from __future__ import annotations

import secrets

import pytest
import torch

from helpers.kernels import int8_gemv as k  # before triton: the interpreter on a CPU
from helpers.kernels import triton_device
from helpers.labs.grading import check_outputs

DEVICE = triton_device("cpu")
CFG = k.Int8Config(16, 32, 1, 1)


def inputs(m, n, kk, dtype, gen):
    x = torch.randn(m, kk, generator=gen).to(device=DEVICE, dtype=dtype)
    q = torch.randint(-127, 128, (n, kk), generator=gen, dtype=torch.int8).to(DEVICE)
    s = (torch.rand(n, generator=gen) + 0.05).to(DEVICE)
    return x, q, s


@pytest.mark.parametrize("dtype, rtol", [(torch.float32, 1e-5), (torch.float16, 2e-3),
                                         (torch.bfloat16, 1e-2)])
@pytest.mark.parametrize("m, n, kk", [(1, 40, 96), (5, 33, 70), (17, 20, 33)])
def test_matches_float64_on_fresh_inputs_with_poisoned_output(dtype, rtol, m, n, kk):
    gen = torch.Generator().manual_seed(secrets.randbits(62))
    x, q, s = inputs(m, n, kk, dtype, gen)
    out = torch.full((m, n), float("nan"), dtype=dtype, device=DEVICE)
    k.int8_matmul(x, q, s, CFG, out=out)
    want = k.reference(x, q, s)
    err = (out.double().cpu() - want).abs().max() / want.abs().max()
    assert float(err) <= rtol  # NaN (an unwritten element) fails too


def test_through_the_lab_grader_and_fp16_scales():
    v = check_outputs(lambda x, q, s: k.int8_matmul(x, q, s.half(), CFG),
                      lambda x, q, s: k.reference(x, q, s.half()),
                      lambda g: inputs(3, 24, 64, torch.float32, g), name="int8", trials=2,
                      rtol=1e-5, atol=1e-4)
    assert v.passed, str(v)


def test_a_kernel_that_forgets_the_scales_fails():
    gen = torch.Generator().manual_seed(3)
    x, q, s = inputs(2, 16, 32, torch.float32, gen)
    y = k.int8_matmul(x, q, torch.ones_like(s), CFG)
    assert not torch.allclose(y.double().cpu(), k.reference(x, q, s), rtol=1e-3)


def test_errors():
    x, q, s = inputs(2, 16, 32, torch.float32, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="int8"):
        k.int8_matmul(x, q.float(), s, CFG)
    with pytest.raises(ValueError, match="M x K"):
        k.int8_matmul(x[:, :31], q, s, CFG)
    with pytest.raises(ValueError, match="one scale per row"):
        k.int8_matmul(x, q, s[:3], CFG)
    with pytest.raises(ValueError, match="float32, bfloat16"):
        k.int8_matmul(x.double(), q, s, CFG)
    with pytest.raises(ValueError, match="Int8Config"):
        k.int8_matmul(x, q, s, (16, 32))
    with pytest.raises(ValueError, match="out must be"):
        k.int8_matmul(x, q, s, CFG, out=torch.empty(3, 3))
    with pytest.raises(ValueError, match="power of two"):
        k.Int8Config(24, 32)
    with pytest.raises(ValueError, match="positive"):
        k.Int8Config(16, 32, 0)
    assert k.DEFAULT.name == "32x256 s=4 w=4"
