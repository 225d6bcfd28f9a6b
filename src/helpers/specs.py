"""Hardware specifications as data, each with its source and the date it was read.

No model function in this package types a peak rate or a bandwidth: it takes one as an
argument, and pages pass a field of a spec defined here. Dense and sparse (2:4 structured
sparsity) tensor-core peaks are separate fields, because vendor datasheets print the sparse
figure first and a reader who divides by it gets a utilization half of the true one.

Conventions:

* rates in FLOP/s (integer formats in operations/s, stored under the same name);
* capacities in bytes and bandwidths in bytes/s, decimal, as the datasheets print them;
* link bandwidths are stored as the datasheet's *bidirectional* total, with the
  per-direction figure derived (``LinkSpec.per_direction_bytes_per_s``);
* ``retrieved`` is the date the numbers were last checked against the source.

Architecture fields (SM count, clocks, units per SM, on-chip capacities, the HBM bus) come
from NVIDIA's architecture whitepapers rather than the datasheets, so they carry their own
``arch_source`` and ``arch_retrieved``. A field NVIDIA does not publish for a part is ``None``;
:mod:`helpers.models.gpu_peaks` derives the peaks from them (introduced in
{ref}`sec-gpu-architecture`).

>>> from helpers.specs import H100_SXM
>>> H100_SXM.peak_flop_per_s("bf16") / 1e12
989.4
>>> H100_SXM.peak_flop_per_s("bf16", sparse=True) / 1e12
1978.9

Used by many pages, among them: chapters/collectives.md, chapters/cuda-execution.md,
chapters/custom-operators.md, chapters/distributed-analysis.md,
chapters/fusion-and-attention.md, chapters/gemm.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from helpers.units import MHz, KiB, Ki, MiB, T

__all__ = [
    "LinkSpec", "GPUSpec", "PCIE_GEN4_X16", "PCIE_GEN5_X16", "NVLINK3_A100",
    "NVLINK4_H100", "NVLINK5_B200", "A100_SXM_80GB", "H100_SXM", "H200_SXM", "B200_HGX",
    "GPUS", "PRECISIONS", "gpu",
]
__all__ += ["PCIE_GEN3_X16", "NVLINK2_V100", "A100_SXM_40GB", "V100_SXM2_32GB", "OLDER_GPUS"]
__all__ += ["SMLimits", "SM70", "SM80", "SM90", "SM100", "SM_LIMITS", "sm_limits"]

#: Names of the number formats a peak can be asked for, in the order tables show them.
PRECISIONS = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


@dataclass(frozen=True)
class LinkSpec:
    """A point-to-point link as a datasheet states it."""

    name: str
    bidirectional_bytes_per_s: float  # both directions together, as printed
    source: str
    retrieved: str  # ISO date
    note: str = ""

    def __post_init__(self) -> None:
        if not self.bidirectional_bytes_per_s > 0:
            raise ValueError(
                f"bidirectional_bytes_per_s must be > 0, got {self.bidirectional_bytes_per_s!r}"
            )

    @property
    def per_direction_bytes_per_s(self) -> float:
        """Bandwidth in one direction (bytes/s): half the bidirectional total."""
        return self.bidirectional_bytes_per_s / 2


@dataclass(frozen=True)
class GPUSpec:
    """One accelerator's datasheet numbers.

    ``dense_flop_per_s`` and ``sparse_flop_per_s`` map a precision name from
    :data:`PRECISIONS` to a peak rate. A precision the part does not support is absent.
    """

    name: str
    architecture: str
    form_factor: str
    hbm_bytes: float  # HBM capacity, decimal bytes
    hbm_bytes_per_s: float  # peak HBM bandwidth, decimal bytes/s
    dense_flop_per_s: Mapping[str, float]
    sparse_flop_per_s: Mapping[str, float]
    nvlink: LinkSpec | None
    pcie: LinkSpec | None
    tdp_w: float  # maximum board power, watts
    source: str
    retrieved: str  # ISO date
    note: str = ""
    sm_count: int | None = None
    # --- architecture (whitepapers); None where NVIDIA does not publish the number ---------
    compute_capability: tuple[int, int] | None = None
    boost_clock_hz: float | None = None  # max boost clock for FP64/FP32 (non-tensor) work
    tensor_boost_clock_hz: float | None = None  # clock the TF32/FP16/BF16/FP8/INT8 peaks use
    warp_schedulers_per_sm: int | None = None  # = SM partitions (processing blocks)
    fp32_lanes_per_sm: int | None = None  # FP32 "CUDA cores": one FMA per lane per clock
    fp64_lanes_per_sm: int | None = None  # FP64 units (non-tensor), one FMA per clock
    tensor_cores_per_sm: int | None = None
    #: dense tensor-core FMA (multiply-accumulate) operations per clock per SM, by precision
    tensor_fma_per_clock_per_sm: Mapping[str, float] = field(default_factory=dict)
    register_file_bytes_per_sm: float | None = None
    l1_smem_bytes_per_sm: float | None = None  # combined L1 data cache / shared memory
    max_smem_bytes_per_sm: float | None = None  # the largest shared-memory carve-out
    #: the most shared memory one thread block can address (the carve-out less the 1 KiB CUDA
    #: reserves per block from compute capability 8.0 on; dynamic allocation, opt-in above 48 KiB)
    max_smem_bytes_per_block: float | None = None
    smem_bytes_per_clock_per_sm: float | None = None  # 32 banks x 4 bytes per clock
    l2_bytes: float | None = None
    hbm_bus_width_bits: int | None = None
    hbm_pin_rate_bits_per_s: float | None = None  # data rate per pin (DDR: 2 x memory clock)
    arch_source: str = ""
    arch_retrieved: str = ""  # ISO date
    arch_note: str = ""
    # --- L2 bandwidth: NVIDIA publishes none; a microbenchmark's figure, with its source -----
    l2_bytes_per_s: float | None = None
    l2_bandwidth_source: str = ""

    def __post_init__(self) -> None:
        for name in ("hbm_bytes", "hbm_bytes_per_s", "tdp_w"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{self.name}: {name} must be > 0, got {value!r}")
        for table_name in ("dense_flop_per_s", "sparse_flop_per_s"):
            table = getattr(self, table_name)
            for key, value in table.items():
                if key not in PRECISIONS:
                    raise ValueError(f"{self.name}: unknown precision {key!r} in {table_name}")
                if not value > 0:
                    raise ValueError(f"{self.name}: {table_name}[{key!r}] must be > 0")
            object.__setattr__(self, table_name, MappingProxyType(dict(table)))
        for key, value in self.sparse_flop_per_s.items():
            dense = self.dense_flop_per_s.get(key)
            if dense is None or value < dense:
                raise ValueError(f"{self.name}: sparse {key} peak must be >= its dense peak")
        for name in ("sm_count", "boost_clock_hz", "tensor_boost_clock_hz",
                     "warp_schedulers_per_sm", "fp32_lanes_per_sm", "fp64_lanes_per_sm",
                     "tensor_cores_per_sm", "register_file_bytes_per_sm", "l1_smem_bytes_per_sm",
                     "max_smem_bytes_per_sm", "smem_bytes_per_clock_per_sm", "l2_bytes",
                     "hbm_bus_width_bits", "hbm_pin_rate_bits_per_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{self.name}: {name} must be > 0 or None, got {value!r}")
        for key, value in self.tensor_fma_per_clock_per_sm.items():
            if key not in PRECISIONS or key in ("fp32", "fp64"):
                raise ValueError(f"{self.name}: unknown tensor precision {key!r} in "
                                 "tensor_fma_per_clock_per_sm")
            if not value > 0:
                raise ValueError(f"{self.name}: tensor_fma_per_clock_per_sm[{key!r}] must be > 0")
        object.__setattr__(self, "tensor_fma_per_clock_per_sm",
                           MappingProxyType(dict(self.tensor_fma_per_clock_per_sm)))
        if (self.max_smem_bytes_per_sm is not None and self.l1_smem_bytes_per_sm is not None
                and self.max_smem_bytes_per_sm > self.l1_smem_bytes_per_sm):
            raise ValueError(f"{self.name}: max_smem_bytes_per_sm exceeds l1_smem_bytes_per_sm")
        if (self.max_smem_bytes_per_block is not None and self.max_smem_bytes_per_sm is not None
                and self.max_smem_bytes_per_block > self.max_smem_bytes_per_sm):
            raise ValueError(f"{self.name}: max_smem_bytes_per_block exceeds max_smem_bytes_per_sm")
        if any(getattr(self, n) is not None for n in ("boost_clock_hz", "fp32_lanes_per_sm",
                                                      "l2_bytes")) and not self.arch_source:
            raise ValueError(f"{self.name}: architecture fields need an arch_source")
        if self.l2_bytes_per_s is not None:
            if not self.l2_bytes_per_s > 0:
                raise ValueError(f"{self.name}: l2_bytes_per_s must be > 0 or None, got "
                                 f"{self.l2_bytes_per_s!r}")
            if not self.l2_bandwidth_source:
                raise ValueError(f"{self.name}: l2_bytes_per_s needs an l2_bandwidth_source")

    def peak_flop_per_s(self, precision: str, *, sparse: bool = False) -> float:
        """Peak rate (FLOP/s) for ``precision``; dense unless ``sparse=True``.

        Raises ``ValueError`` if the part has no such peak.
        """
        table = self.sparse_flop_per_s if sparse else self.dense_flop_per_s
        if precision not in table:
            kind = "sparse" if sparse else "dense"
            raise ValueError(
                f"{self.name} has no {kind} peak for precision {precision!r}; "
                f"known: {sorted(table)}"
            )
        return table[precision]

    def ridge_intensity_flop_per_byte(self, precision: str = "bf16") -> float:
        """Dense peak over HBM bandwidth (FLOP/byte): the roofline's ridge point."""
        return self.peak_flop_per_s(precision) / self.hbm_bytes_per_s



