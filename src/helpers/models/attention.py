r"""Kernel fusion, softmax and attention: the bytes each way of computing them moves.

**Fusion.** A chain of elementwise operations run as separate kernels reads and writes every
intermediate through memory; fused into one kernel it reads the input once and writes the
output once. A row-wise softmax run as five kernels (row max, subtract, exponentiate, row sum,
divide) moves about four times the bytes of one fused softmax kernel.

**Online softmax.** The normalizer of a softmax can be computed in one pass over a row by
keeping a running maximum :math:`m` and a running sum :math:`\ell` of :math:`e^{x - m}`,
rescaling the sum by :math:`e^{m_\text{old} - m_\text{new}}` whenever the maximum grows
(Milakov and Gimelshein 2018). The same rescaling lets attention be computed one block of keys
at a time, so the :math:`N \times N` score matrix never reaches memory (FlashAttention).

**Attention traffic.** For one head with sequence length :math:`N` and head dimension
:math:`d`, standard attention (Dao et al. 2022, Algorithm 0) reads and writes
:math:`4N^2 + 4Nd` elements of HBM in the forward pass; FlashAttention reads and writes
:math:`\Theta(N^2 d^2 / M)` for an on-chip memory of :math:`M` elements (their Theorem 2),
with the constants of Algorithm 1 (or of the FlashAttention-2 loop order) counted here.

Symbols: :math:`N` ``seq_len``, :math:`d` ``head_dim``, :math:`b` ``bytes_per_element``,
:math:`B_r` ``block_rows`` (query rows per block), :math:`B_c` ``block_cols`` (keys per block),
:math:`M` ``sram_elements``.

References
----------
M. Milakov and N. Gimelshein, "Online normalizer calculation for softmax", arXiv:1805.02867
(2018), Algorithm 3 (the one-pass normalizer).
T. Dao, D. Y. Fu, S. Ermon, A. Rudra and C. Ré, "FlashAttention: Fast and Memory-Efficient
Exact Attention with IO-Awareness", NeurIPS 2022, arXiv:2205.14135: Algorithm 0 (standard
attention), Algorithm 1 (FlashAttention), Theorem 2 (HBM accesses), Appendix B Algorithms 2-4,
Figure 2 left (GPT-2 medium on A100: 40.3 GB of HBM reads and writes for standard attention,
4.4 GB for FlashAttention, forward and backward).
T. Dao, "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
arXiv:2307.08691 (2023), Algorithm 1 (query blocks in the outer loop), Section 3.2
(parallelism over the sequence length: one program per query block and head).

**Two levels: HBM and L2.** The counts above are one-level: every access of Algorithms 0-4
goes to HBM. A GPU puts an L2 cache between the SMs and HBM (40 MiB on the A100, 50 MiB on
the H100 and H200: ``helpers.specs``), and a K/V block re-read while it is still in L2 costs
L2 bandwidth, not HBM bandwidth. :func:`flash2_attention_dram_bytes` and
:func:`flash2_attention_l2_traffic_bytes` split the fused kernel's traffic that way,
:func:`standard_attention_dram_bytes` and :func:`standard_attention_l2_traffic_bytes` the
materialised path's, and :func:`two_level_time_s` turns the split into a time.

**Inside the SM.** For the lab's fused kernel memory is not the limit: the softmax between the
two products is. :func:`flash2_tile_cycles` counts one tile's cycles on each pipe (tensor cores,
special-function units for the exponentials, FMA and ALU pipes), :func:`flash2_sm_tile_cycles`
combines them for the programs resident on an SM, :func:`flash2_program_tiles` counts each
program's tiles (the causal diagonal's whole), and :func:`flash2_attention_pipe_time_s` places
the programs in waves (:func:`list_schedule_makespan`) to predict the time (Shah et al. 2024,
FlashAttention-3, arXiv:2407.08608, Section 3.1).

**Decode.** At decode time one query token per sequence meets a cached K and V of
``context_len`` tokens: the products are matrix-vector products, about one FLOP per byte, so
the time is the cache's bytes over the memory's rate. :func:`decode_attention_bytes` counts
them for grouped-query heads (``n_kv_heads`` K/V heads shared by ``n_heads`` query heads) and
a split-KV kernel's partial results (Dao, Haziza, Massa and Sizov 2023, flash-decoding);
:func:`helpers.models.roofline.memory_time_s` divides them by a measured copy rate.

Used by: chapters/fusion-and-attention.md, labs/attention.md.
"""

from __future__ import annotations

import math

import numpy as np

from . import roofline
from .transformer import kv_cache_bytes
from ._checks import positive, positive_int
from . import _checks

__all__ = ["elementwise_chain_bytes", "fusion_saved_bytes", "fusion_time_saved_s",
           "softmax_unfused_bytes", "softmax_fused_bytes", "online_softmax_update",
           "online_softmax", "two_pass_softmax", "attention_flop",
           "standard_attention_hbm_bytes", "standard_attention_backward_hbm_bytes",
           "flash_attention_hbm_bytes", "flash_attention_backward_hbm_bytes",
           "flash2_attention_hbm_bytes", "flash_block_sizes", "attention_intensity_flop_per_byte",
           "naive_attention_peak_bytes", "recompute_time_s", "store_time_s",
           "flash2_heads_in_flight", "flash2_resident_kv_bytes", "flash2_attention_compulsory_bytes",
           "flash2_attention_l2_traffic_bytes", "flash2_attention_dram_bytes",
           "standard_attention_l2_traffic_bytes", "standard_attention_dram_bytes",
           "two_level_time_s", "flash2_attention_time_s", "flash2_program_tiles",
           "list_schedule_makespan", "flash2_tile_cycles", "flash2_sm_tile_cycles",
           "flash2_attention_pipe_time_s", "decode_attention_bytes"]

#: Elementwise kernels of an unfused softmax: row max, subtract, exp, row sum, divide.
UNFUSED_SOFTMAX_PASSES = 5
#: Most programs (and scheduling slots) the pipe model simulates one by one.
MAX_PROGRAMS = 4_000_000


def elementwise_chain_bytes(n_elements: int, n_ops: int, bytes_per_element: float, *,
                            fused: bool) -> float:
    r"""Bytes moved by a chain of ``n_ops`` unary elementwise operations on ``n_elements`` values.

    .. math:: Q_\text{unfused} = 2\,k\,n\,b, \qquad Q_\text{fused} = 2\,n\,b

    Unfused, each of the :math:`k` kernels reads its input and writes its output; fused, one
    kernel reads the input once and writes the result once, keeping the intermediates in
    registers.

    Parameters
    ----------
    n_elements : int
        Values :math:`n` in the tensor.
    n_ops : int
        Operations :math:`k` in the chain (>= 1).
    bytes_per_element : float
        :math:`b` (bytes).
    fused : bool
        One kernel (True) or one kernel per operation (False).

    Returns
    -------
    float
        Bytes read plus written.

    Assumptions
    -----------
    No operation's input is still in a cache when the next kernel reads it (tensors much
    larger than the last-level cache).

    References
    ----------
    Dao et al. 2022, Section 2.2 ("Kernel fusion"): fusing several operations loads the input
    once from HBM.

    Examples
    --------
    >>> elementwise_chain_bytes(1_000_000, 4, 2.0, fused=False) / elementwise_chain_bytes(
    ...     1_000_000, 4, 2.0, fused=True)
    4.0
    """
    _checks.boolean("fused", fused)
    n = positive_int("n_elements", n_elements)
    k = positive_int("n_ops", n_ops)
    b = positive("bytes_per_element", bytes_per_element)
    return 2.0 * n * b * (1 if fused else k)


def fusion_saved_bytes(n_elements: int, n_ops: int, bytes_per_element: float) -> float:
    r"""Bytes that fusing a chain of ``n_ops`` elementwise operations saves.

    .. math:: \Delta Q = 2\,(k - 1)\,n\,b

    References
    ----------
    Dao et al. 2022, Section 2.2.

    Examples
    --------
    >>> fusion_saved_bytes(1000, 3, 4.0)
    16000.0
    """
    if not math.isfinite(elementwise_chain_bytes(n_elements, n_ops, bytes_per_element,
                                                 fused=False)):
        raise ValueError(f"n_elements * n_ops * bytes_per_element must be finite, got "
                         f"{n_elements!r}, {n_ops!r}, {bytes_per_element!r}")
    return (elementwise_chain_bytes(n_elements, n_ops, bytes_per_element, fused=False)
            - elementwise_chain_bytes(n_elements, n_ops, bytes_per_element, fused=True))


