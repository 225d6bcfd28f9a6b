r"""Distributed performance analysis: utilization, scaling efficiency and exposed communication.

How much of a cluster's arithmetic a training run turns into model progress (model and hardware
FLOP utilization), how well it scales with the number of devices, and how much of its
communication the step waits for. The data-parallel step model follows PyTorch's
``DistributedDataParallel``: gradients are grouped into buckets, and each bucket's all-reduce is
launched as soon as the backward pass has produced it, so all but the last bucket can overlap
with the rest of the backward pass.

Symbols (the notation page): :math:`N` parameters, :math:`L` layers, :math:`H` heads,
:math:`Q` head dimension, :math:`T` sequence length, :math:`n` devices (ranks).

References
----------
* Chowdhery et al. (2022), "PaLM: Scaling Language Modeling with Pathways", section 4 and
  appendix B (MFU, HFU, the FLOP per token :math:`6N + 12LHQT`), table 3.
* Li et al. (2020), "PyTorch Distributed: Experiences on Accelerating Data Parallel Training",
  VLDB, section 3.2 (gradient bucketing, overlapping all-reduce with the backward pass).
* Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer Models"
  (model vs hardware FLOP utilization under selective recomputation).

Used by: chapters/distributed-analysis.md, labs/data-parallel.md.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from . import _checks

__all__ = ["model_flop_per_token", "mfu", "hfu", "strong_scaling_efficiency",
           "weak_scaling_efficiency", "exposed_comm_s", "dp_step_time_s", "dp_exposed_comm_s",
           "ddp_step_time_s", "ddp_exposed_comm_s", "measured_curve_s",
           "straggler_step_time_s", "time_to_train_s", "union_intervals", "PALM_540B",
           "selective_recompute_flop_overhead", "selective_recompute_forward_fraction",
           "megatron_training_time_s", "KORTHIKANTI_2022", "cluster_flop_per_s",
           "NARAYANAN_2021_TABLE_1", "LLAMA3_TABLE_4"]

#: PaLM 540B as the PaLM paper reports it (table 1, section 4, table 3): parameters, layers,
#: heads, head dimension, sequence length, chips, peak bf16 FLOP/s per TPU v4 chip, tokens/s.
PALM_540B = dict(n_params=540.35e9, n_layers=118, n_heads=48, head_dim=256, seq_len=2048,
                 n_devices=6144, peak_flop_per_s=275e12, tokens_per_s=238.3e3,
                 published_mfu=0.462, published_hfu=0.578)


def model_flop_per_token(*, n_params: float, n_layers: int, n_heads: int, head_dim: int,
                         seq_len: int) -> float:
    r"""Model FLOP per token of one training step (forward and backward) of a dense transformer.

    .. math:: F_{\text{tok}} = 6N + 12\,L\,H\,Q\,T        \qquad\text{(eq-dist-flop-per-token)}

    :math:`6N`: forward :math:`2N` plus backward :math:`4N` for the weight matrices; the second
    term is self-attention's two score products (:math:`QK^\top` and :math:`AV`) over a full
    :math:`T \times T` matrix, three passes. Recomputed activations are not counted: this is
    the numerator of MFU, the work the model needs, not what the hardware did.

    Parameters
    ----------
    n_params : float
        :math:`N`, parameters (non-embedding, or all: the paper uses all).
    n_layers, n_heads, head_dim, seq_len : int
        :math:`L`, :math:`H`, :math:`Q`, :math:`T`.

    Returns
    -------
    float
        FLOP per token.

    References
    ----------
    Chowdhery et al. (2022), appendix B.

    Examples
    --------
    >>> p = PALM_540B
    >>> round(model_flop_per_token(n_params=p["n_params"], n_layers=p["n_layers"],
    ...       n_heads=p["n_heads"], head_dim=p["head_dim"], seq_len=p["seq_len"]) / 1e12, 3)
    3.278
    """
    n = _checks.positive("n_params", n_params)
    L = _checks.positive_int("n_layers", n_layers)
    H = _checks.positive_int("n_heads", n_heads)
    Q = _checks.positive_int("head_dim", head_dim)
    T = _checks.positive_int("seq_len", seq_len)
    return 6.0 * n + 12.0 * L * H * Q * T


#: Korthikanti et al. (2022), table 3 (configurations: heads, hidden size, layers; s = 2048,
#: v = 51200 for all, section 6) and table 5 (the MFU and HFU they measured).
KORTHIKANTI_2022 = {
    "22B": dict(n_heads=64, d_model=6144, n_layers=48, mfu=0.415, hfu=0.437),
    "175B": dict(n_heads=96, d_model=12288, n_layers=96, mfu=0.514, hfu=0.528),
    "530B": dict(n_heads=128, d_model=20480, n_layers=105, mfu=0.560, hfu=0.570),
    "1T": dict(n_heads=160, d_model=25600, n_layers=128, mfu=0.563, hfu=0.570),
}
KORTHIKANTI_SEQ_LEN, KORTHIKANTI_VOCAB = 2048, 51200


def mfu(*, tokens_per_s: float, flop_per_token: float, peak_flop_per_s: float,
        n_devices: int = 1) -> float:
    r"""Model FLOP utilization: the model's FLOP rate over the devices' peak (dimensionless).

    .. math:: \mathrm{MFU} = \frac{R_{\text{tok}}\, F_{\text{tok}}}{n\, P}
       \qquad\text{(eq-dist-mfu)}

    Parameters
    ----------
    tokens_per_s : float
        :math:`R_{\text{tok}}`, training throughput of the whole job (tokens/s).
    flop_per_token : float
        :math:`F_{\text{tok}}` from :func:`model_flop_per_token` (FLOP).
    peak_flop_per_s : float
        :math:`P`, dense peak of one device at the training precision (FLOP/s).
    n_devices : int
        :math:`n`.

    Returns
    -------
    float
        MFU in [0, 1] for a physically possible run (larger means the inputs are inconsistent).

    References
    ----------
    Chowdhery et al. (2022), section 4.1 and table 3: PaLM 540B, 238.3K tokens/s on 6144
    TPU v4 chips, 46.2 % MFU.

    Examples
    --------
    >>> p = PALM_540B
    >>> f = model_flop_per_token(n_params=p["n_params"], n_layers=p["n_layers"],
    ...     n_heads=p["n_heads"], head_dim=p["head_dim"], seq_len=p["seq_len"])
    >>> round(mfu(tokens_per_s=p["tokens_per_s"], flop_per_token=f,
    ...     peak_flop_per_s=p["peak_flop_per_s"], n_devices=p["n_devices"]), 3)
    0.462
    """
    r = _checks.positive("tokens_per_s", tokens_per_s)
    f = _checks.positive("flop_per_token", flop_per_token)
    p = _checks.positive("peak_flop_per_s", peak_flop_per_s)
    n = _checks.positive_int("n_devices", n_devices)
    return r * f / (n * p)


def hfu(mfu: float, *, recomputed_forward_fraction: float) -> float:
    r"""Hardware FLOP utilization: MFU plus the forward work recomputed for the backward pass.

    .. math:: \mathrm{HFU} = \mathrm{MFU}\,\Bigl(1 + \frac{r}{3}\Bigr)
       \qquad\text{(eq-dist-hfu)}

    A training step is one forward and a backward of twice the forward's FLOP; recomputing a
    fraction :math:`r` of the forward during the backward adds :math:`r/3` of the model's
    FLOP to what the hardware executes. Full recomputation (:math:`r = 1`) gives
    :math:`\mathrm{HFU} = \tfrac{4}{3}\,\mathrm{MFU}`.

    Parameters
    ----------
    mfu : float
        MFU, in (0, 1].
    recomputed_forward_fraction : float
        :math:`r` in [0, 1]: the share of the forward pass's FLOP done again.

    Returns
    -------
    float
        HFU (dimensionless, >= MFU).

    Assumptions
    -----------
    The recomputed work has the same FLOP mix as the forward pass; the attention term and the
    weight matrices are recomputed in the same proportion.

    References
    ----------
    Chowdhery et al. (2022), appendix B (HFU counts rematerialization); Korthikanti et al.
    (2022) (selective recomputation brings HFU close to MFU).

    Examples
    --------
    >>> round(hfu(0.462, recomputed_forward_fraction=1.0), 3)
    0.616
    """
    m = _checks.positive("mfu", mfu)
    if m > 1:
        raise ValueError(f"mfu must be a fraction in (0, 1], got {mfu!r}")
    r = _checks.fraction("recomputed_forward_fraction", recomputed_forward_fraction)
    return m * (1.0 + r / 3.0)


def strong_scaling_efficiency(*, time_1_s: float, time_n_s: float, n_devices: int) -> float:
    r"""Strong-scaling efficiency: fixed total work, :math:`n` devices instead of one.

    .. math:: E_{\text{strong}} = \frac{T_1}{n\,T_n}        \qquad\text{(eq-dist-strong)}

    Parameters
    ----------
    time_1_s, time_n_s : float
        Time of the same job on one device and on :math:`n` devices (s).
    n_devices : int
        :math:`n`.

    Returns
    -------
    float
        Efficiency (1 is perfect; above 1 is superlinear, e.g. a working set that now fits).

    References
    ----------
    Amdahl (1967), the fixed-work speedup that this efficiency divides by :math:`n`.

    Examples
    --------
    >>> strong_scaling_efficiency(time_1_s=8.0, time_n_s=1.25, n_devices=8)
    0.8
    """
    t1 = _checks.positive("time_1_s", time_1_s)
    tn = _checks.positive("time_n_s", time_n_s)
    n = _checks.positive_int("n_devices", n_devices)
    return t1 / (n * tn)


def weak_scaling_efficiency(*, time_1_s: float, time_n_s: float) -> float:
    r"""Weak-scaling efficiency: the work grows with :math:`n` (same work per device).

    .. math:: E_{\text{weak}} = \frac{T_1}{T_n}              \qquad\text{(eq-dist-weak)}

    In data parallelism with a fixed per-device batch this is the single-device step time over
    the :math:`n`-device step time: the share of the step not lost to communication and
    stragglers.

    Parameters
    ----------
    time_1_s, time_n_s : float
        Step time on one device and on :math:`n` devices, each with the same per-device work (s).

    Returns
    -------
    float
        Efficiency (dimensionless).

    References
    ----------
    Gustafson (1988), scaled speedup; Li et al. (2020) report DDP scaling this way.

    Examples
    --------
    >>> weak_scaling_efficiency(time_1_s=0.9, time_n_s=1.0)
    0.9
    """
    return _checks.positive("time_1_s", time_1_s) / _checks.positive("time_n_s", time_n_s)


def union_intervals(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    r"""The union of closed intervals ``(start_s, end_s)`` as sorted, disjoint intervals.

    .. math:: \bigcup_i [a_i, b_i] = \bigsqcup_j [a'_j, b'_j]

    Raises ValueError on an interval that ends before it starts or is not finite.

    References
    ----------
    Set union of intervals; the same merge as :mod:`helpers.profiling.trace` uses for busy time.

    >>> union_intervals([(0, 2), (1, 3), (5, 6)])
    [(0.0, 3.0), (5.0, 6.0)]
    """
    if intervals is None or isinstance(intervals, (str, bytes)) \
            or not hasattr(intervals, "__iter__"):
        raise ValueError(f"intervals must be an iterable of (start_s, end_s) pairs, "
                         f"got {intervals!r}")
    clean = []
    for i, iv in enumerate(intervals):
        try:
            a, b = float(iv[0]), float(iv[1])
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"intervals[{i}] must be a (start_s, end_s) pair, "
                             f"got {iv!r}") from None
        if not (math.isfinite(a) and math.isfinite(b) and b >= a):
            raise ValueError(f"intervals[{i}] must be finite with end_s >= start_s, got {iv!r}")
        clean.append((a, b))
    merged: list[list[float]] = []
    for a, b in sorted(clean):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def exposed_comm_s(compute_intervals: Iterable[tuple[float, float]],
                   comm_intervals: Iterable[tuple[float, float]]) -> float:
    r"""Communication time not hidden under computation, from one rank's intervals (s).

    .. math:: T_{\text{exposed}} = \Bigl|\,\bigcup C \setminus \bigcup K\,\Bigr|
       = \Bigl|\bigcup C\Bigr| - \Bigl|\bigcup C \cap \bigcup K\Bigr|
       \qquad\text{(eq-dist-exposed)}

    :math:`C` are the communication intervals, :math:`K` the computation intervals of the same
    rank on one clock. Only the exposed part can lengthen the step; communication that runs
    while the device computes costs nothing but bandwidth.

    Parameters
    ----------
    compute_intervals, comm_intervals : iterable of (start_s, end_s)
        Intervals in seconds on one clock; they may overlap each other.

    Returns
    -------
    float
        Seconds during which communication ran and computation did not.

    References
    ----------
    Holistic Trace Analysis documentation, "Communication computation overlap"; Li et al.
    (2020), section 3.2.

    Examples
    --------
    >>> exposed_comm_s([(0, 10)], [(8, 12)])
    2.0
    """
    try:
        comm = union_intervals(comm_intervals)
    except ValueError as err:
        raise ValueError(f"comm_intervals: {err}") from None
    try:
        comp = union_intervals(compute_intervals)
    except ValueError as err:
        raise ValueError(f"compute_intervals: {err}") from None
    total = sum(b - a for a, b in comm)
    hidden = 0.0
    j = 0
    for a, b in comm:
        while j < len(comp) and comp[j][1] <= a:
            j += 1
        k = j
        while k < len(comp) and comp[k][0] < b:
            hidden += max(0.0, min(b, comp[k][1]) - max(a, comp[k][0]))
            k += 1
    return max(0.0, total - hidden)


def _bucket_schedule(forward_s, backward_s, bucket_comm_s, bucket_grad_fractions):
    f = _checks.positive("forward_s", forward_s, allow_zero=True)
    b = _checks.positive("backward_s", backward_s)
    comm = [_checks.positive(f"bucket_comm_s[{i}]", c, allow_zero=True)
            for i, c in enumerate(bucket_comm_s)]
    if not comm:
        raise ValueError("bucket_comm_s must list at least one bucket")
    if bucket_grad_fractions is None:
        frac = [1.0 / len(comm)] * len(comm)
    else:
        frac = [_checks.positive(f"bucket_grad_fractions[{i}]", x)
                for i, x in enumerate(bucket_grad_fractions)]
        if len(frac) != len(comm):
            raise ValueError(f"bucket_grad_fractions has {len(frac)} entries, bucket_comm_s "
                             f"{len(comm)}; give one per bucket")
        if abs(sum(frac) - 1.0) > 1e-9:
            raise ValueError(f"bucket_grad_fractions must sum to 1, got {sum(frac)!r}")
    ready, end, done = 0.0, f, []
    for x, c in zip(frac, comm):
        ready += x
        start = max(f + b * min(ready, 1.0), end)
        end = start + c
        done.append((start, end))
    return f, b, done


def dp_step_time_s(*, forward_s: float, backward_s: float, bucket_comm_s: Sequence[float],
                   bucket_grad_fractions: Sequence[float] | None = None,
                   optimizer_s: float = 0.0) -> float:
    r"""Step time of data-parallel training with bucketed all-reduce overlapped with backward.

    Bucket :math:`i` (in the order the backward pass fills them) holds a fraction
    :math:`g_i` of the gradients, is ready at :math:`r_i = F + B \sum_{j \le i} g_j`, and its
    all-reduce of duration :math:`c_i` starts when it is ready and the previous bucket's
    all-reduce has finished (one communication stream):

    .. math:: s_i = \max(r_i,\ e_{i-1}),\quad e_i = s_i + c_i,\quad
       T_{\text{step}} = \max(F + B,\ e_k) + T_{\text{opt}}
       \qquad\text{(eq-dist-dp-step)}

    with :math:`e_0 = F`. When every :math:`c_i \le B g_{i+1}` all but the last bucket hide
    under the backward pass and :math:`T_{\text{step}} = F + B + c_k + T_{\text{opt}}`.

    Parameters
    ----------
    forward_s, backward_s : float
        :math:`F` and :math:`B`, compute time of one rank's forward and backward pass (s).
    bucket_comm_s : sequence of float
        :math:`c_i`, all-reduce time of each bucket (s), e.g. from an alpha-beta model.
    bucket_grad_fractions : sequence of float, optional
        :math:`g_i`, each bucket's share of the gradient bytes (sums to 1); equal by default.
    optimizer_s : float
        :math:`T_{\text{opt}}`, the optimizer step after the last all-reduce (s).

    Returns
    -------
    float
        Seconds per step.

    Assumptions
    -----------
    The backward pass produces gradient bytes at a constant rate; communication does not slow
    the computation it overlaps (no contention for SMs or memory bandwidth); all ranks are
    equally fast (see :func:`straggler_step_time_s`).

    References
    ----------
    Li et al. (2020), section 3.2.3 and figure 2 (bucketing and overlap in PyTorch DDP).

    Examples
    --------
    >>> dp_step_time_s(forward_s=1.0, backward_s=2.0, bucket_comm_s=[0.3, 0.3, 0.3, 0.3])
    3.3
    """
    _checks.sequence("bucket_comm_s", bucket_comm_s)
    f, b, done = _bucket_schedule(forward_s, backward_s, bucket_comm_s, bucket_grad_fractions)
    opt = _checks.positive("optimizer_s", optimizer_s, allow_zero=True)
    return max(f + b, done[-1][1]) + opt


def dp_exposed_comm_s(*, forward_s: float, backward_s: float, bucket_comm_s: Sequence[float],
                      bucket_grad_fractions: Sequence[float] | None = None) -> float:
    r"""Exposed communication of the bucketed data-parallel step (s).

    .. math:: T_{\text{exposed}} = \max(0,\ e_k - (F + B))

    The part of :func:`dp_step_time_s` beyond the compute: zero only if the last bucket's
    all-reduce costs nothing, at least :math:`c_k`, at most :math:`\sum_i c_i`.

    References
    ----------
    Li et al. (2020), section 3.2.3.

    >>> round(dp_exposed_comm_s(forward_s=1.0, backward_s=2.0, bucket_comm_s=[0.3] * 4), 6)
    0.3
    """
    _checks.sequence("bucket_comm_s", bucket_comm_s)
    f, b, done = _bucket_schedule(forward_s, backward_s, bucket_comm_s, bucket_grad_fractions)
    return max(0.0, done[-1][1] - (f + b))


def measured_curve_s(x: float, points_x: Sequence[float], points_s: Sequence[float]) -> float:
    r"""A measured time curve (s) read at ``x`` by straight lines between its points in
    log-log coordinates.

    .. math:: \log t(x) = \log t_j + \frac{\log x - \log x_j}{\log x_{j+1} - \log x_j}
       \,(\log t_{j+1} - \log t_j), \qquad x_j \le x \le x_{j+1}

    Below the smallest point the curve is flat (a latency floor), above the largest it grows in
    proportion to ``x`` (bandwidth-bound), so a sweep of all-reduce sizes gives the time of any
    bucket as the same run measured it, without the alpha-beta fit's error at single sizes.

    Parameters
    ----------
    x : float
        Where to read the curve (e.g. bytes), > 0.
    points_x : sequence of float
        The measured abscissae (> 0, strictly increasing).
    points_s : sequence of float
        The measured times at them (s, > 0).

    Returns
    -------
    float
        Seconds at ``x``.

    References
    ----------
    Interpolation on a log-log scale, as in the all-reduce sweeps of NVIDIA's nccl-tests
    (``doc/PERFORMANCE.md``), whose times grow as a power of the size between regimes.

    Examples
    --------
    >>> round(measured_curve_s(2e6, [1e6, 4e6], [1e-4, 4e-4]), 9)
    0.0002
    """
    x = _checks.positive("x", x)
    _checks.sequence("points_x", points_x, min_len=1)
    _checks.sequence("points_s", points_s, min_len=1)
    _checks.same_length("points_x", points_x, "points_s", points_s)
    xs = [_checks.positive(f"points_x[{i}]", v) for i, v in enumerate(points_x)]
    ts = [_checks.positive(f"points_s[{i}]", v) for i, v in enumerate(points_s)]
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError(f"points_x must be strictly increasing, got {list(points_x)!r}")
    if x <= xs[0]:
        return ts[0]
    if x >= xs[-1]:
        return ts[-1] * x / xs[-1]
    j = max(i for i in range(len(xs) - 1) if xs[i] <= x)
    w = (math.log(x) - math.log(xs[j])) / (math.log(xs[j + 1]) - math.log(xs[j]))
    return math.exp(math.log(ts[j]) + w * (math.log(ts[j + 1]) - math.log(ts[j])))


def _ddp_schedule(forward_s, backward_s, bucket_comm_s, bucket_bytes, copy_bytes_per_s):
    _checks.sequence("bucket_comm_s", bucket_comm_s, min_len=1)
    _checks.sequence("bucket_bytes", bucket_bytes, min_len=1)
    _checks.same_length("bucket_comm_s", bucket_comm_s, "bucket_bytes", bucket_bytes)
    sizes = [_checks.positive(f"bucket_bytes[{i}]", v) for i, v in enumerate(bucket_bytes)]
    rate = _checks.positive("copy_bytes_per_s", copy_bytes_per_s)
    b = _checks.positive("backward_s", backward_s)
    copy = [2.0 * v / rate for v in sizes]
    total = sum(sizes)
    # copies into the buckets run on the compute stream as the backward produces each gradient
    f, b_ddp, done = _bucket_schedule(forward_s, b + sum(copy), bucket_comm_s,
                                      [v / total for v in sizes])
    t = f + b_ddp  # each copy back waits for its bucket's all-reduce and the previous copy
    for (_, end), c in zip(done, copy):
        t = max(t, end) + c
    return f, b, t


def ddp_exposed_comm_s(*, forward_s: float, backward_s: float, bucket_comm_s: Sequence[float],
                       bucket_bytes: Sequence[float], copy_bytes_per_s: float) -> float:
    r"""Time (s) a ``DistributedDataParallel`` step spends beyond its compute-only step: the
    bucket schedule of :func:`dp_step_time_s` plus DDP's two gradient copies.

    DDP keeps its buckets apart from the parameters' gradients (``gradient_as_bucket_view``
    off, the default): as the backward pass produces gradient :math:`i` it copies it into its
    bucket (reading and writing :math:`g_i` bytes on the compute stream, which lengthens the
    backward pass to :math:`B' = B + 2G/R`), and once the backward pass is done and bucket
    :math:`i`'s all-reduce has ended (:math:`e_i`, scheduled as in :eq:`eq-dist-dp-step` with
    :math:`B'`) it copies the reduced bucket back, one bucket after another:

    .. math:: t_0 = F + B',\quad t_i = \max(t_{i-1},\ e_i) + 2 g_i / R,\qquad
       T_{\text{exposed}} = t_k - (F + B)

    Parameters
    ----------
    forward_s, backward_s : float
        :math:`F`, :math:`B`: the compute-only forward and backward times (s).
    bucket_comm_s : sequence of float
        :math:`c_i`, each bucket's all-reduce time (s), in the order DDP reduces them.
    bucket_bytes : sequence of float
        :math:`g_i`, each bucket's gradient bytes (:math:`G = \sum g_i`).
    copy_bytes_per_s : float
        :math:`R`, the rate of a device-memory copy counted as bytes read plus written (a
        datasheet HBM bandwidth is its upper limit, so the copies are at least this long).

    Returns
    -------
    float
        Seconds of the step beyond :math:`F + B` (before the optimizer).

    Assumptions
    -----------
    As :func:`dp_step_time_s`: overlapped all-reduces do not slow the backward pass; each
    copy streams its bytes once at :math:`R`; the ranks are equally fast.

    References
    ----------
    Li et al. (2020), section 3.2.3 and algorithm 1 (bucketing, the copy of gradients into
    buckets and back); PyTorch ``torch/csrc/distributed/c10d/reducer.cpp``
    (``mark_variable_ready_dense`` copies in, ``finalize_backward`` copies out).

    Examples
    --------
    One bucket of 1 GB, 1 TB/s of copy: 2 ms in, the all-reduce, 2 ms out:

    >>> round(ddp_exposed_comm_s(forward_s=1.0, backward_s=2.0, bucket_comm_s=[0.01],
    ...                          bucket_bytes=[1e9], copy_bytes_per_s=1e12), 6)
    0.014
    """
    f, b, t = _ddp_schedule(forward_s, backward_s, bucket_comm_s, bucket_bytes,
                            copy_bytes_per_s)
    return t - (f + b)


def ddp_step_time_s(*, forward_s: float, backward_s: float, bucket_comm_s: Sequence[float],
                    bucket_bytes: Sequence[float], copy_bytes_per_s: float,
                    optimizer_s: float = 0.0) -> float:
    r"""Step time (s) of ``DistributedDataParallel``: compute plus the exposure of
    :func:`ddp_exposed_comm_s`, then the optimizer.

    .. math:: T_{\text{step}} = F + B + T_{\text{exposed}} + T_{\text{opt}}

    References
    ----------
    Li et al. (2020), section 3.2.3.

    Examples
    --------
    >>> round(ddp_step_time_s(forward_s=1.0, backward_s=2.0, bucket_comm_s=[0.01],
    ...                       bucket_bytes=[1e9], copy_bytes_per_s=1e12, optimizer_s=0.5), 6)
    3.514
    """
    f, b, t = _ddp_schedule(forward_s, backward_s, bucket_comm_s, bucket_bytes,
                            copy_bytes_per_s)
    return t + _checks.positive("optimizer_s", optimizer_s, allow_zero=True)


def straggler_step_time_s(per_rank_step_s: Sequence[float]) -> float:
    r"""Step time of a synchronous job: the slowest rank's (s).

    .. math:: T_{\text{step}} = \max_r T_r                  \qquad\text{(eq-dist-straggler)}

    Every rank waits in the gradient all-reduce for the last one to arrive, so one slow rank
    (a throttled GPU, a noisy neighbour, a bad link) sets the pace of all.

    References
    ----------
    Li et al. (2020), section 3.2 (a synchronous all-reduce completes when every rank has
    contributed).

    >>> straggler_step_time_s([1.0, 1.02, 1.3])
    1.3
    """
    _checks.sequence("per_rank_step_s", per_rank_step_s)
    xs = [_checks.positive(f"per_rank_step_s[{i}]", t) for i, t in enumerate(per_rank_step_s)]
    if not xs:
        raise ValueError("per_rank_step_s must list at least one rank")
    return max(xs)


def time_to_train_s(*, n_params: float, n_tokens: float, n_devices: int,
                    peak_flop_per_s: float, mfu: float) -> float:
    r"""Wall time to train on ``n_tokens`` at a given MFU (s), with :math:`6N` FLOP per token.

    .. math:: T_{\text{train}} = \frac{6 N D}{n\, P\, \mathrm{MFU}}
       \qquad\text{(eq-dist-time-to-train)}

    References
    ----------
    Kaplan et al. (2020), section 2.1 (:math:`C \approx 6ND`); Chowdhery et al. (2022),
    section 4.1 (MFU).

    >>> round(time_to_train_s(n_params=540.35e9, n_tokens=780e9, n_devices=6144,
    ...                       peak_flop_per_s=275e12, mfu=0.462) / 86400, 1)
    37.5
    """
    m = _checks.positive("mfu", mfu)
    if m > 1:
        raise ValueError(f"mfu must be a fraction in (0, 1], got {mfu!r}")
    return (6.0 * _checks.positive("n_params", n_params) * _checks.positive("n_tokens", n_tokens)
            / (_checks.positive_int("n_devices", n_devices)
               * _checks.positive("peak_flop_per_s", peak_flop_per_s) * m))


_COUNTINGS = ("paper", "forward")


def selective_recompute_flop_overhead(*, seq_len: int, d_model: int, n_layers: int,
                                      vocab_size: int, counting: str = "paper") -> float:
    r"""Extra FLOP (dimensionless, a fraction of the model FLOP) of Korthikanti's selective recomputation.

    .. math::

        \frac{F_\text{hw}}{F_\text{model}} - 1, \qquad
        F_\text{model} = 72 B L s h^2 \Bigl(1 + \frac{s}{6h} + \frac{v}{12hL}\Bigr)

    with :math:`F_\text{hw} = 72BLsh^2(1 + s/3h + v/12hL)` (the paper's equation 8,
    ``counting="paper"``, about :math:`s/6h`), or :math:`F_\text{hw} = F_\text{model} +
    4BLs^2h` (``counting="forward"``, about :math:`s/18h`).

    The two disagree, and both are in the source. Its appendix A says the recomputation is
    "an additional forward pass attention matrix computation (2Bs²h operations) and attention
    over values (2Bs²h operations)": :math:`4Bs^2h` per layer, which is :math:`s/18h` of the
    model FLOP. Its equation 8 adds :math:`72BLsh^2 \cdot s/6h = 12BLs^2h` instead, three
    times as much (the forward *and backward* attention FLOP). The numbers it prints (2.7 %
    and 1.6 % for GPT-3 and MT-NLG in section 5, the HFU of table 5) follow equation 8, so
    that is the default here; ``"forward"`` is the term-by-term count.

    Parameters
    ----------
    seq_len : int
        :math:`s`.
    d_model : int
        :math:`h`.
    n_layers : int
        :math:`L`.
    vocab_size : int
        :math:`v`.
    counting : {"paper", "forward"}
        Which hardware-FLOP count (see above).

    Returns
    -------
    float
        :math:`F_\text{hw}/F_\text{model} - 1`.

    Assumptions
    -----------
    GPT-style layer with a 4h MLP; only matrix products counted (the source's convention);
    the batch :math:`B` cancels.

    References
    ----------
    Korthikanti et al. (2022), section 5 (2.7 % and 1.6 %), appendix A, equations 7-9.

    Examples
    --------
    GPT-3 (s 2048, h 12288, 96 layers, v 51200): the paper's "2.7 %".

    >>> round(100 * selective_recompute_flop_overhead(seq_len=2048, d_model=12288,
    ...                                               n_layers=96, vocab_size=51200), 1)
    2.7
    """
    s = _checks.positive_int("seq_len", seq_len)
    h = _checks.positive_int("d_model", d_model)
    L = _checks.positive_int("n_layers", n_layers)
    v = _checks.positive_int("vocab_size", vocab_size)
    _checks.one_of("counting", counting, _COUNTINGS)
    model = 1.0 + s / (6.0 * h) + v / (12.0 * h * L)
    extra = s / (6.0 * h) if counting == "paper" else s / (18.0 * h)
    return extra / model


def selective_recompute_forward_fraction(*, seq_len: int, d_model: int, n_layers: int,
                                         vocab_size: int, counting: str = "paper") -> float:
    r"""The recomputed share of the forward pass (dimensionless) under selective recomputation: the input :func:`hfu` takes.

    .. math:: r = 3 \left(\frac{F_\text{hw}}{F_\text{model}} - 1\right)

    :func:`hfu` writes :math:`\mathrm{HFU} = \mathrm{MFU}(1 + r/3)`, a step being one forward
    and a backward of twice its FLOP; :math:`r` is the overhead of
    :func:`selective_recompute_flop_overhead` in units of one forward pass.

    Examples
    --------
    Korthikanti's 1T model: MFU 56.3 % gives the HFU of 57.0 % of their table 5.

    >>> r = selective_recompute_forward_fraction(seq_len=2048, d_model=25600, n_layers=128,
    ...                                          vocab_size=51200)
    >>> round(hfu(0.563, recomputed_forward_fraction=r), 3)
    0.57
    """
    return 3.0 * selective_recompute_flop_overhead(seq_len=seq_len, d_model=d_model,
                                                   n_layers=n_layers, vocab_size=vocab_size,
                                                   counting=counting)


def megatron_training_time_s(*, n_params: float, n_tokens: float, n_devices: int,
                             flop_per_s_per_device: float,
                             full_recompute: bool = True) -> float:
    r"""End-to-end training time (s) of Megatron-LM's estimate: :math:`8TP/(nX)`.

    .. math:: T_\text{train} \approx \frac{8\,T P}{n X}
       \quad\text{(full recomputation; } 6TP/(nX) \text{ without)}

    A token costs :math:`2P` FLOP forward, :math:`4P` backward and, with full activation
    recomputation, another :math:`2P` forward: 8 instead of the 6 of
    :func:`time_to_train_s`. :math:`X` is the *achieved* rate per GPU, counting the
    recomputation (a hardware FLOP rate, not MFU times peak).

    Parameters
    ----------
    n_params : float
        :math:`P`, parameters.
    n_tokens : float
        :math:`T`, training tokens.
    n_devices : int
        :math:`n`, GPUs.
    flop_per_s_per_device : float
        :math:`X`, achieved FLOP/s per GPU.
    full_recompute : bool
        True: the 8 of the source; False: 6 (no recomputation).

    Returns
    -------
    float
        Seconds.

    Assumptions
    -----------
    :math:`6h \gg s` and :math:`16lh \gg V` (the attention and logit terms of the source's
    FLOP count dropped); constant throughput, no failures or restarts.

    References
    ----------
    Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU Clusters
    Using Megatron-LM", SC21, section 5.1: GPT-3 (175B parameters, 300B tokens) on 1024 A100s
    at 140 TFLOP/s per GPU takes 34 days; a 1T model on 450B tokens, 3072 GPUs at 163
    TFLOP/s, 84 days.

    Examples
    --------
    >>> round(megatron_training_time_s(n_params=175e9, n_tokens=300e9, n_devices=1024,
    ...                                flop_per_s_per_device=140e12) / 86400)
    34
    """
    p = _checks.positive("n_params", n_params)
    t = _checks.positive("n_tokens", n_tokens)
    n = _checks.positive_int("n_devices", n_devices)
    x = _checks.positive("flop_per_s_per_device", flop_per_s_per_device)
    _checks.boolean("full_recompute", full_recompute)
    factor = 8.0 if full_recompute else 6.0
    return _checks.finite_ratio("n_params * n_tokens", factor * p * t,
                                "n_devices * flop_per_s_per_device", n * x)


#: Narayanan et al. (2021), table 1, three of its rows as printed: (parameters in billions,
#: GPUs, achieved teraFLOP/s per GPU, percentage of theoretical peak, aggregate petaFLOP/s).
NARAYANAN_2021_TABLE_1 = ((1.7, 32, 137, 44, 4.4), (145.6, 1536, 148, 47, 227.1),
                          (1008.0, 3072, 163, 52, 502.0))

#: Dubey et al. (2024), table 4 (Llama 3 405B pre-training), as printed: GPUs, TP, CP, PP, DP,
#: sequence length, batch size per DP replica, TFLOP/s per GPU, BF16 MFU (%). Tokens per batch
#: are printed as "16M" in every row.
LLAMA3_TABLE_4 = ((8192, 8, 1, 16, 64, 8192, 32, 430, 43),
                  (16384, 8, 1, 16, 128, 8192, 16, 400, 41),
                  (16384, 8, 16, 16, 8, 131072, 16, 380, 38))


def cluster_flop_per_s(*, n_devices: int, flop_per_s_per_device: float) -> float:
    r"""Aggregate arithmetic rate of a cluster (FLOP/s): devices times the rate of each.

    .. math:: X_\text{cluster} = n\, X                              (eq-dist-cluster-rate)

    With :math:`X` the rate each GPU *achieves* this is the cluster's achieved rate (Megatron's
    "aggregate petaFLOP/s"); with a datasheet peak it is the cluster's peak, and the ratio of the
    two is the utilization of :func:`mfu` (or HFU, when :math:`X` counts recomputation).

    Parameters
    ----------
    n_devices : int
        :math:`n`, GPUs of the job.
    flop_per_s_per_device : float
        :math:`X`, FLOP/s per GPU (achieved or peak).

    Returns
    -------
    float
        FLOP/s of the whole cluster.

    Assumptions
    -----------
    Every device runs at the same rate (a straggler sets the pace of a synchronous job:
    :func:`straggler_step_time_s`).

    References
    ----------
    Narayanan et al. (2021), SC21, abstract and table 1: 3072 A100s at 163 teraFLOP/s per GPU,
    "502 petaFLOP/s" aggregate (52 % of the 312 teraFLOP/s peak); Dubey et al. (2024), table 4
    (TFLOP/s per GPU on 8,192 and 16,384 H100s).

    Examples
    --------
    >>> round(cluster_flop_per_s(n_devices=1536, flop_per_s_per_device=148e12) / 1e15)
    227
    """
    n = _checks.positive_int("n_devices", n_devices)
    x = _checks.positive("flop_per_s_per_device", flop_per_s_per_device)
    return n * x
