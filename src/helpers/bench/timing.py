"""The one benchmark helper of the book: :func:`bench`.

Every measurement in the book goes through it, so every measurement is taken the same way:

1. **Check, then time.** An optional ``check`` receives the first call's result and raises if
   it is wrong, so a fast but broken function is never reported.
2. **Synchronize** before starting, so earlier queued device work is not billed to ``fn``.
3. **Time the first call apart** (``first_call_s``): it includes compilation, autotuning,
   allocation, page faults and cold caches, and is never mixed into the steady-state
   statistics.
4. **Warm up by time**, not by count (``warmup_s``), then choose the number of repetitions
   from the warm-up's estimate so that the measurement lasts about ``budget_s``.
5. **Time each repetition** with device events on CUDA (``torch.cuda.Event``, which time the
   GPU's work, not the host's launch) or with the monotonic clock on the CPU
   (``time.perf_counter_ns``). ``number`` calls may be batched into one repetition when one
   call is too short for the clock.
6. Optionally **flush the cache** before each repetition, outside the timed region, so the
   data come from memory rather than from a cache warmed by the previous repetition.
7. **Report the median** with its distribution-free confidence interval, the 20th and 80th
   percentiles, the repeat count, the outliers and the environment
   (:func:`helpers.bench.env.environment`).

The design follows Triton's ``triton.testing.do_bench`` (events, a cache flush, warm-up and
repetitions sized by time, the median with the 20th and 80th percentiles) and the Python
``timeit`` module (garbage collection off while timing). Introduced in {ref}`sec-measurement`.

>>> r = bench(lambda: sum(range(1000)), warmup_s=0.001, budget_s=0.01, env=False)
>>> r.timer, r.n_reps >= 5, r.median_s > 0
('perf_counter', True, True)

Used by many pages, among them: chapters/custom-operators.md, chapters/gemm.md,
chapters/measurement.md, chapters/memory-optimization.md, chapters/numerics-and-transformers.md,
chapters/reduction-scan-histogram.md.
"""

from __future__ import annotations

import gc
import json
import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..models import stats
from .env import environment

__all__ = ["BenchResult", "bench", "CacheFlusher", "matches", "fresh_pages", "timer_resolution_s",
           "clock_steps_ns", "clock_read_cost_s", "CLOCKS"]

#: The host clocks :func:`timer_resolution_s` can probe, by name.
CLOCKS: dict[str, Callable[[], int]] = {
    "perf_counter": time.perf_counter_ns,
    "monotonic": time.monotonic_ns,
    "time": time.time_ns,
    "process_time": time.process_time_ns,
    "thread_time": time.thread_time_ns,
}


