r"""Measurement models: the rounding error of one clock reading, and how Triton's ``do_bench``
sizes its warm-up and its repetitions.

A clock of resolution :math:`r` rounds each reading, so one interval :math:`T` is known to
within :math:`r`: a relative error of at most

.. math:: \epsilon = r / T                                   \qquad\text{(eq-meas-quantization)}

(the page's bound :math:`(o + r)/(N t)` with no overhead and :math:`T = N t`). Triton's
benchmark helper estimates the time of one call from five calls and then repeats the call
for a fixed *time*, not a fixed count; :func:`do_bench_counts` is that rule.

Introduced in {ref}`sec-measurement`.

References
----------
* Triton 3.5.0 (the version the book pins), ``python/triton/testing.py``, function
  ``do_bench(fn, warmup=25, rep=100, ...)``: ``estimate_ms = elapsed_time / 5`` over five
  calls (each after an L2 flush), then ``n_warmup = max(1, int(warmup / estimate_ms))`` and
  ``n_repeat = max(1, int(rep / estimate_ms))``.

Library only: no page imports it.
"""

from __future__ import annotations

import math

from . import _checks

__all__ = ["timer_quantization_error", "min_interval_s", "do_bench_counts"]

#: Triton 3.5.0 ``do_bench`` defaults: ``warmup=25`` ms, ``rep=100`` ms, and five calls timed
#: together to estimate one.
DO_BENCH_WARMUP_S = 25e-3
DO_BENCH_REP_S = 100e-3
DO_BENCH_ESTIMATE_CALLS = 5


def timer_quantization_error(resolution_s: float, interval_s: float) -> float:
    r"""Worst relative error (dimensionless) of one reading of an interval on a clock of resolution ``r``.

    .. math:: \epsilon = r / T                 (the page labels this eq-meas-quantization)

    Parameters
    ----------
    resolution_s : float
        :math:`r`, the clock's resolution (s, > 0).
    interval_s : float
        :math:`T`, the length of the timed interval (s, > 0).

    Returns
    -------
    float
        :math:`r / T`, capped at 1: an interval shorter than one tick can read as zero, a 100 %
        error, but no worse.

    Assumptions
    -----------
    The reading is rounded (or truncated) to a multiple of :math:`r`; the harness's own
    overhead :math:`o` is left out (add it to :math:`r` for the page's bound).

    References
    ----------
    The measurement page's eq-meas-quantization; NVIDIA, CUDA Runtime API,
    ``cudaEventElapsedTime``: "resolution of around 0.5 microseconds".

    Examples
    --------
    A CUDA event (0.5 us) timing a 50 us kernel once:

    >>> round(timer_quantization_error(0.5e-6, 50e-6), 6)
    0.01
    """
    r = _checks.positive("resolution_s", resolution_s)
    t = _checks.positive("interval_s", interval_s)
    return min(1.0, r / t)


def min_interval_s(resolution_s: float, max_error: float) -> float:
    r"""Shortest interval (s) a clock of resolution ``r`` times within a relative error: :math:`r / \epsilon`.

    .. math:: T_{\min} = r / \epsilon

    Parameters
    ----------
    resolution_s : float
        :math:`r` (s, > 0).
    max_error : float
        :math:`\epsilon`, the largest acceptable relative error, in (0, 1].

    Returns
    -------
    float
        :math:`T_{\min} = r / \epsilon` (s): the inverse of :func:`timer_quantization_error`.

    Examples
    --------
    A CUDA event within 1 %: time at least 50 us at once.

    >>> round(min_interval_s(0.5e-6, 0.01) * 1e6, 6)
    50.0
    """
    r = _checks.positive("resolution_s", resolution_s)
    eps = _checks.fraction("max_error", max_error)
    if eps == 0.0:
        raise ValueError("max_error must be a fraction in (0, 1], got 0.0")
    return _checks.finite_ratio("resolution_s", r, "max_error", eps)


def do_bench_counts(estimate_s: float, *, warmup_s: float = DO_BENCH_WARMUP_S,
                    rep_s: float = DO_BENCH_REP_S) -> tuple[int, int]:
    r"""Warm-up and timed repetition counts (dimensionless) Triton's ``do_bench`` runs for a call of ``estimate_s``.

    .. math::

        n_\text{warmup} = \max\left(1, \left\lfloor \frac{t_\text{warmup}}{\hat t} \right\rfloor\right),
        \qquad
        n_\text{repeat} = \max\left(1, \left\lfloor \frac{t_\text{rep}}{\hat t} \right\rfloor\right)

    Parameters
    ----------
    estimate_s : float
        :math:`\hat t`, the time of one call as ``do_bench`` estimates it: the elapsed time of
        its five estimation calls (each after an L2 flush, which the estimate therefore
        includes) over five (s, > 0).
    warmup_s : float
        :math:`t_\text{warmup}`, the warm-up budget (s, > 0); ``do_bench``'s ``warmup=25`` ms.
    rep_s : float
        :math:`t_\text{rep}`, the timing budget (s, > 0); ``do_bench``'s ``rep=100`` ms.

    Returns
    -------
    tuple of int
        ``(n_warmup, n_repeat)``. With the first (compile) call and the five estimation calls,
        ``do_bench`` calls the function ``1 + 5 + n_warmup + n_repeat`` times.

    Assumptions
    -----------
    Triton computes the quotients in milliseconds; in seconds they agree except where the
    quotient is an integer to the last bit, where float rounding can move ``int()`` by one.

    References
    ----------
    Triton 3.5.0, ``python/triton/testing.py``, ``do_bench``: ``n_warmup = max(1, int(warmup /
    estimate_ms))``, ``n_repeat = max(1, int(rep / estimate_ms))``, defaults ``warmup=25``,
    ``rep=100`` (ms).

    Examples
    --------
    A 1 ms kernel gets 25 warm-up calls and 100 timed ones; a 300 ms one, one of each:

    >>> do_bench_counts(1e-3), do_bench_counts(0.3)
    ((25, 100), (1, 1))
    """
    t = _checks.positive("estimate_s", estimate_s)
    w = _checks.positive("warmup_s", warmup_s)
    r = _checks.positive("rep_s", rep_s)
    counts = []
    for name, budget in (("warmup_s", w), ("rep_s", r)):
        q = budget / t
        if not math.isfinite(q) or q > _checks.MAX_INT:
            raise ValueError(f"{name} / estimate_s must be at most {_checks.MAX_INT} calls "
                             f"(2**53), got {name}={budget!r}, estimate_s={t!r}")
        counts.append(max(1, int(q)))
    return counts[0], counts[1]
