"""The one benchmark helper of the book: :func:`bench`.

Every measurement in the book goes through it, so every measurement is taken the same way:

1. **Synchronize** before starting, so earlier queued device work is not billed to ``fn``.
2. **Time the first call apart** (``first_call_s``): it includes compilation, autotuning,
   allocation and cold caches, and is never mixed into the steady-state statistics.
3. **Warm up by time**, not by count (``warmup_s``), then choose the number of repetitions
   from the warm-up's estimate so the measurement lasts about ``budget_s``.
4. **Time each repetition** with device events on CUDA (``torch.cuda.Event``, which time the
   GPU's work, not the host's launch) or with a monotonic clock on the CPU
   (``time.perf_counter_ns``).
5. Optionally **flush the cache** before each repetition, outside the timed region, so the
   data comes from memory rather than from a cache warmed by the previous repetition.
6. **Report the median** with a distribution-free confidence interval, percentiles, the
   repeat count and the environment (:func:`helpers.bench.env.environment`).

The design follows Triton's ``triton.testing.do_bench`` (events, a cache flush, warm-up and
repetitions sized by time) and the synchronize-then-measure practice of nanoGPT's ``bench.py``.
Introduced in {ref}`sec-measurement`.

>>> r = bench(lambda: sum(range(1000)), warmup_s=0.001, budget_s=0.01, env=False)
>>> r.timer, r.n_reps >= 5, r.median_s > 0
('perf_counter', True, True)
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from ..models import stats
from .env import environment

__all__ = ["BenchResult", "bench", "timer_resolution_s", "CacheFlusher"]


@dataclass(frozen=True)
class BenchResult:
    """What :func:`bench` measured. Times in seconds."""

    name: str
    device: str
    timer: str  # "cuda-event" or "perf_counter"
    n_reps: int
    first_call_s: float
    warmup_reps: int
    median_s: float
    mean_s: float
    min_s: float
    max_s: float
    p20_s: float
    p80_s: float
    ci_low_s: float | None  # confidence interval of the median (None if too few reps)
    ci_high_s: float | None
    ci_level: float
    n_outliers: int  # repetitions flagged by the MAD rule
    flushed_cache: bool
    samples_s: tuple[float, ...] = field(repr=False)
    env: dict = field(default_factory=dict, repr=False)

    @property
    def spread(self) -> float:
        """(p80 - p20) / median: a unitless noise figure; under a few per cent is quiet."""
        return (self.p80_s - self.p20_s) / self.median_s

    def rate(self, work: float) -> float:
        """``work`` (bytes, FLOP, items) per second at the median time."""
        return work / self.median_s

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with every field, the samples included."""
        d = asdict(self)
        d["samples_s"] = list(self.samples_s)
        d["spread"] = self.spread
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


class CacheFlusher:
    """Evicts caches between repetitions by writing a buffer larger than them.

    On CUDA the buffer defaults to 256 MB (a few times any current GPU's L2, e.g. 50 MB on an
    H100); on the CPU it defaults to 64 MB, several times a typical last-level cache share.
    """

    def __init__(self, device: str = "cpu", n_bytes: float | None = None):
        self.device = device
        if device.startswith("cuda"):
            import torch

            n = int(n_bytes or 256e6)
            self._buf = torch.empty(n // 4, dtype=torch.int32, device=device)
        else:
            n = int(n_bytes or 64e6)
            self._buf = np.empty(n // 8, dtype=np.float64)
        self.n_bytes = n

    def __call__(self) -> None:
        if self.device.startswith("cuda"):
            self._buf.zero_()
        else:
            self._buf.fill(1.0)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _time_cpu(fn, n_reps: int, flush) -> list[float]:
    out = []
    for _ in range(n_reps):
        if flush is not None:
            flush()
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) * 1e-9)
    return out


def _time_cuda(fn, n_reps: int, flush) -> list[float]:
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    for i in range(n_reps):
        if flush is not None:
            flush()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends)]


