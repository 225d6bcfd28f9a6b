"""The precision of cuBLAS fp32 matrix products, switched for a block of code.

Since PyTorch 2.9 the per-backend setting ``torch.backends.cuda.matmul.fp32_precision`` says
whether an fp32 ``torch.matmul`` on a GPU runs in IEEE fp32 (``"ieee"``) or lets the tensor
cores round its inputs to TF32 (``"tf32"``); it does not warn and does not mix with the legacy
global switch (PyTorch documentation, "CUDA semantics", section "TensorFloat-32 (TF32) on
Ampere (and later) devices"). :func:`matmul_precision` sets it for a ``with`` block and restores
the previous value after. The roofline and GEMM labs time fp32 products both ways with it.

>>> import torch
>>> before = torch.backends.cuda.matmul.fp32_precision
>>> with matmul_precision("tf32"):
...     torch.backends.cuda.matmul.fp32_precision
'tf32'
>>> torch.backends.cuda.matmul.fp32_precision == before
True

Library only: no page imports it.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["matmul_precision"]


@contextmanager
def matmul_precision(mode: str):
    """cuBLAS fp32 matrix products in ``"ieee"`` fp32 (no TF32) or ``"tf32"``, then restore.

    Uses the per-backend setting ``torch.backends.cuda.matmul.fp32_precision`` (PyTorch 2.9
    and later), which does not warn and does not mix with the legacy global setting.
    """
    import torch

    if mode not in ("ieee", "tf32"):
        raise ValueError(f"mode must be 'ieee' or 'tf32', got {mode!r}")
    setting = torch.backends.cuda.matmul
    before = setting.fp32_precision
    setting.fp32_precision = mode
    try:
        yield
    finally:
        try:
            setting.fp32_precision = before
        except (RuntimeError, ValueError):  # an older value this version will not take back
            setting.fp32_precision = "ieee"
