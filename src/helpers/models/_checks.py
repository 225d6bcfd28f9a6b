"""Argument checks shared by every model: one wording for every ``ValueError``.

Each check returns the value converted (float or int) and raises ``ValueError`` naming the
argument, the value received and the valid range, e.g.
``n_params must be a finite number in (0, inf), got -1.0``.

A number is a Python ``int`` or ``float`` or a numpy integer or floating scalar (or a 0-d
array of one). ``bool`` is not a number here, nor is a string, even a numeric one such as
``"1e12"``: both are refused as the wrong type, as are ``None`` and NaN.

Library only: no page imports it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["positive", "positive_array", "fraction", "positive_int", "real", "integer",
           "one_of", "boolean", "sequence", "same_length", "at_most", "has_attributes", "mapping",
           "real_array", "as_float", "finite_ratio"]


def _is_real(value) -> bool:
    """``value`` is an int/float/numpy real scalar (or 0-d real array), not a bool."""
    if isinstance(value, np.ndarray):  # 0-d (or one-element, as float() allowed) real arrays
        return value.size == 1 and value.dtype.kind in "iuf"
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        return False
    # numbers.Real covers int, float and numpy scalars; __float__ admits other real scalars
    # a page may hold (a 0-d torch tensor, a Fraction), whose float() is then checked
    return isinstance(value, numbers.Real) or hasattr(value, "__float__")


def as_float(value):
    """``value`` as a float, or None where it is not a real number (or too big for a float):
    for a model that words its own message but must refuse the wrong types like the rest.

    >>> as_float(np.int64(3)), as_float("3"), as_float(True)
    (3.0, None, None)
    """
    if not _is_real(value):
        return None
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError):
        return None


def positive(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a float, finite and > 0 (>= 0 with ``allow_zero``).

    >>> positive("bandwidth_bytes_per_s", 3.35e12)
    3350000000000.0
    >>> positive("bandwidth_bytes_per_s", "1e12")
    Traceback (most recent call last):
    ...
    ValueError: bandwidth_bytes_per_s must be a finite number in (0, inf), got '1e12'
    """
    valid = "[0, inf)" if allow_zero else "(0, inf)"
    v = as_float(value)
    if v is None or not (math.isfinite(v) and (v >= 0 if allow_zero else v > 0)):
        raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}")
    return v


def real(name: str, value, *, low: float = -math.inf, high: float = math.inf,
         allow_inf: bool = False) -> float:
    """``value`` as a float in [``low``, ``high``]: finite unless ``allow_inf`` (never NaN).

    >>> real("offset_s", -2)
    -2.0
    >>> real("offset_s", math.nan)
    Traceback (most recent call last):
    ...
    ValueError: offset_s must be a finite number in (-inf, inf), got nan
    """
    v = as_float(value)
    ok = v is not None and not math.isnan(v) and (allow_inf or math.isfinite(v)) \
        and low <= v <= high
    if not ok:
        lo = "(-inf" if low == -math.inf else f"[{low:g}"
        hi = "inf)" if high == math.inf else f"{high:g}]"
        what = "a number" if allow_inf else "a finite number"
        raise ValueError(f"{name} must be {what} in {lo}, {hi}, got {value!r}")
    return v


def positive_array(name: str, value, *, allow_zero: bool = False, allow_empty: bool = True):
    """Like :func:`positive` for a scalar or an array (checked element-wise); the error names
    the first bad element. Returns a float for a scalar, a float64 array otherwise.

    >>> positive_array("sizes_bytes", [1.0, 2.0])
    array([1., 2.])
    >>> positive_array("sizes_bytes", [1.0, None])
    Traceback (most recent call last):
    ...
    ValueError: sizes_bytes must be a finite number in (0, inf), got None
    """
    valid = "[0, inf)" if allow_zero else "(0, inf)"
    if value is None or isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}")
    if not isinstance(value, np.ndarray) and not _is_real(value):
        if not isinstance(value, Sequence) and not hasattr(value, "__array__"):
            raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}")
    raw = np.asarray(value)
    if isinstance(value, (list, tuple)):  # numpy reads [True, 2.0] as [1.0, 2.0]: look first
        for item in value:
            if isinstance(item, (bool, np.bool_)):
                raise ValueError(f"{name} must be a finite number in {valid}, got {item!r}")
    if raw.dtype.kind not in "iuf":
        for item in raw.ravel():  # object/str/bool arrays: name the first element of a wrong type
            if not _is_real(item):
                raise ValueError(f"{name} must be a finite number in {valid}, got {item!r}")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number in {valid}, got {value!r}") from None
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty, got {value!r}")
    bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
    if np.any(bad):
        first = arr[bad].flat[0] if arr.ndim else float(arr)
        raise ValueError(f"{name} must be a finite number in {valid}, got {float(first)!r}")
    return float(arr) if arr.ndim == 0 else arr


