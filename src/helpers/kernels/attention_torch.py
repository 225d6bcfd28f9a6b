"""Attention in plain torch, the attention lab's two reference paths next to the Triton kernel.

* :func:`naive_attention`: ``torch.matmul``, (mask), ``torch.softmax``, ``torch.matmul``, with
  the ``N x N`` score and probability matrices written to memory (standard attention, Dao et
  al. 2022, Algorithm 0);
* :func:`sdpa_attention`: ``torch.nn.functional.scaled_dot_product_attention`` with the
  backend torch picks (not forced).

Neither imports Triton, so both run on any CPU. With them, what the lab records of SDPA's
choice: :func:`sdpa_kernels` (the kernels one call ran, from the profiler) and
:func:`sdpa_backends` (the backends torch has enabled).

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> q, k, v = (torch.randn(1, 2, 8, 16, generator=g) for _ in range(3))
>>> bool(torch.allclose(naive_attention(q, k, v, causal=True),
...                     sdpa_attention(q, k, v, causal=True), atol=1e-5))
True

Library only: no page imports it.
"""

from __future__ import annotations

import math

__all__ = ["naive_attention", "sdpa_attention", "kernel_names", "sdpa_kernels", "sdpa_backends"]


def naive_attention(q, k, v, *, causal: bool = False, mask=None):
    """Standard attention with the scores materialised: matmul, (mask), softmax, matmul.

    ``mask`` (optional) is a precomputed ``N x N`` boolean of the positions to hide.
    """
    import torch

    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        if mask is None:
            n = q.shape[-2]
            mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def sdpa_attention(q, k, v, *, causal: bool = False):
    """``torch.nn.functional.scaled_dot_product_attention`` with the backend torch chooses."""
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def kernel_names(events, limit: int = 8) -> list[str]:
    """Names of the device kernels among profiler events (``key_averages()`` rows), longest
    first. A row is a kernel when its ``device_type`` is CUDA; the CUDA activity also records
    host-side runtime calls (``cudaLaunchKernel``), whose device type is the CPU, and copies and
    fills, which name no backend. (Filtering by name prefix, as the first version did, also
    dropped cuDNN's kernels, whose names begin with ``cudnn``.)"""
    from torch.autograd import DeviceType

    def device_time(e):
        return getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0) or 0

    kernels = [e for e in events
               if getattr(e, "device_type", None) == DeviceType.CUDA
               and not e.key.startswith(("Memset", "Memcpy"))]
    kernels.sort(key=lambda e: -device_time(e))
    return [e.key[:120] for e in kernels][:limit]


def sdpa_kernels(q, k, v, causal: bool) -> list[str]:
    """Names of the GPU kernels one SDPA call runs (from the profiler), or ["unknown: ..."]."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile

        sdpa_attention(q, k, v, causal=causal)  # warm: the first call may pick or build a plan
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            sdpa_attention(q, k, v, causal=causal)
            torch.cuda.synchronize()
        names = kernel_names(prof.key_averages())
        return names or ["unknown: the profiler recorded no device kernel"]
    except Exception as exc:  # the profiler is optional evidence; never fail the run for it
        return [f"unknown: {type(exc).__name__}: {str(exc)[:100]}"]


def sdpa_backends() -> dict:
    """Which SDPA backends torch has enabled (it picks among them per call)."""
    import torch

    out = {}
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        fn = getattr(torch.backends.cuda, f"{name}_sdp_enabled", None)
        if fn is not None:
            out[name] = bool(fn())
    return out
