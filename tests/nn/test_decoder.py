"""Tests of helpers.nn.decoder: it runs, it is causal, its cache is exact, its shapes are right."""

from __future__ import annotations

import pytest
import torch

from helpers.models import transformer as tm
from helpers.nn import Decoder, KVCache
from helpers.nn.decoder import apply_rope, rope_tables

TINY = tm.LLAMA3_8B.scaled(name="tiny", n_layers=2, d_model=64, n_heads=8, n_kv_heads=2,
                           d_ff=96, vocab_size=101, max_seq_len=64)
TINY_GPT = tm.GPT2_SMALL.scaled(name="tiny-gpt", n_layers=2, d_model=48, n_heads=4,
                                n_kv_heads=4, d_ff=192, vocab_size=97, max_seq_len=32)
CONFIGS = [TINY, TINY_GPT, TINY.scaled(n_kv_heads=1), TINY.scaled(tie_embeddings=True)]


@pytest.fixture(params=CONFIGS, ids=["gqa", "gpt2", "mqa", "tied"])
def model(request):
    torch.manual_seed(0)
    return Decoder(request.param).eval()


def test_forward_runs_and_has_the_right_shape(model):
    tokens = torch.randint(0, model.cfg.vocab_size, (3, 11))
    logits = model(tokens)
    assert logits.shape == (3, 11, model.cfg.vocab_size)
    assert torch.isfinite(logits).all()


def test_causal_a_later_token_never_changes_earlier_logits(model):
    torch.manual_seed(1)
    tokens = torch.randint(0, model.cfg.vocab_size, (2, 12))
    changed = tokens.clone()
    changed[:, 7:] = (changed[:, 7:] + 1) % model.cfg.vocab_size
    a, b = model(tokens), model(changed)
    assert torch.equal(a[:, :7], b[:, :7])  # positions 0..6 cannot see positions 7..
    assert not torch.allclose(a[:, 7:], b[:, 7:])  # the test can fail: later ones do change


def test_decoding_with_the_cache_matches_the_full_forward(model):
    torch.manual_seed(2)
    tokens = torch.randint(0, model.cfg.vocab_size, (2, 10))
    full = model(tokens)
    cache = KVCache(model.cfg, batch=2, max_seq_len=10)
    steps = [model(tokens[:, :6], cache=cache)]
    for pos in range(6, 10):
        steps.append(model(tokens[:, pos:pos + 1], cache=cache, start_pos=pos))
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-5)


def test_generate_is_greedy_and_extends_the_prompt(model):
    torch.manual_seed(3)
    prompt = torch.randint(0, model.cfg.vocab_size, (2, 5))
    out = model.generate(prompt, 4)
    assert out.shape == (2, 9) and torch.equal(out[:, :5], prompt)
    expected = model(out[:, :-1])[:, 4:].argmax(-1)  # re-derive each choice without a cache
    assert torch.equal(out[:, 5:], expected)


def test_tied_head_shares_the_embedding_tensor():
    model = Decoder(TINY.scaled(tie_embeddings=True))
    assert model.head.weight is model.embed.weight


def test_rope_preserves_norms_and_is_relative():
    torch.manual_seed(4)
    cos, sin = rope_tables(16, 32)
    q, k = torch.randn(1, 1, 1, 16), torch.randn(1, 1, 1, 16)
    qr = apply_rope(q.expand(1, 1, 32, 16), cos, sin)
    torch.testing.assert_close(qr.norm(dim=-1), q.norm(dim=-1).expand(1, 1, 32))
    kr = apply_rope(k.expand(1, 1, 32, 16), cos, sin)
    dots = (qr[0, 0, :, None] * kr[0, 0, None, :]).sum(-1)  # q at i, k at j
    torch.testing.assert_close(dots[5, 3], dots[12, 10])  # depends on i - j only


def test_cache_refuses_to_overflow():
    cache = KVCache(TINY, batch=1, max_seq_len=4)
    model = Decoder(TINY)
    with pytest.raises(ValueError, match="the cache holds 4 positions"):
        model(torch.zeros(1, 5, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="exceed max_seq_len"):
        model(torch.zeros(1, TINY.max_seq_len + 1, dtype=torch.long))


def test_bf16_forward_runs():
    torch.manual_seed(5)
    model = Decoder(TINY).to(torch.bfloat16)
    logits = model(torch.randint(0, TINY.vocab_size, (1, 8)))
    assert logits.dtype == torch.bfloat16 and torch.isfinite(logits.float()).all()