def fusion_time_saved_s(n_elements: int, n_ops: int, bytes_per_element: float,
                        mem_bytes_per_s: float) -> float:
    r"""Seconds saved by fusing a memory-bound elementwise chain, at bandwidth ``mem_bytes_per_s``.

    .. math:: \Delta T = \frac{2\,(k - 1)\,n\,b}{B}

    The memory time of :func:`helpers.models.roofline.memory_time_s` applied to the saved bytes
    (launch overheads, which fusion also saves, are not counted).

    References
    ----------
    Williams, Waterman and Patterson 2009 (the roofline's memory time); Dao et al. 2022,
    Section 2.2.

    Examples
    --------
    >>> round(fusion_time_saved_s(1 << 28, 4, 2.0, 4.8e12) * 1e6, 1)
    671.1
    """
    return roofline.memory_time_s(fusion_saved_bytes(n_elements, n_ops, bytes_per_element),
                                  mem_bytes_per_s)


def softmax_unfused_bytes(rows: int, cols: int, bytes_per_element: float) -> float:
    r"""Bytes moved by a row-wise softmax run as five separate kernels.

    .. math:: Q_\text{unfused} = (8\,R\,C + 4\,R)\,b

    Kernels: row max (reads :math:`RC`, writes :math:`R`), subtract (reads :math:`RC` and
    :math:`R`, writes :math:`RC`), exponentiate (reads and writes :math:`RC`), row sum (reads
    :math:`RC`, writes :math:`R`), divide (reads :math:`RC` and :math:`R`, writes :math:`RC`):
    five reads and three writes of the matrix, four of a row vector.

    Parameters
    ----------
    rows, cols : int
        :math:`R` rows, each normalized over its :math:`C` columns.
    bytes_per_element : float
        :math:`b` (bytes), for the matrix and the row vectors alike.

    Returns
    -------
    float
        Bytes read plus written.

    References
    ----------
    Milakov and Gimelshein 2018, Section 2 (the safe softmax's passes over the input).

    Examples
    --------
    >>> softmax_unfused_bytes(1024, 1024, 4.0) / softmax_fused_bytes(1024, 1024, 4.0)
    4.001953125
    """
    r, c = positive_int("rows", rows), positive_int("cols", cols)
    b = positive("bytes_per_element", bytes_per_element)
    return (8.0 * r * c + 4.0 * r) * b


def softmax_fused_bytes(rows: int, cols: int, bytes_per_element: float) -> float:
    r"""Bytes moved by a fused row-wise softmax: the matrix read once and written once.

    .. math:: Q_\text{fused} = 2\,R\,C\,b

    Assumptions
    -----------
    A row fits on chip (registers or shared memory), so the max, the sum and the division all
    use the one copy read from memory.

    References
    ----------
    Milakov and Gimelshein 2018, Section 2.

    Examples
    --------
    >>> softmax_fused_bytes(2, 3, 4.0)
    48.0
    """
    r, c = positive_int("rows", rows), positive_int("cols", cols)
    return 2.0 * r * c * positive("bytes_per_element", bytes_per_element)


