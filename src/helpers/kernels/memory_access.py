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
take and return torch tensors on the tensors' own device. :func:`self_check` checks the three
against torch at a tiny size; :func:`guarded_buffers` gives a grader inputs and outputs with
guard regions that catch a kernel reading or writing past its matrix.

Used by: labs/memory-access.md.
"""

from __future__ import annotations

import math
import os

from helpers.bench import has_cuda, sync

if not has_cuda():
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["strided_sum_kernel", "transpose_naive_kernel", "transpose_tiled_kernel",
           "strided_sum", "transpose_naive", "transpose_tiled", "transpose_with",
           "STRIDED_BLOCK", "NAIVE_BLOCK", "TILE", "self_check", "guarded_buffers"]

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


def self_check(device: str) -> dict:
    """Check the lab's Triton kernels against torch at a tiny size; raise if one is wrong.

    On a CPU this runs through Triton's interpreter, which is why the sizes are tiny.
    Returns what was checked.
    """
    import torch

    gen = torch.Generator().manual_seed(1)
    x = torch.rand(4096, generator=gen).to(device) + 0.5
    for stride in (1, 3, 32):
        n = 4096 // stride
        got = float(strided_sum(x, n, stride, block=256).double().sum())
        want = float(x[: (n - 1) * stride + 1: stride].double().sum())
        if not math.isclose(got, want, rel_tol=1e-5):
            raise AssertionError(f"strided_sum at stride {stride}: {got} != {want}")
    a = torch.rand(37, 53, generator=gen).to(device) + 0.5
    want = a.t().contiguous()
    naive = transpose_naive(a, block=16)
    tiled = transpose_tiled(a, block_m=16, block_n=16)
    sync(device)
    for name, got in (("transpose_naive", naive), ("transpose_tiled", tiled)):
        if not torch.equal(got, want):
            raise AssertionError(f"{name} disagrees with torch on a 37 x 53 matrix")
    return {"strided_sum_strides": [1, 3, 32], "transpose_shape": [37, 53],
            "interpreter": os.environ.get("TRITON_INTERPRET") == "1"}


def guarded_buffers(shape: tuple[int, int], device: str):
    """``make_inputs``, ``make_output``, their state and a guard check for a grader.

    Each tensor is a view at the start of a larger buffer: a kernel that reads or writes past
    the end of its matrix (a missing mask) touches the guard, inside the allocation, instead of
    crashing the interpreter or the GPU. The input's guard holds NaN, so values read out of
    bounds and stored show up as NaN; the output's guard is checked after the run.
    """
    import torch

    m, n = shape
    guard = 64 * (max(m, n) + 64)
    state: dict = {}

    def make_inputs(gen):
        buf = torch.full((m * n + guard,), float("nan"), dtype=torch.float32)
        buf[: m * n] = torch.rand(m * n, generator=gen) + 0.5
        buf = buf.to(device)
        return (buf[: m * n].view(m, n),)

    def make_output(x):
        buf = torch.empty(n * m + guard, dtype=torch.float32, device=device)
        state["out"] = buf
        return buf[: n * m].view(n, m)

    def guard_check() -> None:
        tail = state["out"][n * m:]
        tail_nan = torch.isnan(tail)
        if not bool(tail_nan.all()):
            raise IndexError(f"the kernel wrote {int((~tail_nan).sum())} elements past the end "
                             "of the output (a store is missing part of its mask)")

    return make_inputs, make_output, state, guard_check
