"""Triton kernels of the reduction and softmax lab: a row sum and a fused row softmax.

Both kernels read a contiguous 2-D tensor row by row:

* :func:`row_sum_kernel` / :func:`row_sum`: each program walks ``ROWS`` rows together in
  tiles of ``ROWS x BLOCK`` elements, accumulates them in fp32 registers and reduces each row
  to one number at the end (a tree reduction across the lanes, ``tl.reduce``). It reads the
  tensor once and writes one element per row. :func:`sum_config` sizes the tile so that every
  program loads the same bytes per step at any row length and element size (several short
  rows per program, one long row in several steps).
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
           "block_for", "warps_for", "sum_config", "SUM_BLOCK_MAX", "SUM_TILE_BYTES",
           "SUM_TILE_CHOICES", "SUM_TUNE_CHOICES", "tuned_tile", "MAX_COLS", "INTERPRETED"]

#: Largest block of columns one program of the row sum loads per step (fp32).
SUM_BLOCK_MAX = 4096
#: Bytes one program of the row sum loads per step: 16 KiB, a 4096-column fp32 block, and
#: for shorter rows (or 2-byte elements) as many rows as fill it.
SUM_TILE_BYTES = SUM_BLOCK_MAX * 4
#: Tile sizes the lab's exploration sweeps beside the default (bytes per program and step).
SUM_TILE_CHOICES = (2048, 4096, 8192, 16384, 32768)
#: Longest row the fused softmax holds in registers (one program per row, whole row at once).
MAX_COLS = 1 << 15


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_rows, n_cols, x_stride, ROWS: tl.constexpr,
                   BLOCK: tl.constexpr, N_STEPS: tl.constexpr):
    """``y[r] = sum(x[r, :])``: program ``p`` sums rows ``p * ROWS`` to ``p * ROWS + ROWS - 1``,
    walking them together in ``N_STEPS`` tiles of ``ROWS x BLOCK`` elements.

    The step count is a compile-time constant (``cdiv(n_cols, BLOCK)``, one compiled kernel per
    row length), which also lets Triton's interpreter run the loop. Rows past ``n_rows`` (the
    last program's) and columns past ``n_cols`` are masked.
    """
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    base = x_ptr + rows.to(tl.int64)[:, None] * x_stride
    acc = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for step in range(N_STEPS):
        cols = step * BLOCK + tl.arange(0, BLOCK)
        mask = row_ok[:, None] & (cols < n_cols)[None, :]
        acc += tl.load(base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.reduce(acc, 1, _add), mask=row_ok)


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


def sum_config(n_cols: int, element_bytes: int, tile_bytes: int = SUM_TILE_BYTES) -> dict:
    """The row sum's launch configuration for rows of ``n_cols`` elements of ``element_bytes``:
    ``BLOCK`` columns per step (the row's length rounded up to a power of two, at most one
    tile), ``ROWS`` rows per program (enough short rows to fill a tile of ``tile_bytes``),
    ``N_STEPS`` and ``num_warps`` (by the tile's elements, :func:`warps_for`).

    Every program then moves about ``tile_bytes`` per step whatever the row length, so short
    rows no longer mean small programs whose fixed costs (start, reduction, store) outweigh
    their loads.

    >>> sum_config(1024, 2)
    {'BLOCK': 1024, 'ROWS': 8, 'N_STEPS': 1, 'num_warps': 16}
    >>> sum_config(16384, 4)
    {'BLOCK': 4096, 'ROWS': 1, 'N_STEPS': 4, 'num_warps': 16}
    """
    for name, v in (("n_cols", n_cols), ("element_bytes", element_bytes), ("tile_bytes", tile_bytes)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    tile = max(16, (int(tile_bytes) // int(element_bytes)))
    tile = 1 << (tile.bit_length() - 1)  # a power of two
    block = min(tile, max(16, 1 << (int(n_cols) - 1).bit_length()))
    rows = tile // block
    return {"BLOCK": block, "ROWS": rows, "N_STEPS": triton.cdiv(int(n_cols), block),
            "num_warps": warps_for(rows * block)}


#: Tiles (bytes) the row sum tunes over on a GPU, per row length and element size.
SUM_TUNE_CHOICES = (4096, 8192, 16384, 32768)
_TUNED: dict[tuple, int] = {}


def _launch_sum(x, out, tile_bytes: int) -> None:
    rows, cols = x.shape
    cfg = sum_config(cols, x.element_size(), tile_bytes)
    row_sum_kernel[(triton.cdiv(rows, cfg["ROWS"]),)](x, out, rows, cols, x.stride(0), **cfg)


def tuned_tile(x, out, choices=SUM_TUNE_CHOICES, reps: int = 5) -> int:
    """The fastest of ``choices`` (tile bytes) for the row sum of ``x`` on its GPU: each is
    compiled and launched once, then timed ``reps`` times with CUDA events (median); the
    winner is cached per row length, element size and device, so later calls reuse it.
    Through the interpreter (no GPU timing) it is :data:`SUM_TILE_BYTES`."""
    key = (int(x.shape[1]), x.element_size(), str(x.device))
    if key in _TUNED:
        return _TUNED[key]
    if INTERPRETED or not x.is_cuda:
        return SUM_TILE_BYTES
    import torch

    times = {}
    for tile in choices:
        _launch_sum(x, out, tile)
        torch.cuda.synchronize(x.device)
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
        for a, b in ev:
            a.record()
            _launch_sum(x, out, tile)
            b.record()
        torch.cuda.synchronize(x.device)
        times[tile] = sorted(a.elapsed_time(b) for a, b in ev)[reps // 2]
    _TUNED[key] = min(times, key=times.get)
    return _TUNED[key]


def row_sum(x, out=None, tile_bytes: int | None = None):
    """Sum each row of contiguous 2-D ``x`` with :func:`row_sum_kernel` (into ``out`` if given).

    The result has ``x``'s dtype (accumulated in fp32). The launch follows :func:`sum_config`
    with tiles of ``tile_bytes``; by default the tile :func:`tuned_tile` picks on a GPU (the
    first call for a row length tunes), :data:`SUM_TILE_BYTES` through the interpreter.
    """
    import torch

    _check_2d(x, out)
    rows, cols = x.shape
    if out is None:
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
    if tuple(out.shape) != (rows,):
        raise ValueError(f"out must have shape ({rows},), got {tuple(out.shape)}")
    _launch_sum(x, out, tuned_tile(x, out) if tile_bytes is None else tile_bytes)
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
