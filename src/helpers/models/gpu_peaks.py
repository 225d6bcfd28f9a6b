r"""Peak rates of a GPU derived from its unit counts and clocks.

A datasheet's peak is not measured: it is a product of counts. An SM holds a fixed number of
arithmetic lanes (or tensor-core multiply-accumulate slots) that each finish one fused
multiply-add (FMA, two FLOP) per clock; a GPU has ``n_sm`` SMs; the clock runs at ``f``. The
memory side is the same kind of product: a bus ``w`` bits wide, each pin carrying ``r`` bits
per second. This module writes those products down, their inverses (the clock a datasheet
peak implies, the per-pin rate a bandwidth implies) and the per-SM, per-clock ratios the page
{ref}`sec-gpu-architecture` reasons with. The unit counts and clocks are fields of
:mod:`helpers.specs`; nothing here types a hardware number.

Symbols (the page's): :math:`n_{SM}` SMs, :math:`u` FMA per clock per SM, :math:`f` clock (Hz),
:math:`w` bus width (bits), :math:`r` data rate per pin (bit/s).

Used by: chapters/gpu-architecture.md.
"""

from __future__ import annotations

from ._checks import positive, positive_int
from . import _checks

__all__ = ["FLOP_PER_FMA", "sm_peak_flop_per_s", "clock_from_peak_hz", "peak_memory_bytes_per_s",
           "pin_rate_from_bandwidth_bits_per_s", "bytes_per_clock_per_sm", "per_gpu",
           "smem_bytes_per_s", "clock_for_precision_hz", "fma_per_clock_per_sm",
           "derived_peak_flop_per_s", "SPARSE_2_4_SPEEDUP", "sm_sparse_peak_flop_per_s",
           "derived_sparse_peak_flop_per_s"]

#: A fused multiply-add ``a * b + c`` counts as two floating-point operations.
FLOP_PER_FMA = 2.0

#: 2:4 structured sparsity keeps 2 of every 4 weights; the sparse tensor core skips the zero
#: half, so the products it would have done count as done: twice the dense rate.
SPARSE_2_4_SPEEDUP = 4 / 2

_NON_TENSOR = ("fp32", "fp64")
_HIGH_CLOCK = ("fp32", "fp64", "fp64_tensor")  # the precisions a GPU's full boost clock rates
# tensor-core precisions a spec may list (or leave unpublished): a name outside these and the
# spec's own table is a typo, not a precision
PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8", "fp6", "fp4", "int4")


def sm_peak_flop_per_s(n_sms: int, fma_per_clock_per_sm: float, clock_hz: float) -> float:
    r"""Peak arithmetic rate (FLOP/s) of ``n_sms`` SMs, each finishing
    ``fma_per_clock_per_sm`` FMA per clock at ``clock_hz``.

    .. math:: P = 2\,n_{SM}\,u\,f          (the page labels this eq-peak-flops)

    Parameters
    ----------
    n_sms : int
        :math:`n_{SM}`, streaming multiprocessors enabled on the part.
    fma_per_clock_per_sm : float
        :math:`u`, dense FMA operations each SM completes per clock at this precision: the FP32
        lanes for FP32, the tensor-core rate for a tensor-core format.
    clock_hz : float
        :math:`f`, the SM clock (Hz) the peak is quoted at.

    Returns
    -------
    float
        :math:`P` (FLOP/s; for integer formats, operations/s).

    Assumptions
    -----------
    Every unit issues every clock, dense operands (2:4 sparsity doubles the count), and the
    clock holds at ``clock_hz``; power and thermal limits can pull a real clock lower.

    References
    ----------
    NVIDIA (2020), A100 whitepaper, Table 3 and the Tensor Core section ("1024 dense FP16/FP32
    FMA operations per clock" per SM); NVIDIA (2022), H100 whitepaper, Table 3.

    Examples
    --------
    A100: 108 SMs x 1024 FP16 FMA per clock x 1410 MHz, the datasheet's 312 TFLOP/s.

    >>> round(sm_peak_flop_per_s(108, 1024, 1.41e9) / 1e12, 1)
    311.9
    """
    n = positive_int("n_sms", n_sms)
    u = positive("fma_per_clock_per_sm", fma_per_clock_per_sm)
    f = positive("clock_hz", clock_hz)
    return FLOP_PER_FMA * n * u * f