# --- Architecture (whitepapers) -----------------------------------------------------------
# NVIDIA's whitepapers print on-chip capacities in binary units ("256 KB" of registers is
# 65,536 32-bit registers; "40 MB" of L2 is 40,960 KB), so they are stored as KiB and MiB.

_CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus (compute capability list)"
_SMEM_BANKS = ("Shared memory: 32 banks of 32 bits each per clock, CUDA C++ Programming Guide, "
               "compute capability 5.x and later, 'Shared Memory'")
_SMEM_PER_BLOCK = ("shared memory one thread block can address: CUDA C++ Programming Guide, "
                   "'Shared Memory' of compute capability 7.x (96 KB), 8.x (163 KB for 8.0) and "
                   "9.0 (227 KB); NVIDIA Hopper Tuning Guide, 'Unified Shared Memory/L1/Texture "
                   "Cache' (CUDA reserves 1 KB of shared memory per thread block)")

_AMPERE_SM = dict(
    compute_capability=(8, 0),
    boost_clock_hz=1410 * MHz,
    tensor_boost_clock_hz=1410 * MHz,
    warp_schedulers_per_sm=4,
    fp32_lanes_per_sm=64,
    fp64_lanes_per_sm=32,
    tensor_cores_per_sm=4,
    tensor_fma_per_clock_per_sm={"fp64_tensor": 64, "tf32": 512, "bf16": 1024, "fp16": 1024,
                                 "int8": 2048},
    register_file_bytes_per_sm=256 * KiB,
    l1_smem_bytes_per_sm=192 * KiB,
    max_smem_bytes_per_sm=164 * KiB,
    max_smem_bytes_per_block=163 * KiB,
    smem_bytes_per_clock_per_sm=32 * 4,
    l2_bytes=40 * MiB,
    hbm_bus_width_bits=5120,
    arch_source=("NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): Table 3 "
                 "(comparison of data center GPUs: SMs, FP32/FP64 cores and Tensor Cores per SM, "
                 "boost clock, 5120-bit memory interface, L2, shared memory, register file), "
                 "Table 2 (dense FMA per clock per SM by precision); " + _CUDA_GPUS + "; "
                 + _SMEM_BANKS + "; " + _SMEM_PER_BLOCK),
    arch_retrieved="2026-11-30",
)

