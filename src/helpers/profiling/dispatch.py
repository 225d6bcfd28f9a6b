"""What one call of a PyTorch function dispatches and launches: aten operators and CUDA kernels.

:func:`count_ops` counts the operators PyTorch's dispatcher runs (a
:class:`~torch.utils._python_dispatch.TorchDispatchMode` that counts each call; the same on a
CPU and a GPU). On a launch-bound GPU each operator costs about the same host and launch time
whatever its size, so the ratio of two models' counts models the ratio of their step times.
:func:`kernel_profile` asks the CUDA profiler (:mod:`torch.profiler`) which kernels one call
runs and how long they take on the device, split into matrix multiplies and the rest.

>>> import torch
>>> x = torch.ones(3)
>>> count_ops(lambda: (x + 1) * 2)
2
>>> kernel_profile(lambda: x + 1, "cpu") is None
True

Library only: no page imports it.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["count_ops", "MATMUL_KERNEL_MARKS", "kernel_profile", "kernels_per_step"]


def count_ops(fn: Callable[[], object]) -> int:
    """Operators (aten calls) that ``fn()`` dispatches: on a launch-bound GPU each costs about
    the same host and launch time whatever its size, so their ratio models ``c``."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            _Count.n += 1
            return func(*args, **(kwargs or {}))

    with _Count():
        fn()
    return _Count.n


#: Substrings of a kernel's name that mark it as a matrix multiply (cuBLAS, cuBLASLt, CUTLASS).
MATMUL_KERNEL_MARKS = ("gemm", "gemv", "nvjet", "cutlass", "xmma", "splitk")


def kernel_profile(step, device: str) -> dict | None:
    """What one call of ``step`` runs on the device (CUDA profiler): the number of kernels, the
    sum of their durations, and both split into matrix multiplies (names with one of
    :data:`MATMUL_KERNEL_MARKS`) and everything else, plus the five costliest kernels. None on a
    CPU or if the profiler is unavailable; the profile is evidence, not a requirement."""
    if not device.startswith("cuda"):
        return None
    try:
        import torch
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        rows = []
        for e in prof.key_averages():
            if getattr(e, "device_type", None) != DeviceType.CUDA:
                continue
            us = getattr(e, "device_time_total", None)
            if us is None:
                us = getattr(e, "cuda_time_total", 0.0)
            rows.append((e.key, int(e.count), float(us) * 1e-6))
        out = {"kernels": sum(c for _, c, _ in rows), "kernel_time_s": sum(t for *_, t in rows)}
        for cls, keep in (("matmul", True), ("other", False)):
            sel = [r for r in rows
                   if any(m in r[0].lower() for m in MATMUL_KERNEL_MARKS) == keep]
            out[f"{cls}_kernels"] = sum(c for _, c, _ in sel)
            out[f"{cls}_time_s"] = sum(t for *_, t in sel)
        out["top"] = [{"name": k[:120], "count": c, "time_s": t}
                      for k, c, t in sorted(rows, key=lambda r: -r[2])[:5]]
        return out
    except Exception:  # the profile is evidence, not a requirement
        return None


def kernels_per_step(step, device: str) -> int | None:
    """Device kernels one call of ``step`` launches (:func:`kernel_profile`), None on a CPU or
    if the profiler is unavailable."""
    prof = kernel_profile(step, device)
    return None if prof is None else prof["kernels"]
