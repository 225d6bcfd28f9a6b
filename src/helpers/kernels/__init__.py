"""The GPU kernels the lessons and labs run, written in Triton (and one in CUDA C).

Device code, kept apart from the pure models of :mod:`helpers.models`: one module per page or
lab (:mod:`.elementwise` for lesson 05, :mod:`.roofline`, :mod:`.memory_access`, ...).

Where no CUDA GPU is usable (:func:`helpers.bench.has_cuda`), importing this package turns on
Triton's interpreter (``TRITON_INTERPRET=1``) before any kernel module imports Triton, so the
same kernels run, slowly but exactly, on a CPU with NumPy. Triton fixes the mode when it is
first imported, which is why the switch lives here, at the package's entrance. Two repairs
to the interpreter that the kernels need are applied here too (:mod:`._interpreter`).

Used by many pages, among them: chapters/cuda-execution.md, chapters/custom-operators.md,
labs/attention.md, labs/gemm.md, labs/memory-access.md, labs/quantization.md.
"""

import os as _os

from helpers.bench.sizes import has_cuda as _has_cuda

if not _has_cuda():
    _os.environ.setdefault("TRITON_INTERPRET", "1")

#: Whether the kernels run through Triton's interpreter (on the CPU) rather than on a GPU.
INTERPRETED = _os.environ.get("TRITON_INTERPRET") == "1"


def triton_device(device: str) -> str:
    """Where Triton kernels can run for a lab on ``device``: ``device`` itself, except that a CPU
    run on a machine whose Triton compiles for its GPU (no interpreter) checks them there."""
    return "cuda" if device == "cpu" and not INTERPRETED else device


def matrix_output(out, rows: int, cols: int, like, name: str):
    """The ``(rows, cols)`` result buffer of a matrix-product kernel: a new tensor of ``like``'s
    dtype on its device when ``out`` is None, else ``out`` itself after checking its shape,
    dtype and device (ValueError naming the input ``name`` it must match)."""
    import torch

    if out is None:
        return torch.empty((rows, cols), dtype=like.dtype, device=like.device)
    if tuple(out.shape) != (rows, cols) or out.dtype != like.dtype or out.device != like.device:
        raise ValueError(f"out must be an (M x N) tensor of {name}'s dtype on {name}'s device")
    return out


if INTERPRETED:
    from ._interpreter import apply_fixes as _apply_fixes

    _apply_fixes()
