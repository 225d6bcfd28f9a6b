"""Attention in plain torch, the attention lab's two reference paths next to the Triton kernel.

* :func:`naive_attention`: ``torch.matmul``, (mask), ``torch.softmax``, ``torch.matmul``, with
  the ``N x N`` score and probability matrices written to memory (standard attention, Dao et
  al. 2022, Algorithm 0);
* :func:`sdpa_attention`: ``torch.nn.functional.scaled_dot_product_attention`` with the
  backend torch picks (not forced).

Neither imports Triton, so both run on any CPU.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> q, k, v = (torch.randn(1, 2, 8, 16, generator=g) for _ in range(3))
>>> bool(torch.allclose(naive_attention(q, k, v, causal=True),
...                     sdpa_attention(q, k, v, causal=True), atol=1e-5))
True
"""

from __future__ import annotations

import math

__all__ = ["naive_attention", "sdpa_attention"]


def naive_attention(q, k, v, *, causal: bool = False, mask=None):
    """Standard attention with the scores materialised: matmul, (mask), softmax, matmul.

    ``mask`` (optional) is a precomputed ``N x N`` boolean of the positions to hide.
    """
    import torch

    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        if mask is None:
            n = q.shape[-2]
            mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def sdpa_attention(q, k, v, *, causal: bool = False):
    """``torch.nn.functional.scaled_dot_product_attention`` with the backend torch chooses."""
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
