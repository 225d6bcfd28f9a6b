"""Lab runner: timing kernels correctly (host timer, synchronized host timer, events, ``bench``).

The same operation is timed four ways, and each way's answer is compared with the careful one
(:func:`helpers.bench.bench`: device events, warm-up by time, median of many repetitions):

* ``host_no_sync``: ``perf_counter`` around the call only. On a GPU the call returns as soon
  as the kernel is queued, so this measures the launch, not the work;
* ``host_sync``: ``perf_counter`` around the call and a ``synchronize``: the work plus the
  launch and synchronization latency, which dominates a short kernel;
* ``events``: one pair of CUDA events around one call: the device's own time, single sample;
* ``bench``: events, warm-up, many repetitions, median and confidence interval;
* ``backlogged``: events again, but with the GPU kept busy by a sleeping kernel while the host
  queues every repetition, so no event pair can include time the GPU spent waiting for the host
  to launch the next kernel. For a kernel shorter than its launch this differs from ``bench``:
  the difference is launch overhead, which the events of an idle GPU include.

Four operations: a large matrix product (compute-bound), a large copy (memory-bound), a tiny
elementwise add (launch-bound), and a copy that fits in the L2 cache timed with and without
flushing the cache between repetitions (what a warm cache does to a bandwidth figure). The
first (cold) call of the matrix product and the warm-up samples are kept, to show why
warm-up is needed. On a CPU there are no events and no asynchrony in torch, so the CPU tier
times the same operations on the CPU and uses :class:`~helpers.bench.ToyStream` to show what
asynchrony does to a host timer.

Page: ``labs/timing.md`` (its tables and numbers: :mod:`helpers.labs.analysis.timing`). Run on a GPU machine as ``python -m helpers.labs.timing --out DIR``.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from helpers.bench import CacheFlusher, matches, sync
from helpers.bench.timing import timer_resolution_s
from helpers.bench.toy_stream import ToyStream, sleep_kernel, time_three_ways
from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import roofline

__all__ = ["LAB", "operations", "time_four_ways", "backlogged_times_s", "toy_asynchrony", "run", "grade_timer",
           "reference_or_none", "OPERATIONS", "main"]

#: The lab's record: its page, size table and the ``bench`` budget (fixed-count methods aside).
LAB = core.Lab(
    "timing", pages=("labs/timing.md",),
    sizes={"matmul_n": (256, 8192),
           "copy_elems": (1 << 20, 1 << 28),  # 4 MiB or 1 GiB of float32
           "l2_elems": (1 << 14, 1 << 22),  # 64 KiB or 16 MiB of float32: src+dst fit in L2
           "n_reps": (15, 50)},
    budget_s=(0.2, 1.0), warmup_s=(0.05, 0.05),
    claims=(
        Claim("roofline_time", "an operation's bench() median (the L2-sized copy after a flush)",
              "bound", model="helpers.models.roofline.kernel_time_lower_bound_s",
              ceilings="datasheet dense peak (bf16 for the matrix product, fp32 otherwise) and "
                       "HBM bandwidth (helpers.specs.H200_SXM)",
              limit="lower",
              why="no kernel does its FLOP faster than the peak rate or moves its bytes faster "
                  "than HBM; the L2-sized copy is held to it only after a flush, since a warm "
                  "L2 serves its bytes faster than HBM"),
        Claim("sync_host_timer", "a long kernel timed by the host with a synchronize",
              "prediction", model="helpers.models.launch.serial_time_s",
              ceilings="measured in the same run: the kernel's bench() median, and the fixed "
                       "cost of launch plus synchronize (the tiny add's synchronized host time "
                       "less its device time with the queue kept full)",
              tolerance=0.05,
              why="the timer adds one launch and one synchronize to the kernel's device time; "
                  "the fixed cost (about 1% of the copy) is taken from another kernel, and the "
                  "50 host-timed calls run after bench(), so a clock that drifts by the matrix "
                  "product's p20-p80 spread (3.5% on the H200) moves them apart: 5%"),
        Claim("event_pair", "a long kernel timed by one pair of events on an idle GPU",
              "prediction", model="helpers.models.launch.serial_time_s",
              ceilings="measured in the same run: the kernel's bench() median, and the fixed "
                       "cost of one event pair on an idle GPU (the tiny add's single-pair time "
                       "less its device time with the queue kept full)",
              tolerance=0.05,
              why="the pair brackets the kernel and the start of its launch; the fixed cost is "
                  "taken from another kernel, and the pairs run after bench(), so clock drift "
                  "of the matrix product's p20-p80 spread (3.5% on the H200) separates them: 5%"),
        Claim("launch_bound_bench", "bench()'s median of a kernel far shorter than its launch",
              "prediction", model="helpers.models.launch.eager_time_s",
              ceilings="measured in the same run: the host's time to call the operation (host "
                       "timer, no synchronize) and the kernel's device time (queue kept full)",
              tolerance=0.10,
              why="back-to-back repetitions are paced by the slower of host and device "
                  "(max(t_l, t_k)); left out: bench() also records two events per repetition, "
                  "and the host-timed calls each follow a synchronize, terms of a microsecond "
                  "beside a launch of about ten: 10%"),
    ))
METHODS = ("host_no_sync", "host_sync", "events", "bench", "backlogged")
OPERATIONS = ("matmul", "copy", "tiny_add", "l2_copy")


def operations(device: str) -> dict:
    """The four operations, with their sizes, FLOP and bytes moved, at the size tier in force.

    Each entry: ``fn`` (no arguments, only enqueues work), ``check`` (a correctness check of
    ``fn``'s result), ``flop``, ``bytes`` (minimum traffic to and from memory) and ``dtype``.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    cuda = device.startswith("cuda")
    mm_dtype = torch.bfloat16 if cuda else torch.float32
    n = LAB.size("matmul_n")
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=mm_dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=mm_dtype)
    copy_elems = LAB.size("copy_elems")
    src = torch.randn(copy_elems, generator=gen).to(device)
    dst = torch.empty_like(src)
    tiny_a = torch.randn(1024, generator=gen).to(device)
    tiny_b = torch.randn(1024, generator=gen).to(device)
    l2_elems = LAB.size("l2_elems")
    l2_src = torch.randn(l2_elems, generator=gen).to(device)
    l2_dst = torch.empty_like(l2_src)
    esize = 4.0
    mm_esize = 2.0 if cuda else 4.0

    def mm():
        return a @ b

    def copy():
        return dst.copy_(src)

    def tiny():
        return tiny_a + tiny_b

    def l2copy():
        return l2_dst.copy_(l2_src)

    ref_mm = (a[:8].double() @ b.double())

    def check_mm(out):
        got = out[:8].double()
        tol = 2e-2 if cuda else 1e-4
        if not torch.allclose(got, ref_mm, rtol=tol, atol=tol * n ** 0.5):
            raise AssertionError("matrix product disagrees with a float64 reference")

    return {
        "matmul": dict(fn=mm, check=check_mm, flop=roofline.matmul_flop(n, n, n),
                       bytes=roofline.matmul_min_bytes(n, n, n, mm_esize), size=n,
                       dtype=str(mm_dtype).replace("torch.", "")),
        "copy": dict(fn=copy, check=matches(src.cpu().numpy()), flop=0.0,
                     bytes=2 * copy_elems * esize, size=copy_elems, dtype="float32"),
        "tiny_add": dict(fn=tiny, check=matches((tiny_a + tiny_b).cpu().numpy()), flop=1024.0,
                         bytes=3 * 1024 * esize, size=1024, dtype="float32"),
        "l2_copy": dict(fn=l2copy, check=matches(l2_src.cpu().numpy()), flop=0.0,
                        bytes=2 * l2_elems * esize, size=l2_elems, dtype="float32"),
    }