_HOPPER_SXM = dict(
    compute_capability=(9, 0),
    boost_clock_hz=1980 * MHz,
    tensor_boost_clock_hz=1830 * MHz,
    warp_schedulers_per_sm=4,
    fp32_lanes_per_sm=128,
    fp64_lanes_per_sm=64,
    tensor_cores_per_sm=4,
    tensor_fma_per_clock_per_sm={"fp64_tensor": 128, "tf32": 1024, "bf16": 2048, "fp16": 2048,
                                 "fp8": 4096, "int8": 4096},
    register_file_bytes_per_sm=256 * KiB,
    l1_smem_bytes_per_sm=256 * KiB,
    max_smem_bytes_per_sm=228 * KiB,
    max_smem_bytes_per_block=227 * KiB,
    smem_bytes_per_clock_per_sm=32 * 4,
    l2_bytes=50 * MiB,
    arch_source=("NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): Table 3 "
                 "(comparison of A100 and H100: 132 SMs, 128 FP32 and 64 FP64 cores and 4 Tensor "
                 "Cores per SM, boost clock 1830 MHz for FP8/FP16/BF16/TF32 Tensor Core work and "
                 "1980 MHz for FP64/FP32, 5120-bit HBM3, 50 MB L2, shared memory up to 228 KB, "
                 "256 KB register file per SM); 'H100 SM architecture' (2x the A100 SM's dense "
                 "MMA rate per clock, 4x with FP8); " + _CUDA_GPUS + "; " + _SMEM_BANKS + "; "
                 + _SMEM_PER_BLOCK),
    arch_retrieved="2026-11-30",
)

