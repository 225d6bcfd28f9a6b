"""Units: SI prefixes, binary prefixes, and the formatting used on the book's pages.

Every model in :mod:`helpers.models` takes and returns numbers in SI base units (bytes,
seconds, FLOP, bytes/s, FLOP/s), with the unit written into the argument's name. This module
holds the only prefix constants, so a page converts at the display edge and nowhere else::

    >>> from helpers.units import GB, TB, fmt_rate
    >>> 4.8 * TB / GB
    4800.0
    >>> fmt_rate(3.35e12, "B/s")
    '3.35 TB/s'

Bandwidths and capacities on vendor spec sheets are decimal (1 GB = 1e9 bytes). Binary
prefixes (GiB) are used only where a tool reports them, e.g. ``nvidia-smi``'s MiB.

Used by many pages, among them: appendix/status.md, chapters/collectives.md,
chapters/cuda-execution.md, chapters/custom-operators.md, chapters/distributed-analysis.md,
chapters/fault-tolerance.md.
"""

from __future__ import annotations

import math

__all__ = [
    "K", "M", "G", "T", "P",
    "KB", "MB", "GB", "TB", "PB",
    "KiB", "MiB", "GiB", "TiB", "Ki",
    "kHz", "MHz", "GHz",
    "ns", "us", "ms", "s", "minute", "hour", "day",
    "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP",
    "fmt_si", "fmt_bytes", "fmt_time", "fmt_rate", "fmt_count", "fmt_sig", "fmt_pct", "shown",
]

# Decimal (SI) multipliers, dimensionless.
K = 1e3
M = 1e6
G = 1e9
T = 1e12
P = 1e15

# Bytes, decimal (spec sheets, bandwidth).
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
PB = 1e15

# Bytes, binary (only where a tool reports binary).
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40
# An exact integer binary multiplier, for counts and sizes that stay integers (65,536 registers
# per SM is 64 * Ki; 227 KiB of shared memory per block is 227 * Ki bytes).
Ki = 1024

# Frequencies (Hz).
kHz = 1e3
MHz = 1e6
GHz = 1e9

# Seconds.
ns = 1e-9
us = 1e-6
ms = 1e-3
s = 1.0
minute = 60.0
hour = 3600.0
day = 86400.0

# FLOP counts.
KFLOP = 1e3
MFLOP = 1e6
GFLOP = 1e9
TFLOP = 1e12
PFLOP = 1e15

_PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_SMALL = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]


def _check_finite(value: float, name: str) -> float:
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def fmt_si(value: float, unit: str = "", *, digits: int = 3) -> str:
    """Format ``value`` with a decimal SI prefix and ``digits`` significant digits.

    >>> fmt_si(1.2345e12, "FLOP/s")
    '1.23 TFLOP/s'
    >>> fmt_si(0.000512, "s")
    '512 µs'
    >>> fmt_si(0, "B")
    '0 B'
    """
    value = _check_finite(value, "value")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits}")
    if value == 0:
        return f"0 {unit}".strip()
    mag = abs(value)
    table = _PREFIXES if mag >= 1 else _SMALL
    for scale, prefix in table:
        if mag >= scale * (1 - 1e-12):
            break
    else:  # smaller than the smallest prefix
        scale, prefix = _SMALL[-1]
    scaled = value / scale
    # Round to significant digits; rounding can push 999.6 to 1000 -> move to next prefix.
    text = f"{scaled:.{digits}g}"
    if abs(float(text)) >= 1000 and table is _PREFIXES and prefix != "P":
        idx = [p for _, p in _PREFIXES].index(prefix)
        scale, prefix = _PREFIXES[idx - 1]
        text = f"{value / scale:.{digits}g}"
    if "e" in text:  # very large mantissa beyond P: fall back to plain scientific
        text = f"{scaled:.{digits - 1}e}"
    return f"{text} {prefix}{unit}".strip()