def fraction(name: str, value, *, allow_one: bool = True) -> float:
    """``value`` as a float in [0, 1] ([0, 1) without ``allow_one``).

    >>> fraction("utilization", True)
    Traceback (most recent call last):
    ...
    ValueError: utilization must be a fraction in [0, 1], got True
    """
    hi = "1]" if allow_one else "1)"
    v = as_float(value)
    if v is None or not math.isfinite(v) or v < 0 or v > 1 or (v == 1 and not allow_one):
        raise ValueError(f"{name} must be a fraction in [0, {hi}, got {value!r}")
    return v


MAX_INT = 2**53  # every model computes in float64: an integer above this is not exact there


def positive_int(name: str, value, *, minimum: int = 1, maximum: int | None = MAX_INT) -> int:
    """``value`` as an int >= ``minimum`` (and <= ``maximum``); integral floats (``4.0``) and
    numpy integers are accepted, bools and strings not.

    ``maximum`` bounds sizes whose computation would run for hours or overflow; the message
    states it. By default it is ``MAX_INT`` (2**53), the largest count a float64 holds exactly.

    >>> positive_int("ranks", np.int64(8))
    8
    >>> positive_int("servers", 10**9, maximum=10**6)
    Traceback (most recent call last):
    ...
    ValueError: servers must be an integer in [1, 1000000], got 1000000000
    """
    ok = too_big = False
    if _is_real(value):
        try:
            ok = float(value).is_integer() and int(value) >= minimum
            too_big = ok and maximum is not None and int(value) > maximum
        except (TypeError, ValueError, OverflowError):
            ok = False
    if not ok or too_big:
        valid = f"in [{minimum}, {maximum}]" if too_big else f">= {minimum}"
        raise ValueError(f"{name} must be an integer {valid}, got {value!r}")
    return int(value)


def integer(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int in [``minimum``, ``maximum``] (either end may be open: None).

    >>> integer("shift", -3)
    -3
    >>> integer("shift", 2.5)
    Traceback (most recent call last):
    ...
    ValueError: shift must be an integer, got 2.5
    """
    ok = _is_real(value)
    if ok:
        try:
            ok = float(value).is_integer()
            iv = int(value)
            ok = ok and (minimum is None or iv >= minimum) and (maximum is None or iv <= maximum)
        except (TypeError, ValueError, OverflowError):
            ok = False
    if not ok:
        if minimum is None and maximum is None:
            valid = ""
        elif maximum is None:
            valid = f" >= {minimum}"
        elif minimum is None:
            valid = f" <= {maximum}"
        else:
            valid = f" in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer{valid}, got {value!r}")
    return int(value)


def at_most(name: str, value, maximum: float, why: str = "") -> None:
    """Refuse ``value`` above ``maximum`` (a size the computation cannot handle in reasonable
    time or without overflow); ``why`` says what the limit protects.

    >>> at_most("tiles", 10**12, 10**8, "the order is built tile by tile")
    Traceback (most recent call last):
    ...
    ValueError: tiles must be at most 100000000 (the order is built tile by tile), got 1000000000000
    """
    if value > maximum:
        reason = f" ({why})" if why else ""
        raise ValueError(f"{name} must be at most {maximum:g}{reason}, got {value!r}"
                         if isinstance(maximum, float) else
                         f"{name} must be at most {maximum}{reason}, got {value!r}")


def one_of(name: str, value, choices):
    """``value`` if it is one of ``choices`` (compared by equality, same type), else a ValueError
    listing them.

    >>> one_of("precision", "bf16", ("fp32", "bf16"))
    'bf16'
    >>> one_of("precision", "fp7", ("fp32", "bf16"))
    Traceback (most recent call last):
    ...
    ValueError: precision must be one of ('fp32', 'bf16'), got 'fp7'
    """
    choices = tuple(choices)
    try:
        ok = any(type(value) is type(c) and value == c for c in choices) \
            or (isinstance(value, str) and value in [c for c in choices if isinstance(c, str)])
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {choices!r}, got {value!r}")
    return value


def boolean(name: str, value) -> bool:
    """``value`` as a bool; only ``True``/``False`` (and numpy bools) are accepted.

    >>> boolean("causal", None)
    Traceback (most recent call last):
    ...
    ValueError: causal must be True or False, got None
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def sequence(name: str, value, *, min_len: int = 0):
    """``value`` if it is a list, tuple or 1-d-or-more array with at least ``min_len`` items
    (a string, a mapping, a scalar or None is refused).

    >>> sequence("stage_times_s", [], min_len=1)
    Traceback (most recent call last):
    ...
    ValueError: stage_times_s must be a sequence of at least 1 item, got []
    """
    ok = (isinstance(value, np.ndarray) and value.ndim >= 1) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes)))
    if not ok or len(value) < min_len:
        items = "item" if min_len == 1 else "items"
        raise ValueError(f"{name} must be a sequence of at least {min_len} {items}, "
                         f"got {value!r}")
    return value


