r"""Number formats of machine learning, computed from their bit layouts.

A binary floating-point number is stored as a sign bit :math:`s`, an exponent field :math:`E`
of ``exponent_bits`` bits and a mantissa (fraction) field :math:`M` of ``mantissa_bits`` bits.
A normal number (``0 < E < 2^e - 1``) has the value

.. math:: x = (-1)^s \, (1 + M / 2^m) \, 2^{E - \text{bias}}            (eq-float-value)

and a subnormal number (``E = 0``) has :math:`(-1)^s (M / 2^m) 2^{1 - \text{bias}}`. Every
property the book quotes (largest finite value, smallest normal and subnormal values, machine
epsilon, unit roundoff, bytes per element) follows from the widths, the bias, and the format's
convention for special values:

* ``"ieee"``: the all-ones exponent field encodes infinities (mantissa 0) and NaNs (IEEE
  754-2019 section 3.4): fp32, fp16, bf16, tf32 and fp8 e5m2;
* ``"fn"`` ("finite, NaN"): no infinities; only the all-ones exponent *and* all-ones
  mantissa pattern is NaN, so the top binade holds ordinary numbers. This is fp8 e4m3 as
  Micikevicius et al. (2022) define it, and as PyTorch names it (``float8_e4m3fn``).

Integer formats (int8, int4) are two's-complement integers with a step of 1 everywhere.

All functions take a format by name (``"fp32"``, ``"tf32"``, ``"bf16"``, ``"fp16"``,
``"fp8_e4m3"``, ``"fp8_e5m2"``, ``"int8"``, ``"int4"``) or as a :class:`FloatFormat` /
:class:`IntFormat`. Introduced in {ref}`sec-numerics-and-transformers`.

>>> machine_epsilon("bf16"), unit_roundoff("bf16")
(0.0078125, 0.00390625)
>>> max_finite("fp8_e4m3"), max_finite("fp8_e5m2")
(448.0, 57344.0)

Used by: chapters/numerics-and-transformers.md, labs/quantization.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np

from ._checks import positive
from . import _checks

__all__ = [
    "FloatFormat", "IntFormat", "FORMATS", "FLOAT_FORMATS", "number_format",
    "bytes_per_element", "max_finite", "min_normal", "min_subnormal", "machine_epsilon",
    "unit_roundoff", "decode", "encode", "round_to_format", "properties",
    "stagnation_value",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format described by its bit layout.

    ``storage_bits`` is what one element occupies in memory; it differs from the
    1 + e + m bits of the layout only for tf32, which tensor cores read from fp32 storage.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    special: str  # "ieee" or "fn"
    storage_bits: int
    source: str

    def __post_init__(self) -> None:
        if self.special not in ("ieee", "fn"):
            raise ValueError(f"special must be 'ieee' or 'fn', got {self.special!r}")
        if not (2 <= self.exponent_bits <= 11 and 1 <= self.mantissa_bits <= 52):
            raise ValueError(
                f"exponent_bits must be in [2, 11] and mantissa_bits in [1, 52], got "
                f"{self.exponent_bits} and {self.mantissa_bits}"
            )

    @property
    def bits(self) -> int:
        """Bits of the layout: sign + exponent + mantissa."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        """Exponent bias, :math:`2^{e-1} - 1` for every format in this module."""
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number, :math:`1 - \\text{bias}`."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite binade."""
        top = 2**self.exponent_bits - 1  # the all-ones exponent field
        return (top - 1 if self.special == "ieee" else top) - self.bias


@dataclass(frozen=True)
class IntFormat:
    """A two's-complement signed integer format."""

    name: str
    bits: int
    source: str

    @property
    def storage_bits(self) -> int:
        return self.bits


Format = Union[FloatFormat, IntFormat]

_IEEE = "IEEE 754-2019, table 3.5 (binary32, binary16) and section 3.4 (encodings)"

#: Every format the book discusses, by name, in the order tables show them.
FORMATS: dict[str, Format] = {
    "fp32": FloatFormat("fp32", 8, 23, "ieee", 32, _IEEE),
    "tf32": FloatFormat("tf32", 8, 10, "ieee", 32,
                        "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), TF32 "
                        "section: 8-bit exponent of fp32, 10-bit mantissa of fp16"),
    "bf16": FloatFormat("bf16", 8, 7, "ieee", 16,
                        "Kalamkar et al. (2019), section 2: 8 exponent bits, 7 mantissa bits"),
    "fp16": FloatFormat("fp16", 5, 10, "ieee", 16, _IEEE),
    "fp8_e4m3": FloatFormat("fp8_e4m3", 4, 3, "fn", 8,
                            "Micikevicius et al. (2022), table 1 (E4M3)"),
    "fp8_e5m2": FloatFormat("fp8_e5m2", 5, 2, "ieee", 8,
                            "Micikevicius et al. (2022), table 1 (E5M2)"),
    "int8": IntFormat("int8", 8, "two's complement"),
    "int4": IntFormat("int4", 4, "two's complement"),
}

