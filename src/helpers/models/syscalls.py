r"""The cost of system calls in bulk, and the precision of a sampling profiler.

Symbols (the page {ref}`sec-syscalls-and-profiling` uses the same): :math:`N` bytes to move
(``n_bytes``), :math:`c` bytes per call (``chunk_bytes``), :math:`t_{\text{sys}}` the fixed
cost of one call (``per_call_s``), :math:`B` the rate of copying bytes (``copy_bytes_per_s``),
:math:`f` the fraction of time a function runs, :math:`n` the number of samples.

Used by: foundations/syscalls-and-profiling.md.
"""

from __future__ import annotations

import math

from ._checks import fraction, positive, positive_int
from . import _checks

__all__ = ["n_calls", "chunked_io_time_s", "sampling_stderr"]


def n_calls(n_bytes: float, chunk_bytes: float) -> int:
    """System calls needed to move ``n_bytes`` in calls of at most ``chunk_bytes``:
    :math:`\\lceil N/c \\rceil` (0 for nothing to move).

    >>> n_calls(1_000_000, 4096)
    245
    """
    _checks.finite_ratio("n_bytes", positive("n_bytes", n_bytes, allow_zero=True),
                         "chunk_bytes", positive("chunk_bytes", chunk_bytes))
    n = positive("n_bytes", n_bytes, allow_zero=True)
    c = positive("chunk_bytes", chunk_bytes)
    return int(math.ceil(n / c - 1e-12)) if n > 0 else 0


def chunked_io_time_s(n_bytes: float, chunk_bytes: float, *, per_call_s: float,
                      copy_bytes_per_s: float) -> float:
    r"""Seconds to move ``n_bytes`` through system calls of ``chunk_bytes`` each.

    .. math:: T = \left\lceil \frac{N}{c} \right\rceil t_{\text{sys}} + \frac{N}{B}
              (the page labels this eq-sys-chunked)

    Parameters
    ----------
    n_bytes : float
        :math:`N` (bytes), >= 0.
    chunk_bytes : float
        :math:`c`, bytes per call (bytes), > 0.
    per_call_s : float
        :math:`t_{\text{sys}}`, the cost of one call that does not depend on its size (s),
        >= 0: entering and leaving the kernel, the file-descriptor lookup, the interpreter.
    copy_bytes_per_s : float
        :math:`B`, the rate at which the calls copy bytes (bytes/s), > 0.

    Returns
    -------
    float
        :math:`T` (s).

    Assumptions
    -----------
    Every call costs the same fixed time plus its bytes at a constant rate; the data are in
    memory already (the page cache for a file, a socket buffer for a socket).

    References
    ----------
    The same latency-plus-bandwidth form as {eq}`eq-net-alpha-beta` (Patterson 2004),
    applied once per call; Kerrisk (2010), *The Linux Programming Interface*, section 13.1,
    measures the same trade-off for ``read`` buffer sizes.

    Examples
    --------
    >>> round(chunked_io_time_s(1e6, 4096, per_call_s=1e-6, copy_bytes_per_s=5e9) * 1e6, 1)
    445.0
    """
    calls = n_calls(n_bytes, chunk_bytes)
    t = positive("per_call_s", per_call_s, allow_zero=True)
    b = positive("copy_bytes_per_s", copy_bytes_per_s)
    return calls * t + float(n_bytes) / b


def sampling_stderr(fraction_true: float, n_samples: int) -> float:
    r"""Standard error of the fraction of time a sampling profiler attributes to a function.

    .. math:: \sigma_{\hat f} = \sqrt{\frac{f (1 - f)}{n}}
              (the page labels this eq-sys-sampling)

    Parameters
    ----------
    fraction_true : float
        :math:`f` in [0, 1], the fraction of time the function really runs.
    n_samples : int
        :math:`n`, samples taken (>= 1): the run time times the sampling rate.

    Returns
    -------
    float
        :math:`\sigma_{\hat f}` (dimensionless).

    Assumptions
    -----------
    Samples are independent of what the program is doing (no aliasing with a periodic
    workload), so each is a Bernoulli trial with success probability :math:`f`.

    References
    ----------
    The binomial standard error; Graham, Kessler and McKusick (1982), "gprof: a Call Graph
    Execution Profiler", SIGPLAN Notices 17(6), on the statistical inaccuracy of sampled
    times.

    Examples
    --------
    A function that runs 30 % of a one-second run, sampled at 1 kHz:

    >>> round(sampling_stderr(0.3, 1000), 4)
    0.0145
    """
    f = fraction("fraction_true", fraction_true)
    n = positive_int("n_samples", n_samples)
    return math.sqrt(f * (1.0 - f) / n)
