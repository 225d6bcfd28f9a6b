r"""Peak arithmetic rate of a CPU from its parts, and the parallelism a pipeline needs.

A core that issues one vector operation per cycle on each of :math:`u` vector units, each
operation working on :math:`\ell` lanes and counting :math:`f` FLOP per lane (2 for a fused
multiply-add, 1 for an add or a multiply), at a clock of :math:`\nu` cycles per second,
performs at most :math:`u \ell f \nu` FLOP/s; :math:`c` cores multiply that:

.. math:: P = c \,\nu\, u \,\ell\, f, \qquad \ell = \text{SIMD bits} / \text{element bits}
   \qquad\text{(the page labels this eq-cpu-peak)}

A pipelined unit with a latency of :math:`L` cycles that accepts :math:`u` new operations per
cycle is busy only when :math:`L u` independent operations are in flight: Little's law with
the latency as the time in the system and the issue rate as the arrival rate.

Introduced in {ref}`sec-cpu-architecture`.

References
----------
Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
Approach*, 5th ed., section 4.7 and figure 4.11 (the Core i7 920's peak of 42.66 GFLOP/s,
double precision). Little, J. D. C. (1961), "A proof for the queuing formula L = lambda W".

Used by: foundations/cpu-architecture.md.
"""

from __future__ import annotations

from ._checks import positive, positive_int
from .gpu_peaks import sm_peak_flop_per_s as _peak_from_fma_rate
from .simd import simd_lanes

# simd_lanes lives with the SIMD page's models; re-exported here for the peak formula.
__all__ = ["simd_lanes", "flop_per_cycle_per_core", "cpu_peak_flop_per_s", "ops_in_flight"]


def flop_per_cycle_per_core(simd_bits: int, element_bits: int, vector_units: int,
                            flop_per_lane_op: int = 2) -> float:
    r"""FLOP one core can complete per cycle: :math:`u \ell f`.

    Parameters
    ----------
    simd_bits, element_bits : int
        Register width and element width (bits).
    vector_units : int
        Vector units that each start one operation per cycle, :math:`u`.
    flop_per_lane_op : int
        FLOP per lane per operation, :math:`f`: 2 for a fused multiply-add, 1 otherwise.

    >>> flop_per_cycle_per_core(512, 32, 2)     # two AVX-512 FMA units, fp32
    64.0
    """
    f = positive_int("flop_per_lane_op", flop_per_lane_op)
    if f > 2:
        raise ValueError(f"flop_per_lane_op must be 1 or 2, got {flop_per_lane_op!r}")
    u = positive_int("vector_units", vector_units)
    return float(u * simd_lanes(simd_bits, element_bits) * f)


def cpu_peak_flop_per_s(*, n_cores: int, clock_hz: float, simd_bits: int, element_bits: int,
                        vector_units: int, flop_per_lane_op: int = 2) -> float:
    r"""Peak FLOP/s of a CPU: cores x clock x units x lanes x FLOP per lane (eq-cpu-peak).

    .. math:: P = c \,\nu\, u \,\ell\, f

    Parameters
    ----------
    n_cores : int
        Cores :math:`c` doing arithmetic.
    clock_hz : float
        Clock :math:`\nu` while they do (Hz). Wide vector code often runs below the nominal clock.
    simd_bits, element_bits, vector_units, flop_per_lane_op
        As in :func:`flop_per_cycle_per_core`.

    Returns
    -------
    float
        :math:`P` (FLOP/s).

    Assumptions
    -----------
    Every unit starts an operation every cycle, on full registers, on every core at once;
    loads, stores and loop overhead are free. Real code gets a fraction of it.

    Equals :func:`helpers.models.gpu_peaks.sm_peak_flop_per_s` with a core in place of an SM and
    :math:`u \ell f / 2` FMA-equivalents per clock.

    References
    ----------
    Hennessy and Patterson (2012), figure 4.11: the Core i7 920 (four cores at 2.66 GHz, a
    128-bit SSE add unit and a 128-bit SSE multiply unit, fp64) peaks at 42.66 GFLOP/s.

    Examples
    --------
    >>> round(cpu_peak_flop_per_s(n_cores=4, clock_hz=8e9 / 3, simd_bits=128, element_bits=64,
    ...                           vector_units=2, flop_per_lane_op=1) / 1e9, 2)
    42.67
    """
    c = positive_int("n_cores", n_cores)
    nu = positive("clock_hz", clock_hz)
    per_cycle = flop_per_cycle_per_core(simd_bits, element_bits, vector_units, flop_per_lane_op)
    # The same product as the GPU peak, a core in place of an SM: count x FMA-equivalents
    # per clock x 2 x clock. This function only splits the per-core rate into its parts.
    return _peak_from_fma_rate(c, per_cycle / 2, nu)


def ops_in_flight(latency_cycles: float, ops_per_cycle: float) -> float:
    r"""Independent operations needed to keep pipelined units busy: :math:`L \times u`.

    .. math:: N = L \, u          (eq-ops-in-flight; Little's law)

    >>> ops_in_flight(4, 2)    # an FMA latency of 4 cycles, two FMA units
    8.0
    """
    return positive("latency_cycles", latency_cycles) * positive("ops_per_cycle", ops_per_cycle)