def time_four_ways(fn: Callable, device: str, n_reps: int = 30) -> dict:
    """Median seconds of ``fn`` by each of :data:`METHODS` (``events`` is None on a CPU)."""
    import torch

    cuda = device.startswith("cuda")
    out: dict = {}
    samples = []
    for _ in range(n_reps):
        sync(device)
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)  # the mistake: no synchronize
    sync(device)
    out["host_no_sync_s"] = statistics.median(samples)
    samples = []
    for _ in range(n_reps):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        samples.append(time.perf_counter() - t0)
    out["host_sync_s"] = statistics.median(samples)
    if cuda:
        samples = []
        for _ in range(n_reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e-3)
        out["events_s"] = statistics.median(samples)
    else:
        out["events_s"] = None
    return out


def backlogged_times_s(fn: Callable, n_reps: int, *, flush: Callable | None = None,
                       backlog_s: float = 0.02) -> list[float]:
    """Device time of ``n_reps`` calls of ``fn`` (CUDA), measured with the launch queue full.

    A sleeping kernel (``torch.cuda._sleep``) of about ``backlog_s`` is queued first; while the
    GPU sleeps, the host queues every repetition (``flush`` first, if given, then the start event,
    the call, the end event). When the GPU wakes, the repetitions run back to back, so each event
    pair brackets only the device's work. ``backlog_s`` must exceed the host's time to queue all
    repetitions; the sleep is sized with a 2 GHz clock, so a slower clock only lengthens it.
    """
    import torch

    if n_reps < 1:
        raise ValueError(f"n_reps must be >= 1, got {n_reps}")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_reps)]
    torch.cuda.synchronize()
    torch.cuda._sleep(int(backlog_s * 2e9))
    for i in range(n_reps):
        if flush is not None:
            flush()
        starts[i].record()
        fn()
        ends[i].record()
    if ends[0].query():  # the first repetition must still be waiting behind the sleep
        raise RuntimeError("the backlog drained before all repetitions were queued; raise backlog_s")
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e-3 for a, b in zip(starts, ends)]


