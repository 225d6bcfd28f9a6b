"""Timing an unfused and a fused softmax with PyTorch (the page {ref}`sec-fusion-and-attention`).

:func:`unfused_softmax` runs the five elementwise and reduction kernels of a safe softmax one
after the other (row max, subtract, exponentiate, row sum, divide), each reading its input from
memory and writing its output back; :func:`fused_softmax` is ``torch.softmax``, one kernel.
:func:`measure_softmax_fusion` checks both against float64 and times them with
:func:`helpers.bench.bench` over a few sizes.

>>> import torch
>>> x = torch.randn(4, 10)
>>> bool(torch.allclose(unfused_softmax(x), fused_softmax(x), atol=1e-6))
True

Used by: chapters/fusion-and-attention.md.
"""

from __future__ import annotations

from .timing import bench

__all__ = ["unfused_softmax", "fused_softmax", "measure_softmax_fusion"]


def unfused_softmax(x):
    """Row-wise softmax of ``x`` as five separate kernels (each a pass over memory)."""
    import torch

    m = torch.amax(x, dim=-1, keepdim=True)   # kernel 1: read x, write one value per row
    y = torch.sub(x, m)                       # kernel 2: read x and m, write y
    y = torch.exp(y)                          # kernel 3: read y, write y
    s = torch.sum(y, dim=-1, keepdim=True)    # kernel 4: read y, write one value per row
    return torch.div(y, s)                    # kernel 5: read y and s, write the result


def fused_softmax(x):
    """Row-wise softmax of ``x`` in one kernel (``torch.softmax``)."""
    import torch

    return torch.softmax(x, dim=-1)


def measure_softmax_fusion(sizes_bytes, *, cols: int = 4096, device: str = "cpu",
                           budget_s: float = 0.15, seed: int = 0) -> list[dict]:
    """Median times of :func:`unfused_softmax` and :func:`fused_softmax` per input size.

    Each input is a float32 matrix of ``cols`` columns and ``size // (4 cols)`` rows, drawn
    from a standard normal; both results are checked against float64 before timing. On a CPU
    torch runs on one thread, so the time is that of one core's memory traffic and not of
    threads waiting for each other on a shared machine.
    """
    from contextlib import nullcontext

    import torch

    from .probes import threads

    if cols < 1:
        raise ValueError(f"cols must be >= 1, got {cols}")
    gen = torch.Generator().manual_seed(seed)
    out = []
    with nullcontext() if device.startswith("cuda") else threads(1):
        out = _measure(sizes_bytes, cols, device, budget_s, gen)
    return out


def _measure(sizes_bytes, cols, device, budget_s, gen):
    import torch

    out = []
    for size in sizes_bytes:
        rows = int(size) // (4 * cols)
        if rows < 1:
            raise ValueError(f"size {size} is smaller than one row of {cols} floats")
        x = torch.randn(rows, cols, generator=gen).to(device)
        want = torch.softmax(x.double(), dim=-1)
        entry = {"rows": rows, "cols": cols, "bytes": 4.0 * rows * cols}
        for name, fn in (("unfused", unfused_softmax), ("fused", fused_softmax)):
            err = float((fn(x).double() - want).abs().max())
            if not err < 1e-5:
                raise AssertionError(f"{name} softmax: max error {err:.3g} against float64")
            r = bench(lambda fn=fn: fn(x), device=device, name=f"{name}_softmax",
                      warmup_s=0.02, budget_s=budget_s, env=False)
            entry[f"{name}_s"] = r.median_s
            entry[f"{name}_spread"] = r.spread
        out.append(entry)
    return out
