"""Tests of helpers.models.transformer: invariants, the PyTorch decoder as oracle, sources."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from helpers.models import transformer as tm
from helpers.nn import Decoder, KVCache

TINY = tm.LLAMA3_8B.scaled(name="tiny", n_layers=2, d_model=64, n_heads=8, n_kv_heads=2,
                           d_ff=96, vocab_size=101, max_seq_len=64)
TINY_GPT = tm.GPT2_SMALL.scaled(name="tiny-gpt", n_layers=2, d_model=48, n_heads=4,
                                n_kv_heads=4, d_ff=192, vocab_size=97, max_seq_len=32)


# --- limits and invariants --------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(layers=st.integers(1, 200))
def test_parameters_are_affine_in_layers(layers):
    """N(L) = N(0) + L x (per-layer count): each extra layer adds the same parameters."""
    n1 = tm.parameter_count(tm.LLAMA3_8B.scaled(n_layers=1))
    n2 = tm.parameter_count(tm.LLAMA3_8B.scaled(n_layers=2))
    per_layer = n2 - n1
    assert tm.parameter_count(tm.LLAMA3_8B.scaled(n_layers=layers)) == n1 + (layers - 1) * per_layer


def test_gqa_shrinks_only_k_and_v():
    mha = tm.parameter_counts(TINY.scaled(n_kv_heads=8))
    gqa = tm.parameter_counts(TINY)
    d, dh, L = TINY.d_model, TINY.head_dim, TINY.n_layers
    assert mha["attention"] - gqa["attention"] == L * 2 * d * (8 - 2) * dh
    assert mha["mlp"] == gqa["mlp"]


def test_tying_removes_exactly_the_head():
    untied, tied = tm.parameter_counts(TINY), tm.parameter_counts(TINY.scaled(tie_embeddings=True))
    assert untied["total"] - tied["total"] == TINY.vocab_size * TINY.d_model
    # the tied matrix still multiplies every token: FLOP do not change
    assert tm.matmul_parameter_count(TINY) == tm.matmul_parameter_count(
        TINY.scaled(tie_embeddings=True))


def test_kaplan_12_L_d_squared_for_the_standard_shape():
    """d_attn = d, d_ff = 4d, plain MLP, no biases: non-embedding N ~ 12 L d^2 (eq. 2.2)."""
    cfg = tm.TransformerConfig(name="kaplan", n_layers=24, d_model=1024, n_heads=16,
                               n_kv_heads=16, d_ff=4096, vocab_size=50257, max_seq_len=1024,
                               mlp="gelu")
    c = tm.parameter_counts(cfg)
    assert c["attention"] + c["mlp"] == 12 * 24 * 1024**2


@settings(max_examples=100, deadline=None)
@given(b=st.integers(0, 64), s=st.integers(0, 4096), k=st.integers(1, 5))
def test_kv_bytes_linear_in_batch_and_sequence(b, s, k):
    args = dict(n_layers=32, n_kv_heads=8, head_dim=128, bytes_per_element=2.0)
    one = tm.kv_cache_bytes(batch=1, seq_len=1, **args)
    assert tm.kv_cache_bytes(batch=b, seq_len=s, **args) == b * s * one
    assert tm.kv_cache_bytes(batch=k * b, seq_len=s, **args) == \
        k * tm.kv_cache_bytes(batch=b, seq_len=s, **args)


def test_int4_kv_cache_is_a_quarter_of_bf16():
    args = dict(batch=3, seq_len=100, n_layers=4, n_kv_heads=2, head_dim=64)
    assert tm.kv_cache_bytes(bytes_per_element=0.5, **args) * 4 == \
        tm.kv_cache_bytes(bytes_per_element=2.0, **args)
    assert tm.kv_cache_bytes(bytes_per_element=0.5, **args) > 0  # never 4 // 8 == 0


def test_per_token_flop_approaches_kaplan_average_for_long_prompts():
    """Averaged over a causal prompt, the attention term is 2 L S H d_h per token (Kaplan)."""
    S = 2048
    per_token = tm.prefill_flop(TINY, seq_len=S) / S
    kaplan = 2 * tm.matmul_parameter_count(TINY) + 2 * TINY.n_layers * S * TINY.n_heads * \
        TINY.head_dim
    assert per_token == pytest.approx(kaplan, rel=1 / S)


@settings(max_examples=100, deadline=None)
@given(t=st.integers(1, 100_000), d_in=st.integers(1, 20_000), d_out=st.integers(1, 20_000))
def test_intensity_limits(t, d_in, d_out):
    i = tm.matmul_intensity_flop_per_byte(n_tokens=t, d_in=d_in, d_out=d_out, bytes_per_element=2.0)
    # never above 2 min(T, d_in, d_out) / b_elem: each matrix is read at least once
    assert 0 < i <= min(t, d_in, d_out) * (1 + 1e-12)
    i2 = tm.matmul_intensity_flop_per_byte(n_tokens=t + 1, d_in=d_in, d_out=d_out,
                                           bytes_per_element=2.0)
    assert i2 > i  # more tokens in flight: more reuse of each weight byte


def test_weight_intensity_tends_to_2T_over_bytes():
    for t in (1, 4, 16):
        i = tm.forward_intensity_flop_per_byte(tm.LLAMA3_70B, n_tokens=t, bytes_per_element=1.0)
        assert i == pytest.approx(2 * t, rel=0.01)


def test_training_state_is_16_bytes_per_parameter_by_default():
    assert tm.training_state_bytes(1.0) == 16.0
    assert tm.training_state_bytes(10.0, moment_bytes_per_param=0.0) == 80.0


# --- independent oracles: the PyTorch decoder ------------------------------------------

@pytest.mark.parametrize("cfg", [tm.LLAMA2_7B, tm.LLAMA3_8B, tm.LLAMA3_70B, tm.GPT2_SMALL,
                                 TINY, TINY_GPT], ids=lambda c: c.name)
def test_parameter_count_matches_meta_device_model(cfg):
    with torch.device("meta"):
        model = Decoder(cfg)
    assert model.num_parameters() == tm.parameter_count(cfg)
    counts = tm.parameter_counts(cfg)
    attn = sum(p.numel() for blk in model.blocks for p in blk.attn.parameters())
    mlp = sum(p.numel() for blk in model.blocks for p in blk.mlp.parameters())
    assert (attn, mlp) == (counts["attention"], counts["mlp"])
    assert model.embed.weight.numel() == counts["embedding"]


@pytest.mark.parametrize("cfg", [TINY, TINY_GPT], ids=lambda c: c.name)
def test_prefill_flop_matches_torch_flop_counter(cfg):
    """The decoder computes the full S x S score matrix and masks it: skip_masked=False."""
    torch.manual_seed(0)
    model = Decoder(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (3, 17))
    with FlopCounterMode(display=False) as counter:
        model(tokens)
    assert counter.get_total_flops() == tm.prefill_flop(cfg, seq_len=17, batch=3,
                                                        skip_masked=False)


def test_decode_step_flop_matches_torch_flop_counter():
    torch.manual_seed(0)
    model = Decoder(TINY)
    tokens = torch.randint(0, TINY.vocab_size, (2, 12))
    cache = KVCache(TINY, batch=2, max_seq_len=16)
    model(tokens[:, :11], cache=cache)
    with FlopCounterMode(display=False) as counter:
        model(tokens[:, 11:], cache=cache, start_pos=11)
    assert counter.get_total_flops() == tm.decode_step_flop(TINY, context_len=12, batch=2)


@pytest.mark.parametrize("dtype, bpe", [(torch.float32, 4.0), (torch.bfloat16, 2.0),
                                        (torch.float8_e4m3fn, 1.0)])
def test_kv_bytes_match_an_allocated_cache(dtype, bpe):
    cache = KVCache(TINY, batch=3, max_seq_len=40, dtype=dtype)
    assert cache.nbytes == tm.kv_cache_bytes(batch=3, seq_len=40, n_layers=TINY.n_layers,
                                             n_kv_heads=TINY.n_kv_heads, head_dim=TINY.head_dim,
                                             bytes_per_element=bpe)


def test_training_state_matches_a_mixed_precision_adam_step():
    """bf16 weights and grads, fp32 master copy and Adam moments: sum the real nbytes."""
    torch.manual_seed(0)
    model = Decoder(TINY).to(torch.bfloat16)
    master = [p.detach().float().clone().requires_grad_(True) for p in model.parameters()]
    opt = torch.optim.Adam(master, lr=1e-3)
    tokens = torch.randint(0, TINY.vocab_size, (2, 8))
    loss = model(tokens).float().logsumexp(-1).mean()
    loss.backward()
    for m, p in zip(master, model.parameters()):
        m.grad = p.grad.float()
    opt.step()
    moments = sum(s["exp_avg"].nbytes + s["exp_avg_sq"].nbytes for s in opt.state.values())
    held = (sum(p.nbytes for p in model.parameters())
            + sum(p.grad.nbytes for p in model.parameters())
            + sum(m.nbytes for m in master) + moments)
    assert held == tm.training_state_bytes(model.num_parameters())


def test_matmul_intensity_matches_counted_flop_and_bytes():
    torch.manual_seed(0)
    layer = torch.nn.Linear(256, 384, bias=False).to(torch.bfloat16)
    x = torch.randn(10, 256, dtype=torch.bfloat16)
    with FlopCounterMode(display=False) as counter:
        y = layer(x)
    moved = layer.weight.nbytes + x.nbytes + y.nbytes
    assert counter.get_total_flops() / moved == pytest.approx(
        tm.matmul_intensity_flop_per_byte(n_tokens=10, d_in=256, d_out=384, bytes_per_element=2.0))


# --- published numbers ------------------------------------------------------------------

def test_llama_and_gpt2_published_sizes():
    """Llama-2-7B '6.74B' and Llama-3-8B '8.03B' (released checkpoints' sizes); GPT-2 '124M';
    Llama-3-70B '70.6B'."""
    assert round(tm.parameter_count(tm.LLAMA2_7B) / 1e9, 2) == 6.74
    assert round(tm.parameter_count(tm.LLAMA3_8B) / 1e9, 2) == 8.03
    assert round(tm.parameter_count(tm.LLAMA3_70B) / 1e9, 1) == 70.6
    assert round(tm.parameter_count(tm.GPT2_SMALL) / 1e6) == 124


def test_llama_d_ff_from_the_published_rule():
    """Touvron et al. (2023a) section 2: SwiGLU width 2/3 x 4d, rounded up to a multiple of
    256 (Llama 2 7B); Llama 3 multiplies by 1.3 and rounds to 1024 (released code)."""
    def ffn(d, multiple_of, multiplier=1.0):
        hidden = int(multiplier * int(2 * 4 * d / 3))
        return multiple_of * math.ceil(hidden / multiple_of)
    assert ffn(4096, 256) == tm.LLAMA2_7B.d_ff
    assert ffn(4096, 1024, 1.3) == tm.LLAMA3_8B.d_ff
    assert ffn(8192, 4096, 1.3) == tm.LLAMA3_70B.d_ff


def test_vllm_kv_cache_per_token_of_opt_13b():
    """Kwon et al. (2023) section 3: 2 x 5120 x 40 x 2 bytes = 800 KB per token, and up to
    1.6 GB for a 2048-token request."""
    per_token = tm.kv_cache_bytes(batch=1, seq_len=1, n_layers=40, n_kv_heads=40, head_dim=128,
                                  bytes_per_element=2.0)
    assert per_token == 800 * 1024
    assert round(per_token * 2048 / 1e9, 1) == 1.7 and round(per_token * 2048 / 2**30, 1) == 1.6


def test_llama2_7b_kv_cache_is_half_a_megabyte_per_token():
    assert tm.kv_cache_bytes_per_token(tm.LLAMA2_7B, 2.0) == 0.5 * 2**20


def test_zero_16_bytes_per_parameter_and_24_gb_for_gpt2_xl():
    """Rajbhandari et al. (2020) section 3.1: 16 Psi bytes; 24 GB for 1.5B parameters; and
    figure 1's 120 GB for 7.5B parameters."""
    assert tm.training_state_bytes(1.5e9) == 24e9
    assert tm.training_state_bytes(7.5e9) == 120e9


def test_llama3_405b_training_compute():
    """Dubey et al. (2024) section 1: 405B parameters, 15.6T tokens, 3.8e25 FLOP."""
    assert f"{tm.training_flop(405e9, 15.6e12):.2g}" == "3.8e+25"


def test_gpt3_training_compute_of_kaplan_6N():
    """Brown et al. (2020) table D.1: GPT-3 175B on 300B tokens, 3.14e23 FLOP."""
    assert tm.training_flop(174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_tpu_v5e_critical_batch_of_the_scaling_book():
    """Austin et al. (2025), part 1: bf16 matmuls on a TPU v5e (1.97e14 FLOP/s, 8.2e11 B/s)
    are compute-bound above about 240 tokens."""
    ridge = 1.97e14 / 8.2e11
    big = dict(d_in=16384, d_out=16384, bytes_per_element=2.0)
    assert tm.matmul_intensity_flop_per_byte(n_tokens=230, **big) < ridge
    assert tm.matmul_intensity_flop_per_byte(n_tokens=260, **big) > ridge


# --- errors -----------------------------------------------------------------------------

def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="n_heads .* multiple of n_kv_heads"):
        tm.LLAMA3_8B.scaled(n_kv_heads=3)
    with pytest.raises(ValueError, match="mlp must be one of"):
        tm.LLAMA3_8B.scaled(mlp="relu")
    with pytest.raises(ValueError, match="n_layers must be an integer >= 1"):
        tm.LLAMA3_8B.scaled(n_layers=0)
    with pytest.raises(ValueError, match="batch must be an integer >= 0, got -1"):
        tm.kv_cache_bytes(batch=-1, seq_len=1, n_layers=1, n_kv_heads=1, head_dim=1,
                          bytes_per_element=2.0)
    with pytest.raises(ValueError, match=r"bytes_per_element must be a finite number in \(0, inf\)"):
        tm.kv_cache_bytes(batch=1, seq_len=1, n_layers=1, n_kv_heads=1, head_dim=1,
                          bytes_per_element=0)
    with pytest.raises(ValueError, match="n_params must be a finite number"):
        tm.training_flop(float("nan"), 1e9)
    with pytest.raises(ValueError, match="context_len must be an integer >= 1"):
        tm.forward_flop_per_token(TINY, 0)
    with pytest.raises(ValueError, match="n_tokens must be an integer >= 1"):
        tm.matmul_intensity_flop_per_byte(n_tokens=0, d_in=4, d_out=4, bytes_per_element=2.0)
    with pytest.raises(ValueError, match="kv_bytes_per_element"):
        tm.decode_attention_intensity_flop_per_byte(TINY, kv_bytes_per_element=-1)
