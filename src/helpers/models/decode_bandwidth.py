r"""The token rate that HBM traffic permits when a language model decodes.

Each decode step of a transformer produces one new token for every sequence in the batch. To
do so it reads every weight of the model once (shared by the whole batch) and the KV cache of
every sequence (one per sequence). If nothing else limited it, the step could take no less than
those bytes over the memory bandwidth:

.. math::

    T_{\text{step}} \ge \frac{Q_w + B\,Q_{kv}}{M}, \qquad
    \text{tokens/s} \le \frac{B}{T_{\text{step}}} = \frac{B\,M}{Q_w + B\,Q_{kv}}
                                                                 \qquad\text{(eq-decode-step, eq-decode-rate)}

with :math:`Q_w` the weight bytes, :math:`Q_{kv}` the KV-cache bytes of one sequence, :math:`B`
the batch (sequences decoded together) and :math:`M` the HBM bandwidth. It is the roofline's
memory roof applied to a whole step. As the batch grows the arithmetic (:math:`2N` FLOP per
token for :math:`N` parameters) eventually takes longer than reading the weights;
:func:`decode_step_time_s` adds that compute roof.

Introduced in {ref}`sec-performance-models`.

References
----------
* Austin, J. et al. (2025), *How to Scale Your Model*, part "All About Transformer
  Inference", section "Theoretical estimates for LLM latency and throughput": the minimum
  step time (batch x KV size + parameter size) / bandwidth and its worked example (a 30B
  int8 model, 4 sequences of 8192 tokens at 100 kB/token, 16 TPU v5e chips: about 2.5 ms;
  256 sequences: about 21 ms).
* Agarwal, M. et al. (2023), "LLM Inference Performance Engineering: Best Practices",
  Databricks/MosaicML blog, section "Model Bandwidth Utilization": a 7B model in 16-bit with
  a 14 ms time per output token on a 2 TB/s part runs at 50 % MBU.
* Pope, R. et al. (2023), "Efficiently Scaling Transformer Inference", MLSys: decode at small
  batch is dominated by loading the weights.

Used by: chapters/gpu-architecture.md, chapters/inference-metrics.md,
chapters/performance-models.md, labs/decode.md.
"""

from __future__ import annotations

import math

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from .transformer import weight_bytes
from . import _checks

__all__ = ["weight_bytes", "decode_step_bytes", "decode_step_time_lower_bound_s",
           "decode_tokens_per_s_upper_bound", "decode_step_time_s", "decode_tokens_per_s",
           "decode_compute_bound_batch", "bandwidth_utilization"]





def decode_step_bytes(weight_bytes: float, kv_cache_bytes_per_sequence: float,
                      batch: int) -> float:
    r"""Bytes (decimal) one decode step reads from HBM: :math:`Q_w + B\,Q_{kv}`.

    Parameters
    ----------
    weight_bytes : float
        :math:`Q_w`, bytes of all weights read in the step (> 0).
    kv_cache_bytes_per_sequence : float
        :math:`Q_{kv}`, bytes of one sequence's KV cache at its current length (>= 0).
    batch : int
        :math:`B`, sequences decoded together (>= 1).

    Assumptions
    -----------
    Each weight and each cached key and value is read exactly once per step; activations
    and writes (one new token's K and V per sequence) are negligible next to them.

    Examples
    --------
    >>> decode_step_bytes(16e9, 0.5e9, 4) / 1e9
    18.0
    """
    return (_positive("weight_bytes", weight_bytes)
            + _positive_int("batch", batch) * _positive("kv_cache_bytes_per_sequence",
                                        kv_cache_bytes_per_sequence, allow_zero=True))


def decode_step_time_lower_bound_s(weight_bytes: float, kv_cache_bytes_per_sequence: float,
                                   batch: int, mem_bytes_per_s: float) -> float:
    r"""Lower bound (s) on one decode step's time from HBM traffic alone.

    .. math:: T_{\text{step}} \ge \frac{Q_w + B\,Q_{kv}}{M}     (the page labels this eq-decode-step)

    Parameters
    ----------
    weight_bytes : float
        :math:`Q_w` (bytes, > 0).
    kv_cache_bytes_per_sequence : float
        :math:`Q_{kv}` (bytes, >= 0).
    batch : int
        :math:`B` (>= 1).
    mem_bytes_per_s : float
        :math:`M`, the HBM bandwidth (bytes/s, > 0), e.g. a ``GPUSpec.hbm_bytes_per_s``.

    Returns
    -------
    float
        The bound (s).

    Assumptions
    -----------
    As :func:`decode_step_bytes`, and the bytes stream at the peak bandwidth; the
    arithmetic hides under the traffic (true below :func:`decode_compute_bound_batch`).

    References
    ----------
    Austin et al. (2025), "Theoretical Min Step Time".

    Examples
    --------
    The *How to Scale Your Model* example: 30 GB of int8 weights, 4 sequences of 819.2 MB of
    KV cache each, 16 chips of 810 GB/s: about 2.5 ms (2.57 before rounding):

    >>> round(decode_step_time_lower_bound_s(30e9, 819.2e6, 4, 16 * 8.1e11) * 1e3, 2)
    2.57
    """
    return (decode_step_bytes(weight_bytes, kv_cache_bytes_per_sequence, batch)
            / _positive("mem_bytes_per_s", mem_bytes_per_s))


