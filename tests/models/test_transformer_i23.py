"""Issue 23: forward FLOP per token from the parameter count alone (2N)."""

import pytest

from helpers.models import transformer as tf


def test_published_gpt3_training_compute():
    # Brown et al. (2020) table D.1: GPT-3 175B, 174,600M parameters, 300B tokens, 3.14E+23
    # FLOP of training compute: three forward passes' worth (2N each) per token.
    c = 3 * tf.forward_flop_per_token_from_params(174.6e9) * 300e9
    assert f"{c:.3g}" == "3.14e+23"
    assert c == pytest.approx(tf.training_flop(174.6e9, 300e9))


@pytest.mark.parametrize("cfg", [tf.LLAMA2_7B, tf.LLAMA3_8B, tf.LLAMA3_70B])
def test_2n_brackets_the_full_config_count(cfg):
    # the full count uses matmul parameters (no embedding lookup) plus attention: 2N from all
    # parameters overstates the short-context cost by the embedding table, and the attention
    # term overtakes it as the context grows
    n, n_mm = tf.parameter_count(cfg), tf.matmul_parameter_count(cfg)
    short = tf.forward_flop_per_token(cfg, 1)
    attention = 4 * cfg.n_layers * cfg.n_heads * cfg.head_dim
    assert short - attention == 2 * n_mm
    assert short < tf.forward_flop_per_token_from_params(n)
    embed = n - n_mm
    assert tf.forward_flop_per_token_from_params(n) - (short - attention) == 2 * embed
    # Kaplan's condition: with a context well under 12 d the attention term is a few per cent
    ctx = cfg.d_model // 4
    full = tf.forward_flop_per_token(cfg, ctx)
    assert full / tf.forward_flop_per_token_from_params(n_mm) - 1 < 0.1


def test_oracle_counting_a_torch_linear():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode
    layer = torch.nn.Linear(256, 512, bias=False)
    x = torch.randn(7, 256)
    with FlopCounterMode(display=False) as counter:
        layer(x)
    n = sum(p.numel() for p in layer.parameters())
    assert counter.get_total_flops() == 7 * tf.forward_flop_per_token_from_params(n)


def test_bad_input():
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="n_params"):
            tf.forward_flop_per_token_from_params(bad)
