"""Triton kernel of the quantization lab: one decode step of attention over a KV cache stored
in bf16 or in FP8 (E4M3, one scale per tensor for K and one for V).

:func:`decode_attention_kernel` computes, for one query vector per (sequence, head),
``o = softmax(q K^T / sqrt(d)) V`` over the ``S`` cached keys and values of that head, looping
over the cache in blocks of ``BLOCK_N`` rows with the online softmax (running maximum ``m``,
running sum ``l``, fp32 accumulator). Each cached element is loaded in its storage dtype and
widened to fp32 in registers; FP8 codes are multiplied by their tensor's step (amax / 448,
:func:`helpers.models.quantization.fp8_step`), folded into the score and into the output.
The same code runs for both dtypes, so a step's time differs only by the bytes it reads:
a decode step is bound by streaming the cache from HBM, and FP8 halves it.

One program per (sequence, head): no split of the context across programs (at the lab's batch
of sequences there are enough programs to fill the GPU).

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> q = torch.randn(3, 16, generator=g)
>>> k, v = (torch.randn(3, 37, 16, generator=g) for _ in range(2))
>>> o = decode_attention(q, k, v, block_n=16)
>>> bool(torch.allclose(o.double(), decode_attention_reference(q, k, v), atol=1e-5))
True

:mod:`helpers.labs.quantization.fp8` runs it (labs/quantization.md shows the results).

Library only: no page imports it.
"""

from __future__ import annotations

import math

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["decode_attention_kernel", "decode_attention", "decode_attention_reference",
           "INTERPRETED"]


@triton.jit
def decode_attention_kernel(Q, K, V, O, qk_scale, v_scale, S, D: tl.constexpr,
                            BLOCK_N: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + pid * D + offs_d).to(tl.float32) * qk_scale   # sm scale, K's step, log2 e
    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.zeros([1], tl.float32)
    acc = tl.zeros([D], tl.float32)
    base = pid * S * D
    for start in range(0, S, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        valid = offs_n < S
        ptrs = base + offs_n[:, None] * D + offs_d[None, :]
        k = tl.load(K + ptrs, mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.where(valid, tl.sum(k * q[None, :], axis=1), float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        v = tl.load(V + ptrs, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
    tl.store(O + pid * D + offs_d, (acc * v_scale / l_i).to(O.dtype.element_ty))


def decode_attention(q, k, v, *, k_step: float = 1.0, v_step: float = 1.0, out=None,
                     block_n: int = 64, num_warps: int = 4):
    """One decode step: ``q`` ``(..., d)``, ``k`` and ``v`` ``(..., S, d)`` (any of fp32, bf16,
    fp16, float8_e4m3fn; made contiguous), the stored K and V multiplied back by ``k_step`` and
    ``v_step`` (1 for a 16-bit cache). Returns ``(..., d)`` in ``q``'s dtype (written into
    ``out`` if given). ``d`` and ``block_n`` are powers of two of at least 16."""
    import torch

    if k.shape != v.shape or k.dim() < 2 or q.shape != k.shape[:-2] + k.shape[-1:]:
        raise ValueError(f"q must be (..., d) and k, v (..., S, d) of one shape, got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    s, d = k.shape[-2], k.shape[-1]
    if d < 16 or d & (d - 1):
        raise ValueError(f"head dimension must be a power of two >= 16, got {d}")
    if block_n < 16 or block_n & (block_n - 1):
        raise ValueError(f"block_n must be a power of two >= 16, got {block_n}")
    if s < 1:
        raise ValueError(f"the cache must hold at least one token, got S = {s}")
    for name, x in (("k_step", k_step), ("v_step", v_step)):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {x!r}")
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    if out is None:
        out = torch.empty_like(q)
    elif (out.shape != q.shape or out.dtype != q.dtype or out.device != q.device
          or not out.is_contiguous()):
        raise ValueError(f"out must be a contiguous tensor of q's shape {tuple(q.shape)}, dtype "
                         f"{q.dtype} and device {q.device}, got {tuple(out.shape)}, {out.dtype}, "
                         f"{out.device}")
    scale = float(k_step) / math.sqrt(d) * 1.4426950408889634   # exp2 of log2(e) * score
    extra = {} if INTERPRETED else {"num_warps": num_warps}
    grid = (q.numel() // d,)
    decode_attention_kernel[grid](q, k, v, out, scale, float(v_step), s, D=d, BLOCK_N=block_n,
                                  **extra)
    return out


def decode_attention_reference(q, k, v, *, k_step: float = 1.0, v_step: float = 1.0):
    """Float64 softmax attention of one query per head over ``k``, ``v`` (as stored, times
    their steps), on the CPU."""
    q, k, v = (x.double().cpu() for x in (q, k, v))
    k, v = k * k_step, v * v_step
    w = ((k @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(q.shape[-1])).softmax(-1)
    return (w.unsqueeze(-2) @ v).squeeze(-2)
