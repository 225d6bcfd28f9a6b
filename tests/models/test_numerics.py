"""Tests of helpers.models.numerics: limits and invariants, oracles (torch, numpy), sources."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import numerics as nm

TORCH_DTYPES = {
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp8_e4m3": torch.float8_e4m3fn,
    "fp8_e5m2": torch.float8_e5m2,
}
UINT_VIEW = {8: torch.uint8, 16: torch.int16, 32: torch.int32}


# --- limits and invariants --------------------------------------------------------------

@pytest.mark.parametrize("name", nm.FLOAT_FORMATS)
def test_ordering_and_epsilon_from_mantissa(name):
    f = nm.number_format(name)
    assert nm.max_finite(f) > nm.min_normal(f) > nm.min_subnormal(f) > 0
    assert nm.machine_epsilon(f) == 2.0 ** -f.mantissa_bits
    assert nm.unit_roundoff(f) == nm.machine_epsilon(f) / 2
    # epsilon is the gap above 1: 1 + eps is representable, 1 + eps/2 rounds back to 1 (tie
    # to even), 1 + 0.75 eps rounds up.
    eps = nm.machine_epsilon(f)
    assert nm.round_to_format(1 + eps, f) == 1 + eps
    assert nm.round_to_format(1 + eps / 2, f) == 1.0
    assert nm.round_to_format(1 + 0.75 * eps, f) == 1 + eps
    # the smallest subnormal is one mantissa step below the smallest normal's spacing
    assert nm.min_subnormal(f) == nm.min_normal(f) * eps


@pytest.mark.parametrize("name", nm.FLOAT_FORMATS)
def test_bit_layout_adds_up(name):
    f = nm.number_format(name)
    assert f.bits == 1 + f.exponent_bits + f.mantissa_bits
    assert f.bias == 2 ** (f.exponent_bits - 1) - 1
    assert nm.bytes_per_element(f) == f.storage_bits / 8


def test_bytes_per_element_is_a_float_and_int4_is_half_a_byte():
    assert nm.bytes_per_element("int4") == 0.5
    assert isinstance(nm.bytes_per_element("int8"), float)
    assert [nm.bytes_per_element(k) for k in ("fp32", "bf16", "fp8_e4m3", "int8")] == \
        [4.0, 2.0, 1.0, 1.0]


@pytest.mark.parametrize("name", nm.FLOAT_FORMATS)
@settings(max_examples=200, deadline=None)
@given(x=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
       y=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_rounding_idempotent_monotone_and_within_unit_roundoff(name, x, y):
    f = nm.number_format(name)
    rx, ry = nm.round_to_format(x, f), nm.round_to_format(y, f)
    assert nm.round_to_format(rx, f) == rx or math.isnan(rx)  # idempotent
    if x <= y:
        assert rx <= ry  # monotone (saturation and infinities keep the order)
    if nm.min_normal(f) <= abs(x) <= nm.max_finite(f):
        assert abs(rx - x) <= nm.unit_roundoff(f) * abs(x)  # eq-num-roundoff


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(min_value=0, max_value=2**16 - 1))
def test_encode_decode_round_trip_bf16(bits):
    v = nm.decode("bf16", bits)
    if math.isnan(v):
        assert math.isnan(nm.decode("bf16", nm.encode("bf16", v)))
    else:
        assert nm.encode("bf16", v) == bits


@pytest.mark.parametrize("name", ["fp8_e4m3", "fp8_e5m2", "int8", "int4"])
def test_encode_decode_round_trip_exhaustive(name):
    f = nm.number_format(name)
    for bits in range(2**f.bits):
        v = nm.decode(f, bits)
        if math.isnan(v):
            assert math.isnan(nm.decode(f, nm.encode(f, v)))
        else:
            assert nm.encode(f, v) == bits


def test_fn_format_has_no_infinity_and_one_nan_per_sign():
    values = [nm.decode("fp8_e4m3", b) for b in range(256)]
    assert not any(math.isinf(v) for v in values)
    assert sum(math.isnan(v) for v in values) == 2
    e5 = [nm.decode("fp8_e5m2", b) for b in range(256)]
    assert sum(math.isinf(v) for v in e5) == 2 and sum(math.isnan(v) for v in e5) == 6


def test_stagnation_value_matches_a_simulated_running_sum():
    for name, a in [("bf16", 0.01), ("fp16", 0.01), ("bf16", 0.3), ("fp8_e4m3", 0.1)]:
        a = nm.round_to_format(a, name)
        s = 0.0
        for _ in range(100_000):
            nxt = nm.round_to_format(s + a, name)
            if nxt == s:
                break
            s = nxt
        predicted = nm.stagnation_value(a, name)
        spacing = predicted * nm.machine_epsilon(name)
        assert predicted <= s <= predicted + spacing


# --- independent oracles: torch.finfo, numpy.finfo/iinfo, torch's own rounding ----------

@pytest.mark.parametrize("name, dtype", TORCH_DTYPES.items())
def test_properties_match_torch_finfo(name, dtype):
    fi = torch.finfo(dtype)
    assert nm.max_finite(name) == fi.max
    assert nm.min_normal(name) == fi.smallest_normal
    assert nm.machine_epsilon(name) == fi.eps
    assert nm.unit_roundoff(name) == fi.eps / 2
    assert nm.bytes_per_element(name) == fi.bits / 8


@pytest.mark.parametrize("name, dtype", [("fp32", np.float32), ("fp16", np.float16)])
def test_properties_match_numpy_finfo(name, dtype):
    fi = np.finfo(dtype)
    assert nm.max_finite(name) == float(fi.max)
    assert nm.min_normal(name) == float(fi.smallest_normal)
    assert nm.min_subnormal(name) == float(fi.smallest_subnormal)
    assert nm.machine_epsilon(name) == float(fi.eps)
    assert nm.number_format(name).mantissa_bits == fi.nmant


@pytest.mark.parametrize("name, dtype", [("int8", np.int8)])
def test_integer_range_matches_numpy_iinfo(name, dtype):
    ii = np.iinfo(dtype)
    p = nm.properties(name)
    assert (p["max"], p["min"]) == (float(ii.max), float(ii.min))


@pytest.mark.parametrize("name, dtype", TORCH_DTYPES.items())
def test_decode_matches_torch_bit_patterns(name, dtype):
    f = nm.number_format(name)
    if f.bits == 32:
        rng = np.random.default_rng(0)
        codes = rng.integers(0, 2**32, size=20_000, dtype=np.uint64)
    else:
        codes = np.arange(2**f.bits, dtype=np.uint64)  # every pattern
    signed = codes.astype(np.int64)
    signed = np.where(signed >= 2 ** (f.bits - 1), signed - 2**f.bits, signed)
    view = UINT_VIEW[f.bits]
    raw = torch.tensor(codes.astype(np.int64) if f.bits == 8 else signed, dtype=torch.int64)
    values = raw.to(view).view(dtype).double().numpy()
    mine = np.array([nm.decode(f, int(c)) for c in codes])
    both_nan = np.isnan(values) & np.isnan(mine)
    assert np.array_equal(values[~both_nan], mine[~both_nan])
    assert np.array_equal(np.isnan(values), np.isnan(mine))


@pytest.mark.parametrize("name, dtype", TORCH_DTYPES.items())
def test_rounding_matches_torch_conversion(name, dtype):
    """torch's own float32 -> dtype conversion is the oracle for round_to_format.

    Inputs are float32 values (so torch rounds once, with no float64 -> float32 double
    rounding), log-uniform across the format's whole range, including subnormals, values
    past the largest finite one, exact ties and special values.
    """
    f = nm.number_format(name)
    rng = np.random.default_rng(1)
    lo = math.log2(nm.min_subnormal(f)) - 2
    hi = min(math.log2(nm.max_finite(f)) + 2, 127.9)
    mags = np.exp2(rng.uniform(lo, hi, size=50_000))
    x = (mags * rng.choice([-1.0, 1.0], size=mags.size)).astype(np.float32)
    # exact midpoints between neighbours, where ties-to-even decides
    grid = np.array([nm.decode(f, b) for b in range(0, 2**f.bits, max(1, 2**f.bits // 4096))])
    grid = np.sort(grid[np.isfinite(grid)])
    mids = ((grid[1:] + grid[:-1]) / 2).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    x = np.concatenate([x, mids, specials])
    theirs = torch.from_numpy(x).to(dtype).double().numpy()
    mine = nm.round_to_format(x.astype(np.float64), f)
    assert np.array_equal(np.isnan(theirs), np.isnan(mine))
    ok = ~np.isnan(theirs)
    assert np.array_equal(theirs[ok], mine[ok])
    assert np.array_equal(np.signbit(theirs[ok]), np.signbit(mine[ok]))


def test_fp16_rounding_matches_numpy_from_float64():
    """numpy converts float64 -> float16 directly (one rounding): a second oracle."""
    rng = np.random.default_rng(2)
    x = np.exp2(rng.uniform(-26, 17, size=50_000)) * rng.choice([-1.0, 1.0], size=50_000)
    with np.errstate(over="ignore"):
        theirs = x.astype(np.float16).astype(np.float64)
    assert np.array_equal(theirs, nm.round_to_format(x, "fp16"))


def test_tf32_keeps_fp32_range_and_fp16_precision():
    """tf32 has no torch dtype: check it against the two formats it is built from."""
    assert nm.max_finite("tf32") == pytest.approx(nm.max_finite("fp32"), rel=2**-10)
    assert nm.min_normal("tf32") == nm.min_normal("fp32")
    assert nm.machine_epsilon("tf32") == nm.machine_epsilon("fp16")
    # rounding to tf32 = rounding the fp32 significand to 10 bits, like fp16 in its range
    rng = np.random.default_rng(3)
    x = rng.uniform(1, 2, size=10_000)
    assert np.array_equal(nm.round_to_format(x, "tf32"), nm.round_to_format(x, "fp16"))


# --- published numbers ------------------------------------------------------------------

def test_fp8_table_of_micikevicius_2022():
    """Micikevicius et al. (2022), table 1: E4M3 and E5M2."""
    assert nm.number_format("fp8_e4m3").bias == 7
    assert nm.number_format("fp8_e5m2").bias == 15
    assert nm.max_finite("fp8_e4m3") == 1.75 * 2**8 == 448
    assert nm.max_finite("fp8_e5m2") == 1.75 * 2**15 == 57344
    assert nm.min_normal("fp8_e4m3") == 2.0**-6
    assert nm.min_normal("fp8_e5m2") == 2.0**-14
    assert nm.min_subnormal("fp8_e4m3") == 2.0**-9
    assert nm.min_subnormal("fp8_e5m2") == 2.0**-16
    # max subnormal: 0.875 x 2^-6 and 0.75 x 2^-14
    assert nm.decode("fp8_e4m3", 0b0_0000_111) == 0.875 * 2.0**-6
    assert nm.decode("fp8_e5m2", 0b0_00000_11) == 0.75 * 2.0**-14
    # special values: E4M3 NaN is S.1111.111 and no infinity; E5M2 infinity is S.11111.00
    assert math.isnan(nm.decode("fp8_e4m3", 0b0_1111_111))
    assert nm.decode("fp8_e5m2", 0b0_11111_00) == math.inf


def test_ieee_754_binary16_and_binary32():
    """IEEE 754-2019 table 3.5: binary16 p = 11, emax = 15; binary32 p = 24, emax = 127."""
    for name, p, emax in [("fp16", 11, 15), ("fp32", 24, 127)]:
        f = nm.number_format(name)
        assert f.mantissa_bits + 1 == p and f.emax == emax and f.emin == 1 - emax
    assert nm.max_finite("fp16") == 65504.0


def test_bf16_has_fp32_exponent_and_7_bit_mantissa():
    """Kalamkar et al. (2019): bfloat16 keeps fp32's 8 exponent bits and 7 mantissa bits."""
    bf, fp = nm.number_format("bf16"), nm.number_format("fp32")
    assert (bf.exponent_bits, bf.mantissa_bits) == (8, 7)
    assert bf.emax == fp.emax and nm.min_normal("bf16") == nm.min_normal("fp32")
    # bf16 is the top half of an fp32: truncating the low 16 bits of 1.0 gives 0x3F80
    assert nm.encode("bf16", 1.0) == nm.encode("fp32", 1.0) >> 16


def test_a100_tf32_is_8_exponent_10_mantissa_bits():
    """NVIDIA A100 whitepaper: TF32 has fp32's 8-bit exponent and fp16's 10-bit mantissa."""
    tf = nm.number_format("tf32")
    assert (tf.exponent_bits, tf.mantissa_bits, tf.bits) == (8, 10, 19)


# --- errors -----------------------------------------------------------------------------

def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="fmt must be one of"):
        nm.machine_epsilon("fp7")
    with pytest.raises(ValueError, match="int8 is an integer format"):
        nm.machine_epsilon("int8")
    with pytest.raises(ValueError, match="bits must be an integer in"):
        nm.decode("fp8_e4m3", 256)
    with pytest.raises(ValueError, match="overflow must be"):
        nm.round_to_format(1.0, "bf16", overflow="wrap")
    with pytest.raises(ValueError, match="has no infinity"):
        nm.round_to_format(1e9, "fp8_e4m3", overflow="inf")
    with pytest.raises(ValueError, match="addend must be"):
        nm.stagnation_value(0.0, "bf16")
    with pytest.raises(ValueError, match="addend must be"):
        nm.stagnation_value(float("nan"), "bf16")
