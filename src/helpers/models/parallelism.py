r"""Per-rank memory and communication of the ways a model is split across GPUs.

Symbols (the page {ref}`sec-parallelism` uses the same ones):
:math:`\Psi` parameters, :math:`N_d` data-parallel degree (``dp``), :math:`t` tensor-parallel
degree (``tp``), :math:`p` pipeline stages (``pp``), :math:`c` context-parallel degree
(``cp``), :math:`e` expert-parallel degree (``ep``), :math:`m` micro-batches per step,
:math:`v` model chunks per pipeline stage (interleaving), :math:`s` sequence length,
:math:`b` micro-batch size, :math:`h` model width, :math:`a` attention heads,
:math:`K` optimizer bytes per parameter.

Every function is a pure function of its arguments; bytes are bytes (not GB), counts are
floats or ints.

References
----------
Rajbhandari et al. (2020), "ZeRO", SC20: sections 3.1, 5 and 7, figure 1.
Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053: section 3, figure 3.
Korthikanti et al. (2022), "Reducing activation recomputation in large transformer models",
arXiv:2205.05198 (MLSys 2023): section 4, table 2.
Huang et al. (2019), "GPipe", NeurIPS: section 2.3.
Narayanan et al. (2021), "Efficient large-scale language model training on GPU clusters using
Megatron-LM", SC21: sections 2.2, 3 and 4.1.
Fedus, Zoph and Shazeer (2022), "Switch Transformers", JMLR 23: sections 2.2 and 5.
Lepikhin et al. (2021), "GShard", ICLR.

Used by: chapters/parallelism.md.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import positive as _positive
from ._checks import positive_int as _positive_int
from .collectives import busbw_factor as _busbw_factor
from . import _checks

__all__ = [
    "zero_model_state_bytes_per_rank", "model_state_bytes_per_rank",
    "activation_bytes_per_layer", "pipeline_in_flight_microbatches",
    "pipeline_bubble_fraction", "pipeline_bubble_ratio",
    "ring_allreduce_bytes_per_rank", "data_parallel_comm_bytes_per_rank",
    "tensor_parallel_comm_bytes_per_layer", "pipeline_p2p_bytes_per_rank",
    "expert_alltoall_bytes_per_layer", "expert_capacity_tokens", "dropped_tokens",
    "expected_dropped_fraction_uniform", "load_balance_loss", "expert_params_per_rank",
    "rank_coordinates", "rank_of", "activation_bytes_full_recompute",
    "pipeline_p2p_bytes_per_direction", "zero_comm_bytes_per_rank_limit", "parallel_layout_4d",
]

_STAGES = (0, 1, 2, 3)
_SCHEDULES = ("gpipe", "1f1b")


def _stage(zero_stage) -> int:
    if isinstance(zero_stage, bool) or zero_stage not in _STAGES:
        raise ValueError(f"zero_stage must be one of 0, 1, 2, 3, got {zero_stage!r}")
    return int(zero_stage)


# --- model state: data parallelism and ZeRO ------------------------------------------------

def zero_model_state_bytes_per_rank(n_params: float, *, dp: int, zero_stage: int,
                                    weight_bytes_per_param: float = 2.0,
                                    grad_bytes_per_param: float = 2.0,
                                    optimizer_state_bytes_per_param: float = 12.0) -> float:
    r"""Model state (bytes) held by one data-parallel rank: weights, gradients, optimizer state.

    .. math::
       M_0 = (2 + 2 + K)\Psi,\quad M_1 = (2+2)\Psi + \frac{K\Psi}{N_d},\quad
       M_2 = 2\Psi + \frac{(2+K)\Psi}{N_d},\quad M_3 = \frac{(2+2+K)\Psi}{N_d}     (eq-par-zero)

    with the 2, 2 and :math:`K` the bytes per parameter of the weights, the gradients and the
    optimizer state (the arguments).

    Parameters
    ----------
    n_params : float
        :math:`\Psi`, parameters replicated across the data-parallel group.
    dp : int
        :math:`N_d`, ranks of the data-parallel group.
    zero_stage : int
        0 (plain data parallelism), 1 (:math:`P_{os}`, optimizer state sharded),
        2 (:math:`P_{os+g}`, also gradients), 3 (:math:`P_{os+g+p}`, also parameters).
    weight_bytes_per_param, grad_bytes_per_param : float
        The 16-bit working weights and gradients (2 bytes each in mixed precision).
    optimizer_state_bytes_per_param : float
        :math:`K`: fp32 master weights, momentum and variance, 4 + 4 + 4 = 12 for mixed-precision
        Adam.

    Returns
    -------
    float
        Bytes per rank.

    Assumptions
    -----------
    Shards are equal (:math:`\Psi` divisible by :math:`N_d`; padding ignored). Activations,
    temporary buffers and fragmentation are not included. Under ZeRO-3 a rank also holds, for a
    moment, the gathered parameters of the layer it is computing; that transient is ignored,
    as in the paper's figure 1.

    References
    ----------
    Rajbhandari et al. (2020), section 5 and figure 1 (7.5B parameters, :math:`N_d = 64`,
    :math:`K = 12`: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per device).

    Examples
    --------
    >>> [round(zero_model_state_bytes_per_rank(7.5e9, dp=64, zero_stage=s) / 1e9, 2)
    ...  for s in (0, 1, 2, 3)]
    [120.0, 31.41, 16.64, 1.88]
    """
    psi = _positive("n_params", n_params, allow_zero=True)
    nd = _positive_int("dp", dp)
    stage = _stage(zero_stage)
    w = _positive("weight_bytes_per_param", weight_bytes_per_param, allow_zero=True)
    g = _positive("grad_bytes_per_param", grad_bytes_per_param, allow_zero=True)
    k = _positive("optimizer_state_bytes_per_param", optimizer_state_bytes_per_param,
                  allow_zero=True)
    shard = (k, g + k, w + g + k)[stage - 1] if stage else 0.0
    return psi * (w + g + k - shard) + psi * shard / nd


def model_state_bytes_per_rank(n_params: float, *, dp: int = 1, tp: int = 1, pp: int = 1,
                               zero_stage: int = 0, weight_bytes_per_param: float = 2.0,
                               grad_bytes_per_param: float = 2.0,
                               optimizer_state_bytes_per_param: float = 12.0) -> float:
    r"""Model state (bytes) on one rank of a ``dp x tp x pp`` mesh, with ZeRO over the dp axis.

    .. math:: M = M_z\!\left(\frac{\Psi}{t\,p},\ N_d\right)                     (eq-par-mesh-state)

    where :math:`M_z` is :func:`zero_model_state_bytes_per_rank`: tensor parallelism splits
    every weight matrix into :math:`t` slices and pipeline parallelism gives each of :math:`p`
    stages a contiguous block of layers, so a rank owns :math:`\Psi/(tp)` parameters, whose
    state ZeRO then shards across the :math:`N_d` replicas.

    Parameters
    ----------
    n_params : float
        :math:`\Psi`, the whole model.
    dp, tp, pp : int
        Degrees of the data-, tensor- and pipeline-parallel axes.
    zero_stage : int
        0 to 3, as in :func:`zero_model_state_bytes_per_rank`.
    weight_bytes_per_param, grad_bytes_per_param, optimizer_state_bytes_per_param : float
        As in :func:`zero_model_state_bytes_per_rank`.

    Returns
    -------
    float
        Bytes per rank.

    Assumptions
    -----------
    Parameters divide evenly over tensor slices and pipeline stages (embeddings and layer norms,
    which Megatron replicates or places on one stage, are counted as if split).

    References
    ----------
    Shoeybi et al. (2019), section 3; Narayanan et al. (2021), section 2;
    Rajbhandari et al. (2020), section 5.

    Examples
    --------
    >>> round(model_state_bytes_per_rank(7.5e9, dp=8, tp=8, zero_stage=1) / 1e9, 3)
    5.156
    """
    t = _positive_int("tp", tp)
    p = _positive_int("pp", pp)
    psi = _positive("n_params", n_params, allow_zero=True)
    return zero_model_state_bytes_per_rank(
        psi / (t * p), dp=dp, zero_stage=zero_stage,
        weight_bytes_per_param=weight_bytes_per_param, grad_bytes_per_param=grad_bytes_per_param,
        optimizer_state_bytes_per_param=optimizer_state_bytes_per_param)


# --- activations: tensor, sequence and context parallelism ---------------------------------

def activation_bytes_per_layer(*, seq_len: int, micro_batch: int, d_model: int, n_heads: int,
                               tp: int = 1, sequence_parallel: bool = False,
                               cp: int = 1, store_attention_scores: bool = True) -> float:
    r"""Activations (bytes) one transformer layer stores for the backward pass, per rank.

    .. math::
       A = s b h \left(10 + \frac{24}{t} + \frac{5 a s}{h t}\right)\ \text{(tensor parallel)},
       \qquad
       A_{\text{sp}} = \frac{s b h}{t}\left(34 + \frac{5 a s}{h}\right)\ \text{(+ sequence
       parallel)}                                                                 (eq-par-act)

    with :math:`s` replaced by :math:`s/c` under context parallelism of degree :math:`c`.

    Parameters
    ----------
    seq_len : int
        :math:`s`, tokens per sequence.
    micro_batch : int
        :math:`b`, sequences per micro-batch.
    d_model : int
        :math:`h`.
    n_heads : int
        :math:`a`.
    tp : int
        :math:`t`, tensor-parallel degree (1: no tensor parallelism, where both forms give
        :math:`sbh(34 + 5as/h)`).
    sequence_parallel : bool
        Megatron sequence parallelism: the layer norms and dropouts, which tensor parallelism
        replicates (the :math:`10\,sbh`), are split along the sequence too.
    cp : int
        :math:`c`, context-parallel degree: each rank keeps :math:`s/c` tokens of every sequence.
    store_attention_scores : bool
        False drops the :math:`5as/h` term: the attention scores, softmax and its dropout are
        recomputed in the backward pass (Korthikanti's selective recomputation) or never
        materialised (a fused, FlashAttention-style kernel).

    Returns
    -------
    float
        Bytes per layer per rank (16-bit activations, 1-byte dropout masks).

    Assumptions
    -----------
    GPT-style layer (attention and a 4h MLP, 16-bit activations), no full recomputation. A
    Llama-style layer (SwiGLU MLP, grouped K/V) has different constants; the formula is then an
    estimate. Context parallelism is modelled as a shorter sequence on each rank, which is
    exact for the linear terms and an upper bound on the attention term (ring attention holds
    one block of scores at a time).

    References
    ----------
    Korthikanti et al. (2022), section 4.1 (equation 1, :math:`sbh(34 + 5as/h)`) and table 2.

    Examples
    --------
    >>> round(activation_bytes_per_layer(seq_len=2048, micro_batch=1, d_model=12288,
    ...                                  n_heads=96) / 2**30, 2)
    2.67
    """
    s = _positive_int("seq_len", seq_len)
    b = _positive_int("micro_batch", micro_batch)
    h = _positive_int("d_model", d_model)
    a = _positive_int("n_heads", n_heads)
    t = _positive_int("tp", tp)
    c = _positive_int("cp", cp)
    for name, flag in (("sequence_parallel", sequence_parallel),
                       ("store_attention_scores", store_attention_scores)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    s_rank = s / c
    sbh = s_rank * b * h
    scores = 5.0 * a * s_rank / h if store_attention_scores else 0.0
    if sequence_parallel:
        return sbh / t * (34.0 + scores)
    return sbh * (10.0 + 24.0 / t + scores / t)


def activation_bytes_full_recompute(*, seq_len: int, micro_batch: int, d_model: int,
                                    n_layers: int, tp: int = 1,
                                    shard_checkpoints: bool = False) -> float:
    r"""Activations (bytes) kept for the backward pass under full recomputation, per rank.

    .. math:: A_{\text{full}} = 2\,s b h L \quad (\text{or } 2\,s b h L / t
       \text{ with the checkpoints sharded over the tensor-parallel group})

    Each layer keeps only its input, :math:`s \times b \times h` 16-bit values (2 bytes),
    and recomputes everything else with an extra forward pass in the backward pass: the
    :math:`sbh(34 + 5as/h)` of :func:`activation_bytes_per_layer` shrinks to :math:`2sbh` per
    layer, at the price of one more forward pass (about a third more FLOP).

    Parameters
    ----------
    seq_len : int
        :math:`s`.
    micro_batch : int
        :math:`b`.
    d_model : int
        :math:`h`.
    n_layers : int
        :math:`L`, the layers whose checkpoints this rank holds (all :math:`L` on the first
        pipeline stage, which keeps :math:`p` micro-batches of :math:`L/p` layers).
    tp : int
        :math:`t`; matters only with ``shard_checkpoints``.
    shard_checkpoints : bool
        Store a :math:`1/t` slice of each checkpoint per tensor-parallel rank (an extra
        all-gather per layer, which Megatron does not do by default).

    Returns
    -------
    float
        Bytes per rank.

    Assumptions
    -----------
    One checkpoint per layer; activations outside the transformer layers (embedding dropout,
    final norm, logits) ignored, as in the source.

    References
    ----------
    Korthikanti et al. (2022), section 5 ("reduces the total required memory for activations
    to 2sbhL", and 2sbhL/t with an extra all-gather) and table 2 ("full activation
    recomputation: sbh(2)").

    Examples
    --------
    GPT-3 175B (s 2048, h 12288, 96 layers), one sequence per micro-batch:

    >>> round(activation_bytes_full_recompute(seq_len=2048, micro_batch=1, d_model=12288,
    ...                                       n_layers=96) / 2**30, 2)
    4.5
    """
    s = _positive_int("seq_len", seq_len)
    b = _positive_int("micro_batch", micro_batch)
    h = _positive_int("d_model", d_model)
    L = _positive_int("n_layers", n_layers)
    t = _positive_int("tp", tp)
    if not isinstance(shard_checkpoints, bool):
        raise ValueError(f"shard_checkpoints must be True or False, got {shard_checkpoints!r}")
    total = 2.0 * s * b * h * L
    return total / t if shard_checkpoints else total


# --- pipeline parallelism ------------------------------------------------------------------

def pipeline_in_flight_microbatches(*, pp: int, n_microbatches: int, schedule: str = "1f1b",
                                    stage: int = 0) -> int:
    r"""Micro-batches (count) whose activations one pipeline stage holds at its peak.

    .. math:: n_{\text{GPipe}} = m, \qquad n_{\text{1F1B}}(i) = \min(p - i,\ m)   (eq-par-inflight)

    Parameters
    ----------
    pp : int
        :math:`p`, pipeline stages.
    n_microbatches : int
        :math:`m`, micro-batches per step.
    schedule : str
        ``"gpipe"`` (all forwards, then all backwards) or ``"1f1b"`` (one forward, one
        backward in the steady state; PipeDream-Flush).
    stage : int
        :math:`i`, the stage, 0 the first.

    Returns
    -------
    int
        Micro-batches in flight (multiply by the activation bytes of one micro-batch on that
        stage to get its activation memory).

    Assumptions
    -----------
    No activation recomputation; a stage frees a micro-batch's activations when its backward
    ends.

    References
    ----------
    Huang et al. (2019), section 2.3; Narayanan et al. (2021), section 2.2.1 (1F1B "limits
    the number of in-flight microbatches ... to the depth of the pipeline").

    Examples
    --------
    >>> pipeline_in_flight_microbatches(pp=4, n_microbatches=16, schedule="gpipe")
    16
    >>> pipeline_in_flight_microbatches(pp=4, n_microbatches=16, schedule="1f1b")
    4
    """
    p = _positive_int("pp", pp)
    m = _positive_int("n_microbatches", n_microbatches)
    i = _positive_int("stage", stage, minimum=0)
    if i >= p:
        raise ValueError(f"stage must be in [0, {p - 1}] for pp={p}, got {stage!r}")
    if schedule == "gpipe":
        return m
    if schedule == "1f1b":
        return min(p - i, m)
    raise ValueError(f"schedule must be one of {_SCHEDULES}, got {schedule!r}")


def pipeline_bubble_fraction(*, pp: int, n_microbatches: int, chunks: int = 1) -> float:
    r"""Fraction (dimensionless) of a pipeline step's time that each stage is idle: the bubble.

    .. math:: \beta = \frac{p - 1}{v m + p - 1}                                (eq-par-bubble)

    Parameters
    ----------
    pp : int
        :math:`p`, pipeline stages.
    n_microbatches : int
        :math:`m`, micro-batches per step.
    chunks : int
        :math:`v`, model chunks per stage (1 for GPipe and 1F1B; :math:`v > 1` for the
        interleaved 1F1B schedule).

    Returns
    -------
    float
        Idle time / step time, in [0, 1).

    Assumptions
    -----------
    Every stage takes the same time per micro-batch, forward and backward each; point-to-point
    transfers take no time. GPipe and 1F1B have the same bubble; 1F1B only holds fewer
    activations (:func:`pipeline_in_flight_microbatches`).

    References
    ----------
    Huang et al. (2019), section 2.3 (:math:`O((K-1)/(M+K-1))`, "negligible when
    :math:`M \ge 4K`"); Narayanan et al. (2021), section 2.2 (bubble time over ideal time
    :math:`(p-1)/m`, and :math:`(p-1)/(vm)` interleaved; this function returns the share of
    the whole step, :func:`pipeline_bubble_ratio` the ratio).

    Examples
    --------
    >>> round(pipeline_bubble_fraction(pp=4, n_microbatches=16), 4)
    0.1579
    """
    r = pipeline_bubble_ratio(pp=pp, n_microbatches=n_microbatches, chunks=chunks)
    return r / (1.0 + r)


def pipeline_bubble_ratio(*, pp: int, n_microbatches: int, chunks: int = 1) -> float:
    r"""Pipeline bubble time divided by the ideal, bubble-free step time (dimensionless).

    .. math:: \frac{t_{pb}}{t_{id}} = \frac{1}{v}\cdot\frac{p-1}{m}          (eq-par-bubble-ratio)

    Parameters
    ----------
    pp, n_microbatches, chunks : int
        :math:`p`, :math:`m`, :math:`v` as in :func:`pipeline_bubble_fraction`.

    Returns
    -------
    float
        Dimensionless ratio, >= 0.

    Assumptions
    -----------
    As :func:`pipeline_bubble_fraction`.

    References
    ----------
    Narayanan et al. (2021), section 2.2.1 ("bubble time fraction", :math:`(p-1)/m`) and
    section 2.2.2 (interleaved, reduced by :math:`v`).

    Examples
    --------
    >>> pipeline_bubble_ratio(pp=8, n_microbatches=32, chunks=2)
    0.109375
    """
    p = _positive_int("pp", pp)
    m = _positive_int("n_microbatches", n_microbatches)
    v = _positive_int("chunks", chunks)
    return (p - 1) / (v * m)


# --- communication per step -----------------------------------------------------------------

def ring_allreduce_bytes_per_rank(message_bytes: float, n_ranks: int) -> float:
    r"""Data each rank sends (bytes) in a ring all-reduce of a ``message_bytes`` buffer.

    .. math:: V = 2\,\frac{n-1}{n}\,D                                          (eq-par-ring)

    Parameters
    ----------
    message_bytes : float
        :math:`D`, the buffer every rank contributes (and receives summed).
    n_ranks : int
        :math:`n`.

    Returns
    -------
    float
        Bytes sent per rank (a reduce-scatter then an all-gather, :math:`(n-1)/n\,D` each).

    Assumptions
    -----------
    Ring or any bandwidth-optimal algorithm; received bytes equal sent bytes.

    References
    ----------
    Rajbhandari et al. (2020), section 7.1 (":math:`2\Psi`").

    Examples
    --------
    >>> ring_allreduce_bytes_per_rank(1e9, 8) / 1e9
    1.75
    """
    d = _positive("message_bytes", message_bytes, allow_zero=True)
    n = _positive_int("n_ranks", n_ranks)
    # The bytes a rank sends are nccl-tests' bus-bandwidth factor times the buffer: that is
    # how the factor is defined (lesson 13), so the one definition serves both.
    return _busbw_factor("all_reduce", n) * d


def data_parallel_comm_bytes_per_rank(n_params: float, *, dp: int, zero_stage: int = 0,
                                      bytes_per_element: float = 2.0) -> float:
    r"""Data one data-parallel rank sends per training step (bytes) to keep the replicas equal.

    .. math:: V_{0,1,2} = 2\,\frac{N_d-1}{N_d}\,\Psi b, \qquad
              V_3 = 3\,\frac{N_d-1}{N_d}\,\Psi b                              (eq-par-dp-comm)

    Parameters
    ----------
    n_params : float
        :math:`\Psi`.
    dp : int
        :math:`N_d`.
    zero_stage : int
        0 to 3. Stages 0-2 move the gradients once through a reduce-scatter and the
        parameters (or updated parameters) once through an all-gather: the volume of one
        all-reduce. Stage 3 also all-gathers the parameters a second time, for the backward
        pass: 1.5 times as much.
    bytes_per_element : float
        :math:`b`, bytes of a communicated gradient or parameter (2 for 16-bit).

    Returns
    -------
    float
        Bytes sent per rank per step.

    Assumptions
    -----------
    Bandwidth-optimal collectives (:func:`ring_allreduce_bytes_per_rank`); no gradient
    accumulation across steps; stage 3 re-gathers every parameter in the backward pass.

    References
    ----------
    Rajbhandari et al. (2020), section 7.2: :math:`P_{os}` and :math:`P_{os+g}` "incur the same
    communication volume" as data parallelism, :math:`2\Psi`; :math:`P_{os+g+p}` moves
    :math:`3\Psi`, "1.5x".

    Examples
    --------
    >>> data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=3) / \
    ...     data_parallel_comm_bytes_per_rank(1e9, dp=64, zero_stage=0)
    1.5
    """
    psi = _positive("n_params", n_params, allow_zero=True)
    n = _positive_int("dp", dp)
    stage = _stage(zero_stage)
    b = _positive("bytes_per_element", bytes_per_element)
    passes = 3.0 if stage == 3 else 2.0
    return passes * (n - 1) / n * psi * b


def tensor_parallel_comm_bytes_per_layer(*, n_tokens: int, d_model: int, tp: int,
                                         bytes_per_element: float = 2.0) -> float:
    r"""Data one tensor-parallel rank sends per transformer layer (bytes), forward and backward.

    .. math:: V = 4 \cdot 2\,\frac{t-1}{t}\; T h\, b                          (eq-par-tp-comm)

    Megatron's layer has two all-reduces of the :math:`T \times h` activations in the forward
    pass (after attention and after the MLP, operators :math:`g`) and two in the backward pass
    (operators :math:`f`); with sequence parallelism each all-reduce becomes a reduce-scatter
    plus an all-gather, the same bytes.

    Parameters
    ----------
    n_tokens : int
        :math:`T = s\,b`, tokens in the micro-batch.
    d_model : int
        :math:`h`.
    tp : int
        :math:`t`.
    bytes_per_element : float
        :math:`b` (2 for bf16).

    Returns
    -------
    float
        Bytes sent per rank per layer per micro-batch.

    Assumptions
    -----------
    Bandwidth-optimal all-reduce; recomputation (which would repeat the forward all-reduces)
    not used.

    References
    ----------
    Shoeybi et al. (2019), section 3 and figure 4 ("two all-reduce operations in the forward
    path and two in the backward path"); Korthikanti et al. (2022), section 4.2.2.

    Examples
    --------
    >>> tensor_parallel_comm_bytes_per_layer(n_tokens=2048, d_model=4096, tp=8) / 2**20
    112.0
    """
    t_ = _positive_int("n_tokens", n_tokens)
    h = _positive_int("d_model", d_model)
    t = _positive_int("tp", tp)
    b = _positive("bytes_per_element", bytes_per_element)
    return 4.0 * ring_allreduce_bytes_per_rank(float(t_ * h) * b, t)


def pipeline_p2p_bytes_per_rank(*, n_tokens: int, d_model: int, n_microbatches: int,
                                bytes_per_element: float = 2.0) -> float:
    r"""Data an interior pipeline stage sends per step (bytes): activations on, gradients back.

    .. math:: V = 2\, m\, T h\, b                                             (eq-par-pp-comm)

    Parameters
    ----------
    n_tokens : int
        :math:`T`, tokens per micro-batch.
    d_model : int
        :math:`h`.
    n_microbatches : int
        :math:`m`.
    bytes_per_element : float
        :math:`b`.

    Returns
    -------
    float
        Bytes sent per step by a stage that has a neighbour on both sides (the first and last
        stages send half).

    Assumptions
    -----------
    Only the hidden state crosses a stage boundary; with tensor parallelism each of the
    :math:`t` ranks of a stage may send a :math:`1/t` slice (the scatter/gather optimisation),
    which divides this by :math:`t`.

    References
    ----------
    Narayanan et al. (2021), section 4.1 (:math:`bsh` per micro-batch per boundary, and the
    scatter/gather optimisation).

    Examples
    --------
    >>> pipeline_p2p_bytes_per_rank(n_tokens=2048, d_model=4096, n_microbatches=8) / 2**20
    256.0
    """
    return 2.0 * pipeline_p2p_bytes_per_direction(n_tokens=n_tokens, d_model=d_model,
                                                  n_microbatches=n_microbatches,
                                                  bytes_per_element=bytes_per_element)


def pipeline_p2p_bytes_per_direction(*, n_tokens: int, d_model: int, n_microbatches: int,
                                     bytes_per_element: float = 2.0) -> float:
    r"""Data one pipeline boundary carries in one direction per step (bytes): :math:`m\,T h\, b`.

    .. math:: V_{\rightarrow} = V_{\leftarrow} = m\, T h\, b                     (eq-par-pp-dir)

    A boundary carries the activations forward and their gradients backward, the same
    :math:`T \times h` tensor each way; :func:`pipeline_p2p_bytes_per_rank` is the sum of the
    two (:math:`2\,m\,T h\,b`), what an interior stage sends. A full-duplex link (NVLink,
    InfiniBand) carries the two directions at once, so the time on such a link is set by this
    number over the per-direction bandwidth (``LinkSpec.per_direction_bytes_per_s``), not by the
    sum over the bidirectional figure.

    Parameters
    ----------
    n_tokens : int
        :math:`T = s\,b`, tokens per micro-batch.
    d_model : int
        :math:`h`.
    n_microbatches : int
        :math:`m`.
    bytes_per_element : float
        :math:`b`.

    Returns
    -------
    float
        Bytes crossing one stage boundary in one direction per step.

    Assumptions
    -----------
    Only the hidden state crosses a boundary; no scatter/gather optimisation (with it each of
    the :math:`t` tensor-parallel ranks sends :math:`1/t` of this); no recomputation across the
    boundary.

    References
    ----------
    Narayanan et al. (2021), section 3.2 (under "Tensor and Pipeline Model Parallelism"): the
    communication "between every pair of consecutive devices (for either the forward or
    backward pass) for each microbatch is :math:`bsh`"; section 4.1 (scatter/gather).

    Examples
    --------
    >>> pipeline_p2p_bytes_per_direction(n_tokens=2048, d_model=4096, n_microbatches=8) / 2**20
    128.0
    """
    t_ = _positive_int("n_tokens", n_tokens)
    h = _positive_int("d_model", d_model)
    m = _positive_int("n_microbatches", n_microbatches)
    b = _positive("bytes_per_element", bytes_per_element)
    return float(m) * t_ * h * b


def zero_comm_bytes_per_rank_limit(n_params: float, *, zero_stage: int,
                                   bytes_per_element: float = 2.0) -> float:
    r"""Data one data-parallel rank sends per step (bytes) in ZeRO's large-:math:`N_d` limit.

    .. math:: V_{0,1,2} \to 2\Psi b, \qquad V_3 \to 3\Psi b \quad (N_d \to \infty)
              (eq-par-zero-limit)

    The ZeRO paper states the volumes in this limit (it drops the :math:`(N_d-1)/N_d` of a
    ring): :math:`2\Psi` for plain data parallelism and for :math:`P_{os}` and
    :math:`P_{os+g}`, :math:`3\Psi` for :math:`P_{os+g+p}`, "1.5x". At a finite degree the
    exact volume is :func:`data_parallel_comm_bytes_per_rank`, which is smaller by the factor
    :math:`(N_d-1)/N_d` (0.98 at :math:`N_d = 64`).

    Parameters
    ----------
    n_params : float
        :math:`\Psi`.
    zero_stage : int
        0 to 3.
    bytes_per_element : float
        :math:`b`; 1 gives the paper's count in elements (:math:`2\Psi`, :math:`3\Psi`).

    Returns
    -------
    float
        Bytes sent per rank per step as :math:`N_d` grows without bound.

    Assumptions
    -----------
    Those of :func:`data_parallel_comm_bytes_per_rank`.

    References
    ----------
    Rajbhandari et al. (2020), section 7.1 ("data movement of :math:`2\Psi` ... for the
    all-reduce"), section 7.2.1 (:math:`P_{os+g}`: ":math:`2\Psi`", "the same communication
    volume") and section 7.2.2 (:math:`P_{os+g+p}`: ":math:`3\Psi`", "1.5x").

    Examples
    --------
    >>> zero_comm_bytes_per_rank_limit(1e9, zero_stage=3) / zero_comm_bytes_per_rank_limit(
    ...     1e9, zero_stage=0)
    1.5
    """
    psi = _positive("n_params", n_params, allow_zero=True)
    stage = _stage(zero_stage)
    b = _positive("bytes_per_element", bytes_per_element)
    return (3.0 if stage == 3 else 2.0) * psi * b


def expert_alltoall_bytes_per_layer(*, n_tokens: int, d_model: int, ep: int, top_k: int = 1,
                                    bytes_per_element: float = 2.0) -> float:
    r"""Data one expert-parallel rank sends per mixture-of-experts layer (bytes), both passes.

    .. math:: V = 4\,\frac{e-1}{e}\; k\, T h\, b                               (eq-par-ep-comm)

    Each of the :math:`kT` routed token copies leaves its rank unless its expert lives there
    (probability :math:`1/e` under balanced routing); dispatch and combine are one all-to-all
    each, forward and backward.

    Parameters
    ----------
    n_tokens : int
        :math:`T`, tokens on this rank.
    d_model : int
        :math:`h`.
    ep : int
        :math:`e`, ranks the experts are spread over.
    top_k : int
        :math:`k`, experts per token (1 for Switch).
    bytes_per_element : float
        :math:`b`.

    Returns
    -------
    float
        Bytes sent per rank per MoE layer per micro-batch.

    Assumptions
    -----------
    Balanced routing and no dropped tokens (see :func:`expert_capacity_tokens`).

    References
    ----------
    Lepikhin et al. (2021), "GShard", ICLR (the dispatch and combine all-to-alls of its
    sharded MoE layer); Fedus, Zoph and Shazeer (2022), sections 2.2 and 5.

    Examples
    --------
    >>> expert_alltoall_bytes_per_layer(n_tokens=4096, d_model=4096, ep=8, top_k=2) / 2**20
    224.0
    """
    t_ = _positive_int("n_tokens", n_tokens)
    h = _positive_int("d_model", d_model)
    e = _positive_int("ep", ep)
    k = _positive_int("top_k", top_k)
    b = _positive("bytes_per_element", bytes_per_element)
    return 4.0 * (e - 1) / e * k * t_ * h * b


# --- expert parallelism: capacity and load balance -----------------------------------------

def expert_capacity_tokens(*, n_tokens: int, n_experts: int, capacity_factor: float = 1.0,
                           top_k: int = 1) -> int:
    r"""Token slots (tokens) of each expert per batch; tokens beyond them are dropped.

    .. math:: C = \left\lfloor \frac{k\,T}{E}\cdot \text{CF} \right\rfloor     (eq-par-capacity)

    Parameters
    ----------
    n_tokens : int
        :math:`T`, tokens in the batch.
    n_experts : int
        :math:`E`.
    capacity_factor : float
        CF, > 0; 1 leaves no slack, Switch Transformer trains with 1 to 1.25.
    top_k : int
        :math:`k`, experts per token.

    Returns
    -------
    int
        Token slots per expert.

    Assumptions
    -----------
    Rounded down to whole tokens (implementations differ on the rounding).

    References
    ----------
    Fedus, Zoph and Shazeer (2022), section 2.2 ("expert capacity = tokens per batch / number
    of experts x capacity factor").

    Examples
    --------
    >>> expert_capacity_tokens(n_tokens=4096, n_experts=64, capacity_factor=1.25)
    80
    """
    if not math.isfinite(_positive_int("top_k", top_k) * _positive_int("n_tokens", n_tokens)
                         / _positive_int("n_experts", n_experts)
                         * _positive("capacity_factor", capacity_factor)):
        raise ValueError(f"top_k * n_tokens / n_experts * capacity_factor must be finite, got "
                         f"capacity_factor={capacity_factor!r}")
    t_ = _positive_int("n_tokens", n_tokens)
    e = _positive_int("n_experts", n_experts)
    cf = _positive("capacity_factor", capacity_factor)
    k = _positive_int("top_k", top_k)
    return int(math.floor(k * t_ / e * cf + 1e-9))


def dropped_tokens(expert_loads, capacity_tokens: int) -> int:
    r"""Tokens dropped (count) when experts receive ``expert_loads`` and take ``capacity_tokens``.

    .. math:: D = \sum_{i=1}^{E} \max(0,\ n_i - C)                           (eq-par-dropped)

    Parameters
    ----------
    expert_loads : sequence of int
        :math:`n_i`, tokens routed to each expert.
    capacity_tokens : int
        :math:`C` (:func:`expert_capacity_tokens`).

    Returns
    -------
    int
        Tokens that skip the layer (they pass through the residual connection unchanged).

    Assumptions
    -----------
    No second-choice re-routing of overflow tokens.

    References
    ----------
    Fedus, Zoph and Shazeer (2022), section 2.2 and figure 3.

    Examples
    --------
    >>> dropped_tokens([5, 1, 3, 3], 3)
    2
    """
    _checks.positive_int("capacity_tokens", capacity_tokens, minimum=0, maximum=2**62)
    c = _positive_int("capacity_tokens", capacity_tokens, minimum=0)
    loads = np.asarray(expert_loads)
    if loads.ndim != 1 or loads.size == 0 or not np.issubdtype(loads.dtype, np.integer) \
            or np.any(loads < 0):
        raise ValueError(f"expert_loads must be a non-empty 1-D sequence of integers >= 0, "
                         f"got {expert_loads!r}")
    return int(np.maximum(loads - c, 0).sum())


def expected_dropped_fraction_uniform(*, n_tokens: int, n_experts: int,
                                      capacity_factor: float = 1.0) -> float:
    r"""Expected share of tokens dropped (dimensionless) under uniform random top-1 routing.

    .. math:: \frac{\mathbb{E}[D]}{T} = \frac{E}{T}\sum_{n > C} (n - C)\binom{T}{n}
              E^{-n}\,(1 - 1/E)^{T-n}                                       (eq-par-drop-uniform)

    Each expert's load is Binomial(:math:`T`, :math:`1/E`): even a perfectly balanced router
    *on average* overflows some experts in every batch, which is why the capacity factor is
    above 1.

    Parameters
    ----------
    n_tokens : int
        :math:`T`.
    n_experts : int
        :math:`E`.
    capacity_factor : float
        CF; :math:`C` is :func:`expert_capacity_tokens` with ``top_k=1``.

    Returns
    -------
    float
        Fraction in [0, 1).

    Assumptions
    -----------
    Top-1 routing, tokens independent and uniform over experts (the ideal a load-balancing
    loss pushes toward).

    References
    ----------
    Fedus, Zoph and Shazeer (2022), section 2.2 (capacity factor and dropped tokens); the
    binomial count is standard probability.

    Examples
    --------
    >>> round(expected_dropped_fraction_uniform(n_tokens=4096, n_experts=64,
    ...                                         capacity_factor=1.0), 3)
    0.049
    """
    _checks.positive_int("n_tokens", n_tokens, maximum=10**8)
    _checks.positive("capacity_factor", capacity_factor)
    _checks.at_most("capacity_factor * tokens", capacity_factor * n_tokens, 10**8)
    t_ = _positive_int("n_tokens", n_tokens)
    e = _positive_int("n_experts", n_experts)
    c = expert_capacity_tokens(n_tokens=t_, n_experts=e, capacity_factor=capacity_factor)
    if e == 1:
        return max(0, t_ - c) / t_
    n = np.arange(c + 1, t_ + 1, dtype=np.float64)
    if n.size == 0:
        return 0.0
    q = 1.0 / e
    log_pmf = (math.lgamma(t_ + 1) - np.array([math.lgamma(x + 1) for x in n])
               - np.array([math.lgamma(t_ - x + 1) for x in n])
               + n * math.log(q) + (t_ - n) * math.log1p(-q))
    return float(e * np.sum((n - c) * np.exp(log_pmf)) / t_)


def load_balance_loss(token_fractions, router_probs) -> float:
    r"""Switch Transformer's auxiliary load-balancing loss (dimensionless), without its weight.

    .. math:: \mathcal{L} = E \sum_{i=1}^{E} f_i P_i                          (eq-par-balance)

    Parameters
    ----------
    token_fractions : sequence of float
        :math:`f_i`, fraction of the batch's tokens dispatched to expert :math:`i` (sums to 1).
    router_probs : sequence of float
        :math:`P_i`, the router's probability for expert :math:`i`, averaged over the batch
        (sums to 1).

    Returns
    -------
    float
        1 under uniform routing; up to :math:`E` when one expert gets everything.

    Assumptions
    -----------
    Top-1 routing.

    References
    ----------
    Fedus, Zoph and Shazeer (2022), section 2.2 (the differentiable load-balancing loss,
    :math:`\alpha N \sum_i f_i P_i`).

    Examples
    --------
    >>> load_balance_loss([0.25] * 4, [0.25] * 4)
    1.0
    """
    f = np.asarray(token_fractions, dtype=np.float64)
    p = np.asarray(router_probs, dtype=np.float64)
    for name, arr in (("token_fractions", f), ("router_probs", p)):
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0) \
                or abs(arr.sum() - 1.0) > 1e-6:
            raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers >= 0 "
                             f"summing to 1, got {arr.tolist()!r}")
    if f.size != p.size:
        raise ValueError(f"token_fractions and router_probs must have the same length, got "
                         f"{f.size} and {p.size}")
    # math.fsum, not np.dot: BLAS's dot product rounds differently on each CPU family.
    return float(f.size * math.fsum(fi * pi for fi, pi in zip(f.tolist(), p.tolist())))


def expert_params_per_rank(*, dense_params: float, expert_params: float, ep: int) -> float:
    r"""Parameters (count) one rank holds when the experts are spread over ``ep`` ranks.

    .. math:: \Psi_{\text{rank}} = \Psi_{\text{dense}} + \frac{\Psi_{\text{experts}}}{e}
                                                                             (eq-par-ep-params)

    Parameters
    ----------
    dense_params : float
        Parameters every rank replicates (attention, embeddings, router, norms).
    expert_params : float
        Parameters of all experts of all MoE layers together.
    ep : int
        :math:`e`; the number of experts per layer must be a multiple of it.

    Returns
    -------
    float
        Parameters per rank.

    Assumptions
    -----------
    Experts divide evenly over ranks; no tensor parallelism inside an expert.

    References
    ----------
    Lepikhin et al. (2021), "GShard"; Fedus, Zoph and Shazeer (2022), section 5 (data, model
    and expert parallelism).

    Examples
    --------
    >>> expert_params_per_rank(dense_params=1e9, expert_params=8e9, ep=8) / 1e9
    2.0
    """
    d = _positive("dense_params", dense_params, allow_zero=True)
    x = _positive("expert_params", expert_params, allow_zero=True)
    e = _positive_int("ep", ep)
    return d + x / e


# --- the rank mesh ---------------------------------------------------------------------------

def _mesh(dp, tp, pp):
    return _positive_int("dp", dp), _positive_int("tp", tp), _positive_int("pp", pp)


def rank_coordinates(rank: int, *, dp: int, tp: int, pp: int) -> tuple[int, int, int]:
    r"""Coordinates of a global rank in the mesh (integers): data, pipeline, tensor.

    .. math:: r = i_t + t\,(i_d + N_d\, i_p), \qquad 0 \le r < N_d\, t\, p     (eq-par-rank)

    Parameters
    ----------
    rank : int
        :math:`r`, global rank in ``[0, dp * tp * pp)``.
    dp, tp, pp : int
        Degrees of the three axes; the world size is their product.

    Returns
    -------
    tuple of int
        ``(i_d, i_p, i_t)``.

    Assumptions
    -----------
    Megatron-LM's default order: tensor-parallel ranks are consecutive (so they share a node and
    its NVLink), then data-parallel, then pipeline (the slowest-varying, since its traffic is
    smallest and can cross nodes).

    References
    ----------
    Narayanan et al. (2021), section 3 (takeaway 1: tensor parallelism up to the GPUs of one
    server, pipeline parallelism across servers).

    Examples
    --------
    >>> rank_coordinates(13, dp=2, tp=4, pp=2)
    (1, 1, 1)
    """
    d, t, p = _mesh(dp, tp, pp)
    r = _positive_int("rank", rank, minimum=0)
    if r >= d * t * p:
        raise ValueError(f"rank must be in [0, {d * t * p - 1}] for dp*tp*pp={d * t * p}, "
                         f"got {rank!r}")
    return (r // t) % d, r // (t * d), r % t


def rank_of(*, i_d: int, i_p: int, i_t: int, dp: int, tp: int, pp: int) -> int:
    r"""Global rank (integer) of mesh coordinates; the inverse of :func:`rank_coordinates`.

    .. math:: r = i_t + t\,(i_d + N_d\, i_p)

    Parameters
    ----------
    i_d, i_p, i_t : int
        Data, pipeline and tensor coordinates.
    dp, tp, pp : int
        Degrees of the axes.

    Returns
    -------
    int
        The rank.

    Assumptions
    -----------
    The order of :func:`rank_coordinates`.

    References
    ----------
    Narayanan et al. (2021), section 3.

    Examples
    --------
    >>> rank_of(i_d=1, i_p=1, i_t=1, dp=2, tp=4, pp=2)
    13
    """
    d, t, p = _mesh(dp, tp, pp)
    for name, v, n in (("i_d", i_d, d), ("i_p", i_p, p), ("i_t", i_t, t)):
        if _positive_int(name, v, minimum=0) >= n:
            raise ValueError(f"{name} must be in [0, {n - 1}], got {v!r}")
    return int(i_t) + t * (int(i_d) + d * int(i_p))


def parallel_layout_4d(*, n_devices: int, tp: int, cp: int, pp: int, dp: int, seq_len: int,
                       batch_per_dp: int) -> dict:
    r"""Sizes (tokens and counts) of a 4D layout, TP x CP x PP x DP, checked against the GPUs.

    .. math:: t\,c\,p\,N_d = n, \qquad
              \text{tokens per batch} = N_d\, B_{dp}\, s, \qquad
              s_{\text{rank}} = s / c                                     (eq-par-layout-4d)

    Tensor parallelism splits each layer's matrices over :math:`t` ranks, context parallelism
    the sequence over :math:`c`, pipeline parallelism the layers over :math:`p` stages, and data
    parallelism the batch over :math:`N_d` replicas; every GPU holds one coordinate of each axis,
    so the four degrees multiply to the GPU count. Tensor, context and pipeline ranks of one
    replica see the same sequences, so the global batch is :math:`N_d B_{dp}` sequences.

    Parameters
    ----------
    n_devices : int
        :math:`n`, GPUs of the job.
    tp, cp, pp, dp : int
        :math:`t`, :math:`c`, :math:`p`, :math:`N_d`.
    seq_len : int
        :math:`s`, tokens per sequence (a multiple of ``cp``).
    batch_per_dp : int
        :math:`B_{dp}`, sequences per data-parallel replica per step.

    Returns
    -------
    dict
        ``tokens_per_batch`` (tokens of one optimizer step), ``seq_len_per_rank`` (tokens of a
        sequence each context-parallel rank holds), ``ranks_per_replica`` (:math:`t c p`, the
        GPUs one copy of the model spans) and ``batch_sequences`` (:math:`N_d B_{dp}`), as ints.

    Raises
    ------
    ValueError
        Naming ``n_devices`` when the degrees' product is not the GPU count, and ``seq_len``
        when context parallelism does not divide it.

    Assumptions
    -----------
    Each axis divides its dimension evenly; layers need not divide evenly over stages (Llama 3
    puts one layer fewer on its first and last stage), so they are not checked here.

    References
    ----------
    Dubey et al. (2024), "The Llama 3 Herd of Models", section 3.3.2 and table 4: 8,192 GPUs as
    TP 8, CP 1, PP 16, DP 64 with 32 sequences of 8,192 tokens per replica (16M tokens per
    batch); 16,384 GPUs as TP 8, CP 16, PP 16, DP 8 at a 131,072-token sequence.

    Examples
    --------
    >>> layout = parallel_layout_4d(n_devices=16384, tp=8, cp=16, pp=16, dp=8, seq_len=131072,
    ...                             batch_per_dp=16)
    >>> layout["tokens_per_batch"], layout["seq_len_per_rank"]
    (16777216, 8192)
    """
    n = _positive_int("n_devices", n_devices)
    t = _positive_int("tp", tp)
    c = _positive_int("cp", cp)
    p = _positive_int("pp", pp)
    d = _positive_int("dp", dp)
    s = _positive_int("seq_len", seq_len)
    b = _positive_int("batch_per_dp", batch_per_dp)
    if t * c * p * d != n:
        raise ValueError(f"n_devices must equal tp*cp*pp*dp = {t}*{c}*{p}*{d} = {t * c * p * d}, "
                         f"got {n_devices!r}")
    if s % c:
        raise ValueError(f"seq_len must be a multiple of cp={c}, got {seq_len!r}")
    return {"tokens_per_batch": d * b * s, "seq_len_per_rank": s // c,
            "ranks_per_replica": t * c * p, "batch_sequences": d * b}
