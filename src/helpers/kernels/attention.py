"""Triton kernel of the attention lab: a fused attention forward pass (FlashAttention-2 style).

:func:`attention_fwd_kernel` computes ``O = softmax(Q K^T * scale) V`` for one block of
``BLOCK_M`` query rows of one (batch, head) per program, looping over the keys and values in
blocks of ``BLOCK_N``. The ``N x N`` score matrix never leaves the chip: each block of scores
lives in registers only long enough to update three running quantities per query row,

* ``m``: the largest score seen so far (the running maximum),
* ``l``: the sum of ``exp(s - m)`` over the scores seen so far,
* ``acc``: the sum of ``exp(s - m) v`` over the values seen so far (fp32),

with ``l`` and ``acc`` rescaled by ``exp(m_old - m_new)`` whenever the maximum grows (the
online softmax of Milakov and Gimelshein, used this way by FlashAttention). After the last block
``O = acc / l``. Inputs and output are bf16 (or fp16/fp32), contiguous ``(B*H, N, d)``; the
scores and accumulators are fp32. Causal masking skips key blocks wholly above the diagonal
and masks only the blocks that straddle it. Grouped-query attention (Ainslie et al. 2023) maps
each query head to its K/V head by index (``GROUP`` query heads per K/V head), so K and V are
not copied per query head.

With no usable CUDA GPU, Triton runs through its interpreter (set by :mod:`helpers.kernels`
before ``triton`` is imported), which is slow: keep the sizes tiny there.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> q, k, v = (torch.randn(2, 40, 16, generator=g) for _ in range(3))
>>> o = attention(q, k, v, causal=True, block_m=16, block_n=16)
>>> bool(torch.allclose(o.double(), attention_reference(q, k, v, causal=True), atol=1e-4))
True

Used by: labs/attention.md.
"""

from __future__ import annotations

import math

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


__all__ = ["attention_fwd_kernel", "attention", "attention_reference", "default_config",
           "HEAD_DIMS", "INTERPRETED"]

#: Head dimensions the kernel is written for (``tl.arange`` needs a power of two >= 16).
HEAD_DIMS = (16, 32, 64, 128)


def default_config(head_dim: int) -> dict:
    """Launch configuration known to work well on Hopper for ``head_dim`` (64 or 128).

    BLOCK_M 128, BLOCK_N 64, 8 warps; 3 pipeline stages at ``d = 128`` and 4 at ``d = 64``
    (the settings of Triton's fused-attention tutorial for this GPU generation).
    """
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim!r}")
    return {"block_m": 128, "block_n": 64, "num_warps": 8,
            "num_stages": 3 if head_dim >= 128 else 4}


