r"""The memory hierarchy: average memory access time (AMAT) and the working-set model.

A load is served by the first level of the hierarchy that holds its cache line. With hit
times and miss rates per level, the average time of a load is Hennessy and Patterson's
average memory access time, applied level by level:

.. math:: \text{AMAT} = t_1 + m_1\,(t_2 + m_2\,(t_3 + \dots + m_{k}\,t_{\text{mem}}))
   \qquad\text{(the page labels the one-level form eq-amat, this one eq-amat-levels)}

where :math:`t_i` is the extra time a load spends at level :math:`i` (its hit time) and
:math:`m_i` the *local* miss rate of level :math:`i` (misses of that level over the loads that
reach it).

:func:`random_access_hit_fraction` adds the one assumption the book's cache lab needs: a loop
that reads a working set of :math:`W` bytes in random order through a cache of :math:`C` bytes
finds about :math:`\min(1, C/W)` of its lines there. :func:`chase_latency_s` combines the two
into a prediction of a pointer chase's time per load, which the lab measures.

Introduced in {ref}`sec-memory-hierarchy`.

References
----------
Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
Approach*, 5th ed., appendix B.1 (average memory access time) and B.3 (multilevel caches).
Bryant, R. E. and O'Hallaron, D. R. (2015), *Computer Systems: A Programmer's Perspective*,
3rd ed., section 6.4.7 (hit rate, hit time and miss penalty; the 97 % versus 99 % example).

Used by: foundations/memory-hierarchy.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._checks import fraction, positive, positive_array
from . import _checks

__all__ = ["amat_s", "amat_multilevel_s", "random_access_hit_fraction", "served_fractions",
           "chase_latency_s", "plateau_latencies_s"]


def amat_s(hit_time_s: float, miss_rate: float, miss_penalty_s: float) -> float:
    r"""Average memory access time (s) of one cache level in front of a slower one.

    .. math:: \text{AMAT} = t_{\text{hit}} + m \, t_{\text{miss}}      (eq-amat)

    Parameters
    ----------
    hit_time_s : float
        Time of a load that hits, :math:`t_{\text{hit}}` (s); > 0.
    miss_rate : float
        Fraction of loads that miss, :math:`m`, in [0, 1].
    miss_penalty_s : float
        Extra time of a miss, :math:`t_{\text{miss}}` (s); >= 0.

    Returns
    -------
    float
        The mean time of a load (s).

    Assumptions
    -----------
    Loads are served one after another (no overlap of misses); every miss costs the same.

    References
    ----------
    Hennessy and Patterson (2012), appendix B.1; Bryant and O'Hallaron (2015), section 6.4.7,
    whose example (1 cycle hit, 100 cycle penalty) gives 4 cycles at a 97 % hit rate and
    2 cycles at 99 %:

    Examples
    --------
    >>> amat_s(1.0, 0.03, 100.0), amat_s(1.0, 0.01, 100.0)
    (4.0, 2.0)
    """
    t_hit = positive("hit_time_s", hit_time_s)
    m = fraction("miss_rate", miss_rate)
    t_miss = positive("miss_penalty_s", miss_penalty_s, allow_zero=True)
    return t_hit + m * t_miss


def amat_multilevel_s(hit_times_s: Sequence[float], local_miss_rates: Sequence[float],
                      memory_time_s: float) -> float:
    r"""Average memory access time (s) of a hierarchy of cache levels in front of memory.

    .. math:: \text{AMAT} = t_1 + m_1 (t_2 + m_2 (\dots + m_k\, t_{\text{mem}}))   (eq-amat-levels)

    Parameters
    ----------
    hit_times_s : sequence of float
        Hit time of each cache level, nearest first (s); each > 0. For level 2 and beyond this
        is the *extra* time after missing the levels above, as in Hennessy and Patterson.
    local_miss_rates : sequence of float
        Local miss rate of each level, in [0, 1]; the same length as ``hit_times_s``.
    memory_time_s : float
        Extra time of a load that misses every level (s); >= 0.

    Returns
    -------
    float
        The mean time of a load (s).

    References
    ----------
    Hennessy and Patterson (2012), appendix B.3, "multilevel caches".

    Examples
    --------
    >>> round(amat_multilevel_s([1.0, 10.0], [0.04, 0.5], 200.0), 6)
    5.4
    """
    _checks.sequence("hit_times_s", hit_times_s)
    _checks.sequence("local_miss_rates", local_miss_rates)
    hits = [positive(f"hit_times_s[{i}]", t) for i, t in enumerate(hit_times_s)]
    rates = [fraction(f"local_miss_rates[{i}]", m) for i, m in enumerate(local_miss_rates)]
    if not hits:
        raise ValueError("hit_times_s must name at least one level, got an empty sequence")
    if len(hits) != len(rates):
        raise ValueError(f"hit_times_s and local_miss_rates must have the same length, got "
                         f"{len(hits)} and {len(rates)}")
    t = positive("memory_time_s", memory_time_s, allow_zero=True)
    for t_hit, m in zip(reversed(hits), reversed(rates)):
        t = t_hit + m * t
    return t


def random_access_hit_fraction(working_set_bytes, cache_bytes: float):
    r"""Fraction of random loads over a working set that find their line in a cache.

    .. math:: h = \min\!\left(1, \frac{C}{W}\right)      (eq-hit-fraction)

    Parameters
    ----------
    working_set_bytes : float or array
        Bytes :math:`W` the loop reads, in random order; > 0.
    cache_bytes : float
        Capacity :math:`C` of the cache (bytes); > 0.

    Returns
    -------
    float or array
        :math:`h` in (0, 1].

    Assumptions
    -----------
    Every line of the working set is equally likely to be read next; the cache is fully
    associative (real caches are set-associative and lose a little to conflicts), holds only
    this working set, and is warm (the first pass's compulsory misses are not counted).
    Then the cache holds :math:`C/W` of the lines whatever it evicts, because the next line is
    independent of what it holds.

    Examples
    --------
    >>> random_access_hit_fraction(4096.0, 49152.0), random_access_hit_fraction(98304.0, 49152.0)
    (1.0, 0.5)
    """
    w = positive_array("working_set_bytes", working_set_bytes)
    c = positive("cache_bytes", cache_bytes)
    h = np.minimum(1.0, c / w)
    return float(h) if np.ndim(h) == 0 else h


def served_fractions(working_set_bytes: float, cache_bytes: Sequence[float]) -> list[float]:
    """Fraction of random loads served by each cache level and by memory (sums to 1).

    Levels are nearest first with growing capacities; the last entry is memory. Each level
    holds :func:`random_access_hit_fraction` of the lines, the levels nearer it included
    (inclusive caches).

    >>> served_fractions(4e6, [48e3, 2e6])
    [0.012, 0.488, 0.5]
    """
    _checks.sequence("cache_bytes", cache_bytes)
    sizes = [positive(f"cache_bytes[{i}]", c) for i, c in enumerate(cache_bytes)]
    if any(b < a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"cache_bytes must not decrease from level to level, got {sizes}")
    held = [random_access_hit_fraction(working_set_bytes, c) for c in sizes]
    out, prev = [], 0.0
    for h in held:
        out.append(round(h - prev, 15))
        prev = h
    out.append(round(1.0 - prev, 15))
    return out


def chase_latency_s(working_set_bytes: float, cache_bytes: Sequence[float],
                    load_latencies_s: Sequence[float], memory_latency_s: float) -> float:
    r"""Predicted time per load (s) of a random pointer chase over ``working_set_bytes``.

    Each level's *load-to-use* latency (the time of a load served there, as a pointer chase
    measures it) becomes a hit time of :func:`amat_multilevel_s` by subtracting the level
    above, and each level's local miss rate follows from :func:`random_access_hit_fraction`.
    Equivalently, the expected latency :math:`\sum_i f_i \, \ell_i` over the fractions
    :math:`f_i` of :func:`served_fractions`.

    Parameters
    ----------
    working_set_bytes : float
        Bytes the chase cycles through (> 0).
    cache_bytes : sequence of float
        Capacity of each level, nearest first, not decreasing (bytes).
    load_latencies_s : sequence of float
        Load-to-use latency of each level (s), not decreasing, same length.
    memory_latency_s : float
        Load-to-use latency of memory (s), at least the last level's.

    Examples
    --------
    >>> round(chase_latency_s(4e6, [48e3, 2e6], [1e-9, 5e-9], 100e-9) / 1e-9, 3)
    52.452
    """
    _checks.sequence("cache_bytes", cache_bytes)
    _checks.sequence("load_latencies_s", load_latencies_s)
    sizes = [positive(f"cache_bytes[{i}]", c) for i, c in enumerate(cache_bytes)]
    lat = [positive(f"load_latencies_s[{i}]", t) for i, t in enumerate(load_latencies_s)]
    if len(sizes) != len(lat) or not sizes:
        raise ValueError(f"cache_bytes and load_latencies_s must be non-empty and of the same "
                         f"length, got {len(sizes)} and {len(lat)}")
    mem = positive("memory_latency_s", memory_latency_s)
    chain = lat + [mem]
    if any(b < a for a, b in zip(chain, chain[1:])):
        raise ValueError(f"latencies must not decrease from level to level (memory last), got "
                         f"{chain}")
    w = positive("working_set_bytes", working_set_bytes)
    held = [random_access_hit_fraction(w, c) for c in sizes]
    if any(b < a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"cache_bytes must not decrease from level to level, got {sizes}")
    hit_times = [chain[0]] + [b - a for a, b in zip(chain[:-2], chain[1:-1])]
    hit_times = [max(t, 1e-30) for t in hit_times]  # equal latencies: a level that costs nothing
    local_miss = []
    reached = 1.0
    for h in held:
        global_miss = 1.0 - h
        local_miss.append(0.0 if reached == 0 else min(1.0, global_miss / reached))
        reached = global_miss
    return amat_multilevel_s(hit_times, local_miss, mem - chain[-2])


def plateau_latencies_s(working_sets_bytes: Sequence[float], latencies_s: Sequence[float],
                        cache_bytes: Sequence[float]) -> tuple[list[float], float]:
    """Each level's load latency read off a measured working-set sweep, and memory's.

    A level's latency is the measurement at the largest working set that fits in that level
    with room to spare (at most half its capacity) but not in the level above (more than twice
    the level above's capacity), where the level serves the largest share of loads; where no
    measurement qualifies, the one nearest in log size to
    a quarter of the capacity is used. Memory's latency is the measurement at the largest
    working set. These calibrate :func:`chase_latency_s`, which then predicts the transitions
    between the plateaus.

    >>> plateau_latencies_s([1e3, 1e4, 1e5, 1e6, 1e7], [1, 1, 5, 5, 90], [2e4, 2e6])
    ([1.0, 5.0], 90.0)
    """
    _checks.positive_array("working_sets_bytes",
                           _checks.sequence("working_sets_bytes", working_sets_bytes))
    _checks.positive_array("latencies_s", _checks.sequence("latencies_s", latencies_s))
    _checks.positive_array("cache_bytes", _checks.sequence("cache_bytes", cache_bytes, min_len=1))
    ws = positive_array("working_sets_bytes", np.asarray(working_sets_bytes, dtype=float))
    lat = positive_array("latencies_s", np.asarray(latencies_s, dtype=float))
    if np.ndim(ws) != 1 or ws.shape != lat.shape or ws.size < 2:
        raise ValueError("working_sets_bytes and latencies_s must be 1-D, of the same length >= 2")
    sizes = [positive(f"cache_bytes[{i}]", c) for i, c in enumerate(cache_bytes)]
    out, lower = [], 0.0
    for c in sizes:
        sel = (ws <= c / 2) & (ws > 2 * lower)
        if sel.any():
            idx = np.flatnonzero(sel)
            out.append(float(lat[idx[np.argmax(ws[idx])]]))
        else:
            out.append(float(lat[np.argmin(np.abs(np.log(ws) - np.log(c / 4)))]))
        lower = c
    out = list(np.maximum.accumulate(out))
    mem = float(max(lat[np.argmax(ws)], out[-1]))
    return [float(x) for x in out], mem
