r"""The two numbers that decide speed: latency and bandwidth.

Moving :math:`n` bytes over any path (a memory bus, a PCIe link, a network) takes a fixed
start-up time, the *latency* :math:`\alpha`, plus the bytes over the *bandwidth* :math:`B`:

.. math:: T(n) = \alpha + \frac{n}{B}          (the page labels this eq-transfer-time)

The size at which both terms are equal, :math:`n_{1/2} = \alpha B` (the *half-bandwidth
size*), reaches half the bandwidth. Smaller transfers are latency-bound, larger ones
bandwidth-bound.

Introduced in {ref}`sec-start-here`; the collectives page reuses it as the alpha-beta model.

References
----------
Patterson, D. A. (2004), "Latency lags bandwidth", Communications of the ACM 47(10),
71-75: why the two numbers improve at different rates and must be kept apart.

Used by: foundations/networking.md, foundations/pcie-and-interconnects.md,
foundations/start-here.md, foundations/syscalls-and-profiling.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import positive, positive_array
from . import stats

__all__ = ["transfer_time_s", "effective_bandwidth_bytes_per_s", "half_bandwidth_bytes",
           "fit_latency_bandwidth"]


def transfer_time_s(n_bytes, latency_s: float, bandwidth_bytes_per_s: float):
    r"""Time (s) to move ``n_bytes``: the latency plus the bytes over the bandwidth.

    .. math:: T(n) = \alpha + n / B          (eq-transfer-time)

    Parameters
    ----------
    n_bytes : float or array
        Bytes moved, :math:`n` (>= 0).
    latency_s : float
        Start-up time :math:`\alpha` (s), >= 0.
    bandwidth_bytes_per_s : float
        Asymptotic bandwidth :math:`B` (bytes/s), > 0.

    Returns
    -------
    float or array
        :math:`T` (s).

    Assumptions
    -----------
    One transfer at a time; the latency is paid once per transfer and does not overlap the
    bytes.

    Examples
    --------
    >>> transfer_time_s(64.0, 100e-9, 10e9)   # one cache line from DRAM: latency-bound
    1.064e-07
    """
    n = positive_array("n_bytes", n_bytes, allow_zero=True)
    a = positive("latency_s", latency_s, allow_zero=True)
    b = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    with np.errstate(over="ignore"):  # a tiny bandwidth gives an infinite time, not a warning
        return a + n / b


def effective_bandwidth_bytes_per_s(n_bytes, latency_s: float, bandwidth_bytes_per_s: float):
    r"""Bytes per second a transfer of ``n_bytes`` achieves: :math:`n / T(n)`.

    >>> effective_bandwidth_bytes_per_s(1000.0, 1e-6, 1e9)
    500000000.0
    """
    n = positive_array("n_bytes", n_bytes)
    return n / transfer_time_s(n, latency_s, bandwidth_bytes_per_s)


def half_bandwidth_bytes(latency_s: float, bandwidth_bytes_per_s: float) -> float:
    r"""The half-bandwidth size :math:`n_{1/2} = \alpha B` (bytes).

    .. math:: n_{1/2} = \alpha \, B          (eq-half-length)

    A transfer this large spends as long on latency as on bytes, so it reaches half of
    :math:`B`; below it latency dominates.

    >>> half_bandwidth_bytes(100e-9, 10e9)
    1000.0
    """
    a = positive("latency_s", latency_s, allow_zero=True)
    b = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    if not math.isfinite(a * b):
        raise ValueError(f"latency_s * bandwidth_bytes_per_s must be finite, got {a!r} * {b!r}")
    return float(np.float64(a) * b)


def fit_latency_bandwidth(n_bytes, times_s) -> tuple[float, float]:
    r"""Fit :math:`T(n) = \alpha + n/B` to measured (size, time) pairs; return (alpha_s, B).

    Least squares on *relative* error, :math:`\sum_i ((\alpha + n_i/B - T_i)/T_i)^2`, which is
    linear in :math:`\alpha` and :math:`1/B`, so small transfers (which fix the latency)
    weigh as much as large ones (which fix the bandwidth).

    Parameters
    ----------
    n_bytes, times_s : sequences of float
        At least two distinct sizes (bytes, > 0) and their times (s, > 0).

    Returns
    -------
    (float, float)
        ``(latency_s, bandwidth_bytes_per_s)``; the latency is clipped at 0.

    Raises ``ValueError`` if the sizes are fewer than two or all equal, or if the times do not
    grow with size (no positive bandwidth fits).

    >>> sizes = [1e3, 1e4, 1e5, 1e6]
    >>> a, b = fit_latency_bandwidth(sizes, transfer_time_s(np.array(sizes), 2e-6, 5e9))
    >>> round(a / 1e-6, 6), round(b / 1e9, 6)
    (2.0, 5.0)
    """
    n = positive_array("n_bytes", np.atleast_1d(np.asarray(n_bytes, dtype=float)))
    t = positive_array("times_s", np.atleast_1d(np.asarray(times_s, dtype=float)))
    if n.shape != t.shape:
        raise ValueError(f"n_bytes and times_s must have the same length, got {n.size} and {t.size}")
    if n.size < 2 or np.unique(n).size < 2:
        raise ValueError(f"need at least two distinct sizes, got {n.tolist()}")
    design = np.column_stack([1.0 / t, n / t])
    alpha, inv_b = stats.least_squares(design.tolist(), np.ones_like(t).tolist())
    if not inv_b > 0:
        raise ValueError("the times do not grow with size: no positive bandwidth fits them")
    return float(max(alpha, 0.0)), float(1.0 / inv_b)
