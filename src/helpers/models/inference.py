r"""Latency and throughput of a served request: TTFT, TPOT, ITL, end-to-end latency.

A streamed request is a list of times: it arrives at :math:`a`, and its :math:`n` output tokens
reach the client at :math:`t_1 \le t_2 \le \dots \le t_n`. Everything a serving dashboard shows
is a function of those times:

* **time to first token** :math:`\mathrm{TTFT} = t_1 - a` (queueing, prefill and the first
  decode step; what a user waits before anything appears);
* **inter-token latencies** :math:`\mathrm{ITL}_k = t_{k+1} - t_k` (every gap, so jitter shows);
* **time per output token** :math:`\mathrm{TPOT} = (t_n - t_1) / (n - 1)`, the mean of the ITLs
  of one request (undefined for a one-token answer);
* **end-to-end latency** :math:`E = t_n - a = \mathrm{TTFT} + (n-1)\,\mathrm{TPOT}`.

Over a trace of many requests the percentiles of each (per request for TTFT, TPOT and E2E, per
gap for ITL) and the output-token throughput over the observation window are what lesson 17
(:ref:`sec-inference-metrics`) calls the service's metrics; lessons 18 and 20 read their
measured and simulated traces through :func:`trace_metrics`.

The definitions follow NVIDIA's benchmarking guide for LLM serving (NIM, "Metrics"), which
also notes that the first-token time includes queueing, prefill and the network.

Used by: chapters/inference-metrics.md, chapters/scheduling-and-kv-cache.md.
"""

from __future__ import annotations

import math

from typing import Iterable, Sequence

import numpy as np

from . import decode_bandwidth, queueing, roofline, stats
from . import transformer as tf
from ._checks import positive, positive_int
from . import _checks

__all__ = ["request_latencies", "e2e_latency_s", "trace_metrics", "PERCENTILES",
           "e2e_latency_by_definition_s", "E2E_DEFINITIONS",
           "kv_budget_bytes", "max_cached_tokens", "max_concurrent_requests",
           "prefill_time_lower_bound_s", "decode_step_time_bound_s", "ttft_lower_bound_s",
           "sustainable_request_rate_per_s", "gpu_time_request_rate_per_s"]

#: The percentiles :func:`trace_metrics` reports.
PERCENTILES = (50.0, 90.0, 99.0)


def _times(arrival_s: float, token_times_s) -> tuple[float, np.ndarray]:
    a = float(arrival_s)
    if not np.isfinite(a):
        raise ValueError(f"arrival_s must be finite, got {arrival_s!r}")
    t = np.asarray(token_times_s, dtype=float).ravel()
    if t.size == 0:
        raise ValueError("token_times_s is empty: a request with no output token has no TTFT")
    if not np.all(np.isfinite(t)):
        raise ValueError("token_times_s must be finite")
    if t[0] < a:
        raise ValueError(f"the first token ({t[0]!r} s) comes before the arrival ({a!r} s)")
    if np.any(np.diff(t) < 0):
        raise ValueError("token_times_s must be non-decreasing (tokens stream in order)")
    return a, t