def clock_from_peak_hz(peak_flop_per_s: float, n_sms: int,
                       fma_per_clock_per_sm: float) -> float:
    r"""The clock (Hz) at which ``n_sms`` SMs reach ``peak_flop_per_s``: eq-peak-flops
    solved for :math:`f`.

    .. math:: f = P / (2\,n_{SM}\,u)

    Parameters
    ----------
    peak_flop_per_s : float
        :math:`P`, a quoted peak (FLOP/s).
    n_sms : int
        :math:`n_{SM}`.
    fma_per_clock_per_sm : float
        :math:`u`, FMA per clock per SM.

    Returns
    -------
    float
        :math:`f` (Hz).

    Assumptions
    -----------
    As :func:`sm_peak_flop_per_s`.

    References
    ----------
    NVIDIA (2022), H100 whitepaper, Table 3 (1830 MHz for tensor-core FP16).

    Examples
    --------
    The H100 SXM's 989.4 TFLOP/s of dense bf16 over 132 SMs x 2048 FMA per clock:

    >>> round(clock_from_peak_hz(989.4e12, 132, 2048) / 1e6)
    1830
    """
    p = positive("peak_flop_per_s", peak_flop_per_s)
    n = positive_int("n_sms", n_sms)
    u = positive("fma_per_clock_per_sm", fma_per_clock_per_sm)
    return p / (FLOP_PER_FMA * n * u)


def peak_memory_bytes_per_s(bus_width_bits: int, pin_rate_bits_per_s: float) -> float:
    r"""Peak DRAM bandwidth (bytes/s) of a bus ``bus_width_bits`` wide, each pin carrying
    ``pin_rate_bits_per_s``.

    .. math:: M = w\,r / 8          (the page labels this eq-peak-bandwidth)

    Parameters
    ----------
    bus_width_bits : int
        :math:`w`, the memory interface width (bits); 1024 per HBM stack.
    pin_rate_bits_per_s : float
        :math:`r`, data rate per pin (bit/s); twice the memory clock for double data rate.

    Returns
    -------
    float
        :math:`M` (bytes/s, decimal).

    Assumptions
    -----------
    Every pin transfers on every edge; refresh, bank conflicts and read-write turnarounds,
    which keep real copies below the peak, are ignored.

    References
    ----------
    NVIDIA (2020), A100 whitepaper, Table 3 (5120-bit HBM2 at 1215 MHz DDR: 1555 GB/s).

    Examples
    --------
    >>> round(peak_memory_bytes_per_s(5120, 2 * 1215e6) / 1e9, 1)
    1555.2
    """
    w = positive_int("bus_width_bits", bus_width_bits)
    r = positive("pin_rate_bits_per_s", pin_rate_bits_per_s)
    return w * r / 8.0


def pin_rate_from_bandwidth_bits_per_s(mem_bytes_per_s: float, bus_width_bits: int) -> float:
    r"""The per-pin data rate (bit/s) that a bandwidth over a bus implies: eq-peak-bandwidth
    solved for :math:`r`.

    .. math:: r = 8\,M / w

    Parameters
    ----------
    mem_bytes_per_s : float
        :math:`M` (bytes/s).
    bus_width_bits : int
        :math:`w` (bits).

    Returns
    -------
    float
        :math:`r` (bit/s per pin).

    Assumptions
    -----------
    As :func:`peak_memory_bytes_per_s`.

    References
    ----------
    NVIDIA (2022), H100 whitepaper, Table 3 (5120-bit HBM3); H100 datasheet (3.35 TB/s).

    Examples
    --------
    >>> round(pin_rate_from_bandwidth_bits_per_s(3.35e12, 5120) / 1e9, 2)
    5.23
    """
    m = positive("mem_bytes_per_s", mem_bytes_per_s)
    w = positive_int("bus_width_bits", bus_width_bits)
    return 8.0 * m / w


def bytes_per_clock_per_sm(mem_bytes_per_s: float, n_sms: int, clock_hz: float) -> float:
    r"""Bytes of DRAM bandwidth each SM receives per clock when all SMs share it equally.

    .. math:: b = M / (n_{SM}\,f)

    Parameters
    ----------
    mem_bytes_per_s : float
        :math:`M` (bytes/s).
    n_sms : int
        :math:`n_{SM}`.
    clock_hz : float
        :math:`f` (Hz).

    Returns
    -------
    float
        :math:`b` (bytes per clock per SM). Dividing an SM's FLOP per clock by it gives the
        roofline's ridge, :math:`2u/b = P/M`.

    Assumptions
    -----------
    Bandwidth is split evenly; no reuse in caches.

    References
    ----------
    Williams, Waterman and Patterson (2009), "Roofline", CACM 52(4): the ridge as the ratio of
    peak rate to bandwidth, here written per SM and per clock.

    Examples
    --------
    >>> round(bytes_per_clock_per_sm(4.8e12, 132, 1.83e9), 1)
    19.9
    """
    m = positive("mem_bytes_per_s", mem_bytes_per_s)
    n = positive_int("n_sms", n_sms)
    f = positive("clock_hz", clock_hz)
    return m / (n * f)


