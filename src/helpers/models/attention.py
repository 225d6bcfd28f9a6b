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
arXiv:2307.08691 (2023), Algorithm 1 (query blocks in the outer loop).
"""

from __future__ import annotations

import math

import numpy as np

from . import roofline
from ._checks import positive, positive_int
from . import _checks

__all__ = ["elementwise_chain_bytes", "fusion_saved_bytes", "fusion_time_saved_s",
           "softmax_unfused_bytes", "softmax_fused_bytes", "online_softmax_update",
           "online_softmax", "two_pass_softmax", "attention_flop",
           "standard_attention_hbm_bytes", "standard_attention_backward_hbm_bytes",
           "flash_attention_hbm_bytes", "flash_attention_backward_hbm_bytes",
           "flash2_attention_hbm_bytes", "flash_block_sizes", "attention_intensity_flop_per_byte",
           "naive_attention_peak_bytes", "recompute_time_s", "store_time_s"]

#: Elementwise kernels of an unfused softmax: row max, subtract, exp, row sum, divide.
UNFUSED_SOFTMAX_PASSES = 5


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