def request_latencies(arrival_s: float, token_times_s) -> dict:
    r"""TTFT, TPOT, the inter-token gaps and the end-to-end latency of one streamed request.

    .. math::

        \mathrm{TTFT} = t_1 - a, \quad \mathrm{ITL}_k = t_{k+1} - t_k, \quad
        \mathrm{TPOT} = \frac{t_n - t_1}{n - 1}, \quad E = t_n - a

    Parameters
    ----------
    arrival_s : float
        :math:`a`, when the request arrived (s, any clock).
    token_times_s : sequence of float
        :math:`t_1 \dots t_n`, when each output token was delivered (s, same clock,
        non-decreasing, the first not before the arrival).

    Returns
    -------
    dict
        ``ttft_s``, ``tpot_s`` (``None`` for a single token), ``itl_s`` (list of :math:`n-1`
        gaps), ``e2e_s``, ``n_tokens``.

    Assumptions
    -----------
    Times are taken where the client sees them; a server-side trace omits the network.

    References
    ----------
    NVIDIA (2025), "NIM for LLMs benchmarking guide: Metrics" (time to first token, inter-token
    latency, end-to-end request latency), https://docs.nvidia.com/nim/benchmarking/llm/latest/metrics.html

    >>> m = request_latencies(0.0, [0.5, 0.6, 0.8])
    >>> m["ttft_s"], round(m["tpot_s"], 6), [round(x, 6) for x in m["itl_s"]], m["e2e_s"]
    (0.5, 0.15, [0.1, 0.2], 0.8)
    """
    _checks.real("arrival_s", arrival_s)
    if np.ndim(token_times_s) == 0:
        _checks.real("token_times_s", token_times_s)
    else:
        _checks.sequence("token_times_s", token_times_s)
    a, t = _times(arrival_s, token_times_s)
    itl = np.diff(t)
    return {"ttft_s": float(t[0] - a),
            "tpot_s": float((t[-1] - t[0]) / (t.size - 1)) if t.size > 1 else None,
            "itl_s": [float(x) for x in itl], "e2e_s": float(t[-1] - a), "n_tokens": int(t.size)}


def e2e_latency_s(ttft_s: float, tpot_s: float, n_output_tokens: int) -> float:
    r"""End-to-end latency from the first-token time and the per-token time.

    .. math:: E = \mathrm{TTFT} + (n - 1)\,\mathrm{TPOT}

    Parameters
    ----------
    ttft_s : float
        Time to first token (s, >= 0).
    tpot_s : float
        Mean time per output token after the first (s, >= 0).
    n_output_tokens : int
        :math:`n` (>= 1).

    Returns
    -------
    float
        Seconds from arrival to the last token.

    References
    ----------
    NVIDIA (2025), "NIM for LLMs benchmarking guide: Metrics" (end-to-end latency as first-token
    time plus generation time).

    >>> e2e_latency_s(0.2, 0.02, 101)
    2.2
    """
    ttft = positive("ttft_s", ttft_s, allow_zero=True)
    tpot = positive("tpot_s", tpot_s, allow_zero=True)
    n = positive_int("n_output_tokens", n_output_tokens)
    return ttft + (n - 1) * tpot


#: Vendors' definitions of end-to-end latency from TTFT and a per-token time, as
#: :func:`e2e_latency_by_definition_s` names them: the tokens after the first each add one
#: per-token time (NIM), or every output token does (Databricks).
E2E_DEFINITIONS = ("nim", "databricks")


def e2e_latency_by_definition_s(ttft_s: float, tpot_s: float, n_output_tokens: int, *,
                                definition: str) -> float:
    r"""End-to-end latency (s) as a named vendor defines it from TTFT and the per-token time.

    .. math:: E_\text{NIM} = \mathrm{TTFT} + (n - 1)\,\mathrm{ITL}, \qquad
              E_\text{Databricks} = \mathrm{TTFT} + n\,\mathrm{TPOT}           (eq-e2e-vendors)

    The two differ by one per-token time: NIM's inter-token latency is the mean gap *after*
    the first token, which TTFT already covers (:func:`e2e_latency_s`, the book's own
    definition); Databricks multiplies its TPOT by "the number of tokens to be generated".
    Fed the same two numbers, Databricks's formula is longer by :math:`\mathrm{TPOT}`, a
    relative difference of about :math:`1/n` for long answers and up to a half for two tokens:
    compare numbers from the two only after converting one definition into the other.

    Parameters
    ----------
    ttft_s : float
        Time to first token (s, >= 0).
    tpot_s : float
        The per-token time (s, >= 0): NIM's ITL, Databricks's TPOT.
    n_output_tokens : int
        :math:`n`, output tokens of the request (>= 1).
    definition : str
        ``"nim"`` or ``"databricks"`` (:data:`E2E_DEFINITIONS`).

    Returns
    -------
    float
        Seconds from the request to its last token, under that definition.

    Assumptions
    -----------
    Constant per-token time; TTFT includes the first token (both vendors say so).

    References
    ----------
    NVIDIA, "NIM for LLMs Benchmarking Guide", section "Metrics": end-to-end request latency
    is TTFT plus the generation time, and ITL the average time between consecutive tokens,
    :math:`(E - \mathrm{TTFT})/(n - 1)`; the guide's version 1.0.0, "Performance", prints TTFT,
    ITL and the throughput they imply (Llama-3.3-70B-Instruct on NIM 1.8.0, 2 x H100 FP8 TP2,
    5000 input / 500 output tokens, concurrency 1: 406.77 ms, 18.58 ms, 51.67 tokens/s). Databricks, "Conduct your own
    LLM endpoint benchmarking" (and the MosaicML blog "LLM Inference Performance Engineering:
    Best Practices", 2023): "Latency = TTFT + (TPOT) * (the number of tokens to be generated)".

    Examples
    --------
    >>> e2e_latency_by_definition_s(0.2, 0.02, 101, definition="nim")
    2.2
    >>> round(e2e_latency_by_definition_s(0.2, 0.02, 101, definition="databricks"), 6)
    2.22
    """
    _checks.one_of("definition", definition, E2E_DEFINITIONS)
    if definition == "nim":
        return e2e_latency_s(ttft_s, tpot_s, n_output_tokens)
    ttft = positive("ttft_s", ttft_s, allow_zero=True)
    tpot = positive("tpot_s", tpot_s, allow_zero=True)
    n = positive_int("n_output_tokens", n_output_tokens)
    return ttft + n * tpot


