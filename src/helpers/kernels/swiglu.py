"""Triton kernels of lesson 11: SwiGLU's gate, ``silu(a) * b``, fused, forward and backward.

A transformer's SwiGLU feed-forward block computes ``silu(x W_gate) * (x W_up)`` between two
matrix multiplications (Shazeer 2020). Written in PyTorch, the elementwise part is two kernels
(``silu``, then ``*``), with an intermediate tensor written and read back in between; here it
is one kernel each way:

* :func:`swiglu_fwd_kernel`: ``out = a * sigmoid(a) * b`` (reads ``a``, ``b``; writes ``out``);
* :func:`swiglu_bwd_kernel`: from the upstream gradient ``g``,
  ``da = g * b * s * (1 + a (1 - s))`` with ``s = sigmoid(a)``, and ``db = g * a * s``
  (reads ``a``, ``b``, ``g``; writes ``da``, ``db``). It recomputes ``s`` rather than saving it.

The forward is the kernel of lesson 05 (:func:`helpers.kernels.elementwise.swiglu_kernel`,
{ref}`sec-cuda-execution`) extended for an operator: 64-bit offsets, and an fp64 path. That
kernel stays as it is, the plainest example of a grid; this one is the one lesson 11 registers.

Arithmetic is in fp32 for 16- and 32-bit inputs and in fp64 for fp64 inputs (so that
``torch.autograd.gradcheck`` can check the backward in double precision). With no usable CUDA
GPU, Triton runs through its interpreter (set by :mod:`helpers.kernels` before ``triton`` is
imported): exact but slow, so keep sizes small there. The PyTorch operator built on these
kernels is :mod:`helpers.ops.swiglu`.

>>> import torch
>>> a, b = torch.randn(1000), torch.randn(1000)
>>> bool(torch.allclose(swiglu_fwd(a, b), torch.nn.functional.silu(a) * b, atol=1e-6))
True

Used by: chapters/custom-operators.md.
"""

from __future__ import annotations

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

#: Elements per program (a power of two; the mask covers the last, partial block).
BLOCK = 1024

__all__ = ["swiglu_fwd_kernel", "swiglu_bwd_kernel", "swiglu_fwd", "swiglu_bwd",
           "swiglu_reference", "swiglu_bwd_reference", "BLOCK", "INTERPRETED"]


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr, FP64: tl.constexpr):
    """``out[i] = silu(a[i]) * b[i]`` for ``BLOCK`` contiguous elements per program."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    if FP64:
        af = a.to(tl.float64)
        bf = b.to(tl.float64)
    else:
        af = a.to(tl.float32)
        bf = b.to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-af))
    out = af * s * bf
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, g_ptr, da_ptr, db_ptr, n, BLOCK: tl.constexpr,
                      FP64: tl.constexpr):
    """``da = g b s (1 + a (1 - s))`` and ``db = g a s`` with ``s = sigmoid(a)``."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    if FP64:
        af = a.to(tl.float64)
        bf = b.to(tl.float64)
        gf = g.to(tl.float64)
    else:
        af = a.to(tl.float32)
        bf = b.to(tl.float32)
        gf = g.to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-af))
    silu = af * s
    da = gf * bf * s * (1.0 + af * (1.0 - s))
    db = gf * silu
    tl.store(da_ptr + offs, da.to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offs, db.to(db_ptr.dtype.element_ty), mask=mask)


def _check(*tensors):
    t0 = tensors[0]
    for t in tensors:
        if t.shape != t0.shape or t.dtype != t0.dtype or t.device != t0.device:
            raise ValueError("inputs must share shape, dtype and device; got "
                             f"{[(tuple(x.shape), x.dtype, str(x.device)) for x in tensors]}")
        if not t.is_contiguous():
            raise ValueError("inputs must be contiguous")
    if not t0.is_floating_point():
        raise ValueError(f"inputs must be floating point, got {t0.dtype}")


def _grid(n: int, block: int):
    return (triton.cdiv(n, block),)


def swiglu_fwd(a, b, out=None, *, block: int = BLOCK):
    """Launch :func:`swiglu_fwd_kernel`: ``silu(a) * b`` (into ``out`` if given)."""
    import torch

    _check(a, b)
    out = torch.empty_like(a) if out is None else out
    n = a.numel()
    if n:
        swiglu_fwd_kernel[_grid(n, block)](a, b, out, n, BLOCK=block,
                                           FP64=a.dtype == torch.float64)
    return out


def swiglu_bwd(a, b, grad_out, *, block: int = BLOCK):
    """Launch :func:`swiglu_bwd_kernel`; returns ``(grad_a, grad_b)``."""
    import torch

    _check(a, b, grad_out)
    da, db = torch.empty_like(a), torch.empty_like(b)
    n = a.numel()
    if n:
        swiglu_bwd_kernel[_grid(n, block)](a, b, grad_out, da, db, n, BLOCK=block,
                                           FP64=a.dtype == torch.float64)
    return da, db


def swiglu_reference(a, b):
    """``silu(a) * b`` in PyTorch (two kernels in eager mode): the oracle."""
    import torch

    return torch.nn.functional.silu(a) * b


def swiglu_bwd_reference(a, b, grad_out):
    """The backward formulas of :func:`swiglu_bwd_kernel` in PyTorch: ``(grad_a, grad_b)``."""
    import torch

    s = torch.sigmoid(a)
    return grad_out * b * s * (1 + a * (1 - s)), grad_out * a * s
