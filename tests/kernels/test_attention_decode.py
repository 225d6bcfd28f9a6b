"""helpers.kernels.attention_decode: the split-KV decode kernels against a float64 reference
written here (not the module's own), on fresh random inputs, poisoned outputs and odd shapes
(Triton's interpreter on a CPU); the split count; bad input. And the grouped-query heads of the
training kernel (helpers.kernels.attention) against the same kind of reference."""

from __future__ import annotations

import math
import secrets

import pytest
import torch

from helpers.kernels import attention as fwd  # before triton: the interpreter on a CPU
from helpers.kernels import attention_decode as dec
from helpers.kernels import triton_device

DEVICE = triton_device("cpu")


def gen():
    return torch.Generator().manual_seed(secrets.randbits(62))


def randn(shape, g, dtype=torch.float32):
    return torch.randn(shape, generator=g).to(device=DEVICE, dtype=dtype)


def oracle(q, k, v):
    """float64, one query head at a time, K/V head h // G picked by a loop (no reshape)."""
    q, k, v = (t.detach().double().cpu() for t in (q, k, v))
    b, h, d = q.shape
    g = h // k.shape[1]
    out = torch.empty(b, h, d, dtype=torch.float64)
    for i in range(b):
        for j in range(h):
            s = k[i, j // g] @ q[i, j] / math.sqrt(d)
            w = torch.exp(s - s.max())
            out[i, j] = (w / w.sum()) @ v[i, j // g]
    return out


def run_poisoned(q, k, v, **kw):
    out = torch.full_like(q, float("nan"))
    o, used = dec.decode_attention(q, k, v, out=out, return_splits=True, **kw)
    assert o is out
    return out, used


# (batch, query heads, K/V heads, KV length, head dim, splits asked, block): KV lengths that
# are not multiples of the block, one split, many, more splits than blocks, groups of 1, 4, 7
CASES = [(1, 4, 1, 45, 16, 1, 16), (2, 8, 2, 45, 16, 3, 16), (3, 7, 1, 77, 16, 50, 16),
         (2, 8, 8, 100, 32, 4, 32), (1, 14, 2, 1, 16, None, 16), (2, 4, 1, 33, 16, 33, 16)]


@pytest.mark.parametrize("b, h, hkv, n, d, splits, block", CASES)
def test_matches_float64_on_fresh_inputs(b, h, hkv, n, d, splits, block):
    g = gen()
    q = randn((b, h, d), g)
    k, v = randn((b, hkv, n, d), g), randn((b, hkv, n, d), g)
    out, used = run_poisoned(q, k, v, n_splits=splits, block_n=block)
    blocks = -(-n // block)
    assert 1 <= used <= min(splits or blocks, blocks)
    assert float((out.double().cpu() - oracle(q, k, v)).abs().max()) <= 1e-5  # NaN fails too


def test_fp16_and_a_strided_slice_of_a_larger_cache():
    g = gen()
    cache_k, cache_v = randn((3, 4, 130, 32), g, torch.float16), randn((3, 4, 130, 32), g,
                                                                       torch.float16)
    # sequences 0 and 2, K/V heads 1 and 3, the first 61 tokens: strides of the full cache
    k, v = cache_k[::2, 1::2, :61], cache_v[::2, 1::2, :61]
    q = randn((2, 8, 64), g, torch.float16)[..., :32]  # a query with a head stride of 64
    assert not k.is_contiguous() and not q.is_contiguous()
    out, used = run_poisoned(q, k, v, n_splits=4, block_n=16)  # 4 blocks: one each
    assert used == 4
    assert float((out.double().cpu() - oracle(q, k, v)).abs().max()) <= 3e-3


def test_the_splits_agree_with_each_other_and_with_the_module_reference():
    g = gen()
    q, k, v = randn((2, 8, 16), g), randn((2, 2, 90, 16), g), randn((2, 2, 90, 16), g)
    outs = [dec.decode_attention(q, k, v, n_splits=s, block_n=16) for s in (1, 2, 6)]
    for o in outs[1:]:
        assert torch.allclose(o, outs[0], atol=1e-6, rtol=0)
    assert torch.allclose(dec.decode_reference(q, k, v).double(), oracle(q, k, v), atol=1e-5)


def test_decode_splits():
    # enough programs for four waves of 132 SMs, never a split shorter than a block
    assert dec.decode_splits(131072, 8, block_n=64, n_sms=132) == 66
    assert dec.decode_splits(131072, 8 * 16, block_n=64, n_sms=132) == 5
    assert dec.decode_splits(100, 8, block_n=64, n_sms=132) == 2
    assert dec.decode_splits(10**6, 10**4, block_n=64, n_sms=132) == 1
    for n in (1, 63, 64, 65, 4097):
        s = dec.decode_splits(n, 3, block_n=64, n_sms=132, waves=8)
        assert 1 <= s <= -(-n // 64) and s * 3 <= 8 * 132 + 3
    assert dec.device_sms("cpu") == 1


@pytest.mark.parametrize("kw, match", [
    (dict(context_len=0), "context_len"), (dict(block_n=1.5), "block_n"),
    (dict(n_sms=True), "n_sms"), (dict(waves=-1), "waves"),
    (dict(programs_per_split=0), "programs_per_split")])
def test_decode_splits_refuses_bad_input(kw, match):
    args = dict(context_len=100, programs_per_split=8, block_n=64, n_sms=132) | kw
    with pytest.raises(ValueError, match=match):
        dec.decode_splits(**args)


def test_bad_input():
    g = gen()
    q, k = randn((2, 4, 16), g), randn((2, 2, 10, 16), g)
    with pytest.raises(ValueError, match=r"\(B, H, d\)"):
        dec.decode_attention(q[0], k, k)
    with pytest.raises(ValueError, match="one shape"):
        dec.decode_attention(q, k, k[:, :, :5])
    with pytest.raises(ValueError, match="B=2"):
        dec.decode_attention(q, k[:1], k[:1])
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        dec.decode_attention(randn((2, 3, 16), g), k, k)
    with pytest.raises(ValueError, match="dtype and device"):
        dec.decode_attention(q.half(), k, k)
    with pytest.raises(ValueError, match="head dimension"):
        dec.decode_attention(q[..., :8], k[..., :8], k[..., :8])
    with pytest.raises(ValueError, match="KV length"):
        dec.decode_attention(q, k[:, :, :0], k[:, :, :0])
    with pytest.raises(ValueError, match="unit stride"):
        dec.decode_attention(q, randn((2, 2, 16, 10), g).transpose(-1, -2), k)
    with pytest.raises(ValueError, match="block_n"):
        dec.decode_attention(q, k, k, block_n=24)
    with pytest.raises(ValueError, match="n_splits"):
        dec.decode_attention(q, k, k, n_splits=0)
    with pytest.raises(ValueError, match="out must be"):
        dec.decode_attention(q, k, k, out=torch.empty(2, 4, 8))
    with pytest.raises(ValueError, match="head_dim"):
        dec.default_decode_config(48)


# --- grouped-query heads in the training kernel -----------------------------------------

def gqa_oracle(q, k, v, causal):
    """float64 attention with K/V head h // G indexed per query head (no repeat_interleave)."""
    q, k, v = (t.double().cpu() for t in (q, k, v))
    b, h, n, d = q.shape
    g = h // k.shape[1]
    out = torch.empty_like(q)
    for i in range(b):
        for j in range(h):
            s = q[i, j] @ k[i, j // g].T / math.sqrt(d)
            if causal:
                s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
            out[i, j] = torch.softmax(s, -1) @ v[i, j // g]
    return out


@pytest.mark.parametrize("b, h, hkv, n, causal", [(2, 4, 1, 45, False), (1, 6, 2, 33, True),
                                                   (1, 3, 3, 20, True)])
def test_training_kernel_with_grouped_query_heads(b, h, hkv, n, causal):
    g = gen()
    q = randn((b, h, n, 16), g)
    k, v = randn((b, hkv, n, 16), g), randn((b, hkv, n, 16), g)
    out = torch.full_like(q, float("nan"))
    fwd.attention(q, k, v, causal=causal, out=out, block_m=32, block_n=16)
    want = gqa_oracle(q, k, v, causal)
    assert float((out.double().cpu() - want).abs().max()) <= 1e-5
    assert torch.allclose(fwd.attention_reference(q, k, v, causal=causal), want, atol=1e-12)


def test_training_kernel_refuses_heads_that_do_not_group():
    g = gen()
    q, k = randn((1, 3, 20, 16), g), randn((1, 2, 20, 16), g)
    with pytest.raises(ValueError, match="multiple of H_kv"):
        fwd.attention(q, k, k)
    with pytest.raises(ValueError, match="multiple of H_kv"):
        fwd.attention(q, randn((1, 3, 21, 16), g), randn((1, 3, 21, 16), g))