def trace_metrics(requests: Iterable, *, window_s: tuple[float, float] | None = None,
                  percentiles: Sequence[float] = PERCENTILES) -> dict:
    r"""Percentiles of TTFT, TPOT, ITL and end-to-end latency over a trace, and its throughput.

    .. math::

        X_{\text{output}} = \frac{\#\{\text{tokens delivered in } [T_0, T_1]\}}{T_1 - T_0},
        \qquad Q_q(\mathrm{TTFT}), Q_q(\mathrm{TPOT}), Q_q(\mathrm{ITL}), Q_q(E)

    Parameters
    ----------
    requests : iterable of ``(arrival_s, token_times_s)``
        One pair per completed request (mappings with keys ``arrival_s`` and
        ``token_times_s`` are accepted too).
    window_s : (float, float), optional
        :math:`[T_0, T_1]` for the throughput; default from the first arrival to the last token.
    percentiles : sequence of float
        Which percentiles (0-100) to report.

    Returns
    -------
    dict
        ``n_requests``, ``n_tokens``, ``duration_s``, ``output_tokens_per_s``,
        ``requests_per_s``, and for each of ``ttft_s``, ``tpot_s``, ``itl_s``, ``e2e_s`` a dict
        ``{"mean": ..., "p50": ..., ...}`` (``tpot_s`` over the requests with two or more tokens;
        ``None`` where there is no sample).

    Assumptions
    -----------
    Percentiles by linear interpolation (:func:`helpers.models.stats.percentile`). TTFT, TPOT and
    E2E are per request; ITL is per gap, so long answers weigh more in it.

    References
    ----------
    NVIDIA (2025), "NIM for LLMs benchmarking guide: Metrics" (per-request latencies summarized
    by percentiles; output-token throughput over the benchmark's duration).

    >>> m = trace_metrics([(0.0, [0.5, 0.6, 0.8]), (0.1, [0.9, 1.0])])
    >>> m["n_tokens"], m["ttft_s"]["p50"], round(m["output_tokens_per_s"], 3)
    (5, 0.65, 5.0)
    """
    _checks.sequence("requests", requests)
    _checks.sequence("percentiles", percentiles)
    for _p in percentiles:
        _checks.real("percentiles", _p, low=0, high=100)
    rows = []
    for r in requests:
        if isinstance(r, dict):
            r = (r["arrival_s"], r["token_times_s"])
        arrival, times = r
        rows.append((float(arrival), request_latencies(arrival, times), np.asarray(times, float)))
    if not rows:
        raise ValueError("the trace has no completed request")
    qs = [float(q) for q in percentiles]
    start = min(a for a, _, _ in rows)
    end = float(max(t[-1] for _, _, t in rows))
    if window_s is not None:
        start, end = float(window_s[0]), float(window_s[1])
        if not end > start:
            raise ValueError(f"window_s must be (start, end) with end > start, got {window_s!r}")
    duration = end - start
    if duration <= 0:
        raise ValueError("the trace spans no time: every token arrived with its request")
    n_tokens = int(sum(np.count_nonzero((t >= start) & (t <= end)) for _, _, t in rows))
    n_done = sum(1 for _, _, t in rows if start <= t[-1] <= end)

    def summary(samples):
        if not samples:
            return None
        out = {"mean": float(np.mean(samples))}
        out.update({f"p{q:g}": stats.percentile(samples, q) for q in qs})
        return out

    return {
        "n_requests": len(rows), "n_tokens": n_tokens, "duration_s": duration,
        "output_tokens_per_s": n_tokens / duration, "requests_per_s": n_done / duration,
        "ttft_s": summary([m["ttft_s"] for _, m, _ in rows]),
        "tpot_s": summary([m["tpot_s"] for _, m, _ in rows if m["tpot_s"] is not None]),
        "itl_s": summary([x for _, m, _ in rows for x in m["itl_s"]]),
        "e2e_s": summary([m["e2e_s"] for _, m, _ in rows]),
    }


