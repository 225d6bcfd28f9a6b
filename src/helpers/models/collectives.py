r"""Collective communication: alpha-beta costs of ring and tree algorithms, algbw and busbw.

Every message between two ranks costs a start-up time :math:`\alpha` (s) plus
:math:`\beta` (s/byte) per byte, the latency-bandwidth model of {ref}`sec-start-here` with
:math:`\beta = 1/B`. A collective algorithm is a schedule of such messages; its cost is the
number of sequential steps times :math:`\alpha` plus the bytes on the busiest rank's link times
:math:`\beta`. For :math:`p` ranks and :math:`n` bytes (the size nccl-tests reports):

==================  =======================================  ==============================
collective          time                                     busbw factor (nccl-tests)
==================  =======================================  ==============================
ring all-reduce     :math:`2(p-1)\alpha + 2\frac{p-1}{p}n\beta`  :math:`2(p-1)/p`
reduce-scatter      :math:`(p-1)\alpha + \frac{p-1}{p}n\beta`    :math:`(p-1)/p`
all-gather          :math:`(p-1)\alpha + \frac{p-1}{p}n\beta`    :math:`(p-1)/p`
all-to-all          :math:`(p-1)\alpha + \frac{p-1}{p}n\beta`    :math:`(p-1)/p`
broadcast (tree)    :math:`\lceil\log_2 p\rceil(\alpha + n\beta)`  :math:`1`
tree all-reduce     :math:`2\lceil\log_2 p\rceil(\alpha + n\beta)`  :math:`2(p-1)/p`
==================  =======================================  ==============================

The reduction's arithmetic (:math:`\gamma` per byte in Thakur et al.) is left out: on GPUs it
hides under the transfer. Sizes follow nccl-tests: for all-gather ``message_bytes`` is the
gathered (output) buffer, for reduce-scatter the (input) buffer before scattering, for
all-to-all one rank's whole send buffer.

Taught in {ref}`sec-collectives`; measured in {ref}`sec-lab-collectives`.

References
----------
* Thakur, R., Rabenseifner, R. and Gropp, W. (2005), "Optimization of Collective Communication
  Operations in MPICH", Int. J. High Performance Computing Applications 19(1), 49-66 (the
  cost of each algorithm in alpha, beta, gamma; restated in MPICH's ``src/mpi/coll`` sources).
* Patarasuk, P. and Yuan, X. (2009), "Bandwidth optimal all-reduce algorithms for clusters of
  workstations", J. Parallel Distrib. Comput. 69(2), 117-124 (the ring all-reduce and its
  lower bound :math:`2\frac{p-1}{p}n\beta`).
* NVIDIA, nccl-tests, ``doc/PERFORMANCE.md`` (algorithm bandwidth and bus bandwidth).

Used by: chapters/collectives.md, chapters/distributed-analysis.md, labs/collectives.md,
labs/data-parallel.md.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._checks import positive, positive_array, positive_int
from . import stats

__all__ = [
    "ring_allreduce_time_s", "reduce_scatter_time_s", "all_gather_time_s", "broadcast_time_s",
    "all_to_all_time_s", "tree_allreduce_time_s", "collective_time_s", "busbw_factor",
    "algbw_bytes_per_s", "busbw_bytes_per_s", "fit_alpha_beta", "AlphaBetaFit", "COLLECTIVES",
    "fit_alpha_beta_regimes", "RegimeFit", "flat_region_end_bytes", "two_point_time_s",
]

#: The collectives the busbw factor knows, in nccl-tests' order.
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all")

_ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather",
            "reducescatter": "reduce_scatter", "alltoall": "all_to_all",
            "all_to_all_single": "all_to_all", "all_gather_into_tensor": "all_gather",
            "reduce_scatter_tensor": "reduce_scatter"}


def _collective(name) -> str:
    key = str(name).strip().lower().replace("-", "_")
    key = _ALIASES.get(key.replace("_", ""), _ALIASES.get(key, key))
    if key not in COLLECTIVES:
        raise ValueError(f"collective must be one of {COLLECTIVES}, got {name!r}")
    return key


def _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte):
    n = positive_array("message_bytes", message_bytes, allow_zero=True)
    p = positive_int("n_ranks", n_ranks)
    a = positive("alpha_s", alpha_s, allow_zero=True)
    b = positive("beta_s_per_byte", beta_s_per_byte, allow_zero=True)
    return n, p, a, b


def _ceil_log2(p: int) -> int:
    return (p - 1).bit_length()  # exact for ints: ceil(log2 p), 0 for p = 1


def ring_allreduce_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a ring all-reduce: a ring reduce-scatter, then a ring all-gather.

    .. math:: T_{\text{ring AR}} = 2(p-1)\,\alpha + 2\,\frac{p-1}{p}\,n\,\beta          (the page labels this eq-ring-allreduce)

    The buffer is cut into :math:`p` chunks of :math:`n/p` bytes. In each of :math:`p-1`
    reduce-scatter steps every rank sends one chunk to its right neighbour and adds the chunk
    it receives; after them each rank holds one fully reduced chunk. :math:`p-1` all-gather
    steps then pass the reduced chunks around. Every step costs :math:`\alpha + (n/p)\beta`.

    Parameters
    ----------
    message_bytes : float or array
        Bytes of the buffer every rank contributes and receives, :math:`n` (>= 0).
    n_ranks : int
        Number of ranks :math:`p` (>= 1); one rank communicates nothing.
    alpha_s : float
        Per-message start-up time :math:`\alpha` (s), >= 0.
    beta_s_per_byte : float
        Time per byte on one link :math:`\beta = 1/B` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    Every rank sends and receives at once on its own full-bandwidth link (a ring embedded in a
    switch or an NVSwitch); reduction arithmetic is free (no :math:`\gamma` term).

    References
    ----------
    Patarasuk and Yuan (2009), J. Parallel Distrib. Comput. 69(2), 117-124: the ring
    all-reduce and the lower bound on the data each rank must send; Thakur, Rabenseifner and
    Gropp (2005): reduce-scatter followed by all-gather for long messages.

    Examples
    --------
    >>> ring_allreduce_time_s(1e9, 8, 5e-6, 1 / 450e9)   # 1 GB over 8 ranks at 450 GB/s
    0.003958888888888889
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return 2 * (p - 1) * a + 2 * (p - 1) / p * n * b


def reduce_scatter_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a ring reduce-scatter of an ``message_bytes`` input buffer.

    .. math:: T_{\text{RS}} = (p-1)\,\alpha + \frac{p-1}{p}\,n\,\beta          (the page labels this eq-ring-rs-ag)

    :math:`p-1` steps, each sending one :math:`n/p` chunk; every rank ends with :math:`n/p`
    reduced bytes.

    Parameters
    ----------
    message_bytes : float or array
        Bytes of each rank's input buffer, :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), reduce-scatter for long messages (pairwise
    exchange, the same cost as a ring).

    >>> reduce_scatter_time_s(1e6, 4, 1e-6, 1e-9)
    0.000753
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return (p - 1) * a + (p - 1) / p * n * b


def all_gather_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a ring all-gather whose gathered (output) buffer is ``message_bytes``.

    .. math:: T_{\text{AG}} = (p-1)\,\alpha + \frac{p-1}{p}\,n\,\beta          (eq-ring-rs-ag)

    Each rank starts with :math:`n/p` bytes and, in :math:`p-1` steps, forwards the chunk it
    received last.

    Parameters
    ----------
    message_bytes : float or array
        Bytes of the gathered buffer, :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), ring all-gather; the same cost is stated in MPICH's
    ``src/mpi/coll/allgather/allgather_intra_ring.c``.

    >>> all_gather_time_s(1e6, 4, 1e-6, 1e-9)
    0.000753
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return (p - 1) * a + (p - 1) / p * n * b


def all_to_all_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a pairwise-exchange all-to-all; ``message_bytes`` is one rank's send buffer.

    .. math:: T_{\text{A2A}} = (p-1)\,\alpha + \frac{p-1}{p}\,n\,\beta

    A rank keeps :math:`n/p` of its bytes and sends :math:`n/p` to each of the :math:`p-1`
    others, one partner per step.

    Parameters
    ----------
    message_bytes : float or array
        Bytes of each rank's send buffer, :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    Full bisection bandwidth: all pairs exchange at once without sharing a link.

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), pairwise-exchange all-to-all; MPICH's
    ``alltoall_intra_pairwise.c`` states it as :math:`(p-1)\alpha + n'\beta` with :math:`n'`
    the bytes a rank sends to the others, i.e. :math:`\frac{p-1}{p}n` here.

    >>> all_to_all_time_s(1e6, 4, 1e-6, 1e-9)
    0.000753
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return (p - 1) * a + (p - 1) / p * n * b


def broadcast_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a binomial-tree broadcast of ``message_bytes`` from one root.

    .. math:: T_{\text{bcast}} = \lceil \log_2 p \rceil\,(\alpha + n\,\beta)

    In each round every rank that has the data sends all of it to one that has not, so the
    number of holders doubles per round.

    Parameters
    ----------
    message_bytes : float or array
        Bytes broadcast, :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    Whole messages, no pipelining: right for short messages. NCCL pipelines a long broadcast
    in chunks along a ring, which approaches :math:`n\beta` (bus bandwidth factor 1).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), binomial-tree broadcast for short messages; MPICH's
    ``bcast_intra_binomial.c`` states the same cost.

    >>> round(broadcast_time_s(1e6, 8, 1e-6, 1e-9), 12)
    0.003003
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return _ceil_log2(p) * (a + n * b)


def tree_allreduce_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of a tree all-reduce: a binomial-tree reduce, then a binomial-tree broadcast.

    .. math:: T_{\text{tree AR}} = 2\lceil \log_2 p \rceil\,(\alpha + n\,\beta)          (the page labels this eq-tree-allreduce)

    Only :math:`2\lceil\log_2 p\rceil` latencies instead of the ring's :math:`2(p-1)`, but
    every round carries the whole buffer, so it wins for short messages and loses for long
    ones.

    Parameters
    ----------
    message_bytes : float or array
        Bytes of each rank's buffer, :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    Whole messages per round (no pipelining); NCCL's pipelined double binary tree keeps the
    logarithmic latency and gets close to full bandwidth, which this model does not capture.

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005): binomial-tree reduce and broadcast, each
    :math:`\lceil\log_2 p\rceil(\alpha + n\beta)` without the reduction's :math:`\gamma`.

    >>> round(tree_allreduce_time_s(1e3, 8, 1e-6, 1e-9), 12)
    1.2e-05
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return 2 * _ceil_log2(p) * (a + n * b)


_RING_TIME = {"all_reduce": ring_allreduce_time_s, "reduce_scatter": reduce_scatter_time_s,
              "all_gather": all_gather_time_s, "all_to_all": all_to_all_time_s,
              "broadcast": broadcast_time_s}


def _coefficients(collective: str, p: int) -> tuple[float, float]:
    """(c_alpha, c_beta) with T = c_alpha alpha + c_beta n beta for the default algorithm."""
    c = _collective(collective)
    if c == "all_reduce":
        return 2.0 * (p - 1), 2.0 * (p - 1) / p
    if c in ("reduce_scatter", "all_gather", "all_to_all"):
        return float(p - 1), (p - 1) / p
    return float(_ceil_log2(p)), float(_ceil_log2(p))  # broadcast, reduce: binomial tree


def collective_time_s(collective: str, message_bytes, n_ranks: int, alpha_s: float,
                      beta_s_per_byte: float):
    r"""Time (s) of ``collective`` with its default algorithm (ring; binomial tree for
    broadcast and reduce): :math:`T = c_\alpha(p)\,\alpha + c_\beta(p)\,n\,\beta`.

    .. math:: T = c_\alpha(p)\,\alpha + c_\beta(p)\,n\,\beta

    :math:`(c_\alpha, c_\beta)` is :math:`(2(p-1), 2(p-1)/p)` for all-reduce,
    :math:`(p-1, (p-1)/p)` for reduce-scatter, all-gather and all-to-all, and
    :math:`(\lceil\log_2 p\rceil, \lceil\log_2 p\rceil)` for broadcast and reduce.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES` (``"all_reduce"``, ``"all_gather"``, ...).
    message_bytes, ranks, alpha_s, beta_s_per_byte
        As in :func:`ring_allreduce_time_s`.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), the cost of each algorithm.

    >>> collective_time_s("all_reduce", 1e6, 4, 1e-6, 1e-9) == ring_allreduce_time_s(1e6, 4, 1e-6, 1e-9)
    True
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    ca, cb = _coefficients(collective, p)
    return ca * a + cb * n * b


def busbw_factor(collective: str, n_ranks: int) -> float:
    r"""Bus bandwidth over algorithm bandwidth for ``collective`` on ``n_ranks`` ranks (nccl-tests).

    .. math:: \text{busbw} = \text{algbw} \times f, \quad f = \begin{cases} 2(p-1)/p & \text{all-reduce} \\ (p-1)/p & \text{all-gather, reduce-scatter, all-to-all} \\ 1 & \text{broadcast, reduce} \end{cases}          (the page labels this eq-busbw)

    The factor turns the algorithm bandwidth into the bandwidth each rank's link must carry in
    the optimal (ring) algorithm, so it can be compared with the link's peak whatever the
    number of ranks.

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    n_ranks : int
        :math:`p` (>= 1).

    Returns
    -------
    float
        :math:`f`, dimensionless.

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, section "Bus bandwidth" (the factor per
    collective).

    >>> busbw_factor("all_reduce", 8), busbw_factor("all_gather", 8), busbw_factor("broadcast", 8)
    (1.75, 0.875, 1.0)
    """
    c = _collective(collective)
    p = positive_int("n_ranks", n_ranks)
    if c == "all_reduce":
        return 2.0 * (p - 1) / p
    if c in ("all_gather", "reduce_scatter", "all_to_all"):
        return (p - 1) / p
    return 1.0


def algbw_bytes_per_s(message_bytes, time_s):
    r"""Algorithm bandwidth (bytes/s): the message size over the collective's time.

    .. math:: \text{algbw} = n / t          (the page labels this eq-algbw)

    Parameters
    ----------
    message_bytes : float or array
        :math:`n` (bytes, >= 0), the size nccl-tests reports.
    time_s : float or array
        Measured time :math:`t` (s, > 0).

    Returns
    -------
    float or array
        algbw (bytes/s).

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, section "Algorithm bandwidth".

    >>> algbw_bytes_per_s(1e9, 0.01)
    100000000000.0
    """
    n = positive_array("message_bytes", message_bytes, allow_zero=True)
    t = positive_array("time_s", time_s)
    return n / t


def busbw_bytes_per_s(message_bytes, time_s, collective: str, n_ranks: int):
    r"""Bus bandwidth (bytes/s): algbw times :func:`busbw_factor`.

    .. math:: \text{busbw} = \frac{n}{t}\, f(\text{collective}, p)

    Parameters
    ----------
    message_bytes, time_s
        As in :func:`algbw_bytes_per_s`.
    collective : str
        One of :data:`COLLECTIVES`.
    n_ranks : int
        :math:`p` (>= 1).

    Returns
    -------
    float or array
        busbw (bytes/s).

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, section "Bus bandwidth".

    >>> busbw_bytes_per_s(1e9, 0.01, "all_reduce", 2)
    100000000000.0
    """
    return algbw_bytes_per_s(message_bytes, time_s) * busbw_factor(collective, n_ranks)


class AlphaBetaFit(NamedTuple):
    """Result of :func:`fit_alpha_beta`: unpacks as ``alpha_s, beta_s_per_byte, residuals``."""

    alpha_s: float
    beta_s_per_byte: float
    residuals: np.ndarray  # relative: model / measured - 1, one per point


def fit_alpha_beta(message_bytes, times_s, n_ranks: int, collective: str = "all_reduce"
                   ) -> AlphaBetaFit:
    r"""Fit :math:`\alpha` and :math:`\beta` of :func:`collective_time_s` to measured times.

    .. math:: \min_{\alpha, \beta} \sum_i \left(\frac{c_\alpha \alpha + c_\beta n_i \beta - t_i}{t_i}\right)^2

    Least squares on relative error, linear in :math:`\alpha` and :math:`\beta`, so that the
    small messages (which fix :math:`\alpha`) weigh as much as the large ones (which fix
    :math:`\beta`).

    Parameters
    ----------
    message_bytes, times_s : sequences of float
        At least two distinct sizes (bytes, > 0) and their times (s, > 0).
    n_ranks : int
        :math:`p` (>= 2: one rank sends nothing, so nothing can be fitted).
    collective : str
        One of :data:`COLLECTIVES`; fixes :math:`c_\alpha(p)` and :math:`c_\beta(p)`.

    Returns
    -------
    AlphaBetaFit
        ``(alpha_s, beta_s_per_byte, residuals)``; alpha and beta are constrained to be
        >= 0 (when the free fit gives a negative one, it is set to 0 and the other refitted
        alone; beta is 0 when the times do not grow with size over the measured range), and
        the residuals are ``model / measured - 1`` per point.

    References
    ----------
    Hockney, R. W. (1994), "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 389-398 (fitting the latency and bandwidth of a message model).

    >>> sizes = np.array([1e3, 1e4, 1e5, 1e6])
    >>> fit = fit_alpha_beta(sizes, ring_allreduce_time_s(sizes, 4, 2e-6, 1e-9), 4)
    >>> round(fit.alpha_s / 1e-6, 6), round(fit.beta_s_per_byte / 1e-9, 6)
    (2.0, 1.0)
    """
    n = positive_array("message_bytes", np.atleast_1d(np.asarray(message_bytes, dtype=float)))
    t = positive_array("times_s", np.atleast_1d(np.asarray(times_s, dtype=float)))
    p = positive_int("n_ranks", n_ranks, minimum=2)
    if n.shape != t.shape:
        raise ValueError(
            f"message_bytes and times_s must have the same length, got {n.size} and {t.size}")
    if n.size < 2 or np.unique(n).size < 2:
        raise ValueError(f"need at least two distinct sizes, got {n.tolist()}")
    ca, cb = _coefficients(collective, p)
    design = np.column_stack([ca / t, cb * n / t])
    target = np.ones_like(t)
    alpha, beta = stats.least_squares(design.tolist(), target.tolist())
    if alpha < 0.0 or beta < 0.0:
        # The constrained optimum lies on an edge: refit the other parameter alone
        # (one-variable least squares), and keep whichever edge fits better.
        edges = []
        for col in (0, 1):
            x = design[:, col].tolist()
            v = max(math.fsum(xi * yi for xi, yi in zip(x, target.tolist()))
                    / math.fsum(xi * xi for xi in x), 0.0)
            edges.append((math.fsum((xi * v - yi) ** 2 for xi, yi in zip(x, target.tolist())),
                          col, v))
        _, col, v = min(edges)
        alpha, beta = (v, 0.0) if col == 0 else (0.0, v)
    alpha, beta = float(alpha), float(beta)
    if alpha == 0.0 and beta == 0.0:
        raise ValueError("no positive alpha or beta fits these times")
    residuals = (ca * alpha + cb * n * beta) / t - 1.0
    return AlphaBetaFit(alpha, beta, residuals)


class RegimeFit(NamedTuple):
    """Result of :func:`fit_alpha_beta_regimes`: the split and one :class:`AlphaBetaFit` per
    regime; unpacks as ``split_bytes, small, large, sse``."""

    split_bytes: float  # the smallest size of the large-message regime
    small: AlphaBetaFit  # fitted to the sizes below split_bytes
    large: AlphaBetaFit  # fitted to split_bytes and above
    sse: float  # sum of squared relative residuals of both regimes


def fit_alpha_beta_regimes(message_bytes, times_s, n_ranks: int, collective: str = "all_reduce",
                           min_points: int = 2) -> RegimeFit:
    r"""Fit :math:`\alpha` and :math:`\beta` separately to a small- and a large-message regime.

    .. math:: \min_{k} \Big[\min_{\alpha_s, \beta_s} \sum_{n_i < n_k} r_i^2 + \min_{\alpha_l, \beta_l} \sum_{n_i \ge n_k} r_i^2\Big], \quad r_i = \frac{c_\alpha \alpha + c_\beta n_i \beta}{t_i} - 1

    The sizes are sorted and cut at every split point that leaves at least ``min_points``
    distinct sizes on each side; each side gets its own :func:`fit_alpha_beta` (relative least
    squares, alpha and beta >= 0), and the split with the least total squared relative error
    wins (the first one on a tie). A protocol switch (NCCL's LL to Simple) or a floor set by
    something other than the wire (host dispatch) makes the times a sequence of lines with
    different constants; one line through all of them fits neither end.

    Parameters
    ----------
    message_bytes, times_s : sequences of float
        At least ``2 * min_points`` distinct sizes (bytes, > 0) and their times (s, > 0).
    n_ranks : int
        :math:`p` (>= 2).
    collective : str
        One of :data:`COLLECTIVES`; fixes :math:`c_\alpha(p)` and :math:`c_\beta(p)`.
    min_points : int
        Fewest distinct sizes per regime (>= 2: a line needs two points).

    Returns
    -------
    RegimeFit
        ``(split_bytes, small, large, sse)``: ``split_bytes`` is the smallest size of the large
        regime; ``small`` and ``large`` are :class:`AlphaBetaFit` of their own points (their
        residuals in increasing size order); ``sse`` the total squared relative residual.

    Assumptions
    -----------
    Two regimes; within each, one alpha-beta line. Points are weighed by relative error, as in
    :func:`fit_alpha_beta`.

    References
    ----------
    Hockney (1994), Parallel Computing 20(3), 389-398 (latency and bandwidth fitted to message
    times); Jeaugey (2023), NVIDIA technical blog "Memory footprint and performance of NCCL
    algorithms and protocols" (NCCL switches protocol and algorithm with the size, so the times
    follow different lines in different size ranges).

    Examples
    --------
    >>> sizes = np.array([1e2, 1e3, 1e4, 1e5, 1e6, 1e7])
    >>> t = np.where(sizes < 1e5, ring_allreduce_time_s(sizes, 2, 20e-6, 0.0),
    ...              ring_allreduce_time_s(sizes, 2, 5e-6, 1e-9))
    >>> f = fit_alpha_beta_regimes(sizes, t, 2)
    >>> f.split_bytes, round(f.small.alpha_s / 1e-6, 6), round(f.large.beta_s_per_byte / 1e-9, 6)
    (100000.0, 20.0, 1.0)
    """
    n = positive_array("message_bytes", np.atleast_1d(np.asarray(message_bytes, dtype=float)))
    t = positive_array("times_s", np.atleast_1d(np.asarray(times_s, dtype=float)))
    positive_int("n_ranks", n_ranks, minimum=2)
    k_min = positive_int("min_points", min_points, minimum=2)
    if n.shape != t.shape:
        raise ValueError(
            f"message_bytes and times_s must have the same length, got {n.size} and {t.size}")
    order = np.argsort(n, kind="stable")
    n, t = n[order], t[order]
    distinct = np.unique(n)
    if distinct.size < 2 * k_min:
        raise ValueError(f"need at least {2 * k_min} distinct sizes for two regimes of "
                         f"min_points={k_min}, got {distinct.size}")
    best = None
    for split in distinct[k_min:distinct.size - k_min + 1]:
        lo = n < split
        small = fit_alpha_beta(n[lo], t[lo], n_ranks, collective)
        large = fit_alpha_beta(n[~lo], t[~lo], n_ranks, collective)
        sse = float(np.sum(small.residuals ** 2) + np.sum(large.residuals ** 2))
        if best is None or sse < best.sse:
            best = RegimeFit(float(split), small, large, sse)
    return best


def flat_region_end_bytes(message_bytes, times_s, rel_tol: float = 0.2) -> float:
    r"""Largest size (bytes) whose time is within ``rel_tol`` of the smallest size's time.

    .. math:: n_{\text{flat}} = \max\{\, n_i : t_i \le (1 + \epsilon)\, t(n_{\min}) \,\}

    Where the measured time does not grow with the message, the message is not what sets it:
    below :math:`n_{\text{flat}}` the fitted :math:`\alpha` is a floor (host dispatch, launch,
    a late peer), not the per-message cost of the wire. Points inside the region that lie
    above the band (a slow repeat) do not end it; the largest size back in the band does.

    Parameters
    ----------
    message_bytes, times_s : sequences of float
        Sizes (bytes, > 0) and their times (s, > 0), at least one of each, same length.
    rel_tol : float
        :math:`\epsilon`, the band above the smallest size's time (>= 0).

    Returns
    -------
    float
        :math:`n_{\text{flat}}` (bytes); the smallest size when no larger one is in the band.

    References
    ----------
    Hockney (1994), Parallel Computing 20(3), 389-398: the latency term dominates below the
    half-performance length :math:`n_{1/2}`; a floor that stays flat far past the
    :math:`n_{1/2}` of the link's bandwidth is not the link's latency.

    Examples
    --------
    >>> flat_region_end_bytes([8, 64, 512, 4096, 32768], [40e-6, 45e-6, 80e-6, 41e-6, 90e-6])
    4096.0
    """
    n = positive_array("message_bytes", np.atleast_1d(np.asarray(message_bytes, dtype=float)))
    t = positive_array("times_s", np.atleast_1d(np.asarray(times_s, dtype=float)))
    eps = positive("rel_tol", rel_tol, allow_zero=True)
    if n.shape != t.shape or n.size < 1:
        raise ValueError(
            f"message_bytes and times_s must have the same nonzero length, got {n.size} and {t.size}")
    floor = t[int(np.argmin(n))]
    return float(n[t <= (1.0 + eps) * floor].max())


def two_point_time_s(message_bytes, sizes_bytes, times_s):
    r"""Time (s) at ``message_bytes`` on the alpha-beta line through two measured points.

    .. math:: T(n) = T(n_1) + (n - n_1)\,\frac{T(n_2) - T(n_1)}{n_2 - n_1}

    Two measurements fix the two constants of :func:`collective_time_s` for one regime: the
    slope is :math:`c_\beta \beta` and the intercept :math:`c_\alpha \alpha`, whatever the
    collective and the number of ranks. Evaluated beyond :math:`n_2` it predicts a larger
    message from the same run, assuming the regime (protocol, algorithm, a constant
    :math:`\beta`) holds there.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n` (bytes, >= 0).
    sizes_bytes : pair of float
        :math:`(n_1, n_2)`, two distinct measured sizes (bytes, > 0).
    times_s : pair of float
        :math:`(T(n_1), T(n_2))` (s, > 0).

    Returns
    -------
    float or array
        :math:`T(n)` (s); it can be negative below :math:`n_1` when the line falls steeply,
        which says the points are not one alpha-beta regime.

    References
    ----------
    Hockney (1994), Parallel Computing 20(3), 389-398: the two parameters of the message model
    (:math:`r_\infty` and :math:`n_{1/2}`) determined from measured times.

    Examples
    --------
    >>> t = two_point_time_s(2**30, (2**28, 2**29), (897.3e-6, 1711.6e-6))  # H200 pair, all-reduce
    >>> round(t * 1e6, 1)
    3340.2
    """
    n = positive_array("message_bytes", message_bytes, allow_zero=True)
    pairs = []
    for name, pair in (("sizes_bytes", sizes_bytes), ("times_s", times_s)):
        try:
            values = list(pair)
        except TypeError:
            raise ValueError(f"{name} must be a pair of numbers, got {pair!r}") from None
        if len(values) != 2:
            raise ValueError(f"{name} must be a pair of numbers, got {len(values)} values")
        pairs.append([positive(name, v) for v in values])
    (n1, n2), (t1, t2) = pairs
    if n1 == n2:
        raise ValueError(f"sizes_bytes must be two distinct sizes, got {n1} twice")
    return t1 + (n - n1) * (t2 - t1) / (n2 - n1)


# --- algorithms beyond ring and tree (Thakur, Rabenseifner and Gropp 2005) --------------------
#
# The costs below are those of the MPICH algorithms as Thakur, Rabenseifner and Gropp (2005)
# state them (one section per collective; MPICH's src/mpi/coll sources restate each cost in a
# comment), with gamma (s/byte) for the local reduction where the algorithm reduces. p' is the
# largest power of two not above p and L = log2 p'. The schedules, as programs on gloo ranks,
# are in helpers.distributed.algorithms; the page is chapters/collectives.md.

__all__ += [
    "recursive_doubling_allreduce_time_s", "rabenseifner_allreduce_time_s",
    "recursive_doubling_allgather_time_s", "bruck_allgather_time_s", "bruck_alltoall_time_s",
    "bruck_alltoall_blocks_sent", "in_network_allreduce_time_s", "in_network_busbw_factor",
    "all_to_all_bytes_sent", "ALGORITHM_TIMES", "ring_allreduce_with_gamma_time_s",
]


def _pof2_log(p: int) -> tuple[int, int]:
    """(p', log2 p') for p >= 1: the largest power of two not above p."""
    lg = p.bit_length() - 1
    return 1 << lg, lg


def _gamma(gamma_s_per_byte) -> float:
    return positive("gamma_s_per_byte", gamma_s_per_byte, allow_zero=True)


def recursive_doubling_allreduce_time_s(message_bytes, n_ranks: int, alpha_s: float,
                                        beta_s_per_byte: float, gamma_s_per_byte: float = 0.0):
    r"""Time (s) of a recursive-doubling all-reduce of an ``message_bytes`` buffer.

    .. math:: T_{\text{RD AR}} = L\,\alpha + L\,n\,\beta + L\,n\,\gamma \quad (p = p' = 2^L)          (the page labels this eq-rd-allreduce)

    In step :math:`k` every rank exchanges its *whole* buffer with the rank :math:`2^k` away and
    adds what it receives; after :math:`L` steps all hold the sum. When :math:`p` is not a power
    of two, the :math:`2r` lowest ranks (:math:`r = p - p'`) first pair up: each even one sends
    its buffer to the odd one above, which adds it (one step of :math:`\alpha + n\beta +
    n\gamma`); the :math:`p'` ranks left run the algorithm; the odd ranks then send the result
    back (:math:`\alpha + n\beta`):
    :math:`T = (L+2)\alpha + (L+2)\,n\beta + (L+1)\,n\gamma`.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n`, the buffer every rank contributes and receives (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.
    gamma_s_per_byte : float
        :math:`\gamma`, the reduction's time per byte (s/byte), >= 0 (default 0).

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    A rank sends and receives at once (full duplex); pairs do not share links.

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), the all-reduce section (recursive doubling for short messages:
    :math:`\lg p\,\alpha + n \lg p\,\beta + n \lg p\,\gamma`) and MPICH's
    ``allreduce_intra_recursive_doubling.c`` (the non-power-of-two fold).

    >>> recursive_doubling_allreduce_time_s(1e6, 8, 1e-6, 1e-9, 1e-10)
    0.003303
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    g = _gamma(gamma_s_per_byte)
    pof2, lg = _pof2_log(p)
    extra = 0 if pof2 == p else 2
    return (lg + extra) * a + (lg + extra) * n * b + (lg + extra // 2) * n * g


def rabenseifner_allreduce_time_s(message_bytes, n_ranks: int, alpha_s: float,
                                  beta_s_per_byte: float, gamma_s_per_byte: float = 0.0):
    r"""Time (s) of Rabenseifner's all-reduce: a reduce-scatter by recursive halving, then an
    all-gather by recursive doubling.

    .. math:: T_{\text{Rab}} = 2L\,\alpha + 2\,\frac{p-1}{p}\,n\,\beta + \frac{p-1}{p}\,n\,\gamma \quad (p = 2^L)          (the page labels this eq-rabenseifner)

    The reduce-scatter halves the data a rank is responsible for at each of its :math:`L`
    steps (it sends :math:`n/2, n/4, \dots, n/p` and adds as much), leaving each rank one
    reduced :math:`n/p` block; the all-gather retraces the steps, doubling the blocks. When
    :math:`p` is not a power of two the :math:`p - p'` extra ranks are folded in first and
    served last as in :func:`recursive_doubling_allreduce_time_s`, which adds
    :math:`2\alpha + 2n\beta + n\gamma` to the cost on :math:`p'` ranks. (MPICH's comment
    writes that case with :math:`(p-1)/p`; the schedule runs on :math:`p'` ranks, so
    :math:`(p'-1)/p'` is the exact count used here.)

    Parameters
    ----------
    message_bytes : float or array
        :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte, gamma_s_per_byte : float
        :math:`\alpha` (s), :math:`\beta` and :math:`\gamma` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    As :func:`recursive_doubling_allreduce_time_s`; ``message_bytes`` splits into :math:`p'`
    equal blocks (otherwise the largest block sets each step).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), the all-reduce section (Rabenseifner's algorithm for long
    messages: :math:`2\lg p\,\alpha + 2\frac{p-1}{p}n\beta + \frac{p-1}{p}n\gamma`);
    MPICH ``allreduce_intra_reduce_scatter_allgather.c`` (the non-power-of-two case:
    :math:`(2\lfloor\lg p\rfloor + 2)\alpha + (2\frac{p-1}{p} + 2)n\beta +
    (1 + \frac{p-1}{p})n\gamma`).

    >>> rabenseifner_allreduce_time_s(1e6, 8, 1e-6, 1e-9, 1e-10)
    0.0018434999999999999
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    g = _gamma(gamma_s_per_byte)
    pof2, lg = _pof2_log(p)
    f = (pof2 - 1) / pof2
    if pof2 == p:
        return 2 * lg * a + 2 * f * n * b + f * n * g
    return (2 * lg + 2) * a + (2 * f + 2) * n * b + (1 + f) * n * g