#: Names of the floating-point formats only.
FLOAT_FORMATS = tuple(k for k, v in FORMATS.items() if isinstance(v, FloatFormat))


def number_format(fmt: str | Format) -> Format:
    """The format object for a name (``"bf16"``) or the object itself.

    >>> number_format("fp16").bias
    15
    """
    if isinstance(fmt, (FloatFormat, IntFormat)):
        return fmt
    try:
        return FORMATS[fmt]
    except (KeyError, TypeError):
        raise ValueError(f"fmt must be one of {list(FORMATS)}, got {fmt!r}") from None


def _float_format(fmt: str | Format, what: str) -> FloatFormat:
    f = number_format(fmt)
    if not isinstance(f, FloatFormat):
        raise ValueError(
            f"{what} is defined for floating-point formats only ({list(FLOAT_FORMATS)}); "
            f"{f.name} is an integer format whose step is 1 everywhere"
        )
    return f


def bytes_per_element(fmt: str | Format) -> float:
    """Bytes one element occupies in memory (float; int4 is 0.5).

    tf32 is a tensor-core operand format read from fp32 storage, so it occupies 4 bytes.

    >>> bytes_per_element("int4"), bytes_per_element("bf16"), bytes_per_element("tf32")
    (0.5, 2.0, 4.0)
    """
    return number_format(fmt).storage_bits / 8


def max_finite(fmt: str | Format) -> float:
    r"""Largest finite value (dimensionless).

    .. math:: x_{\max} = \Bigl(1 + \frac{2^m - 1 - r}{2^m}\Bigr)\, 2^{e_{\max}}   (eq-num-max)

    with :math:`r = 0`, :math:`e_{\max} = 2^e - 2 - \text{bias}` for IEEE formats and
    :math:`r = 1`, :math:`e_{\max} = 2^e - 1 - \text{bias}` for "fn" formats.

    IEEE formats reserve the all-ones exponent, so their largest value has an all-ones
    mantissa in the binade below; "fn" formats use the all-ones exponent for numbers but
    reserve the all-ones mantissa there for NaN.

    References: IEEE 754-2019 table 3.5; Micikevicius et al. (2022) table 1 (448, 57344).

    >>> max_finite("fp16"), max_finite("int8")
    (65504.0, 127.0)
    """
    f = number_format(fmt)
    if isinstance(f, IntFormat):
        return float(2 ** (f.bits - 1) - 1)
    m = f.mantissa_bits
    top_mantissa = 2**m - 1 if f.special == "ieee" else 2**m - 2
    return math.ldexp(1 + top_mantissa / 2**m, f.emax)


def min_normal(fmt: str | Format) -> float:
    r"""Smallest positive normal value, :math:`2^{1-\text{bias}}` (dimensionless).

    >>> min_normal("fp8_e4m3") == 2.0**-6
    True
    """
    f = _float_format(fmt, "min_normal")
    return math.ldexp(1.0, f.emin)


def min_subnormal(fmt: str | Format) -> float:
    r"""Smallest positive subnormal value, :math:`2^{1-\text{bias}-m}` (dimensionless).

    >>> min_subnormal("fp8_e5m2") == 2.0**-16
    True
    """
    f = _float_format(fmt, "min_subnormal")
    return math.ldexp(1.0, f.emin - f.mantissa_bits)


def machine_epsilon(fmt: str | Format) -> float:
    r"""Machine epsilon: the gap between 1 and the next larger number, :math:`2^{-m}`.

    .. math:: \varepsilon = 2^{-m}                                          (eq-num-eps)

    References: Higham (2002), section 2.1; equals ``torch.finfo(dtype).eps``.

    >>> machine_epsilon("fp32") == 2.0**-23
    True
    """
    f = _float_format(fmt, "machine_epsilon")
    return math.ldexp(1.0, -f.mantissa_bits)


def unit_roundoff(fmt: str | Format) -> float:
    r"""Unit roundoff :math:`u = \varepsilon / 2 = 2^{-(m+1)}`: the largest relative error
    of rounding to nearest, for results in the normal range.

    .. math:: \operatorname{fl}(x) = x(1 + \delta),\quad |\delta| \le u = 2^{-(m+1)}
       \qquad\text{(eq-num-roundoff)}

    References: Higham (2002), theorem 2.2.

    >>> unit_roundoff("fp16") == 2.0**-11
    True
    """
    return machine_epsilon(fmt) / 2