@dataclass(frozen=True)
class BenchResult:
    """What :func:`bench` measured. Times in seconds, per call of ``fn``."""

    name: str
    device: str
    timer: str  # "cuda-event" or "perf_counter"
    n_reps: int  # timed repetitions (samples)
    number: int  # calls of fn per repetition; each sample is the repetition's time / number
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
    n_outliers: int  # repetitions flagged by the MAD rule (|modified z| > 3.5)
    flushed_cache: bool
    flush_bytes: float  # size of the buffer written between repetitions (0 if none)
    checked: bool  # whether a correctness check of the first call's result passed
    samples_s: tuple[float, ...] = field(repr=False)
    env: dict = field(default_factory=dict, repr=False)
    warmup_samples_s: tuple[float, ...] = field(default=(), repr=False)  # warm-up, in order

    @property
    def spread(self) -> float:
        """(p80 - p20) / median: a unitless noise figure; a few per cent is a quiet machine."""
        if self.median_s == 0:
            return math.nan
        return (self.p80_s - self.p20_s) / self.median_s

    @property
    def ci_relative_halfwidth(self) -> float | None:
        """Half the median's confidence interval over the median (None if no interval)."""
        if self.ci_low_s is None or self.ci_high_s is None or self.median_s == 0:
            return None
        return (self.ci_high_s - self.ci_low_s) / 2 / self.median_s

    def rate(self, work: float) -> float:
        """``work`` (bytes, FLOP, items) per second at the median time."""
        if self.median_s <= 0:
            raise ValueError(f"median time is {self.median_s!r}: below the timer's resolution; "
                             "time more work per repetition (number=...)")
        return work / self.median_s

    def summary(self) -> str:
        """One line: median, its interval, spread, repetitions and first call."""
        from ..units import fmt_time

        ci = ""
        if self.ci_low_s is not None:
            ci = (f" ({self.ci_level:.0%} CI {fmt_time(self.ci_low_s)} to "
                  f"{fmt_time(self.ci_high_s)})")
        return (f"{self.name}: median {fmt_time(self.median_s)}{ci}, spread {self.spread:.1%}, "
                f"{self.n_reps} reps x {self.number}, first call {fmt_time(self.first_call_s)}"
                f" [{self.timer}]")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with every field, the samples included."""
        d = asdict(self)
        d["samples_s"] = list(self.samples_s)
        d["warmup_samples_s"] = list(self.warmup_samples_s)
        d["spread"] = self.spread
        return d

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


class CacheFlusher:
    """Evicts caches between repetitions by writing a buffer larger than them.

    On CUDA the buffer defaults to 256 MB, a few times any current GPU's L2 (50 MB on an H100),
    and is zeroed on the device, as Triton's ``do_bench`` does. On the CPU it defaults to
    64 MB. That evicts the private L1 and L2 caches, but a server's shared last-level cache
    can be larger (see :func:`helpers.bench.env.llc_bytes`): the flush size decides which
    cache level the data come from, so pass ``n_bytes`` on purpose and report it. The buffer is
    written once at construction, so its page faults are not paid inside a measurement.
    """

    def __init__(self, device: str = "cpu", n_bytes: float | None = None):
        if n_bytes is not None and not (math.isfinite(n_bytes) and n_bytes >= 64):
            raise ValueError(f"n_bytes must be a finite number >= 64, got {n_bytes!r}")
        self.device = device
        if device.startswith("cuda"):
            import torch

            n = int(n_bytes or 256e6)
            self._buf = torch.empty(n // 4, dtype=torch.int32, device=device)
        else:
            n = int(n_bytes or 64e6)
            self._buf = np.empty(n // 8, dtype=np.float64)
        self.n_bytes = float(n)
        self()

    def __call__(self) -> None:
        if self.device.startswith("cuda"):
            self._buf.zero_()
        else:
            self._buf.fill(1.0)


def _as_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor, on any device
        value = value.detach().float().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def matches(reference, *, rtol: float = 1e-5, atol: float = 1e-8) -> Callable[[Any], None]:
    """A ``check`` for :func:`bench`: the result must match ``reference`` and not be trivial.

    The returned callable raises ``AssertionError`` if the result's shape differs, if it holds
    NaN or inf, if it is not close to ``reference`` (``numpy.allclose`` with ``rtol`` and
    ``atol``), or if the reference itself is all zeros, because a check against zeros cannot
    tell a right answer from a function that returns zeros without computing anything.
    Accepts NumPy arrays, torch tensors (any device) and scalars.

    >>> import numpy as np
    >>> x = np.arange(1.0, 5.0)
    >>> matches(x * 2)(x + x)           # passes silently
    >>> matches(x * 2)(x * 3)
    Traceback (most recent call last):
    ...
    AssertionError: result differs from the reference: max abs error 4, rtol 1e-05, atol 1e-08
    """
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"rtol and atol must be >= 0, got {rtol!r}, {atol!r}")
    ref = _as_numpy(reference)
    if not np.all(np.isfinite(ref)):
        raise ValueError("the reference holds NaN or inf")
    if ref.size == 0 or not np.any(ref):
        raise ValueError("the reference is empty or all zeros: it cannot check anything")

    def check(result) -> None:
        out = _as_numpy(result)
        if out.shape != ref.shape:
            raise AssertionError(f"result has shape {out.shape}, the reference {ref.shape}")
        if not np.all(np.isfinite(out)):
            raise AssertionError("result holds NaN or inf")
        if not np.allclose(out, ref, rtol=rtol, atol=atol):
            err = float(np.max(np.abs(out - ref)))
            raise AssertionError(f"result differs from the reference: max abs error {err:.3g}, "
                                 f"rtol {rtol:g}, atol {atol:g}")

    return check


def sync(device: str) -> None:
    """Wait until every kernel queued on ``device`` has finished (a no-op for ``"cpu"``)."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(device)


