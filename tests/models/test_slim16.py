"""Models moved out of lab runners by issue 16 (brief slim16): limits, an independent oracle
and a published number for each.

* :func:`helpers.models.decode_bandwidth.config_decode_step_bytes` and
  :func:`~helpers.models.decode_bandwidth.config_kv_cache_bytes` (from the decode lab);
* :func:`helpers.models.quantization.weight_only_matmul_bytes` (from the quantization lab).
"""

import pytest
import torch

from helpers.models import decode_bandwidth as dbw
from helpers.models import quantization as qz
from helpers.models import transformer as tf
from helpers.nn.decoder import Decoder, KVCache
from helpers.nn.tinylm import BOOK_LM

#: A small grouped-query shape (3 query heads per key/value head) for the oracles.
SMALL = tf.TransformerConfig(name="slim16-small", n_layers=2, d_model=96, n_heads=6,
                             n_kv_heads=2, d_ff=160, vocab_size=300, max_seq_len=128)


def test_decode_bytes_limits_and_linearity():
    cfg = tf.LLAMA3_8B
    w = tf.weight_bytes(tf.matmul_parameter_count(cfg), 2)
    assert dbw.config_decode_step_bytes(cfg, 1, 0, 2) == w  # no context: the weights alone
    assert dbw.config_decode_step_bytes(cfg, 7, 0, 2) == w  # ... whatever the batch: read once
    per_token = tf.kv_cache_bytes_per_token(cfg, 2)
    for b, s in ((1, 1), (3, 100), (256, 4096)):
        assert dbw.config_decode_step_bytes(cfg, b, s, 2) == pytest.approx(
            w + b * s * per_token, rel=1e-12)
    # twice the batch adds exactly one more batch's KV cache
    step = dbw.config_decode_step_bytes
    assert step(cfg, 8, 512, 2) - step(cfg, 4, 512, 2) == pytest.approx(4 * 512 * per_token)


def test_decode_bytes_against_the_tensors_of_a_real_decoder():
    """Oracle: the bytes of the Linear weights of an actual module and of an allocated cache."""
    cfg = SMALL
    model = Decoder(cfg).to(torch.bfloat16)
    linear = sum(m.weight.nbytes for m in model.modules() if isinstance(m, torch.nn.Linear))
    cache = KVCache(cfg, batch=3, max_seq_len=50, dtype=torch.bfloat16)
    assert dbw.config_decode_step_bytes(cfg, 3, 50, 2) == linear + cache.nbytes


def test_published_weight_bytes_of_llama2_7b():
    """Agarwal et al. (2023), Databricks, "Model Bandwidth Utilization": a 7B model in 16-bit
    reads about 14 GB per step; Llama-2-7B's matrices are 6.6 billion (13.2 GB in bf16) since the
    embedding table is gathered, not read whole."""
    w = dbw.config_decode_step_bytes(tf.LLAMA2_7B, 1, 0, 2)
    assert 13e9 < w < 14e9
    assert tf.weight_bytes(tf.parameter_count(tf.LLAMA2_7B), 2) == pytest.approx(13.5e9, rel=0.01)


@pytest.mark.parametrize("bad", [dict(batch=0), dict(batch=1.5), dict(context_len=-1)])
def test_decode_bytes_rejects_bad_input(bad):
    args = dict(batch=2, context_len=10) | bad
    with pytest.raises(ValueError):
        dbw.config_decode_step_bytes(BOOK_LM, args["batch"], args["context_len"], 2)


@pytest.mark.parametrize("batch, context, dtype", [(1, 1, torch.float32), (3, 50, torch.bfloat16),
                                                   (5, 128, torch.float16)])
def test_kv_cache_bytes_against_an_allocated_cache(batch, context, dtype):
    """Oracle: the ``nbytes`` of a real :class:`KVCache`; zero context holds nothing."""
    cache = KVCache(SMALL, batch=batch, max_seq_len=context, dtype=dtype)
    esize = torch.finfo(dtype).bits // 8
    assert dbw.config_kv_cache_bytes(SMALL, batch=batch, context_len=context,
                                     bytes_per_element=esize) == cache.nbytes
    assert dbw.config_kv_cache_bytes(SMALL, batch=batch, context_len=0,
                                     bytes_per_element=esize) == 0


