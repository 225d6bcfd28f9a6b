"""Scans written the parallel way, run on a CPU with NumPy: one vectorized pass per step.

Each function performs exactly the additions its algorithm's work counts
(:mod:`helpers.models.parallel_patterns`), one NumPy operation per parallel step, so on one
core its time follows the work: the page "Parallel reduction, scan and histograms" times them
against ``np.cumsum``, the sequential loop.

>>> import numpy as np
>>> blelloch_scan(np.array([3, 1, 7, 0, 4, 1, 6, 3])).tolist()
[0, 3, 4, 11, 11, 15, 16, 22]
>>> hillis_steele_scan(np.array([3, 1, 7, 0])).tolist()
[3, 4, 11, 11]

Used by: chapters/reduction-scan-histogram.md.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hillis_steele_scan", "blelloch_scan"]


def _vector(x) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {a.shape}")
    return a


def hillis_steele_scan(x) -> np.ndarray:
    """Inclusive scan by step doubling: at step d every element adds the one 2^d to its left."""
    a = _vector(x).copy()
    offset = 1
    while offset < a.size:
        a[offset:] = a[offset:] + a[:-offset]  # the right side is evaluated first: one step
        offset *= 2
    return a


def blelloch_scan(x) -> np.ndarray:
    """Exclusive scan by Blelloch's up-sweep and down-sweep (padded to a power of two)."""
    x = _vector(x)
    n = x.size
    size = 1 << max(0, (n - 1).bit_length())
    a = np.zeros(size, dtype=x.dtype)
    a[:n] = x
    d = 1
    while d < size:  # up-sweep: a reduction tree, partial sums kept in place
        a[2 * d - 1::2 * d] += a[d - 1::2 * d]
        d *= 2
    a[-1] = 0
    d = size // 2
    while d >= 1:  # down-sweep: each node hands its prefix to the left, adds the left's sum
        left = a[d - 1::2 * d].copy()
        a[d - 1::2 * d] = a[2 * d - 1::2 * d]
        a[2 * d - 1::2 * d] += left
        d //= 2
    return a[:n]
