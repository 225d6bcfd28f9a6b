"""Streamed greedy generation with a timestamp per token: the raw data of TTFT, TPOT and ITL.

:func:`stream_generate` does what :meth:`helpers.nn.decoder.Decoder.generate` does (one prefill
of the prompt, then one decode step per token, greedy) and records, on one clock, when the
request arrived and when each output token became available, as a server that streams tokens
would send them. :func:`helpers.models.inference.request_latencies` turns the times into the
request's metrics. Used in {ref}`sec-inference-metrics`.

Used by: chapters/inference-metrics.md.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from .decoder import Decoder, KVCache

__all__ = ["stream_generate"]


@torch.no_grad()
def stream_generate(model: Decoder, prompt: torch.Tensor, max_new_tokens: int, *,
                    clock: Callable[[], float] = time.perf_counter, sync: Callable[[], None] | None = None,
                    arrival_s: float | None = None) -> dict:
    """Greedy generation of ``max_new_tokens`` tokens after ``prompt`` (1-D or ``(1, P)``), timed.

    Parameters
    ----------
    model : Decoder
        The model (eval mode).
    prompt : tensor of int
        The prompt's tokens.
    max_new_tokens : int
        Output tokens to produce (>= 1).
    clock : callable
        Seconds on a monotonic clock (``time.perf_counter`` by default).
    sync : callable, optional
        Called before each timestamp so that queued device work is finished (e.g.
        ``torch.cuda.synchronize``); on a CPU nothing is queued.
    arrival_s : float, optional
        When the request arrived (on ``clock``); default: the moment this call starts, so
        TTFT is the prefill alone.

    Returns
    -------
    dict
        ``arrival_s``, ``token_times_s`` (one per output token: the first when the prefill's
        logits are ready, then one per decode step), ``tokens`` (output token ids),
        ``prefill_s`` and ``decode_step_s`` (list of each step's duration).
    """
    if not (isinstance(max_new_tokens, int) and max_new_tokens >= 1):
        raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
    tokens = prompt.reshape(1, -1)
    if tokens.shape[1] < 1:
        raise ValueError("the prompt is empty")
    P = tokens.shape[1]
    if P + max_new_tokens > model.cfg.max_seq_len:
        raise ValueError(f"prompt ({P}) plus {max_new_tokens} new tokens exceed the model's "
                         f"context of {model.cfg.max_seq_len}")
    sync = sync or (lambda: None)
    start = clock()
    arrival = start if arrival_s is None else float(arrival_s)
    cache = KVCache(model.cfg, batch=1, max_seq_len=P + max_new_tokens,
                    dtype=model.embed.weight.dtype, device=tokens.device)
    logits = model(tokens, cache=cache, start_pos=0)       # prefill
    nxt = logits[:, -1].argmax(-1, keepdim=True)
    sync()
    times, out = [clock()], [int(nxt)]
    for step in range(max_new_tokens - 1):                 # decode: one token per step
        logits = model(nxt, cache=cache, start_pos=P + step)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        sync()
        times.append(clock())
        out.append(int(nxt))
    return {"arrival_s": arrival, "token_times_s": times, "tokens": out,
            "prefill_s": times[0] - start,
            "decode_step_s": [b - a for a, b in zip(times[:-1], times[1:])]}