#: L2 bandwidth of the GH100 (H100 and H200 SXM: the same die, L2 and clocks). NVIDIA prints
#: no figure; this is a measured one, an assumption to replace by a measurement on the machine.
_HOPPER_L2_BANDWIDTH = dict(
    l2_bytes_per_s=6.65e12,
    l2_bandwidth_source=("Measured H100 L2 bandwidth (a microbenchmark within one L2 partition), "
                         "6.65e12 bytes/s, as used by XLA's GPU dot cost model: openxla/xla, "
                         "xla/service/gpu/model/gpu_dot_fusion_cost_model.cc, CalculateL2Time "
                         "(read 2026-12-01). An assumption for the H200, which has the same "
                         "GH100 L2 and SM clocks; NVIDIA publishes no L2 bandwidth."),
)

# --- Links -----------------------------------------------------------------------------

PCIE_GEN4_X16 = LinkSpec(
    name="PCIe Gen4 x16",
    bidirectional_bytes_per_s=64e9,
    source="NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
    retrieved="2026-11-30",
    note="NVIDIA rounds 16 GT/s x 16 lanes (128b/130b encoding) to 32 GB/s each way.",
)
PCIE_GEN5_X16 = LinkSpec(
    name="PCIe Gen5 x16",
    bidirectional_bytes_per_s=128e9,
    source="NVIDIA H100 Tensor Core GPU datasheet (SXM column, 'Interconnect')",
    retrieved="2026-11-30",
    note="32 GT/s x 16 lanes, rounded to 64 GB/s each way.",
)
NVLINK3_A100 = LinkSpec(
    name="NVLink 3 (A100)",
    bidirectional_bytes_per_s=600e9,
    source="NVIDIA A100 Tensor Core GPU datasheet; NVIDIA A100 architecture whitepaper (12 links)",
    retrieved="2026-11-30",
)
NVLINK4_H100 = LinkSpec(
    name="NVLink 4 (H100/H200)",
    bidirectional_bytes_per_s=900e9,
    source="NVIDIA H100 and H200 Tensor Core GPU datasheets (SXM columns)",
    retrieved="2026-11-30",
    note="18 links; the total of both directions.",
)
NVLINK5_B200 = LinkSpec(
    name="NVLink 5 (B200)",
    bidirectional_bytes_per_s=1.8e12,
    source="NVIDIA HGX B200 specifications (nvidia.com/en-us/data-center/hgx)",
    retrieved="2026-11-30",
)

PCIE_GEN3_X16 = LinkSpec(
    name="PCIe Gen3 x16",
    bidirectional_bytes_per_s=32e9,
    source="NVIDIA Tesla V100 GPU datasheet (PCIe column, 'Interconnect Bandwidth: 32 GB/sec')",
    retrieved="2026-12-01",
    note="8 GT/s x 16 lanes (128b/130b), rounded to 16 GB/s each way.",
)
NVLINK2_V100 = LinkSpec(
    name="NVLink 2 (V100)",
    bidirectional_bytes_per_s=300e9,
    source="NVIDIA Tesla V100 GPU datasheet (SXM2 column, 'NVLink 300 GB/s'); Volta "
           "architecture whitepaper (six links of 50 GB/s)",
    retrieved="2026-12-01",
)

# --- GPUs ------------------------------------------------------------------------------

A100_SXM_80GB = GPUSpec(
    name="A100 SXM 80GB",
    architecture="Ampere (GA100)",
    form_factor="SXM4",
    hbm_bytes=80e9,
    hbm_bytes_per_s=2039e9,
    dense_flop_per_s={"fp64": 9.7 * T, "fp64_tensor": 19.5 * T, "fp32": 19.5 * T,
                      "tf32": 156 * T, "bf16": 312 * T, "fp16": 312 * T, "int8": 624 * T},
    sparse_flop_per_s={"tf32": 312 * T, "bf16": 624 * T, "fp16": 624 * T, "int8": 1248 * T},
    nvlink=NVLINK3_A100,
    pcie=PCIE_GEN4_X16,
    tdp_w=400,
    sm_count=108,
    **_AMPERE_SM,
    arch_note="The whitepaper describes the 40 GB part (HBM2 at 1215 MHz DDR, 1555 GB/s); the "
              "80 GB part has the same SMs, clocks and 5120-bit bus with faster HBM2e, whose "
              "per-pin rate NVIDIA does not print, so it is left unset here.",
    source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
           "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
    retrieved="2026-11-30",
    note="Datasheet marks sparse figures with an asterisk; dense = sparse / 2.",
)