def interleaved(fns: Mapping[str, Callable[[], Any]], *, rounds: int, warmup_rounds: int = 1,
                device: str = "cpu") -> dict[str, tuple[float, ...]]:
    """Time several variants of the same work in alternation; return each one's samples (s).

    Every round calls each variant once, in the order given on even rounds and in the reverse
    order on odd rounds (A B, B A, A B, ...), so a slow drift of the machine (clock boost fading,
    a neighbour starting up, the page cache filling) lands on every variant alike instead of on
    whichever ran last. This is the control that a before/after pair of :func:`bench` calls
    lacks. Each call is bracketed by :func:`sync`, so on a GPU it is timed to completion; the
    clock is ``perf_counter``, so a call should last well over a microsecond.
    """
    if not fns:
        raise ValueError("interleaved needs at least one variant to time")
    if not all(callable(f) for f in fns.values()):
        raise ValueError("every variant must be a callable taking no arguments")
    if int(rounds) != rounds or rounds < 2:
        raise ValueError(f"rounds must be an integer >= 2, got {rounds!r}")
    if int(warmup_rounds) != warmup_rounds or warmup_rounds < 0:
        raise ValueError(f"warmup_rounds must be an integer >= 0, got {warmup_rounds!r}")
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(int(warmup_rounds) + int(rounds)):
        for name in (names if r % 2 == 0 else names[::-1]):
            sync(device)
            t0 = time.perf_counter()
            fns[name]()
            sync(device)
            if r >= warmup_rounds:
                samples[name].append(time.perf_counter() - t0)
    return {name: tuple(v) for name, v in samples.items()}


@contextmanager
def _gc_paused(pause: bool):
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause and was_enabled:
            gc.enable()


def _time_cpu(fn, n_reps: int, number: int, flush, device: str) -> list[float]:
    out = []
    for _ in range(n_reps):
        if flush is not None:
            flush()
        t0 = time.perf_counter_ns()
        for _ in range(number):
            fn()
        out.append((time.perf_counter_ns() - t0) * 1e-9 / number)
    return out


def _time_cuda(fn, n_reps: int, number: int, flush, device: str) -> list[float]:
    """Record a start and an end event around each repetition on the device's current stream,
    synchronize once at the end, and convert the events' milliseconds to seconds."""
    import torch

    stream = torch.cuda.current_stream(device)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    for i in range(n_reps):
        if flush is not None:
            flush()  # enqueued before the start event: not timed
        starts[i].record(stream)
        for _ in range(number):
            fn()
        ends[i].record(stream)
    torch.cuda.synchronize(device)
    return [s.elapsed_time(e) * 1e-3 / number for s, e in zip(starts, ends)]


def _check_device(device: str) -> bool:
    if not isinstance(device, str):
        raise ValueError(f"device must be a string, got {device!r}")
    if device == "cpu":
        return False
    if device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(f"device={device!r} but torch sees no CUDA GPU")
        return True
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")


