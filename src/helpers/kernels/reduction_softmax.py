"""Triton kernels of the reduction and softmax lab: a row sum and a fused row softmax.

Both kernels run one program per row of a contiguous 2-D tensor:

* :func:`row_sum_kernel` / :func:`row_sum`: each program walks its row in blocks of ``BLOCK``
  columns, accumulates them in fp32 registers and reduces the block to one number at the end
  (a tree reduction across the lanes, ``tl.reduce``). It reads the tensor once and writes one
  element per row.
* :func:`softmax_kernel` / :func:`softmax`: each program loads its whole row (``BLOCK`` is the
  next power of two above the row length, the tail masked with ``-inf``), subtracts the row's
  maximum, exponentiates, divides by the sum and stores the row: one read and one write of the
  tensor, with the maximum and the sum kept in registers. This is the fusion that the unfused
  sequence of torch operations (max, subtract, exp, sum, divide, each a pass over memory)
  lacks.

Arithmetic is in fp32 whatever the storage type (fp32 or bf16); the stores round to the
output's dtype. Importing this module on a machine without a usable CUDA GPU sets
``TRITON_INTERPRET=1`` (as the package :mod:`helpers.kernels` does), so the same kernels run
through Triton's interpreter on the CPU, slowly: keep sizes tiny there. As in
:mod:`helpers.kernels.memory_access`, the kernels use only Triton's built-in operations
(``tl.reduce`` with a combine function written here, ``tl.maximum``, ``tl.exp``).

>>> import torch
>>> x = torch.randn(5, 300, generator=torch.Generator().manual_seed(0))
>>> bool(torch.allclose(softmax(x), torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-7))
True
>>> bool(torch.allclose(row_sum(x), x.sum(dim=-1), rtol=1e-5, atol=1e-5))
True

Used by: labs/reduction-softmax.md.
"""

from __future__ import annotations

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


__all__ = ["row_sum_kernel", "softmax_kernel", "row_sum", "softmax", "softmax_with",
           "block_for", "warps_for", "SUM_BLOCK_MAX", "MAX_COLS", "INTERPRETED"]

#: Largest block of columns one program of the row sum loads per step.
SUM_BLOCK_MAX = 4096
#: Longest row the fused softmax holds in registers (one program per row, whole row at once).
MAX_COLS = 1 << 15


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, x_stride, BLOCK: tl.constexpr, N_STEPS: tl.constexpr):
    """``y[r] = sum(x[r, :])``: program ``r`` sums its row in ``N_STEPS`` blocks of ``BLOCK``.

    The step count is a compile-time constant (``cdiv(n_cols, BLOCK)``, one compiled kernel per
    row length), which also lets Triton's interpreter run the loop.
    """
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * x_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for step in range(N_STEPS):
        cols = step * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.reduce(acc, 0, _add))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    """``y[r, :] = softmax(x[r, :])``: one read and one write of the row, max-subtracted."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * x_stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    z = x - tl.reduce(x, 0, _max)  # the largest exponent is 0: no overflow
    num = tl.exp(z)  # the masked tail gives exp(-inf) = 0
    den = tl.reduce(num, 0, _add)
    tl.store(y_ptr + row.to(tl.int64) * y_stride + cols, num / den, mask=mask)


def block_for(n_cols: int) -> int:
    """The softmax's ``BLOCK``: the smallest power of two >= ``n_cols`` (at least 16)."""
    if isinstance(n_cols, bool) or int(n_cols) != n_cols or not 1 <= n_cols <= MAX_COLS:
        raise ValueError(f"n_cols must be an integer in [1, {MAX_COLS}], got {n_cols!r}")
    return max(16, 1 << (int(n_cols) - 1).bit_length())


def warps_for(block: int) -> int:
    """Warps per program for a row of ``block`` elements (Triton's softmax tutorial's rule)."""
    return 4 if block < 2048 else 8 if block < 4096 else 16


def _check_2d(x, out=None) -> None:
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"x must be a contiguous 2-D tensor, got shape {tuple(x.shape)}")
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"x must have at least one row and one column, got {tuple(x.shape)}")
    if out is not None and (out.device != x.device or not out.is_contiguous()):
        raise ValueError("out must be contiguous and on x's device")


def row_sum(x, out=None):
    """Sum each row of contiguous 2-D ``x`` with :func:`row_sum_kernel` (into ``out`` if given).

    The result has ``x``'s dtype (accumulated in fp32).
    """
    import torch

    _check_2d(x, out)
    rows, cols = x.shape
    if out is None:
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if tuple(out.shape) != (rows,):
        raise ValueError(f"out must have shape ({rows},), got {tuple(out.shape)}")
    block = min(SUM_BLOCK_MAX, max(16, 1 << (cols - 1).bit_length()))
    row_sum_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=block,
                            N_STEPS=triton.cdiv(cols, block), num_warps=warps_for(block))
    return out


def softmax_with(kernel, x, out=None):
    """Launch any kernel with :func:`softmax_kernel`'s signature, one program per row.

    The reader's kernel in the lab's grading cell can be launched through this wrapper, so it
    gets exactly the grid and arguments the book's kernel gets.
    """
    import torch

    _check_2d(x, out)
    rows, cols = x.shape
    if out is None:
        out = torch.empty_like(x)
    if out.shape != x.shape:
        raise ValueError(f"out must have x's shape {tuple(x.shape)}, got {tuple(out.shape)}")
    block = block_for(cols)
    kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block,
                    num_warps=warps_for(block))
    return out


def softmax(x, out=None):
    """Softmax along the last dimension of contiguous 2-D ``x`` by :func:`softmax_kernel`."""
    return softmax_with(softmax_kernel, x, out)
