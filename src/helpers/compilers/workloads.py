"""The functions lesson 12 compiles: Llama's RMSNorm written out, and a draft with a graph break.

* :func:`rms_norm`: ``x * rsqrt(mean(x**2) + eps) * w``, six tensor operations (six kernels in
  eager mode), which TorchInductor fuses into one.
* :func:`rms_norm_skip`: the same with a shortcut taken when the rows are already normalized,
  decided in Python from a tensor's value (``.item()``): a graph break.
* :func:`rms_norm_where`: the fix, the decision kept in the graph with ``torch.where``.

>>> import torch
>>> x, w = torch.randn(4, 8), torch.randn(8)
>>> bool(torch.allclose(rms_norm_skip(x, w), rms_norm_where(x, w)))
True

Used by: chapters/ml-compilers.md.
"""

from __future__ import annotations

import torch

__all__ = ["rms_norm", "rms_norm_skip", "rms_norm_where"]


def rms_norm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rms_norm_skip(x, w, eps=1e-6):
    ms = x.pow(2).mean(-1, keepdim=True)
    if (ms - 1).abs().max().item() < 1e-3:  # already normalized: skip the division
        return x * w
    return x * torch.rsqrt(ms + eps) * w


def rms_norm_where(x, w, eps=1e-6):
    ms = x.pow(2).mean(-1, keepdim=True)
    skip = (ms - 1).abs().amax() < 1e-3
    return x * torch.where(skip, torch.ones_like(ms), torch.rsqrt(ms + eps)) * w
