"""Sanity bounds for CPU probes: is a measured effect really there, or noise?

A probe on a shared or virtualised machine can come out backwards: the chase through a big
buffer faster than through a small one, a cold read no slower than a warm one, a sweep that
never reached DRAM. A page must not print such a result as if it showed the effect (by
clamping a negative difference to a tiny positive one, or glueing a NaN). These helpers turn
two measurements into one boolean, which the page uses to pick the sentence it glues
(conventions, section 16: a probe that cannot show its effect says so).

* :func:`finite_positive`: every value is a finite number above zero;
* :func:`clearly_less`: ``a < b`` by more than the measurements' own noise (with their
  :class:`~helpers.bench.timing.BenchResult`\\ s: the median's confidence intervals, or the
  p20-p80 band, do not overlap; without them, a relative margin).

Introduced in {ref}`sec-dram-and-numa`; used by the probe pages of the foundations.

Used by many pages, among them: chapters/gemm.md, chapters/inference-metrics.md,
foundations/containers-and-cgroups.md, foundations/dram-and-numa.md,
foundations/memory-hierarchy.md, foundations/networking.md.
"""

from __future__ import annotations

import math

from .timing import BenchResult

__all__ = ["finite_positive", "clearly_less"]


def finite_positive(*values: float) -> bool:
    """True if every value is a finite number > 0 (a NaN, an infinity, zero or less is not).

    >>> finite_positive(1.0, 2e-9), finite_positive(1.0, float("nan")), finite_positive(0.0)
    (True, False, False)
    """
    try:
        return bool(values) and all(math.isfinite(float(v)) and float(v) > 0 for v in values)
    except (TypeError, ValueError):
        return False


def _band(r: BenchResult) -> tuple[float, float]:
    if r.ci_low_s is not None and r.ci_high_s is not None:
        return float(r.ci_low_s), float(r.ci_high_s)
    return float(r.p20_s), float(r.p80_s)


def clearly_less(a: float, b: float, *, a_result: BenchResult | None = None,
                 b_result: BenchResult | None = None, margin: float = 0.05) -> bool:
    """True if ``a < b`` beyond noise: both finite and positive, ``a < (1 - margin) b``, and,
    where both :class:`BenchResult`\\ s are given, the upper end of ``a``'s band (the median's
    confidence interval, else p20-p80) below the lower end of ``b``'s, scaled by ``a / a_result.median_s`` and ``b / b_result.median_s``
    so that per-step values can be compared with per-call results.

    ``margin`` is a fraction in [0, 1).

    >>> clearly_less(100e-9, 200e-9), clearly_less(100e-9, 102e-9), clearly_less(2.0, 1.0)
    (True, False, False)
    >>> clearly_less(1.0, float("nan"))
    False
    """
    if not 0 <= margin < 1 or not math.isfinite(margin):
        raise ValueError(f"margin must be in [0, 1), got {margin!r}")
    if not finite_positive(a, b) or not a < (1 - margin) * b:
        return False
    if a_result is not None and b_result is not None:
        if not finite_positive(a_result.median_s, b_result.median_s):
            return False
        _, a_hi = _band(a_result)
        b_lo, _ = _band(b_result)
        return a_hi * (a / a_result.median_s) < b_lo * (b / b_result.median_s)
    return True