# --- Predicting them: memory, prefill and decode bounds, capacity (lesson 17) ----------------


def kv_budget_bytes(hbm_bytes: float, weight_bytes: float, reserve_bytes: float = 0.0) -> float:
    r"""Bytes of GPU memory left for the KV cache once the weights and a reserve are placed.

    .. math:: M_{kv} = M_{\text{HBM}} - Q_w - R     (the page labels this eq-im-kv-budget)

    Parameters
    ----------
    hbm_bytes : float
        :math:`M_{\text{HBM}}`, the GPU's memory (bytes, > 0), e.g. ``GPUSpec.hbm_bytes``.
    weight_bytes : float
        :math:`Q_w`, the weights held on this GPU (bytes, > 0).
    reserve_bytes : float
        :math:`R`, activations, workspaces, the CUDA context and fragmentation (bytes, >= 0).

    Returns
    -------
    float
        :math:`M_{kv}` (bytes, > 0).

    Raises ``ValueError`` when the weights and the reserve leave no room.

    Assumptions
    -----------
    One model replica per GPU, its weights resident; everything not weights or reserve can hold
    KV cache (a paged allocator such as vLLM's wastes almost none of it).

    References
    ----------
    Kwon et al. (2023), section 1 and figure 1 (left): a 13B-parameter model on a 40 GB A100
    gives about 65 % of the memory to its weights and close to 30 % to the requests' KV cache.

    >>> kv_budget_bytes(40e9, 26e9, 2e9) / 1e9
    12.0
    """
    m = positive("hbm_bytes", hbm_bytes)
    w = positive("weight_bytes", weight_bytes)
    r = positive("reserve_bytes", reserve_bytes, allow_zero=True)
    left = m - w - r
    if not left > 0:
        raise ValueError(f"the weights ({w:.4g} B) and the reserve ({r:.4g} B) do not leave room "
                         f"for any KV cache in {m:.4g} B")
    return left


def max_cached_tokens(hbm_bytes: float, weight_bytes: float, kv_bytes_per_token: float,
                      reserve_bytes: float = 0.0) -> int:
    r"""Tokens whose keys and values fit in the KV budget, over all requests (count).

    .. math:: N_{\text{tok}} = \left\lfloor \frac{M_{\text{HBM}} - Q_w - R}{q_{kv}} \right\rfloor

    with :math:`q_{kv}` the KV-cache bytes of one token
    (:func:`helpers.models.transformer.kv_cache_bytes_per_token`).

    References
    ----------
    Kwon et al. (2023), section 3: 800 KB per token for OPT-13B in fp16.

    >>> max_cached_tokens(40e9, 26e9, 800 * 1024, 2e9)
    14648
    """
    q = positive("kv_bytes_per_token", kv_bytes_per_token)
    tokens = kv_budget_bytes(hbm_bytes, weight_bytes, reserve_bytes) // q
    if not math.isfinite(tokens):
        raise ValueError(f"kv_bytes_per_token is too small to count tokens, "
                         f"got {kv_bytes_per_token!r}")
    return int(tokens)


