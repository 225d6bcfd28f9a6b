r"""The roofline: a lower bound on a kernel's time from its FLOP and its bytes.

A kernel (one function launched on a processor, e.g. a matrix multiply) does some arithmetic
and moves some bytes between memory and the arithmetic units. If the two overlap perfectly,
the kernel can finish no sooner than the longer of the two:

.. math::

    T \ge \max\!\left(\frac{F}{P},\ \frac{Q}{M}\right)          \qquad\text{(eq-time-bound)}

with :math:`F` the FLOP it performs, :math:`Q` the bytes it moves, :math:`P` the peak
arithmetic rate (FLOP/s) and :math:`M` the memory bandwidth (bytes/s). Dividing :math:`F` by
that time gives the attainable rate, which depends on the kernel only through its arithmetic
intensity :math:`I = F/Q` (FLOP/byte):

.. math::

    R(I) = \min(P,\ I\,M)                                        \qquad\text{(eq-roofline)}

The two lines meet at the ridge point :math:`I^* = P/M`. Below it the kernel is memory-bound,
above it compute-bound.

Introduced in {ref}`sec-performance-models`.

References
----------
* Williams, S., Waterman, A. and Patterson, D. (2009), "Roofline: an insightful visual
  performance model for multicore architectures", Communications of the ACM 52(4), 65-76:
  the attainable-performance formula and figure 1a (Opteron X2: 17.6 GFLOP/s, 15 GB/s).
* Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
  Approach*, 5th ed., chapter 4, figure 4.11 (NEC SX-9 and Core i7 920 rooflines).
* McCalpin, J. D. (1995), "Memory bandwidth and machine balance in current high performance
  computers", IEEE TCCA Newsletter: machine balance, the ridge point under another name.

Used by many pages, among them: chapters/fusion-and-attention.md, chapters/gemm.md,
chapters/gpu-architecture.md, chapters/performance-models.md, labs/attention.md, labs/gemm.md.
"""

from __future__ import annotations

import numpy as np

from ._checks import positive_array as _check
from . import _checks

MAX_DIM = 2**53  # a matrix dimension above this is not exact as a float

__all__ = [
    "arithmetic_intensity_flop_per_byte", "compute_time_s", "memory_time_s",
    "kernel_time_lower_bound_s", "kernel_time_no_overlap_s", "ridge_intensity_flop_per_byte",
    "attainable_flop_per_s", "bound_kind", "matmul_flop", "matmul_min_bytes",
]



def arithmetic_intensity_flop_per_byte(flop: float, n_bytes: float) -> float:
    r"""Arithmetic intensity (FLOP/byte): the FLOP a kernel performs per byte it moves.

    .. math:: I = F / Q

    Parameters
    ----------
    flop : float
        FLOP performed, :math:`F` (>= 0).
    n_bytes : float
        Bytes moved between memory and the arithmetic units, :math:`Q` (> 0).

    Returns
    -------
    float
        :math:`I` (FLOP/byte).

    Assumptions
    -----------
    :math:`Q` counts the traffic to the memory level whose bandwidth the roofline uses (HBM
    on a GPU, DRAM on a CPU), not the traffic to caches.

    References
    ----------
    Williams, Waterman and Patterson (2009), CACM 52(4), "operational intensity".

    Examples
    --------
    Adding two fp32 vectors reads 8 bytes and writes 4 per element for one FLOP:

    >>> round(arithmetic_intensity_flop_per_byte(1.0, 12.0), 4)
    0.0833
    """
    flop = _check("flop", flop, allow_zero=True)
    n_bytes = _check("n_bytes", n_bytes)
    return flop / n_bytes


def compute_time_s(flop: float, peak_flop_per_s: float) -> float:
    r"""Time (s) to perform ``flop`` at the peak arithmetic rate: :math:`T_c = F / P`.

    Parameters
    ----------
    flop : float
        FLOP performed, :math:`F` (>= 0).
    peak_flop_per_s : float
        Peak arithmetic rate :math:`P` (FLOP/s, > 0).

    Returns
    -------
    float
        :math:`T_c` (s).

    Examples
    --------
    >>> compute_time_s(989.4e12, 989.4e12)
    1.0
    """
    return _check("flop", flop, allow_zero=True) / _check("peak_flop_per_s", peak_flop_per_s)