def decode_tokens_per_s_upper_bound(weight_bytes: float, kv_cache_bytes_per_sequence: float,
                                    batch: int, mem_bytes_per_s: float) -> float:
    r"""Most tokens per second (all sequences together) HBM traffic allows.

    .. math:: \text{tokens/s} \le \frac{B\,M}{Q_w + B\,Q_{kv}}     (the page labels this eq-decode-rate)

    Examples
    --------
    An 8B model in bf16 (16 GB) at batch 1 with a negligible KV cache on an H100 (3.35 TB/s):

    >>> round(decode_tokens_per_s_upper_bound(16e9, 0.0, 1, 3.35e12), 1)
    209.4
    """
    if decode_step_time_lower_bound_s(weight_bytes, kv_cache_bytes_per_sequence, batch,
                                      mem_bytes_per_s) <= 0:
        raise ValueError(f"weight_bytes and kv_cache_bytes_per_sequence are too small for a "
                         f"nonzero step time, got {weight_bytes!r}, "
                         f"{kv_cache_bytes_per_sequence!r}")
    b = _positive_int("batch", batch)
    return b / decode_step_time_lower_bound_s(weight_bytes, kv_cache_bytes_per_sequence, b,
                                              mem_bytes_per_s)


def decode_step_time_s(weight_bytes: float, kv_cache_bytes_per_sequence: float, batch: int,
                       mem_bytes_per_s: float, n_params: float,
                       peak_flop_per_s: float) -> float:
    r"""Roofline estimate (s) of a decode step: KV traffic plus the longer of weight traffic and arithmetic.

    .. math::

        T_{\text{step}} = \frac{B\,Q_{kv}}{M}
            + \max\!\left(\frac{Q_w}{M},\ \frac{2\,B\,N}{P}\right)

    The attention over the KV cache does about as many FLOP as it reads bytes, so it stays
    memory-bound at any batch; the matrix multiplies over the weights become compute-bound
    once :math:`B` passes :func:`decode_compute_bound_batch`.

    Parameters
    ----------
    weight_bytes, kv_cache_bytes_per_sequence, batch, hbm_bytes_per_s
        As :func:`decode_step_time_lower_bound_s`.
    n_params : float
        :math:`N`, parameters that do a multiply-add per token (> 0).
    peak_flop_per_s : float
        :math:`P`, the peak rate in the weights' compute precision (FLOP/s, > 0).

    References
    ----------
    Austin et al. (2025), "Theoretical Step Time (General)".

    Examples
    --------
    The *How to Scale Your Model* example at 256 sequences (16 chips of 197 TFLOP/s): about
    21 ms:

    >>> round(decode_step_time_s(30e9, 819.2e6, 256, 16 * 8.1e11, 30e9, 16 * 1.97e14) * 1e3, 1)
    21.1
    """
    b = _positive_int("batch", batch)
    bw = _positive("mem_bytes_per_s", mem_bytes_per_s)
    w = _positive("weight_bytes", weight_bytes)
    kv = _positive("kv_cache_bytes_per_sequence", kv_cache_bytes_per_sequence, allow_zero=True)
    n = _positive("n_params", n_params)
    p = _positive("peak_flop_per_s", peak_flop_per_s)
    return b * kv / bw + max(w / bw, 2.0 * b * n / p)


def decode_tokens_per_s(weight_bytes: float, kv_cache_bytes_per_sequence: float, batch: int,
                        mem_bytes_per_s: float, n_params: float,
                        peak_flop_per_s: float) -> float:
    """Tokens per second (all sequences) at the step time of :func:`decode_step_time_s`.

    Examples
    --------
    >>> round(decode_tokens_per_s(16e9, 0.0, 1, 3.35e12, 8e9, 989.4e12), 1)
    209.4
    """
    b = _positive_int("batch", batch)
    return b / decode_step_time_s(weight_bytes, kv_cache_bytes_per_sequence, b,
                                  mem_bytes_per_s, n_params, peak_flop_per_s)


