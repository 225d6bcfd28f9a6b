"""An elementwise kernel of a decode step, in Triton: SwiGLU, ``silu(gate) * up``.

In a Llama-style feed-forward block, each token's activations go through two matrix products,
``gate`` and ``up`` (each ``d_ff`` wide), and are combined element by element before the third
product. At decode time that combination is a tiny, purely elementwise kernel: each output
element needs one element of each input and nothing else, which makes it the plainest example
of how a launch is cut into a grid of blocks (Triton calls them *programs*).

Introduced in {ref}`sec-cuda-execution`.

>>> import torch
>>> g, u = torch.randn(1000), torch.randn(1000)
>>> out = swiglu(g, u, block=256)
>>> bool(torch.allclose(out, torch.nn.functional.silu(g) * u, atol=1e-6))
True
>>> grid_size(1000, 256)
4

Used by: chapters/cuda-execution.md.
"""

from __future__ import annotations

import os

from ..bench.sizes import has_cuda

if not has_cuda():  # run the kernel through Triton's interpreter on a CPU
    os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

__all__ = ["swiglu_kernel", "swiglu", "grid_size", "interpreted", "compiled_resources",
           "driver_blocks_per_sm"]


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)                  # which block am I?
    offsets = pid * BLOCK + tl.arange(0, BLOCK)  # the elements this block owns
    mask = offsets < n_elements                  # the last block may stick out
    g = tl.load(gate_ptr + offsets, mask=mask).to(tl.float32)
    u = tl.load(up_ptr + offsets, mask=mask).to(tl.float32)
    out = g * tl.sigmoid(g) * u                  # silu(g) * u, in fp32
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def grid_size(n_elements: int, block: int) -> int:
    """Blocks needed to cover ``n_elements`` with ``block`` elements each: ceil(n / block)."""
    if isinstance(n_elements, bool) or int(n_elements) != n_elements or n_elements < 1:
        raise ValueError(f"n_elements must be an integer >= 1, got {n_elements!r}")
    if isinstance(block, bool) or int(block) != block or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    return -(-int(n_elements) // int(block))


def interpreted() -> bool:
    """True if Triton runs kernels through its CPU interpreter in this process."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def swiglu(gate: torch.Tensor, up: torch.Tensor, *, block: int = 1024, num_warps: int = 4,
           return_compiled: bool = False):
    """``silu(gate) * up`` elementwise, by :func:`swiglu_kernel` over ``grid_size(n, block)`` blocks.

    ``block`` (a power of two) is the number of elements per block; ``num_warps`` the warps
    per block on a GPU (ignored by the interpreter). With ``return_compiled=True`` also
    returns the compiled kernel (on a GPU it carries ``n_regs``, ``n_spills``, ``metadata``
    with ``num_warps`` and ``shared``), or ``None`` under the interpreter.
    """
    if gate.shape != up.shape or gate.dtype != up.dtype or gate.device != up.device:
        raise ValueError("gate and up must have the same shape, dtype and device, got "
                         f"{tuple(gate.shape)} {gate.dtype} {gate.device} and "
                         f"{tuple(up.shape)} {up.dtype} {up.device}")
    if block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of two, got {block!r}")
    gate, up = gate.contiguous(), up.contiguous()
    out = torch.empty_like(gate)
    n = gate.numel()
    handle = swiglu_kernel[(grid_size(n, block),)](gate, up, out, n, BLOCK=block,
                                                   num_warps=num_warps)
    if return_compiled:
        return out, (None if interpreted() else handle)
    return out


def compiled_resources(handle) -> dict:
    """What a compiled Triton kernel asks of an SM: threads per block, registers per thread,
    shared memory per block (bytes) and spilled registers, read from the compiled kernel."""
    if handle is None:
        raise ValueError("no compiled kernel: Triton's interpreter compiles nothing")
    handle._init_handles()  # loads the binary; fills n_regs and n_spills
    meta = handle.metadata
    return {"threads_per_block": int(meta.num_warps) * 32, "registers_per_thread": int(handle.n_regs),
            "smem_bytes": int(meta.shared), "spills": int(handle.n_spills)}


def driver_blocks_per_sm(handle) -> int:
    """Resident blocks per SM of a compiled Triton kernel, as the CUDA driver computes them
    (``cuOccupancyMaxActiveBlocksPerMultiprocessor``), for its own block size and shared memory.
    Needs a CUDA GPU."""
    import ctypes

    res = compiled_resources(handle)
    lib = ctypes.CDLL("libcuda.so.1")
    n = ctypes.c_int(0)
    err = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(n), ctypes.c_void_p(int(handle.function)),
        ctypes.c_int(res["threads_per_block"]), ctypes.c_size_t(res["smem_bytes"]))
    if err != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed with error {err}")
    return int(n.value)
