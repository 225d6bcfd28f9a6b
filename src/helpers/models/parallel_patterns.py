r"""Parallel patterns: the work and span of reductions and scans, and histogram contention.

A parallel algorithm is described by two counts: its *work* :math:`W`, the number of operations
it performs in all, and its *span* :math:`S` (or depth), the length of its longest chain of
dependent operations. On :math:`p` processors a greedy schedule finishes within Brent's bound

.. math::

    \max\!\left(\frac{W}{p}, S\right) \;\le\; T_p \;\le\; \frac{W}{p} + S
    \qquad\text{(eq-red-brent)}

so an algorithm is fast in parallel when its span is short *and* its work is not much larger
than the sequential algorithm's. A tree reduction of :math:`n` values does :math:`n - 1`
additions in :math:`\lceil \log_2 n \rceil` steps; the Hillis-Steele scan takes as few steps but
does about :math:`n \log_2 n` additions; Blelloch's work-efficient scan does :math:`2(n-1)` in
:math:`2 \log_2 n` steps.

On a GPU the tree is built in levels: lanes of a warp combine with shuffles
(:math:`\log_2 32 = 5` steps), warps of a block through shared memory, blocks of a grid through
a second kernel pass (or atomics). A histogram is a reduction whose destinations depend on the
data: updates to the same bin serialize, so its time is set by the hottest bin, and skewed keys
(a Zipf law) make that bin much hotter than the mean.

Introduced in {ref}`sec-reduction-scan-histogram`.

References
----------
* Blelloch, G. E. (1990), "Prefix Sums and Their Applications", Technical Report
  CMU-CS-90-190, Carnegie Mellon University: the work-efficient (up-sweep, down-sweep) scan,
  :math:`2(n-1)` operations in :math:`2 \log_2 n` steps.
* Harris, M., Sengupta, S. and Owens, J. D. (2007), "Parallel Prefix Sum (Scan) with CUDA",
  *GPU Gems 3*, chapter 39: the naive (Hillis-Steele) scan's :math:`O(n \log_2 n)` additions,
  the work-efficient scan's :math:`2(n-1)` additions and :math:`n-1` swaps, and the example
  scan of ``[3, 1, 7, 0, 4, 1, 6, 3]``.
* Hillis, W. D. and Steele, G. L. (1986), "Data Parallel Algorithms", *Communications of the
  ACM* 29(12): the step-doubling scan.
* Brent, R. P. (1974), "The Parallel Evaluation of General Arithmetic Expressions", *Journal
  of the ACM* 21(2): the bound :math:`T_p \le W/p + S`.
* Harris, M. (2007), "Optimizing Parallel Reduction in CUDA", NVIDIA: tree reduction in shared
  memory, one block per piece, a second pass over the partial sums.
* Gomez-Luna, J., Gonzalez-Linares, J. M., Benavides, J. I. and Guil, N. (2013), "Performance
  Modeling of Atomic Additions on GPU Scratchpad Memory", *IEEE Transactions on Parallel and
  Distributed Systems* 24(11): colliding atomic updates serialize; replicating the histogram
  reduces the collisions.

Used by: chapters/reduction-scan-histogram.md, labs/reduction-softmax.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from . import _checks

__all__ = ["ceil_log", "tree_reduction_work", "tree_reduction_span", "hillis_steele_scan_work",
           "hillis_steele_scan_span", "blelloch_scan_work", "blelloch_scan_span",
           "brent_time_bound", "brent_time_lower_bound", "warp_shuffle_steps",
           "block_reduction_steps", "grid_reduction_passes", "zipf_probabilities",
           "hottest_bin_updates", "contention_factor", "atomic_histogram_time_s",
           "privatized_histogram_time_s", "blelloch_scan_swaps"]


def ceil_log(n: int, base: int = 2) -> int:
    r"""Smallest integer :math:`L` with :math:`\text{base}^L \ge n` (exact, in integers).

    .. math:: L = \lceil \log_b n \rceil

    References
    ----------
    The levels of a :math:`b`-ary tree over :math:`n` leaves (Blelloch 1990, section 1).

    Examples
    --------
    >>> ceil_log(1), ceil_log(8), ceil_log(9), ceil_log(1000, 32)
    (0, 3, 4, 2)
    """
    n = _positive_int("n", n)
    base = _positive_int("base", base, minimum=2)
    levels, reach = 0, 1
    while reach < n:
        reach *= base
        levels += 1
    return levels


def tree_reduction_work(n: int, fan_in: int = 2) -> int:
    r"""Binary operations (count) of a tree reduction of ``n`` values: :math:`n - 1` for any fan-in.

    .. math:: W_{\text{reduce}} = n - 1

    Each node that combines :math:`k` inputs costs :math:`k - 1` binary operations and removes
    :math:`k - 1` values; :math:`n - 1` values must disappear to leave one. ``fan_in`` is checked
    but does not change the count.

    References
    ----------
    Harris (2007), "Optimizing Parallel Reduction in CUDA": the tree does :math:`n - 1`
    operations, as the sequential loop does.

    Examples
    --------
    >>> tree_reduction_work(1024), tree_reduction_work(1024, fan_in=32)
    (1023, 1023)
    """
    n = _positive_int("n", n)
    _positive_int("fan_in", fan_in, minimum=2)
    return n - 1


def tree_reduction_span(n: int, fan_in: int = 2) -> int:
    r"""Dependent binary-operation steps (count) of a tree reduction of ``n`` values.

    .. math:: S_{\text{reduce}} = (k - 1)\,\lceil \log_k n \rceil \qquad\text{(eq-red-tree-span)}

    with :math:`k` the fan-in: :math:`\lceil\log_k n\rceil` levels, and one node of a level adds
    its :math:`k` inputs one after another. A fan-in of 2 gives :math:`\lceil \log_2 n \rceil`.

    Assumptions
    -----------
    Enough processors to run every node of a level at once.

    References
    ----------
    Blelloch (1990), section 1; Harris (2007): :math:`\log_2 n` steps for a binary tree.

    Examples
    --------
    >>> tree_reduction_span(1 << 20), tree_reduction_span(1 << 20, fan_in=4)
    (20, 30)
    """
    n = _positive_int("n", n)
    k = _positive_int("fan_in", fan_in, minimum=2)
    return (k - 1) * ceil_log(n, k)


def hillis_steele_scan_work(n: int) -> int:
    r"""Additions (count) of the Hillis-Steele (step-doubling) inclusive scan of ``n`` values.

    .. math:: W_{\text{HS}} = \sum_{d=0}^{L-1} \left(n - 2^d\right) = nL - (2^L - 1),
              \quad L = \lceil \log_2 n \rceil \qquad\text{(eq-red-hs-work)}

    At step :math:`d` every element :math:`i \ge 2^d` adds the element :math:`2^d` to its left.
    For :math:`n` a power of two this is :math:`n \log_2 n - (n - 1)`.

    References
    ----------
    Hillis and Steele (1986); Harris, Sengupta and Owens (2007), section 39.2.1: the naive
    scan's :math:`O(n \log_2 n)` additions against the sequential scan's :math:`O(n)`.

    Examples
    --------
    >>> hillis_steele_scan_work(8), hillis_steele_scan_work(1 << 20)
    (17, 19922945)
    """
    n = _positive_int("n", n)
    levels = ceil_log(n)
    return n * levels - (2**levels - 1)


def hillis_steele_scan_span(n: int) -> int:
    r"""Steps (count) of the Hillis-Steele scan: :math:`\lceil \log_2 n \rceil`.

    .. math:: S_{\text{HS}} = \lceil \log_2 n \rceil

    References
    ----------
    Hillis and Steele (1986); Harris, Sengupta and Owens (2007), section 39.2.1.

    Examples
    --------
    >>> hillis_steele_scan_span(8)
    3
    """
    return ceil_log(_positive_int("n", n))


def _padded(n: int) -> int:
    return 1 << ceil_log(n)


def blelloch_scan_work(n: int) -> int:
    r"""Additions (count) of Blelloch's work-efficient exclusive scan of ``n`` values.

    .. math:: W_{\text{B}} = 2\,(N - 1), \quad N = 2^{\lceil \log_2 n \rceil}
              \qquad\text{(eq-red-blelloch)}

    The up-sweep (a tree reduction) does :math:`N - 1` additions and the down-sweep another
    :math:`N - 1` (with as many swaps, counted apart by :func:`blelloch_scan_swaps`). The
    classic algorithm runs on a power of two: other lengths are padded with the identity to
    :math:`N`.

    References
    ----------
    Blelloch (1990), section 1.3; Harris, Sengupta and Owens (2007), section 39.2.2:
    "2 x (n - 1) adds and n - 1 swaps".

    Examples
    --------
    >>> blelloch_scan_work(8), blelloch_scan_work(1 << 20)
    (14, 2097150)
    """
    return 2 * (_padded(_positive_int("n", n)) - 1)


def blelloch_scan_swaps(n: int) -> int:
    r"""Swaps (count) of the down-sweep of Blelloch's scan of ``n`` values: :math:`N - 1`.

    .. math:: W_{\text{swap}} = N - 1, \quad N = 2^{\lceil \log_2 n \rceil}

    Each down-sweep node hands its value to its left child and gives its right child the sum
    of the two (``t = a[l]; a[l] = a[r]; a[r] += t``): one addition and one swap, at each of
    the :math:`N/2 + N/4 + \dots + 1 = N - 1` nodes. A swap moves data (a read and a write per
    element) without arithmetic, so on a GPU it costs memory traffic that
    :func:`blelloch_scan_work` does not show.

    References
    ----------
    Harris, Sengupta and Owens (2007), GPU Gems 3, section 39.2.2: the work-efficient scan
    "performs O(n) operations (2 x (n - 1) adds and n - 1 swaps)".

    Examples
    --------
    >>> blelloch_scan_swaps(8), blelloch_scan_work(8)
    (7, 14)
    """
    return _padded(_positive_int("n", n)) - 1


def blelloch_scan_span(n: int) -> int:
    r"""Steps (count) of Blelloch's scan: :math:`2 \lceil \log_2 n \rceil` (up-sweep, down-sweep).

    .. math:: S_{\text{B}} = 2 \lceil \log_2 n \rceil

    References
    ----------
    Blelloch (1990), section 1.3.

    Examples
    --------
    >>> blelloch_scan_span(8)
    6
    """
    return 2 * ceil_log(_positive_int("n", n))


def brent_time_bound(work: float, span: float, n_processors: int) -> float:
    r"""Upper bound on the steps (count) of a greedy schedule on ``n_processors``: :math:`W/p + S`.

    .. math:: T_p \le \frac{W}{p} + S     (the page labels this eq-red-brent)

    Parameters
    ----------
    work : float
        :math:`W`, operations in all (> 0).
    span : float
        :math:`S`, the longest dependent chain (> 0, at most ``work``).
    n_processors : int
        :math:`p` (>= 1).

    Assumptions
    -----------
    Unit-time operations; a greedy scheduler (no processor idles while an operation is ready);
    no cost to communicate.

    References
    ----------
    Brent (1974).

    Examples
    --------
    A tree reduction of :math:`2^{20}` values on 1024 processors:

    >>> brent_time_bound(2**20 - 1, 20, 1024)
    1043.9990234375
    """
    w = _positive("work", work)
    s = _positive("span", span)
    p = _positive_int("n_processors", n_processors)
    if s > w:
        raise ValueError(f"span must be <= work, got span={span!r}, work={work!r}")
    return w / p + s


def brent_time_lower_bound(work: float, span: float, n_processors: int) -> float:
    r"""Lower bound on the steps (count) of any schedule on ``n_processors``: :math:`\max(W/p, S)`.

    .. math:: T_p \ge \max\!\left(\frac{W}{p}, S\right)

    References
    ----------
    Brent (1974); the two halves of eq-red-brent.

    Examples
    --------
    >>> brent_time_lower_bound(2**20 - 1, 20, 1024)
    1023.9990234375
    """
    w = _positive("work", work)
    s = _positive("span", span)
    p = _positive_int("n_processors", n_processors)
    if s > w:
        raise ValueError(f"span must be <= work, got span={span!r}, work={work!r}")
    return max(w / p, s)


def warp_shuffle_steps(warp_size: int = 32) -> int:
    r"""Shuffle steps (count) of a butterfly reduction across one warp: :math:`\log_2 w`.

    .. math:: S_{\text{warp}} = \lceil \log_2 w \rceil

    Each step, every lane adds the value of the lane ``offset`` away (``__shfl_down_sync`` or
    ``__shfl_xor_sync``) and the offset halves: 16, 8, 4, 2, 1 for a 32-lane warp.

    References
    ----------
    NVIDIA, *CUDA C++ Programming Guide*, warp shuffle functions (a warp is 32 threads).

    Examples
    --------
    >>> warp_shuffle_steps()
    5
    """
    return ceil_log(_positive_int("warp_size", warp_size, minimum=2))


def block_reduction_steps(threads_per_block: int, warp_size: int = 32) -> int:
    r"""Dependent steps (count) of a block's reduction: shuffles in each warp, then across warps.

    .. math:: S_{\text{block}} = \lceil \log_2 w \rceil + \lceil \log_2 \lceil B / w \rceil \rceil

    Each warp reduces its :math:`w` values with shuffles; the :math:`\lceil B/w \rceil` warp sums
    go through shared memory to one warp, which reduces them the same way. For powers of two it
    is :math:`\log_2 B`: the hierarchy does not lengthen the tree.

    References
    ----------
    Harris (2007), "Optimizing Parallel Reduction in CUDA"; NVIDIA, *CUDA C++ Programming
    Guide*, warp shuffle functions.

    Examples
    --------
    >>> block_reduction_steps(1024), block_reduction_steps(96)
    (10, 7)
    """
    b = _positive_int("threads_per_block", threads_per_block)
    w = _positive_int("warp_size", warp_size, minimum=2)
    return warp_shuffle_steps(w) + ceil_log(-(-b // w))


def grid_reduction_passes(n: int, elements_per_block: int) -> int:
    r"""Kernel passes (count) that reduce ``n`` values to one, each block folding its share to one.

    .. math:: P = \lceil \log_{E} n \rceil \qquad\text{(eq-red-passes)}

    with :math:`E` the elements one block reduces (block size times elements per thread). Each
    pass leaves :math:`\lceil n/E \rceil` partial sums for the next.

    References
    ----------
    Harris (2007), "Optimizing Parallel Reduction in CUDA": a global synchronization is a
    kernel launch, so the grid level is a second (or third) pass over the partial sums.

    Examples
    --------
    :math:`2^{28}` values, blocks of 1024 threads each summing 8 values: 32768 partial sums
    after the first pass, 4 after the second, 1 after the third.

    >>> grid_reduction_passes(2**28, 1024 * 8)
    3
    """
    n = _positive_int("n", n)
    e = _positive_int("elements_per_block", elements_per_block, minimum=2)
    return ceil_log(n, e)


def zipf_probabilities(n_bins: int, exponent: float):
    r"""Probabilities (dimensionless array) of a Zipf law over ``n_bins`` keys, hottest first.

    .. math:: p_k = \frac{k^{-s}}{\sum_{j=1}^{B} j^{-s}}, \quad k = 1, \dots, B

    ``exponent`` :math:`s = 0` is the uniform distribution.

    References
    ----------
    Zipf, G. K. (1949), *Human Behavior and the Principle of Least Effort*; word and token
    frequencies follow it with :math:`s` near 1.

    Examples
    --------
    >>> p = zipf_probabilities(4, 1.0)
    >>> [round(float(x), 4) for x in p]
    [0.48, 0.24, 0.16, 0.12]
    """
    _checks.positive_int("n_bins", n_bins, maximum=10**8)
    b = _positive_int("n_bins", n_bins)
    s = _positive("exponent", exponent, allow_zero=True)
    w = np.arange(1, b + 1, dtype=np.float64) ** (-s)
    return w / w.sum()


def _probs(bin_probs):
    p = np.asarray(bin_probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("bin_probs must be a non-empty 1-D array of finite probabilities >= 0")
    if not math.isclose(float(p.sum()), 1.0, rel_tol=1e-9, abs_tol=1e-9):
        raise ValueError(f"bin_probs must sum to 1, got {float(p.sum())!r}")
    return p


def hottest_bin_updates(n_updates: float, bin_probs) -> float:
    r"""Expected updates (count) to the most frequent bin: :math:`N \max_k p_k`.

    .. math:: U_{\max} \approx N\, p_{\max}

    Assumptions
    -----------
    Keys drawn independently from ``bin_probs``; the hottest bin's count is close to its
    expectation when :math:`N p_{\max}` is large (for a uniform key over :math:`B` bins the
    fullest bin exceeds :math:`N/B` by a few standard deviations, :math:`\sqrt{N/B}`).

    References
    ----------
    The expectation of a binomial count; Gomez-Luna et al. (2013): colliding atomic updates of one
    address serialize.

    Examples
    --------
    >>> round(hottest_bin_updates(1e6, zipf_probabilities(4, 1.0)))
    480000
    """
    n = _positive("n_updates", n_updates)
    return n * float(_probs(bin_probs).max())


def contention_factor(bin_probs) -> float:
    r"""How many times the hottest bin outnumbers the mean bin (dimensionless): :math:`B\,p_{\max}`.

    .. math:: C = B \, p_{\max} \qquad\text{(eq-red-contention)}

    1 for uniform keys; :math:`B` when every key is the same.

    References
    ----------
    Gomez-Luna et al. (2013): the time of atomic updates grows with the number of updates
    that hit the same address.

    Examples
    --------
    >>> contention_factor(zipf_probabilities(256, 0.0)), round(contention_factor(zipf_probabilities(256, 1.0)), 1)
    (1.0, 41.8)
    """
    p = _probs(bin_probs)
    return p.size * float(p.max())


def atomic_histogram_time_s(n_updates: float, bin_probs, *, atomic_updates_per_s: float,
                            same_address_s: float) -> float:
    r"""Time (s) of a histogram built with atomic adds to one shared table.

    .. math:: T = \max\!\left(\frac{N}{R},\; N\,p_{\max}\, t_{\text{same}}\right)
              \qquad\text{(eq-red-atomic)}

    Parameters
    ----------
    n_updates : float
        :math:`N`, keys counted.
    bin_probs : array
        Probability of each bin (sums to 1).
    atomic_updates_per_s : float
        :math:`R`, atomic updates per second the memory system completes when they spread over
        many addresses.
    same_address_s : float
        :math:`t_{\text{same}}`, seconds between two updates of the same address (they
        serialize).

    Assumptions
    -----------
    The two limits overlap perfectly: the hottest bin's chain of updates runs while the rest
    proceed in parallel. Caching and combining of atomics in hardware are folded into
    :math:`R` and :math:`t_{\text{same}}`.

    References
    ----------
    Gomez-Luna et al. (2013): a model of atomic additions whose time grows with the conflicts
    per address.

    Examples
    --------
    >>> atomic_histogram_time_s(1e6, zipf_probabilities(256, 0.0), atomic_updates_per_s=1e9,
    ...                         same_address_s=1e-8)
    0.001
    """
    n = _positive("n_updates", n_updates)
    r = _positive("atomic_updates_per_s", atomic_updates_per_s)
    t = _positive("same_address_s", same_address_s)
    return max(n / r, n * float(_probs(bin_probs).max()) * t)


def privatized_histogram_time_s(n_updates: float, bin_probs, *, copies: int,
                                atomic_updates_per_s: float, same_address_s: float) -> float:
    r"""Time (s) of a privatized histogram: ``copies`` private tables, then one merge.

    .. math:: T = \max\!\left(\frac{N}{R},\; \frac{N\,p_{\max}}{c}\, t_{\text{same}}\right)
              + \frac{c\,B}{R}

    Each of :math:`c` copies (one per block, in shared memory) receives :math:`1/c` of the keys,
    so its hottest bin serializes :math:`c` times fewer updates; merging adds :math:`cB` updates.

    Assumptions
    -----------
    The keys are spread evenly over the copies; the merge is the same kind of update at rate
    :math:`R` and does not contend (each copy adds to a different bin at a time).

    References
    ----------
    Harris, Sengupta and Owens (2007) and the CUDA samples' ``histogram`` (per-block
    sub-histograms in shared memory merged at the end); Gomez-Luna et al. (2013).

    Examples
    --------
    >>> p = zipf_probabilities(256, 1.0)
    >>> round(privatized_histogram_time_s(1e6, p, copies=64, atomic_updates_per_s=1e9,
    ...                                   same_address_s=1e-8) * 1e3, 3)
    1.016
    """
    n = _positive("n_updates", n_updates)
    c = _positive_int("copies", copies)
    r = _positive("atomic_updates_per_s", atomic_updates_per_s)
    t = _positive("same_address_s", same_address_s)
    p = _probs(bin_probs)
    return max(n / r, n * float(p.max()) / c * t) + c * p.size / r
