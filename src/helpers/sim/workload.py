r"""Seeded request traces for the serving simulators and labs of Part V.

A trace is a list of :class:`Request`: when each request arrives, how many prompt tokens it
brings, how many output tokens it will ask for, and (optionally) which shared prefix its prompt
starts with. Arrivals are a Poisson process (exponential gaps at ``rate_per_s``, the open-loop
load of a public service) or all at time zero (a closed batch); lengths come from small samplers
(:func:`fixed`, :func:`uniform`, :func:`geometric`).

The same trace drives the discrete-event simulator and the real engine, so a lab can compare the
two on identical work. :func:`prompt_tokens` cuts each request's prompt from a token stream (the
book model's validation text), deterministically from the seed.

>>> tr = poisson_trace(10.0, 5, prompt_len=fixed(16), output_len=geometric(8.0), seed=0)
>>> len(tr), tr[0].prompt_len, all(b.arrival_s >= a.arrival_s for a, b in zip(tr, tr[1:]))
(5, 16, True)

Used by: chapters/inference-metrics.md, chapters/scheduling-and-kv-cache.md.
"""

from __future__ import annotations

from dataclasses import dataclass, asdict
from typing import Callable

import numpy as np

from ..models._checks import positive, positive_int

__all__ = ["Request", "LengthSampler", "fixed", "uniform", "geometric", "poisson_trace",
           "batch_trace", "prompt_tokens", "to_dicts", "from_dicts"]

#: A length sampler draws ``n`` positive integer lengths from a numpy Generator.
LengthSampler = Callable[[np.random.Generator, int], np.ndarray]


@dataclass(frozen=True)
class Request:
    """One request of a trace: ``id``, ``arrival_s``, ``prompt_len`` and ``output_len`` (tokens),
    and ``prefix_id`` (requests with the same id start with the same ``prefix_len`` tokens;
    ``None`` for no shared prefix)."""

    id: int
    arrival_s: float
    prompt_len: int
    output_len: int
    prefix_id: int | None = None
    prefix_len: int = 0


def fixed(n: int) -> LengthSampler:
    """Every length is ``n`` (>= 1)."""
    n = positive_int("n", n)
    return lambda rng, k: np.full(k, n, dtype=np.int64)


def uniform(lo: int, hi: int) -> LengthSampler:
    """Lengths uniform on the integers ``lo .. hi`` (inclusive, 1 <= lo <= hi)."""
    lo, hi = positive_int("lo", lo), positive_int("hi", hi)
    if hi < lo:
        raise ValueError(f"need lo <= hi, got lo={lo}, hi={hi}")
    return lambda rng, k: rng.integers(lo, hi + 1, size=k, dtype=np.int64)


def geometric(mean: float, *, cap: int | None = None) -> LengthSampler:
    """Geometric lengths on 1, 2, ... with the given mean (>= 1), optionally capped.

    A geometric number of tokens generated at a steady rate gives a nearly exponential service
    time: the memoryless case that the M/M/c formulas of lesson 20 assume."""
    mean = positive("mean", mean)
    if mean < 1:
        raise ValueError(f"a geometric length has mean >= 1, got {mean}")
    if cap is not None:
        cap = positive_int("cap", cap)
    p = 1.0 / mean

    def draw(rng, k):
        x = rng.geometric(p, size=k).astype(np.int64)
        return np.minimum(x, cap) if cap is not None else x
    return draw


def _lengths(sampler: LengthSampler, rng, n: int, what: str) -> np.ndarray:
    x = np.asarray(sampler(rng, n), dtype=np.int64)
    if x.shape != (n,) or np.any(x < 1):
        raise ValueError(f"the {what} sampler must return {n} lengths >= 1")
    return x


def _build(arrivals, n, prompt_len, output_len, rng, n_prefixes, prefix_len) -> list[Request]:
    prompts = _lengths(prompt_len, rng, n, "prompt_len")
    outputs = _lengths(output_len, rng, n, "output_len")
    if n_prefixes:
        n_prefixes = positive_int("n_prefixes", n_prefixes)
        prefix_len = positive_int("prefix_len", prefix_len)
        ids = rng.integers(0, n_prefixes, size=n)
        prompts = prompts + prefix_len
    return [Request(i, float(arrivals[i]), int(prompts[i]), int(outputs[i]),
                    int(ids[i]) if n_prefixes else None, prefix_len if n_prefixes else 0)
            for i in range(n)]


def poisson_trace(rate_per_s: float, n: int, *, prompt_len: LengthSampler,
                  output_len: LengthSampler, seed: int = 0, n_prefixes: int = 0,
                  prefix_len: int = 0) -> list[Request]:
    """``n`` requests arriving as a Poisson process at ``rate_per_s`` (first at time 0).

    With ``n_prefixes`` > 0 each request starts with one of that many shared prefixes of
    ``prefix_len`` tokens (a system prompt), chosen uniformly, before its own ``prompt_len``
    tokens."""
    rate = positive("rate_per_s", rate_per_s)
    n = positive_int("n", n)
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1.0 / rate, size=n)
    gaps[0] = 0.0
    return _build(np.cumsum(gaps), n, prompt_len, output_len, rng, n_prefixes, prefix_len)


def batch_trace(n: int, *, prompt_len: LengthSampler, output_len: LengthSampler, seed: int = 0,
                n_prefixes: int = 0, prefix_len: int = 0) -> list[Request]:
    """``n`` requests all present at time 0 (an offline batch)."""
    n = positive_int("n", n)
    rng = np.random.default_rng(seed)
    return _build(np.zeros(n), n, prompt_len, output_len, rng, n_prefixes, prefix_len)


def prompt_tokens(trace: list[Request], tokens, *, seed: int = 0) -> list[np.ndarray]:
    """Each request's prompt as token ids cut from the 1-D stream ``tokens`` (e.g. the book
    model's validation split): the shared prefix of its ``prefix_id`` (the same ids for every
    request with that prefix) followed by its own tokens, from seeded random offsets."""
    stream = np.asarray(tokens).ravel()
    rng = np.random.default_rng(seed)
    longest = max(r.prompt_len for r in trace)
    if stream.size <= longest:
        raise ValueError(f"the token stream ({stream.size}) is shorter than the longest prompt "
                         f"({longest})")
    prefixes: dict[int, np.ndarray] = {}
    out = []
    for r in trace:
        own = r.prompt_len - r.prefix_len
        parts = []
        if r.prefix_id is not None:
            if r.prefix_id not in prefixes:
                s = int(rng.integers(0, stream.size - r.prefix_len))
                prefixes[r.prefix_id] = stream[s:s + r.prefix_len].copy()
            parts.append(prefixes[r.prefix_id])
        s = int(rng.integers(0, stream.size - own))
        parts.append(stream[s:s + own])
        out.append(np.concatenate(parts))
    return out


def to_dicts(trace: list[Request]) -> list[dict]:
    """The trace as plain dicts (for a lab's JSON)."""
    return [asdict(r) for r in trace]


def from_dicts(rows: list[dict]) -> list[Request]:
    """The inverse of :func:`to_dicts`."""
    return [Request(**r) for r in rows]