def bench(fn: Callable[[], Any], *, device: str = "cpu", name: str | None = None,
          warmup_s: float = 0.05, budget_s: float = 0.5, min_reps: int = 5,
          max_reps: int = 10_000, flush_cache: bool = False, flush_bytes: float | None = None,
          ci_level: float = 0.95, env: bool = True) -> BenchResult:
    """Measure ``fn()`` (no arguments) and return a :class:`BenchResult`.

    Parameters
    ----------
    fn : callable
        The work to time. For CUDA it should only enqueue device work (no host sync inside).
    device : {"cpu", "cuda", "cuda:N"}
        Where the work runs; selects CUDA events or the host clock. It is not inferred, because
        host-side code timed with CUDA events would show the GPU idle time, not its own.
    warmup_s, budget_s : float
        Seconds spent warming up, and the target length of the timed phase.
    min_reps, max_reps : int
        Bounds on the number of timed repetitions.
    flush_cache : bool
        Write a buffer larger than the cache before each repetition (outside the timing).
    env : bool
        Record :func:`~helpers.bench.env.environment` in the result.

    Raises ``ValueError`` for a non-positive budget, ``min_reps < 1`` or
    ``max_reps < min_reps``, and ``RuntimeError`` if ``device`` is CUDA but none is usable.
    """
    if not (warmup_s >= 0 and budget_s > 0):
        raise ValueError(f"warmup_s must be >= 0 and budget_s > 0, got {warmup_s}, {budget_s}")
    if min_reps < 1 or max_reps < min_reps:
        raise ValueError(f"need 1 <= min_reps <= max_reps, got {min_reps}, {max_reps}")
    is_cuda = device.startswith("cuda")
    if is_cuda:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(f"device={device!r} but torch sees no CUDA GPU")
    elif device != "cpu":
        raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {device!r}")
    flush = CacheFlusher(device, flush_bytes) if flush_cache else None
    timer = _time_cuda if is_cuda else _time_cpu

    # First call, timed apart (compilation, allocation, cold caches).
    _sync(device)
    t0 = time.perf_counter_ns()
    fn()
    _sync(device)
    first_call_s = (time.perf_counter_ns() - t0) * 1e-9

    # Warm-up by time; its per-call estimate sizes the timed phase.
    warm_times: list[float] = []
    deadline = time.perf_counter() + warmup_s
    while True:
        warm_times.extend(timer(fn, 1, flush))
        if time.perf_counter() >= deadline:
            break
    warm_reps = len(warm_times)
    per_call = max(float(np.median(warm_times)), 1e-9)
    n_reps = int(min(max_reps, max(min_reps, math.ceil(budget_s / per_call))))

    _sync(device)
    samples = np.asarray(timer(fn, n_reps, flush), dtype=np.float64)
    _sync(device)

    try:
        ci_low, ci_high, _ = stats.median_ci(samples, ci_level)
    except ValueError:  # too few repetitions for the level
        ci_low = ci_high = None
    return BenchResult(
        name=name or getattr(fn, "__name__", "fn"),
        device=device,
        timer="cuda-event" if is_cuda else "perf_counter",
        n_reps=n_reps,
        first_call_s=first_call_s,
        warmup_reps=warm_reps,
        median_s=stats.percentile(samples, 50),
        mean_s=float(samples.mean()),
        min_s=float(samples.min()),
        max_s=float(samples.max()),
        p20_s=stats.percentile(samples, 20),
        p80_s=stats.percentile(samples, 80),
        ci_low_s=ci_low,
        ci_high_s=ci_high,
        ci_level=ci_level,
        n_outliers=int(stats.mad_outliers(samples).sum()) if samples.size > 2 else 0,
        flushed_cache=flush_cache,
        samples_s=tuple(float(v) for v in samples),
        env=environment(device) if env else {},
    )


def timer_resolution_s(n: int = 20_000) -> float:
    """Smallest non-zero step of ``time.perf_counter_ns`` seen in ``n`` back-to-back reads.

    This is the resolution a reader's CPU timer actually delivers (often tens of ns), which can
    be coarser than the clock's nominal nanosecond unit.
    """
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    reads = [time.perf_counter_ns() for _ in range(n)]
    steps = [b - a for a, b in zip(reads, reads[1:]) if b > a]
    if not steps:
        raise RuntimeError("perf_counter_ns never advanced")
    return min(steps) * 1e-9
