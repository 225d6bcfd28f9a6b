"""When compiling pays: the break-even number of calls of a just-in-time compiled function.

A JIT compiler such as ``torch.compile`` spends time :math:`T_c` on the first call (tracing,
lowering, code generation, building) and then saves :math:`t_e - t_c` on every call, where
:math:`t_e` and :math:`t_c` are the eager and compiled times per call.

References
----------
Ansel et al. 2024, "PyTorch 2", ASPLOS '24, section 6 (compilation time reported apart from
the speedups of the compiled models).

Used by: chapters/ml-compilers.md.
"""

from __future__ import annotations

import math

from ._checks import positive
from . import _checks

__all__ = ["break_even_calls", "amortized_time_s"]


def break_even_calls(compile_s: float, eager_s: float, compiled_s: float) -> float:
    r"""Calls after which compiling has paid for itself (dimensionless; inf if it never does).

    .. math:: N^* = \frac{T_c}{t_e - t_c}   (the page labels this eq-comp-break-even)

    Parameters
    ----------
    compile_s : float
        :math:`T_c`, extra time of the first compiled call (s).
    eager_s, compiled_s : float
        :math:`t_e`, :math:`t_c`, time per call eager and compiled (s).

    Returns
    -------
    float
        :math:`N^*` (calls); ``inf`` when :math:`t_c \ge t_e`.

    Assumptions
    -----------
    Every call has the same shapes (no recompilation), and times per call are steady.

    References
    ----------
    Ansel et al. 2024, section 6.

    Examples
    --------
    >>> break_even_calls(10.0, 0.003, 0.001)
    5000.0
    """
    tc = positive("compile_s", compile_s, allow_zero=True)
    te = positive("eager_s", eager_s)
    tk = positive("compiled_s", compiled_s)
    return tc / (te - tk) if te > tk else math.inf


def amortized_time_s(n_calls: int, compile_s: float, compiled_s: float) -> float:
    r"""Total time of ``n_calls`` compiled calls, the compilation included (s).

    .. math:: T(N) = T_c + N\, t_c

    References
    ----------
    Ansel et al. 2024, section 6.

    Examples
    --------
    >>> amortized_time_s(1000, 10.0, 0.001)
    11.0
    """
    if not _checks._is_real(n_calls) or not math.isfinite(float(n_calls)) \
            or not float(n_calls).is_integer() or n_calls < 0:
        raise ValueError(f"n_calls must be an integer in [0, inf), got {n_calls!r}")
    return positive("compile_s", compile_s, allow_zero=True) + int(n_calls) * positive(
        "compiled_s", compiled_s)
