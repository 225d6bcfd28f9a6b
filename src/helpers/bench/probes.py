"""CPU measurement kernels for the roofline of the machine a reader runs the book on.

Each probe builds seeded, non-zero inputs, checks its kernel's result against an independent
reference (float64 NumPy, or exact equality for a copy) *before* timing, then times it with
:func:`helpers.bench.bench` and returns a :class:`ProbeResult` that knows how many FLOP and
how many bytes one call performs and moves:

* :func:`copy_bandwidth`: ``dst.copy_(src)``, counting the bytes read plus the bytes
  written (the STREAM "copy" convention: 2 x 4 bytes per fp32 element);
* :func:`read_bandwidth`: ``x.sum()``, a read-only stream (4 bytes and 1 FLOP per element);
* :func:`matmul_rate`: a square fp32 matrix product, ``2 n^3`` FLOP: the compute roof;
* :func:`batched_gemv`: ``W @ X`` with a large weight matrix and a few columns, the shape
  of one decode step of a language model; its arithmetic intensity is about ``batch / 2``
  FLOP/byte in fp32, so a sweep over ``batch`` walks along the roofline.

Threads: torch kernels use :func:`usable_cores` threads (the cores this process may run on),
set for the duration of a probe and restored afterwards. The book's reference notebooks run
with ``OMP_NUM_THREADS=1``; the probes override it because a roofline measured on one core of
several would not be this machine's.

Introduced in {ref}`sec-performance-models`.

References
----------
McCalpin, J. D. (1995), "Memory bandwidth and machine balance in current high performance
computers", IEEE TCCA Newsletter: the STREAM kernels and their byte-counting convention.

Used by: chapters/gemm.md, chapters/gpu-architecture.md, chapters/memory-optimization.md,
chapters/performance-models.md, foundations/cpu-architecture.md, foundations/start-here.md.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .device import uniform  # fp32 in [0.5, 1.5): never zero, sums well conditioned
from .env import usable_cores
from .timing import BenchResult, bench

__all__ = ["ProbeResult", "threads", "copy_bandwidth", "read_bandwidth", "matmul_rate",
           "make_weights", "batched_gemv"]

_FP32_BYTES = 4.0


@dataclass(frozen=True)
class ProbeResult:
    """One probe's work per call and its timing. Rates use the median time."""

    name: str
    flop: float  # FLOP per call
    bytes_moved: float  # bytes per call, as counted by the probe (read + written)
    n_threads: int
    result: BenchResult

    @property
    def seconds(self) -> float:
        """Median time of one call (s)."""
        return self.result.median_s

    @property
    def flop_per_s(self) -> float:
        """FLOP per second at the median time."""
        return self.result.rate(self.flop)

    @property
    def bytes_per_s(self) -> float:
        """Counted bytes per second at the median time."""
        return self.result.rate(self.bytes_moved)

    @property
    def intensity_flop_per_byte(self) -> float:
        """FLOP per counted byte."""
        return self.flop / self.bytes_moved


