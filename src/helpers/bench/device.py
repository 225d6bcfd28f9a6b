"""Device measurements the lab runners share: inputs, the copy rate, and CUDA-graph timing.

Three mechanisms that several runners need, each written once here:

* :func:`uniform`: a seeded tensor of values in [0.5, 1.5) (never zero, so a check of a
  result against a reference can fail, and sums stay well conditioned), drawn on the CPU from
  a ``torch.Generator`` so the same seed gives the same values on every device, then moved to
  the device and cast to the dtype asked for;
* :func:`copy_rate`: the device's copy rate, ``dst.copy_(src)`` on a buffer, checked before it
  is timed, counting the bytes read plus the bytes written (the STREAM "copy" convention,
  McCalpin 1995); a lab reports its memory-bound kernels as a fraction of it;
* :func:`capture_graph`, :func:`graph_bench`, :func:`graph_calls` and :func:`per_call`:
  ``calls`` back-to-back calls of a function captured once in a ``torch.cuda.CUDAGraph``
  (after a warm-up on a side stream, as PyTorch's CUDA-graph documentation prescribes) and the
  graph replayed under :func:`~helpers.bench.timing.bench`. A replay launches every captured
  kernel at once, so no host (Python, launcher) time sits between the calls: what is timed is
  the kernels themselves, divided back to one call.

Each measurement takes ``bench_fn``, the benchmark to time with: :func:`helpers.bench.bench`
by default, or a lab's ``LAB.bench`` (its tier's budget and warm-up), called as
``bench_fn(fn, device=..., name=..., **bench_kwargs)``.

>>> x = uniform((2, 3), 0)
>>> tuple(x.shape), str(x.dtype), bool(((x >= 0.5) & (x < 1.5)).all())
((2, 3), 'torch.float32', True)
>>> per_call_s = [2e-6, 1e-5, 1e-3]
>>> [graph_calls(s) for s in per_call_s]
[64, 64, 2]

The lab runners and :mod:`helpers.profiling.record` use it; pages reach it through them.

Library only: no page imports it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any, Callable

from .timing import BenchResult, bench, sync

__all__ = ["uniform", "CopyRate", "copy_rate", "capture_graph", "graph_calls", "per_call",
           "graph_bench", "GRAPH_TARGET_S", "GRAPH_MOST_CALLS"]

#: Target GPU time of one replay of a captured batch of calls (s): long enough that the
#: event pair around a replay is a small part of it.
GRAPH_TARGET_S = 2e-3
#: The most calls captured in one graph (a capture holds every call's kernels and buffers).
GRAPH_MOST_CALLS = 64


def uniform(shape, gen, *, device: str = "cpu", dtype=None):
    """A float tensor of ``shape`` with values in [0.5, 1.5), drawn from ``gen``.

    ``gen`` is a ``torch.Generator`` (its state advances, so successive calls differ) or an
    integer seed (a fresh generator: the same seed gives the same tensor). The values are drawn
    in fp32 on the CPU, so they do not depend on the device, then moved to ``device`` and cast
    to ``dtype`` (fp32 if None).

    >>> import torch
    >>> bool(torch.equal(uniform(4, 7), uniform(4, 7))), str(uniform(4, 7, dtype=torch.bfloat16).dtype)
    (True, 'torch.bfloat16')
    """
    import torch

    if isinstance(gen, bool) or not isinstance(gen, (numbers.Integral, torch.Generator)):
        raise ValueError(f"gen must be a torch.Generator or an integer seed, got {gen!r}")
    if isinstance(gen, numbers.Integral):
        if gen < 0:
            raise ValueError(f"gen (a seed) must be >= 0, got {gen!r}")
        gen = torch.Generator().manual_seed(int(gen))
    x = torch.rand(shape, generator=gen, dtype=torch.float32) + 0.5
    return x.to(device=device, dtype=dtype or torch.float32)


@dataclass(frozen=True)
class CopyRate:
    """One measured copy: its buffer, the bytes it moves and the rate at the median time."""

    buffer_bytes: float  # bytes of the source (and of the destination)
    n_bytes: float  # bytes moved per copy: read plus written, 2 x buffer_bytes
    bytes_per_s: float  # n_bytes over the median time
    result: BenchResult


def copy_rate(buffer_bytes: float, *, device: str = "cpu", seed: int = 0, name: str = "copy",
              bench_fn: Callable[..., BenchResult] | None = None, **bench_kwargs) -> CopyRate:
    """Time ``dst.copy_(src)`` on an fp32 buffer of ``buffer_bytes`` and return its rate.

    The source comes from :func:`uniform` (``seed``); the destination is poisoned with NaN, one
    copy is made and compared with the source for exact equality before anything is timed. The
    counted traffic is the bytes read plus the bytes written, ``2 x buffer_bytes`` per call.
    On a GPU, pass a buffer far larger than the L2 cache, so the rate is the memory's. The
    buffer holds ``buffer_bytes // 4`` elements (the bytes are rounded down to whole elements).

    >>> r = copy_rate(1 << 16, budget_s=0.01, warmup_s=0.0, env=False)
    >>> r.buffer_bytes, r.n_bytes, r.bytes_per_s > 0
    (65536.0, 131072.0, True)
    """
    import torch

    if not (isinstance(buffer_bytes, (int, float)) and math.isfinite(buffer_bytes)
            and buffer_bytes >= 4):
        raise ValueError(f"buffer_bytes must be a finite number >= 4, got {buffer_bytes!r}")
    src = uniform(int(buffer_bytes) // 4, seed, device=device)
    dst = torch.full_like(src, float("nan"))
    dst.copy_(src)
    sync(device)
    if not torch.equal(dst, src):
        raise AssertionError("copy: the destination differs from the source")
    r = (bench_fn or bench)(lambda: dst.copy_(src), device=device, name=name, **bench_kwargs)
    moved = 2.0 * src.nbytes
    return CopyRate(buffer_bytes=float(src.nbytes), n_bytes=moved, bytes_per_s=r.rate(moved),
                    result=r)


def graph_calls(per_call_s: float, *, target_s: float = GRAPH_TARGET_S,
                most: int = GRAPH_MOST_CALLS) -> int:
    """How many calls of ``per_call_s`` seconds to capture so one replay lasts ``target_s``:
    ``ceil(target_s / per_call_s)``, at least 1 and at most ``most``.

    >>> graph_calls(1e-4), graph_calls(1.0), graph_calls(1e-9, most=8)
    (20, 1, 8)
    """
    if not (math.isfinite(per_call_s) and per_call_s > 0):
        raise ValueError(f"per_call_s must be a finite number > 0, got {per_call_s!r}")
    if not (math.isfinite(target_s) and target_s > 0):
        raise ValueError(f"target_s must be a finite number > 0, got {target_s!r}")
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise ValueError(f"most must be an integer >= 1, got {most!r}")
    return int(max(1, min(most, math.ceil(target_s / per_call_s))))


def per_call(result: BenchResult, calls: int) -> BenchResult:
    """``result`` of a repetition that made ``calls`` calls, as the time of one call.

    Every per-repetition statistic and sample is divided by ``calls`` and ``number`` (calls per
    repetition) is multiplied by it, as :func:`~helpers.bench.timing.bench` reports a
    repetition of ``number`` calls; ``first_call_s`` stays the first repetition's whole time
    (it includes the capture's cold start) and the spread, a ratio, is unchanged.
    """
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be an integer >= 1, got {calls!r}")

    def scale(v):
        return None if v is None else v / calls

    return replace(
        result, number=result.number * calls, median_s=scale(result.median_s),
        mean_s=scale(result.mean_s), min_s=scale(result.min_s), max_s=scale(result.max_s),
        p20_s=scale(result.p20_s), p80_s=scale(result.p80_s), ci_low_s=scale(result.ci_low_s),
        ci_high_s=scale(result.ci_high_s),
        samples_s=tuple(v / calls for v in result.samples_s),
        warmup_samples_s=tuple(v / calls for v in result.warmup_samples_s))


def capture_graph(fn: Callable[[], Any], *, device: str, calls: int = 1,
                  warmup_calls: int = 1) -> tuple[Any, Any]:
    """``calls`` back-to-back calls of ``fn`` captured in one ``torch.cuda.CUDAGraph``.

    ``fn`` is first called ``warmup_calls`` times on a side stream (lazy initialisation,
    workspace allocation and autotuning must not happen inside a capture), then captured.
    Returns ``(graph, out)``: ``out`` is what the last captured call returned, whose tensors
    are the graph's output buffers (each replay rewrites them). Capture records the kernels
    without running them; ``graph.replay()`` runs them. Raises what the capture raises (for
    example an operation that synchronizes with the host).
    """
    import torch

    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be an integer >= 1, got {calls!r}")
    if isinstance(warmup_calls, bool) or not isinstance(warmup_calls, int) or warmup_calls < 0:
        raise ValueError(f"warmup_calls must be an integer >= 0, got {warmup_calls!r}")
    if not (isinstance(device, str) and device.startswith("cuda")):
        raise ValueError(f"device must be a CUDA device ('cuda' or 'cuda:N'), got {device!r}")
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(warmup_calls):
            fn()
    torch.cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    graph = torch.cuda.CUDAGraph()
    out = None
    with torch.cuda.graph(graph):
        for _ in range(calls):
            out = fn()
    torch.cuda.synchronize(device)
    return graph, out


def graph_bench(fn: Callable[[], Any], *, device: str, calls: int = 1, name: str = "graph",
                warmup_calls: int = 1, bench_fn: Callable[..., BenchResult] | None = None,
                **bench_kwargs) -> BenchResult:
    """The GPU time of one call of ``fn``, from ``calls`` calls captured in one CUDA graph
    (:func:`capture_graph`) and the graph replayed under ``bench_fn``; :func:`per_call` of
    that result. Choose ``calls`` with :func:`graph_calls` from a plain time of ``fn``.
    """
    graph, _ = capture_graph(fn, device=device, calls=calls, warmup_calls=warmup_calls)
    try:
        r = (bench_fn or bench)(graph.replay, device=device, name=name, **bench_kwargs)
    finally:
        del graph
    return per_call(r, calls)