#: The 40 GB part: the 80 GB part's GPU, SMs and peaks (derived, not copied); only the memory
#: and its sources differ.
A100_SXM_40GB = replace(
    A100_SXM_80GB,
    name="A100 SXM 40GB",
    hbm_bytes=40e9,
    hbm_bytes_per_s=1555e9,
    hbm_pin_rate_bits_per_s=2 * 1215 * MHz,
    arch_note="The part the whitepaper describes: HBM2 at 1215 MHz, double data rate, over "
              "5120 bits (1555 GB/s).",
    source="NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), Table 1 (A100 40 GB: "
           "FP64 9.7, FP64 Tensor 19.5, FP32 19.5, TF32 156/312, FP16 and BF16 312/624, INT8 "
           "624/1248 TOPS, dense/sparse) and Table 3 (40 GB HBM2, 1555 GB/s, 400 W TDP); NVIDIA "
           "A100 datasheet (2020 edition, 'A100 40GB SXM' column, same figures)",
    retrieved="2026-12-01",
    note="Same GPU and peaks as the 80 GB part; only the memory differs.",
)

V100_SXM2_32GB = GPUSpec(
    name="V100 SXM2 32GB",
    architecture="Volta (GV100)",
    form_factor="SXM2",
    hbm_bytes=32e9,
    hbm_bytes_per_s=900e9,
    dense_flop_per_s={"fp64": 7.8 * T, "fp32": 15.7 * T, "fp16": 125 * T},
    sparse_flop_per_s={},
    nvlink=NVLINK2_V100,
    pcie=PCIE_GEN3_X16,
    tdp_w=300,
    sm_count=80,
    compute_capability=(7, 0),
    boost_clock_hz=1530 * MHz,
    tensor_boost_clock_hz=1530 * MHz,
    warp_schedulers_per_sm=4,
    fp32_lanes_per_sm=64,
    fp64_lanes_per_sm=32,
    tensor_cores_per_sm=8,
    tensor_fma_per_clock_per_sm={"fp16": 8 * 64},
    register_file_bytes_per_sm=256 * KiB,
    l1_smem_bytes_per_sm=128 * KiB,
    max_smem_bytes_per_sm=96 * KiB,
    max_smem_bytes_per_block=96 * KiB,
    smem_bytes_per_clock_per_sm=32 * 4,
    l2_bytes=6144 * KiB,
    hbm_bus_width_bits=4096,
    arch_source=("NVIDIA Tesla V100 GPU Architecture whitepaper (2017, v1.1), Table 1 (80 SMs, "
                 "64 FP32 and 32 FP64 cores and 8 Tensor Cores per SM, GPU boost clock 1530 "
                 "MHz, peak FP32 15.7, FP64 7.8, Tensor 125 TFLOPS, 4096-bit HBM2, L2 6144 KB, "
                 "shared memory configurable up to 96 KB of a 128 KB L1, 256 KB register file "
                 "per SM) and 'Tensor Cores' (64 FMA per clock per Tensor Core); " + _CUDA_GPUS
                 + "; " + _SMEM_BANKS + "; " + _SMEM_PER_BLOCK),
    arch_retrieved="2026-12-01",
    arch_note="NVIDIA's first announcement (May 2017) printed a 1455 MHz boost clock and 15 / "
              "7.5 / 120 TFLOPS; the shipped part and its datasheet use 1530 MHz and 15.7 / "
              "7.8 / 125, the figures kept here.",
    source="NVIDIA Tesla V100 GPU datasheet (SXM2 column: double precision 7.8, single 15.7, "
           "tensor 125 TFLOPS; 32/16 GB HBM2 at 900 GB/s; NVLink 300 GB/s; 300 W)",
    retrieved="2026-12-01",
    note="Volta's tensor cores take FP16 inputs (FP16 or FP32 accumulate) and have no "
         "structured-sparsity mode: no sparse peaks, and no TF32, BF16 or INT8 tensor path.",
)