def max_concurrent_requests(hbm_bytes: float, weight_bytes: float, kv_bytes_per_token: float,
                            tokens_per_request: int, reserve_bytes: float = 0.0) -> int:
    r"""Requests that can be in flight at once, each holding its whole context (count).

    .. math:: B_{\max} = \left\lfloor \frac{M_{\text{HBM}} - Q_w - R}{q_{kv}\,(P + n)} \right\rfloor     (the page labels this eq-im-max-batch)

    Parameters
    ----------
    hbm_bytes, weight_bytes, kv_bytes_per_token, reserve_bytes
        As :func:`max_cached_tokens`.
    tokens_per_request : int
        :math:`P + n`, prompt plus output tokens a request holds at its longest (>= 1).

    Returns
    -------
    int
        :math:`B_{\max}` (0 when not even one request fits).

    Assumptions
    -----------
    Every request reserves its full length (the worst case, and what a server without paging
    must allocate); with paging the average length sets the batch instead.

    References
    ----------
    Kwon et al. (2023), section 3: one 2048-token OPT-13B request needs up to 1.6 GB, so a
    40 GB GPU holds only a handful.

    >>> max_concurrent_requests(40e9, 26e9, 800 * 1024, 2048, 2e9)
    7
    """
    n = positive_int("tokens_per_request", tokens_per_request)
    q = positive("kv_bytes_per_token", kv_bytes_per_token)
    requests = kv_budget_bytes(hbm_bytes, weight_bytes, reserve_bytes) // (q * n)
    if not math.isfinite(requests):
        raise ValueError(f"kv_bytes_per_token * tokens_per_request is too small to count requests, "
                         f"got {kv_bytes_per_token!r} * {tokens_per_request!r}")
    return int(requests)


