"""Lab runner: timing kernels correctly (host timer, synchronized host timer, events, ``bench``).

The same operation is timed four ways, and each way's answer is compared with the careful one
(:func:`helpers.bench.bench`: device events, warm-up by time, median of many repetitions):

* ``host_no_sync``: ``perf_counter`` around the call only. On a GPU the call returns as soon
  as the kernel is queued, so this measures the launch, not the work;
* ``host_sync``: ``perf_counter`` around the call and a ``synchronize``: the work plus the
  launch and synchronization latency, which dominates a short kernel;
* ``events``: one pair of CUDA events around one call: the device's own time, single sample;
* ``bench``: events, warm-up, many repetitions, median and confidence interval.

Four operations: a large matrix product (compute-bound), a large copy (memory-bound), a tiny
elementwise add (launch-bound), and a copy that fits in the L2 cache timed with and without
flushing the cache between repetitions (what a warm cache does to a bandwidth figure). The
first (cold) call of the matrix product and the warm-up samples are kept, to show why
warm-up is needed. On a CPU there are no events and no asynchrony in torch, so the CPU tier
times the same operations on the CPU and uses :class:`~helpers.bench.ToyStream` to show what
asynchrony does to a host timer.

Run on a GPU machine as ``python -m helpers.labs.timing --out DIR``.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from helpers import specs
from helpers.bench import bench, matches, pick
from helpers.bench.timing import timer_resolution_s
from helpers.bench.toy_stream import ToyStream, sleep_kernel, time_three_ways
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.models import roofline

__all__ = ["LAB", "operations", "time_four_ways", "toy_asynchrony", "run", "grade_timer",
           "predicted_times_s", "main"]

LAB = "timing"
METHODS = ("host_no_sync", "host_sync", "events", "bench")


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def operations(device: str) -> dict:
    """The four operations, with their sizes, FLOP and bytes moved, at the size tier in force.

    Each entry: ``fn`` (no arguments, only enqueues work), ``check`` (a correctness check of
    ``fn``'s result), ``flop``, ``bytes`` (minimum traffic to and from memory) and ``dtype``.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    cuda = device.startswith("cuda")
    mm_dtype = torch.bfloat16 if cuda else torch.float32
    n = pick(small=256, full=8192)
    a = torch.randn(n, n, generator=gen).to(device=device, dtype=mm_dtype)
    b = torch.randn(n, n, generator=gen).to(device=device, dtype=mm_dtype)
    copy_elems = pick(small=1 << 20, full=1 << 28)  # 4 MiB or 1 GiB of float32
    src = torch.randn(copy_elems, generator=gen).to(device)
    dst = torch.empty_like(src)
    tiny_a = torch.randn(1024, generator=gen).to(device)
    tiny_b = torch.randn(1024, generator=gen).to(device)
    l2_elems = pick(small=1 << 14, full=1 << 21)  # 64 KiB or 8 MiB of float32: fits in L2
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
        _sync(device)
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)  # the mistake: no synchronize
    _sync(device)
    out["host_no_sync_s"] = statistics.median(samples)
    samples = []
    for _ in range(n_reps):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
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


def toy_asynchrony(kernel_s: float = 0.02, n_reps: int = 5) -> dict:
    """The three host-side ways on the CPU's toy stream, for a kernel of known duration."""
    rows = []
    with ToyStream() as stream:
        for _ in range(n_reps):
            rows.append(time_three_ways(stream, sleep_kernel(kernel_s)))
    return {"kernel_s": kernel_s,
            **{k: statistics.median(r[k] for r in rows) for k in rows[0]}}


def predicted_times_s(ops: dict, gpu: specs.GPUSpec, precision: str) -> dict:
    """The roofline lower bound of each operation's time on ``gpu`` (seconds)."""
    out = {}
    for name, op in ops.items():
        peak = gpu.peak_flop_per_s(precision if name == "matmul" else "fp32")
        out[name] = roofline.kernel_time_lower_bound_s(max(op["flop"], 1.0), op["bytes"], peak,
                                                      gpu.hbm_bytes_per_s)
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    device = device or lab_device()
    budget = pick(small=0.2, full=1.0)
    n_reps = pick(small=15, full=50)
    result = new_result(LAB, device, budget_s=budget, n_reps_per_method=n_reps,
                        methods=list(METHODS))
    first_call_started = time.perf_counter()
    ops = operations(device)
    m = result["measurements"]
    m["timer_resolution_s"] = timer_resolution_s()
    for name, op in progress(list(ops.items()), desc="timing lab"):
        t0 = time.perf_counter()
        op["check"](op["fn"]())  # correctness first; also the cold (first) call
        _sync(device)
        cold_s = time.perf_counter() - t0
        careful = bench(op["fn"], device=device, name=name, budget_s=budget, env=False)
        ways = time_four_ways(op["fn"], device, n_reps=n_reps)
        entry = {"size": op["size"], "dtype": op["dtype"], "flop": op["flop"],
                 "bytes": op["bytes"], "cold_call_s": cold_s, **ways,
                 "bench": summarize(careful),
                 "warmup_samples_s": list(careful.warmup_samples_s[:50])}
        if name == "l2_copy":
            flushed = bench(op["fn"], device=device, name=name + "_flushed", budget_s=budget,
                            flush_cache=True, env=False)
            entry["bench_flushed"] = summarize(flushed)
        m[name] = entry
    m["setup_and_cold_calls_s"] = time.perf_counter() - first_call_started
    if not device.startswith("cuda"):
        m["toy_stream"] = toy_asynchrony()
    return result


def grade_timer(timer: Callable[[Callable[[], None], Callable[[], None]], float],
                kernel_s: float = 0.05, earlier_s: float = 0.03) -> Verdict:
    """Grade a reader's ``timer(run, synchronize) -> seconds`` on the toy stream.

    Before the timer is called, ``earlier_s`` of unrelated work is already queued on the
    stream; ``run()`` queues a kernel of ``kernel_s`` and returns at once. A correct timer
    synchronizes before starting the clock (so the earlier work is not billed) and after the
    run (so the clock stops when the work has finished): it returns about ``kernel_s``.
    """
    if not (kernel_s > 0 and earlier_s > 0):
        raise ValueError(f"kernel_s and earlier_s must be > 0, got {kernel_s}, {earlier_s}")
    name = "timer"
    with ToyStream() as stream:
        stream.launch(sleep_kernel(earlier_s))
        try:
            got = float(timer(lambda: stream.launch(sleep_kernel(kernel_s)), stream.synchronize))
        except Exception as exc:
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        stream.synchronize()
    if got < 0.5 * kernel_s:
        return Verdict(name, "FAIL", [
            "it stopped the clock before the device finished: the result is shorter than the "
            "queued work (synchronize after run())"])
    if got > kernel_s + 0.6 * earlier_s:
        return Verdict(name, "FAIL", [
            "it billed work queued before it started: the result includes the earlier kernel "
            "(synchronize before starting the clock)"])
    return Verdict(name, "PASS", ["it waits for earlier work, then times exactly the queued run"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