def memory_time_s(n_bytes: float, mem_bytes_per_s: float) -> float:
    r"""Time (s) to move ``n_bytes`` at the memory bandwidth: :math:`T_m = Q / M`.

    Parameters
    ----------
    n_bytes : float
        Bytes moved, :math:`Q` (>= 0).
    mem_bytes_per_s : float
        Memory bandwidth :math:`M` (bytes/s, > 0).

    Returns
    -------
    float
        :math:`T_m` (s).

    Examples
    --------
    Reading 16 GB of bf16 weights from an H100's HBM (3.35 TB/s):

    >>> round(memory_time_s(16e9, 3.35e12) * 1e3, 2)
    4.78
    """
    return _check("n_bytes", n_bytes, allow_zero=True) / _check("mem_bytes_per_s", mem_bytes_per_s)


def kernel_time_lower_bound_s(flop: float, n_bytes: float, peak_flop_per_s: float,
                              mem_bytes_per_s: float) -> float:
    r"""Lower bound (s) on a kernel's time: the longer of its compute time and memory time.

    .. math:: T \ge \max\!\left(\frac{F}{P},\ \frac{Q}{M}\right)     (the page labels this eq-time-bound)

    Parameters
    ----------
    flop : float
        FLOP performed, :math:`F` (>= 0).
    n_bytes : float
        Bytes moved to and from memory, :math:`Q` (>= 0).
    peak_flop_per_s : float
        Peak arithmetic rate :math:`P` (FLOP/s, > 0).
    mem_bytes_per_s : float
        Memory bandwidth :math:`M` (bytes/s, > 0).

    Returns
    -------
    float
        The bound (s).

    Assumptions
    -----------
    Arithmetic and memory traffic overlap perfectly; both run at their peaks; launch
    overhead and latency are ignored. A real kernel takes at least this long.

    References
    ----------
    Williams, Waterman and Patterson (2009), CACM 52(4), the roofline formula.

    Examples
    --------
    One bf16 matrix-vector product over an 8B-parameter model on an H100 (16 GFLOP, 16 GB):

    >>> round(kernel_time_lower_bound_s(16e9, 16e9, 989.4e12, 3.35e12) * 1e3, 2)
    4.78
    """
    return max(compute_time_s(flop, peak_flop_per_s), memory_time_s(n_bytes, mem_bytes_per_s))


def kernel_time_no_overlap_s(flop: float, n_bytes: float, peak_flop_per_s: float,
                             mem_bytes_per_s: float) -> float:
    r"""Kernel time (s) if arithmetic and memory traffic did not overlap at all: :math:`F/P + Q/M`.

    It is at most twice :func:`kernel_time_lower_bound_s`, so the two bracket a kernel that
    runs both units at their peaks, whatever its overlap.

    Examples
    --------
    >>> kernel_time_no_overlap_s(2.0, 4.0, 1.0, 2.0)
    4.0
    """
    return compute_time_s(flop, peak_flop_per_s) + memory_time_s(n_bytes, mem_bytes_per_s)


def ridge_intensity_flop_per_byte(peak_flop_per_s: float, mem_bytes_per_s: float) -> float:
    r"""Arithmetic intensity (FLOP/byte) at which a kernel stops being memory-bound.

    .. math:: I^* = P / M                                   (the page labels this eq-ridge)

    Parameters
    ----------
    peak_flop_per_s : float
        Peak arithmetic rate :math:`P` (FLOP/s, > 0).
    mem_bytes_per_s : float
        Memory bandwidth :math:`M` (bytes/s, > 0).

    Returns
    -------
    float
        :math:`I^*` (FLOP/byte).

    Assumptions
    -----------
    Compute and memory traffic overlap perfectly.

    References
    ----------
    Williams, Waterman and Patterson (2009), CACM 52(4), figure 1 ("ridge point");
    McCalpin (1995), "machine balance".

    Examples
    --------
    An H100 SXM in dense bf16 (989.4 TFLOP/s, 3.35 TB/s):

    >>> round(ridge_intensity_flop_per_byte(989.4e12, 3.35e12), 1)
    295.3
    """
    return _check("peak_flop_per_s", peak_flop_per_s) / _check("mem_bytes_per_s", mem_bytes_per_s)


