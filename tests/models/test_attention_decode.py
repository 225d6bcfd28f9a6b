"""helpers.models.attention.decode_attention_bytes: limits and invariants, an oracle (the bytes
of the tensors a split-KV decode step really allocates), and Kwon et al.'s published 800 KB of
KV cache per token of OPT-13B."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import attention as att
from helpers.models.transformer import kv_cache_bytes


@given(n=st.integers(1, 10**6), d=st.sampled_from([64, 128]), hkv=st.integers(1, 16),
       g=st.integers(1, 8), b=st.integers(1, 64), s=st.integers(1, 256))
def test_limits_and_invariants(n, d, hkv, g, b, s):
    def q(**kw):
        args = dict(n_heads=hkv * g, n_kv_heads=hkv, batch=b, n_splits=s) | kw
        return att.decode_attention_bytes(n, d, 2.0, **args)

    # linear in the batch; one more token adds one token of K and V per K/V head
    assert q(batch=1) * b == pytest.approx(q())
    assert att.decode_attention_bytes(n + 1, d, 2.0, n_heads=hkv * g, n_kv_heads=hkv, batch=b,
                                      n_splits=s) - q() == pytest.approx(2 * b * hkv * d * 2.0)
    # grouping query heads does not add cache bytes: only q, o and the partials grow with G
    assert q() - q(n_splits=1) == pytest.approx(0 if s == 1 else 2 * b * hkv * g * s * (d + 1) * 4)
    # the cache dominates at long context: the rest is a fixed per-head amount
    assert q(n_splits=1) == pytest.approx(
        kv_cache_bytes(batch=b, seq_len=n, n_layers=1, n_kv_heads=hkv, head_dim=d,
                       bytes_per_element=2.0) + 2 * b * hkv * g * d * 2.0)
    assert q() >= q(n_splits=1)


def test_equals_the_bytes_of_the_tensors_a_split_decode_step_allocates():
    """Oracle: allocate (on the meta device) what a split-KV step reads and writes and add up
    nbytes: K and V read, q read, o written, fp32 partials and log-sum-exps written and read."""
    b, h, hkv, n, d, s = 3, 32, 8, 1000, 128, 7
    meta = dict(device="meta")
    k = torch.empty(b, hkv, n, d, dtype=torch.bfloat16, **meta)
    v, qt = torch.empty_like(k), torch.empty(b, h, d, dtype=torch.bfloat16, **meta)
    o = torch.empty_like(qt)
    part = torch.empty(b, h, s, d, dtype=torch.float32, **meta)
    lse = torch.empty(b, h, s, dtype=torch.float32, **meta)
    moved = k.nbytes + v.nbytes + qt.nbytes + o.nbytes + 2 * (part.nbytes + lse.nbytes)
    assert att.decode_attention_bytes(n, d, 2.0, n_heads=h, n_kv_heads=hkv, batch=b,
                                      n_splits=s) == moved
    assert att.decode_attention_bytes(n, d, 2.0, n_heads=h, n_kv_heads=hkv, batch=b) == (
        moved - 2 * (part.nbytes + lse.nbytes))


def test_reproduces_kwon_et_al_800_kb_per_token_of_opt_13b():
    """Kwon et al. 2023, Section 3: OPT-13B (40 layers, 40 heads of 128, fp16) caches 800 KB
    (KiB) per token; here as the bytes one more token of context adds, times 40 layers."""
    per_layer = [att.decode_attention_bytes(n, 128, 2.0, n_heads=40, n_kv_heads=40)
                 for n in (2047, 2048)]
    assert 40 * (per_layer[1] - per_layer[0]) / 1024 == 800


@pytest.mark.parametrize("kw, match", [
    (dict(n_heads=6, n_kv_heads=4), "multiple of n_kv_heads"), (dict(context_len=0), "context_len"),
    (dict(head_dim=-1), "head_dim"), (dict(bytes_per_element=0.0), "bytes_per_element"),
    (dict(n_splits=0), "n_splits"), (dict(batch=1.5), "batch"),
    (dict(partial_bytes_per_element=float("nan")), "partial_bytes_per_element")])
def test_bad_input(kw, match):
    args = dict(context_len=100, head_dim=64, bytes_per_element=2.0, n_heads=8,
                n_kv_heads=2) | kw
    with pytest.raises(ValueError, match=match):
        att.decode_attention_bytes(**args)
