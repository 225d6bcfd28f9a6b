r"""Tiled matrix multiplication: intensity per tile, waves on the SMs, and a tiling's footprint.

A GPU computes :math:`C_{M\times N} = A_{M\times K} B_{K\times N}` by cutting :math:`C` into
:math:`B_M \times B_N` tiles, one per thread block (CTA). Each CTA walks :math:`K` in steps of
:math:`B_K`, loading a :math:`B_M \times B_K` tile of :math:`A` and a :math:`B_K \times B_N`
tile of :math:`B` into shared memory and accumulating their product in registers. The FLOP
and the fewest bytes of the whole product are :func:`helpers.models.roofline.matmul_flop` and
:func:`helpers.models.roofline.matmul_min_bytes` (reused, not repeated here). This module adds:

* the intensity of one tile, :math:`2 B_M B_N / ((B_M + B_N) b)` FLOP per byte loaded
  (:func:`tile_intensity_flop_per_byte`), and the bytes all CTAs load
  (:func:`tiled_load_bytes`): bigger tiles reuse each loaded element more;
* tiles, waves and the efficiency of the last, partly empty wave (:func:`tile_count`,
  :func:`waves`, :func:`wave_efficiency`), and the work wasted by padding :math:`M` and
  :math:`N` to whole tiles (:func:`tile_quantization_efficiency`);
* the footprint of a tiling: shared memory for ``stages`` pipeline buffers
  (:func:`smem_bytes`), accumulator registers per thread (:func:`accumulator_registers`) and
  how many CTAs fit on one SM by shared memory (:func:`ctas_per_sm_by_smem`);
* grouped ("swizzled") ordering: the order in which CTAs visit tiles
  (:func:`grouped_tile_order`) and the bytes each wave must fetch when the panels it shares
  stay in L2 (:func:`wave_panel_bytes`).

Introduced in {ref}`sec-gemm`; measured in {ref}`sec-lab-gemm`.

References
----------
* NVIDIA, *Matrix Multiplication Background User's Guide* (Deep Learning Performance
  documentation, DU-09799-001), sections 2.1 "GPU Implementation" (tiled outer-product GEMM),
  3.1 "Tile Quantization" and 3.2 "Wave Quantization".
* NVIDIA, *GPU Performance Background User's Guide* (Deep Learning Performance documentation),
  section "Understanding Performance", table of arithmetic intensities (linear layer with 4096
  outputs, 1024 inputs: 315 FLOPS/B at batch 512, 1 FLOPS/B at batch 1, fp16).
* CUTLASS documentation, "Efficient GEMM in CUDA": sections "Pipelining", "Epilogue" and
  "Threadblock Rasterization".
* Tillet, P., Kung, H. T. and Cox, D. (2019), "Triton: an intermediate language and compiler
  for tiled neural network computations", MAPL 2019; the Triton matrix-multiplication tutorial
  (grouped ordering, ``GROUP_SIZE_M``).

Used by: chapters/gemm.md, labs/gemm.md.
"""

from __future__ import annotations

import math

from . import occupancy as _occ
from . import roofline as _roof
from ._checks import positive as _pos
from ._checks import positive_int as _int
from . import _checks

MAX_TILES = 10**7  # grouped_tile_order lists every tile: more would hang

__all__ = ["problem_intensity_flop_per_byte", "tile_intensity_flop_per_byte", "tiled_load_bytes",
           "tile_count", "waves", "fractional_waves", "wave_efficiency", "tile_quantization_efficiency",
           "smem_bytes", "accumulator_registers", "ctas_per_sm_by_smem", "grouped_tile_order",
           "wave_panel_bytes"]


def problem_intensity_flop_per_byte(m: int, n: int, k: int, bytes_per_element: float) -> float:
    r"""Arithmetic intensity of a whole GEMM with perfect reuse: FLOP over the fewest bytes.

    .. math:: I = \frac{2MNK}{(MK + KN + MN)\,b}

    Parameters
    ----------
    m, n, k : int
        Shapes of :math:`A_{M\times K}`, :math:`B_{K\times N}`, :math:`C_{M\times N}`.
    bytes_per_element : float
        :math:`b` (2.0 for bf16/fp16, 4.0 for fp32), the same for A, B and C.

    References
    ----------
    NVIDIA, *GPU Performance Background User's Guide*, "Understanding Performance": a linear
    layer with 4096 outputs and 1024 inputs has 315 FLOPS/B at batch 512 and 1 at batch 1.

    Examples
    --------
    >>> round(problem_intensity_flop_per_byte(4096, 512, 1024, 2.0))
    315
    """
    _roof.matmul_flop(m, n, k)  # checks m, n and k by name
    return _roof.matmul_flop(m, n, k) / _roof.matmul_min_bytes(m, n, k, bytes_per_element)