def prefill_time_lower_bound_s(cfg: "tf.TransformerConfig", *, prompt_len: int,
                               bytes_per_element: float, peak_flop_per_s: float,
                               mem_bytes_per_s: float, batch: int = 1) -> float:
    r"""Lower bound (s) on the prefill of ``batch`` prompts of ``prompt_len`` tokens.

    .. math::

        T_{\text{prefill}} \ge \max\!\left(\frac{F_{\text{prefill}}(P)}{\Pi},\
            \frac{Q_w}{M}\right)     (the page labels this eq-im-prefill)

    the roofline bound (:func:`helpers.models.roofline.kernel_time_lower_bound_s`) with the FLOP
    of :func:`helpers.models.transformer.prefill_flop` and the bytes of the multiplied weights
    (:func:`helpers.models.transformer.matmul_parameter_count` times ``bytes_per_element``),
    read once for all the prompt's tokens.

    Parameters
    ----------
    cfg : TransformerConfig
        The model.
    prompt_len : int
        :math:`P`, tokens per prompt (>= 1).
    bytes_per_element : float
        Bytes per weight (2 for bf16).
    peak_flop_per_s : float
        :math:`\Pi`, the peak rate in the weights' precision (FLOP/s).
    mem_bytes_per_s : float
        :math:`M` (bytes/s).
    batch : int
        Prompts prefilled together (>= 1).

    Assumptions
    -----------
    Perfect overlap of arithmetic and traffic at both peaks; the KV cache written and the
    activations are small next to the weights.

    References
    ----------
    Austin, J. et al. (2025), *How to Scale Your Model*, "All About Transformer Inference":
    prefill is compute-bound once the prompt exceeds the ridge, decode is bandwidth-bound.

    >>> from helpers.models.transformer import LLAMA3_8B
    >>> round(prefill_time_lower_bound_s(LLAMA3_8B, prompt_len=1, bytes_per_element=2,
    ...       peak_flop_per_s=989.4e12, mem_bytes_per_s=4.8e12) * 1e3, 2)   # one token: weights
    3.13
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    positive("mem_bytes_per_s", mem_bytes_per_s)
    positive_int("prompt_len", prompt_len)
    _checks.at_most("prompt_len", prompt_len, 2**53)
    p = positive_int("prompt_len", prompt_len)
    flop = tf.prefill_flop(cfg, seq_len=p, batch=positive_int("batch", batch))
    w = tf.weight_bytes(tf.matmul_parameter_count(cfg), bytes_per_element)
    return roofline.kernel_time_lower_bound_s(flop, w, peak_flop_per_s, mem_bytes_per_s)


def decode_step_time_bound_s(cfg: "tf.TransformerConfig", *, context_len: int, batch: int,
                             bytes_per_element: float, peak_flop_per_s: float,
                             mem_bytes_per_s: float) -> float:
    r"""Roofline estimate (s) of one decode step of ``batch`` sequences at ``context_len`` tokens.

    .. math::

        T_{\text{step}} = \frac{B\,Q_{kv}(S)}{M} + \max\!\left(\frac{Q_w}{M},\
            \frac{2\,B\,N}{\Pi}\right)     (the page labels this eq-im-decode)

    :func:`helpers.models.decode_bandwidth.decode_step_time_s` with the model's multiplied
    weights :math:`N` (:func:`~helpers.models.transformer.matmul_parameter_count`),
    :math:`Q_w = N b` and one sequence's KV cache :math:`Q_{kv}(S)`
    (:func:`~helpers.models.transformer.kv_cache_bytes`). Every step emits one token per
    sequence, so it is also the time per output token (TPOT) at that batch.

    References
    ----------
    Austin et al. (2025), "Theoretical Step Time (General)"; Agarwal, M. et al. (2023),
    Databricks, "LLM Inference Performance Engineering: Best Practices" (decode is
    memory-bandwidth bound: time per output token over bytes per step).

    >>> from helpers.models.transformer import LLAMA3_8B
    >>> round(decode_step_time_bound_s(LLAMA3_8B, context_len=0, batch=1, bytes_per_element=2,
    ...       peak_flop_per_s=989.4e12, mem_bytes_per_s=4.8e12) * 1e3, 2)
    3.13
    """
    _checks.has_attributes("cfg", cfg, ("d_model", "n_layers", "n_heads"))
    b = positive_int("batch", batch)
    s = positive_int("context_len", context_len, minimum=0)
    n = tf.matmul_parameter_count(cfg)
    kv = tf.kv_cache_bytes(batch=1, seq_len=s, n_layers=cfg.n_layers, n_kv_heads=cfg.n_kv_heads,
                           head_dim=cfg.head_dim, bytes_per_element=bytes_per_element)
    return decode_bandwidth.decode_step_time_s(tf.weight_bytes(n, bytes_per_element), kv, b,
                                               mem_bytes_per_s, n, peak_flop_per_s)


def ttft_lower_bound_s(prefill_s: float, queue_s: float = 0.0) -> float:
    r"""Time to first token (s): the wait in the queue plus the prefill that yields the token.

    .. math:: \mathrm{TTFT} \ge W_q + T_{\text{prefill}}     (the page labels this eq-im-ttft)

    The prefill's last logits are the first output token, so no decode step is needed before
    it; the network and any tokenization come on top.

    References
    ----------
    NVIDIA (2025), "NIM for LLMs benchmarking guide: Metrics": time to first token includes
    the request's queueing, the prefill and the network.

    >>> ttft_lower_bound_s(0.12, queue_s=0.3)
    0.42
    """
    return (positive("queue_s", queue_s, allow_zero=True)
            + positive("prefill_s", prefill_s, allow_zero=True))


def sustainable_request_rate_per_s(concurrency: int, ttft_s: float, tpot_s: float,
                                   n_output_tokens: int) -> float:
    r"""Most requests per second a server keeps up with, at a given number in flight (1/s).

    Little's law with :math:`L` the requests in flight (bounded by memory,
    :func:`max_concurrent_requests`) and :math:`W` each one's end-to-end time
    (:func:`e2e_latency_s`):

    .. math:: \lambda_{\max} = \frac{B}{\mathrm{TTFT} + (n - 1)\,\mathrm{TPOT}}     (the page labels this eq-im-capacity)

    Above this rate requests arrive faster than the batch can finish them and the queue grows
    without bound.

    Parameters
    ----------
    concurrency : int
        :math:`B`, requests decoded together (>= 1).
    ttft_s, tpot_s : float
        The time to first token (without queueing) and time per output token at that batch (s).
    n_output_tokens : int
        :math:`n`, tokens per answer (>= 1).

    Assumptions
    -----------
    Every slot is refilled the moment it frees (continuous batching) and prefills do not slow
    the other requests' decode steps; a real server reaches less.

    References
    ----------
    Little, J. D. C. (1961), "A proof for the queuing formula L = lambda W", Operations
    Research 9(3).

    >>> round(sustainable_request_rate_per_s(64, 0.2, 0.02, 201), 3)
    15.238
    """
    e2e = e2e_latency_s(ttft_s, tpot_s, n_output_tokens)
    return queueing.little_arrival_rate_per_s(positive_int("concurrency", concurrency), e2e)


def gpu_time_request_rate_per_s(batch: int, prefill_s: float, step_s: float,
                                n_output_tokens: int) -> float:
    r"""Most requests per second one GPU can serve, counting its time spent in prefill (1/s).

    Prefills and decode steps share the GPU: while a new request's prompt runs, the other
    sequences of the batch do not advance. Each request costs the GPU its prefill and a
    :math:`1/B` share of the :math:`n - 1` decode steps that emit its later tokens, so the GPU
    keeps up with at most

    .. math:: \lambda_{\max} = \frac{1}{T_{\text{prefill}} + (n - 1)\,T_{\text{step}}(B) / B}
              = \frac{B}{B\,T_{\text{prefill}} + (n - 1)\,T_{\text{step}}(B)}
              (the page labels this eq-im-capacity-gpu)

    requests per second. It is never above :func:`sustainable_request_rate_per_s` with
    :math:`\mathrm{TTFT} = T_{\text{prefill}}` (the slots' bound, which counts each prefill
    once, for its own request, instead of once for every slot it stalls); the two agree
    at :math:`B = 1`.

    Parameters
    ----------
    batch : int
        :math:`B`, sequences decoded together when the server is saturated (>= 1).
    prefill_s : float
        :math:`T_{\text{prefill}}`, GPU time of one request's prefill (s, >= 0).
    step_s : float
        :math:`T_{\text{step}}(B)`, time of one decode step of the full batch (s, > 0).
    n_output_tokens : int
        :math:`n`, tokens per answer (>= 1); the first comes from the prefill.

    Assumptions
    -----------
    Prefill and decode do not overlap on the GPU (each step's time is its prefill work plus
    its decode work, as in a step-time model :math:`c_0 + c_d n_{\text{decode}} +
    c_p n_{\text{prefill}}`), the batch stays full at saturation, and every request has the
    same prompt and answer length. Chunked prefill (Sarathi-Serve) spreads the prefill over
    steps but does not remove its GPU time; disaggregated serving (DistServe) moves it to
    other GPUs, where this bound applies to each pool separately.

    References
    ----------
    Agrawal et al. (2024), "Taming Throughput-Latency Tradeoff in LLM Inference with
    Sarathi-Serve", OSDI, section 2 (prefills stall the decodes of the running batch);
    Zhong et al. (2024), "DistServe", OSDI, section 2.2 (prefill-decode interference).

    >>> round(gpu_time_request_rate_per_s(64, 0.016, 0.005, 256), 1)
    27.8
    >>> gpu_time_request_rate_per_s(1, 0.2, 0.02, 201) == sustainable_request_rate_per_s(1, 0.2, 0.02, 201)
    True
    """
    b = positive_int("batch", batch)
    t_pre = positive("prefill_s", prefill_s, allow_zero=True)
    t_step = positive("step_s", step_s)
    n = positive_int("n_output_tokens", n_output_tokens)
    per_request_s = t_pre + (n - 1) * t_step / b
    if per_request_s <= 0:
        raise ValueError("prefill_s must be > 0 when n_output_tokens is 1 (a request that costs "
                         f"no GPU time has no finite rate), got prefill_s={prefill_s!r}")
    return 1.0 / per_request_s