def online_softmax_update(m, ell, block):
    r"""One step of the online softmax: fold ``block`` into a running max ``m`` and sum ``ell``.

    .. math:: m' = \max(m, \max_j x_j), \qquad
              \ell' = \ell\, e^{m - m'} + \sum_j e^{x_j - m'}

    Works row-wise: ``m`` and ``ell`` have shape ``(R,)`` (or are scalars), ``block`` has shape
    ``(R, c)`` (or ``(c,)``). Start from :math:`m = -\infty`, :math:`\ell = 0`.

    Returns
    -------
    tuple of ndarray
        ``(m', ell')``.

    References
    ----------
    Milakov and Gimelshein 2018, Algorithm 3, lines 4-5.

    Examples
    --------
    >>> m, ell = online_softmax_update(-np.inf, 0.0, np.array([0.0, 0.0]))
    >>> float(m), float(ell)
    (0.0, 2.0)
    """
    if np.ndim(m) == 0:  # a running max: -inf for an empty history, never NaN or +inf
        _checks.real("m", m, allow_inf=True)
        if m == math.inf:
            raise ValueError(f"m must be a number in [-inf, inf), got {m!r}")
    else:
        _checks.real_array("m", m, allow_neg_inf=True)
    _checks.positive_array("ell", ell, allow_zero=True)
    _checks.sequence("block", block, min_len=1)
    _checks.real_array("block", block, allow_neg_inf=True)
    block = np.asarray(block, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    m_new = np.maximum(m, block.max(axis=-1))
    with np.errstate(invalid="ignore"):  # -inf - -inf only when both are -inf (empty history)
        scale = np.where(np.isneginf(m), 0.0, np.exp(m - m_new))
    ell_new = np.asarray(ell, dtype=np.float64) * scale + np.exp(
        block - m_new[..., None] if block.ndim > m_new.ndim else block - m_new).sum(axis=-1)
    return m_new, ell_new


def online_softmax(x, block: int = 1):
    r"""Softmax of each row of ``x``, its normalizer computed in one pass of ``block`` columns.

    .. math:: \operatorname{softmax}(x)_j = \frac{e^{x_j - m_C}}{\ell_C}

    where :math:`(m_C, \ell_C)` are the running max and sum of :func:`online_softmax_update`
    after all :math:`C` columns: one pass over the input for the normalizer and one to write the
    output, against three for the safe softmax (:func:`two_pass_softmax` plus its max pass).

    Parameters
    ----------
    x : array_like
        Shape ``(..., C)``; rows are the last axis.
    block : int
        Columns folded per step (>= 1); the result does not depend on it.

    References
    ----------
    Milakov and Gimelshein 2018, Algorithm 3.

    Examples
    --------
    >>> np.round(online_softmax([1.0, 2.0, 3.0]), 4)
    array([0.09  , 0.2447, 0.6652])
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("x must have at least one column")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")
    blk = positive_int("block", block)
    rows = x.reshape(-1, x.shape[-1])
    m = np.full(rows.shape[0], -np.inf)
    ell = np.zeros(rows.shape[0])
    for start in range(0, rows.shape[1], blk):
        m, ell = online_softmax_update(m, ell, rows[:, start:start + blk])
    return (np.exp(rows - m[:, None]) / ell[:, None]).reshape(x.shape)


def two_pass_softmax(x):
    r"""The safe softmax: a pass for the row max, then exponentials and their sum.

    .. math:: \operatorname{softmax}(x)_j = \frac{e^{x_j - \max_k x_k}}{\sum_k e^{x_k - \max_k x_k}}

    References
    ----------
    Milakov and Gimelshein 2018, Algorithm 2 (the "safe" softmax).

    Examples
    --------
    >>> float(two_pass_softmax([1000.0, 1000.0])[0])
    0.5
    """
    _checks.real_array("x", x, allow_neg_inf=True)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("x must have at least one column")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention_flop(seq_len: int, head_dim: int, *, n_heads: int = 1, batch: int = 1,
                   causal: bool = False) -> float:
    r"""FLOP of an attention forward pass: two matrix products per head.

    .. math:: F = 4\,N^2 d \ \text{per head}, \qquad F_\text{causal} = 2\,N^2 d

    :math:`S = QK^\top` and :math:`O = PV` are each :math:`2N^2d`; the softmax's
    :math:`O(N^2)` operations are not counted. A causal mask skips about half the products,
    counted as exactly half (the convention of the FlashAttention benchmarks).

    References
    ----------
    Dao 2023 (FlashAttention-2), Section 4.1: forward FLOPs ``4 * seqlen^2 * head_dim *
    n_heads``, halved with causal masking.

    Examples
    --------
    >>> attention_flop(1024, 64, n_heads=16, batch=64) / 1e9
    274.877906944
    """
    _checks.boolean("causal", causal)
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    h, bsz = positive_int("n_heads", n_heads), positive_int("batch", batch)
    return 4.0 * n * n * d * h * bsz / (2.0 if causal else 1.0)


def _scale(n_heads: int, batch: int, bytes_per_element: float) -> float:
    return (positive_int("n_heads", n_heads) * positive_int("batch", batch)
            * positive("bytes_per_element", bytes_per_element))


def standard_attention_hbm_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                                 n_heads: int = 1, batch: int = 1) -> float:
    r"""HBM bytes of standard attention's forward pass (the score matrix written and re-read).

    .. math:: Q_\text{std} = (4\,N^2 + 4\,N d)\, b \ \text{per head}

    Algorithm 0: read :math:`Q, K`, write :math:`S` (:math:`2Nd + N^2`); read :math:`S`, write
    :math:`P` (:math:`2N^2`); read :math:`P, V`, write :math:`O` (:math:`N^2 + 2Nd`).

    References
    ----------
    Dao et al. 2022, Algorithm 0 and Theorem 2 (:math:`\Theta(Nd + N^2)`).

    Examples
    --------
    >>> standard_attention_hbm_bytes(1024, 64, 2.0) / 2**20
    8.5
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    return (4.0 * n * n + 4.0 * n * d) * _scale(n_heads, batch, bytes_per_element)


def standard_attention_backward_hbm_bytes(seq_len: int, head_dim: int,
                                          bytes_per_element: float, *, n_heads: int = 1,
                                          batch: int = 1) -> float:
    r"""HBM bytes of standard attention's backward pass (Algorithm 3).

    .. math:: Q_\text{std,bwd} = (7\,N^2 + 8\,N d)\, b \ \text{per head}

    Steps: :math:`dV = P^\top dO` (:math:`N^2 + 2Nd`), :math:`dP = dO\,V^\top`
    (:math:`N^2 + 2Nd`), :math:`dS` from :math:`P, dP` (:math:`3N^2`), :math:`dQ = dS\,K` and
    :math:`dK = dS^\top Q` (:math:`N^2 + 2Nd` each).

    References
    ----------
    Dao et al. 2022, Appendix B.4, Algorithm 3.

    Examples
    --------
    >>> standard_attention_backward_hbm_bytes(1024, 64, 2.0) / 2**20
    15.0
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    return (7.0 * n * n + 8.0 * n * d) * _scale(n_heads, batch, bytes_per_element)


def flash_block_sizes(sram_elements: int, head_dim: int) -> tuple[int, int]:
    r"""FlashAttention's block sizes ``(B_r, B_c)`` for an on-chip memory of ``sram_elements``.

    .. math:: B_c = \left\lceil \frac{M}{4d} \right\rceil, \qquad
              B_r = \min\!\left(\left\lceil \frac{M}{4d} \right\rceil,\ d\right)

    References
    ----------
    Dao et al. 2022, Algorithm 1, line 1.

    Examples
    --------
    >>> flash_block_sizes(49152, 64)
    (64, 192)
    """
    m = positive_int("sram_elements", sram_elements)
    d = positive_int("head_dim", head_dim)
    if m < d:
        raise ValueError(f"sram_elements must be >= head_dim ({d}), got {m}")
    bc = math.ceil(m / (4 * d))
    return min(bc, d), bc


def flash_attention_hbm_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                              block_cols: int, n_heads: int = 1, batch: int = 1,
                              stat_bytes: float = 4.0) -> float:
    r"""HBM bytes of FlashAttention's forward pass (Algorithm 1, key blocks in the outer loop).

    .. math:: Q_\text{flash} = (2Nd + T_c\,3Nd + Nd)\,b + (2N + 4\,T_c N)\,b_s,
              \quad T_c = \lceil N / B_c \rceil

    :math:`K` and :math:`V` are read once; for each of the :math:`T_c` key blocks every block
    of :math:`Q` and :math:`O` is read and :math:`O` written back (:math:`3Nd`), with the row
    statistics :math:`\ell, m` read and written (:math:`4N`, in fp32 of :math:`b_s` bytes);
    :math:`O, \ell, m` are initialised in HBM first. With :math:`B_c = \Theta(M/d)` this is
    :math:`\Theta(N^2 d^2 / M)`.

    References
    ----------
    Dao et al. 2022, Algorithm 1 (lines 2, 6, 8, 12, 13) and Theorem 2.

    Examples
    --------
    >>> round(flash_attention_hbm_bytes(1024, 64, 2.0, block_cols=128) / 2**20, 3)
    3.508
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    bc = positive_int("block_cols", block_cols)
    tc = math.ceil(n / bc)
    s = positive("stat_bytes", stat_bytes) / positive("bytes_per_element", bytes_per_element)
    return (3.0 * n * d + 3.0 * tc * n * d + (2.0 * n + 4.0 * tc * n) * s) * _scale(
        n_heads, batch, bytes_per_element)


def flash_attention_backward_hbm_bytes(seq_len: int, head_dim: int, bytes_per_element: float,
                                       *, block_cols: int, n_heads: int = 1, batch: int = 1,
                                       stat_bytes: float = 4.0) -> float:
    r"""HBM bytes of FlashAttention's backward pass (Algorithm 4, key blocks in the outer loop).

    .. math:: Q_\text{flash,bwd} = (4Nd + T_c\,5Nd)\,b + 2\,T_c N\, b_s

    :math:`K_j, V_j` read and :math:`dK_j, dV_j` written once per key block (:math:`4Nd` in
    all); for each key block every :math:`Q_i, O_i, dO_i, dQ_i` is read and :math:`dQ_i`
    written (:math:`5Nd`), with :math:`\ell_i, m_i` read (:math:`2N`). The dropout state and
    the zero-initialisation of :math:`dQ, dK, dV` are not counted.

    References
    ----------
    Dao et al. 2022, Appendix B.4, Algorithm 4.

    Examples
    --------
    >>> round(flash_attention_backward_hbm_bytes(1024, 64, 2.0, block_cols=128) / 2**20, 3)
    5.562
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    tc = math.ceil(n / positive_int("block_cols", block_cols))
    s = positive("stat_bytes", stat_bytes) / positive("bytes_per_element", bytes_per_element)
    return (4.0 * n * d + 5.0 * tc * n * d + 2.0 * tc * n * s) * _scale(
        n_heads, batch, bytes_per_element)


def flash2_attention_hbm_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                               block_rows: int, n_heads: int = 1, batch: int = 1,
                               causal: bool = False) -> float:
    r"""HBM bytes of a FlashAttention-2-style forward pass (query blocks in the outer loop).

    .. math:: Q_\text{flash2} = (2Nd + 2\,T_r N d)\,b, \quad T_r = \lceil N / B_r \rceil

    Each program reads its block of :math:`Q` once and writes its block of :math:`O` once
    (:math:`2Nd` in all) and reads every block of :math:`K` and :math:`V` (:math:`2Nd` per
    query block). With a causal mask, query block :math:`i` reads only the
    :math:`\min((i+1)B_r, N)` keys at or before its last row. This counts every re-read of
    :math:`K, V` as HBM traffic; an L2 cache that serves them lowers the real figure.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 (lines 3-6, 10); Dao et al. 2022, Theorem 2.

    Examples
    --------
    >>> flash2_attention_hbm_bytes(1024, 64, 2.0, block_rows=128) / 2**20
    2.25
    """
    _checks.boolean("causal", causal)
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    br = positive_int("block_rows", block_rows)
    tr = math.ceil(n / br)
    if causal:
        kv_rows = sum(min((i + 1) * br, n) for i in range(tr))
    else:
        kv_rows = tr * n
    return (2.0 * n * d + 2.0 * kv_rows * d) * _scale(n_heads, batch, bytes_per_element)


def attention_intensity_flop_per_byte(seq_len: int, head_dim: int, bytes_per_element: float,
                                      *, block_rows: int | None = None,
                                      causal: bool = False) -> float:
    r"""Arithmetic intensity of an attention forward pass (FLOP per HBM byte).

    .. math:: I = \frac{F}{Q}

    with :math:`F` from :func:`attention_flop` and :math:`Q` from
    :func:`standard_attention_hbm_bytes` (``block_rows`` None) or
    :func:`flash2_attention_hbm_bytes`. Standard attention's intensity tends to :math:`d/b`;
    the fused kernel's to :math:`2 B_r / b`.

    References
    ----------
    Williams, Waterman and Patterson 2009 (arithmetic intensity); Dao et al. 2022, Theorem 2.

    Examples
    --------
    >>> round(attention_intensity_flop_per_byte(4096, 128, 2.0, block_rows=128), 1)
    124.1
    """
    _checks.boolean("causal", causal)
    if block_rows is not None:
        _checks.positive_int("block_rows", block_rows)
    f = attention_flop(seq_len, head_dim, causal=causal)
    if block_rows is None:
        if causal:
            raise ValueError("standard attention's traffic here is non-causal; pass causal=False")
        q = standard_attention_hbm_bytes(seq_len, head_dim, bytes_per_element)
    else:
        q = flash2_attention_hbm_bytes(seq_len, head_dim, bytes_per_element,
                                       block_rows=block_rows, causal=causal)
    return roofline.arithmetic_intensity_flop_per_byte(f, q)


def naive_attention_peak_bytes(seq_len: int, bytes_per_element: float, *, n_heads: int = 1,
                               batch: int = 1) -> float:
    r"""Bytes held at once by materialised attention: the score and probability matrices.

    .. math:: Q_\text{peak} = 2\,N^2\, b \ \text{per head}

    The inputs, output and a causal mask (shared by all heads) are not counted.

    References
    ----------
    Dao et al. 2022, Section 2.2 (standard attention materialises :math:`S` and :math:`P`).

    Examples
    --------
    >>> naive_attention_peak_bytes(8192, 2.0, n_heads=16, batch=2) / 2**30
    8.0
    """
    n = positive_int("seq_len", seq_len)
    return 2.0 * n * n * _scale(n_heads, batch, bytes_per_element)


def recompute_time_s(seq_len: int, head_dim: int, peak_flop_per_s: float) -> float:
    r"""Seconds to recompute one head's scores :math:`S = QK^\top` in the backward pass.

    .. math:: T_\text{recompute} = \frac{2\,N^2 d}{P}

    References
    ----------
    Dao et al. 2022, Section 3.1 ("Recomputation") and Figure 2 left (more FLOP, less time).

    Examples
    --------
    >>> round(recompute_time_s(1024, 64, 1e12) * 1e6, 1)
    134.2
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    return roofline.compute_time_s(2.0 * n * n * d, peak_flop_per_s)


def store_time_s(seq_len: int, bytes_per_element: float, mem_bytes_per_s: float) -> float:
    r"""Seconds to write one head's :math:`N \times N` probabilities and read them back.

    .. math:: T_\text{store} = \frac{2\,N^2 b}{B}

    Recomputation beats storing when :math:`T_\text{recompute} < T_\text{store}`, that is when
    :math:`d / b < P / B`: when the head dimension (FLOP per stored byte) is below the ridge
    point of the roofline.

    References
    ----------
    Dao et al. 2022, Section 3.1; Williams, Waterman and Patterson 2009 (the ridge point).

    Examples
    --------
    >>> round(store_time_s(1024, 2.0, 1e12) * 1e6, 3)
    4.194
    """
    n = positive_int("seq_len", seq_len)
    return roofline.memory_time_s(2.0 * n * n * positive("bytes_per_element", bytes_per_element),
                                  mem_bytes_per_s)



# --- two levels: HBM (DRAM) and L2 ----------------------------------------------------------

def flash2_heads_in_flight(seq_len: int, *, block_rows: int, concurrent_programs: int,
                           n_heads: int = 1, batch: int = 1) -> int:
    r"""(Batch, head) slices whose programs run at the same time in a FlashAttention-2 launch.

    .. math:: h_\text{flight} = \min\!\left(\left\lceil \frac{P - 1}{T_r} \right\rceil + 1,\
              B H\right), \qquad T_r = \lceil N / B_r \rceil

    The grid is :math:`T_r` query blocks by :math:`BH` slices, launched with the query block
    varying fastest (Dao 2023, Section 3.2; the book's kernel's ``grid = (T_r, B*H)``), so the
    :math:`P` programs resident at once are :math:`P` consecutive programs of that order; a run
    of :math:`P` consecutive programs touches at most :math:`\lceil (P-1)/T_r \rceil + 1` slices.

    Parameters
    ----------
    seq_len : int
        :math:`N`.
    block_rows : int
        Query rows per program, :math:`B_r`.
    concurrent_programs : int
        Programs resident at once, :math:`P` (SMs times programs per SM).
    n_heads, batch : int
        :math:`H`, :math:`B`.

    Returns
    -------
    int
        :math:`h_\text{flight}` (count).

    References
    ----------
    Dao 2023 (FlashAttention-2), Section 3.2 (parallelising over sequence blocks and heads).

    Examples
    --------
    >>> flash2_heads_in_flight(4096, block_rows=128, concurrent_programs=132, n_heads=32, batch=4)
    6
    """
    n = positive_int("seq_len", seq_len)
    tr = math.ceil(n / positive_int("block_rows", block_rows))
    p = positive_int("concurrent_programs", concurrent_programs)
    slices = positive_int("n_heads", n_heads) * positive_int("batch", batch)
    return min(math.ceil((p - 1) / tr) + 1, slices)


def flash2_resident_kv_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                             block_rows: int, concurrent_programs: int, n_heads: int = 1,
                             batch: int = 1) -> float:
    r"""Bytes of K and V re-read concurrently by a FlashAttention-2 launch: its L2 working set.

    .. math:: W = 2\,N d\, b\; h_\text{flight}

    Every program of a slice streams all of that slice's :math:`K` and :math:`V`
    (:math:`2Nd` elements); the slices in flight (:func:`flash2_heads_in_flight`) re-read theirs
    at the same time. When :math:`W` fits in L2 each :math:`K, V` block comes from HBM once.
    With many slices in flight, :math:`W \approx 2 P B_r d b`, independent of :math:`N`.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 (lines 3-6: every query block reads every
    :math:`K_j, V_j`) and Section 3.2.

    Examples
    --------
    >>> flash2_resident_kv_bytes(4096, 128, 2.0, block_rows=128, concurrent_programs=132,
    ...                          n_heads=16, batch=4) / 2**20
    12.0
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    b = positive("bytes_per_element", bytes_per_element)
    h = flash2_heads_in_flight(n, block_rows=block_rows, concurrent_programs=concurrent_programs,
                               n_heads=n_heads, batch=batch)
    return 2.0 * n * d * b * h


def flash2_attention_compulsory_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                                      n_heads: int = 1, batch: int = 1,
                                      stat_bytes: float = 0.0) -> float:
    r"""Compulsory HBM bytes of a fused attention forward: Q, K, V read once, O (and LSE) written once.

    .. math:: Q_\text{min} = 4\,N d\, b + N\, b_s \ \text{per head}

    ``stat_bytes`` :math:`b_s` is the size of the per-row log-sum-exp a training kernel writes
    for the backward pass (4.0 for FlashAttention-2's fp32 ``L``; 0 for a kernel that writes
    none, as the book's).

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 (lines 3, 12-13: load :math:`Q_i`, write
    :math:`O_i` and :math:`L_i`); Dao et al. 2022, Theorem 2 (the :math:`\Omega(Nd)` term).

    Examples
    --------
    >>> flash2_attention_compulsory_bytes(1024, 64, 2.0) / 2**20
    0.5
    """
    n, d = positive_int("seq_len", seq_len), positive_int("head_dim", head_dim)
    b = positive("bytes_per_element", bytes_per_element)
    s = positive("stat_bytes", stat_bytes, allow_zero=True)
    return (4.0 * n * d * b + n * s) * _scale(n_heads, batch, 1.0)


def flash2_attention_l2_traffic_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                                      block_rows: int, n_heads: int = 1, batch: int = 1,
                                      causal: bool = False, stat_bytes: float = 0.0) -> float:
    r"""Bytes a FlashAttention-2 forward moves through L2: the one-level count, every re-read included.

    .. math:: Q_\text{L2} = (2Nd + 2\,T_r N d)\,b + N b_s

    Every load and store of the kernel passes through L2, so the L2 traffic is
    :func:`flash2_attention_hbm_bytes` (the one-level count) plus the log-sum-exp rows.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1.

    Examples
    --------
    >>> flash2_attention_l2_traffic_bytes(1024, 64, 2.0, block_rows=128) / 2**20
    2.25
    """
    n = positive_int("seq_len", seq_len)
    s = positive("stat_bytes", stat_bytes, allow_zero=True)
    return (flash2_attention_hbm_bytes(seq_len, head_dim, bytes_per_element,
                                       block_rows=block_rows, n_heads=n_heads, batch=batch,
                                       causal=causal)
            + n * s * _scale(n_heads, batch, 1.0))


def flash2_attention_dram_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                                block_rows: int, l2_capacity_bytes: float,
                                concurrent_programs: int, n_heads: int = 1, batch: int = 1,
                                causal: bool = False, stat_bytes: float = 0.0) -> float:
    r"""HBM (DRAM) bytes of a FlashAttention-2 forward with an L2 cache of ``l2_capacity_bytes``.

    .. math:: Q_\text{DRAM} = \begin{cases} Q_\text{min} & W \le C_\text{L2} \\
              Q_\text{L2} & W > C_\text{L2} \end{cases}

    with :math:`W` from :func:`flash2_resident_kv_bytes`, :math:`Q_\text{min}` from
    :func:`flash2_attention_compulsory_bytes` and :math:`Q_\text{L2}` from
    :func:`flash2_attention_l2_traffic_bytes`.

    Assumptions
    -----------
    A two-state model. When the K/V re-read concurrently fits in L2, every re-read hits and only
    the compulsory traffic reaches HBM; when it does not, the re-reads stream through L2 in a
    cycle longer than it, LRU keeps nothing useful, and every re-read reaches HBM (the one-level
    count). Q, O and LSE are touched once. The L2 holds nothing else of consequence (the whole
    capacity is given to K/V; pass a smaller ``l2_capacity_bytes`` to reserve some). A store of
    O may also stay in L2 after the kernel ends, so a counter may read fewer DRAM writes.

    Parameters
    ----------
    seq_len, head_dim : int
        :math:`N`, :math:`d`.
    bytes_per_element : float
        :math:`b` (bytes).
    block_rows : int
        :math:`B_r`.
    l2_capacity_bytes : float
        :math:`C_\text{L2}` (bytes): ``specs.H200_SXM.l2_bytes`` (50 MiB, Hopper whitepaper).
        Zero gives the one-level count.
    concurrent_programs : int
        :math:`P`, programs resident at once.
    n_heads, batch : int
        :math:`H`, :math:`B`.
    causal : bool
        Query block :math:`i` reads keys up to its last row only.
    stat_bytes : float
        :math:`b_s`, bytes of log-sum-exp written per row (0: none).

    Returns
    -------
    float
        Bytes read from and written to HBM.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 and Section 3.2; NVIDIA H100 Tensor Core GPU
    Architecture whitepaper (2022), Table 3 (50 MB L2) for the capacity.

    Examples
    --------
    >>> round(flash2_attention_dram_bytes(4096, 128, 2.0, block_rows=128,
    ...     l2_capacity_bytes=50 * 2**20, concurrent_programs=132, n_heads=16, batch=4) / 1e6, 1)
    268.4
    """
    _checks.boolean("causal", causal)
    positive("stat_bytes", stat_bytes, allow_zero=True)
    c = positive("l2_capacity_bytes", l2_capacity_bytes, allow_zero=True)
    w = flash2_resident_kv_bytes(seq_len, head_dim, bytes_per_element, block_rows=block_rows,
                                 concurrent_programs=concurrent_programs, n_heads=n_heads,
                                 batch=batch)
    if w <= c:
        return flash2_attention_compulsory_bytes(seq_len, head_dim, bytes_per_element,
                                                 n_heads=n_heads, batch=batch,
                                                 stat_bytes=stat_bytes)
    return flash2_attention_l2_traffic_bytes(seq_len, head_dim, bytes_per_element,
                                             block_rows=block_rows, n_heads=n_heads,
                                             batch=batch, causal=causal, stat_bytes=stat_bytes)


def standard_attention_l2_traffic_bytes(seq_len: int, head_dim: int, bytes_per_element: float,
                                        *, n_heads: int = 1, batch: int = 1,
                                        score_passes: int = 0) -> float:
    r"""Bytes materialised attention moves through L2: Algorithm 0 plus extra passes over S.

    .. math:: Q_\text{std,L2} = \left((4 + 2k)\,N^2 + 4\,N d\right) b \ \text{per head}

    Algorithm 0's three steps (:func:`standard_attention_hbm_bytes`), plus :math:`k` =
    ``score_passes`` elementwise kernels between the first product and the softmax, each
    reading and writing the :math:`N \times N` scores (in eager PyTorch, the scaling by
    :math:`1/\sqrt{d}` is one, a ``masked_fill`` for a causal mask another). The matrix
    products' own re-reads of their input tiles are not counted.

    References
    ----------
    Dao et al. 2022, Algorithm 0 (and its remark that masking and dropout are further passes).

    Examples
    --------
    >>> standard_attention_l2_traffic_bytes(1024, 64, 2.0, score_passes=1) / 2**20
    12.5
    """
    n = positive_int("seq_len", seq_len)
    k = _checks.integer("score_passes", score_passes, minimum=0, maximum=64)
    return (standard_attention_hbm_bytes(seq_len, head_dim, bytes_per_element, n_heads=n_heads,
                                         batch=batch)
            + 2.0 * k * n * n * _scale(n_heads, batch, bytes_per_element))


def standard_attention_dram_bytes(seq_len: int, head_dim: int, bytes_per_element: float, *,
                                  l2_capacity_bytes: float, n_heads: int = 1, batch: int = 1,
                                  score_passes: int = 0) -> float:
    r"""HBM (DRAM) bytes of materialised attention with an L2 cache of ``l2_capacity_bytes``.

    .. math:: Q_\text{std,DRAM} = \begin{cases} 4\,N d\, b\,BH & B H N^2 b \le C_\text{L2} \\
              Q_\text{std,L2} & \text{otherwise} \end{cases}

    Each kernel of the path writes the scores (or probabilities) of all :math:`BH` slices before
    the next kernel reads them, so the intermediate that must survive in L2 is the whole
    :math:`BH \times N \times N` matrix. If it fits, only the inputs and the output reach HBM;
    if not, every pass over it does (:func:`standard_attention_l2_traffic_bytes`).

    Assumptions
    -----------
    Two states, as :func:`flash2_attention_dram_bytes`; the part of a too-large matrix still in
    L2 when the next kernel starts (at most :math:`C_\text{L2}`) is not subtracted.

    References
    ----------
    Dao et al. 2022, Algorithm 0; NVIDIA H100 architecture whitepaper (2022), Table 3 (L2).

    Examples
    --------
    >>> standard_attention_dram_bytes(4096, 64, 2.0, l2_capacity_bytes=50 * 2**20, n_heads=32,
    ...                               batch=4, score_passes=1) / 2**30
    24.25
    """
    n = positive_int("seq_len", seq_len)
    c = positive("l2_capacity_bytes", l2_capacity_bytes, allow_zero=True)
    scores = n * n * _scale(n_heads, batch, bytes_per_element)
    if scores <= c:
        d = positive_int("head_dim", head_dim)
        _checks.integer("score_passes", score_passes, minimum=0, maximum=64)
        return 4.0 * n * d * _scale(n_heads, batch, bytes_per_element)
    return standard_attention_l2_traffic_bytes(seq_len, head_dim, bytes_per_element,
                                               n_heads=n_heads, batch=batch,
                                               score_passes=score_passes)


def two_level_time_s(flop: float, dram_bytes: float, l2_traffic_bytes: float, *,
                     peak_flop_per_s: float, mem_bytes_per_s: float,
                     l2_bytes_per_s: float) -> float:
    r"""Predicted time (s) of a kernel limited by the slowest of compute, HBM and L2.

    .. math:: T = \max\!\left(\frac{F}{P},\ \frac{Q_\text{DRAM}}{B_\text{HBM}},\
              \frac{Q_\text{L2}}{B_\text{L2}}\right)

    The roofline with two memory levels: each resource works in parallel with the others and
    the busiest one sets the time. Pass the rates measured on the same machine where there are
    (a cuBLAS product's FLOP/s, a copy's bytes/s), datasheet figures otherwise.

    Parameters
    ----------
    flop : float
        :math:`F` (FLOP).
    dram_bytes, l2_traffic_bytes : float
        Bytes through HBM and through L2.
    peak_flop_per_s, mem_bytes_per_s, l2_bytes_per_s : float
        The three rates (FLOP/s, bytes/s, bytes/s).

    Returns
    -------
    float
        :math:`T` (s).

    References
    ----------
    Williams, Waterman and Patterson 2009 (the roofline; its hierarchical form, one ceiling per
    level); the same max of compute, HBM and L2 times is XLA's GPU dot cost model
    (openxla/xla, ``xla/service/gpu/model/gpu_dot_fusion_cost_model.cc``).

    Examples
    --------
    >>> round(two_level_time_s(1e12, 1e9, 6e9, peak_flop_per_s=1e15, mem_bytes_per_s=4e12,
    ...                        l2_bytes_per_s=6e12) * 1e3, 3)
    1.0
    """
    f = positive("flop", flop, allow_zero=True)
    q_dram = positive("dram_bytes", dram_bytes, allow_zero=True)
    q_l2 = positive("l2_traffic_bytes", l2_traffic_bytes, allow_zero=True)
    p = positive("peak_flop_per_s", peak_flop_per_s)
    b_dram = positive("mem_bytes_per_s", mem_bytes_per_s)
    b_l2 = positive("l2_bytes_per_s", l2_bytes_per_s)
    return max(roofline.compute_time_s(f, p), roofline.memory_time_s(q_dram, b_dram),
               roofline.memory_time_s(q_l2, b_l2))


def flash2_attention_time_s(seq_len: int, head_dim: int, bytes_per_element: float, *,
                            block_rows: int, l2_capacity_bytes: float, concurrent_programs: int,
                            peak_flop_per_s: float, mem_bytes_per_s: float,
                            l2_bytes_per_s: float, n_heads: int = 1, batch: int = 1,
                            causal: bool = False, stat_bytes: float = 0.0) -> float:
    r"""Predicted time (s) of a FlashAttention-2 forward: :func:`two_level_time_s` of its traffic.

    .. math:: T = \max\!\left(\frac{F}{P},\ \frac{Q_\text{DRAM}}{B_\text{HBM}},\
              \frac{Q_\text{L2}}{B_\text{L2}}\right)

    :math:`F` from :func:`attention_flop`, :math:`Q_\text{DRAM}` from
    :func:`flash2_attention_dram_bytes`, :math:`Q_\text{L2}` from
    :func:`flash2_attention_l2_traffic_bytes`.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 and Section 4.1 (the FLOP count);
    Williams, Waterman and Patterson 2009.

    Examples
    --------
    >>> round(flash2_attention_time_s(4096, 128, 2.0, block_rows=128,
    ...     l2_capacity_bytes=50 * 2**20, concurrent_programs=132, peak_flop_per_s=989.4e12,
    ...     mem_bytes_per_s=4.8e12, l2_bytes_per_s=6.65e12, n_heads=16, batch=4) * 1e3, 3)
    0.666
    """
    for name, value in (("peak_flop_per_s", peak_flop_per_s),
                        ("mem_bytes_per_s", mem_bytes_per_s), ("l2_bytes_per_s", l2_bytes_per_s)):
        positive(name, value)
    f = attention_flop(seq_len, head_dim, n_heads=n_heads, batch=batch, causal=causal)
    kw = dict(block_rows=block_rows, n_heads=n_heads, batch=batch, causal=causal,
              stat_bytes=stat_bytes)
    dram = flash2_attention_dram_bytes(seq_len, head_dim, bytes_per_element,
                                       l2_capacity_bytes=l2_capacity_bytes,
                                       concurrent_programs=concurrent_programs, **kw)
    l2 = flash2_attention_l2_traffic_bytes(seq_len, head_dim, bytes_per_element, **kw)
    return two_level_time_s(f, dram, l2, peak_flop_per_s=peak_flop_per_s,
                            mem_bytes_per_s=mem_bytes_per_s, l2_bytes_per_s=l2_bytes_per_s)


# --- inside the SM: the pipes a FlashAttention-2 loop keeps busy ------------------------------

def flash2_program_tiles(seq_len: int, *, block_rows: int, block_cols: int,
                         causal: bool = False) -> list[int]:
    r"""Key/value tiles each program of a FlashAttention-2 forward computes, per query block.

    .. math:: t_i = \lceil N / B_c \rceil, \qquad
              t_i^\text{causal} = \lceil \min((i + 1) B_r,\ N) / B_c \rceil,
              \qquad i = 0 \dots \lceil N / B_r \rceil - 1

    Program :math:`i` owns query rows :math:`i B_r \dots (i+1) B_r - 1` and computes a full
    :math:`B_r \times B_c` tile of scores per key block it visits (a tile cut by the sequence's
    end or by the diagonal is computed whole and masked). Without a mask it visits every key
    block; with the causal mask, the blocks up to the one holding its last row (the book's
    kernel: the blocks below the diagonal unmasked, the ones on it masked; :math:`B_r` a
    multiple of :math:`B_c`). The causal count is :math:`T_r (T_r + 1) / 2` tiles of
    :math:`B_r^2` scores (for :math:`B_c = B_r`), not the :math:`N^2 / 2` of the FLOP
    convention: the diagonal tiles are computed in full.

    Parameters
    ----------
    seq_len : int
        :math:`N`.
    block_rows, block_cols : int
        :math:`B_r` query rows and :math:`B_c` keys per tile (:math:`B_r` a multiple of
        :math:`B_c` when causal).
    causal : bool
        Whether the causal mask is applied.

    Returns
    -------
    list of int
        :math:`t_i` for each query block, in launch order.

    References
    ----------
    Dao 2023 (FlashAttention-2), Algorithm 1 (the outer loop over query blocks, the inner loop
    over key blocks) and Section 3.1 (causal masking: blocks above the diagonal skipped, one
    block per row of blocks masked); ``helpers.kernels.attention.attention_fwd_kernel``.

    Examples
    --------
    >>> flash2_program_tiles(512, block_rows=128, block_cols=64, causal=True)
    [2, 4, 6, 8]
    """
    _checks.boolean("causal", causal)
    br, bc = positive_int("block_rows", block_rows), positive_int("block_cols", block_cols)
    n = positive_int("seq_len", seq_len, maximum=MAX_PROGRAMS * br)
    if causal and br % bc:
        raise ValueError(f"block_rows must be a multiple of block_cols when causal, got "
                         f"block_rows={br!r}, block_cols={bc!r}")
    tr = math.ceil(n / br)
    if not causal:
        return [math.ceil(n / bc)] * tr
    return [math.ceil(min((i + 1) * br, n) / bc) for i in range(tr)]


def list_schedule_makespan(durations, workers: int) -> float:
    r"""Time until the last of ``durations`` ends, each started in order on the first free worker.

    .. math:: T = \max_k f_k, \qquad f_k = \min_w a_w + t_k, \ a_w \leftarrow f_k

    Graham's list scheduling: job :math:`k` starts when the earliest-free worker :math:`w`
    becomes free (at :math:`a_w`). A GPU's block scheduler places thread blocks this way, in
    launch order, as slots free up. For :math:`J` equal jobs it is
    :math:`\lceil J / W \rceil\, t` (whole waves).

    Parameters
    ----------
    durations : sequence of float
        Job durations :math:`t_k` (>= 0, any unit), in launch order.
    workers : int
        :math:`W` (>= 1).

    Returns
    -------
    float
        :math:`T`, in the unit of ``durations``.

    References
    ----------
    R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math. 17(2),
    1969 (list scheduling). NVIDIA, CUDA C++ Programming Guide, "Hardware Implementation"
    (blocks are distributed to multiprocessors with available execution capacity).

    Examples
    --------
    >>> list_schedule_makespan([1.0] * 5, 2)
    3.0
    """
    import heapq

    w = positive_int("workers", workers, maximum=MAX_PROGRAMS)
    _checks.sequence("durations", durations, min_len=1)
    if len(durations) > MAX_PROGRAMS:
        raise ValueError(f"durations must hold at most {MAX_PROGRAMS} jobs, got {len(durations)}")
    _checks.positive_array("durations", durations, allow_zero=True)
    free = [0.0] * w
    end = 0.0
    for t in np.asarray(durations, dtype=np.float64).ravel():
        start = heapq.heappop(free)
        heapq.heappush(free, start + float(t))
        end = max(end, start + float(t))
    return end


def flash2_tile_cycles(head_dim: int, *, block_rows: int, block_cols: int,
                       tensor_fma_per_clock: float, sfu_ops_per_clock: float,
                       fma_ops_per_clock: float, alu_ops_per_clock: float,
                       fma_ops_per_score: float, alu_ops_per_score: float,
                       exp_per_score: float = 1.0, rescale_exp_per_row: float = 4.0) -> dict:
    r"""SM cycles of one :math:`B_r \times B_c` tile of a FlashAttention-2 loop, per pipe.

    .. math::

        c_\text{tensor} = \frac{2 B_r B_c d}{R_\text{TC}}, \quad
        c_\text{exp} = \frac{e B_r B_c + k B_r}{R_\text{SFU}}, \quad
        c_\text{fma} = \frac{f B_r B_c + B_r d}{R_\text{FMA}}, \quad
        c_\text{alu} = \frac{a B_r B_c}{R_\text{ALU}}

    The two products (:math:`S = QK^\top` and :math:`PV`, :math:`B_r B_c d` multiply-adds
    each) on the tensor cores; :math:`e` exponentials per score (``exp2`` of the shifted,
    scaled score) and :math:`k` per row (the rescale factor :math:`\alpha = 2^{m_\text{old} -
    m_\text{new}}`, computed by each of the :math:`k` threads that hold a piece of the row: 4
    in Hopper's warp-group accumulator layout) on the special-function units; :math:`f` FP32 operations per score on the
    FMA pipe (scale and shift, the row sum) plus the rescale of the :math:`B_r \times d`
    accumulator; :math:`a` per score on the ALU pipe (the row max, the conversion of
    :math:`P` to bf16). Rates are per clock per SM.

    Parameters
    ----------
    head_dim : int
        :math:`d`.
    block_rows, block_cols : int
        :math:`B_r`, :math:`B_c`.
    tensor_fma_per_clock, sfu_ops_per_clock, fma_ops_per_clock, alu_ops_per_clock : float
        :math:`R_\text{TC}` (dense multiply-adds), :math:`R_\text{SFU}`, :math:`R_\text{FMA}`,
        :math:`R_\text{ALU}` (thread operations) per clock per SM.
    fma_ops_per_score, alu_ops_per_score : float
        :math:`f`, :math:`a` (>= 0).
    exp_per_score : float
        :math:`e` (default 1).
    rescale_exp_per_row : float
        :math:`k` (default 4).

    Returns
    -------
    dict
        ``tensor``, ``exp``, ``fma``, ``alu`` (cycles) and ``total``, their sum.

    Assumptions
    -----------
    ``total`` is the sum, the time if nothing overlapped; how the terms combine on an SM is
    :func:`flash2_sm_tile_cycles`.

    References
    ----------
    J. Shah, G. Bikshandi, Y. Zhang, V. Thakkar, P. Ramani and T. Dao, "FlashAttention-3: Fast
    and Accurate Attention with Asynchrony and Low-precision", arXiv:2407.08608 (2024),
    Section 3.1 (H100 SXM5: 989 TFLOP/s of bf16 products against 3.9 TFLOP/s of special
    functions, so the exponentials can take a large share of the time); Dao 2023
    (FlashAttention-2), Algorithm 1 (the per-tile steps); NVIDIA H100 Tensor Core GPU
    Architecture whitepaper (2022), the SM: 4 tensor cores and 128 FP32 lanes per SM.

    Examples
    --------
    >>> c = flash2_tile_cycles(64, block_rows=128, block_cols=64, tensor_fma_per_clock=2048,
    ...     sfu_ops_per_clock=16, fma_ops_per_clock=128, alu_ops_per_clock=64,
    ...     fma_ops_per_score=2, alu_ops_per_score=1.5)
    >>> c["tensor"], c["exp"]
    (512.0, 544.0)
    """
    d = positive_int("head_dim", head_dim)
    br, bc = positive_int("block_rows", block_rows), positive_int("block_cols", block_cols)
    r_tc = positive("tensor_fma_per_clock", tensor_fma_per_clock)
    r_sfu = positive("sfu_ops_per_clock", sfu_ops_per_clock)
    r_fma = positive("fma_ops_per_clock", fma_ops_per_clock)
    r_alu = positive("alu_ops_per_clock", alu_ops_per_clock)
    f = positive("fma_ops_per_score", fma_ops_per_score, allow_zero=True)
    a = positive("alu_ops_per_score", alu_ops_per_score, allow_zero=True)
    e = positive("exp_per_score", exp_per_score, allow_zero=True)
    k = positive("rescale_exp_per_row", rescale_exp_per_row, allow_zero=True)
    scores = float(br * bc)
    out = {"tensor": 2.0 * scores * d / r_tc, "exp": (e * scores + k * br) / r_sfu,
           "fma": (f * scores + br * d) / r_fma, "alu": a * scores / r_alu}
    out["total"] = out["tensor"] + out["exp"] + out["fma"] + out["alu"]
    return out


def flash2_sm_tile_cycles(terms: dict, programs_per_sm: int = 1) -> float:
    r"""SM cycles per tile when ``programs_per_sm`` programs share an SM: the slowest of three.

    .. math:: c_\text{tile} = \max\!\left(\frac{c_\text{tensor} + c_\text{exp} + c_\text{fma}}{r},\
              \ c_\text{exp} + c_\text{fma} + c_\text{alu},\ c_\text{tensor}\right)

    * the **chain** of one program: its products, then its exponentials and FMA-pipe arithmetic,
      each step waiting for the last (the softmax needs :math:`S`, the second product needs
      :math:`P` and the rescaled accumulator); :math:`r` programs run :math:`r` chains at once.
      The ALU's share (the row max, the packing of :math:`P` to bf16) is left out of the chain:
      it issues while the special-function units work through the exponentials;
    * the **softmax pipes** together: every program's exponentials, FMA and ALU work share the
      SM's CUDA-core pipes and do not overlap one another;
    * the **tensor cores**: every program's products.

    With one program per SM the chain sets the time: the steps run one after another, as the
    brief account of FlashAttention-3 says of a loop without warp specialization. With two, one
    program's products run while the other computes its softmax, and the softmax pipes set it.

    Parameters
    ----------
    terms : dict
        :func:`flash2_tile_cycles`'s ``tensor``, ``exp``, ``fma``, ``alu`` (cycles).
    programs_per_sm : int
        :math:`r` (>= 1), from the launch's registers and shared memory
        (:func:`helpers.models.occupancy.occupancy`).

    Returns
    -------
    float
        :math:`c_\text{tile}`, cycles of the SM per tile (of any resident program).

    References
    ----------
    Shah et al. 2024 (FlashAttention-3), Section 3.1 (the exponentials and the products
    serialized in one warp group; overlapped across two by ping-pong scheduling); the closed
    cyclic queue of :math:`r` jobs through two stations, whose throughput is the smaller of
    :math:`r` over the cycle time and each station's rate (Lazowska et al., *Quantitative
    System Performance*, 1984, Chapter 5, asymptotic bounds).

    Examples
    --------
    >>> t = {"tensor": 512.0, "exp": 544.0, "fma": 281.0, "alu": 232.0}
    >>> flash2_sm_tile_cycles(t, 1), flash2_sm_tile_cycles(t, 2)
    (1337.0, 1057.0)
    """
    _checks.mapping("terms", terms)
    for key in ("tensor", "exp", "fma", "alu"):
        if key not in terms:
            raise ValueError(f"terms must have {key!r} (from flash2_tile_cycles), got {sorted(terms)}")
        positive(f"terms[{key!r}]", terms[key], allow_zero=True)
    r = positive_int("programs_per_sm", programs_per_sm)
    chain = terms["tensor"] + terms["exp"] + terms["fma"]
    return max(chain / r, terms["exp"] + terms["fma"] + terms["alu"], terms["tensor"])


def flash2_attention_pipe_time_s(seq_len: int, head_dim: int, *, block_rows: int,
                                 block_cols: int, n_sms: int, clock_hz: float,
                                 tensor_fma_per_clock: float, sfu_ops_per_clock: float,
                                 fma_ops_per_clock: float, alu_ops_per_clock: float,
                                 fma_ops_per_score: float, alu_ops_per_score: float,
                                 exp_per_score: float = 1.0, program_overhead_cycles: float = 0.0,
                                 programs_per_sm: int = 1, n_heads: int = 1, batch: int = 1,
                                 causal: bool = False) -> float:
    r"""Predicted time (s) of a FlashAttention-2 forward from its SMs' pipes, tile by tile.

    .. math::

        c_i = c_0 + r\, t_i\, c_\text{tile}, \qquad
        T = \frac{1}{f}\,\operatorname{LS}\bigl(\{c_i\}_{\text{programs}},\ r\,S\bigr)

    Each program :math:`i` computes :math:`t_i` tiles (:func:`flash2_program_tiles`); the SM
    spends :math:`c_\text{tile}` cycles per tile (:func:`flash2_sm_tile_cycles` of
    :func:`flash2_tile_cycles`) and shares them among its :math:`r` resident programs, so a
    program lasts :math:`r\, t_i\, c_\text{tile}` plus a fixed :math:`c_0` (loading its query
    block and first key blocks, storing its output: latency, not pipe work). The
    :math:`B H \lceil N/B_r \rceil` programs are placed in launch order on the :math:`r S`
    slots of :math:`S` SMs (:func:`list_schedule_makespan`); :math:`f` is the SM clock.

    Parameters
    ----------
    seq_len, head_dim : int
        :math:`N`, :math:`d`.
    block_rows, block_cols : int
        :math:`B_r`, :math:`B_c` of the launch.
    n_sms : int
        :math:`S`.
    clock_hz : float
        :math:`f` (Hz).
    tensor_fma_per_clock, sfu_ops_per_clock, fma_ops_per_clock, alu_ops_per_clock : float
        Per-SM rates, as in :func:`flash2_tile_cycles`.
    fma_ops_per_score, alu_ops_per_score, exp_per_score : float
        Operations per score, as in :func:`flash2_tile_cycles`.
    program_overhead_cycles : float
        :math:`c_0` (cycles, >= 0).
    programs_per_sm : int
        :math:`r`, programs resident per SM (the occupancy of the launch).
    n_heads, batch : int
        :math:`H`, :math:`B`.
    causal : bool
        The causal mask (tiles above the diagonal skipped).

    Returns
    -------
    float
        :math:`T` (s).

    Assumptions
    -----------
    Memory is not the limit (the two-level model's HBM and L2 times are far below this one
    for the lab's kernel: :func:`two_level_time_s`); the clock is constant over the run.

    References
    ----------
    Shah et al. 2024 (FlashAttention-3), Section 3.1; Dao 2023 (FlashAttention-2), Algorithm 1
    and Section 3.2 (one program per query block and head); Graham 1969 (list scheduling).

    Examples
    --------
    >>> t = flash2_attention_pipe_time_s(4096, 128, block_rows=128, block_cols=128,
    ...     n_sms=132, clock_hz=1.83e9, tensor_fma_per_clock=2048, sfu_ops_per_clock=16,
    ...     fma_ops_per_clock=128, alu_ops_per_clock=64, fma_ops_per_score=4.5,
    ...     alu_ops_per_score=2.1, n_heads=16, batch=4)
    >>> round(t * 1e3, 3)
    1.065
    """
    terms = flash2_tile_cycles(head_dim, block_rows=block_rows, block_cols=block_cols,
                               tensor_fma_per_clock=tensor_fma_per_clock,
                               sfu_ops_per_clock=sfu_ops_per_clock,
                               fma_ops_per_clock=fma_ops_per_clock,
                               alu_ops_per_clock=alu_ops_per_clock,
                               fma_ops_per_score=fma_ops_per_score,
                               alu_ops_per_score=alu_ops_per_score, exp_per_score=exp_per_score)
    s = positive_int("n_sms", n_sms, maximum=MAX_PROGRAMS)
    f = positive("clock_hz", clock_hz)
    c0 = positive("program_overhead_cycles", program_overhead_cycles, allow_zero=True)
    r = positive_int("programs_per_sm", programs_per_sm, maximum=64)
    c = flash2_sm_tile_cycles(terms, r)
    slices = (positive_int("n_heads", n_heads, maximum=MAX_PROGRAMS)
              * positive_int("batch", batch, maximum=MAX_PROGRAMS))
    tiles = flash2_program_tiles(seq_len, block_rows=block_rows, block_cols=block_cols,
                                 causal=causal)
    if slices * len(tiles) > MAX_PROGRAMS or s * r > MAX_PROGRAMS:
        raise ValueError(f"n_heads * batch * ceil(seq_len / block_rows) programs and sm_count * "
                         f"programs_per_sm slots must each be at most {MAX_PROGRAMS}, got "
                         f"{slices * len(tiles)} and {s * r}")
    programs = [c0 + r * t * c for t in tiles] * slices
    return list_schedule_makespan(programs, s * r) / f



def decode_attention_bytes(context_len: int, head_dim: int, bytes_per_element: float, *,
                           n_heads: int, n_kv_heads: int, batch: int = 1,
                           n_splits: int = 1, partial_bytes_per_element: float = 4.0) -> float:
    r"""Bytes (bytes) one decode-attention step of one layer moves: the K/V cache read once,
    the query and the output, and a split-KV kernel's partial results.

    .. math:: Q = 2\,B H_{kv} N d\,b + 2\,B H d\,b + 2\,B H S\,(d + 1)\,b_p\,[S > 1]
                                                     (the page labels this eq-labatt-decode)

    The first term is the KV cache of one layer (:func:`helpers.models.transformer.kv_cache_bytes`
    with :math:`L = 1`): each of the :math:`H_{kv}` K/V heads of a sequence is read once, the
    :math:`G = H / H_{kv}` query heads of its group sharing the load. The query and the output
    are :math:`H d` elements each. With :math:`S > 1` splits each query head writes :math:`S`
    partial outputs and log-sum-exps (:math:`d + 1` values of :math:`b_p` bytes) that the
    combine pass reads back.

    Parameters
    ----------
    context_len : int
        :math:`N`, tokens in the cache (>= 1).
    head_dim : int
        :math:`d` (>= 1).
    bytes_per_element : float
        :math:`b`, bytes of a cache, query or output element (2.0 for bf16).
    n_heads, n_kv_heads : int
        :math:`H` query heads and :math:`H_{kv}` K/V heads (>= 1), :math:`H` a multiple of
        :math:`H_{kv}`.
    batch : int
        :math:`B`, sequences (>= 1).
    n_splits : int
        :math:`S`, chunks of the KV length (>= 1; 1: no partial results).
    partial_bytes_per_element : float
        :math:`b_p`, bytes of a partial value (4.0: fp32).

    Returns
    -------
    float
        :math:`Q` (bytes).

    Assumptions
    -----------
    The cache is read once (no K/V block reaches HBM twice); ``head_dim * bytes_per_element``
    fills whole 32-byte sectors; the partials are counted as if they reached HBM and came back
    (an upper bound: written and read at once, most stay in L2).

    References
    ----------
    Ainslie et al. 2023, GQA, Section 2.2 (:math:`H_{kv}` K/V heads shared by groups of query
    heads); Dao, Haziza, Massa and Sizov 2023, "Flash-Decoding for long-context inference"
    (the split over the KV length, one extra log-sum-exp scalar per row and split, the
    reduction); Kwon et al. 2023, Section 3 (the cache's bytes per token: 800 KB for OPT-13B,
    reproduced in the tests as the bytes one more token of context adds over 40 layers).

    Examples
    --------
    Llama-3-8B's attention (32 query heads, 8 K/V heads, d = 128) at 128k tokens, bf16: one
    layer's cache is :math:`2 \cdot 8 \cdot 131072 \cdot 128 \cdot 2` bytes, 512 MiB.

    >>> decode_attention_bytes(131072, 128, 2.0, n_heads=32, n_kv_heads=8) / 2**20
    512.015625
    """
    n, d = positive_int("context_len", context_len), positive_int("head_dim", head_dim)
    h, hkv = positive_int("n_heads", n_heads), positive_int("n_kv_heads", n_kv_heads)
    if h % hkv:
        raise ValueError(f"n_heads must be a multiple of n_kv_heads, got n_heads={h!r}, "
                         f"n_kv_heads={hkv!r}")
    bsz, s = positive_int("batch", batch), positive_int("n_splits", n_splits)
    b = positive("bytes_per_element", bytes_per_element)
    bp = positive("partial_bytes_per_element", partial_bytes_per_element)
    cache = kv_cache_bytes(batch=bsz, seq_len=n, n_layers=1, n_kv_heads=hkv, head_dim=d,
                           bytes_per_element=b)
    partials = 2.0 * bsz * h * s * (d + 1) * bp if s > 1 else 0.0
    return cache + 2.0 * bsz * h * d * b + partials