def same_length(name_a: str, a, name_b: str, b) -> int:
    """Refuse sequences ``a`` and ``b`` of different lengths; returns the common length.

    >>> same_length("a_s", [1, 2], "b_s", [1])
    Traceback (most recent call last):
    ...
    ValueError: a_s and b_s must have the same length, got 2 and 1
    """
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} must have the same length, "
                         f"got {len(a)} and {len(b)}")
    return len(a)


def has_attributes(name: str, value, attributes) -> None:
    """Refuse ``value`` unless it has every one of ``attributes`` (a spec or config object:
    checked by what the model reads from it, so any object with those fields works).

    >>> has_attributes("cfg", None, ("d_model", "n_layers"))
    Traceback (most recent call last):
    ...
    ValueError: cfg must be an object with attributes d_model, n_layers, got None
    """
    if value is None or isinstance(value, (bool, int, float, str, bytes)) \
            or not all(hasattr(value, a) for a in attributes):
        raise ValueError(f"{name} must be an object with attributes {', '.join(attributes)}, "
                         f"got {value!r}")


def mapping(name: str, value) -> None:
    """Refuse ``value`` unless it is a mapping (a dict of names to numbers).

    >>> mapping("speedups", 2.0)
    Traceback (most recent call last):
    ...
    ValueError: speedups must be a mapping of names to numbers, got 2.0
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping of names to numbers, got {value!r}")


def real_array(name: str, value, *, allow_nan: bool = False, allow_inf: bool = False,
               allow_neg_inf: bool = False) -> None:
    """Refuse ``value`` unless it is a real number or an array (list) of them: no None, bool,
    string or object, no NaN (unless ``allow_nan``), no +-inf (unless ``allow_inf``; -inf
    alone with ``allow_neg_inf``, e.g. a masked logit). The error names the first bad element.

    >>> real_array("block", [0.5, -math.inf], allow_neg_inf=True)
    >>> real_array("block", [0.5, math.nan])
    Traceback (most recent call last):
    ...
    ValueError: block must hold finite numbers in (-inf, inf), got nan
    """
    valid = "[-inf, inf]" if allow_inf else "[-inf, inf)" if allow_neg_inf else "(-inf, inf)"
    what = "numbers" if allow_inf else "finite numbers"
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must hold {what} in {valid}, got {value!r}")
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        for item in raw.ravel():
            if not _is_real(item):
                raise ValueError(f"{name} must hold {what} in {valid}, got {item!r}")
        if raw.size == 0 and raw.dtype.kind not in "iufO":
            raise ValueError(f"{name} must hold {what} in {valid}, got {value!r}")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"{name} must hold {what} in {valid}, got {value!r}") from None
    bad = np.zeros(arr.shape, dtype=bool)
    if not allow_nan:
        bad |= np.isnan(arr)
    if not allow_inf:
        bad |= np.isposinf(arr) | (np.isneginf(arr) if not allow_neg_inf else False)
    if np.any(bad):
        raise ValueError(f"{name} must hold {what} in {valid}, got {float(arr[bad].flat[0])!r}")


def finite_ratio(name_a: str, a: float, name_b: str, b: float) -> float:
    """Refuse ``a / b`` that overflows a float (a huge amount over a tiny unit); returns it.

    >>> finite_ratio("n_bytes", 1e300, "chunk_bytes", 1e-300)
    Traceback (most recent call last):
    ...
    ValueError: n_bytes / chunk_bytes must be finite (below 1.8e308), got 1e+300 / 1e-300
    """
    r = a / b
    if not math.isfinite(r):
        raise ValueError(f"{name_a} / {name_b} must be finite (below 1.8e308), got {a!r} / {b!r}")
    return r