def test_published_kv_cache_of_opt_13b():
    """Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with
    PagedAttention" (vLLM), section 3: one token of OPT-13B's KV cache takes 800 KB,
    2 (key and value) x 5120 (hidden size) x 40 (layers) x 2 (fp16 bytes); a context of 2048
    tokens (OPT's longest) is 1.6 GB."""
    opt13b = tf.TransformerConfig(name="opt-13b", n_layers=40, d_model=5120, n_heads=40,
                                  n_kv_heads=40, d_ff=20480, vocab_size=50272, max_seq_len=2048)
    one = dbw.config_kv_cache_bytes(opt13b, batch=1, context_len=1, bytes_per_element=2)
    assert one == 2 * 5120 * 40 * 2 == 800 * 1024
    full = dbw.config_kv_cache_bytes(opt13b, batch=1, context_len=2048, bytes_per_element=2)
    assert full == pytest.approx(1.6e9, rel=0.05)


@pytest.mark.parametrize("bad", [dict(cfg=None), dict(bytes_per_element=0.0),
                                 dict(context_len=-1)])
def test_kv_cache_bytes_rejects_bad_input(bad):
    args = dict(cfg=BOOK_LM, batch=2, context_len=10, bytes_per_element=2.0) | bad
    cfg = args.pop("cfg")
    with pytest.raises(ValueError):
        dbw.config_kv_cache_bytes(cfg, **args)


def test_weight_only_bytes():
    n = k = 8192
    dense = qz.weight_only_matmul_bytes(1, n, k, weight_bits=16)
    int8 = qz.weight_only_matmul_bytes(1, n, k, weight_bits=8)
    assert dense == 2 * n * k + 2 * (k + n)
    # oracle: codes, one fp16 scale per row, x and y in bf16, counted by hand
    assert int8 == n * k + 2 * n + 2 * (k + n)
    assert 1.99 < dense / int8 < 2.0
    assert qz.weight_only_matmul_bytes(1, n, k, weight_bits=4, group_size=32) == pytest.approx(
        qz.quantized_weight_bytes(n * k, 4, group_size=32) + 2 * (k + n))
    with pytest.raises(ValueError, match="m must be an integer"):
        qz.weight_only_matmul_bytes(0, n, k, weight_bits=8)
    with pytest.raises(ValueError, match="act_bytes"):
        qz.weight_only_matmul_bytes(1, n, k, weight_bits=8, act_bytes=0)


def test_weight_only_bytes_limits():
    """Limits: the weights dominate at M = 1 and the activations grow linearly in M; a 32-bit
    dense matrix is twice a 16-bit one; int4 with one scale per row is half of int8's codes plus
    the same scales."""
    n, k = 4096, 1024
    f = qz.weight_only_matmul_bytes
    assert f(3, n, k, weight_bits=8) - f(2, n, k, weight_bits=8) == 2 * (k + n)
    assert f(1, n, k, weight_bits=32, act_bytes=4) - 4 * (k + n) == 2 * (
        f(1, n, k, weight_bits=16) - 2 * (k + n))
    codes8 = f(1, n, k, weight_bits=8) - 2 * n - 2 * (k + n)
    codes4 = f(1, n, k, weight_bits=4) - 2 * n - 2 * (k + n)
    assert codes4 == codes8 / 2 == n * k / 2


def test_weight_only_bytes_of_llama_cpp_q4_0():
    """llama.cpp's ``block_q4_0`` (ggml-common.h): 32 4-bit codes and one fp16 scale, 18 bytes,
    4.5 bits per weight; one 4096 x 4096 matrix in it is 4096 * 4096 / 32 blocks of 18 bytes."""
    n = k = 4096
    w = qz.weight_only_matmul_bytes(1, n, k, weight_bits=4, group_size=32, act_bytes=2)
    assert w - 2 * (k + n) == n * k // 32 * 18