H100_SXM = GPUSpec(
    name="H100 SXM",
    architecture="Hopper (GH100)",
    form_factor="SXM5",
    hbm_bytes=80e9,
    hbm_bytes_per_s=3.35e12,
    dense_flop_per_s={"fp64": 34 * T, "fp64_tensor": 67 * T, "fp32": 67 * T,
                      "tf32": 494.7 * T, "bf16": 989.4 * T, "fp16": 989.4 * T,
                      "fp8": 1978.9 * T, "int8": 1978.9 * T},
    sparse_flop_per_s={"tf32": 989.4 * T, "bf16": 1978.9 * T, "fp16": 1978.9 * T,
                       "fp8": 3957.8 * T, "int8": 3957.8 * T},
    nvlink=NVLINK4_H100,
    pcie=PCIE_GEN5_X16,
    tdp_w=700,
    sm_count=132,
    **_HOPPER_SXM,
    **_HOPPER_L2_BANDWIDTH,
    hbm_bus_width_bits=5120,
    arch_note="The whitepaper does not print the HBM3 per-pin rate; the datasheet's 3.35 TB/s "
              "over the 5120-bit bus implies one.",
    source="https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
    retrieved="2026-11-30",
    note="The datasheet prints sparse peaks rounded (1,979 TFLOPS bf16); the unrounded values "
         "here are those of the Hopper architecture whitepaper's table.",
)

H200_SXM = GPUSpec(
    name="H200 SXM",
    architecture="Hopper (GH100)",
    form_factor="SXM5",
    hbm_bytes=141e9,
    hbm_bytes_per_s=4.8e12,
    dense_flop_per_s=dict(H100_SXM.dense_flop_per_s),
    sparse_flop_per_s=dict(H100_SXM.sparse_flop_per_s),
    nvlink=NVLINK4_H100,
    pcie=PCIE_GEN5_X16,
    tdp_w=700,
    sm_count=132,
    **_HOPPER_SXM,
    **_HOPPER_L2_BANDWIDTH,
    arch_note="NVIDIA publishes no architecture table for the H200. It is the same GH100 GPU as "
              "the H100 SXM with HBM3e instead of HBM3, and its datasheet prints the same peak "
              "at every precision, so the SM fields are the H100 SXM whitepaper's. Its memory "
              "bus width and per-pin rate are not published and are left unset.",
    source="https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446",
    retrieved="2026-11-30",
    note="Same compute peaks as the H100 SXM; more and faster memory (HBM3e).",
)

B200_HGX = GPUSpec(
    name="B200 (HGX)",
    architecture="Blackwell",
    form_factor="SXM6 (HGX B200 board, 1000 W)",
    hbm_bytes=180e9,
    hbm_bytes_per_s=8e12,
    dense_flop_per_s={"fp64": 40 * T, "fp64_tensor": 40 * T, "fp32": 80 * T,
                      "tf32": 1100 * T, "bf16": 2250 * T, "fp16": 2250 * T,
                      "fp8": 4500 * T, "int8": 4500 * T, "fp4": 9000 * T},
    sparse_flop_per_s={"tf32": 2200 * T, "bf16": 4500 * T, "fp16": 4500 * T,
                       "fp8": 9000 * T, "int8": 9000 * T, "fp4": 18000 * T},
    nvlink=NVLINK5_B200,
    pcie=PCIE_GEN5_X16,
    tdp_w=1000,
    compute_capability=(10, 0),
    arch_source=_CUDA_GPUS,
    arch_retrieved="2026-11-30",
    arch_note="NVIDIA's Blackwell documents read for this book give no SM count, clock or "
              "per-SM rates for the B200, so the derived peaks cannot be computed for it.",
    source="https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200, per-GPU = board / 8); "
           "DGX B200 datasheet (1,440 GB, 64 TB/s for eight GPUs)",
    retrieved="2026-11-30",
    note="Per-GPU values derived from the 8-GPU board totals. The GB200 variant runs at 1200 W "
         "with higher peaks; these are the HGX ones.",
)

#: Every GPU in the book, in the order tables show them.
GPUS: tuple[GPUSpec, ...] = (A100_SXM_80GB, H100_SXM, H200_SXM, B200_HGX)

#: Earlier parts, for reproducing papers measured on them (Megatron-LM's V100 and A100 40 GB
#: runs); not in the book's tables.
OLDER_GPUS: tuple[GPUSpec, ...] = (V100_SXM2_32GB, A100_SXM_40GB)

_BY_KEY = {
    "a100": A100_SXM_80GB,
    "h100": H100_SXM,
    "h200": H200_SXM,
    "b200": B200_HGX,
    "a100-40gb": A100_SXM_40GB,
    "v100": V100_SXM2_32GB,
}


