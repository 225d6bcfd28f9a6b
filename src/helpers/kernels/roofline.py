"""Triton kernels of the roofline lab: a copy and a sweep across arithmetic intensity.

* :func:`copy_kernel` / :func:`triton_copy`: ``dst[i] = src[i]``, one block of ``BLOCK``
  contiguous elements per program, masked at the tail. It moves ``2 x 4`` bytes per fp32
  element and does no arithmetic: the memory roof of the machine.
* :func:`fma_kernel` / :func:`fma_sweep`: reads ``x``, applies ``k`` dependent fused
  multiply-adds ``y <- a*y + b`` to each element in registers, writes ``y``. It moves 8 bytes
  and performs ``2k`` FLOP per element, so its arithmetic intensity is ``2k / 8`` FLOP/byte:
  one knob walks the kernel from far below the ridge point to far above it.

With no usable CUDA GPU, Triton runs through its interpreter (set before ``triton`` is
imported), which is slow: keep the sizes tiny there.

>>> import torch
>>> x = torch.rand(3000) + 0.5
>>> y = fma_sweep(x, 4)
>>> bool(torch.allclose(y.double(), fma_reference(x.double(), 4), rtol=1e-5))
True

Used by: labs/roofline.md.
"""

from __future__ import annotations

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


__all__ = ["copy_kernel", "triton_copy", "fma_kernel", "fma_sweep", "fma_reference",
           "FMA_A", "FMA_B", "COPY_BLOCK", "COPY_WARPS", "COPY_CONFIGS", "INTERPRETED"]

#: The sweep's multiply-add constants: y converges slowly towards b / (1 - a) = 1, so the
#: values stay near 1 for any k and the result still depends on x (a**2048 is about 0.6).
FMA_A = 1.0 - 1.0 / 4096
FMA_B = 1.0 / 4096
#: Default copy configuration (the runner also tries a few others on a GPU).
COPY_BLOCK = 4096
COPY_WARPS = 8
#: Copy configurations the roofline lab tries on a GPU, the fastest kept: (BLOCK, num_warps).
COPY_CONFIGS = ((1024, 4), (4096, 8), (8192, 8), (16384, 16))


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    """Copy ``n`` elements, ``BLOCK`` per program; the mask covers the last, partial block."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def triton_copy(src, dst, *, block: int = COPY_BLOCK, num_warps: int = COPY_WARPS):
    """Launch :func:`copy_kernel` over contiguous ``src`` into ``dst``; returns ``dst``."""
    if src.shape != dst.shape or src.dtype != dst.dtype or src.device != dst.device:
        raise ValueError("src and dst must have the same shape, dtype and device")
    if not (src.is_contiguous() and dst.is_contiguous()):
        raise ValueError("src and dst must be contiguous")
    if block < 16 or block & (block - 1):
        raise ValueError(f"block must be a power of two >= 16, got {block}")
    n = src.numel()
    copy_kernel[(triton.cdiv(n, block),)](src, dst, n, BLOCK=block, num_warps=num_warps)
    return dst


@triton.jit
def fma_kernel(x_ptr, y_ptr, n, a, b, BLOCK: tl.constexpr, N_OUTER: tl.constexpr,
               UNROLL: tl.constexpr):
    """``y = f^k(x)`` with ``f(v) = a*v + b`` and ``k = N_OUTER * UNROLL`` dependent FMAs.

    The inner ``UNROLL`` steps are unrolled at compile time, so loop bookkeeping is a small
    share of the instructions; each thread holds several elements, whose chains are
    independent and hide the FMA latency.
    """
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(N_OUTER):
        for _ in tl.static_range(UNROLL):
            v = tl.fma(v, a, b)
    tl.store(y_ptr + offs, v, mask=mask)


def fma_sweep(x, k: int, out=None, *, block: int = 1024, num_warps: int = 4):
    """Apply ``k`` dependent FMAs to each element of fp32 ``x`` (into ``out`` if given)."""
    import torch

    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if x.dtype != torch.float32 or not x.is_contiguous():
        raise ValueError("x must be a contiguous fp32 tensor")
    k = int(k)
    unroll = 1
    while unroll < 16 and k % (2 * unroll) == 0:
        unroll *= 2  # the largest power of two <= 16 that divides k
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    fma_kernel[(triton.cdiv(n, block),)](x, out, n, FMA_A, FMA_B, BLOCK=block, N_OUTER=k // unroll,
                                         UNROLL=unroll, num_warps=num_warps)
    return out


def fma_reference(x, k: int):
    """The sweep's result in closed form: ``a**k x + b (1 - a**k) / (1 - a)`` (x's dtype)."""
    ak = FMA_A ** int(k)
    return ak * x + FMA_B * (1.0 - ak) / (1.0 - FMA_A)