def tile_intensity_flop_per_byte(block_m: int, block_n: int, bytes_per_element: float) -> float:
    r"""FLOP per byte loaded by one CTA: each K-step loads :math:`(B_M + B_N) B_K` elements and
    does :math:`2 B_M B_N B_K` FLOP, so :math:`B_K` cancels.

    .. math:: I_\text{tile} = \frac{2 B_M B_N}{(B_M + B_N)\,b}

    Assumptions
    -----------
    Every element of the A and B tiles is loaded once per K-step (from L2 or HBM) and used from
    shared memory or registers for the whole tile; C is written once (not counted).

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 2.1 "GPU Implementation"
    and section 2.3 (larger tiles have more data reuse).

    Examples
    --------
    A 128 x 256 bf16 tile does 85 FLOP per byte it loads; a 16 x 16 tile, 8:

    >>> round(tile_intensity_flop_per_byte(128, 256, 2.0), 1), tile_intensity_flop_per_byte(16, 16, 2.0)
    (85.3, 8.0)
    """
    bm, bn = _int("block_m", block_m), _int("block_n", block_n)
    return 2.0 * bm * bn / ((bm + bn) * _pos("bytes_per_element", bytes_per_element))


def tiled_load_bytes(m: int, n: int, k: int, block_m: int, block_n: int,
                     bytes_per_element: float) -> float:
    r"""Bytes all CTAs load from L2/HBM: A is read once per tile column, B once per tile row
    (masked edge loads fetch only the real elements).

    .. math:: Q_\text{load} = \left(MK \left\lceil \tfrac{N}{B_N} \right\rceil
              + KN \left\lceil \tfrac{M}{B_M} \right\rceil\right) b

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 2.1 "GPU Implementation".

    Examples
    --------
    >>> tiled_load_bytes(256, 256, 64, 128, 128, 2.0)   # 2 x 2 tiles: each panel read twice
    131072.0
    """
    m, n, k = _int("m", m), _int("n", n), _int("k", k)
    bm, bn = _int("block_m", block_m), _int("block_n", block_n)
    b = _pos("bytes_per_element", bytes_per_element)
    return float((m * k * math.ceil(n / bn) + k * n * math.ceil(m / bm)) * b)


def tile_count(m: int, n: int, block_m: int, block_n: int) -> int:
    r"""Output tiles (one CTA each) of an :math:`M \times N` result.

    .. math:: T = \left\lceil \tfrac{M}{B_M} \right\rceil \left\lceil \tfrac{N}{B_N} \right\rceil

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 3.1 "Tile Quantization".

    Examples
    --------
    >>> tile_count(8192, 8192, 128, 256), tile_count(257, 128, 128, 128)
    (2048, 3)
    """
    return (math.ceil(_int("m", m) / _int("block_m", block_m))
            * math.ceil(_int("n", n) / _int("block_n", block_n)))


def waves(n_tiles: int, n_sms: int, blocks_per_sm: int = 1) -> int:
    r"""Rounds of CTAs a GEMM takes on ``n_sms`` SMs holding ``blocks_per_sm`` CTAs each.

    .. math:: W = \left\lceil \frac{T}{S\,c} \right\rceil

    The same count as :func:`helpers.models.occupancy.waves`, in this module's argument order.

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 3.2 "Wave Quantization".

    Examples
    --------
    >>> waves(2048, 132), waves(132, 132), waves(133, 132)
    (16, 1, 2)
    """
    _int("n_tiles", n_tiles)
    _int("n_sms", n_sms)
    _int("blocks_per_sm", blocks_per_sm)
    return _occ.waves(n_tiles, blocks_per_sm, n_sms)


