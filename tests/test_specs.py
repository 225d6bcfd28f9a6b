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
        specs.gpu("p100")  # v100 became known in issue 23


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


# --- architecture fields (whitepapers) ------------------------------------------------------

@pytest.mark.parametrize("gpu", specs.GPUS, ids=lambda g: g.name)
def test_architecture_fields_have_provenance(gpu):
    assert gpu.arch_source and re.fullmatch(r"\d{4}-\d{2}-\d{2}", gpu.arch_retrieved)
    assert gpu.compute_capability is not None


def test_published_architecture_values():
    a, h, h2, b = specs.A100_SXM_80GB, specs.H100_SXM, specs.H200_SXM, specs.B200_HGX
    # CUDA GPUs list: compute capability 8.0, 9.0, 9.0, 10.0.
    assert [g.compute_capability for g in specs.GPUS] == [(8, 0), (9, 0), (9, 0), (10, 0)]
    # A100 whitepaper, Table 3: 1410 MHz, 64 FP32 and 32 FP64 cores and 4 Tensor Cores per SM,
    # 40 MB of L2, 164 KB of shared memory (of 192 KB L1/shared), 256 KB registers, 5120 bits.
    assert (a.boost_clock_hz, a.fp32_lanes_per_sm, a.fp64_lanes_per_sm,
            a.tensor_cores_per_sm) == (1410e6, 64, 32, 4)
    assert (a.l2_bytes, a.max_smem_bytes_per_sm, a.l1_smem_bytes_per_sm,
            a.register_file_bytes_per_sm) == (40 * 2**20, 164 * 2**10, 192 * 2**10, 256 * 2**10)
    assert a.hbm_bus_width_bits == 5120 and a.hbm_pin_rate_bits_per_s is None
    # H100 whitepaper, Table 3 (SXM5): 1830 / 1980 MHz, 128 FP32 cores per SM, 50 MB L2,
    # 228 KB of shared memory (of 256 KB), 5120-bit HBM3.
    assert (h.tensor_boost_clock_hz, h.boost_clock_hz, h.fp32_lanes_per_sm) == (1830e6, 1980e6, 128)
    assert (h.l2_bytes, h.max_smem_bytes_per_sm, h.l1_smem_bytes_per_sm) == (
        50 * 2**20, 228 * 2**10, 256 * 2**10)
    assert h.hbm_bus_width_bits == 5120
    # The H200 shares the H100 SXM's SM fields; its bus is unpublished. The B200's SMs too.
    for name in ("sm_count", "boost_clock_hz", "tensor_boost_clock_hz", "fp32_lanes_per_sm",
                 "tensor_fma_per_clock_per_sm", "l2_bytes"):
        assert getattr(h2, name) == getattr(h, name)
        assert not getattr(b, name)
    assert h2.hbm_bus_width_bits is None


def test_shared_memory_one_block_can_address():
    # CUDA C++ Programming Guide, "Shared Memory" per compute capability: a single thread
    # block addresses up to 96 KB on 7.0, 163 KB on 8.0 and 227 KB on 9.0; the Hopper Tuning
    # Guide: CUDA reserves 1 KB per block, so one block gets the carve-out less 1 KB from 8.0 on.
    printed = [(specs.V100_SXM2_32GB, 96), (specs.A100_SXM_80GB, 163), (specs.H100_SXM, 227),
               (specs.H200_SXM, 227)]
    for gpu, kb in printed:
        assert gpu.max_smem_bytes_per_block == kb * 2**10, gpu.name
    for gpu in (specs.A100_SXM_80GB, specs.H100_SXM):
        assert gpu.max_smem_bytes_per_sm - gpu.max_smem_bytes_per_block == 2**10
    with pytest.raises(ValueError, match="max_smem_bytes_per_block"):
        dataclasses.replace(specs.H100_SXM, max_smem_bytes_per_block=229 * 2**10)


def test_invalid_architecture_fields_are_rejected():
    h100 = specs.H100_SXM
    with pytest.raises(ValueError, match="boost_clock_hz"):
        dataclasses.replace(h100, boost_clock_hz=0.0)
    with pytest.raises(ValueError, match="unknown tensor precision"):
        dataclasses.replace(h100, tensor_fma_per_clock_per_sm={"fp32": 128})
    with pytest.raises(ValueError, match="max_smem_bytes_per_sm"):
        dataclasses.replace(h100, max_smem_bytes_per_sm=2 * h100.l1_smem_bytes_per_sm)
    with pytest.raises(ValueError, match="arch_source"):
        dataclasses.replace(h100, arch_source="")
    with pytest.raises(TypeError):
        h100.tensor_fma_per_clock_per_sm["bf16"] = 1.0


def test_l2_bandwidth_is_a_sourced_assumption():
    h, h2 = specs.H100_SXM, specs.H200_SXM
    # XLA's GPU dot cost model: "6.65 * 1e12; // Measured H100 L2 bandwidth."
    assert h.l2_bytes_per_s == h2.l2_bytes_per_s == 6.65e12
    assert "gpu_dot_fusion_cost_model" in h2.l2_bandwidth_source
    assert specs.A100_SXM_80GB.l2_bytes_per_s is None  # no figure with a source: left unset
    # an L2 faster than HBM, as every level of the hierarchy is faster than the one below
    assert h2.l2_bytes_per_s > h2.hbm_bytes_per_s
    with pytest.raises(ValueError, match="l2_bandwidth_source"):
        dataclasses.replace(h2, l2_bandwidth_source="")
    with pytest.raises(ValueError, match="l2_bytes_per_s"):
        dataclasses.replace(h2, l2_bytes_per_s=-1.0)