@contextlib.contextmanager
def threads(n: int | None = None):
    """Run torch kernels on ``n`` threads (default: every usable core), then restore the setting."""
    import torch

    n = usable_cores() if n is None else int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def _n_elements(n_bytes: float, name: str = "n_bytes") -> int:
    n = int(float(n_bytes) // _FP32_BYTES)
    if not n >= 1024:
        raise ValueError(f"{name} must be at least 4096 bytes, got {n_bytes!r}")
    return n


def _bench(fn, name: str, budget_s: float) -> BenchResult:
    return bench(fn, device="cpu", name=name, warmup_s=min(0.1, budget_s / 4),
                 budget_s=budget_s, min_reps=5)


def copy_bandwidth(n_bytes: float, *, budget_s: float = 0.5, seed: int = 0,
                   n_threads: int | None = None) -> ProbeResult:
    """Copy ``n_bytes`` of fp32 from one buffer to another; count read + written bytes.

    The counted traffic is ``2 * n_bytes`` per call. A CPU that allocates a cache line
    before writing it also reads the destination, so the traffic the memory really carries
    can be up to 1.5 times the counted one; like STREAM, the probe reports the counted rate.

    >>> r = copy_bandwidth(1 << 20, budget_s=0.02)
    >>> r.bytes_moved, r.flop
    (2097152.0, 0.0)
    """
    import torch

    n = _n_elements(n_bytes)
    src = uniform(n, seed)
    dst = torch.empty_like(src)
    with threads(n_threads) as used:
        dst.copy_(src)
        if not torch.equal(dst, src):
            raise RuntimeError("copy probe: destination differs from source")
        result = _bench(lambda: dst.copy_(src), "copy", budget_s)
    return ProbeResult("copy", 0.0, 2 * n * _FP32_BYTES, used, result)


def read_bandwidth(n_bytes: float, *, budget_s: float = 0.5, seed: int = 0,
                   n_threads: int | None = None) -> ProbeResult:
    """Sum ``n_bytes`` of fp32: a read-only stream, 1 FLOP per 4 bytes read.

    >>> r = read_bandwidth(1 << 20, budget_s=0.02)
    >>> r.bytes_moved, r.intensity_flop_per_byte
    (1048576.0, 0.25)
    """
    n = _n_elements(n_bytes)
    x = uniform(n, seed)
    reference = float(np.sum(x.numpy(), dtype=np.float64))
    with threads(n_threads) as used:
        got = float(x.sum())
        if not abs(got - reference) <= 1e-4 * abs(reference):
            raise RuntimeError(f"read probe: sum {got!r} differs from float64 {reference!r}")
        result = _bench(lambda: x.sum(), "read", budget_s)
    return ProbeResult("read", float(n), n * _FP32_BYTES, used, result)


def _check_rows(got, a_rows: np.ndarray, b: np.ndarray, name: str) -> None:
    """Compare rows of a float32 product against float64 NumPy."""
    want = a_rows.astype(np.float64) @ b.astype(np.float64)
    err = np.max(np.abs(got.numpy().astype(np.float64) - want) / np.abs(want))
    if not err <= 1e-4:
        raise RuntimeError(f"{name} probe: relative error {err:.3g} against float64")


def matmul_rate(n: int, *, budget_s: float = 0.5, seed: int = 0,
                n_threads: int | None = None) -> ProbeResult:
    """Multiply two ``n`` x ``n`` fp32 matrices: ``2 n^3`` FLOP, ``3 n^2`` elements moved at least.

    >>> r = matmul_rate(64, budget_s=0.02)
    >>> r.flop
    524288.0
    """
    import torch

    n = int(n)
    if n < 16:
        raise ValueError(f"n must be >= 16, got {n}")
    a, b = uniform((n, n), seed), uniform((n, n), seed + 1)
    with threads(n_threads) as used:
        c = torch.mm(a, b)
        rows = np.random.default_rng(seed).choice(n, size=min(n, 8), replace=False)
        _check_rows(c[rows], a.numpy()[rows], b.numpy(), "matmul")
        result = _bench(lambda: torch.mm(a, b), f"matmul{n}", budget_s)
    return ProbeResult(f"matmul {n}", 2.0 * n**3, 3.0 * n * n * _FP32_BYTES, used, result)


def make_weights(n_rows: int, n_cols: int, *, seed: int = 0):
    """A seeded fp32 weight matrix for :func:`batched_gemv` (values in [0.5, 1.5))."""
    if int(n_rows) < 16 or int(n_cols) < 16:
        raise ValueError(f"n_rows and n_cols must be >= 16, got {n_rows}, {n_cols}")
    return uniform((int(n_rows), int(n_cols)), seed)


def batched_gemv(weights, batch: int, *, budget_s: float = 0.3, seed: int = 1,
                 n_threads: int | None = None) -> ProbeResult:
    """``weights @ X`` for an fp32 ``X`` of ``batch`` columns: one decode step's matrix product.

    FLOP: ``2 * rows * cols * batch``. Counted bytes: the weights, ``X`` and the result,
    once each (:func:`helpers.models.roofline.matmul_min_bytes`).

    >>> w = make_weights(256, 128)
    >>> r = batched_gemv(w, 4, budget_s=0.02)
    >>> r.flop, r.bytes_moved
    (262144.0, 137216.0)
    """
    import torch

    from ..models.roofline import matmul_flop, matmul_min_bytes

    if weights.dtype != torch.float32 or weights.ndim != 2:
        raise ValueError("weights must be a 2-D fp32 tensor (see make_weights)")
    if isinstance(batch, bool) or int(batch) != batch or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    rows, cols = weights.shape
    x = uniform((cols, int(batch)), seed)
    with threads(n_threads) as used:
        y = weights @ x
        pick_rows = np.random.default_rng(seed).choice(rows, size=min(rows, 8), replace=False)
        _check_rows(y[pick_rows], weights.numpy()[pick_rows], x.numpy(), "batched_gemv")
        result = _bench(lambda: weights @ x, f"gemv_b{batch}", budget_s)
    return ProbeResult(f"batched GEMV, batch {batch}", matmul_flop(rows, int(batch), cols),
                       matmul_min_bytes(rows, int(batch), cols, _FP32_BYTES), used, result)