def fmt_bytes(n_bytes: float, *, binary: bool = False, digits: int = 3) -> str:
    """Format a byte count, decimal by default (``binary=True`` gives KiB, MiB, GiB).

    >>> fmt_bytes(80e9)
    '80 GB'
    >>> fmt_bytes(2**30, binary=True)
    '1 GiB'
    """
    n_bytes = _check_finite(n_bytes, "n_bytes")
    if not binary:
        return fmt_si(n_bytes, "B", digits=digits)
    mag = abs(n_bytes)
    for scale, name in [(TiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")]:
        if mag >= scale:
            return f"{n_bytes / scale:.{digits}g} {name}"
    return f"{n_bytes:.{digits}g} B"


def fmt_time(seconds: float, *, digits: int = 3) -> str:
    """Format a duration: SI prefixes below a minute, then min, h and days.

    >>> fmt_time(2.5e-6)
    '2.5 µs'
    >>> fmt_time(5400)
    '1.5 h'
    """
    seconds = _check_finite(seconds, "seconds")
    mag = abs(seconds)
    if mag >= day:
        return f"{seconds / day:.{digits}g} days"
    if mag >= hour:
        return f"{seconds / hour:.{digits}g} h"
    if mag >= minute:
        return f"{seconds / minute:.{digits}g} min"
    return fmt_si(seconds, "s", digits=digits)


def fmt_rate(per_s: float, unit: str, *, digits: int = 3) -> str:
    """Format a rate whose unit already says "per second", e.g. ``"B/s"`` or ``"FLOP/s"``.

    >>> fmt_rate(989.4e12, "FLOP/s")
    '989 TFLOP/s'
    """
    return fmt_si(per_s, unit, digits=digits)


def fmt_count(n: float, *, digits: int = 3) -> str:
    """Format a large count with a word suffix (thousand, million, billion, trillion).

    >>> fmt_count(6.74e9)
    '6.74 billion'
    >>> fmt_count(512)
    '512'
    """
    n = _check_finite(n, "n")
    for scale, word in [(1e12, "trillion"), (1e9, "billion"), (1e6, "million")]:
        if abs(n) >= scale:
            return f"{n / scale:.{digits}g} {word}"
    return f"{n:.{digits}g}" if abs(n) < 1e3 else f"{n:,.0f}"


def fmt_sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, in plain notation from 1e-4 up to 1e7 (a table
    reads ``1740 tok/s``, not ``1.74e+03 tok/s``), scientific outside it; never ``-0``.

    >>> fmt_sig(1741.2), fmt_sig(0.02456), fmt_sig(4.3), fmt_sig(12.0), fmt_sig(-0.0001)
    ('1740', '0.0246', '4.3', '12', '-0.0001')
    >>> fmt_sig(-1e-9, 2), fmt_sig(3.2e9)
    ('-1e-09', '3.2e+09')
    >>> fmt_sig(-0.0)
    '0'
    """
    value = _check_finite(value, "value")
    if not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be a positive int, got {digits!r}")
    if value == 0:
        return "0"
    if not 1e-4 <= abs(value) < 1e7:
        return f"{value:.{digits}g}"
    rounded = float(f"{value:.{digits}g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{rounded:.0f}"


def fmt_pct(fraction: float, *, signed: bool = False, digits: int = 0) -> str:
    """``fraction`` as a percentage with ``digits`` decimals, signed if asked; a value that
    rounds to zero prints as ``0%``, never ``-0%`` or ``+0%``.

    >>> fmt_pct(0.123, signed=True), fmt_pct(-0.004, signed=True), fmt_pct(0.9)
    ('+12%', '0%', '90%')
    """
    fraction = _check_finite(fraction, "fraction")
    if not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be a non-negative int, got {digits!r}")
    text = f"{fraction:{'+' if signed else ''}.{digits}%}"
    return "0%" if float(text.rstrip("%")) == 0 else text


def shown(value: float, spec: str) -> str:
    """``value`` as the page shows it: ``format(value, spec)``, for glueing a machine-dependent number.

    A float computed by a CPU kernel (a torch or BLAS reduction, anything timed) changes in its
    last digits with the SIMD path the machine takes, so nbval must not compare it beyond the
    digits the page prints. Glue ``shown(x, ".2f")`` and write ``{glue:text}`key``` with no
    format spec: the page prints exactly the glued text, and nbval compares exactly what the
    reader sees (CONTRIBUTING.md, "What nbval compares"). Deterministic values (pure-Python
    models, counts, datasheet numbers) are glued as numbers and compared in full.

    >>> shown(0.009663900238887635, ".2f"), shown(0.009652992902275948, ".2f")
    ('0.01', '0.01')
    >>> shown(1.6200334034822907, ".4f")
    '1.6200'
    >>> shown(0.123456, "+.1%")
    '+12.3%'
    >>> shown(3, "d")
    '3'
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"value must be a real number, got {value!r}")
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"spec must be a non-empty format spec such as '.3g', got {spec!r}")
    try:
        return format(int(value) if isinstance(value, numbers.Integral) else float(value), spec)
    except ValueError as e:
        raise ValueError(f"spec {spec!r} cannot format {value!r}: {e}") from None