def per_gpu(per_sm: float, n_sms: int) -> float:
    r"""A per-SM quantity (lanes, tensor cores, register bytes, ...) summed over the GPU.

    .. math:: X_{GPU} = n_{SM}\,X_{SM}

    Parameters
    ----------
    per_sm : float
        :math:`X_{SM}`, in any unit; the result has the same unit.
    n_sms : int
        :math:`n_{SM}`.

    Returns
    -------
    float
        :math:`X_{GPU}`.

    Assumptions
    -----------
    Every enabled SM is identical.

    References
    ----------
    NVIDIA (2022), H100 whitepaper, Table 3 (16896 FP32 cores, 528 Tensor Cores and 33792 KB
    of registers on the H100 SXM5).

    Examples
    --------
    >>> per_gpu(128, 132)
    16896.0
    """
    x = positive("per_sm", per_sm)
    n = positive_int("n_sms", n_sms)
    return float(n * x)


def smem_bytes_per_s(n_sms: int, bytes_per_clock_per_sm: float, clock_hz: float) -> float:
    r"""Aggregate shared-memory bandwidth (bytes/s) of all SMs.

    .. math:: M_{smem} = n_{SM}\,b_{smem}\,f          (the page labels this eq-smem-bandwidth)

    Parameters
    ----------
    n_sms : int
        :math:`n_{SM}`.
    bytes_per_clock_per_sm : float
        :math:`b_{smem}`, bytes one SM's shared memory delivers per clock (32 banks of 4 bytes).
    clock_hz : float
        :math:`f` (Hz).

    Returns
    -------
    float
        :math:`M_{smem}` (bytes/s).

    Assumptions
    -----------
    No bank conflicts: every bank serves a different 4-byte word every clock.

    References
    ----------
    NVIDIA, CUDA C++ Programming Guide, "Shared Memory" (32 banks, 32 bits per bank per clock).

    Examples
    --------
    >>> round(smem_bytes_per_s(132, 128, 1.98e9) / 1e12, 1)
    33.5
    """
    n = positive_int("n_sms", n_sms)
    b = positive("bytes_per_clock_per_sm", bytes_per_clock_per_sm)
    f = positive("clock_hz", clock_hz)
    return n * b * f


# --- from a spec ------------------------------------------------------------------------

def _require(spec, name: str):
    value = getattr(spec, name)
    if value is None:
        raise ValueError(f"{spec.name}: {name} is not published (None); the peak cannot be "
                         "derived")
    return value


def clock_for_precision_hz(spec, precision: str) -> float:
    """The clock (Hz) NVIDIA quotes ``spec``'s ``precision`` peak at.

    FP64, FP32 and FP64 tensor-core peaks use the full boost clock; the lower-precision
    tensor-core peaks (TF32, FP16, BF16, FP8, INT8) use ``tensor_boost_clock_hz``, which on the
    H100 SXM is lower (NVIDIA H100 whitepaper, Table 3). Raises ``ValueError`` if unpublished.

    >>> from helpers.specs import H100_SXM
    >>> clock_for_precision_hz(H100_SXM, "bf16") / 1e6, clock_for_precision_hz(H100_SXM, "fp32") / 1e6
    (1830.0, 1980.0)
    """
    _checks.has_attributes("spec", spec, ("name", "boost_clock_hz", "tensor_fma_per_clock_per_sm"))
    _checks.one_of("precision", precision, _HIGH_CLOCK + PRECISIONS
                   + tuple(spec.tensor_fma_per_clock_per_sm))
    if precision in _HIGH_CLOCK:
        return float(_require(spec, "boost_clock_hz"))
    return float(_require(spec, "tensor_boost_clock_hz"))


def fma_per_clock_per_sm(spec, precision: str) -> float:
    """Dense FMA per clock per SM of ``spec`` at ``precision`` (FP32/FP64 lanes, or the
    tensor-core rate). Raises ``ValueError`` if the whitepaper gives none.

    >>> from helpers.specs import A100_SXM_80GB
    >>> fma_per_clock_per_sm(A100_SXM_80GB, "fp32"), fma_per_clock_per_sm(A100_SXM_80GB, "bf16")
    (64.0, 1024.0)
    """
    _checks.has_attributes("spec", spec,
                           ("name", "fp32_lanes_per_sm", "tensor_fma_per_clock_per_sm"))
    if not isinstance(precision, str):
        raise ValueError(f"precision must be a precision name (str), got {precision!r}")
    if precision == "fp32":
        return float(_require(spec, "fp32_lanes_per_sm"))
    if precision == "fp64":
        return float(_require(spec, "fp64_lanes_per_sm"))
    table = spec.tensor_fma_per_clock_per_sm
    if precision not in table:
        raise ValueError(f"precision: {spec.name} has no tensor-core rate for {precision!r}; "
                         f"known: "
                         f"{sorted(table)}")
    return float(table[precision])