def fractional_waves(n_tiles: int, n_sms: int, blocks_per_sm: int = 1) -> float:
    r"""Waves (dimensionless) a GEMM's tiles would fill if a wave could be fractional: :math:`T/(S c)`.

    .. math:: W_\text{frac} = \frac{T}{S\,c}, \qquad W = \lceil W_\text{frac} \rceil

    Beside :func:`waves` (the whole rounds the hardware runs): the fractional count is the
    time a perfectly balanced schedule (Stream-K, split-K) would take in tile-times, and
    :math:`W_\text{frac} / W` is :func:`wave_efficiency`. 1.01 waves cost 2 whole ones.

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 3.2 "Wave Quantization";
    Osama et al. (2023), "Stream-K", PPoPP: the work-centric schedule that runs the fractional
    count.

    Examples
    --------
    >>> round(fractional_waves(133, 132), 4), waves(133, 132)
    (1.0076, 2)
    """
    t = _int("n_tiles", n_tiles)
    s, c = _int("n_sms", n_sms), _int("blocks_per_sm", blocks_per_sm)
    return t / (s * c)


def wave_efficiency(n_tiles: int, n_sms: int, blocks_per_sm: int = 1) -> float:
    r"""Share of the CTA slots of all waves that hold a tile: 1 when the last wave is full.

    .. math:: \eta_\text{wave} = \frac{T}{W\,S\,c}

    Assumptions
    -----------
    Every tile takes the same time and a wave's time does not depend on how full it is, so
    the GEMM takes :math:`W` tile-times; a partly full wave costs as much as a full one.

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 3.2 "Wave Quantization".

    Examples
    --------
    One tile more than a wave nearly halves the efficiency:

    >>> wave_efficiency(132, 132), round(wave_efficiency(133, 132), 3)
    (1.0, 0.504)
    """
    t = _int("n_tiles", n_tiles)
    s, c = _int("n_sms", n_sms), _int("blocks_per_sm", blocks_per_sm)
    return t / (waves(t, s, c) * s * c)


def tile_quantization_efficiency(m: int, n: int, block_m: int, block_n: int) -> float:
    r"""Share of the padded result that is real: :math:`M N` over whole tiles' area.

    .. math:: \eta_\text{tile} = \frac{MN}{\lceil M/B_M\rceil B_M\,\lceil N/B_N\rceil B_N}

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, section 3.1 "Tile Quantization".

    Examples
    --------
    A 257-row result in 128-row tiles pads to 384 rows:

    >>> round(tile_quantization_efficiency(257, 128, 128, 128), 3)
    0.669
    """
    m, n = _int("m", m), _int("n", n)
    bm, bn = _int("block_m", block_m), _int("block_n", block_n)
    return m * n / (math.ceil(m / bm) * bm * math.ceil(n / bn) * bn)


def smem_bytes(block_m: int, block_n: int, block_k: int, bytes_per_element: float,
               stages: int) -> float:
    r"""Shared memory of a tiling with ``stages`` pipeline buffers for the A and B tiles.

    .. math:: S_\text{smem} = (B_M B_K + B_K B_N)\,b\,s

    Assumptions
    -----------
    Only the operand tiles are staged (no epilogue buffer, no padding against bank
    conflicts); a compiler may add a little.

    References
    ----------
    CUTLASS documentation, "Efficient GEMM in CUDA", section "Pipelining" (shared-memory tiles
    double-buffered, so loads of the next tiles overlap the math on the current ones).

    Examples
    --------
    128 x 256 x 64 bf16 tiles in 3 stages take 144 KiB, in 4 stages 192 KiB (an H100/H200 SM
    offers up to 227 KiB to one block):

    >>> smem_bytes(128, 256, 64, 2.0, 3) / 1024, smem_bytes(128, 256, 64, 2.0, 4) / 1024
    (144.0, 192.0)
    """
    bm, bn, bk = _int("block_m", block_m), _int("block_n", block_n), _int("block_k", block_k)
    return float((bm * bk + bk * bn) * _pos("bytes_per_element", bytes_per_element)
                 * _int("stages", stages))


