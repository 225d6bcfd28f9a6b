"""Decoders for timing decode steps: attention that reads each key/value head once, and a builder.

The book's :class:`~helpers.nn.decoder.Attention` serves grouped-query attention by copying each
key/value head once per query head that shares it (``repeat_interleave``), which multiplies the
KV-cache bytes a decode step moves by the group size. :class:`ReadOnceAttention` stacks the
query heads of a group instead, so each key/value head is multiplied in place and the cache is
read once per step, as :func:`helpers.models.decode_bandwidth.decode_step_bytes` assumes (and as
serving kernels such as FlashAttention's or vLLM's PagedAttention do). :func:`read_once` switches a
model to it in place and :func:`stock_attention` switches it back for a block of code;
:func:`build_model` makes a :class:`~helpers.nn.decoder.Decoder` of any
:class:`~helpers.models.transformer.TransformerConfig`. The decode lab
(:mod:`helpers.labs.decode`) times them.

>>> import torch
>>> from helpers.models.transformer import TransformerConfig
>>> cfg = TransformerConfig(name="t", n_layers=1, d_model=32, n_heads=4, n_kv_heads=2, d_ff=48,
...                         vocab_size=40, max_seq_len=16)
>>> m = build_model(cfg, "cpu", torch.float64)
>>> x = torch.arange(6).view(1, 6)
>>> stock = m(x)
>>> bool(torch.allclose(read_once(m)(x), stock)), type(m.blocks[0].attn).__name__
(True, 'ReadOnceAttention')
>>> with stock_attention(m):
...     type(m.blocks[0].attn).__name__
'Attention'

Library only: no page imports it.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from helpers.nn.decoder import Attention, Decoder, apply_rope, rope_tables

__all__ = ["ReadOnceAttention", "read_once", "stock_attention", "build_model"]


class ReadOnceAttention(Attention):
    """The book's attention, with the query heads of a group stacked so that each key/value head
    is multiplied in place, never copied once per query head (``repeat_interleave``)."""

    def forward(self, x, cos, sin, start_pos, cache, layer):
        B, T, _ = x.shape
        hkv, g, dh = self.n_kv_heads, self.n_heads // self.n_kv_heads, self.head_dim
        q = self.wq(x).view(B, T, self.n_heads, dh).transpose(1, 2)
        k = self.wk(x).view(B, T, hkv, dh).transpose(1, 2)
        v = self.wv(x).view(B, T, hkv, dh).transpose(1, 2)
        if self.rope:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.update(layer, start_pos, k, v)
        S = k.shape[2]
        # query head h = j * g + i uses key/value head j: its rows (i, t) are stacked in group j
        q = q.reshape(B, hkv, g * T, dh)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dh)  # (B, Hkv, g*T, S)
        query_pos = torch.arange(start_pos, start_pos + T, device=x.device).repeat(g)[:, None]
        key_pos = torch.arange(S, device=x.device)[None, :]
        scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        out = (probs @ v).view(B, hkv, g, T, dh).permute(0, 3, 1, 2, 4)
        return self.wo(out.reshape(B, T, self.n_heads * dh))


def read_once(model):
    """Switch every attention module of ``model`` (a :class:`helpers.nn.decoder.Decoder`) to
    :class:`ReadOnceAttention` in place (same weights); return the model."""
    for block in model.blocks:
        block.attn.__class__ = ReadOnceAttention
    return model


@contextmanager
def stock_attention(model):
    """Within the block, every attention module of ``model`` is the book's
    :class:`~helpers.nn.decoder.Attention` (same weights); each gets its own class back after."""
    classes = [blk.attn.__class__ for blk in model.blocks]
    for blk in model.blocks:
        blk.attn.__class__ = Attention
    try:
        yield model
    finally:
        for blk, c in zip(model.blocks, classes):
            blk.attn.__class__ = c


def build_model(cfg, device: str, dtype):
    """A :class:`~helpers.nn.decoder.Decoder` of ``cfg`` in eval mode on ``device`` in ``dtype``:
    ``book-lm`` with its trained weights, any other shape with random ones (decode speed does not
    depend on the values). The rotary tables stay in float32."""

    from helpers.nn import tinylm

    if cfg.name in tinylm.MODELS:
        model = tinylm.load(cfg.name, device=device, dtype=dtype)
    else:
        torch.manual_seed(0)
        with torch.device(device):
            model = Decoder(cfg)
        model = model.to(dtype=dtype).eval()
    cos, sin = rope_tables(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta, device=device)
    model.rope_cos, model.rope_sin = cos, sin
    return model