def properties(fmt: str | Format) -> dict:
    """Every property of ``fmt`` in one dict (``None`` where a property is undefined).

    >>> p = properties("fp8_e4m3")
    >>> p["bits"], p["bias"], p["max"], p["epsilon"]
    (8, 7, 448.0, 0.125)
    """
    f = number_format(fmt)
    if isinstance(f, IntFormat):
        return {"name": f.name, "bits": f.bits, "exponent_bits": None, "mantissa_bits": None,
                "bias": None, "bytes": bytes_per_element(f), "max": max_finite(f),
                "min": float(-(2 ** (f.bits - 1))), "min_normal": None,
                "min_subnormal": None, "epsilon": None, "unit_roundoff": None,
                "has_inf": False}
    return {"name": f.name, "bits": f.bits, "exponent_bits": f.exponent_bits,
            "mantissa_bits": f.mantissa_bits, "bias": f.bias, "bytes": bytes_per_element(f),
            "max": max_finite(f), "min": -max_finite(f), "min_normal": min_normal(f),
            "min_subnormal": min_subnormal(f), "epsilon": machine_epsilon(f),
            "unit_roundoff": unit_roundoff(f), "has_inf": f.special == "ieee"}


# --- bit patterns ---------------------------------------------------------------------

def decode(fmt: str | Format, bits: int) -> float:
    """The value of bit pattern ``bits`` (an unsigned integer of the format's width).

    >>> decode("bf16", 0x3F80), decode("fp8_e4m3", 0x7E), decode("int4", 0b1000)
    (1.0, 448.0, -8.0)
    """
    if isinstance(bits, (bool, np.bool_)):
        raise ValueError(f"bits must be an integer bit pattern, got {bits!r}")
    f = number_format(fmt)
    width = f.bits
    if not (isinstance(bits, (int, np.integer)) and 0 <= int(bits) < 2**width):
        raise ValueError(f"bits must be an integer in [0, 2**{width}) for {f.name}, got {bits!r}")
    bits = int(bits)
    if isinstance(f, IntFormat):
        return float(bits - 2**width if bits >= 2 ** (width - 1) else bits)
    m, e = f.mantissa_bits, f.exponent_bits
    sign = -1.0 if bits >> (width - 1) else 1.0
    exp_field = (bits >> m) & (2**e - 1)
    mant = bits & (2**m - 1)
    top = 2**e - 1
    if exp_field == top:
        if f.special == "ieee":
            return sign * math.inf if mant == 0 else math.nan
        if mant == 2**m - 1:
            return math.nan
    if exp_field == 0:
        return sign * math.ldexp(mant, f.emin - m)
    return sign * math.ldexp(2**m + mant, exp_field - f.bias - m)


def encode(fmt: str | Format, value: float, *, overflow: str | None = None) -> int:
    """The bit pattern of ``value`` rounded to nearest (ties to even) in ``fmt``.

    NaN encodes as the format's all-ones exponent-and-mantissa pattern with the sign of
    ``value``. ``overflow`` is as in :func:`round_to_format`.

    >>> hex(encode("bf16", 1.0)), hex(encode("fp8_e4m3", -448.0)), bin(encode("int4", -1.0))
    ('0x3f80', '0xfe', '0b1111')
    """
    _checks.real_array("value", value, allow_nan=True, allow_inf=True)
    f = number_format(fmt)
    r = float(round_to_format(value, f, overflow=overflow))
    width = f.bits
    if isinstance(f, IntFormat):
        return int(r) % 2**width
    m, e = f.mantissa_bits, f.exponent_bits
    sign_bit = 1 if math.copysign(1.0, r) < 0 else 0
    top = 2**e - 1
    if math.isnan(r):
        sign_bit = 1 if math.copysign(1.0, float(value)) < 0 else 0
        return (sign_bit << (width - 1)) | (top << m) | (2**m - 1)
    a = abs(r)
    if math.isinf(a):
        return (sign_bit << (width - 1)) | (top << m)
    if a == 0:
        return sign_bit << (width - 1)
    if a < min_normal(f):
        exp_field, mant = 0, int(math.ldexp(a, m - f.emin))
    else:
        frac, exp2 = math.frexp(a)  # a = frac * 2**exp2, frac in [0.5, 1)
        exp_field = exp2 - 1 + f.bias
        mant = int(math.ldexp(frac * 2, m)) - 2**m
    return (sign_bit << (width - 1)) | (exp_field << m) | mant