def accumulator_registers(block_m: int, block_n: int, num_warps: int, *,
                          accumulator_bytes: float = 4.0, warp_size: int = 32) -> float:
    r"""32-bit registers per thread that hold the CTA's accumulator tile.

    .. math:: R_\text{acc} = \frac{B_M B_N\,(b_\text{acc}/4)}{32\,w}

    References
    ----------
    CUTLASS documentation, "Efficient GEMM in CUDA", section "Pipelining": the accumulator
    elements typically occupy at least half a thread's register budget.

    Examples
    --------
    A 128 x 256 fp32 accumulator over 8 warps takes 128 registers per thread, half the
    255 a thread may have:

    >>> accumulator_registers(128, 256, 8)
    128.0
    """
    bm, bn = _int("block_m", block_m), _int("block_n", block_n)
    w, ws = _int("num_warps", num_warps), _int("warp_size", warp_size)
    return bm * bn * _pos("accumulator_bytes", accumulator_bytes) / 4.0 / (ws * w)


def ctas_per_sm_by_smem(smem_per_block_bytes: float, limits) -> int:
    r"""CTAs one SM can hold by shared memory alone (0 if one does not fit).

    .. math:: c = \left\lfloor \frac{S_\mathrm{SM}}{\lceil S_\text{CTA} + r \rceil_u} \right\rfloor

    with :math:`r` the per-block reservation and :math:`u` the allocation unit of
    ``limits`` (:class:`helpers.specs.SMLimits`); 0 also when the CTA asks for more than one
    block may have.

    References
    ----------
    NVIDIA, *CUDA C++ Programming Guide*, table "Technical Specifications per Compute
    Capability"; *Hopper Tuning Guide* (228 KB per SM, 227 KB per block, 1 KB reserved).

    Examples
    --------
    >>> from helpers import specs
    >>> ctas_per_sm_by_smem(144 * 1024, specs.SM90), ctas_per_sm_by_smem(64 * 1024, specs.SM90)
    (1, 3)
    """
    _checks.has_attributes("limits", limits, ("max_smem_per_block_bytes", "smem_per_sm_bytes"))
    s = _pos("smem_per_block_bytes", smem_per_block_bytes, allow_zero=True)
    if s > limits.max_smem_per_block_bytes:
        return 0
    per = _occ.smem_per_block_bytes(int(math.ceil(s)), reserved_bytes=limits.smem_reserved_per_block_bytes,
                                    alloc_unit_bytes=limits.smem_alloc_unit_bytes)
    return limits.smem_per_sm_bytes // per if per else limits.max_blocks_per_sm


