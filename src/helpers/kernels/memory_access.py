"""Triton kernels of the memory-access lab: a strided read and two transposes.

Importing this module on a machine without a usable CUDA GPU sets ``TRITON_INTERPRET=1``,
so the same kernels run (slowly, at tiny sizes) through Triton's interpreter on the CPU.
Triton reads that variable when a function is decorated with ``triton.jit``, so the kernels
here call only Triton's built-in operations (``tl.load``, ``tl.reduce``, ``tl.trans``), never its
library functions decorated at Triton's import (``tl.sum``, ``tl.cdiv``): they then run in
the interpreter even when something imported Triton before this module did.

* :func:`strided_sum_kernel`: each program sums ``BLOCK`` elements that lie ``stride``
  elements apart and writes one partial sum; the useful traffic is ``4 * n`` bytes however
  large the stride, while the memory system fetches whole sectors.
* :func:`transpose_naive_kernel`: each program reads a contiguous piece of one row and writes
  it down a column of the output, ``M`` elements apart: coalesced reads, strided writes.
* :func:`transpose_tiled_kernel`: each program loads a 2-D tile, transposes it in registers
  and shared memory (``tl.trans``) and stores it as rows of the output: both sides coalesced.

The launch wrappers (:func:`strided_sum`, :func:`transpose_naive`, :func:`transpose_tiled`)
take and return torch tensors on the tensors' own device.

Used by: labs/memory-access.md.
"""

from __future__ import annotations

import os

from helpers.bench import has_cuda

if not has_cuda():
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["strided_sum_kernel", "transpose_naive_kernel", "transpose_tiled_kernel",
           "strided_sum", "transpose_naive", "transpose_tiled", "transpose_with",
           "STRIDED_BLOCK", "NAIVE_BLOCK", "TILE"]

#: Elements summed by one program of the strided read.
STRIDED_BLOCK = 1024
#: Elements of one row handled by one program of the naive transpose.
NAIVE_BLOCK = 1024
#: Tile edge (elements) of the tiled transpose.
TILE = 32


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def strided_sum_kernel(x_ptr, partial_ptr, n, stride, BLOCK: tl.constexpr):
    """``partial[p] = sum(x[(p * BLOCK + i) * stride] for i < BLOCK if index < n)``."""
    pid = tl.program_id(0)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    vals = tl.load(x_ptr + idx.to(tl.int64) * stride, mask=mask, other=0.0)
    tl.store(partial_ptr + pid, tl.reduce(vals, 0, _add))


@triton.jit
def transpose_naive_kernel(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    """``y[j, i] = x[i, j]``: program (i, b) copies row i, columns b*BLOCK..., down column i."""
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    vals = tl.load(x_ptr + row.to(tl.int64) * N + cols, mask=mask)
    tl.store(y_ptr + cols.to(tl.int64) * M + row, vals, mask=mask)


@triton.jit
def transpose_tiled_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """``y[j, i] = x[i, j]`` one ``BLOCK_M x BLOCK_N`` tile per program, via ``tl.trans``."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[:, None].to(tl.int64) * M + rm[None, :], tl.trans(tile),
             mask=tl.trans(mask))


def _check_1d(x) -> None:
    if x.dim() != 1 or not x.is_contiguous():
        raise ValueError(f"x must be a contiguous 1-D tensor, got shape {tuple(x.shape)}")


def strided_sum(x, n: int, stride: int, partial=None, block: int = STRIDED_BLOCK):
    """Launch :func:`strided_sum_kernel`; return the partial sums (``cdiv(n, block)`` floats)."""
    import torch

    _check_1d(x)
    if not (isinstance(n, int) and n >= 1 and isinstance(stride, int) and stride >= 1):
        raise ValueError(f"n and stride must be integers >= 1, got {n!r}, {stride!r}")
    if (n - 1) * stride >= x.numel():
        raise ValueError(f"n={n} elements at stride {stride} need {(n - 1) * stride + 1} "
                         f"elements, x has {x.numel()}")
    grid = (triton.cdiv(n, block),)
    if partial is None:
        partial = torch.empty(grid[0], dtype=torch.float32, device=x.device)
    strided_sum_kernel[grid](x, partial, n, stride, BLOCK=block)
    return partial


def _check_2d(x, y) -> tuple[int, int]:
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"x must be a contiguous 2-D tensor, got shape {tuple(x.shape)}")
    m, n = x.shape
    if y is not None and (tuple(y.shape) != (n, m) or not y.is_contiguous()):
        raise ValueError(f"y must be a contiguous {(n, m)} tensor, got {tuple(y.shape)}")
    return m, n


def transpose_naive(x, y=None, block: int = NAIVE_BLOCK):
    """``x.T`` (contiguous) by :func:`transpose_naive_kernel`, written into ``y`` if given."""
    import torch

    m, n = _check_2d(x, y)
    if y is None:
        y = torch.empty((n, m), dtype=x.dtype, device=x.device)
    transpose_naive_kernel[(m, triton.cdiv(n, block))](x, y, m, n, BLOCK=block)
    return y


def transpose_with(kernel, x, y=None, block_m: int = TILE, block_n: int = TILE):
    """Launch any kernel with :func:`transpose_tiled_kernel`'s signature on a 2-D grid of tiles.

    The reader's kernel in the lab's grading cell is launched through this wrapper, so it gets
    exactly the grid and arguments the reference kernel gets.
    """
    import torch

    m, n = _check_2d(x, y)
    if y is None:
        y = torch.empty((n, m), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    kernel[grid](x, y, m, n, BLOCK_M=block_m, BLOCK_N=block_n)
    return y


def transpose_tiled(x, y=None, block_m: int = TILE, block_n: int = TILE):
    """``x.T`` (contiguous) by :func:`transpose_tiled_kernel`, written into ``y`` if given."""
    return transpose_with(transpose_tiled_kernel, x, y, block_m, block_n)
