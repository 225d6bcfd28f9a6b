r"""SIMD: lanes per vector, and when vectorised code pays for its call overhead.

The models of {ref}`sec-simd-vectorization`:

* :func:`simd_lanes`: how many elements one vector register holds (``eq-simd-lanes``);
* :func:`affine_time_s` and :func:`crossover_elements`: a loop's time as a fixed cost per call
  plus a cost per element, and the size at which a vectorised call with a large fixed cost
  beats a scalar loop with a small one (``eq-simd-crossover``).

Symbols: :math:`W` vector width (bits), :math:`s` element size (bits), :math:`n` elements,
:math:`c` fixed cost of a call (s), :math:`e` cost per element (s).

Used by: foundations/simd-vectorization.md.
"""

from __future__ import annotations

import math

from ._checks import positive, positive_int

__all__ = ["simd_lanes", "affine_time_s", "crossover_elements", "fit_affine"]


def simd_lanes(simd_bits: int, element_bits: int) -> int:
    r"""Elements of ``element_bits`` that one ``simd_bits``-wide register holds.

    .. math:: \text{lanes} = W / s          (the page labels this eq-simd-lanes)

    Parameters
    ----------
    simd_bits : int
        :math:`W`: 128 (SSE, Arm NEON), 256 (AVX, AVX2), 512 (AVX-512).
    element_bits : int
        :math:`s`: 64 (float64, int64), 32 (float32), 16 (bf16, fp16, int16), 8 (int8).

    Returns
    -------
    int
        The number of lanes; one vector instruction does that many element operations.

    References
    ----------
    Intel 64 and IA-32 Architectures Optimization Reference Manual, chapter 2 (SSE2: two packed
    doubles, or 16 bytes, 8 words, 4 doublewords, 2 quadwords in a 128-bit register).

    Examples
    --------
    >>> simd_lanes(128, 64), simd_lanes(512, 32), simd_lanes(512, 8)
    (2, 16, 64)
    """
    w = positive_int("simd_bits", simd_bits)
    s = positive_int("element_bits", element_bits)
    if w % s:
        raise ValueError(f"simd_bits ({w}) must be a multiple of element_bits, got {s!r}")
    return w // s


def affine_time_s(n_elements: float, per_call_s: float, per_element_s: float) -> float:
    r"""Time of one call over ``n_elements``: fixed cost plus cost per element (s).

    .. math:: t(n) = c + e \, n
    """
    n = positive("n_elements", n_elements, allow_zero=True)
    c = positive("per_call_s", per_call_s, allow_zero=True)
    e = positive("per_element_s", per_element_s)
    return c + e * n


def crossover_elements(vector_call_s: float, vector_element_s: float, scalar_call_s: float,
                       scalar_element_s: float) -> float:
    r"""Elements above which the vectorised call is faster than the scalar loop.

    .. math:: n^* = \frac{c_v - c_s}{e_s - e_v}      (the page labels this eq-simd-crossover)

    Parameters
    ----------
    vector_call_s, vector_element_s : float
        :math:`c_v, e_v`: the vectorised call's fixed cost and cost per element (s).
    scalar_call_s, scalar_element_s : float
        :math:`c_s, e_s`: the scalar loop's fixed cost and cost per element (s); the scalar
        cost per element must exceed the vector one.

    Returns
    -------
    float
        :math:`n^*` (elements); 0 if the vector call is never slower.

    Assumptions
    -----------
    Both times are affine in :math:`n` (the data stay in one level of the memory hierarchy).

    Examples
    --------
    >>> round(crossover_elements(1e-6, 1e-10, 50e-9, 50e-9), 1)   # NumPy-like vs Python loop
    19.0
    """
    cv = positive("vector_call_s", vector_call_s, allow_zero=True)
    ev = positive("vector_element_s", vector_element_s)
    cs = positive("scalar_call_s", scalar_call_s, allow_zero=True)
    es = positive("scalar_element_s", scalar_element_s)
    if es <= ev:
        raise ValueError(f"scalar_element_s must exceed vector_element_s ({ev!r}), got {es!r}")
    return max(0.0, (cv - cs) / (es - ev))


def fit_affine(n_small: float, t_small_s: float, n_large: float, t_large_s: float
               ) -> tuple[float, float]:
    r"""(per_call_s, per_element_s) of the line through two measured (n, t) points.

    A negative intercept from noise is clipped to 0.

    >>> c, e = fit_affine(10, 2e-6, 1010, 12e-6)
    >>> round(c * 1e6, 6), round(e * 1e9, 6)
    (1.9, 10.0)
    """
    n1 = positive("n_small", n_small, allow_zero=True)
    n2 = positive("n_large", n_large)
    t1 = positive("t_small_s", t_small_s)
    t2 = positive("t_large_s", t_large_s)
    if n2 <= n1:
        raise ValueError(f"n_large must exceed n_small ({n1!r}), got {n2!r}")
    e = (t2 - t1) / (n2 - n1)
    if not (math.isfinite(e) and e > 0):
        raise ValueError(f"the times must grow with n, got {t1!r} at {n1!r} and {t2!r} at {n2!r}")
    return max(0.0, t1 - e * n1), e