def gpu(key: str) -> GPUSpec:
    """Look a GPU up by a short key (``"a100"``, ``"h100"``, ``"h200"``, ``"b200"``).

    >>> gpu("H200").hbm_bytes / 1e9
    141.0
    """
    try:
        return _BY_KEY[key.lower()]
    except KeyError:
        raise ValueError(f"unknown GPU key {key!r}; known: {sorted(_BY_KEY)}") from None


# --- Per-SM limits by compute capability (lesson "CUDA execution", sec-cuda-execution) -----

_PG_TABLE = ("NVIDIA CUDA C++ Programming Guide (CUDA 13), 'Features and Technical "
             "Specifications', table 'Technical Specifications per Compute Capability', "
             "columns 8.0, 9.0 and 10.0 (KB = 1024 bytes)")
_OCC_H = ("cuda_occupancy.h, CUDA Toolkit 13.0 (as shipped with Triton 3.5.0): "
          "cudaOccRegAllocationGranularity, cudaOccSubPartitionsPerMultiprocessor, "
          "cudaOccSMemAllocationGranularity, cudaOccMaxBlocksPerMultiprocessor")


@dataclass(frozen=True)
class SMLimits:
    r"""What one streaming multiprocessor (SM) can hold at once, for one compute capability.

    These are the inputs of the occupancy calculator (:mod:`helpers.models.occupancy`).
    Counts are plain integers; sizes in bytes. Fields, with the symbols the page uses:

    * ``warp_size`` (32 threads), ``max_threads_per_block``;
    * ``max_threads_per_sm`` and ``max_warps_per_sm`` (:math:`W_\max`);
    * ``max_blocks_per_sm`` (:math:`B_\max`), the resident thread-block slots;
    * ``registers_per_sm`` (:math:`R_\mathrm{SM}`, 32-bit registers),
      ``max_registers_per_block``, ``max_registers_per_thread``;
    * ``register_alloc_unit`` (registers per warp are rounded up to a multiple of it) and
      ``register_sub_partitions`` (the register file is split into this many equal parts,
      each holding whole warps: the "warp allocation granularity");
    * ``smem_per_sm_bytes`` (:math:`S_\mathrm{SM}`), ``max_smem_per_block_bytes`` (what one
      block may ask for, after opting in above 48 KiB), ``smem_reserved_per_block_bytes``
      (taken by the driver from every resident block) and ``smem_alloc_unit_bytes`` (a
      block's shared memory is rounded up to a multiple of it).
    """

    name: str
    compute_capability: str
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_alloc_unit: int
    register_sub_partitions: int
    smem_per_sm_bytes: int
    max_smem_per_block_bytes: int
    smem_reserved_per_block_bytes: int
    smem_alloc_unit_bytes: int
    source: str
    retrieved: str  # ISO date
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("warp_size", "max_threads_per_block", "max_threads_per_sm",
                     "max_warps_per_sm", "max_blocks_per_sm", "registers_per_sm",
                     "max_registers_per_block", "max_registers_per_thread", "register_alloc_unit",
                     "register_sub_partitions", "smem_per_sm_bytes", "max_smem_per_block_bytes",
                     "smem_alloc_unit_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.name}: {name} must be an integer >= 1, got {value!r}")
        if not (isinstance(self.smem_reserved_per_block_bytes, int)
                and self.smem_reserved_per_block_bytes >= 0):
            raise ValueError(f"{self.name}: smem_reserved_per_block_bytes must be an integer "
                             f">= 0, got {self.smem_reserved_per_block_bytes!r}")
        if self.max_warps_per_sm * self.warp_size != self.max_threads_per_sm:
            raise ValueError(f"{self.name}: max_warps_per_sm x warp_size must equal "
                             f"max_threads_per_sm ({self.max_warps_per_sm} x {self.warp_size} "
                             f"!= {self.max_threads_per_sm})")
        if self.registers_per_sm % self.register_sub_partitions:
            raise ValueError(f"{self.name}: registers_per_sm must split evenly into "
                             f"{self.register_sub_partitions} sub-partitions")
        if self.max_smem_per_block_bytes + self.smem_reserved_per_block_bytes > self.smem_per_sm_bytes:
            raise ValueError(f"{self.name}: a block's shared memory plus the reserved part "
                             "cannot exceed the SM's")