def round_to_format(x, fmt: str | Format, *, overflow: str | None = None):
    r"""Round float64 value(s) ``x`` to the nearest value of ``fmt``, ties to even.

    The result is returned as float64 (a scalar for a scalar input, else an array). Each
    input is rounded once, directly, to the nearest representable number: within the
    binade :math:`[2^k, 2^{k+1})` the spacing is :math:`2^{k-m}`, and below the smallest
    normal number it is the subnormal spacing :math:`2^{1-\text{bias}-m}`.

    Parameters
    ----------
    x : float or array_like
        Values to round (dimensionless).
    fmt : str or format
        Target format.
    overflow : {"inf", "saturate", "nan"} or None
        What a magnitude that rounds beyond :func:`max_finite` (or an infinite input)
        becomes. ``None`` picks the format's convention as PyTorch implements it: ``"inf"``
        for IEEE formats, ``"saturate"`` (to the largest finite value) for fp8 e4m3, which
        has no infinity. Integer formats always saturate.

    Returns
    -------
    float or numpy.ndarray
        The rounded value(s), exactly representable in ``fmt``.

    Assumptions
    -----------
    Round to nearest, ties to even, the IEEE 754 default (section 4.3.1). NaN stays NaN.
    Hardware may round otherwise (e.g. tf32 conversion instructions that round ties away
    from zero); this is the reference rounding.

    References
    ----------
    IEEE 754-2019 sections 4.3.1 and 7.4 (overflow); Micikevicius et al. (2022) section 3.

    Examples
    --------
    >>> round_to_format(0.1, "bf16"), round_to_format(1000.0, "fp8_e4m3")
    (0.10009765625, 448.0)
    >>> round_to_format(2.5, "int8"), round_to_format(70000.0, "fp16")
    (2.0, inf)
    """
    _checks.real_array("x", x, allow_nan=True, allow_inf=True)
    f = number_format(fmt)
    if overflow is None:
        overflow = "inf" if isinstance(f, FloatFormat) and f.special == "ieee" else "saturate"
    if overflow not in ("inf", "saturate", "nan"):
        raise ValueError(f"overflow must be 'inf', 'saturate', 'nan' or None, got {overflow!r}")
    if isinstance(f, FloatFormat) and f.special == "fn" and overflow == "inf":
        raise ValueError(f"overflow='inf' is impossible: {f.name} has no infinity")
    scalar = np.ndim(x) == 0
    xa = np.asarray(x, dtype=np.float64)
    ax = np.abs(xa)
    big = max_finite(f)
    with np.errstate(invalid="ignore", over="ignore"):
        if isinstance(f, IntFormat):
            r = np.minimum(np.round(ax), big + (xa < 0))  # -2^(b-1) is representable
            out = np.copysign(r, xa)
        else:
            _, e2 = np.frexp(ax)  # ax = frac * 2**e2 with frac in [0.5, 1)
            exp = np.maximum(e2 - 1, f.emin)  # binade of x, clamped to the subnormal range
            quantum = np.ldexp(1.0, exp - f.mantissa_bits)
            finite = np.isfinite(ax)
            r = np.where(finite, np.round(np.where(finite, ax, 0.0) / quantum) * quantum, ax)
            too_big = r > big
            if overflow == "saturate":
                r = np.where(too_big, big, r)
            elif overflow == "nan":
                r = np.where(too_big, np.nan, r)
            else:
                r = np.where(too_big, np.inf, r)
            out = np.copysign(r, xa)
            out = np.where(np.isnan(xa), np.nan, out)
    return float(out) if scalar else out


def stagnation_value(addend: float, fmt: str | Format) -> float:
    r"""Where a running sum of a constant positive ``addend`` stops growing (dimensionless).

    A running sum :math:`S \leftarrow \operatorname{fl}(S + a)` with round to nearest stops
    changing once :math:`a` is at most half the spacing of the numbers near :math:`S`. In the
    binade :math:`[2^k, 2^{k+1})` half the spacing is :math:`2^k u`, so the sum stalls at
    the first power of two :math:`2^k \ge a/u`:

    .. math:: S_{\text{stall}} = 2^{\lceil \log_2 (a / u) \rceil}           (eq-num-stall)

    Parameters
    ----------
    addend : float
        The value :math:`a > 0` added at each step, already representable in ``fmt``.
    fmt : str or format
        The format the sum is kept in (its unit roundoff :math:`u`).

    Returns
    -------
    float
        :math:`S_{\text{stall}}`.

    Assumptions
    -----------
    Every partial sum is rounded to ``fmt`` (no wider accumulator), round to nearest ties to
    even, no overflow. When :math:`a` equals exactly half a spacing the tie can let an odd
    partial sum step once more; the sum then stalls one spacing later.

    References
    ----------
    Higham (2002), section 4.2 (recursive summation and its error).

    Examples
    --------
    >>> stagnation_value(round_to_format(0.01, "bf16"), "bf16")
    4.0
    """
    _ratio = _checks.finite_ratio("addend", positive("addend", addend),
                                  "unit_roundoff(fmt)", unit_roundoff(fmt))
    if math.ceil(math.log2(_ratio)) > 1023:
        raise ValueError(f"addend / unit_roundoff(fmt) must be at most 2**1023, got {addend!r}")
    a = positive("addend", addend)
    u = unit_roundoff(fmt)
    return math.ldexp(1.0, math.ceil(math.log2(a / u)))