@triton.jit
def _update(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, N_CTX, qk_scale,
            HEAD_DIM: tl.constexpr, MASK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr):
    """One key/value block: scores, new running max, rescale, accumulate (online softmax)."""
    cols = start_n + offs_n
    if MASK_N:
        k = tl.load(k_ptrs + start_n * HEAD_DIM, mask=cols[None, :] < N_CTX, other=0.0)
    else:
        k = tl.load(k_ptrs + start_n * HEAD_DIM)
    s = tl.dot(q, k) * qk_scale  # (BLOCK_M, BLOCK_N) scores, base-2 exponent units
    if MASK_N:
        s = tl.where(cols[None, :] < N_CTX, s, float("-inf"))
    if CAUSAL_MASK:
        s = tl.where(offs_m[:, None] >= cols[None, :], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    p = tl.math.exp2(s - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)  # rescales what was summed under the old maximum
    l_i = l_i * alpha + tl.sum(p, 1)
    if MASK_N:
        v = tl.load(v_ptrs + start_n * HEAD_DIM, mask=cols[:, None] < N_CTX, other=0.0)
    else:
        v = tl.load(v_ptrs + start_n * HEAD_DIM)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, m_new, l_i


@triton.jit
def attention_fwd_kernel(Q, K, V, O, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                         GROUP: tl.constexpr = 1):
    """Program ``(i, bh)``: rows ``i*BLOCK_M ...`` of head ``bh`` of contiguous ``(BH, N, d)``.

    Grouped-query attention: ``GROUP`` query heads share one K/V head, and K, V are
    ``(BH / GROUP, N, d)``. Query head ``bh = b H + h`` reads K/V head ``b H_kv + h // GROUP``,
    which is ``bh // GROUP`` because ``H = H_kv GROUP``."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N_CTX * HEAD_DIM
    kv_base = (bh // GROUP) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
                mask=offs_m[:, None] < N_CTX, other=0.0)
    k_ptrs = K + kv_base + offs_n[None, :] * HEAD_DIM + offs_d[:, None]  # K^T (d, BLOCK_N)
    v_ptrs = V + kv_base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]  # V (BLOCK_N, d)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x log2 e)
    if CAUSAL:
        # blocks wholly below the diagonal need no mask; the ones on it need the causal mask
        lo = start_m * BLOCK_M
        for start_n in range(0, lo, BLOCK_N):
            acc, m_i, l_i = _update(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n,
                                    N_CTX, qk_scale, HEAD_DIM, False, False)
        hi = tl.minimum(lo + BLOCK_M, N_CTX)
        for start_n in range(lo, hi, BLOCK_N):
            acc, m_i, l_i = _update(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n,
                                    N_CTX, qk_scale, HEAD_DIM, True, True)
    else:
        full = (N_CTX // BLOCK_N) * BLOCK_N
        for start_n in range(0, full, BLOCK_N):
            acc, m_i, l_i = _update(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n,
                                    N_CTX, qk_scale, HEAD_DIM, False, False)
        for start_n in range(full, N_CTX, BLOCK_N):  # the last, partial block (if any)
            acc, m_i, l_i = _update(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n,
                                    N_CTX, qk_scale, HEAD_DIM, True, False)
    out = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=offs_m[:, None] < N_CTX)


def _check(q, k, v) -> tuple[int, int, int, int]:
    """(query heads in all, sequence length, head dimension, query heads per K/V head)."""
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape, got {tuple(k.shape)}, {tuple(v.shape)}")
    if q.dim() < 2:
        raise ValueError("q, k, v must be (..., N, d)")
    group = 1
    if q.shape != k.shape:
        # grouped-query attention: (B, H, N, d) queries, (B, H_kv, N, d) keys and values
        if (q.dim() != 4 or k.dim() != 4 or q.shape[0] != k.shape[0]
                or q.shape[2:] != k.shape[2:] or k.shape[1] < 1 or q.shape[1] % k.shape[1]):
            raise ValueError(f"q, k, v must have one shape, or be (B, H, N, d) and "
                             f"(B, H_kv, N, d) with H a multiple of H_kv; got {tuple(q.shape)}, "
                             f"{tuple(k.shape)}, {tuple(v.shape)}")
        group = q.shape[1] // k.shape[1]
    if q.dtype != k.dtype or q.dtype != v.dtype or q.device != k.device or q.device != v.device:
        raise ValueError("q, k, v must share dtype and device")
    n, d = q.shape[-2], q.shape[-1]
    if d not in HEAD_DIMS:
        raise ValueError(f"head dimension must be one of {HEAD_DIMS}, got {d}")
    if n < 1:
        raise ValueError("sequence length must be >= 1")
    bh = q.numel() // (n * d)
    return bh, n, d, group


def attention(q, k, v, *, causal: bool = False, sm_scale: float | None = None, out=None,
              block_m: int | None = None, block_n: int | None = None,
              num_warps: int | None = None, num_stages: int | None = None, kernel=None):
    """Fused attention forward of ``(..., N, d)`` tensors with :func:`attention_fwd_kernel`.

    ``kernel`` replaces the book's kernel by another with the same signature (the lab's
    grader uses it). Grouped-query attention: ``q`` ``(B, H, N, d)`` with ``k``, ``v``
    ``(B, H_kv, N, d)``, ``H`` a multiple of ``H_kv``. Unset launch settings come from :func:`default_config`; ``block_m`` must
    be a multiple of ``block_n`` for the causal split.
    """
    import torch

    bh, n, d, group = _check(q, k, v)
    cfg = default_config(d)
    block_m = block_m or cfg["block_m"]
    block_n = block_n or cfg["block_n"]
    for name, b in (("block_m", block_m), ("block_n", block_n)):
        if b < 16 or b & (b - 1):
            raise ValueError(f"{name} must be a power of two >= 16, got {b}")
    if causal and block_m % block_n:
        raise ValueError("block_m must be a multiple of block_n for causal attention")
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = torch.empty_like(q) if out is None else out
    if out.shape != q.shape or out.dtype != q.dtype or not out.is_contiguous():
        raise ValueError("out must be a contiguous tensor of q's shape and dtype")
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    extra = {} if INTERPRETED else {"num_warps": num_warps or cfg["num_warps"],
                                    "num_stages": num_stages or cfg["num_stages"]}
    grid = (triton.cdiv(n, block_m), bh)
    if group > 1:  # only then: a reader's kernel without GQA still runs the plain case
        extra["GROUP"] = group
    (kernel or attention_fwd_kernel)[grid](q, k, v, out, scale, n, HEAD_DIM=d, BLOCK_M=block_m,
                                           BLOCK_N=block_n, CAUSAL=bool(causal), **extra)
    return out


def attention_reference(q, k, v, *, causal: bool = False, sm_scale: float | None = None):
    """``softmax(Q K^T scale) V`` in float64 on the CPU: the higher-precision reference."""
    import torch

    q, k, v = (t.detach().to(device="cpu", dtype=torch.float64) for t in (q, k, v))
    if q.shape != k.shape:  # grouped-query heads: K/V head j serves query heads j G ... j G + G-1
        g = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    n, d = q.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v