def recursive_doubling_allgather_time_s(message_bytes, n_ranks: int, alpha_s: float,
                                        beta_s_per_byte: float):
    r"""Time (s) of a recursive-doubling all-gather; ``message_bytes`` is the gathered buffer.

    .. math:: T_{\text{RD AG}} = L\,\alpha + \frac{p-1}{p}\,n\,\beta \quad (p = 2^L)

    In step :math:`k` pairs :math:`2^k` apart swap everything they hold, :math:`2^k n/p` bytes,
    so the data a rank receives doubles each step and sums to :math:`(p-1)n/p`.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n`, the gathered (output) buffer (>= 0).
    n_ranks : int
        :math:`p`, a power of two (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Raises
    ------
    ValueError
        ``n_ranks`` is not a power of two (MPICH then uses Bruck's algorithm or the ring; see
        :func:`bruck_allgather_time_s`).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), the all-gather section (recursive doubling all-gather,
    :math:`\lg p\,\alpha + \frac{p-1}{p}n\beta`).

    >>> recursive_doubling_allgather_time_s(1e6, 8, 1e-6, 1e-9)
    0.000878
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    if p & (p - 1):
        raise ValueError(f"n_ranks must be a power of two for recursive doubling, got {p}")
    return (p.bit_length() - 1) * a + (p - 1) / p * n * b


def bruck_allgather_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of Bruck's all-gather on any number of ranks; ``message_bytes`` is gathered.

    .. math:: T_{\text{Bruck AG}} = \lceil \log_2 p \rceil\,\alpha + \frac{p-1}{p}\,n\,\beta          (the page labels this eq-bruck-allgather)

    In step :math:`k` rank :math:`i` sends the :math:`\min(2^k, p - 2^k)` blocks it holds to
    rank :math:`i - 2^k` and receives as many from rank :math:`i + 2^k`; a local rotation puts
    the :math:`p` blocks in rank order at the end (not counted).

    Parameters
    ----------
    message_bytes : float or array
        :math:`n`, the gathered buffer (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Bruck, J. et al. (1997), "Efficient algorithms for all-to-all communications in
    multiport message-passing systems", IEEE TPDS 8(11); Thakur, Rabenseifner and Gropp
    (2005), the all-gather section (:math:`\lceil\lg p\rceil\alpha + \frac{p-1}{p}n\beta`).

    >>> bruck_allgather_time_s(1e6, 6, 1e-6, 1e-9)
    0.0008363333333333334
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return _ceil_log2(p) * a + (p - 1) / p * n * b


def bruck_alltoall_blocks_sent(n_ranks: int) -> int:
    r"""Blocks one rank sends in a Bruck all-to-all of :math:`p` blocks (dimensionless count).

    .. math:: \sum_{k=0}^{\lceil \log_2 p \rceil - 1} \#\{\,i < p : \text{bit } k \text{ of } i \text{ is } 1\,\}

    In step :math:`k` a rank sends every block whose index has bit :math:`k` set; for
    :math:`p = 2^L` that is :math:`p/2` blocks in each of :math:`L` steps.

    >>> bruck_alltoall_blocks_sent(8), bruck_alltoall_blocks_sent(6)
    (12, 7)
    """
    p = positive_int("n_ranks", n_ranks)
    total = 0
    for k in range(_ceil_log2(p)):
        period = 1 << (k + 1)
        total += (p // period) * (period >> 1) + max(0, p % period - (period >> 1))
    return total


def bruck_alltoall_time_s(message_bytes, n_ranks: int, alpha_s: float, beta_s_per_byte: float):
    r"""Time (s) of Bruck's all-to-all; ``message_bytes`` is one rank's whole send buffer.

    .. math:: T_{\text{Bruck A2A}} = \lceil \log_2 p \rceil\,\alpha + c_p\,\frac{n}{p}\,\beta, \qquad c_{2^L} = \frac{p}{2}L          (the page labels this eq-bruck-alltoall)

    :math:`c_p` is :func:`bruck_alltoall_blocks_sent`. Fewer messages than the pairwise
    exchange (:func:`all_to_all_time_s`, :math:`p-1` of them) at the price of forwarding
    blocks: :math:`\frac{n}{2}\log_2 p` bytes instead of :math:`\frac{p-1}{p}n` for
    :math:`p = 2^L`, so it wins only for short messages.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n`, one rank's send buffer, :math:`p` blocks of :math:`n/p` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Bruck et al. (1997); Thakur, Rabenseifner and Gropp (2005), the all-to-all section (Bruck's
    algorithm for short all-to-all messages, :math:`\lg p\,\alpha + \frac{n}{2}\lg p\,\beta`
    for a power of two); MPICH ``alltoall_intra_brucks.c`` states the same cost, its
    :math:`n` the data a rank sends in all.

    >>> bruck_alltoall_time_s(1e6, 8, 1e-6, 1e-9)
    0.001503
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    return _ceil_log2(p) * a + bruck_alltoall_blocks_sent(p) * n / p * b


def ring_allreduce_with_gamma_time_s(message_bytes, n_ranks: int, alpha_s: float,
                                     beta_s_per_byte: float, gamma_s_per_byte: float = 0.0):
    r"""Time (s) of a ring all-reduce with its reduction's arithmetic counted.

    .. math:: T = 2(p-1)\,\alpha + 2\,\frac{p-1}{p}\,n\,\beta + \frac{p-1}{p}\,n\,\gamma

    :func:`ring_allreduce_time_s` plus :math:`\gamma` per byte added: the reduce-scatter adds
    :math:`n/p` bytes at each of its :math:`p-1` steps; the all-gather only copies.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1).
    alpha_s, beta_s_per_byte, gamma_s_per_byte : float
        :math:`\alpha` (s), :math:`\beta` and :math:`\gamma` (s/byte), >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    References
    ----------
    Thakur, Rabenseifner and Gropp (2005), the reduce-scatter section (the
    :math:`\frac{p-1}{p}n\gamma`) and :func:`ring_allreduce_time_s`.

    >>> ring_allreduce_with_gamma_time_s(1e6, 8, 1e-6, 1e-9, 1e-10)
    0.0018514999999999998
    """
    g = _gamma(gamma_s_per_byte)
    t = ring_allreduce_time_s(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    p = positive_int("n_ranks", n_ranks)
    return t + (p - 1) / p * positive_array("message_bytes", message_bytes, allow_zero=True) * g


def in_network_allreduce_time_s(message_bytes, n_ranks: int, alpha_s: float,
                                beta_s_per_byte: float):
    r"""Time (s) of an all-reduce reduced inside the switch (NVLink SHARP, InfiniBand SHARP).

    .. math:: T_{\text{in-net}} = 2\,\alpha + n\,\beta          (the page labels this eq-in-network)

    Each rank sends its :math:`n` bytes once to the switch, which adds them and sends the sum
    back: :math:`n` bytes in each direction of every rank's link, pipelined, against
    :math:`2\frac{p-1}{p}n` for the ring. Two latencies: up to the switch and back.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n` (>= 0).
    n_ranks : int
        :math:`p` (>= 1; the time does not depend on it, the reduction is in the switch).
    alpha_s, beta_s_per_byte : float
        :math:`\alpha` (s) and :math:`\beta` (s/byte) of one rank's link, >= 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    The switch reduces at the links' rate; its reduction precision and buffering are not
    modelled.

    References
    ----------
    Graham, R. L. et al. (2016), "Scalable Hierarchical Aggregation Protocol (SHArP)", COMHPC
    workshop, SC16; NVIDIA, NCCL 2.17 release notes (NVLink SHARP, ``NCCL_NVLS_ENABLE``).

    >>> in_network_allreduce_time_s(1e9, 8, 5e-6, 1 / 450e9)
    0.0022322222222222222
    """
    n, p, a, b = _args(message_bytes, n_ranks, alpha_s, beta_s_per_byte)
    del p  # checked; the switch, not the ranks, does the reduction
    return 2 * a + n * b


def in_network_busbw_factor(n_ranks: int) -> float:
    r"""The bus bandwidth an in-network all-reduce reports, over one link's bandwidth.

    .. math:: \frac{\text{busbw}}{B} = 2\,\frac{p-1}{p} \quad (\alpha \to 0)

    nccl-tests scales every all-reduce's algorithm bandwidth :math:`n/T` by :math:`2(p-1)/p`
    (:func:`busbw_factor`), the bytes a ring moves per link. An in-network all-reduce moves
    :math:`n` bytes per direction, so its algorithm bandwidth reaches :math:`B` and the
    reported bus bandwidth reaches :math:`2\frac{p-1}{p}B`, above the link's rate for
    :math:`p > 2`: 1.75 times it on 8 GPUs.

    Parameters
    ----------
    n_ranks : int
        :math:`p` (>= 1).

    Returns
    -------
    float
        The factor, dimensionless.

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` (the all-reduce's bus bandwidth factor);
    :func:`in_network_allreduce_time_s`.

    >>> in_network_busbw_factor(8)
    1.75
    """
    return busbw_factor("all_reduce", n_ranks)


def all_to_all_bytes_sent(message_bytes, n_ranks: int):
    r"""Bytes one rank of an all-to-all sends to *other* ranks, from nccl-tests' size.

    .. math:: n_{\text{sent}} = \frac{p-1}{p}\,n

    nccl-tests sizes an all-to-all by one rank's whole send buffer :math:`n`, the block it
    keeps included; the bytes that cross a link are the other :math:`p-1` blocks. Its bus
    bandwidth, algbw times :math:`(p-1)/p`, is therefore those bytes over the time.

    Parameters
    ----------
    message_bytes : float or array
        :math:`n`, one rank's send buffer as nccl-tests counts it (>= 0).
    n_ranks : int
        :math:`p` (>= 1).

    Returns
    -------
    float or array
        :math:`n_{\text{sent}}` (bytes).

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` (all-to-all: size is the send buffer, bus
    bandwidth factor :math:`(p-1)/p`).

    >>> all_to_all_bytes_sent(8e6, 8)
    7000000.0
    """
    n = positive_array("message_bytes", message_bytes, allow_zero=True)
    p = positive_int("n_ranks", n_ranks)
    return (p - 1) / p * n


#: Algorithm name (as in helpers.distributed.algorithms) -> its time model; the gamma term is a
#: keyword argument of the reducing ones.
ALGORITHM_TIMES = {
    "ring_all_reduce": ring_allreduce_with_gamma_time_s,
    "recursive_doubling_all_reduce": recursive_doubling_allreduce_time_s,
    "rabenseifner_all_reduce": rabenseifner_allreduce_time_s,
    "ring_all_gather": all_gather_time_s,
    "recursive_doubling_all_gather": recursive_doubling_allgather_time_s,
    "bruck_all_gather": bruck_allgather_time_s,
    "pairwise_all_to_all": all_to_all_time_s,
    "bruck_all_to_all": bruck_alltoall_time_s,
}