def attainable_flop_per_s(intensity_flop_per_byte, peak_flop_per_s: float,
                          mem_bytes_per_s: float):
    r"""Highest rate (FLOP/s) a kernel of the given arithmetic intensity can reach.

    .. math:: R(I) = \min(P,\ I\,M)                          (the page labels this eq-roofline)

    Parameters
    ----------
    intensity_flop_per_byte : float or array
        Arithmetic intensity :math:`I` (FLOP/byte, >= 0).
    peak_flop_per_s : float
        Peak arithmetic rate :math:`P` (FLOP/s, > 0).
    mem_bytes_per_s : float
        Memory bandwidth :math:`M` (bytes/s, > 0).

    Returns
    -------
    float or numpy.ndarray
        :math:`R` (FLOP/s), a float for a float input.

    Assumptions
    -----------
    As :func:`kernel_time_lower_bound_s`: it is an upper bound, not a prediction of the rate.

    References
    ----------
    Williams, Waterman and Patterson (2009), CACM 52(4), "Attainable GFlops/sec = Min(Peak
    Floating Point Performance, Peak Memory Bandwidth x Operational Intensity)".

    Examples
    --------
    Hennessy and Patterson's figure 4.11: at 0.25 FLOP/byte the NEC SX-9 (102.4 GFLOP/s,
    162 GB/s) attains 40.5 GFLOP/s, the Core i7 920 (42.66 GFLOP/s, 16.4 GB/s) 4.1 GFLOP/s:

    >>> attainable_flop_per_s(0.25, 102.4e9, 162e9) / 1e9
    40.5
    >>> attainable_flop_per_s(0.25, 42.66e9, 16.4e9) / 1e9
    4.1
    """
    intensity = _check("intensity_flop_per_byte", intensity_flop_per_byte, allow_zero=True)
    peak = _check("peak_flop_per_s", peak_flop_per_s)
    bw = _check("mem_bytes_per_s", mem_bytes_per_s)
    with np.errstate(over="ignore"):  # a huge intensity overflows to inf: the peak roof holds
        out = np.minimum(peak, np.asarray(intensity) * bw)
    return float(out) if np.ndim(out) == 0 else out


def bound_kind(intensity_flop_per_byte: float, peak_flop_per_s: float,
               mem_bytes_per_s: float) -> str:
    """Which roof limits a kernel: ``"memory-bound"`` below the ridge, ``"compute-bound"`` at or above.

    Examples
    --------
    >>> bound_kind(1.0, 989.4e12, 3.35e12)
    'memory-bound'
    >>> bound_kind(1000.0, 989.4e12, 3.35e12)
    'compute-bound'
    """
    intensity = _check("intensity_flop_per_byte", intensity_flop_per_byte, allow_zero=True)
    ridge = ridge_intensity_flop_per_byte(peak_flop_per_s, mem_bytes_per_s)
    return "memory-bound" if intensity < ridge else "compute-bound"


def _check_dim(name: str, value) -> int:
    if not _checks._is_real(value) or not _checks.real(name, value).is_integer() or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    _checks.at_most(name, int(value), MAX_DIM, "not exact as a float")
    return int(value)


def matmul_flop(m: int, n: int, k: int) -> float:
    r"""FLOP of a matrix product :math:`C_{m\times n} = A_{m\times k} B_{k\times n}`: :math:`2mnk`.

    Each of the :math:`mn` outputs takes :math:`k` multiplies and :math:`k` adds (one fused
    multiply-add counts as 2 FLOP).

    Examples
    --------
    >>> matmul_flop(4096, 4096, 4096) / 1e9
    137.438953472
    """
    return 2.0 * _check_dim("m", m) * _check_dim("n", n) * _check_dim("k", k)


def matmul_min_bytes(m: int, n: int, k: int, bytes_per_element: float) -> float:
    r"""Fewest bytes a matrix product must move: read A and B once, write C once.

    .. math:: Q_{\min} = (mk + kn + mn)\,b

    Parameters
    ----------
    m, n, k : int
        Shapes of :math:`A_{m\times k}`, :math:`B_{k\times n}` and :math:`C_{m\times n}`.
    bytes_per_element : float
        :math:`b`, e.g. 4.0 for fp32, 2.0 for bf16, 0.5 for int4.

    Assumptions
    -----------
    Perfect reuse in caches: every element crosses the memory bus exactly once. Real kernels
    move at least this much.

    Examples
    --------
    A matrix-vector product with a 4096 x 4096 bf16 matrix moves about the matrix itself:

    >>> matmul_min_bytes(4096, 1, 4096, 2.0)
    33570816.0
    """
    m, n, k = _check_dim("m", m), _check_dim("n", n), _check_dim("k", k)
    b = _check("bytes_per_element", bytes_per_element)
    return float((m * k + k * n + m * n) * b)



# --- softmax and row-reduction traffic (the reduction-and-softmax lab) ----------------------

__all__ += ["row_sum_bytes", "softmax_bytes", "unfused_softmax_pass_bytes", "unfused_softmax_bytes",
            "SOFTMAX_ACCESSES", "softmax_accesses_per_element", "softmax_traffic_bytes"]


def _shape(rows, cols, bytes_per_element) -> tuple[int, int, int]:
    return (_checks.positive_int("rows", rows), _checks.positive_int("cols", cols),
            _checks.positive_int("bytes_per_element", bytes_per_element))