def bench(fn: Callable[[], Any], *, device: str = "cpu", name: str | None = None,
          warmup_s: float = 0.05, budget_s: float = 0.5, min_reps: int = 5,
          max_reps: int = 10_000, number: int = 1, flush_cache: bool = False,
          flush_bytes: float | None = None, ci_level: float = 0.95,
          check: Callable[[Any], Any] | None = None, disable_gc: bool = True,
          env: bool = True) -> BenchResult:
    """Measure ``fn()`` (no arguments) and return a :class:`BenchResult`.

    Parameters
    ----------
    fn : callable
        The work to time. For CUDA it should only enqueue device work (no host sync inside).
    device : {"cpu", "cuda", "cuda:N"}
        Where the work runs; selects CUDA events or the host clock. It is not inferred, because
        host-side code timed with CUDA events would show the GPU's idle time, not its own.
    warmup_s, budget_s : float
        Seconds spent warming up (after the first call), and the target length of the timed
        phase, flushes included.
    min_reps, max_reps : int
        Bounds on the number of timed repetitions.
    number : int
        Calls of ``fn`` per timed repetition; each sample is the repetition's time divided by
        ``number``. Use it when one call is shorter than a few thousand clock ticks.
    flush_cache : bool
        Write a buffer (``flush_bytes``; see :class:`CacheFlusher`) before each repetition,
        outside the timing.
    ci_level : float
        Confidence level of the median's interval.
    check : callable, optional
        Called with the first call's return value; it should raise if the result is wrong.
    disable_gc : bool
        Pause Python's garbage collector during warm-up and timing, as ``timeit`` does, so a
        collection triggered by earlier allocations does not land in one repetition.
    env : bool
        Record :func:`~helpers.bench.env.environment` in the result.

    Raises ``ValueError`` for a negative warm-up, a non-positive budget, bad repetition counts
    or an unknown device, ``RuntimeError`` if ``device`` is CUDA but none is usable, and
    whatever ``check`` raises.
    """
    if not (math.isfinite(warmup_s) and warmup_s >= 0 and math.isfinite(budget_s)
            and budget_s > 0):
        raise ValueError(f"warmup_s must be >= 0 and budget_s > 0, got {warmup_s}, {budget_s}")
    for label, value in (("min_reps", min_reps), ("max_reps", max_reps), ("number", number)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{label} must be an integer >= 1, got {value!r}")
    if max_reps < min_reps:
        raise ValueError(f"need min_reps <= max_reps, got {min_reps}, {max_reps}")
    ci_level = float(ci_level)
    if not 0.0 < ci_level < 1.0:
        raise ValueError(f"ci_level must be in (0, 1), got {ci_level!r}")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    is_cuda = _check_device(device)
    flush = CacheFlusher(device, flush_bytes) if flush_cache else None
    timer = _time_cuda if is_cuda else _time_cpu

    # First call, timed apart (compilation, allocation, cold caches), and checked.
    sync(device)
    t0 = time.perf_counter_ns()
    result = fn()
    sync(device)
    first_call_s = (time.perf_counter_ns() - t0) * 1e-9
    checked = False
    if check is not None:
        check(result)
        checked = True
    del result

    with _gc_paused(disable_gc):
        # Warm-up by time; its cost per repetition (flush included) sizes the timed phase.
        warm_times: list[float] = []
        warm_start = time.perf_counter()
        deadline = warm_start + warmup_s
        while True:
            warm_times.extend(timer(fn, 1, number, flush, device))
            if time.perf_counter() >= deadline:
                break
        warm_reps = len(warm_times)
        wall_per_rep = (time.perf_counter() - warm_start) / warm_reps
        n_reps = int(min(max_reps, max(min_reps, math.ceil(budget_s / max(wall_per_rep, 1e-9)))))

        sync(device)
        samples = np.asarray(timer(fn, n_reps, number, flush, device), dtype=np.float64)
        sync(device)

    try:
        ci_low, ci_high, _ = stats.median_ci(samples, ci_level)
    except ValueError:  # too few repetitions for the level
        ci_low = ci_high = None
    return BenchResult(
        name=name or getattr(fn, "__name__", "fn"),
        device=device,
        timer="cuda-event" if is_cuda else "perf_counter",
        n_reps=n_reps,
        number=int(number),
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
        flush_bytes=flush.n_bytes if flush is not None else 0.0,
        checked=checked,
        samples_s=tuple(float(v) for v in samples),
        env=environment(device) if env else {},
        warmup_samples_s=tuple(float(v) for v in warm_times),
    )


def fresh_pages(n_bytes: float) -> np.ndarray:
    """A float64 array on freshly mapped memory that nothing has touched yet.

    The operating system maps a page of an anonymous mapping only when it is first touched
    (a *page fault*), so the first pass over this array pays for every page and later passes
    do not. ``numpy.empty`` cannot promise this: the allocator may hand back memory that an
    earlier array already touched. Used to measure first-touch costs on purpose.

    >>> a = fresh_pages(1 << 16)
    >>> a.size, a.dtype.name, bool(a.flags.writeable), float(a.sum())
    (8192, 'float64', True, 0.0)
    """
    import mmap

    if not (math.isfinite(n_bytes) and n_bytes >= 8):
        raise ValueError(f"n_bytes must be a finite number >= 8, got {n_bytes!r}")
    n = int(n_bytes) // 8 * 8
    return np.frombuffer(mmap.mmap(-1, n), dtype=np.float64)


def clock_steps_ns(n: int = 20_000, clock: str = "perf_counter") -> np.ndarray:
    """Differences between ``n`` back-to-back reads of a host clock, in nanoseconds.

    Zero differences (two reads within one tick) are kept: their share says how coarse the
    clock is relative to the cost of reading it.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    try:
        read = CLOCKS[clock]
    except KeyError:
        raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {clock!r}") from None
    reads = [read() for _ in range(int(n))]
    return np.diff(np.asarray(reads, dtype=np.int64))


def timer_resolution_s(n: int = 20_000, clock: str = "perf_counter") -> float:
    r"""Smallest non-zero step of a host clock seen in ``n`` back-to-back reads (seconds).

    This is the resolution a measurement actually gets: the larger of the clock's tick and
    the time one read takes. It is often tens of nanoseconds for ``perf_counter`` on Linux,
    coarser than the nanosecond unit the clock reports in, and much coarser for some clocks
    and operating systems.

    >>> 0 < timer_resolution_s(2_000) < 1e-3
    True
    """
    steps = clock_steps_ns(n, clock)
    positive = steps[steps > 0]
    if positive.size == 0:
        raise RuntimeError(f"the {clock} clock never advanced in {n} reads")
    return float(positive.min()) * 1e-9


def clock_read_cost_s(n: int = 20_000, clock: str = "perf_counter") -> float:
    """Median time between two back-to-back reads of a host clock: the cost of one read."""
    steps = clock_steps_ns(n, clock)
    return float(np.median(steps)) * 1e-9
