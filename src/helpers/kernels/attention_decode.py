"""Triton kernels of split-KV decode attention (flash-decoding), with grouped-query heads.

At decode time each sequence brings one new query token per head and attends over its whole KV
cache: ``o_h = softmax(q_h K_g^T * scale) V_g`` for query head ``h`` of KV group ``g = h // G``
(``G = n_heads / n_kv_heads`` query heads share one K/V head, grouped-query attention). There
is no query block to parallelise over, so one program per (sequence, KV head) would leave most
SMs idle at small batch. Flash-decoding (Dao, Haziza, Massa and Sizov 2023) splits the KV
length instead:

* :func:`decode_split_kernel`, program ``(split, b * n_kv_heads + g)``: the ``G`` query heads
  of group ``g`` (one tile of ``G`` rows, padded to 16 for ``tl.dot``) against keys
  ``split * chunk ... (split + 1) * chunk`` in blocks of ``BLOCK_N``, with the online softmax
  of the training kernel (:mod:`helpers.kernels.attention`). Each K/V block is loaded once for
  all ``G`` heads of its group. It writes the unnormalised partial output ``acc / l`` (fp32)
  and its log-sum-exp ``m + log2 l`` (base 2, fp32) per (head, split);
* :func:`decode_combine_kernel`, program ``b * n_heads + h``: the log-sum-exp merge of the
  splits, ``o = sum_s 2^(lse_s - M) o_s / sum_s 2^(lse_s - M)`` with ``M = max_s lse_s``.

Shapes: ``q`` is ``(B, H, d)``, ``k`` and ``v`` are ``(B, H_kv, N, d)`` with unit stride in
``d`` (any other strides, so a slice of a larger cache works), ``o`` is ``(B, H, d)``.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> q = torch.randn(2, 4, 16, generator=g)
>>> k, v = (torch.randn(2, 2, 45, 16, generator=g) for _ in range(2))
>>> o = decode_attention(q, k, v, n_splits=3, block_n=16)
>>> bool(torch.allclose(o, decode_reference(q, k, v), atol=1e-5))
True

Used by: labs/attention.md.
"""

from __future__ import annotations

import math

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["decode_split_kernel", "decode_combine_kernel", "decode_attention",
           "decode_reference", "decode_splits", "device_sms", "WAVES", "default_decode_config",
           "HEAD_DIMS", "INTERPRETED"]

#: Head dimensions the kernel is written for (``tl.arange`` needs a power of two >= 16).
HEAD_DIMS = (16, 32, 64, 128)


def default_decode_config(head_dim: int) -> dict:
    """Launch settings of the split pass: keys per block, warps and pipeline stages."""
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim!r}")
    return {"block_n": 64, "num_warps": 4, "num_stages": 3}


#: Waves of programs per SM the split count aims at by default (:func:`decode_splits`).
WAVES = 4