SM70 = SMLimits(
    name="compute capability 7.0 (V100)", compute_capability="7.0",
    warp_size=32, max_threads_per_block=1024, max_threads_per_sm=2048, max_warps_per_sm=64,
    max_blocks_per_sm=32, registers_per_sm=64 * Ki, max_registers_per_block=64 * Ki,
    max_registers_per_thread=255, register_alloc_unit=256, register_sub_partitions=4,
    smem_per_sm_bytes=96 * Ki, max_smem_per_block_bytes=96 * Ki,
    smem_reserved_per_block_bytes=0, smem_alloc_unit_bytes=256,
    source="NVIDIA CUDA C++ Best Practices Guide, section 'Calculating Occupancy' (65,536 "
           "registers and 2,048 resident threads per SM on compute capability 7.0; registers "
           "allocated in units of 256 per warp); " + _OCC_H + " (32 blocks per SM, 4 "
           "sub-partitions, 256-byte shared-memory unit, the Volta carveouts up to 96 KB, no "
           "reserved shared memory before Ampere)",
    retrieved="2026-11-30",
    note="Kept only to reproduce the Best Practices Guide's worked example; the 96 KiB "
         "per-block maximum is the largest Volta carveout in cuda_occupancy.h and was not "
         "checked against a table.",
)

SM80 = SMLimits(
    name="compute capability 8.0 (A100)", compute_capability="8.0",
    warp_size=32, max_threads_per_block=1024, max_threads_per_sm=2048, max_warps_per_sm=64,
    max_blocks_per_sm=32, registers_per_sm=64 * Ki, max_registers_per_block=64 * Ki,
    max_registers_per_thread=255, register_alloc_unit=256, register_sub_partitions=4,
    smem_per_sm_bytes=164 * Ki, max_smem_per_block_bytes=163 * Ki,
    smem_reserved_per_block_bytes=1 * Ki, smem_alloc_unit_bytes=128,
    source=_PG_TABLE + "; " + _OCC_H + "; NVIDIA Ampere GPU Architecture Tuning Guide "
           "('CUDA reserves 1 KB of shared memory per thread block')",
    retrieved="2026-11-30",
)

SM90 = SMLimits(
    name="compute capability 9.0 (H100, H200)", compute_capability="9.0",
    warp_size=32, max_threads_per_block=1024, max_threads_per_sm=2048, max_warps_per_sm=64,
    max_blocks_per_sm=32, registers_per_sm=64 * Ki, max_registers_per_block=64 * Ki,
    max_registers_per_thread=255, register_alloc_unit=256, register_sub_partitions=4,
    smem_per_sm_bytes=228 * Ki, max_smem_per_block_bytes=227 * Ki,
    smem_reserved_per_block_bytes=1 * Ki, smem_alloc_unit_bytes=128,
    source=_PG_TABLE + "; " + _OCC_H + "; NVIDIA Hopper Tuning Guide (228 KB per SM, 227 KB "
           "per block, 1 KB reserved per block)",
    retrieved="2026-11-30",
)

SM100 = SMLimits(
    name="compute capability 10.0 (B200)", compute_capability="10.0",
    warp_size=32, max_threads_per_block=1024, max_threads_per_sm=2048, max_warps_per_sm=64,
    max_blocks_per_sm=32, registers_per_sm=64 * Ki, max_registers_per_block=64 * Ki,
    max_registers_per_thread=255, register_alloc_unit=256, register_sub_partitions=4,
    smem_per_sm_bytes=228 * Ki, max_smem_per_block_bytes=227 * Ki,
    smem_reserved_per_block_bytes=1 * Ki, smem_alloc_unit_bytes=128,
    source=_PG_TABLE + "; " + _OCC_H,
    retrieved="2026-11-30",
    note="The 1 KiB reservation is the table's per-SM minus per-block maximum, as on 8.0 and "
         "9.0 where the tuning guides state it; no Blackwell document was checked for it.",
)

#: Per-SM limits of the compute capabilities the book uses, oldest first.
SM_LIMITS: tuple[SMLimits, ...] = (SM70, SM80, SM90, SM100)

_SM_BY_KEY = {"7.0": SM70, "v100": SM70, "8.0": SM80, "a100": SM80, "9.0": SM90, "h100": SM90,
              "h200": SM90, "10.0": SM100, "b200": SM100}


def sm_limits(key: str) -> SMLimits:
    """Per-SM limits by compute capability (``"9.0"``) or GPU key (``"h200"``).

    >>> sm_limits("h200").max_warps_per_sm, sm_limits("8.0").smem_per_sm_bytes // 1024
    (64, 164)
    """
    try:
        return _SM_BY_KEY[str(key).lower()]
    except KeyError:
        raise ValueError(f"unknown compute capability or GPU {key!r}; "
                         f"known: {sorted(_SM_BY_KEY)}") from None
