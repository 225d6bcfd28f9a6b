"""Tests for helpers.specs: datasheet numbers, their consistency and their provenance."""

import dataclasses
import re

import pytest

from helpers import specs


@pytest.mark.parametrize("gpu", specs.GPUS, ids=lambda g: g.name)
def test_every_gpu_has_provenance(gpu):
    assert gpu.source and gpu.retrieved
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", gpu.retrieved)
    for link in (gpu.nvlink, gpu.pcie):
        if link is not None:
            assert link.source and re.fullmatch(r"\d{4}-\d{2}-\d{2}", link.retrieved)


@pytest.mark.parametrize("gpu", specs.GPUS, ids=lambda g: g.name)
def test_sparse_peaks_are_twice_dense_where_published(gpu):
    # NVIDIA's datasheets print 2:4 structured-sparsity peaks at exactly twice the dense ones.
    for precision, sparse in gpu.sparse_flop_per_s.items():
        assert sparse == pytest.approx(2 * gpu.dense_flop_per_s[precision], rel=1e-3)


def test_published_datasheet_values():
    # H100 SXM datasheet: 3.35 TB/s, 80 GB, bf16 1,979 TFLOPS with sparsity.
    assert specs.H100_SXM.hbm_bytes_per_s == 3.35e12
    assert round(specs.H100_SXM.peak_flop_per_s("bf16", sparse=True) / 1e12) == 1979
    # H200 datasheet: 141 GB at 4.8 TB/s, same compute as the H100 SXM.
    assert (specs.H200_SXM.hbm_bytes, specs.H200_SXM.hbm_bytes_per_s) == (141e9, 4.8e12)
    assert specs.H200_SXM.dense_flop_per_s == specs.H100_SXM.dense_flop_per_s
    # A100 datasheet: 312 TFLOPS bf16 dense, 2,039 GB/s.
    assert specs.A100_SXM_80GB.peak_flop_per_s("bf16") == 312e12
    assert specs.A100_SXM_80GB.hbm_bytes_per_s == 2039e9
    # NVLink: 600, 900 and 1,800 GB/s in total over both directions.
    assert specs.NVLINK4_H100.per_direction_bytes_per_s == 450e9


def test_ridge_points_match_the_device_notes():
    # The device notes for this project's H200 quote about 206 FLOP/byte (bf16 dense) and about
    # 295 on an H100: the ratio of two datasheet numbers.
    assert round(specs.H100_SXM.ridge_intensity_flop_per_byte("bf16")) == 295
    assert round(specs.H200_SXM.ridge_intensity_flop_per_byte("bf16")) == 206


def test_specs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        specs.H100_SXM.hbm_bytes = 1.0
    with pytest.raises(TypeError):
        specs.H100_SXM.dense_flop_per_s["bf16"] = 1.0


def test_unknown_precision_and_key_raise_clear_errors():
    with pytest.raises(ValueError, match="fp4"):
        specs.H100_SXM.peak_flop_per_s("fp4")
    with pytest.raises(ValueError, match="fp64"):
        specs.H100_SXM.peak_flop_per_s("fp64", sparse=True)
    with pytest.raises(ValueError, match="unknown GPU key"):
        specs.gpu("v100")


def test_invalid_specs_are_rejected():
    h100 = specs.H100_SXM
    with pytest.raises(ValueError, match="hbm_bytes_per_s"):
        dataclasses.replace(h100, hbm_bytes_per_s=0.0)
    with pytest.raises(ValueError, match="unknown precision"):
        dataclasses.replace(h100, dense_flop_per_s={"fp13": 1.0}, sparse_flop_per_s={})
    with pytest.raises(ValueError, match="sparse"):
        dataclasses.replace(h100, sparse_flop_per_s={"bf16": 1.0})
    with pytest.raises(ValueError, match="bidirectional"):
        specs.LinkSpec(name="x", bidirectional_bytes_per_s=-1, source="s", retrieved="2026-01-01")
