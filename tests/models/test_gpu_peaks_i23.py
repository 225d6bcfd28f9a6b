"""Issue 23: the 2:4 sparse tensor-core peak from unit counts; A100 40 GB and V100 specs."""

import pytest

from helpers import specs
from helpers.models import gpu_peaks as gp

# (spec, precision, printed sparse peak in TFLOP/s or TOPS, the document that prints it)
PRINTED_SPARSE = [
    (specs.A100_SXM_40GB, "fp16", 624, "A100 whitepaper Table 1"),
    (specs.A100_SXM_40GB, "bf16", 624, "A100 whitepaper Table 1"),
    (specs.A100_SXM_40GB, "tf32", 312, "A100 whitepaper Table 1"),
    (specs.A100_SXM_40GB, "int8", 1248, "A100 whitepaper Table 1"),
    (specs.A100_SXM_80GB, "fp16", 624, "A100 datasheet"),
    (specs.H100_SXM, "bf16", 1979, "H100 datasheet (rounded)"),
    (specs.H100_SXM, "fp8", 3958, "H100 datasheet (rounded)"),
]


@pytest.mark.parametrize("spec,precision,printed,doc", PRINTED_SPARSE)
def test_sparse_peak_from_units_matches_the_printed_one(spec, precision, printed, doc):
    derived = gp.derived_sparse_peak_flop_per_s(spec, precision) / 1e12
    assert derived == pytest.approx(printed, rel=0.005), doc  # datasheets round to 3-4 digits
    assert spec.peak_flop_per_s(precision, sparse=True) / 1e12 == pytest.approx(printed,
                                                                                rel=0.0005)


def test_sparse_is_twice_dense_for_every_spec():
    for spec in specs.GPUS + specs.OLDER_GPUS:
        for p, sparse in spec.sparse_flop_per_s.items():
            assert sparse == pytest.approx(2 * spec.dense_flop_per_s[p], rel=1e-3), (spec.name, p)
            if p in spec.tensor_fma_per_clock_per_sm:
                assert gp.derived_sparse_peak_flop_per_s(spec, p) == \
                    2 * gp.derived_peak_flop_per_s(spec, p)


def test_oracle_counting_the_products_a_24_matrix_needs():
    # a 2:4-pruned weight row of 4k entries needs 2k multiplies; the sparse rate counts 4k
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 256))
    groups = w.reshape(64, -1, 4)
    keep = np.argsort(-np.abs(groups), axis=2)[:, :, :2]
    mask = np.zeros_like(groups, dtype=bool)
    np.put_along_axis(mask, keep, True, axis=2)
    pruned = (groups * mask).reshape(64, 256)
    executed = np.count_nonzero(pruned)
    assert w.size / executed == gp.SPARSE_2_4_SPEEDUP


def test_volta_has_no_sparse_mode():
    with pytest.raises(ValueError, match="no 2:4 sparse mode"):
        gp.derived_sparse_peak_flop_per_s(specs.V100_SXM2_32GB, "fp16")
    with pytest.raises(ValueError, match="no sparse peak"):
        specs.V100_SXM2_32GB.peak_flop_per_s("fp16", sparse=True)


@pytest.mark.parametrize("precision,printed", [("fp64", 7.8), ("fp32", 15.7), ("fp16", 125)])
def test_v100_peaks_from_units_match_its_datasheet(precision, printed):
    # V100 datasheet (SXM2): 7.8 / 15.7 / 125 TFLOPS; whitepaper Table 1: 80 SMs, 1530 MHz
    v = specs.V100_SXM2_32GB
    assert v.peak_flop_per_s(precision) / 1e12 == printed
    assert round(gp.derived_peak_flop_per_s(v, precision) / 1e12, 1) == pytest.approx(
        printed, abs=0.35)


def test_v100_announcement_contradicts_the_datasheet():
    # NVIDIA's May 2017 announcement printed 1455 MHz and 120 tensor TFLOPS; the whitepaper
    # v1.1 and the datasheet print 1530 MHz and 125. The book follows the shipped part: the
    # spec's clock reproduces 125, the announcement's clock reproduces 120.
    v = specs.V100_SXM2_32GB
    assert round(gp.sm_peak_flop_per_s(80, 512, 1455e6) / 1e12) == 119  # printed "120" (rounded)
    assert round(gp.sm_peak_flop_per_s(80, 512, v.tensor_boost_clock_hz) / 1e12) == 125
    assert v.boost_clock_hz == 1530e6


def test_a100_40gb_bandwidth_from_the_bus():
    # whitepaper Table 3: 5120-bit HBM2 at 1215 MHz DDR, 1555 GB/s
    a = specs.A100_SXM_40GB
    derived = gp.peak_memory_bytes_per_s(a.hbm_bus_width_bits, a.hbm_pin_rate_bits_per_s)
    assert round(derived / 1e9) == 1555 == a.hbm_bytes_per_s / 1e9
    assert a.dense_flop_per_s == specs.A100_SXM_80GB.dense_flop_per_s
    assert specs.gpu("a100") is specs.A100_SXM_80GB  # the existing key is unchanged
    assert specs.gpu("v100") is specs.V100_SXM2_32GB
    assert specs.gpu("a100-40gb") is a
    assert a not in specs.GPUS and specs.V100_SXM2_32GB not in specs.GPUS


def test_bad_input():
    with pytest.raises(ValueError, match="n_sms"):
        gp.sm_sparse_peak_flop_per_s(0, 1024, 1.41e9)
    with pytest.raises(ValueError, match="precision"):
        gp.derived_sparse_peak_flop_per_s(specs.A100_SXM_40GB, "fp64")