def derived_peak_flop_per_s(spec, precision: str) -> float:
    r"""``spec``'s dense peak at ``precision`` (FLOP/s), derived from its SM count, per-SM rate
    and clock by eq-peak-flops rather than read from the datasheet.

    Raises ``ValueError`` if a needed field is unpublished (``None``).

    >>> from helpers.specs import H200_SXM
    >>> round(derived_peak_flop_per_s(H200_SXM, "bf16") / 1e12, 1)
    989.4
    """
    _checks.has_attributes("spec", spec, ("name", "sm_count", "tensor_fma_per_clock_per_sm"))
    if not isinstance(precision, str):
        raise ValueError(f"precision must be a precision name (str), got {precision!r}")
    return sm_peak_flop_per_s(_require(spec, "sm_count"), fma_per_clock_per_sm(spec, precision),
                           clock_for_precision_hz(spec, precision))


def sm_sparse_peak_flop_per_s(n_sms: int, fma_per_clock_per_sm: float, clock_hz: float) -> float:
    r"""Peak rate (FLOP/s) a datasheet quotes with 2:4 structured sparsity: twice eq-peak-flops.

    .. math:: P_{2:4} = \tfrac{4}{2} \cdot 2\,n_{SM}\,u\,f

    With two of every four weights zero, the sparse tensor core multiplies only the kept half
    and the datasheet counts the skipped products as done: the *effective* rate of a dense
    product of the same shape, twice :func:`sm_peak_flop_per_s`. The arithmetic actually executed
    per second is the dense peak.

    Parameters
    ----------
    n_sms : int
        :math:`n_{SM}`.
    fma_per_clock_per_sm : float
        :math:`u`, the *dense* tensor-core FMA per clock per SM.
    clock_hz : float
        :math:`f` (Hz).

    Returns
    -------
    float
        :math:`P_{2:4}` (FLOP/s; operations/s for INT8).

    Assumptions
    -----------
    The weight matrix is pruned 2:4 and compressed (values plus 2-bit indices), and the part
    has sparse tensor cores (Ampere and later; not Volta).

    References
    ----------
    NVIDIA (2020), A100 whitepaper, "Fine-grained structured sparsity" ("2x the math
    throughput of dense") and Table 1: FP16 312 / 624 TFLOPS, INT8 624 / 1248 TOPS dense /
    sparse on 108 SMs at 1410 MHz.

    Examples
    --------
    >>> round(sm_sparse_peak_flop_per_s(108, 1024, 1.41e9) / 1e12, 1)
    623.7
    """
    return SPARSE_2_4_SPEEDUP * sm_peak_flop_per_s(n_sms, fma_per_clock_per_sm, clock_hz)


def derived_sparse_peak_flop_per_s(spec, precision: str) -> float:
    r"""``spec``'s 2:4 sparse peak at ``precision`` (FLOP/s), from its unit counts and clock.

    .. math:: P_{2:4} = 2 \cdot 2\,n_{SM}\,u\,f

    Raises ``ValueError`` if the part has no sparse mode at that precision (its datasheet
    prints no sparse figure: Volta has none at all).

    References
    ----------
    NVIDIA (2020), A100 whitepaper, "Fine-grained structured sparsity"; NVIDIA (2022), H100
    whitepaper, Table 3 (sparse peaks twice the dense ones).

    Examples
    --------
    >>> from helpers.specs import H100_SXM
    >>> round(derived_sparse_peak_flop_per_s(H100_SXM, "fp8") / 1e12, 1)   # datasheet: 3,958
    3957.7
    """
    _checks.has_attributes("spec", spec, ("name", "sm_count", "tensor_fma_per_clock_per_sm",
                                          "sparse_flop_per_s"))
    if not isinstance(precision, str):
        raise ValueError(f"precision must be a precision name (str), got {precision!r}")
    if precision not in spec.sparse_flop_per_s:
        raise ValueError(f"precision: {spec.name} has no 2:4 sparse mode for {precision!r}; "
                         f"sparse precisions: {sorted(spec.sparse_flop_per_s)}")
    return sm_sparse_peak_flop_per_s(_require(spec, "sm_count"),
                                  fma_per_clock_per_sm(spec, precision),
                                  clock_for_precision_hz(spec, precision))