def grouped_tile_order(m_tiles: int, n_tiles: int, group_m: int) -> list[tuple[int, int]]:
    r"""The ``(tile row, tile column)`` that each program id visits under grouped ordering.

    Program ids sweep a band of ``group_m`` tile rows column by column, then the next band;
    ``group_m = 1`` is plain row-major order. For program :math:`p`, with
    :math:`G = g\,N_t` programs per band:

    .. math:: i = g\lfloor p/G \rfloor + (p \bmod G) \bmod g', \quad j = \lfloor (p \bmod G)/g' \rfloor

    where :math:`g'` is the band's height (:math:`g`, or fewer in the last band).

    References
    ----------
    Triton tutorial "Matrix Multiplication" (L2 cache optimizations, ``GROUP_SIZE_M``);
    :func:`helpers.kernels.gemm.gemm_kernel` computes the same order on the GPU.

    Examples
    --------
    >>> grouped_tile_order(4, 2, 2)
    [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (3, 0), (2, 1), (3, 1)]
    >>> grouped_tile_order(2, 2, 1)
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    mt, nt, g = _int("m_tiles", m_tiles), _int("n_tiles", n_tiles), _int("group_m", group_m)
    _checks.at_most("m_tiles * n_tiles", mt * nt, MAX_TILES, "the order is listed tile by tile")
    order = []
    per_group = g * nt
    for pid in range(mt * nt):
        first = (pid // per_group) * g
        size = min(mt - first, g)
        order.append((first + (pid % per_group) % size, (pid % per_group) // size))
    return order


def wave_panel_bytes(m: int, n: int, k: int, block_m: int, block_n: int,
                     bytes_per_element: float, group_m: int, blocks_per_wave: int) -> float:
    r"""Bytes fetched from HBM when each wave reads every distinct A row panel and B column
    panel it touches once (shared within the wave through L2), summed over the waves.

    .. math:: Q_\text{HBM} = \sum_\text{waves} \left(r_w B_M + c_w B_N\right) K\,b

    with :math:`r_w` and :math:`c_w` the distinct tile rows and columns among the wave's CTAs
    in :func:`grouped_tile_order` (edge panels counted at full size).

    Assumptions
    -----------
    CTAs run in program-id order, ``blocks_per_wave`` at a time; L2 keeps one wave's panels and
    nothing from the previous wave. A simple model of why grouped ordering helps: a wave of
    row-major tiles spans few rows but many columns, a grouped wave a compact block.

    References
    ----------
    Triton tutorial "Matrix Multiplication" (L2 cache optimizations: in its example grouped
    ordering loads 54 blocks where row-major loads 90 for the same 9 output blocks).

    Examples
    --------
    The tutorial's example, in units of one block: a 9 x 9 grid of output blocks, K nine blocks
    deep, 9 programs at a time. Row-major, the first 9 read 1 row panel and 9 column panels of
    9 blocks each (90 blocks); grouped by 3, 3 and 3 (54). Over all 9 waves:

    >>> wave_panel_bytes(9, 9, 9, 1, 1, 1.0, 1, 9), wave_panel_bytes(9, 9, 9, 1, 1, 1.0, 3, 9)
    (810.0, 486.0)
    """
    m, n, k = _int("m", m), _int("n", n), _int("k", k)
    bm, bn = _int("block_m", block_m), _int("block_n", block_n)
    b = _pos("bytes_per_element", bytes_per_element)
    per = _int("blocks_per_wave", blocks_per_wave)
    order = grouped_tile_order(math.ceil(m / bm), math.ceil(n / bn), group_m)
    total = 0
    for start in range(0, len(order), per):
        wave = order[start:start + per]
        total += len({i for i, _ in wave}) * bm + len({j for _, j in wave}) * bn
    return float(total * k * b)


# --- the GEMM lab's truth loop: a tiled kernel's rate from a measured full-wave rate ----------
# (labs/gemm.md, "Check"; tests in tests/models/test_gemm_claims_labs2.py)

__all__ += ["quantized_rate_flop_per_s"]


def quantized_rate_flop_per_s(m: int, n: int, block_m: int, block_n: int, *,
                              peak_flop_per_s: float, n_sms: int,
                              blocks_per_sm: int = 1) -> float:
    r"""Rate of a tiled GEMM whose SMs, when all busy, run at ``peak_flop_per_s`` (FLOP/s).

    .. math:: R = R_\text{full}\;\eta_\text{wave}\;\eta_\text{tile}

    The :math:`M \times N` result is cut into :math:`B_M \times B_N` tiles, one CTA each; the
    GEMM takes whole waves of tiles (:func:`wave_efficiency`) and computes the padding of
    partial tiles (:func:`tile_quantization_efficiency`). :math:`R_\text{full}` is the rate of
    a full wave: the datasheet's dense peak gives a bound; a rate measured on the same GPU (the
    vendor library's rate at a large size, where its waves are full) gives a prediction.

    Parameters
    ----------
    m, n : int
        The result's rows and columns.
    block_m, block_n : int
        The tile (elements).
    peak_flop_per_s : float
        :math:`R_\text{full}` (FLOP/s).
    n_sms : int
        SMs on the GPU.
    blocks_per_sm : int
        CTAs resident per SM (1 for the lab's large-tile kernels).

    Returns
    -------
    float
        :math:`R` (FLOP/s).

    Assumptions
    -----------
    Every tile takes the same time; a tile's time does not depend on the problem's size, so
    fixed costs (launch, the pipeline's fill and drain, the epilogue) are negligible against
    a tile's K loop: true for long K loops, not for products of a few thousand or less.

    References
    ----------
    NVIDIA, *Matrix Multiplication Background User's Guide*, sections 3.1 "Tile Quantization"
    and 3.2 "Wave Quantization".

    Examples
    --------
    The H200's dense bf16 peak (989.4 TFLOP/s) and 128 x 256 tiles on its 132 SMs:

    >>> round(quantized_rate_flop_per_s(8192, 8192, 128, 256, peak_flop_per_s=989.4e12,
    ...                                 n_sms=132) / 1e12, 1)
    959.4
    """
    r = _checks.positive("peak_flop_per_s", peak_flop_per_s)
    n_tiles = tile_count(m, n, block_m, block_n)
    return (r * wave_efficiency(n_tiles, n_sms, blocks_per_sm)
            * tile_quantization_efficiency(m, n, block_m, block_n))


# --- fixed costs per launch (labs/gemm.md, "Check"; tests in tests/models/test_kern17.py) ----

__all__ += ["fixed_s_and_rate_flop_per_s", "time_with_fixed_cost_s", "rate_with_fixed_cost_flop_per_s"]


def time_with_fixed_cost_s(flop: float, rate_flop_per_s: float, fixed_s: float) -> float:
    r"""Time of a product of ``flop`` FLOP at ``rate_flop_per_s`` that also pays ``fixed_s``
    once, whatever its size (launch latency, the pipeline's fill and drain, the epilogue):

    .. math:: T = t_0 + F / R_\infty

    Hockney's characterisation of a pipeline by its asymptotic rate :math:`R_\infty` and its
    start-up time :math:`t_0` (Hockney, R. W. and Jesshope, C. R., *Parallel Computers 2*,
    1988, the :math:`(r_\infty, n_{1/2})` model), applied to a whole kernel: the
    half-performance size is :math:`F_{1/2} = R_\infty t_0`.

    >>> time_with_fixed_cost_s(2e9, 1e15, 3e-6) * 1e6
    5.0
    """
    f = _checks.positive("flop", flop, allow_zero=True)
    r = _checks.positive("rate_flop_per_s", rate_flop_per_s)
    t0 = _checks.positive("fixed_s", fixed_s, allow_zero=True)
    return t0 + f / r


def rate_with_fixed_cost_flop_per_s(flop: float, rate_flop_per_s: float, fixed_s: float) -> float:
    r"""The achieved rate :math:`F / (t_0 + F / R_\infty)` (:func:`time_with_fixed_cost_s`):
    half of :math:`R_\infty` at :math:`F = R_\infty t_0`, approaching it as :math:`F` grows.

    .. math:: R = \frac{F}{t_0 + F / R_\infty}

    >>> rate_with_fixed_cost_flop_per_s(3e9, 1e15, 3e-6) / 1e15
    0.5
    """
    f = _checks.positive("flop", flop)
    return f / time_with_fixed_cost_s(f, rate_flop_per_s, fixed_s)


def fixed_s_and_rate_flop_per_s(flops, times_s) -> tuple[float, float]:
    r"""The two constants of :func:`time_with_fixed_cost_s` from two measured products of
    different FLOP counts (e.g. the same :math:`M \times N` with two short K loops):

    .. math:: R_\infty = \frac{F_2 - F_1}{T_2 - T_1}, \qquad t_0 = T_1 - F_1 / R_\infty

    Hockney's way of characterising a pipeline by two measurements (Hockney 1994, Parallel
    Computing 20(3), 389-398, for messages). Evaluated at a larger product it predicts that
    product's time from the same run, assuming the per-step rate holds there. A ValueError
    when the times do not grow with the FLOP (no positive rate) or the line gives a negative
    fixed cost (the points are not one regime).

    >>> t0, r = fixed_s_and_rate_flop_per_s((1e9, 2e9), (5e-6, 7e-6))
    >>> round(t0 * 1e6, 6), round(r / 1e12, 3)
    (3.0, 500.0)
    """
    for name, pair in (("flops", flops), ("times_s", times_s)):
        if len(_checks.sequence(name, pair, min_len=2)) != 2:
            raise ValueError(f"{name} must be a pair, got {pair!r}")
    f1, f2 = (_checks.positive("flops", v) for v in flops)
    t1, t2 = (_checks.positive("times_s", v) for v in times_s)
    if not (f2 != f1 and (t2 - t1) / (f2 - f1) > 0):
        raise ValueError(f"times_s must grow with flops for a positive rate, got flops "
                         f"{(f1, f2)} and times_s {(t1, t2)}")
    rate = (f2 - f1) / (t2 - t1)
    t0 = t1 - f1 / rate
    if 0 > t0 >= -1e-9 * t2:  # zero but for rounding
        t0 = 0.0
    if t0 < 0:
        raise ValueError(f"times_s {(t1, t2)} at flops {(f1, f2)} give a negative fixed cost "
                         f"({t0:.3g} s): not one regime")
    return t0, rate
