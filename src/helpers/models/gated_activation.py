"""Memory traffic and saved activations of a gated activation, ``silu(a) * b``, fused or not.

SwiGLU's gate (Shazeer 2020) is two elementwise operations on two inputs. PyTorch's eager mode
runs them as separate kernels, each reading its inputs from device memory and writing its
output back; a fused kernel reads ``a`` and ``b`` once and writes the result once. These models
count the passes over :math:`n` elements of :math:`b` bytes, forward and backward, and the
activations autograd keeps for the backward. They complement the unary-chain fusion model of
lesson 10: the gate has two inputs, and its backward produces two gradients.

References
----------
Shazeer 2020, "GLU Variants Improve Transformer", arXiv:2002.05202, equation 6 (SwiGLU);
PyTorch's autograd formulas for ``silu`` and ``mul`` (``tools/autograd/derivatives.yaml``).

Used by: chapters/custom-operators.md.
"""

from __future__ import annotations

from ._checks import positive, positive_int
from . import _checks

__all__ = ["swiglu_passes", "swiglu_traffic_bytes", "swiglu_saved_bytes"]

#: Tensor passes (reads + writes of n elements) per direction: (fused, unfused).
_PASSES = {("forward", True): 3, ("forward", False): 5,
           ("backward", True): 5, ("backward", False): 9}
_SAVED = {True: 2, False: 3}


def swiglu_passes(*, fused: bool, direction: str = "forward") -> int:
    r"""Tensor passes over :math:`n` elements of ``silu(a) * b``, forward or backward.

    .. math:: p_\text{fwd} = 3 \text{ fused},\ 5 \text{ unfused};\qquad p_\text{bwd} = 5 \text{ fused},\ 9 \text{ unfused}

    Forward, unfused: ``s = silu(a)`` reads ``a`` and writes ``s`` (2), ``out = s * b`` reads
    ``s`` and ``b`` and writes ``out`` (3); fused: read ``a``, ``b``, write ``out`` (3).
    Backward from the gradient ``g``, unfused (PyTorch's formulas): ``g * b`` (3), ``g * s``
    (3), ``silu_backward`` reads that gradient and ``a`` and writes ``da`` (3); fused: read
    ``a``, ``b``, ``g``, write ``da``, ``db`` (5).

    Parameters
    ----------
    fused : bool
        One kernel each way (True) or PyTorch's eager operations (False).
    direction : {"forward", "backward"}

    Returns
    -------
    int
        Passes :math:`p` (dimensionless).

    Assumptions
    -----------
    Each kernel reads every input from device memory and writes every output to it (tensors
    much larger than the caches); the backward recomputes ``sigmoid(a)`` rather than loading it.

    References
    ----------
    Shazeer 2020, equation 6; PyTorch ``tools/autograd/derivatives.yaml`` (``mul``, ``silu``).

    Examples
    --------
    >>> swiglu_passes(fused=False) + swiglu_passes(fused=False, direction="backward")
    14
    """
    _checks.boolean("fused", fused)
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")
    return _PASSES[(direction, bool(fused))]


def swiglu_traffic_bytes(n_elements: int, bytes_per_element: float, *, fused: bool,
                         direction: str = "forward") -> float:
    r"""Bytes read plus written by ``silu(a) * b`` on :math:`n` elements (the page labels
    this eq-ops-traffic).

    .. math:: Q = p\, n\, b \qquad\text{(eq-ops-traffic)}

    Parameters
    ----------
    n_elements : int
        Elements :math:`n` in each of ``a`` and ``b``.
    bytes_per_element : float
        :math:`b` (bytes; 2 for bf16).
    fused : bool
        One kernel each way (True) or PyTorch's eager operations (False).
    direction : {"forward", "backward"}

    Returns
    -------
    float
        :math:`Q` (bytes).

    Assumptions
    -----------
    Those of :func:`swiglu_passes`.

    References
    ----------
    Shazeer 2020, equation 6; the pass counts of :func:`swiglu_passes`.

    Examples
    --------
    >>> swiglu_traffic_bytes(1000, 2.0, fused=True)
    6000.0
    """
    _checks.boolean("fused", fused)
    n = positive_int("n_elements", n_elements)
    b = positive("bytes_per_element", bytes_per_element)
    return float(swiglu_passes(fused=fused, direction=direction) * n * b)


def swiglu_saved_bytes(n_elements: int, bytes_per_element: float, *, fused: bool) -> float:
    r"""Bytes autograd keeps from the forward of ``silu(a) * b`` for its backward.

    .. math:: M_\text{saved} = 2\, n\, b \text{ fused},\quad 3\, n\, b \text{ unfused}

    Unfused, ``silu`` saves its input ``a`` and ``mul`` saves both of its inputs, ``s`` and
    ``b``; the fused operator saves ``a`` and ``b`` and recomputes ``s``.

    Parameters
    ----------
    n_elements : int
        Elements :math:`n` in each of ``a`` and ``b``.
    bytes_per_element : float
        :math:`b` (bytes).
    fused : bool

    Returns
    -------
    float
        :math:`M_\text{saved}` (bytes).

    References
    ----------
    PyTorch ``tools/autograd/derivatives.yaml`` (``mul`` saves ``self`` and ``other``;
    ``silu`` saves ``self``).

    Examples
    --------
    >>> swiglu_saved_bytes(1000, 2.0, fused=False) - swiglu_saved_bytes(1000, 2.0, fused=True)
    2000.0
    """
    _checks.boolean("fused", fused)
    n = positive_int("n_elements", n_elements)
    b = positive("bytes_per_element", bytes_per_element)
    return float(_SAVED[bool(fused)] * n * b)
