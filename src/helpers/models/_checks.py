"""Argument checks shared by every model: one wording for every ``ValueError``.

Each check returns the value converted (float or int) and raises ``ValueError`` naming the
argument, the value received and the valid range, e.g.
``n_params must be a finite number in (0, inf), got -1.0``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["positive", "positive_array", "fraction", "positive_int"]


def positive(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a float, finite and > 0 (>= 0 with ``allow_zero``)."""
    valid = "[0, inf)" if allow_zero else "(0, inf)"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}") from None
    if not (math.isfinite(v) and (v >= 0 if allow_zero else v > 0)):
        raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}")
    return v


def positive_array(name: str, value, *, allow_zero: bool = False):
    """Like :func:`positive` for a scalar or an array (checked element-wise); the error names
    the first bad element. Returns a float for a scalar, a float64 array otherwise."""
    arr = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
    if np.any(bad):
        first = arr[bad].flat[0] if arr.ndim else float(arr)
        valid = "[0, inf)" if allow_zero else "(0, inf)"
        raise ValueError(f"{name} must be a finite number in {valid}, got {float(first)!r}")
    return float(arr) if arr.ndim == 0 else arr


def fraction(name: str, value, *, allow_one: bool = True) -> float:
    """``value`` as a float in [0, 1] ([0, 1) without ``allow_one``)."""
    hi = "1]" if allow_one else "1)"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a fraction in [0, {hi}, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or v > 1 or (v == 1 and not allow_one):
        raise ValueError(f"{name} must be a fraction in [0, {hi}, got {value!r}")
    return v


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``; integral floats (``4.0``) are accepted, bools not."""
    ok = not isinstance(value, bool)
    if ok:
        try:
            ok = float(value).is_integer() and int(value) >= minimum
        except (TypeError, ValueError, OverflowError):
            ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
