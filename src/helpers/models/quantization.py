r"""Symmetric integer quantization of weights: scales, round trips, errors and memory.

A weight :math:`w` is stored as a signed integer :math:`q` of :math:`b` bits and a scale
:math:`s` shared by a block of weights (the whole tensor, one output row, or a group of
:math:`G` consecutive inputs of a row):

.. math::

    s = \frac{\max |w|}{q_{\max}},\qquad q = \operatorname{clip}\bigl(\operatorname{round}(w / s),
    -q_{\max}, q_{\max}\bigr),\qquad \hat w = s\,q,\qquad q_{\max} = 2^{b-1} - 1
    \qquad\text{(eq-qs-absmax)}

This is *absmax* (symmetric) quantization: the grid is centred on zero, has no zero point,
and uses :math:`-q_{\max} .. q_{\max}` (the most negative two's-complement code, e.g. -128,
is left unused so the grid is symmetric). Three granularities:

* ``"tensor"``: one scale for the whole matrix (LLM.int8()'s "absmax" baseline);
* ``"channel"``: one scale per output row (per-channel / "vector-wise" int8);
* ``"group"``: one scale per group of ``group_size`` consecutive inputs of each row (the
  int4 "g128" formats of GPTQ and AWQ, and llama.cpp's Q4_0 / Q8_0 blocks of 32).

Every function takes numpy arrays or torch tensors (2-D ``(out_features, in_features)`` for
the matrix functions) and returns the same kind, on the same device. Introduced in
{ref}`sec-quantization-and-speculation`; the integer formats themselves are
:mod:`helpers.models.numerics`'s ``int8`` and ``int4``.

References
----------
* Dettmers, T. et al. (2022), "LLM.int8(): 8-bit Matrix Multiplication for Transformers at
  Scale", NeurIPS, section 2.1 (absmax quantization: scale 127 / max|X|) and section 3
  (vector-wise quantization; outlier features inflate the scale).
* Frantar, E. et al. (2023), "GPTQ: Accurate Post-Training Quantization for Generative
  Pre-trained Transformers", ICLR (3- and 4-bit weights, grouping of 128 columns).
* Lin, J. et al. (2024), "AWQ: Activation-aware Weight Quantization for LLM Compression and
  Acceleration", MLSys (int4 weights, group size 128, fp16 scales).
* llama.cpp, ``ggml/src/ggml-common.h``: ``block_q4_0`` is one fp16 scale and 32 4-bit
  values (``sizeof == sizeof(ggml_half) + QK4_0 / 2`` = 18 bytes, 4.5 bits per weight);
  ``block_q8_0`` is one fp16 scale and 32 int8 values (34 bytes, 8.5 bits per weight).

Used by: chapters/quantization-and-speculation.md, labs/quantization.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from .numerics import FORMATS, IntFormat, max_finite, number_format
from . import _checks

__all__ = [
    "GRANULARITIES", "qmax", "absmax_scales", "quantize", "dequantize", "fake_quantize",
    "max_rounding_error", "rms_rounding_error", "outlier_levels", "bits_per_weight",
    "quantized_weight_bytes", "absmax_multiplier", "fp8_tensor_scale",
    "absmax_rms_rounding_error",
]

#: The scale granularities, coarsest first.
GRANULARITIES = ("tensor", "channel", "group")


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _int_format(bits) -> IntFormat:
    if isinstance(bits, str):
        if bits not in FORMATS or not isinstance(FORMATS[bits], IntFormat):
            raise ValueError(f"bits must name an integer format (int8, int4) or be an integer in "
                             f"[2, 16], got {bits!r}")
        f = number_format(bits)
        if not isinstance(f, IntFormat):
            raise ValueError(f"bits must name an integer format (int8, int4), got {bits!r}")
        return f
    b = _positive_int("bits", bits, minimum=2)
    if b > 16:
        raise ValueError(f"bits must be an integer in [2, 16], got {bits!r}")
    return IntFormat(f"int{b}", b, "two's complement")


def qmax(bits=8) -> float:
    r"""Largest code of the symmetric ``bits``-bit grid, :math:`q_{\max} = 2^{b-1} - 1`.

    .. math:: q_{\max} = 2^{b-1} - 1

    Parameters
    ----------
    bits : int or str
        Bit width (2..16) or an integer format's name (``"int8"``, ``"int4"``).

    Returns
    -------
    float
        127 for int8, 7 for int4 (dimensionless).

    References
    ----------
    Dettmers et al. (2022), section 2.1: int8 absmax scales by 127.

    Examples
    --------
    >>> qmax(8), qmax("int4")
    (127.0, 7.0)
    """
    return max_finite(_int_format(bits))


def _check_matrix(w):
    if getattr(w, "ndim", None) != 2:
        raise ValueError(f"w must be a 2-D (out_features, in_features) array, got shape "
                         f"{tuple(getattr(w, 'shape', ()))}")
    if _is_torch(w):
        import torch
        if not bool(torch.isfinite(w).all()):
            raise ValueError("w must be finite (it holds NaN or inf)")
    elif not np.all(np.isfinite(w)):
        raise ValueError("w must be finite (it holds NaN or inf)")


def _check_codes(name: str, x, *, scales: bool = False):
    """Refuse ``x`` unless it is a 2-D array or tensor of finite numbers (>= 0 for scales)."""
    what = "finite and >= 0" if scales else "finite"
    if getattr(x, "ndim", None) != 2:
        raise ValueError(f"{name} must be a 2-D array or tensor, {what}, got "
                         f"{type(x).__name__} of shape {tuple(getattr(x, 'shape', ()))}")
    if _is_torch(x):
        import torch
        ok = bool(torch.isfinite(x).all()) and (not scales or bool((x >= 0).all()))
    else:
        ok = x.dtype.kind in "iuf" and bool(np.all(np.isfinite(x))) \
            and (not scales or bool(np.all(x >= 0)))
    if not ok:
        raise ValueError(f"{name} must be {what} (it holds NaN, inf"
                         f"{', a negative value' if scales else ''} or a non-number)")


def _groups(w, granularity: str, group_size):
    """View of ``w`` as (rows, n_groups, group_len) blocks and the reduction axes."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
    rows, cols = w.shape
    if granularity == "group":
        g = _positive_int("group_size", group_size)
        if cols % g:
            raise ValueError(f"group_size must divide in_features ({cols}), got {g}")
        return w.reshape(rows, cols // g, g)
    return w.reshape(rows, 1, cols)


def absmax_scales(w, granularity: str = "channel", *, bits=8, group_size: int | None = None):
    r"""Absmax scales of ``w`` (same units as ``w``): one per tensor, row or group.

    .. math:: s = \frac{\max_{\text{block}} |w|}{2^{b-1} - 1}          (the page labels this eq-qs-absmax)

    Parameters
    ----------
    w : array or tensor, shape (out_features, in_features)
        The weights (finite).
    granularity : {"tensor", "channel", "group"}
        Which block shares a scale: the whole matrix, one output row, or ``group_size``
        consecutive inputs of a row.
    bits : int or str
        Bit width of the codes (``8``, ``4``, ``"int8"``...).
    group_size : int
        :math:`G`, inputs per group (``"group"`` only; must divide ``in_features``).

    Returns
    -------
    array or tensor
        Shape (1, 1), (out, 1) or (out, in / G), same kind, dtype and device as ``w``. A block
        of zeros gets scale 0 (its codes are all 0).

    Assumptions
    -----------
    Symmetric grid without zero point; the scale maps the block's largest magnitude exactly
    onto :math:`q_{\max}`, so nothing clips.

    References
    ----------
    Dettmers et al. (2022), section 2.1 (absmax) and section 3.1 (vector-wise scales).

    Examples
    --------
    >>> w = np.array([[0.5, -1.27], [0.1, 0.2]])
    >>> absmax_scales(w, "tensor").tolist(), (absmax_scales(w, "channel") * 127).round(6).ravel().tolist()
    ([[0.01]], [1.27, 0.2])
    """
    _check_matrix(w)
    qm = qmax(bits)
    blocks = _groups(w, granularity, group_size)
    if _is_torch(w):
        amax = blocks.abs().amax(dim=-1)
        if granularity == "tensor":
            amax = amax.amax().reshape(1, 1)
    else:
        amax = np.abs(blocks).max(axis=-1)
        if granularity == "tensor":
            amax = amax.max().reshape(1, 1)
    return amax / qm


def _expand(scales, w):
    """Scales broadcast to ``w``'s shape (each group's scale repeated over its columns)."""
    rows, cols = w.shape
    n = scales.shape[1]
    rep = cols // n
    if _is_torch(w):
        return scales.repeat_interleave(rep, dim=1).expand(rows, cols)
    return np.broadcast_to(np.repeat(scales, rep, axis=1), (rows, cols))


def quantize(w, scales, *, bits=8):
    r"""Integer codes :math:`q = \operatorname{clip}(\operatorname{round}(w/s), -q_{\max}, q_{\max})`.

    .. math:: q = \operatorname{clip}\bigl(\operatorname{round}(w / s), -q_{\max}, q_{\max}\bigr)

    Parameters
    ----------
    w : array or tensor, shape (out_features, in_features)
        The weights.
    scales : array or tensor
        From :func:`absmax_scales` (or any positive scales of shape (1, 1), (out, 1) or
        (out, n_groups)).
    bits : int or str
        Bit width of the codes.

    Returns
    -------
    array or tensor
        The codes as floats holding integers in :math:`[-q_{\max}, q_{\max}]` (so int4 codes
        fit a wider integer dtype; packing two per byte is the kernel's business). Blocks with
        scale 0 get code 0.

    Assumptions
    -----------
    Round half to even (numpy's and torch's ``round``).

    References
    ----------
    Dettmers et al. (2022), section 2.1, equation 1.

    Examples
    --------
    >>> w = np.array([[0.5, -1.27, 0.004]])
    >>> quantize(w, absmax_scales(w, "tensor")).tolist()
    [[50.0, -127.0, 0.0]]
    """
    _check_codes("scales", scales, scales=True)
    _check_matrix(w)
    qm = qmax(bits)
    if scales.ndim != 2 or scales.shape[0] not in (1, w.shape[0]) or w.shape[1] % scales.shape[1]:
        raise ValueError(f"scales of shape {tuple(scales.shape)} do not fit w of shape "
                         f"{tuple(w.shape)}")
    s = _expand(scales, w)
    if _is_torch(w):
        import torch
        safe = torch.where(s > 0, s, torch.ones_like(s))
        return torch.clamp(torch.round(w / safe), -qm, qm)
    safe = np.where(s > 0, s, 1.0)
    return np.clip(np.round(w / safe), -qm, qm)


def dequantize(q, scales):
    r"""Weights back from codes: :math:`\hat w = s\,q` (same units as the scales).

    .. math:: \hat w = s\,q

    Parameters
    ----------
    q : array or tensor, shape (out_features, in_features)
        Codes from :func:`quantize`.
    scales : array or tensor
        The scales they were made with.

    Returns
    -------
    array or tensor
        :math:`\hat w`, the value the kernel multiplies with.

    References
    ----------
    Dettmers et al. (2022), section 2.1.

    Examples
    --------
    >>> dequantize(np.array([[50.0, -127.0]]), np.array([[0.01]])).tolist()
    [[0.5, -1.27]]
    """
    _check_codes("q", q)
    _check_codes("scales", scales, scales=True)
    return _expand(scales, q) * q


def fake_quantize(w, granularity: str = "channel", *, bits=8, group_size: int | None = None):
    r"""The round trip :math:`\hat w = s\,\operatorname{round}(w/s)`: the weights a quantized
    model computes with, in ``w``'s dtype.

    .. math:: \hat w = s \cdot \operatorname{clip}\bigl(\operatorname{round}(w/s), -q_{\max}, q_{\max}\bigr)

    Parameters
    ----------
    w : array or tensor, shape (out_features, in_features)
        The weights.
    granularity, bits, group_size
        As in :func:`absmax_scales`.

    Returns
    -------
    array or tensor
        :math:`\hat w`, same shape, kind and dtype as ``w``.

    Assumptions
    -----------
    Round to nearest with absmax scales: no calibration data, no error feedback (GPTQ) and
    no activation-aware rescaling (AWQ); those methods lower the error this one sets.

    References
    ----------
    Dettmers et al. (2022), section 2.1; Frantar et al. (2023), section 2 (round-to-nearest
    as the baseline, "RTN").

    Examples
    --------
    >>> w = np.array([[0.5, -1.27, 0.004]])
    >>> fake_quantize(w, "tensor").round(6).tolist()
    [[0.5, -1.27, 0.0]]
    """
    s = absmax_scales(w, granularity, bits=bits, group_size=group_size)
    out = dequantize(quantize(w, s, bits=bits), s)
    return out.to(w.dtype) if _is_torch(w) else out.astype(w.dtype, copy=False)


def max_rounding_error(scale):
    r"""Largest error of rounding to a grid of step ``scale``: :math:`|\hat w - w| \le s/2`.

    .. math:: |\hat w - w| \le \frac{s}{2}                         (eq-qs-maxerr)

    Parameters
    ----------
    scale : float or array
        The grid step :math:`s` (> 0, units of :math:`w`).

    Returns
    -------
    float or array
        :math:`s / 2`.

    Assumptions
    -----------
    Values inside the grid's range (absmax scales guarantee this: nothing clips).

    References
    ----------
    Widrow, B. & Kollár, I. (2008), *Quantization Noise*, Cambridge University Press (the
    uniform quantizer's error lies in :math:`[-q/2, q/2]`).

    Examples
    --------
    >>> max_rounding_error(0.01)
    0.005
    """
    from ._checks import positive_array
    return positive_array("scale", scale) / 2


def rms_rounding_error(scale):
    r"""RMS error of rounding values spread over many grid steps: :math:`s/\sqrt{12}`.

    .. math:: \sqrt{\mathbb{E}[(\hat w - w)^2]} = \frac{s}{\sqrt{12}}      (eq-qs-rmserr)

    Parameters
    ----------
    scale : float or array
        The grid step :math:`s` (> 0).

    Returns
    -------
    float or array
        :math:`s/\sqrt{12} \approx 0.289\,s`.

    Assumptions
    -----------
    The rounding error is uniform on :math:`[-s/2, s/2]`: true when the values' density is
    smooth over a step (they span many steps). It fails for values that sit on a few codes
    (a block whose magnitudes are all near zero rounds to 0 with error :math:`|w|`).

    References
    ----------
    Widrow & Kollár (2008): the uniform quantizer's noise has variance
    :math:`q^2/12`; Bennett, W. R. (1948), "Spectra of quantized signals", *Bell System
    Technical Journal* 27.

    Examples
    --------
    >>> round(rms_rounding_error(1.0), 4)
    0.2887
    """
    from ._checks import positive_array
    return positive_array("scale", scale) / math.sqrt(12)


def outlier_levels(typical_absmax: float, outlier_absmax: float, *, bits=8) -> float:
    r"""Codes left for the ordinary weights of a block whose scale an outlier sets.

    .. math:: n_{\text{levels}} = q_{\max}\,\frac{\max|w_{\text{typical}}|}{\max|w_{\text{outlier}}|}
       \qquad\text{(eq-qs-outlier)}

    With one outlier :math:`k` times larger than the rest, absmax stretches the grid by
    :math:`k`: the ordinary weights use only :math:`q_{\max}/k` of the codes on each side,
    and their RMS error grows :math:`k` times (:func:`rms_rounding_error` of the larger scale).

    Parameters
    ----------
    typical_absmax : float
        Largest magnitude among the ordinary weights (> 0).
    outlier_absmax : float
        Largest magnitude in the block, outlier included (>= ``typical_absmax``).
    bits : int or str
        Bit width of the codes.

    Returns
    -------
    float
        Positive codes the ordinary weights span (dimensionless; :math:`q_{\max}` with no
        outlier).

    References
    ----------
    Dettmers et al. (2022), section 3 and 4: outlier features of magnitude up to 20x the
    others appear in all layers beyond 6.7B parameters and break per-tensor int8; their
    mixed-precision decomposition keeps them in fp16.

    Examples
    --------
    >>> outlier_levels(1.0, 20.0)
    6.35
    """
    t = _positive("typical_absmax", typical_absmax)
    o = _positive("outlier_absmax", outlier_absmax)
    if o < t:
        raise ValueError(f"outlier_absmax must be >= typical_absmax ({t}), got {o}")
    return qmax(bits) * t / o


def bits_per_weight(bits, *, group_size: int | None = None, scale_bits: float = 16,
                    zero_bits: float = 0) -> float:
    r"""Storage bits per weight of a grouped format, scales included.

    .. math:: b_{\text{eff}} = b + \frac{b_s + b_z}{G}                  (eq-qs-bpw)

    Parameters
    ----------
    bits : int or str
        :math:`b`, bits of each code.
    group_size : int or None
        :math:`G`, weights sharing one scale (``in_features`` for per-channel); ``None``
        ignores the scales (one per tensor is negligible).
    scale_bits : float
        :math:`b_s`, bits of each scale (16 for fp16 or bf16).
    zero_bits : float
        :math:`b_z`, bits of a zero point per group (0 for the symmetric formats here; GPTQ's
        asymmetric packing stores one).

    Returns
    -------
    float
        :math:`b_{\text{eff}}` (bits; divide by 8 for bytes).

    References
    ----------
    llama.cpp ``ggml/src/ggml-common.h``: ``block_q4_0`` = 2 + 16 bytes for 32 weights
    (4.5 bits per weight), ``block_q8_0`` = 2 + 32 bytes (8.5); Lin et al. (2024): int4
    with group size 128 and fp16 scales.

    Examples
    --------
    >>> bits_per_weight(4, group_size=128), bits_per_weight(4, group_size=32)
    (4.125, 4.5)
    """
    if group_size is not None:
        _checks.positive_int("group_size", group_size)
    b = _int_format(bits).bits
    sb = _positive("scale_bits", scale_bits, allow_zero=True)
    zb = _positive("zero_bits", zero_bits, allow_zero=True)
    if group_size is None:
        return float(b)
    return b + (sb + zb) / _positive_int("group_size", group_size)


def quantized_weight_bytes(n_params: float, bits, *, group_size: int | None = None,
                           scale_bits: float = 16, zero_bits: float = 0) -> float:
    r"""Bytes of ``n_params`` weights stored in a (grouped) integer format.

    .. math:: Q_w = N\,\frac{b_{\text{eff}}}{8}

    Parameters
    ----------
    n_params : float
        :math:`N`, weights (> 0).
    bits, group_size, scale_bits, zero_bits
        As in :func:`bits_per_weight`.

    Returns
    -------
    float
        Bytes (decimal).

    References
    ----------
    As :func:`bits_per_weight`.

    Examples
    --------
    A 7-billion-weight model in int4 g128 with fp16 scales:

    >>> quantized_weight_bytes(7e9, 4, group_size=128) / 1e9
    3.609375
    """
    if group_size is not None:
        _checks.positive_int("group_size", group_size)
    n = _positive("n_params", n_params)
    return n * bits_per_weight(bits, group_size=group_size, scale_bits=scale_bits,
                               zero_bits=zero_bits) / 8


def absmax_multiplier(amax: float, bits=8) -> float:
    r"""The other absmax convention: the *multiplier* :math:`c = q_{\max} / \max|w|` (dimensionless per unit of ``w``), the reciprocal of the step :func:`absmax_scales` returns.

    .. math:: q = \operatorname{round}(c\,w), \quad c = \frac{q_{\max}}{\max|w|} = \frac{1}{s}

    LLM.int8() writes the int8 code as :math:`\operatorname{round}(127 \cdot w / \max|w|)` and
    calls :math:`127/\max|w|` the scale; GPTQ, AWQ, llama.cpp and this module store the *step*
    :math:`s = \max|w|/127` and dequantize by multiplying by it. Both give the same codes (up
    to a tie flipped by one rounding of :math:`1/s`); a checkpoint read with the wrong
    convention is off by a factor :math:`s^2`, not by a rounding error.

    Parameters
    ----------
    amax : float
        :math:`\max|w|` of the block (> 0).
    bits : int or str
        As :func:`qmax`.

    Returns
    -------
    float
        :math:`c = q_{\max}/\max|w|`.

    References
    ----------
    Dettmers et al. (2022), section 2.1: :math:`X_{i8} = \lfloor 127 X_{f16} / \max|X_{f16}|
    \rceil`, the scale :math:`s_{x_{f16}} = 127/\|X_{f16}\|_\infty`.

    Examples
    --------
    >>> absmax_multiplier(1.27), 1 / absmax_multiplier(1.27)
    (100.0, 0.01)
    """
    a = _checks.positive("amax", amax)
    return _checks.finite_ratio("qmax", qmax(bits), "amax", a)


def fp8_tensor_scale(amax: float, fmt: str = "fp8_e4m3", *, margin: int = 0) -> float:
    r"""Per-tensor FP8 scale (a multiplier, dimensionless per unit of the tensor) that maps ``amax`` to the format's largest value, less a margin.

    .. math:: \sigma = \frac{x_{\max}^{\text{fp8}}}{\text{amax}\; 2^{m}}, \qquad
        x_{\text{fp8}} = \operatorname{cast}(\sigma x), \qquad \hat x = x_{\text{fp8}} / \sigma

    Transformer Engine's convention: the scale multiplies before the cast and its reciprocal
    (``scale_inv``) dequantizes, the reverse of the int8 step of :func:`absmax_scales`. With
    margin :math:`m` the tensor's largest magnitude lands on :math:`2^{-m} x_{\max}`, leaving
    room for the next steps' growth under delayed scaling (amax from past iterations).

    Parameters
    ----------
    amax : float
        Largest magnitude of the tensor (or of its amax history) (> 0).
    fmt : {"fp8_e4m3", "fp8_e5m2"}
        The FP8 format: :math:`x_{\max}` = 448 or 57344.
    margin : int
        :math:`m` (>= 0).

    Returns
    -------
    float
        :math:`\sigma`.

    References
    ----------
    Micikevicius et al. (2022), "FP8 Formats for Deep Learning", table 1 (E4M3 max 448, E5M2
    max 57344) and section 4 (per-tensor scaling); NVIDIA Transformer Engine, ``recipe.h``,
    ``nvte_delayed_scaling_recipe_amax_and_scale_update``: "the FP8 tensor's maximum absolute
    value is :math:`2^{-\text{margin}}\,\text{max}_\text{fp8\_dtype}`".

    Examples
    --------
    >>> fp8_tensor_scale(3.5), fp8_tensor_scale(3.5, margin=1), fp8_tensor_scale(3.5, "fp8_e5m2")
    (128.0, 64.0, 16384.0)
    """
    a = _checks.positive("amax", amax)
    _checks.one_of("fmt", fmt, ("fp8_e4m3", "fp8_e5m2"))
    m = _checks.integer("margin", margin, minimum=0, maximum=1000)
    return _checks.finite_ratio("fp8 max", max_finite(fmt) / 2.0 ** m, "amax", a)


# --- labs3: the RMS error of absmax rounding, block by block (the quantization lab's claim) ---

def absmax_rms_rounding_error(rms_scale, group_size):
    r"""RMS error of absmax rounding of blocks of ``group_size`` weights, each with its own
    step (units of the weights): :math:`\bar s/\sqrt{12}\cdot\sqrt{1 - 1/G}`.

    .. math:: \sqrt{\mathbb{E}[(\hat w - w)^2]} = \frac{\bar s}{\sqrt{12}}\sqrt{1 - \frac{1}{G}}
       \qquad \bar s = \sqrt{\overline{s^2}}                        (eq-qs-rmserr-absmax)

    An absmax scale puts each block's largest weight exactly on its end code
    (:math:`w = q_{\max} s`), so one weight in :math:`G` rounds with no error; the others
    round uniformly as in :func:`rms_rounding_error`. For a group of 32 that is 1.6 % less
    RMS error than :math:`\bar s/\sqrt{12}`; for a row of 4096, 0.01 %.

    Parameters
    ----------
    rms_scale : float or array
        :math:`\bar s`, the RMS over the weights of each weight's own step (> 0).
    group_size : int
        :math:`G`, weights sharing one scale (>= 2: a row's length, a group's, or the whole
        matrix's).

    Returns
    -------
    float or array
        The RMS error, in the units of ``rms_scale``.

    Assumptions
    -----------
    As :func:`rms_rounding_error` for the other :math:`G - 1` weights of a block, and the
    scale exact (an fp16 scale moves the largest weight off its code by at most
    :math:`q_{\max}` fp16 roundings of :math:`s`, negligible next to :math:`s/\sqrt{12}`).

    References
    ----------
    Widrow & Kollár (2008), the uniform quantizer's noise variance :math:`q^2/12`;
    Dettmers et al. (2022), section 2.1: absmax scaling maps :math:`\max|X|` to 127.

    Examples
    --------
    int4 in groups of 32 with a unit step: 0.2887 without the exact weight, 0.2841 with it:

    >>> round(float(absmax_rms_rounding_error(1.0, 32)), 4)
    0.2841
    """
    g = _positive_int("group_size", group_size)
    if g < 2:
        raise ValueError(f"group_size must be >= 2 (one weight per scale has no rounding "
                         f"error), got {group_size!r}")
    return _checks.positive_array("rms_scale", rms_scale) / math.sqrt(12) * math.sqrt(1.0 - 1.0 / g)


# --- the traffic of a weight-only quantized matmul (moved from the quantization lab, issue 16) --

def weight_only_matmul_bytes(m: int, n: int, k: int, *, weight_bits: float,
                             act_bytes: float = 2.0, group_size: int | None = None,
                             scale_bits: float = 16) -> float:
    r"""Bytes (decimal) a decode matmul ``y (M x N) = x (M x K) @ W^T`` moves at least.

    .. math:: Q = Q_w + (M K + M N)\, b_{\text{act}}

    The weights are read once: for ``weight_bits`` >= 16 a dense matrix of :math:`N K` weights
    of ``weight_bits / 8`` bytes and no scales; below that, codes and scales
    (:func:`quantized_weight_bytes` with groups of ``group_size`` weights, by default one scale
    per row of ``k``). The activations ``x`` are read once and ``y`` written once, in
    ``act_bytes`` per element. Source: the compulsory traffic of the roofline (each operand
    read once, the result written once; Williams et al. 2009) with the weights stored as
    :func:`bits_per_weight` counts them (int4 with fp16 scales, as in AWQ, Lin et al. 2024).

    Parameters: ``m`` tokens, ``n`` output and ``k`` reduction width (integers >= 1);
    ``weight_bits`` per weight (> 0; 4 or 8 for a quantized matrix, 16 or 32 for a dense one);
    ``act_bytes`` per activation element (> 0); ``group_size`` weights per scale (None: ``k``);
    ``scale_bits`` per scale.

    >>> weight_only_matmul_bytes(1, 8192, 8192, weight_bits=16) / 2**20  # bf16: 128 MiB + x, y
    128.03125
    >>> weight_only_matmul_bytes(1, 8192, 8192, weight_bits=8) / 2**20   # int8, fp16 row scales
    64.046875
    """
    m = _positive_int("m", m)
    n = _positive_int("n", n)
    k = _positive_int("k", k)
    act_bytes = _positive("act_bytes", act_bytes)
    weight_bits = _positive("weight_bits", weight_bits)
    scale_bits = _positive("scale_bits", scale_bits, allow_zero=True)
    if group_size is not None:
        _positive_int("group_size", group_size)
    if weight_bits >= 16:
        w = n * k * weight_bits / 8
    else:
        w = quantized_weight_bytes(n * k, weight_bits, group_size=group_size or k,
                                   scale_bits=scale_bits)
    return w + (m * k + m * n) * act_bytes


__all__ += ["weight_only_matmul_bytes"]


# --- FP8 (E4M3) W8A8 products and the FP8 KV cache (the quantization lab, issue 19 item 5) ---

def fp8_step(amax: float, fmt: str = "fp8_e4m3", *, margin: int = 0) -> float:
    r"""Per-tensor FP8 scaling in the step convention (units of the tensor): the value one
    unit of the FP8 code stands for, the reciprocal of :func:`fp8_tensor_scale`.

    .. math:: s = \frac{\text{amax}\;2^{m}}{x_{\max}}, \qquad
       x_{\text{fp8}} = \operatorname{cast}(x / s), \qquad \hat x = s\,x_{\text{fp8}}
       \qquad (x_{\max} = 448\ \text{E4M3},\ 57344\ \text{E5M2})

    This is the factor ``torch._scaled_mm`` takes as ``scale_a`` / ``scale_b`` (it multiplies
    the FP8 product by them) and Transformer Engine's ``scale_inv``.

    Parameters
    ----------
    amax : float
        Largest magnitude of the tensor (> 0).
    fmt : {"fp8_e4m3", "fp8_e5m2"}
        The format.
    margin : int
        :math:`m` (>= 0), as in :func:`fp8_tensor_scale`.

    Returns
    -------
    float
        :math:`s`.

    References
    ----------
    Micikevicius et al. (2022), "FP8 Formats for Deep Learning", table 1 (E4M3 largest normal
    448, E5M2 57344) and section 4 (per-tensor scaling).

    Examples
    --------
    >>> fp8_step(448.0), fp8_step(3.5) * fp8_tensor_scale(3.5), fp8_step(57344.0, "fp8_e5m2")
    (1.0, 1.0, 1.0)
    """
    return 1.0 / fp8_tensor_scale(amax, fmt, margin=margin)


def fp8_quantize(x, *, rowwise: bool = False, fmt: str = "fp8_e4m3"):
    r"""Absmax FP8 quantization of a 2-D torch tensor: the codes (``torch.float8_e4m3fn`` or
    ``float8_e5m2``) and the float32 step :math:`s` (:func:`fp8_step`), one for the tensor
    (shape ``()``) or one per row (shape ``(rows, 1)``), as ``torch._scaled_mm`` takes them.

    .. math:: q = \operatorname{cast}_{\text{fp8}}\bigl(\operatorname{clip}(x / s,
       -x_{\max}, x_{\max})\bigr), \qquad s = \max|x| / x_{\max}

    The cast rounds to nearest, ties to even (PyTorch's ``Tensor.to``); the clip only catches
    a value that rounds above :math:`x_{\max}` in float32. A block of zeros gets the step
    :math:`10^{-12}` (any positive step dequantizes zeros exactly). Torch only (numpy has no
    FP8 dtype).

    Parameters
    ----------
    x : torch.Tensor
        2-D, a float dtype, finite.
    rowwise : bool
        One step per row instead of one for the tensor.
    fmt : {"fp8_e4m3", "fp8_e5m2"}
        The FP8 format.

    Returns
    -------
    (torch.Tensor, torch.Tensor)
        The codes and the steps; ``codes.float() * steps`` approximates ``x``.

    References
    ----------
    Micikevicius et al. (2022), section 4 (per-tensor scaling); PyTorch, ``torch._scaled_mm``
    (per-tensor or row-wise float32 scales that multiply the product).

    Examples
    --------
    >>> import torch
    >>> q, s = fp8_quantize(torch.tensor([[0.5, -1.75], [3.0, 0.1]]))
    >>> round(float(s) * 448, 6), q.float().tolist()   # 0.5 / s = 74.7: E4M3's spacing is 8 there
    (3.0, [[72.0, -256.0], [448.0, 15.0]])
    """
    import torch

    _checks.one_of("fmt", fmt, ("fp8_e4m3", "fp8_e5m2"))
    rowwise = _checks.boolean("rowwise", rowwise)
    if not (_is_torch(x) and x.dim() == 2 and x.is_floating_point()):
        raise ValueError(f"x must be a 2-D floating-point torch tensor, got {type(x).__name__} "
                         f"of shape {tuple(getattr(x, 'shape', ()))}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError("x must be finite (no NaN or infinity)")
    dtype = torch.float8_e4m3fn if fmt == "fp8_e4m3" else torch.float8_e5m2
    fmax = max_finite(fmt)
    amax = x.abs().amax(dim=1, keepdim=True) if rowwise else x.abs().amax()
    step = (amax.float() / fmax).clamp_min(1e-12)
    codes = (x.float() / step).clamp(-fmax, fmax).to(dtype)
    return codes, step


def relative_rounding_rms(fmt: str = "fp8_e4m3") -> float:
    r"""RMS relative error of rounding a value to the nearest number of a floating-point format
    (dimensionless), for values far from underflow and overflow whose mantissas follow the
    log-uniform (Benford) law.

    .. math:: \delta = \frac{\varepsilon}{\sqrt{12}}\sqrt{\mathbb{E}\!\left[m^{-2}\right]}
       = \frac{\varepsilon}{\sqrt{12}}\sqrt{\frac{3}{8\ln 2}}, \qquad \varepsilon = 2^{-p}
       \qquad (m \in [1, 2),\ p \text{ mantissa bits})

    A value :math:`x = m\,2^e` rounds with an absolute error uniform over one spacing
    :math:`\varepsilon\,2^e`, of variance :math:`\varepsilon^2 4^e/12`; over :math:`x^2` and
    averaged over the mantissa's density :math:`1/(m \ln 2)`,
    :math:`\mathbb{E}[m^{-2}] = 3/(8\ln 2) = 0.541`. E4M3 (:math:`p = 3`): 0.0265; bf16
    (:math:`p = 7`): 0.00166.

    Parameters
    ----------
    fmt : str
        A float format of :mod:`helpers.models.numerics` (``"fp8_e4m3"``, ``"bf16"``, ...).

    Returns
    -------
    float
        :math:`\delta`.

    Assumptions
    -----------
    No subnormals or clipping (an absmax-scaled Gaussian tensor puts a few millionths of its
    values below E4M3's smallest normal); log-uniform mantissas (a uniform mantissa gives
    :math:`\mathbb{E}[m^{-2}] = 1/2`, 4 % less :math:`\delta`).

    References
    ----------
    Widrow and Kollár (2008), the uniform quantizer's noise variance :math:`q^2/12`; Higham
    (2002), section 2.1 (spacing :math:`\varepsilon = 2^{-p}`); Hamming (1970), the
    log-uniform law of mantissas.

    Examples
    --------
    >>> round(relative_rounding_rms("fp8_e4m3"), 4), round(relative_rounding_rms("bf16"), 5)
    (0.0265, 0.00166)
    """
    from .numerics import machine_epsilon

    eps = machine_epsilon(fmt)
    return eps / math.sqrt(12.0) * math.sqrt(3.0 / (8.0 * math.log(2.0)))


def fp8_matmul_rel_rms_error(a_fmt: str = "fp8_e4m3", b_fmt: str = "fp8_e4m3",
                             out_fmt: str = "bf16") -> float:
    r"""RMS error of a matrix product whose operands were rounded to ``a_fmt`` and ``b_fmt``
    and whose output is rounded to ``out_fmt``, over the RMS of the exact product
    (dimensionless).

    .. math:: \frac{\operatorname{rms}(\hat y - y)}{\operatorname{rms}(y)} =
       \sqrt{\delta_a^2 + \delta_b^2 + \delta_{\text{out}}^2}

    Each term :math:`x_k w_k` carries the relative errors :math:`\alpha_k + \beta_k` of its two
    roundings (:func:`relative_rounding_rms`). For zero-mean operands independent of each
    other, :math:`\mathbb{E}[y^2] = \sum_k \mathbb{E}[x_k^2 w_k^2]` and the error
    :math:`\sum_k x_k w_k (\alpha_k + \beta_k)` has variance
    :math:`(\delta_a^2 + \delta_b^2)\sum_k \mathbb{E}[x_k^2 w_k^2]`: the error grows as
    :math:`\sqrt{K}`, like the product, so the ratio does not depend on :math:`K`.
    Accumulation in fp32 adds nothing visible. E4M3 times E4M3 into bf16: 0.0376.

    Parameters
    ----------
    a_fmt, b_fmt, out_fmt : str
        Float formats of :mod:`helpers.models.numerics`.

    Returns
    -------
    float
        The relative RMS error.

    Assumptions
    -----------
    As :func:`relative_rounding_rms` for each operand; rounding errors independent of the
    values and of each other; zero-mean operands (a product with a large mean, such as all
    positive inputs, has errors that are small beside a larger :math:`|y|`).

    References
    ----------
    Higham (2002), section 3.1 (first-order error of an inner product of perturbed
    operands); Micikevicius et al. (2022), table 1 (E4M3: 3 mantissa bits).

    Examples
    --------
    >>> round(fp8_matmul_rel_rms_error(), 4)
    0.0376
    """
    from .numerics import FORMATS

    for name, fmt in (("a_fmt", a_fmt), ("b_fmt", b_fmt), ("out_fmt", out_fmt)):
        _checks.one_of(name, fmt, FORMATS)
    return math.sqrt(relative_rounding_rms(a_fmt) ** 2 + relative_rounding_rms(b_fmt) ** 2
                     + relative_rounding_rms(out_fmt) ** 2)


def low_precision_speedup_bound(low_peak_flop_per_s: float, high_peak_flop_per_s: float) -> float:
    r"""Upper bound on the speed-up of a compute-bound GEMM moved to a lower precision: the
    ratio of the two datasheet dense tensor-core peaks (dimensionless).

    .. math:: S = \frac{T_{\text{high}}}{T_{\text{low}}} \le \frac{P_{\text{low}}}{P_{\text{high}}}

    A large GEMM runs at a fraction of its precision's peak; unless the low-precision kernel
    reaches a larger fraction of its peak than the high-precision one of its own, the
    speed-up is at most the ratio of the peaks (2 on Hopper: 1978.9 against 989.4 TFLOP/s
    dense).

    Parameters
    ----------
    low_peak_flop_per_s, high_peak_flop_per_s : float
        Dense peaks of the low and the high precision (> 0), from :mod:`helpers.specs`.

    Returns
    -------
    float
        The bound.

    Assumptions
    -----------
    Compute-bound shapes (intensity far above both ridges), the same clock for both; the
    time to quantize the activations is not counted.

    References
    ----------
    NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), table 2 (dense FP8 twice dense
    BF16 per SM per clock); NVIDIA H200 datasheet (2023).

    Examples
    --------
    >>> from helpers import specs
    >>> g = specs.H200_SXM
    >>> round(low_precision_speedup_bound(g.peak_flop_per_s("fp8"), g.peak_flop_per_s("bf16")), 3)
    2.0
    """
    lo = _checks.positive("low_peak_flop_per_s", low_peak_flop_per_s)
    hi = _checks.positive("high_peak_flop_per_s", high_peak_flop_per_s)
    return _checks.finite_ratio("low_peak_flop_per_s", lo, "high_peak_flop_per_s", hi)


def kv_max_batch(memory_bytes: float, weight_bytes: float, kv_bytes_per_token: float,
                 context_len: int) -> int:
    r"""The most sequences of ``context_len`` tokens whose KV cache fits beside the weights in
    ``memory_bytes`` (a count).

    .. math:: B_{\max} = \left\lfloor \frac{M - W}{Q_{kv}\,S} \right\rfloor

    with :math:`Q_{kv}` the KV bytes per token
    (:func:`helpers.models.transformer.kv_cache_bytes_per_token`: 2 bytes per element in bf16,
    1 in FP8) and :math:`S` tokens per sequence. Halving the element doubles :math:`B_{\max}`
    (up to the floor).

    Parameters
    ----------
    memory_bytes : float
        :math:`M`, memory for the weights and the cache (> 0: a datasheet capacity, or what
        the driver reports free).
    weight_bytes : float
        :math:`W` (>= 0, at most ``memory_bytes``).
    kv_bytes_per_token : float
        :math:`Q_{kv}` (> 0).
    context_len : int
        :math:`S` (>= 1).

    Returns
    -------
    int
        :math:`B_{\max}` (0 when one sequence does not fit).

    Assumptions
    -----------
    Every sequence holds the whole context (paged allocation with no waste; Kwon et al.
    2023); nothing else (activations, the runtime's workspace) takes memory; per-tensor FP8
    scales (a few bytes per layer) are left out.

    References
    ----------
    Kwon et al. (2023), section 3 (the KV cache limits the batch); vLLM documentation,
    "Quantized KV Cache" (FP8 E4M3 halves the KV bytes of bf16).

    Examples
    --------
    Llama-3-8B (128 KiB per token in bf16, 64 KiB in FP8), 16 GB of weights, 120 GB in all,
    8192 tokens per sequence:

    >>> kv_max_batch(120e9, 16e9, 131072, 8192), kv_max_batch(120e9, 16e9, 65536, 8192)
    (96, 193)
    """
    m = _checks.positive("memory_bytes", memory_bytes)
    w = _checks.positive("weight_bytes", weight_bytes, allow_zero=True)
    if w > m:
        raise ValueError(f"weight_bytes must be at most memory_bytes ({m:g}), got {weight_bytes!r}")
    q = _checks.positive("kv_bytes_per_token", kv_bytes_per_token)
    s = _positive_int("context_len", context_len)
    batch = (m - w) / (q * s)
    if not math.isfinite(batch):
        raise ValueError(f"kv_bytes_per_token times context_len must be a size that fits a "
                         f"finite batch, got {kv_bytes_per_token!r} x {context_len!r}")
    return int(math.floor(batch))


__all__ += ["fp8_step", "fp8_quantize", "relative_rounding_rms", "fp8_matmul_rel_rms_error",
            "low_precision_speedup_bound", "kv_max_batch"]
