"""helpers.kernels.kv_decode: one decode step of attention over a bf16 or an FP8 KV cache,
against float64 attention on fresh random inputs (Triton's interpreter on a CPU), at odd cache
lengths, with poisoned outputs, and its ValueErrors."""

from __future__ import annotations

import math
import secrets

import pytest
import torch

from helpers.kernels import kv_decode as kd  # before triton: the interpreter on a CPU
from helpers.kernels import triton_device
from helpers.models.quantization import fp8_quantize

DEVICE = triton_device("cpu")


def cache(shape, gen, dtype=torch.bfloat16):
    return torch.randn(shape, generator=gen).to(device=DEVICE, dtype=dtype)


@pytest.mark.parametrize("fp8", [False, True])
@pytest.mark.parametrize("b, h, s, d, block_n", [(1, 1, 1, 16, 16), (2, 3, 37, 32, 16),
                                                 (1, 2, 100, 64, 32), (3, 1, 64, 16, 64)])
def test_matches_float64_on_fresh_inputs_with_poisoned_output(fp8, b, h, s, d, block_n):
    gen = torch.Generator().manual_seed(secrets.randbits(62))
    q, k, v = cache((b, h, d), gen), cache((b, h, s, d), gen), cache((b, h, s, d), gen)
    ks = vs = 1.0
    if fp8:
        (k8, ks), (v8, vs) = (fp8_quantize(t.reshape(-1, d)) for t in (k, v))
        k, v, ks, vs = k8.reshape(k.shape), v8.reshape(v.shape), float(ks), float(vs)
    out = torch.full_like(q, float("nan"))
    kd.decode_attention(q, k, v, k_step=ks, v_step=vs, out=out, block_n=block_n)
    want = kd.decode_attention_reference(q, k, v, k_step=ks, v_step=vs)
    err = (out.double().cpu() - want).abs().max() / want.abs().max()
    assert float(err) <= 1e-2  # bf16 output (2^-9); NaN (an unwritten element) fails too


def test_reference_against_a_plain_softmax():
    """The reference itself, against softmax(q k^T / sqrt(d)) v written out for one head."""
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(shape, generator=gen, dtype=torch.float64)
               for shape in ((4,), (5, 4), (5, 4)))
    scores = [sum(q[j] * k[i, j] for j in range(4)) / 2.0 for i in range(5)]
    top = max(scores)
    p = [math.exp(x - top) for x in scores]
    want = [sum(p[i] * v[i, j] for i in range(5)) / sum(p) for j in range(4)]
    got = kd.decode_attention_reference(q, k, v, k_step=1.0, v_step=1.0)
    assert got.tolist() == pytest.approx([float(w) for w in want], rel=1e-12)
    # the steps multiply the stored values back
    assert torch.allclose(kd.decode_attention_reference(q, k / 2, v / 4, k_step=2.0, v_step=4.0),
                          got, rtol=1e-12)


def test_one_token_returns_its_value():
    gen = torch.Generator().manual_seed(1)
    q, k, v = cache((2, 16), gen), cache((2, 1, 16), gen), cache((2, 1, 16), gen)
    assert torch.equal(kd.decode_attention(q, k, v, block_n=16), v[:, 0])


@pytest.mark.parametrize("args, match", [
    (dict(q=(2, 16), k=(2, 5, 16), v=(2, 6, 16)), "one shape"),
    (dict(q=(3, 16), k=(2, 5, 16), v=(2, 5, 16)), "one shape"),
    (dict(q=(2, 24), k=(2, 5, 24), v=(2, 5, 24)), "head dimension"),
    (dict(q=(2, 16), k=(2, 0, 16), v=(2, 0, 16)), "at least one token"),
    (dict(block_n=24), "block_n"),
    (dict(k_step=0.0), "k_step"),
    (dict(v_step=float("inf")), "v_step"),
    (dict(out=(2, 8)), "out"),
])
def test_bad_input_raises_naming_the_argument(args, match):
    shapes = dict(q=(2, 16), k=(2, 5, 16), v=(2, 5, 16))
    shapes.update({n: args.pop(n) for n in ("q", "k", "v") if n in args})
    q, k, v = (torch.ones(shapes[n], device=DEVICE) for n in ("q", "k", "v"))
    if "out" in args:
        args["out"] = torch.empty(args["out"], device=DEVICE)
    with pytest.raises(ValueError, match=match):
        kd.decode_attention(q, k, v, **args)
