"""Timing one dot product three ways on this machine ({ref}`sec-simd-vectorization`).

:func:`time_dot` times ``sum(x_i * y_i)`` over ``n`` elements as a Python loop over lists (one
element per interpreted iteration), as one NumPy call (compiled, vectorised loops in BLAS), or
as one PyTorch call, each checked against a float64 reference before it is timed.
:func:`numpy_simd_features` lists the SIMD extensions NumPy detected at run time.

Used by: foundations/simd-vectorization.md.
"""

from __future__ import annotations

import numpy as np

from .timing import BenchResult, bench

__all__ = ["KINDS", "make_operands", "time_dot", "numpy_simd_features"]

KINDS = ("python", "numpy", "torch")


def make_operands(n: int, dtype: str = "float32", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two random vectors of ``n`` elements in (-1, 1) (never all zeros)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, n).astype(dtype), rng.uniform(-1, 1, n).astype(dtype))


def time_dot(kind: str, n: int, *, dtype: str = "float32", budget_s: float = 0.1,
             seed: int = 0) -> BenchResult:
    """Time one dot product of ``n`` elements computed by ``kind`` (one of :data:`KINDS`)."""
    a, b = make_operands(n, dtype, seed)
    ref = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    if kind == "python":
        la, lb = a.tolist(), b.tolist()

        def fn():
            s = 0.0
            for x, y in zip(la, lb):
                s += x * y
            return s
    elif kind == "numpy":
        def fn():
            return np.dot(a, b)
    elif kind == "torch":
        import torch

        ta, tb = torch.from_numpy(a), torch.from_numpy(b)

        def fn():
            return torch.dot(ta, tb)

        # One thread, like the other two: the page compares vector units, not cores, and on a
        # busy two-core machine PyTorch's thread pool fights NumPy's for the cores.
        saved = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return _bench(fn, kind, n, dtype, budget_s, ref)
        finally:
            torch.set_num_threads(saved)
    else:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return _bench(fn, kind, n, dtype, budget_s, ref)


def _bench(fn, kind: str, n: int, dtype: str, budget_s: float, ref: float) -> BenchResult:
    tol = 1e-3 * (1 + abs(ref)) * max(1.0, n / 1e4) if dtype != "float64" else 1e-9 * n

    def check(got):
        if abs(float(got) - ref) > tol:
            raise AssertionError(f"{kind} dot is {float(got)!r}, expected {ref!r}")

    number = 1 if kind == "python" else max(1, int(2e5 // max(n, 1)))
    return bench(fn, name=f"{kind} dot n={n} {dtype}", warmup_s=0.01, budget_s=budget_s,
                 number=number, check=check, env=False)


def numpy_simd_features() -> list[str]:
    """The SIMD extensions NumPy found on this CPU at import (empty if it does not say)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # older NumPy
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return []
    return sorted(k for k, v in feats.items() if v)
