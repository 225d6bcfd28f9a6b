r"""Memory transactions of a warp: sectors, lines, coalescing, shared-memory banks, layouts.

A GPU does not move single bytes between its memory and its cores. When the 32 threads of a
warp execute one load, the hardware gathers their addresses and fetches every aligned 32-byte
*sector* that any of them touches; the L1 and L2 caches keep sectors in 128-byte *lines*
(four sectors each). How many sectors one request touches, for a given base address, stride
and element size, decides how much of the fetched traffic is useful. Shared memory has a
different rule: it is split into 32 *banks* of 4-byte words, and a warp's request takes as
many passes as the largest number of distinct words it asks of any one bank.

Every function is pure and works in bytes (addresses and sizes) or in elements and words where
the name says so. Symbols on the page {ref}`sec-memory-optimization`: :math:`n` threads,
stride :math:`s` elements, element size :math:`b` bytes, base address :math:`a_0`, segment
(sector or line) size :math:`S` bytes, :math:`B` banks of :math:`w` bytes.

References
----------
NVIDIA, *CUDA C++ Best Practices Guide*, section "Coalesced Access to Global Memory" (its
subsections "A Simple Access Pattern", "A Sequential but Misaligned Access Pattern", "Strided
Accesses") and section "Shared Memory" ("Shared Memory and Memory Banks", "Shared Memory in
Matrix Multiplication (C=AA^T)"). NVIDIA, *CUDA C++ Programming Guide*, "Device Memory
Accesses" and the shared-memory section of "Compute Capability 5.x" (strided and irregular
access figures).

Used by: chapters/memory-optimization.md, labs/memory-access.md.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from . import _checks

__all__ = [
    "WARP_SIZE", "SECTOR_BYTES", "GPU_L1_LINE_BYTES", "N_BANKS", "BANK_WORD_BYTES",
    "warp_addresses_bytes", "segments_touched", "sectors_per_request", "lines_per_request",
    "coalescing_efficiency", "strided_efficiency", "bytes_moved_per_useful_byte",
    "derated_bandwidth_bytes_per_s", "bank_of_address", "bank_conflict_degree",
    "strided_bank_conflict_degree", "tile_column_conflict_degree", "min_padding_words",
    "row_major_strides_elements",
]

#: Threads per warp on every NVIDIA GPU so far.
WARP_SIZE = 32
#: Bytes of one sector: the unit in which global memory is fetched (compute capability >= 6.0).
SECTOR_BYTES = 32
#: Bytes of one GPU L1/L2 cache line (four sectors); a CPU's line is
#: :data:`helpers.models.dram.CPU_LINE_BYTES`.
GPU_L1_LINE_BYTES = 128
#: The former name of :data:`GPU_L1_LINE_BYTES`, kept for ``helpers.figures.memory_optimization``.
LINE_BYTES = GPU_L1_LINE_BYTES
#: Banks of shared memory.
N_BANKS = 32
#: Bytes of one bank word: successive 4-byte words go to successive banks.
BANK_WORD_BYTES = 4


def _int(name: str, value, minimum: int) -> int:
    return _checks.positive_int(name, value, minimum=minimum)


def _addresses(addresses_bytes) -> np.ndarray:
    """``addresses_bytes`` as a flat int64 array, or a ValueError: a non-empty sequence of
    integers >= 0 (integer-valued floats are accepted)."""
    _checks.sequence("addresses_bytes", addresses_bytes)
    a = np.asarray(list(addresses_bytes) if not isinstance(addresses_bytes, np.ndarray)
                   else addresses_bytes)
    if a.size == 0:
        raise ValueError("addresses_bytes must hold at least one address, got none")
    if not np.issubdtype(a.dtype, np.integer):
        if (not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a))
                or not np.all(a == np.floor(a))):
            raise ValueError("addresses_bytes must be integers >= 0, got non-integers")
    a = a.astype(np.int64).ravel()
    if np.any(a < 0):
        raise ValueError(f"addresses_bytes must be integers >= 0, got {int(a.min())}")
    return a


def warp_addresses_bytes(*, stride_elements: int = 1, bytes_per_element: int = 4,
                         base_bytes: int = 0, n_threads: int = WARP_SIZE) -> np.ndarray:
    r"""Byte address of the first byte each thread of a warp reads (bytes).

    .. math:: a_t = a_0 + t\,s\,b, \qquad t = 0, 1, \dots, n-1

    Parameters
    ----------
    stride_elements : int
        :math:`s`, elements between the addresses of neighbouring threads (0: all threads read
        the same element).
    bytes_per_element : int
        :math:`b`, bytes each thread reads (1, 2, 4, 8 or 16 for one load instruction).
    base_bytes : int
        :math:`a_0`, address of thread 0's element (bytes, >= 0).
    n_threads : int
        :math:`n`, threads taking part (32 for a full warp).

    Returns
    -------
    numpy.ndarray
        ``n_threads`` int64 addresses (bytes).

    Assumptions
    -----------
    Thread :math:`t` reads :math:`b` contiguous bytes starting at :math:`a_t`; a thread reads a
    whole number of bytes, so :math:`b` is an integer.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Strided Accesses" (the ``strideCopy`` kernel's
    index ``(blockIdx.x*blockDim.x + threadIdx.x)*stride``).

    Examples
    --------
    >>> warp_addresses_bytes(stride_elements=2, bytes_per_element=4, n_threads=4).tolist()
    [0, 8, 16, 24]
    """
    _checks.integer("stride_elements", stride_elements, minimum=0)
    _checks.positive_int("bytes_per_element", bytes_per_element)
    _checks.integer("base_bytes", base_bytes, minimum=0)
    _checks.positive_int("n_threads", n_threads, maximum=2**24)  # one int64 per thread
    step = int(stride_elements) * int(bytes_per_element)
    if step >= 2**63 or int(base_bytes) + (int(n_threads) - 1) * step >= 2**63:
        raise ValueError(f"base_bytes + (n_threads - 1) * stride_elements * bytes_per_element must "
                         f"be below 2**63 (int64 addresses), got base_bytes={base_bytes!r}, "
                         f"stride_elements={stride_elements!r}, "
                         f"bytes_per_element={bytes_per_element!r}, "
                         f"n_threads={n_threads!r}")
    s = _int("stride_elements", stride_elements, 0)
    b = _int("bytes_per_element", bytes_per_element, 1)
    a0 = _int("base_bytes", base_bytes, 0)
    n = _int("n_threads", n_threads, 1)
    return a0 + np.arange(n, dtype=np.int64) * (s * b)


def segments_touched(addresses_bytes: Sequence[int], *, bytes_per_element: int,
                     segment_bytes: int = SECTOR_BYTES) -> int:
    r"""Distinct aligned segments (sectors or lines) that a list of accesses touches (count).

    .. math:: N_{seg} = \Bigl|\,\bigcup_t \bigl\{\lfloor a_t/S \rfloor, \dots,
              \lfloor (a_t + b - 1)/S \rfloor\bigr\}\Bigr|

    Parameters
    ----------
    addresses_bytes : sequence of int
        Byte address :math:`a_t` where each access starts (any order, repeats allowed).
    bytes_per_element : int
        :math:`b`, bytes each access reads.
    segment_bytes : int
        :math:`S`, bytes of an aligned segment: 32 for a sector, 128 for a line, 64 for a
        CPU cache line.

    Returns
    -------
    int
        Number of distinct segments.

    Assumptions
    -----------
    Every segment that holds at least one requested byte is moved whole, once, however many
    threads ask for it: "the full segment is fetched anyway" (Best Practices Guide).

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory".

    Examples
    --------
    >>> segments_touched(range(4, 132, 4), bytes_per_element=4)
    5
    """
    b = _checks.positive_int("bytes_per_element", bytes_per_element, maximum=2**20)
    seg = _checks.positive_int("segment_bytes", segment_bytes)
    a = _addresses(addresses_bytes)
    first, last = a // seg, (a + b - 1) // seg
    if np.all(first == last):
        return int(np.unique(first).size)
    spans = [np.arange(f, l + 1) for f, l in zip(first, last)]
    return int(np.unique(np.concatenate(spans)).size)


def sectors_per_request(*, stride_elements: int, bytes_per_element: int = 4,
                        base_bytes: int = 0, n_threads: int = WARP_SIZE,
                        segment_bytes: int = SECTOR_BYTES) -> int:
    r"""Sectors (or lines) one strided warp request touches, in closed form (count).

    With :math:`d = s\,b` bytes between neighbouring threads:

    .. math::
        N_{seg} = \begin{cases}
        \left\lfloor \dfrac{a_0 + (n-1)\,d + b - 1}{S} \right\rfloor
            - \left\lfloor \dfrac{a_0}{S} \right\rfloor + 1 & d - b < S
            \quad\text{(dense: no segment fits in a gap)}\\[1ex]
        n \left\lceil \dfrac{b}{S} \right\rceil & \text{otherwise, accesses aligned to } b
        \end{cases}

    For an aligned warp of 4-byte elements this gives 4 sectors at stride 1, :math:`4s` up to
    stride 8 and 32 (one per thread) from stride 8 on.

    Parameters
    ----------
    stride_elements : int
        :math:`s` (elements, >= 0).
    bytes_per_element : int
        :math:`b` (bytes).
    base_bytes : int
        :math:`a_0` (bytes, >= 0).
    n_threads : int
        :math:`n` threads taking part.
    segment_bytes : int
        :math:`S`: 32 for sectors, 128 for lines (``lines_per_request``), 64 for a CPU line.

    Returns
    -------
    int
        Segments touched; equal to :func:`segments_touched` of :func:`warp_addresses_bytes`.

    Assumptions
    -----------
    As :func:`segments_touched`. In the sparse case, when an access is not aligned to its own
    size or :math:`b` and :math:`S` do not divide one another, the count is the exact sum of
    each thread's segments instead of the product.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "A Simple Access Pattern" (four sectors),
    "A Sequential but Misaligned Access Pattern" (five) and "Strided Accesses" (eight at
    stride 2; 32 for 32 threads at large strides).

    Examples
    --------
    >>> [sectors_per_request(stride_elements=s) for s in (1, 2, 8, 32)]
    [4, 8, 32, 32]
    >>> sectors_per_request(stride_elements=1, base_bytes=4)
    5
    """
    s = _int("stride_elements", stride_elements, 0)
    b = _int("bytes_per_element", bytes_per_element, 1)
    a0 = _int("base_bytes", base_bytes, 0)
    n = _int("n_threads", n_threads, 1)
    seg = _int("segment_bytes", segment_bytes, 1)
    d = s * b
    if d - b < seg:
        return (a0 + (n - 1) * d + b - 1) // seg - a0 // seg + 1
    divides = (seg % b == 0) or (b % seg == 0)
    if divides and a0 % min(b, seg) == 0:
        return n * -(-b // seg)
    t = np.arange(n, dtype=np.int64)
    a = a0 + t * d
    return int(np.sum((a + b - 1) // seg - a // seg + 1))


def lines_per_request(*, stride_elements: int, bytes_per_element: int = 4, base_bytes: int = 0,
                      n_threads: int = WARP_SIZE) -> int:
    r"""128-byte cache lines one strided warp request touches (count).

    :func:`sectors_per_request` with :math:`S` = 128.

    Examples
    --------
    >>> lines_per_request(stride_elements=1), lines_per_request(stride_elements=32)
    (1, 32)
    """
    return sectors_per_request(stride_elements=stride_elements,
                               bytes_per_element=bytes_per_element, base_bytes=base_bytes,
                               n_threads=n_threads, segment_bytes=GPU_L1_LINE_BYTES)


def coalescing_efficiency(requested_bytes: float, moved_bytes: float) -> float:
    r"""Fraction of the bytes moved that the threads asked for (dimensionless, in (0, 1]).

    .. math:: \eta = \frac{Q_{\text{requested}}}{Q_{\text{moved}}}

    Parameters
    ----------
    requested_bytes : float
        Distinct bytes the threads asked for.
    moved_bytes : float
        Bytes the memory system moved (segments x segment size); at least ``requested_bytes``.

    Returns
    -------
    float
        :math:`\eta`.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Strided Accesses": "a stride of 2 results in a 50%
    of load/store efficiency".

    Examples
    --------
    >>> coalescing_efficiency(128, 256)
    0.5
    """
    q = _checks.positive("requested_bytes", requested_bytes)
    m = _checks.positive("moved_bytes", moved_bytes)
    if q > m:
        raise ValueError(f"requested_bytes must be <= moved_bytes, got {q!r} > {m!r}")
    return q / m


def strided_efficiency(*, stride_elements: int, bytes_per_element: int = 4, base_bytes: int = 0,
                       n_threads: int = WARP_SIZE, segment_bytes: int = SECTOR_BYTES) -> float:
    r"""Coalescing efficiency of one strided warp request (dimensionless).

    .. math:: \eta = \frac{n_{\text{distinct}}\, b}{N_{seg}\, S}

    :math:`n_{\text{distinct}}` is :math:`n` for a stride of at least one and 1 for stride 0,
    where every thread reads the same element.

    Examples
    --------
    >>> [strided_efficiency(stride_elements=s) for s in (1, 2, 32)]
    [1.0, 0.5, 0.125]
    """
    n = _int("n_threads", n_threads, 1)
    b = _int("bytes_per_element", bytes_per_element, 1)
    seg = _int("segment_bytes", segment_bytes, 1)
    n_seg = sectors_per_request(stride_elements=stride_elements, bytes_per_element=b,
                                base_bytes=base_bytes, n_threads=n, segment_bytes=seg)
    distinct = n if int(stride_elements) >= 1 else 1
    return coalescing_efficiency(distinct * b, n_seg * seg)


def bytes_moved_per_useful_byte(*, stride_elements: int, bytes_per_element: int = 4,
                                segment_bytes: int = SECTOR_BYTES) -> float:
    r"""Traffic amplification of a long strided stream: bytes moved per byte used (>= 1).

    .. math:: A(s) = \frac{\min\!\bigl(s\,b,\; S \lceil b/S \rceil\bigr)}{b}

    The limit of :math:`1/\eta` for a long, aligned stream (many warps one after another, or a
    CPU loop): below the segment size every segment in the span is moved, so the traffic is
    :math:`s` times the data; above it each element costs its own segment(s).

    Parameters
    ----------
    stride_elements : int
        :math:`s` (elements, >= 1).
    bytes_per_element : int
        :math:`b` (bytes).
    segment_bytes : int
        :math:`S` (bytes): 32 for a GPU sector, 64 for a CPU cache line.

    Returns
    -------
    float
        :math:`A(s)`; the predicted slowdown per useful element of a bandwidth-bound stream
        relative to stride 1.

    Assumptions
    -----------
    Aligned accesses, a stream long enough that partial segments at its ends do not matter,
    and nothing fetched that was not touched (no prefetching of untouched segments).

    Examples
    --------
    >>> [bytes_moved_per_useful_byte(stride_elements=s, segment_bytes=64) for s in (1, 4, 16, 64)]
    [1.0, 4.0, 16.0, 16.0]
    """
    s = _int("stride_elements", stride_elements, 1)
    b = _int("bytes_per_element", bytes_per_element, 1)
    seg = _int("segment_bytes", segment_bytes, 1)
    return min(s * b, seg * -(-b // seg)) / b


def derated_bandwidth_bytes_per_s(mem_bytes_per_s: float, efficiency: float) -> float:
    r"""Useful bytes per second of an access pattern on a bandwidth-bound device (bytes/s).

    The peak derated by the pattern's efficiency (not the size over time of a transfer:
    that is :func:`helpers.models.latency_bandwidth.effective_bandwidth_bytes_per_s`).

    .. math:: M_{\text{eff}} = \eta\, M

    Parameters
    ----------
    mem_bytes_per_s : float
        :math:`M`, the memory's bandwidth (bytes/s).
    efficiency : float
        :math:`\eta` in (0, 1] (:func:`strided_efficiency`).

    Returns
    -------
    float
        :math:`M_{\text{eff}}` (bytes/s).

    Assumptions
    -----------
    The memory moves segments at its full rate; caches do not serve any of them (no reuse of
    an over-fetched segment by a later warp).

    References
    ----------
    NVIDIA, CUDA C++ Programming Guide, "Device Memory Accesses": a 32-byte transaction for
    each thread's 4-byte access divides throughput by 8.

    Examples
    --------
    >>> derated_bandwidth_bytes_per_s(4.8e12, 0.125) / 1e12
    0.6
    """
    m = _checks.positive("mem_bytes_per_s", mem_bytes_per_s)
    eta = _checks.fraction("efficiency", efficiency)
    if eta == 0:
        raise ValueError(f"efficiency must be a fraction in (0, 1], got {efficiency!r}")
    return eta * m


def bank_of_address(address_bytes, *, n_banks: int = N_BANKS,
                    bank_word_bytes: int = BANK_WORD_BYTES):
    r"""Shared-memory bank that holds a byte address (index in ``0 .. n_banks-1``).

    .. math:: \text{bank}(a) = \lfloor a / w \rfloor \bmod B

    Parameters
    ----------
    address_bytes : int or array of int
        Byte offset into shared memory (>= 0).
    n_banks : int
        :math:`B` banks (32).
    bank_word_bytes : int
        :math:`w` bytes per bank word (4).

    Returns
    -------
    int or numpy.ndarray
        Bank index (same shape as the input).

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks": successive 32-bit
    words are assigned to successive banks, 32 banks.

    Examples
    --------
    >>> bank_of_address(4), bank_of_address(128), bank_of_address(132)
    (1, 0, 1)
    """
    _checks.positive_int("n_banks", n_banks)
    _checks.positive_int("bank_word_bytes", bank_word_bytes)
    nb = _int("n_banks", n_banks, 1)
    w = _int("bank_word_bytes", bank_word_bytes, 1)
    a = np.asarray(address_bytes)
    if not np.issubdtype(a.dtype, np.integer) or np.any(a < 0):
        raise ValueError(f"address_bytes must be integers >= 0, got {address_bytes!r}")
    banks = (a // w) % nb
    return int(banks) if banks.ndim == 0 else banks


def bank_conflict_degree(addresses_bytes: Sequence[int], *, n_banks: int = N_BANKS,
                         bank_word_bytes: int = BANK_WORD_BYTES) -> int:
    r"""Passes one warp's shared-memory request needs: its n-way bank conflict (count, >= 1).

    .. math:: D = \max_{k}\; \bigl|\{\lfloor a_t / w \rfloor : \text{bank}(a_t) = k\}\bigr|

    The largest number of *distinct words* requested from any one bank. Threads that read the
    same word share one pass (a broadcast), so they add nothing.

    Parameters
    ----------
    addresses_bytes : sequence of int
        Byte address of each thread's 4-byte access (one per active thread).
    n_banks, bank_word_bytes : int
        :math:`B` and :math:`w`.

    Returns
    -------
    int
        :math:`D`: 1 is conflict-free; 32 is the worst case for a 32-thread warp.

    Assumptions
    -----------
    Each thread accesses one bank word (4-byte loads or stores). Wider accesses (8 or 16
    bytes per thread) are served in several phases and are outside this model.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks" (conflicting
    requests are split into as many conflict-free requests as necessary; the same location
    read by several threads is a broadcast). NVIDIA, CUDA C++ Programming Guide, "Compute
    Capability 5.x", shared memory (strided and irregular examples).

    Examples
    --------
    >>> bank_conflict_degree([4 * 2 * t for t in range(32)])
    2
    >>> bank_conflict_degree([0] * 32)
    1
    """
    nb = _checks.positive_int("n_banks", n_banks, maximum=2**20)  # one counter per bank
    w = _checks.positive_int("bank_word_bytes", bank_word_bytes)
    words = np.unique(_addresses(addresses_bytes) // w)
    return int(np.bincount(words % nb, minlength=nb).max())


def strided_bank_conflict_degree(stride_words: int, *, n_threads: int = WARP_SIZE,
                                 n_banks: int = N_BANKS) -> int:
    r"""Bank conflict degree of threads reading words :math:`0, s, 2s, \dots` (count).

    .. math:: D(s) = \left\lceil \frac{n\,\gcd(s, B)}{B} \right\rceil \quad (s \ge 1),
              \qquad D(0) = 1 \;\text{(broadcast)}

    Thread :math:`t` hits bank :math:`t s \bmod B`; the banks repeat every
    :math:`B/\gcd(s, B)` threads, and every thread reads a different word. For a full warp on
    32 banks, :math:`D = \gcd(s, 32)`: odd strides are conflict-free, stride 2 is two-way,
    stride 32 puts every thread on one bank.

    Parameters
    ----------
    stride_words : int
        :math:`s`, bank words (4 bytes) between neighbouring threads (>= 0).
    n_threads : int
        :math:`n` threads.
    n_banks : int
        :math:`B`.

    Returns
    -------
    int
        :math:`D`; equal to :func:`bank_conflict_degree` of the addresses.

    References
    ----------
    NVIDIA, CUDA C++ Programming Guide, "Compute Capability 5.x", shared memory: strides of
    one and three 32-bit words are conflict-free, a stride of two is a two-way conflict.

    Examples
    --------
    >>> [strided_bank_conflict_degree(s) for s in (0, 1, 2, 3, 8, 32, 33)]
    [1, 1, 2, 1, 8, 32, 1]
    """
    s = _int("stride_words", stride_words, 0)
    n = _int("n_threads", n_threads, 1)
    nb = _int("n_banks", n_banks, 1)
    if s == 0:
        return 1
    return -(-n * math.gcd(s, nb) // nb)


def tile_column_conflict_degree(tile_dim: int, *, padding_words: int = 0,
                                n_threads: int = WARP_SIZE, n_banks: int = N_BANKS) -> int:
    r"""Bank conflict degree of a warp walking down a column of a row-major 4-byte tile (count).

    A ``tile_dim`` x (``tile_dim`` + ``padding_words``) tile of 4-byte words stored by rows:
    neighbouring threads reading (or writing) one column are a row pitch
    :math:`p = \text{tile\_dim} + \text{pad}` words apart, so

    .. math:: D = \left\lceil \frac{n\,\gcd(p, B)}{B} \right\rceil .

    A 32 x 32 float tile gives 32 (every thread on one bank); one padding word (32 x 33)
    makes the pitch 33, equivalent to a unit stride modulo 32, and gives 1.

    Parameters
    ----------
    tile_dim : int
        Columns of data per row (>= 1).
    padding_words : int
        Extra unused words at the end of each row (>= 0).
    n_threads, n_banks : int
        As :func:`strided_bank_conflict_degree`.

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Shared Memory in Matrix Multiplication (C=AA^T)":
    ``transposedTile[TILE_DIM][TILE_DIM+1]`` "eliminates the conflicts entirely".

    Examples
    --------
    >>> tile_column_conflict_degree(32), tile_column_conflict_degree(32, padding_words=1)
    (32, 1)
    """
    d = _int("tile_dim", tile_dim, 1)
    pad = _int("padding_words", padding_words, 0)
    return strided_bank_conflict_degree(d + pad, n_threads=n_threads, n_banks=n_banks)


def min_padding_words(tile_dim: int, *, n_threads: int = WARP_SIZE,
                      n_banks: int = N_BANKS) -> int:
    r"""Fewest padding words per row that make a column walk as conflict-free as possible.

    .. math:: \text{pad}^* = \min\{\,q \ge 0 : D(\text{tile\_dim} + q) = \min_{r} D(r)\,\}

    Examples
    --------
    >>> min_padding_words(32), min_padding_words(33), min_padding_words(64)
    (1, 0, 1)
    """
    d = _int("tile_dim", tile_dim, 1)
    n = _int("n_threads", n_threads, 1)
    nb = _int("n_banks", n_banks, 1)
    best = strided_bank_conflict_degree(1, n_threads=n, n_banks=nb)
    for q in range(nb):
        if strided_bank_conflict_degree(d + q, n_threads=n, n_banks=nb) == best:
            return q
    raise AssertionError("unreachable: some pitch in any window of B is coprime to B")


def row_major_strides_elements(shape: Sequence[int]) -> tuple[int, ...]:
    r"""Elements between neighbours along each axis of a contiguous row-major tensor.

    .. math:: \sigma_k = \prod_{j > k} N_j

    A warp whose threads walk along axis :math:`k` has stride :math:`\sigma_k`; only the last
    axis (:math:`\sigma = 1`) is coalesced. This is how a layout chosen by one operator
    becomes the access stride of the next.

    Parameters
    ----------
    shape : sequence of int
        Sizes :math:`N_0, N_1, \dots` (each >= 1).

    Returns
    -------
    tuple of int
        :math:`\sigma_k` for every axis (elements).

    References
    ----------
    NumPy, ``ndarray.strides`` (in bytes; divide by the item size).

    Examples
    --------
    >>> row_major_strides_elements((32, 4096, 128))
    (524288, 128, 1)
    """
    _checks.sequence("shape", shape)
    if len(shape) == 0:
        raise ValueError("shape must have at least one axis, got ()")
    dims = [_int(f"shape[{i}]", n, 1) for i, n in enumerate(shape)]
    out, acc = [], 1
    for n in reversed(dims):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


# --- the lab's predictions (labs/memory-access.md), moved here from its runner ----------------

#: Bytes of one float32 element: the lab's strided reads and transposes move float32.
FP32_BYTES = 4

__all__ += ["FP32_BYTES", "predicted_efficiency", "predicted_conflict_degree",
            "predicted_strided_bytes_per_s", "predicted_transpose_time_s"]


def predicted_efficiency(stride: int, bytes_per_element: int, *,
                         segment_bytes: int = SECTOR_BYTES) -> float:
    r"""Coalescing efficiency of a warp reading 32 elements ``stride`` apart (dimensionless).

    .. math:: \eta(s) = \frac{32\,b}{N_{seg}\,S}, \qquad
              N_{seg} = \min\!\left(32, \left\lceil \frac{31\,s\,b + b}{S} \right\rceil\right)

    for an aligned warp whose elements do not straddle a segment (``b`` divides ``S``):
    :func:`strided_efficiency` of a full warp, the form the lab's page labels.

    Parameters
    ----------
    stride : int
        :math:`s`, elements between neighbouring threads' addresses (>= 1).
    bytes_per_element : int
        :math:`b`, bytes per element (a divisor of ``segment_bytes``).
    segment_bytes : int
        :math:`S`: 32 for a GPU sector, 64 for a CPU cache line.

    Returns
    -------
    float
        Useful bytes over bytes fetched, in (0, 1].

    References
    ----------
    NVIDIA, CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory", "Strided
    Accesses".

    Examples
    --------
    >>> [predicted_efficiency(s, 4) for s in (1, 2, 8, 32)]
    [1.0, 0.5, 0.125, 0.125]
    >>> predicted_efficiency(32, 4, segment_bytes=64)
    0.0625
    """
    s = _checks.positive_int("stride", stride)
    b = _checks.positive_int("bytes_per_element", bytes_per_element)
    seg = _checks.positive_int("segment_bytes", segment_bytes)
    if seg % b:
        raise ValueError(f"bytes_per_element must divide segment_bytes={seg}, got {b}")
    return strided_efficiency(stride_elements=s, bytes_per_element=b, segment_bytes=seg)


def predicted_conflict_degree(tile_dim: int, padding_words: int = 0) -> int:
    r"""Passes a warp needs to read one column of a padded square tile in shared memory (count).

    The tile is row-major, ``tile_dim`` rows of ``tile_dim + padding_words`` 4-byte words, in
    32 banks.

    .. math:: D = \gcd(\text{tile\_dim} + \text{pad},\ 32)

    :func:`tile_column_conflict_degree` of a full warp on 32 banks.

    >>> predicted_conflict_degree(32), predicted_conflict_degree(32, 1)
    (32, 1)
    """
    d = _checks.positive_int("tile_dim", tile_dim)
    pad = _checks.positive_int("padding_words", padding_words, minimum=0)
    return tile_column_conflict_degree(d, padding_words=pad)


def predicted_strided_bytes_per_s(strides, mem_bytes_per_s: float, *,
                                  segment_bytes: int = SECTOR_BYTES) -> list[float]:
    r"""Effective (useful) bandwidth of the strided read at each stride (bytes/s).

    .. math:: B_{\text{eff}}(s) = \eta(s)\, B

    with :math:`\eta` from :func:`predicted_efficiency` for float32 elements and :math:`B` the
    bandwidth of unit-stride reads: the datasheet's HBM bandwidth for the prediction, or a
    measured stride-1 bandwidth to compare shapes on another machine.

    >>> [x / 1e12 for x in predicted_strided_bytes_per_s([1, 2, 8], 4.8e12)]
    [4.8, 2.4, 0.6]
    """
    peak = _checks.positive("mem_bytes_per_s", mem_bytes_per_s)
    strides = _checks.sequence("strides", strides)
    for i, s in enumerate(strides):
        _checks.positive_int(f"strides[{i}]", s)
    return [predicted_efficiency(s, FP32_BYTES, segment_bytes=segment_bytes) * peak
            for s in strides]


def predicted_transpose_time_s(rows: int, cols: int, mem_bytes_per_s: float, *,
                               write_stride: int = 1) -> float:
    r"""Lower bound on the time of an ``rows x cols`` float32 transpose (seconds).

    .. math:: T \ge \frac{Q/2}{B} + \frac{Q/2}{\eta_w\,B}, \qquad Q = 2\,M N b

    Reads are coalesced; writes at stride ``write_stride`` elements have efficiency
    :math:`\eta_w` (:func:`predicted_efficiency`). A tiled transpose writes at stride 1
    (:math:`T \ge Q/B`, a copy's time); the naive one writes down columns, ``rows`` apart.

    >>> t = predicted_transpose_time_s(8192, 8192, 4.8e12)
    >>> round(t * 1e6, 1), round(predicted_transpose_time_s(8192, 8192, 4.8e12, write_stride=8192) / t, 2)
    (111.8, 4.5)
    """
    m = _checks.positive_int("rows", rows)
    n = _checks.positive_int("cols", cols)
    peak = _checks.positive("mem_bytes_per_s", mem_bytes_per_s)
    _checks.positive_int("write_stride", write_stride)
    half = m * n * FP32_BYTES
    eta_w = predicted_efficiency(write_stride, FP32_BYTES)
    return half / peak + half / (eta_w * peak)


# --- the memory-access lab's truth loop: predictions from the run's own stream rates ----------
# (labs/memory-access.md, "Check"; tests in tests/models/test_memory_access_claims_labs2.py)

#: Bytes the L2 cache moves from or to HBM for one isolated access: a 64-byte fetch (two
#: sectors) for a read, a 32-byte read-modify-write of a sector for a partial write.
DRAM_ACCESS_BYTES = 64

__all__ += ["DRAM_ACCESS_BYTES", "dram_bytes_per_element", "accesses_abut", "stream_rate_bytes_per_s",
            "strided_read_time_s", "transpose_time_from_copy_s", "smem_transpose_min_time_s"]


def dram_bytes_per_element(stride: int, bytes_per_element: int = FP32_BYTES, *,
                           access_bytes: int = DRAM_ACCESS_BYTES) -> float:
    r"""HBM bytes a long strided stream moves per element it uses (bytes).

    .. math:: q(s) = \min(s\,b,\ G)

    Below :math:`G` bytes between elements, every byte of every :math:`G`-byte access in the
    span is moved once (so :math:`s\,b` per element); from :math:`G` apart on, each element
    costs one whole access. :math:`G` = 64: the L2 cache fetches 64 bytes (two sectors) per
    read miss, its fetch granularity (a hint of 0 to 128 bytes, ``CU_LIMIT_MAX_L2_FETCH_
    GRANULARITY``), and a partial write of a 32-byte sector costs a read and a write of it
    (32 + 32 bytes, a read-modify-write of the sector). The lab's H200 reference shows
    it: its strided read's time doubles from stride 8 (32 B apart) to 16 (64 B), where a
    32-byte-sector model stays flat. :func:`bytes_moved_per_useful_byte` times :math:`b`.

    Parameters
    ----------
    stride : int
        :math:`s`, elements between consecutive used elements (>= 1).
    bytes_per_element : int
        :math:`b` (bytes).
    access_bytes : int
        :math:`G`, bytes per isolated access (64 on Hopper; 32 for a sector-only model).

    Returns
    -------
    float
        Bytes moved per element used.

    References
    ----------
    NVIDIA CUDA Driver API, ``CUlimit``: ``CU_LIMIT_MAX_L2_FETCH_GRANULARITY`` ("between 0
    and 128 ... the maximum fetch granularity of L2 (in Bytes). This is a hint"); NVIDIA CUDA
    C++ Best Practices Guide, "Coalesced Access to Global Memory" (32-byte sectors).

    Examples
    --------
    >>> [dram_bytes_per_element(s) for s in (1, 2, 8, 16, 64)]
    [4.0, 8.0, 32.0, 64.0, 64.0]
    """
    s = _checks.positive_int("stride", stride)
    b = _checks.positive_int("bytes_per_element", bytes_per_element)
    g = _checks.positive_int("access_bytes", access_bytes)
    return bytes_moved_per_useful_byte(stride_elements=s, bytes_per_element=b,
                                       segment_bytes=g) * b


def accesses_abut(stride: int, bytes_per_element: int = FP32_BYTES, *,
                  access_bytes: int = DRAM_ACCESS_BYTES) -> bool:
    r"""Whether a strided stream's HBM accesses abut, leaving no gap between them (a bool).

    .. math:: s\,b \le G

    Up to :math:`G` bytes between elements the accesses of :func:`dram_bytes_per_element`
    tile the span, so HBM sees one dense stream; beyond it each element's access stands alone,
    with a gap of :math:`s\,b - G` bytes to the next. The lab's ncu counters show why that
    matters: on the H200 the scattered accesses move the same :math:`G` bytes per element, but
    the DRAM's throughput falls as the gaps grow, whatever the span of the read, so the rate of
    a dense stream does not carry over to them.

    Parameters
    ----------
    stride, bytes_per_element, access_bytes : int
        :math:`s`, :math:`b` and :math:`G`, as :func:`dram_bytes_per_element`.

    Returns
    -------
    bool
        True for a dense stream.

    References
    ----------
    As :func:`dram_bytes_per_element`; the counters are ``labs/reference/h200/
    memory_access_counters.json`` (``dram__bytes_read.sum``,
    ``dram__throughput.avg.pct_of_peak_sustained_elapsed``).

    Examples
    --------
    >>> [accesses_abut(s) for s in (1, 8, 16, 32, 64)]
    [True, True, True, False, False]
    """
    s = _checks.positive_int("stride", stride)
    b = _checks.positive_int("bytes_per_element", bytes_per_element)
    g = _checks.positive_int("access_bytes", access_bytes)
    return s * b <= g


def stream_rate_bytes_per_s(n_elements: int, stride: int, time_s: float, *,
                            dirty_bytes: float = 0.0, bytes_per_element: int = FP32_BYTES,
                            access_bytes: int = DRAM_ACCESS_BYTES) -> float:
    r"""HBM rate implied by a measured strided read (bytes/s): the bytes it moved over its time.

    .. math:: B = \frac{n\,q(s) + Q_{\text{dirty}}}{T}

    :math:`Q_{\text{dirty}}`: dirty bytes the read must write back first (an L2 cache left
    full of dirty lines by a cache flush that *writes* a buffer, as ``bench(flush_cache=True)``
    does: the whole L2).

    Parameters
    ----------
    n_elements : int
        :math:`n`, elements summed.
    stride : int
        :math:`s` (elements).
    time_s : float
        :math:`T`, the measured time (s).
    dirty_bytes : float
        :math:`Q_{\text{dirty}}` (bytes, >= 0).
    bytes_per_element, access_bytes : int
        As :func:`dram_bytes_per_element`.

    Returns
    -------
    float
        :math:`B` (bytes/s).

    References
    ----------
    NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"; NVIDIA CUDA
    Driver API, ``CUlimit`` (``CU_LIMIT_MAX_L2_FETCH_GRANULARITY``); the cache flush is
    :class:`helpers.bench.timing.CacheFlusher`, which zeroes a buffer larger than the L2.

    Examples
    --------
    >>> round(stream_rate_bytes_per_s(2**25, 1, 42.0e-6, dirty_bytes=50 * 2**20) / 1e12, 2)
    4.44
    """
    t = _checks.positive("time_s", time_s)
    return _read_dram_bytes(n_elements, stride, dirty_bytes, bytes_per_element, access_bytes) / t


def _read_dram_bytes(n_elements, stride, dirty_bytes, bytes_per_element, access_bytes) -> float:
    """n q(s) + Q_dirty: the bytes a strided read moves through HBM."""
    n = _checks.positive_int("n_elements", n_elements)
    dirty = _checks.positive("dirty_bytes", dirty_bytes, allow_zero=True)
    return n * dram_bytes_per_element(stride, bytes_per_element, access_bytes=access_bytes) + dirty


def strided_read_time_s(n_elements: int, stride: int, *, mem_bytes_per_s: float,
                        dirty_bytes: float = 0.0, bytes_per_element: int = FP32_BYTES,
                        access_bytes: int = DRAM_ACCESS_BYTES) -> float:
    r"""Time of a read of ``n_elements`` elements ``stride`` apart at a stream rate (seconds).

    .. math:: T(s) = \frac{n\,q(s) + Q_{\text{dirty}}}{B}

    with :math:`q(s)` from :func:`dram_bytes_per_element` and :math:`B` the rate of a read
    stream: the lab takes it from its own stride-1 read (:func:`stream_rate_bytes_per_s`), so
    the prediction for every other stride uses no datasheet number.

    Parameters
    ----------
    n_elements, stride : int
        :math:`n` and :math:`s`.
    mem_bytes_per_s : float
        :math:`B` (bytes/s).
    dirty_bytes : float
        :math:`Q_{\text{dirty}}`, bytes written back during the read (>= 0).
    bytes_per_element, access_bytes : int
        As :func:`dram_bytes_per_element`.

    Returns
    -------
    float
        :math:`T` (s).

    References
    ----------
    As :func:`stream_rate_bytes_per_s`.

    Assumptions
    -----------
    The read is bandwidth-bound at every stride; no moved byte is served twice from the L2;
    :math:`B` is the rate of this access pattern: a dense stream's where the accesses abut
    (:func:`accesses_abut`), a rate measured at the same spacing where they do not (the H200's
    DRAM serves scattered 64-byte accesses at a lower rate, whatever the span: see the lab's
    page and its ncu counters).

    Examples
    --------
    >>> b = stream_rate_bytes_per_s(2**25, 1, 42.0e-6, dirty_bytes=50 * 2**20)
    >>> round(strided_read_time_s(2**25, 8, mem_bytes_per_s=b, dirty_bytes=50 * 2**20) * 1e6)
    253
    """
    rate = _checks.positive("mem_bytes_per_s", mem_bytes_per_s)
    return _read_dram_bytes(n_elements, stride, dirty_bytes, bytes_per_element, access_bytes) / rate


def transpose_time_from_copy_s(copy_time_s: float, *, write_stride: int = 1,
                               bytes_per_element: int = FP32_BYTES,
                               access_bytes: int = DRAM_ACCESS_BYTES) -> float:
    r"""Time of a transpose that reads rows and writes ``write_stride`` apart, from a copy's (s).

    .. math:: T = T_{\text{copy}}\,\frac{1 + q(s_w)/b}{2}

    A copy of the same matrix moves :math:`Q/2` read and :math:`Q/2` written in
    :math:`T_{\text{copy}}`; the transpose reads the same bytes and writes each element at a
    cost of :math:`q(s_w)` bytes (:func:`dram_bytes_per_element`). A tiled transpose
    (:math:`s_w = 1`) takes a copy's time; a naive one writes down columns,
    :math:`s_w = M`: :math:`(1 + 64/4)/2 = 8.5` copies.

    Parameters
    ----------
    copy_time_s : float
        :math:`T_{\text{copy}}`, the measured copy of the same bytes (s).
    write_stride : int
        :math:`s_w`, elements between consecutive writes (1 tiled, ``rows`` naive).
    bytes_per_element, access_bytes : int
        As :func:`dram_bytes_per_element`.

    Returns
    -------
    float
        :math:`T` (s).

    References
    ----------
    M. Harris, "An Efficient Matrix Transpose in CUDA C/C++" (NVIDIA Developer Blog, 2013):
    the copy of the same bytes as the transpose's target; the access cost as
    :func:`dram_bytes_per_element`.

    Assumptions
    -----------
    Bandwidth-bound on both sides; partial writes to one sector are not merged in the L2
    before it writes them back (the naive kernel's neighbours in a column are written by
    other programs, long after).

    Examples
    --------
    >>> transpose_time_from_copy_s(1.0), transpose_time_from_copy_s(1.0, write_stride=8192)
    (1.0, 8.5)
    """
    t = _checks.positive("copy_time_s", copy_time_s)
    b = _checks.positive_int("bytes_per_element", bytes_per_element)
    s_w = _checks.positive_int("write_stride", write_stride)
    a_w = dram_bytes_per_element(s_w, b, access_bytes=access_bytes) / b
    return t * (1.0 + a_w) / 2.0


def smem_transpose_min_time_s(rows: int, cols: int, *, padding_words: int, n_sms: int,
                              clock_hz: float, mem_bytes_per_s: float,
                              tile_dim: int = 32) -> float:
    r"""Least time of a shared-memory tiled float32 transpose (seconds): banks or HBM.

    .. math:: T \ge \max\!\left(\frac{N_{\text{tiles}}\, t\,(1 + D)}{n_{\text{SM}}\, f},\
              \frac{2\,M N b}{B}\right), \qquad D = \gcd(t + \text{pad}, 32)

    Each :math:`t \times t` tile is stored by rows (:math:`t` warp-wide row stores, one pass
    each) and read by columns (:math:`t` column reads of :math:`D` passes each,
    :func:`predicted_conflict_degree`); an SM serves one pass (32 banks x 4 bytes) per clock.
    The HBM side moves the matrix twice at the datasheet bandwidth.

    Parameters
    ----------
    rows, cols : int
        :math:`M \times N`, the matrix (float32).
    padding_words : int
        Padding per tile row (0: ``tile[32][32]``, 1: ``tile[32][33]``).
    n_sms : int
        :math:`n_{\text{SM}}`.
    clock_hz : float
        :math:`f`, the SM clock (the datasheet's boost clock for a bound).
    mem_bytes_per_s : float
        :math:`B` (datasheet).
    tile_dim : int
        :math:`t` (32 in the lab's CUDA C kernel).

    Returns
    -------
    float
        The lower bound on the time (s).

    References
    ----------
    NVIDIA CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks"; M. Harris, "An
    Efficient Matrix Transpose in CUDA C/C++" (2013).

    Examples
    --------
    >>> round(smem_transpose_min_time_s(8192, 8192, padding_words=0, n_sms=132, clock_hz=1.98e9,
    ...                                 mem_bytes_per_s=4.8e12) * 1e6, 1)
    264.8
    """
    m = _checks.positive_int("rows", rows)
    n = _checks.positive_int("cols", cols)
    sms = _checks.positive_int("n_sms", n_sms)
    f = _checks.positive("clock_hz", clock_hz)
    hbm = _checks.positive("mem_bytes_per_s", mem_bytes_per_s)
    t = _checks.positive_int("tile_dim", tile_dim)
    d = predicted_conflict_degree(t, padding_words)
    tiles = -(-m // t) * -(-n // t)
    return max(tiles * t * (1 + d) / (sms * f), 2.0 * m * n * FP32_BYTES / hbm)
