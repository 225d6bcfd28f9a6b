r"""Amdahl's law: how much a faster part shortens the whole.

If a fraction :math:`f` of a task's time is made :math:`s` times faster and the rest is left
alone, the whole task becomes

.. math::

    \text{speedup}(f, s) = \frac{1}{(1 - f) + f / s}                          \qquad\text{(eq-amdahl)}

times faster, and never more than :math:`1/(1-f)` however large :math:`s` grows. A request to
a chat service is a chain of stages (tokenization, waiting in a queue, prefill, decode,
network); :func:`request_speedup` applies the same arithmetic to several stages at once.

Introduced in {ref}`sec-performance-models`.

References
----------
* Amdahl, G. M. (1967), "Validity of the single processor approach to achieving large scale
  computing capabilities", AFIPS Spring Joint Computer Conference, 483-485: a sequential
  40 % overhead, reducible by a factor of two to three, caps the speedup at "five to seven
  times".
* Hennessy, J. L. and Patterson, D. A. (2012), *Computer Architecture: A Quantitative
  Approach*, 5th ed., section 1.9: the formula as written here, and the web-server example
  (40 % of the time made 10 times faster gives 1.56).
* Bryant, R. E. and O'Hallaron, D. R. (2015), *Computer Systems: A Programmer's
  Perspective*, 3rd ed., section 1.9.1: 60 % of the time made 3 times faster gives 1.67, and
  at most 2.5.

Used by: chapters/performance-models.md, foundations/threads-and-processes.md.
"""

from __future__ import annotations

import math
from typing import Mapping

from ._checks import fraction as _fraction
from ._checks import positive as _positive
from . import _checks

__all__ = ["amdahl_speedup", "amdahl_limit", "required_factor", "request_time_s",
           "request_speedup", "gustafson_speedup"]




def amdahl_speedup(fraction_improved: float, factor: float) -> float:
    r"""Speedup (dimensionless) of a whole task when a fraction of its time runs ``factor`` times faster.

    .. math:: \text{speedup} = \frac{1}{(1 - f) + f / s}     (the page labels this eq-amdahl)

    Parameters
    ----------
    fraction_improved : float
        :math:`f`, the fraction of the original time spent in the part that is improved,
        in [0, 1].
    factor : float
        :math:`s`, how many times faster that part becomes (> 0; below 1 is a slowdown).
        ``math.inf`` is accepted and gives the limit :math:`1/(1-f)` (:func:`amdahl_limit`):
        with :math:`N` processors, :math:`s = N` and :math:`N = \infty` is Amdahl's own bound.

    Returns
    -------
    float
        The speedup: original time over new time.

    Assumptions
    -----------
    The improved part and the rest run one after the other (no overlap), and improving one
    part leaves the other's time unchanged.

    References
    ----------
    Amdahl (1967); Hennessy and Patterson (2012), section 1.9.

    Examples
    --------
    Hennessy and Patterson's web server, 40 % of its time in computation made 10 times faster:

    >>> round(amdahl_speedup(0.4, 10.0), 2)
    1.56
    >>> amdahl_speedup(0.8, math.inf) == amdahl_limit(0.8)
    True
    """
    f = _fraction("fraction_improved", fraction_improved)
    if _checks.as_float(factor) == math.inf:
        return amdahl_limit(f)
    s = _positive("factor", factor)
    return 1.0 / ((1.0 - f) + f / s)


def amdahl_limit(fraction_improved: float) -> float:
    r"""Largest speedup (dimensionless) from improving a fraction :math:`f` of the time: :math:`1/(1-f)`.

    Returns ``math.inf`` for :math:`f = 1`.

    Examples
    --------
    Amdahl's 1967 argument: a sequential share of 20 % caps the speedup at five.

    >>> round(amdahl_limit(0.8), 6)
    5.0
    """
    f = _fraction("fraction_improved", fraction_improved)
    return math.inf if f == 1.0 else 1.0 / (1.0 - f)


def required_factor(fraction_improved: float, target_speedup: float) -> float:
    r"""How many times faster (dimensionless) the improved part must become for a target speedup.

    Solving eq-amdahl for :math:`s`:

    .. math:: s = \frac{f}{1/\text{speedup} - (1 - f)}

    Raises ``ValueError`` if ``target_speedup`` is not below :func:`amdahl_limit`, because no
    factor reaches it.

    Examples
    --------
    To make a request 1.5 times faster when 60 % of it is GPU time, the GPU part must become
    2.25 times faster:

    >>> round(required_factor(0.6, 1.5), 6)
    2.25
    """
    f = _fraction("fraction_improved", fraction_improved)
    target = _positive("target_speedup", target_speedup)
    limit = amdahl_limit(f)
    if target >= limit:
        raise ValueError(f"target_speedup must be in (0, {limit:.6g}) for fraction_improved="
                         f"{f!r} (the Amdahl limit), got {target!r}")
    return f / (1.0 / target - (1.0 - f))


