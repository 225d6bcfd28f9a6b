"""Triton kernels of the launch-overhead lab: an elementwise scale and a row sum.

The scale kernel (``y = alpha * x``) is compiled at several ``num_warps``; the row sum
reduces each row across all its warps, which goes through shared memory, so it is the
shared-memory-using variant. :func:`compiled_info` reads what the compiler reports for a
compiled kernel (registers per thread, spills, shared memory bytes), the raw material of an
occupancy calculation (lesson 05).

On a machine without a usable CUDA GPU, Triton runs through its interpreter (set before
``triton`` is imported); the interpreter compiles nothing, so :func:`compiled_info` returns
``None`` there.

Library only: no page imports it.
"""

from __future__ import annotations

from helpers.kernels import INTERPRETED  # the package's entrance chose interpreter or GPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["scale_kernel", "rowsum_kernel", "scale", "rowsum", "compiled_info", "INTERPRETED"]


@triton.jit
def scale_kernel(x_ptr, y_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * alpha, mask=mask)


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def scale(x, y, alpha: float, *, block: int = 1024, num_warps: int = 4):
    """Launch :func:`scale_kernel` writing ``alpha * x`` into ``y``; return the launch's handle."""
    n = x.numel()
    if y.numel() != n:
        raise ValueError(f"x and y must have the same size, got {n} and {y.numel()}")
    grid = (triton.cdiv(n, block),)
    return scale_kernel[grid](x, y, n, float(alpha), BLOCK=block, num_warps=num_warps)


def rowsum(x, out, *, num_warps: int = 4):
    """Launch :func:`rowsum_kernel`: ``out[i] = x[i, :].sum()`` (one program per row)."""
    n_rows, n_cols = x.shape
    if out.numel() != n_rows:
        raise ValueError(f"out must have {n_rows} elements, got {out.numel()}")
    block = triton.next_power_of_2(n_cols)
    return rowsum_kernel[(n_rows,)](x, out, n_cols, BLOCK=block, num_warps=num_warps)


def compiled_info(handle) -> dict | None:
    """Registers per thread, spilled registers, shared bytes and warps of a compiled kernel.

    ``handle`` is what a Triton launch returns (a ``CompiledKernel``). Returns ``None`` under
    the interpreter or if the compiler's metadata cannot be read.
    """
    if INTERPRETED or handle is None:
        return None
    try:
        init = getattr(handle, "_init_handles", None)
        if init is not None:
            init()  # loads the binary; fills n_regs and n_spills
        meta = handle.metadata
        return {"n_regs": int(handle.n_regs), "n_spills": int(handle.n_spills),
                "shared_bytes": int(meta.shared), "num_warps": int(meta.num_warps)}
    except Exception:  # metadata layout differs between Triton versions: record the absence
        return None
