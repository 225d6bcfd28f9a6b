"""Weight-only quantization of the book's decoder: what changes, what does not, what it costs."""

import torch

from helpers.models import quantization as quant
from helpers.nn import quantize as nq
from helpers.nn import tinylm


def test_quantize_linears_rounds_block_weights_only():
    model = tinylm.load("book-draft")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    q = nq.quantize_linears(model, "group", bits=4, group_size=32)
    # the original is untouched; the embedding (tied head) and norms are kept
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert torch.equal(q.embed.weight, model.embed.weight)
    assert torch.equal(q.blocks[0].attn_norm.weight, model.blocks[0].attn_norm.weight)
    ws = nq.linear_weights(q)
    assert len(ws) == 7 * model.cfg.n_layers
    for name, w in ws.items():
        orig = nq.linear_weights(model)[name]
        s = quant.absmax_scales(orig, "group", bits=4, group_size=32)
        codes = w.reshape(w.shape[0], -1, 32) / s[..., None]
        assert torch.allclose(codes, codes.round(), atol=1e-3)  # on the grid
        assert (w - orig).abs().max() <= s.max() / 2 * 1.0001


def test_finer_scales_cost_fewer_bits_per_byte():
    model = tinylm.load("book-draft")
    _, val = tinylm.split(tinylm.corpus_bytes())
    base = nq.bits_per_byte(model, val, max_windows=2)
    t4 = nq.bits_per_byte(nq.quantize_linears(model, "tensor", bits=4), val, max_windows=2)
    g4 = nq.bits_per_byte(nq.quantize_linears(model, "group", bits=4, group_size=32), val,
                          max_windows=2)
    assert base < g4 < t4
