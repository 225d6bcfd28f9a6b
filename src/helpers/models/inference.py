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
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from . import stats
from ._checks import positive, positive_int

__all__ = ["request_latencies", "e2e_latency_s", "trace_metrics", "PERCENTILES"]

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