def row_sum_bytes(rows: int, cols: int, bytes_per_element: int) -> float:
    """Least bytes a row sum of a ``rows x cols`` tensor moves: the tensor read once, one
    element written per row.

    .. math:: Q = r c e + r e

    >>> row_sum_bytes(1024, 4096, 4) / 2**20
    16.00390625
    """
    r, c, e = _shape(rows, cols, bytes_per_element)
    return float(r * c * e + r * e)


def softmax_bytes(rows: int, cols: int, bytes_per_element: int) -> float:
    """Least bytes a fused row softmax moves when each row stays on chip between its load and
    its store: the tensor read once and written once.

    .. math:: Q = 2 r c e

    >>> softmax_bytes(1024, 4096, 4) / 2**20
    32.0
    """
    r, c, e = _shape(rows, cols, bytes_per_element)
    return 2.0 * r * c * e


def unfused_softmax_pass_bytes(rows: int, cols: int, bytes_per_element: int) -> list[tuple[str, float, float]]:
    r"""``(operation, bytes read, bytes written)`` of each pass of a softmax written as five
    tensor operations, ``m = max(x)``, ``z = x - m``, ``e = exp(z)``, ``s = sum(e)``,
    ``y = e / s`` (along rows): every pass reads a full tensor; three of them write one; the
    max and the sum write one element per row, which the subtraction and the division read.

    .. math:: Q_\text{pass} = (r c e + \delta\, r e,\; r c e \text{ or } r e)

    >>> [name for name, _, _ in unfused_softmax_pass_bytes(2, 8, 4)]
    ['max', 'subtract', 'exp', 'sum', 'divide']
    """
    r, c, e = _shape(rows, cols, bytes_per_element)
    n, s = float(r * c * e), float(r * e)
    return [("max", n, s), ("subtract", n + s, n), ("exp", n, n), ("sum", n, s),
            ("divide", n + s, n)]


def unfused_softmax_bytes(rows: int, cols: int, bytes_per_element: int) -> float:
    """Bytes the five-pass softmax moves: the sum over :func:`unfused_softmax_pass_bytes`,
    eight tensors plus four per-row vectors.

    .. math:: Q = 8 r c e + 4 r e

    >>> unfused_softmax_bytes(1024, 4096, 4) / 2**20
    128.015625
    """
    return sum(rd + wr for _, rd, wr in unfused_softmax_pass_bytes(rows, cols, bytes_per_element))


#: Memory accesses per input element of the softmax algorithms of Milakov and Gimelshein
#: (2018), for a vector too long to stay on chip between passes: ``"naive"`` (sum of
#: exponentials, then outputs: two loads and one store), ``"safe"`` (the maximum first: three
#: loads and one store) and ``"online"`` (maximum and normaliser in one pass: two loads and one
#: store).
SOFTMAX_ACCESSES = {"naive": 3, "safe": 4, "online": 3}


def softmax_accesses_per_element(method: str) -> int:
    r"""Memory accesses per element of a softmax computed by ``method`` (:data:`SOFTMAX_ACCESSES`).

    Milakov, M. and Gimelshein, N. (2018), "Online normalizer calculation for softmax",
    arXiv:1805.02867: the safe softmax (subtracting the maximum) makes three passes, four
    accesses per element; their online normaliser folds the maximum into the sum's pass and
    needs three, as the unsafe one does. A memory-bound safe softmax can therefore take at
    most 4/3 of the online one's time, the paper's "up to 1.3x".

    .. math:: a_\text{naive} = 3, \quad a_\text{safe} = 4, \quad a_\text{online} = 3

    >>> softmax_accesses_per_element("safe") / softmax_accesses_per_element("online")
    1.3333333333333333
    """
    return SOFTMAX_ACCESSES[_checks.one_of("method", method, tuple(SOFTMAX_ACCESSES))]


def softmax_traffic_bytes(rows: int, cols: int, bytes_per_element: int, method: str) -> float:
    r"""Bytes a multi-pass row softmax by ``method`` moves: its accesses per element
    (:func:`softmax_accesses_per_element`) times the tensor's bytes (per-row scalars left out).
    A kernel holding each row on chip (the book's fused one) moves :func:`softmax_bytes`, two
    accesses per element, instead.

    .. math:: Q = a_\text{method}\, r c e

    >>> softmax_traffic_bytes(1024, 4096, 4, "online") / softmax_bytes(1024, 4096, 4)
    1.5
    """
    r, c, e = _shape(rows, cols, bytes_per_element)
    return float(softmax_accesses_per_element(method) * r * c * e)