def decode_splits(context_len: int, programs_per_split: int, *, block_n: int, n_sms: int,
                  waves: int = WAVES) -> int:
    """How many chunks to cut the KV length into: enough programs for ``waves`` per SM, no
    chunk shorter than one block of ``block_n`` keys:
    ``max(1, min(ceil(waves * n_sms / programs_per_split), ceil(context_len / block_n)))``.

    ``programs_per_split`` is the grid's other dimension, ``batch * n_kv_heads``.

    >>> decode_splits(131072, 8, block_n=64, n_sms=132), decode_splits(8192, 128, block_n=64, n_sms=132)
    (66, 5)
    >>> decode_splits(40, 8, block_n=64, n_sms=132)
    1
    """
    for name, x in (("context_len", context_len), ("programs_per_split", programs_per_split),
                    ("block_n", block_n), ("n_sms", n_sms), ("waves", waves)):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {x!r}")
    want = -(-waves * n_sms // programs_per_split)
    return max(1, min(want, -(-context_len // block_n)))


def device_sms(device) -> int:
    """Streaming multiprocessors of ``device`` (a CUDA device), 1 elsewhere (the interpreter
    runs the programs one after another)."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return 1
    return torch.cuda.get_device_properties(device).multi_processor_count


@triton.jit
def decode_split_kernel(Q, K, V, PO, LSE, sm_scale, N_CTX, CHUNK,
                        stride_qb, stride_qh, stride_kb, stride_kh, stride_kn,
                        stride_vb, stride_vh, stride_vn, N_SPLITS,
                        N_KV_HEADS: tl.constexpr, GROUP: tl.constexpr, GROUP_PAD: tl.constexpr,
                        HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program ``(split, b * N_KV_HEADS + g)``: the GROUP query heads of KV head ``g`` over keys
    ``[split * CHUNK, min((split + 1) * CHUNK, N_CTX))``; partial output and log-sum-exp out."""
    split = tl.program_id(0)
    bg = tl.program_id(1)
    b = bg // N_KV_HEADS
    g = bg % N_KV_HEADS
    offs_g = tl.arange(0, GROUP_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    heads = g * GROUP + offs_g
    row_ok = offs_g < GROUP
    q = tl.load(Q + b.to(tl.int64) * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=row_ok[:, None], other=0.0)
    k_base = K + b.to(tl.int64) * stride_kb + g.to(tl.int64) * stride_kh
    v_base = V + b.to(tl.int64) * stride_vb + g.to(tl.int64) * stride_vh
    m_i = tl.full([GROUP_PAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([GROUP_PAD], dtype=tl.float32)
    acc = tl.zeros([GROUP_PAD, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x log2 e)
    lo = split * CHUNK
    hi = tl.minimum(lo + CHUNK, N_CTX)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        ok = cols < hi
        k = tl.load(k_base + cols[None, :].to(tl.int64) * stride_kn + offs_d[:, None],
                    mask=ok[None, :], other=0.0)  # K^T block (d, BLOCK_N)
        s = tl.dot(q, k) * qk_scale
        s = tl.where(ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None].to(tl.int64) * stride_vn + offs_d[None, :],
                    mask=ok[:, None], other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    # a split with no keys (it cannot happen with the wrapper's chunks) would give l = 0:
    # write lse = -inf and a zero output, which the combine pass weighs by 2^-inf = 0
    has = l_i > 0
    out = tl.where(has[:, None], acc / tl.where(has, l_i, 1.0)[:, None], 0.0)
    lse = tl.where(has, m_i + tl.math.log2(tl.where(has, l_i, 1.0)), float("-inf"))
    row = (b * (N_KV_HEADS * GROUP) + heads).to(tl.int64) * N_SPLITS + split  # (B, H, S)
    tl.store(PO + row[:, None] * HEAD_DIM + offs_d[None, :], out, mask=row_ok[:, None])
    tl.store(LSE + row, lse, mask=row_ok)


@triton.jit
def decode_combine_kernel(PO, LSE, O, N_SPLITS, stride_ob, stride_oh, N_HEADS: tl.constexpr,
                          HEAD_DIM: tl.constexpr, SPLITS_PAD: tl.constexpr):
    """Program ``b * N_HEADS + h``: merge the N_SPLITS partial outputs by their log-sum-exp."""
    bh = tl.program_id(0)
    b = bh // N_HEADS
    h = bh % N_HEADS
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, HEAD_DIM)
    ok = offs_s < N_SPLITS
    base = bh.to(tl.int64) * N_SPLITS
    lse = tl.load(LSE + base + offs_s, mask=ok, other=float("-inf"))
    m = tl.max(lse, 0)
    w = tl.where(ok, tl.math.exp2(lse - m), 0.0)
    denom = tl.sum(w, 0)
    o = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for sp in range(0, N_SPLITS):  # one split's partial output at a time: no register spill
        w_s = tl.math.exp2(tl.load(LSE + base + sp) - m)
        o += w_s * tl.load(PO + (base + sp) * HEAD_DIM + offs_d)
    o = o / denom
    tl.store(O + b.to(tl.int64) * stride_ob + h * stride_oh + offs_d, o.to(O.dtype.element_ty))


def _check(q, k, v) -> tuple[int, int, int, int, int]:
    if q.dim() != 3 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"q must be (B, H, d) and k, v (B, H_kv, N, d), got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape, got {tuple(k.shape)}, {tuple(v.shape)}")
    b, h, d = q.shape
    bk, hkv, n, dk = k.shape
    if bk != b or dk != d:
        raise ValueError(f"k, v must be (B={b}, H_kv, N, d={d}), got {tuple(k.shape)}")
    if hkv < 1 or h % hkv:
        raise ValueError(f"n_heads ({h}) must be a multiple of n_kv_heads ({hkv})")
    if q.dtype != k.dtype or q.dtype != v.dtype or q.device != k.device or q.device != v.device:
        raise ValueError("q, k, v must share dtype and device")
    if d not in HEAD_DIMS:
        raise ValueError(f"head dimension must be one of {HEAD_DIMS}, got {d}")
    if n < 1:
        raise ValueError(f"KV length must be >= 1, got {n}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.stride(-1) != 1:
            raise ValueError(f"{name} must have unit stride in its last dimension")
    return b, h, hkv, n, d


def decode_attention(q, k, v, *, sm_scale: float | None = None, n_splits: int | None = None,
                     block_n: int | None = None, num_warps: int | None = None,
                     num_stages: int | None = None, out=None, return_splits: bool = False):
    """Split-KV decode attention of one query token per sequence, grouped-query heads.

    ``q`` ``(B, H, d)``; ``k``, ``v`` ``(B, H_kv, N, d)``, ``H`` a multiple of ``H_kv``. The KV
    length is cut into ``n_splits`` chunks of whole blocks (when None, :func:`decode_splits`
    for the device's SMs); each chunk holds ``ceil(blocks / n_splits)`` blocks, so fewer
    chunks run when that covers ``N`` sooner (never an empty one). Returns ``o`` ``(B, H, d)``
    in ``q``'s dtype, or ``(o, chunks run)`` with ``return_splits``.
    """
    import torch

    b, h, hkv, n, d = _check(q, k, v)
    cfg = default_decode_config(d)
    block_n = block_n or cfg["block_n"]
    if block_n < 16 or block_n & (block_n - 1):
        raise ValueError(f"block_n must be a power of two >= 16, got {block_n}")
    if n_splits is None:
        n_splits = decode_splits(n, b * hkv, block_n=block_n, n_sms=device_sms(q.device))
    if isinstance(n_splits, bool) or not isinstance(n_splits, int) or n_splits < 1:
        raise ValueError(f"n_splits must be an integer >= 1, got {n_splits!r}")
    blocks = -(-n // block_n)
    chunk = -(-blocks // min(n_splits, blocks)) * block_n  # whole blocks per split
    splits = -(-n // chunk)  # every split has at least one key
    group = h // hkv
    group_pad = max(16, triton.next_power_of_2(group))
    part = torch.empty((b, h, splits, d), device=q.device, dtype=torch.float32)
    lse = torch.empty((b, h, splits), device=q.device, dtype=torch.float32)
    out = torch.empty_like(q) if out is None else out
    if (out.shape != q.shape or out.dtype != q.dtype or out.device != q.device
            or out.stride(-1) != 1):
        raise ValueError("out must be a tensor of q's shape, dtype and device with unit stride "
                         "in its last dimension")
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    extra = {} if INTERPRETED else {"num_warps": num_warps or cfg["num_warps"],
                                    "num_stages": num_stages or cfg["num_stages"]}
    decode_split_kernel[(splits, b * hkv)](
        q, k, v, part, lse, scale, n, chunk, q.stride(0), q.stride(1),
        k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2), splits,
        N_KV_HEADS=hkv, GROUP=group, GROUP_PAD=group_pad, HEAD_DIM=d, BLOCK_N=block_n, **extra)
    decode_combine_kernel[(b * h,)](
        part, lse, out, splits, out.stride(0), out.stride(1), N_HEADS=h, HEAD_DIM=d,
        SPLITS_PAD=max(2, triton.next_power_of_2(splits)),
        **({} if INTERPRETED else {"num_warps": 4}))
    return (out, splits) if return_splits else out


def decode_reference(q, k, v, *, sm_scale: float | None = None):
    """Decode attention in float32 torch where the tensors live: each query head ``h`` against
    K/V head ``h // G``, scores materialised. Returns ``(B, H, d)`` in float32."""
    import torch

    b, h, hkv, n, d = _check(q, k, v)
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    qg = q.float().reshape(b, hkv, h // hkv, d)
    s = torch.matmul(qg, k.float().transpose(-1, -2)) * scale  # (B, H_kv, G, N)
    return torch.matmul(torch.softmax(s, dim=-1), v.float()).reshape(b, h, d)