def _stages(stage_times_s: Mapping[str, float], speedups: Mapping[str, float]):
    if not stage_times_s:
        raise ValueError("stage_times_s must name at least one stage")
    times = {}
    for name, t in stage_times_s.items():
        t = float(t)
        if not (math.isfinite(t) and t >= 0):
            raise ValueError(f"stage_times_s[{name!r}] must be in [0, inf), got {t!r}")
        times[name] = t
    if sum(times.values()) <= 0:
        raise ValueError("stage_times_s must have a positive total")
    for name, s in speedups.items():
        if name not in times:
            raise ValueError(f"speedups names stage {name!r}, which is not in stage_times_s "
                             f"(stages: {sorted(times)})")
        _positive(f"speedups[{name!r}]", s)
    return times


def request_time_s(stage_times_s: Mapping[str, float],
                   speedups: Mapping[str, float] | None = None) -> float:
    r"""Time (s) of a request made of sequential stages, after speeding some of them up.

    .. math:: T' = \sum_i t_i / s_i     (stages not named in ``speedups`` keep :math:`s_i = 1`)

    Parameters
    ----------
    stage_times_s : mapping of str to float
        Each stage's original time :math:`t_i` (s, >= 0).
    speedups : mapping of str to float, optional
        The factor :math:`s_i` (> 0) by which a named stage becomes faster.

    Returns
    -------
    float
        :math:`T'` (s).

    Examples
    --------
    >>> request_time_s({"queue": 0.2, "gpu": 0.6, "network": 0.2}, {"gpu": 2.0})
    0.7
    """
    _checks.mapping("stage_times_s", stage_times_s)
    if speedups is not None:
        _checks.mapping("speedups", speedups)
    speedups = dict(speedups or {})
    times = _stages(stage_times_s, speedups)
    return sum(t / float(speedups.get(name, 1.0)) for name, t in times.items())


def request_speedup(stage_times_s: Mapping[str, float],
                    speedups: Mapping[str, float] | None = None) -> float:
    r"""Speedup (dimensionless) of a whole request when some of its stages get faster.

    .. math:: \text{speedup} = \frac{\sum_i t_i}{\sum_i t_i / s_i}

    With one improved stage this is eq-amdahl with :math:`f = t_j / \sum_i t_i`.

    Examples
    --------
    >>> round(request_speedup({"queue": 0.2, "gpu": 0.6, "network": 0.2}, {"gpu": 2.0}), 4)
    1.4286
    """
    _checks.mapping("stage_times_s", stage_times_s)
    if speedups is not None:
        _checks.mapping("speedups", speedups)
    speedups = dict(speedups or {})
    times = _stages(stage_times_s, speedups)
    return sum(times.values()) / request_time_s(times, speedups)


def gustafson_speedup(serial_fraction: float, n_processors: float) -> float:
    r"""Scaled (weak-scaling) speedup (dimensionless) of Gustafson's law on :math:`N` processors.

    .. math:: \text{scaled speedup} = s' + p' N = N + (1 - N)\, s'

    Amdahl's law (:func:`amdahl_speedup`) keeps the problem fixed and lets the time shrink;
    Gustafson's keeps the time fixed and lets the problem grow with :math:`N`: the serial part
    :math:`s'` stays the same and the parallel part is :math:`N` times larger, so a single
    processor would need :math:`s' + p' N` for what :math:`N` processors do in
    :math:`s' + p' = 1`.

    Parameters
    ----------
    serial_fraction : float
        :math:`s'`, the fraction of the time *on the parallel system* spent in serial parts,
        in [0, 1] (not Amdahl's :math:`f`, which is measured on one processor).
    n_processors : float
        :math:`N` (>= 1; a real number so that a curve can be drawn through it).

    Returns
    -------
    float
        The scaled speedup, between 1 (:math:`s' = 1`) and :math:`N` (:math:`s' = 0`).

    Assumptions
    -----------
    The serial time does not grow with the problem; the parallel work grows linearly with
    :math:`N` and divides perfectly among the processors.

    References
    ----------
    Gustafson, J. L. (1988), "Reevaluating Amdahl's Law", CACM 31(5), 532-533: the formula
    (suggested by E. Barsis), and speedups of 1020 and 1016 on a 1024-processor hypercube
    for applications with a serial share of 0.4 to 0.8 percent.

    Examples
    --------
    Gustafson's hypercube, N = 1024, serial share 0.4 % and 0.8 %:

    >>> round(gustafson_speedup(0.004, 1024)), round(gustafson_speedup(0.008, 1024))
    (1020, 1016)
    """
    s = _fraction("serial_fraction", serial_fraction)
    n = _checks.real("n_processors", n_processors, low=1.0)
    return n + (1.0 - n) * s