def toy_asynchrony(kernel_s: float = 0.02, n_reps: int = 5) -> dict:
    """The three host-side ways on the CPU's toy stream, for a kernel of known duration."""
    rows = []
    with ToyStream() as stream:
        for _ in range(n_reps):
            rows.append(time_three_ways(stream, sleep_kernel(kernel_s)))
    return {"kernel_s": kernel_s,
            **{k: statistics.median(r[k] for r in rows) for k in rows[0]}}


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    device = device or lab_device()
    budget, n_reps = LAB.budget(), LAB.size("n_reps")
    result = new_result(LAB, device, budget_s=budget, n_reps_per_method=n_reps,
                        methods=list(METHODS))
    first_call_started = time.perf_counter()
    ops = operations(device)
    m = result["measurements"]
    m["timer_resolution_s"] = timer_resolution_s()
    cuda = device.startswith("cuda")
    for name, op in progress(list(ops.items()), desc="timing lab"):
        sync(device)
        t0 = time.perf_counter()
        first = op["fn"]()  # the cold (first) call, timed apart
        sync(device)
        cold_s = time.perf_counter() - t0
        op["check"](first)  # correctness before any timing counts
        del first
        careful = LAB.bench(op["fn"], device, name)
        ways = time_four_ways(op["fn"], device, n_reps=n_reps)
        entry = {"size": op["size"], "dtype": op["dtype"], "flop": op["flop"],
                 "bytes": op["bytes"], "cold_call_s": cold_s, **ways,
                 "bench": summarize(careful),
                 "warmup_samples_s": list(careful.warmup_samples_s[:50])}
        if cuda:
            entry["backlogged_s"] = statistics.median(backlogged_times_s(op["fn"], n_reps))
        if name == "l2_copy":
            flushed = LAB.bench(op["fn"], device, name + "_flushed", flush_cache=True)
            entry["bench_flushed"] = summarize(flushed)
            if cuda:
                flusher = CacheFlusher(device)
                entry["backlogged_flushed_s"] = statistics.median(
                    backlogged_times_s(op["fn"], n_reps, flush=flusher, backlog_s=0.2))
        m[name] = entry
    m["setup_and_cold_calls_s"] = time.perf_counter() - first_call_started
    if not device.startswith("cuda"):
        m["toy_stream"] = toy_asynchrony()
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


#: The clocks a reader's timer may read; the grader notes, at each read, what has finished.
_CLOCKS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns")


def grade_timer(timer: Callable[[Callable[[], None], Callable[[], None]], float],
                kernel_s: float = 0.05, earlier_s: float = 0.2) -> Verdict:
    """Grade a reader's ``timer(run, synchronize) -> seconds`` on the toy stream.

    Before the timer is called, ``earlier_s`` of unrelated work is already queued on the
    stream; ``run()`` queues a kernel of ``kernel_s`` and returns at once. A correct timer
    synchronizes before starting the clock (so the earlier work is not billed) and after the
    run (so the clock stops when the work has finished).

    The verdict does not depend on how busy the machine is: while the timer runs, every read
    of a clock of the ``time`` module from the timer's thread is noted together with which
    kernels had finished at that moment. The clock must start (its last read before ``run()``)
    after the earlier work finished and stop (its last read) after the run finished; the only
    timed check left is a lower bound, that the result is at least half the run's kernel, which
    a sleep guarantees however slow the machine.
    """
    import threading

    if not (kernel_s > 0 and earlier_s > 0):
        raise ValueError(f"kernel_s and earlier_s must be > 0, got {kernel_s}, {earlier_s}")
    name = "timer"
    earlier_done, run_done, launched = threading.Event(), threading.Event(), threading.Event()
    reads: list[tuple[bool, bool, bool]] = []  # (run launched, earlier done, run done)
    me = threading.get_ident()

    def flagged(duration_s: float, done: threading.Event):
        k = sleep_kernel(duration_s)

        def kernel() -> None:
            k()
            done.set()
        return kernel

    def noting(read):
        def clock():
            if threading.get_ident() == me:
                reads.append((launched.is_set(), earlier_done.is_set(), run_done.is_set()))
            return read()
        return clock

    def run() -> None:
        stream.launch(flagged(kernel_s, run_done))
        launched.set()

    real = {c: getattr(time, c) for c in _CLOCKS}
    with ToyStream() as stream:
        stream.launch(flagged(earlier_s, earlier_done))
        try:
            for c in _CLOCKS:
                setattr(time, c, noting(real[c]))
            got = float(timer(run, stream.synchronize))
        except Exception as exc:
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        finally:
            for c, read in real.items():
                setattr(time, c, read)
        stream.synchronize()
    before = [r for r in reads if not r[0]]
    if not launched.is_set() or not before or len(before) == len(reads):
        return Verdict(name, "FAIL", [
            "it must read a clock, call run(), and read the clock again"])
    stopped_after_run = reads[-1][2]
    if not stopped_after_run or got < 0.5 * kernel_s:
        return Verdict(name, "FAIL", [
            "it stopped the clock before the device finished: the result is shorter than the "
            "queued work (synchronize after run())"])
    if not before[-1][1]:
        return Verdict(name, "FAIL", [
            "it billed work queued before it started: the result includes the earlier kernel "
            "(synchronize before starting the clock)"])
    return Verdict(name, "PASS", ["it waits for earlier work, then times exactly the queued run"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
