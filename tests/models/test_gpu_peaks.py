"""Tests of helpers.models.gpu_peaks: limits and invariants, an oracle (the datasheets), numbers
published in NVIDIA's whitepapers reproduced, and the errors."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import specs, units
from helpers.models import gpu_peaks as gp
from helpers.models import roofline

sms = st.integers(min_value=1, max_value=1024)
units_per_sm = st.floats(min_value=1.0, max_value=1e5, allow_nan=False, allow_infinity=False)
clocks = st.floats(min_value=1e6, max_value=1e10, allow_nan=False, allow_infinity=False)
widths = st.integers(min_value=1, max_value=65536)
pin_rates = st.floats(min_value=1e6, max_value=1e11, allow_nan=False, allow_infinity=False)
bandwidths = st.floats(min_value=1e6, max_value=1e15, allow_nan=False, allow_infinity=False)


# --- limits and invariants ---------------------------------------------------------------

@given(sms, units_per_sm, clocks)
def test_peak_is_linear_in_each_count(n, u, f):
    p = gp.sm_peak_flop_per_s(n, u, f)
    assert p > 0
    assert gp.sm_peak_flop_per_s(2 * n, u, f) == pytest.approx(2 * p, rel=1e-12)
    assert gp.sm_peak_flop_per_s(n, 2 * u, f) == pytest.approx(2 * p, rel=1e-12)
    assert gp.sm_peak_flop_per_s(n, u, 2 * f) == pytest.approx(2 * p, rel=1e-12)
    # One SM with one lane at 1 Hz does one FMA, two FLOP, per second.
    assert gp.sm_peak_flop_per_s(1, 1, 1) == gp.FLOP_PER_FMA == 2.0


@given(sms, units_per_sm, clocks)
def test_clock_from_peak_inverts_the_peak(n, u, f):
    peak = gp.sm_peak_flop_per_s(n, u, f)
    assert gp.clock_from_peak_hz(peak, n, u) == pytest.approx(f, rel=1e-12)


@given(widths, pin_rates)
def test_pin_rate_inverts_the_bandwidth(w, r):
    m = gp.peak_memory_bytes_per_s(w, r)
    assert gp.pin_rate_from_bandwidth_bits_per_s(m, w) == pytest.approx(r, rel=1e-12)
    # Eight pins at r bit/s move r bytes/s.
    assert gp.peak_memory_bytes_per_s(8, r) == pytest.approx(r, rel=1e-12)


@given(sms, units_per_sm, clocks, bandwidths)
def test_per_sm_per_clock_ratio_is_the_roofline_ridge(n, u, f, m):
    # FLOP per clock of one SM over the bytes it receives per clock is the ridge P / M,
    # whatever the SM count and clock: the ridge is a property of one SM's balance.
    b = gp.bytes_per_clock_per_sm(m, n, f)
    ridge = roofline.ridge_intensity_flop_per_byte(gp.sm_peak_flop_per_s(n, u, f), m)
    assert gp.FLOP_PER_FMA * u / b == pytest.approx(ridge, rel=1e-9)


@given(sms, units_per_sm, clocks)
def test_smem_bandwidth_and_totals_scale_with_sms(n, b, f):
    assert gp.smem_bytes_per_s(n, b, f) == pytest.approx(gp.per_gpu(b, n) * f, rel=1e-12)
    assert gp.per_gpu(b, 1) == b


def test_clock_choice_follows_the_whitepaper_split():
    # On the H100 SXM only the low-precision tensor-core peaks use the lower clock.
    h = specs.H100_SXM
    for p in ("fp64", "fp32", "fp64_tensor"):
        assert gp.clock_for_precision_hz(h, p) == h.boost_clock_hz
    for p in ("tf32", "bf16", "fp16", "fp8", "int8"):
        assert gp.clock_for_precision_hz(h, p) == h.tensor_boost_clock_hz < h.boost_clock_hz


# --- oracle: the datasheets -----------------------------------------------------------------
# The datasheet peaks are stored in helpers.specs exactly as NVIDIA prints them. Each derived
# peak must agree with the printed figure to within one unit of its last printed digit (the
# H100's FP64 is printed "34" by the datasheet and "33.5" by the whitepaper: the exact product
# is 33.45, rounded twice).
PRINTED_TFLOPS = {
    "A100 SXM 80GB": {"fp64": "9.7", "fp64_tensor": "19.5", "fp32": "19.5", "tf32": "156",
                      "bf16": "312", "fp16": "312", "int8": "624"},
    "H100 SXM": {"fp64": "34", "fp64_tensor": "67", "fp32": "67", "tf32": "494.7",
                 "bf16": "989.4", "fp16": "989.4", "fp8": "1978.9", "int8": "1978.9"},
    "H200 SXM": {"fp64": "34", "fp64_tensor": "67", "fp32": "67", "tf32": "494.7",
                 "bf16": "989.4", "fp16": "989.4", "fp8": "1978.9", "int8": "1978.9"},
}


def _last_digit(printed: str) -> float:
    return 10.0 ** -len(printed.split(".")[1]) if "." in printed else 1.0


@pytest.mark.parametrize("gpu", [g for g in specs.GPUS if g.name in PRINTED_TFLOPS],
                         ids=lambda g: g.name)
def test_derived_peaks_agree_with_the_datasheets(gpu):
    printed = PRINTED_TFLOPS[gpu.name]
    assert set(printed) == set(gpu.dense_flop_per_s)  # every published precision is checked
    for precision, text in printed.items():
        assert gpu.peak_flop_per_s(precision) == float(text) * units.T
        derived = gp.derived_peak_flop_per_s(gpu, precision) / units.T
        assert abs(derived - float(text)) <= _last_digit(text), (gpu.name, precision, derived)


def test_the_oracle_can_fail():
    # One clock off by a few percent, or the tensor-core clock mistaken for the boost clock,
    # breaks the agreement the test above checks.
    wrong = dataclasses.replace(specs.H100_SXM, tensor_boost_clock_hz=specs.H100_SXM.boost_clock_hz)
    assert gp.derived_peak_flop_per_s(wrong, "bf16") / units.T - 989.4 > 50


def test_bandwidth_oracle_counts_bits_on_a_bus():
    # An independent count: put one transfer's bits on a w-pin bus for k transfers, pack them
    # into bytes with NumPy, and compare the byte count with the model at k transfers per second.
    w, k = 5120, 64
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(k, w), dtype=np.uint8)
    packed = np.packbits(bits, axis=None)
    assert packed.nbytes == gp.peak_memory_bytes_per_s(w, k)


# --- published numbers ----------------------------------------------------------------------

def test_a100_whitepaper_numbers():
    a = specs.A100_SXM_80GB
    # A100 whitepaper, Table 3: 6912 FP32 cores, 432 Tensor Cores, 27648 KB of registers.
    assert gp.per_gpu(a.fp32_lanes_per_sm, a.sm_count) == 6912
    assert gp.per_gpu(a.tensor_cores_per_sm, a.sm_count) == 432
    assert gp.per_gpu(a.register_file_bytes_per_sm, a.sm_count) / units.KiB == 27648
    # Table 3: 5120-bit HBM2 at 1215 MHz DDR, "1555 GB/sec" (the 40 GB part).
    assert round(gp.peak_memory_bytes_per_s(a.hbm_bus_width_bits, 2 * 1215e6) / units.GB) == 1555
    # The Tensor Core section: 256 FP16 FMA per clock per Tensor Core, 1024 per SM.
    assert a.tensor_fma_per_clock_per_sm["fp16"] / a.tensor_cores_per_sm == 256


def test_h100_whitepaper_numbers():
    h = specs.H100_SXM
    # H100 whitepaper, Table 3 (SXM5): 16896 FP32 cores, 528 Tensor Cores, 33792 KB registers.
    assert gp.per_gpu(h.fp32_lanes_per_sm, h.sm_count) == 16896
    assert gp.per_gpu(h.tensor_cores_per_sm, h.sm_count) == 528
    assert gp.per_gpu(h.register_file_bytes_per_sm, h.sm_count) / units.KiB == 33792
    # "2x the MMA rate of the A100 SM clock-for-clock", and 4x with FP8 against A100 FP16.
    a = specs.A100_SXM_80GB
    assert h.tensor_fma_per_clock_per_sm["bf16"] == 2 * a.tensor_fma_per_clock_per_sm["bf16"]
    assert h.tensor_fma_per_clock_per_sm["fp8"] == 4 * a.tensor_fma_per_clock_per_sm["fp16"]
    # The clock the datasheet's bf16 peak implies is the whitepaper's 1830 MHz tensor clock.
    implied = gp.clock_from_peak_hz(h.peak_flop_per_s("bf16"), h.sm_count,
                                    h.tensor_fma_per_clock_per_sm["bf16"])
    assert round(implied / 1e6) == 1830


def test_shared_memory_bandwidth_of_the_h100():
    # 32 banks x 4 bytes x 132 SMs x 1.98 GHz: about 33 TB/s, the aggregate figure often quoted.
    h = specs.H100_SXM
    m = gp.smem_bytes_per_s(h.sm_count, h.smem_bytes_per_clock_per_sm, h.boost_clock_hz)
    assert 33e12 < m < 34e12


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: gp.sm_peak_flop_per_s(0, 1024, 1e9),
    lambda: gp.sm_peak_flop_per_s(1.5, 1024, 1e9),
    lambda: gp.sm_peak_flop_per_s(108, -1, 1e9),
    lambda: gp.sm_peak_flop_per_s(108, 1024, math.nan),
    lambda: gp.clock_from_peak_hz(0.0, 108, 1024),
    lambda: gp.peak_memory_bytes_per_s(0, 1e9),
    lambda: gp.peak_memory_bytes_per_s(5120, math.inf),
    lambda: gp.pin_rate_from_bandwidth_bits_per_s(-1.0, 5120),
    lambda: gp.bytes_per_clock_per_sm(1e12, 0, 1e9),
    lambda: gp.per_gpu(0.0, 132),
    lambda: gp.smem_bytes_per_s(132, 128, 0.0),
])
def test_bad_arguments_raise_value_error_naming_them(call):
    with pytest.raises(ValueError, match=r"must be"):
        call()


def test_unpublished_fields_raise_clear_errors():
    with pytest.raises(ValueError, match="sm_count is not published"):
        gp.derived_peak_flop_per_s(specs.B200_HGX, "fp32")
    with pytest.raises(ValueError, match="no tensor-core rate for 'fp4'"):
        gp.derived_peak_flop_per_s(specs.H100_SXM, "fp4")
    with pytest.raises(ValueError, match="tensor_boost_clock_hz is not published"):
        gp.clock_for_precision_hz(specs.B200_HGX, "bf16")