def decode_compute_bound_batch(bytes_per_element: float, peak_flop_per_s: float,
                               mem_bytes_per_s: float) -> float:
    r"""Batch (dimensionless) at which the weights' arithmetic takes as long as reading them.

    Setting :math:`2BN/P = Nb/M` gives

    .. math:: B^* = \frac{b}{2}\,\frac{P}{M} = \frac{b}{2}\,I^*

    with :math:`I^*` the ridge intensity: below :math:`B^*`, adding sequences to the batch
    is almost free.

    Examples
    --------
    bf16 weights on an H100 (989.4 TFLOP/s, 3.35 TB/s):

    >>> round(decode_compute_bound_batch(2.0, 989.4e12, 3.35e12), 1)
    295.3
    """
    return (_positive("bytes_per_element", bytes_per_element) / 2.0
            * _positive("peak_flop_per_s", peak_flop_per_s)
            / _positive("mem_bytes_per_s", mem_bytes_per_s))


def bandwidth_utilization(n_bytes: float, time_s: float,
                          mem_bytes_per_s: float) -> float:
    r"""Achieved over peak memory bandwidth (dimensionless): :math:`(Q / t) / M`.

    For decode this is model bandwidth utilization (MBU), with :math:`Q` the weight and
    KV-cache bytes of one step and :math:`t` the time per output token.

    References
    ----------
    Agarwal et al. (2023), "Model Bandwidth Utilization".

    Examples
    --------
    The Databricks example: 14 GB of 16-bit weights in 14 ms on a 2 TB/s part is 50 %:

    >>> round(bandwidth_utilization(14e9, 14e-3, 2e12), 6)
    0.5
    """
    return (_positive("n_bytes", n_bytes, allow_zero=True)
            / _positive("time_s", time_s)
            / _positive("mem_bytes_per_s", mem_bytes_per_s))


# --- one configuration's decode-step bytes (moved from the decode lab's runner, issue 16) -----

def config_kv_cache_bytes(cfg, *, batch: int, context_len: int,
                          bytes_per_element: float) -> float:
    r"""KV-cache bytes (decimal) of ``batch`` sequences of ``context_len`` tokens of ``cfg``.

    .. math:: B\,Q_{kv} = 2\, L\, H_{kv}\, d_h\, S\, B\, b

    :func:`helpers.models.transformer.kv_cache_bytes` with the layer count :math:`L`, key/value
    heads :math:`H_{kv}` and head width :math:`d_h` of ``cfg`` (a
    :class:`~helpers.models.transformer.TransformerConfig`); :math:`S` = ``context_len``,
    :math:`b` = ``bytes_per_element``. Source: the KV-cache size of Pope et al. (2023),
    listed in this module's references (a key and a value vector per layer, head and token).

    >>> from helpers.models.transformer import LLAMA2_7B
    >>> config_kv_cache_bytes(LLAMA2_7B, batch=1, context_len=4096, bytes_per_element=2) / 2**30
    2.0
    """
    from .transformer import kv_cache_bytes

    _checks.has_attributes("cfg", cfg, ("n_layers", "n_kv_heads", "head_dim"))
    _checks.positive_int("batch", batch)
    _checks.integer("context_len", context_len, minimum=0)
    return kv_cache_bytes(batch=batch, seq_len=context_len, n_layers=cfg.n_layers,
                          n_kv_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
                          bytes_per_element=bytes_per_element)


def config_decode_step_bytes(cfg, batch: int, context_len: int,
                             bytes_per_element: float) -> float:
    r"""Bytes (decimal) one decode step of ``cfg`` reads (:func:`decode_step_bytes`, eq-decode-step).

    .. math:: Q_{\text{step}} = Q_w + B\,Q_{kv}

    :math:`Q_w` is the weights the step multiplies with, once:
    :func:`~helpers.models.transformer.matmul_parameter_count` (attention, MLP and output head)
    times ``bytes_per_element``; the embedding table is only gathered (``batch`` rows of it) and
    the norms are negligible, so neither counts. :math:`Q_{kv}` is one sequence's cache of
    ``context_len`` tokens (:func:`config_kv_cache_bytes`). Source: Austin et al. (2025), "All
    About Transformer Inference" (step time = (batch x KV size + parameter size) / bandwidth).

    Parameters: ``cfg`` a :class:`~helpers.models.transformer.TransformerConfig`; ``batch``
    sequences (integer >= 1); ``context_len`` tokens in each cache (integer >= 0);
    ``bytes_per_element`` of weights and cache (> 0).

    >>> from helpers.models.transformer import LLAMA2_7B
    >>> round(config_decode_step_bytes(LLAMA2_7B, 1, 0, 2) / 1e9, 2)  # Llama-2-7B's weights, bf16
    13.21
    """
    from .transformer import matmul_parameter_count

    _checks.positive_int("batch", batch)
    _checks.integer("context_len", context_len, minimum=0)
    _checks.has_attributes("cfg", cfg, ("n_layers", "n_kv_heads", "head_dim"))
    weights = weight_bytes(matmul_parameter_count(cfg), bytes_per_element)
    per_seq = config_kv_cache_bytes(cfg, batch=1, context_len=context_len,
                                    bytes_per_element=bytes_per_element)
    return decode_step_bytes(weights, per_seq, batch)


__all__ += ["config_kv_cache_bytes", "config_decode_step_bytes"]
