"""Lab runner: launch overhead, CUDA graphs, and the raw data of an occupancy calculation.

What it measures (every timing through :func:`helpers.bench.bench`: CUDA events on a GPU,
the monotonic host clock on a CPU; every kernel checked against a reference before timing):

* **A chain of n tiny dependent kernels**, launched one by one (eager) for n from 1 to 1000:
  each kernel negates a small tensor in place (``x.neg_()``), so after n kernels the tensor
  is exactly ``(-1)**n`` times what it was, which checks the chain without a tolerance. A
  straight line fitted over n gives the per-kernel cost (slope) and the fixed cost (intercept).
* **The same chain captured in a CUDA graph** (``torch.cuda.CUDAGraph``, warmed up on a side
  stream before capture, as PyTorch documents) and replayed: its line's intercept is the
  graph's launch cost and its slope the per-kernel cost inside a graph.
* **The host's time per launch**: ``perf_counter`` around the enqueueing loop only, with no
  synchronization inside. For a timer around GPU work that would be the classic mistake; here
  it is exactly the quantity wanted, the host time spent handing kernels to the driver.
* **The batched fix**: one kernel over ``n`` times as many elements, the same work in one
  launch.
* **A kernel-size sweep** at fixed n: per-kernel time eager and in a graph, from one element to
  hundreds of megabytes, showing where launch-bound turns into work-bound.
* **Occupancy raw data**: a Triton elementwise kernel compiled at several ``num_warps`` and a
  row-sum kernel (its cross-warp reduction uses shared memory); for each the compiler's
  registers per thread, spilled registers and shared-memory bytes, and the measured
  bandwidth. Lesson 05's occupancy model turns these into resident warps per SM.

On a CPU there are no CUDA graphs and no separate device: the CPU tier measures PyTorch's
eager dispatch cost per tiny operator (the same chain, fitted the same way: the slope is the
per-operator dispatch cost plus its tiny work), the size sweep, and the batched single op as
the CPU's fix; the Triton kernels run through the interpreter at tiny sizes (correctness only:
the interpreter compiles nothing and its timings mean nothing).

Page: ``labs/launch-overhead.md``. Run on a GPU machine as
``python -m helpers.labs.launch_overhead --out DIR``.
"""

from __future__ import annotations

import math
import secrets
import statistics
import time
from typing import Callable

import numpy as np

# Imported first: on a machine without a GPU it selects Triton's interpreter, which must
# happen before anything imports triton.
from helpers.kernels import launch_overhead as kern  # noqa: I001
from helpers import specs
from helpers.bench import sync
from helpers.labs import core
from helpers.labs.core import (MISSING, lab_device, new_result, page_numbers, progress, run_cli,
                               summarize)
from helpers.labs.grading import Verdict
from helpers.models import launch
from helpers.models._checks import positive

__all__ = ["LAB", "make_input", "chain", "check_chain", "capture_chain", "run",
           "reference_or_none", "fits", "graphs_note", "chain_times_s", "crossover_bytes",
           "predicted_crossover_bytes", "comparison_rows", "occupancy_rows", "format_rows",
           "prose_numbers",
           "MISSING", "grade_speedup",
           "main"]

#: The lab's record: its page, size table and bench settings.
LAB = core.Lab(
    "launch_overhead", pages=("labs/launch-overhead.md",),
    sizes={"n_values": ([1, 4, 16, 64, 256], [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]),
           "sweep_n": (16, 100),
           "sweep_numels": ([1, 100, 10_000, 1_000_000],
                            [1, 1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22,
                             1 << 24, 1 << 26]),
           "host_n": (64, 200), "host_reps": (15, 50),
           # the Triton kernels (compiled on a GPU; the interpreter keeps the small ones)
           "scale_numel": (4096, 1 << 26), "scale_block": (1024, 4096),
           "scale_warps": ([1, 4], [1, 2, 4, 8, 16]), "rowsum_shape": ((8, 512), (16384, 4096)),
           "rowsum_warps": ([4], [4, 8, 16])},
    budget_s=(0.04, 0.25), warmup_s=(0.01, 0.05), min_reps=(5, 10))


def make_input(numel: int, device: str, seed: int = 0):
    """A float32 tensor of ``numel`` values in [0.5, 1.5) (never zero) on ``device``."""
    import torch

    if not (isinstance(numel, int) and numel >= 1):
        raise ValueError(f"numel must be an integer >= 1, got {numel!r}")
    gen = torch.Generator().manual_seed(int(seed))
    return (torch.rand(numel, generator=gen, dtype=torch.float32) + 0.5).to(device)


def chain(x, n_kernels: int):
    """Enqueue ``n_kernels`` dependent tiny kernels: negate ``x`` in place, ``n_kernels`` times."""
    for _ in range(n_kernels):
        x.neg_()
    return x


def check_chain(x, before, n_kernels: int) -> None:
    """Raise unless ``x`` is exactly ``(-1)**n_kernels * before`` (negation is exact)."""
    import torch

    expected = before if n_kernels % 2 == 0 else -before
    if not torch.equal(x, expected):
        raise AssertionError(f"chain of {n_kernels} negations gave a wrong result")


def capture_chain(x, n_kernels: int):
    """Capture ``chain(x, n_kernels)`` in a ``torch.cuda.CUDAGraph`` and return the graph.

    Warm-up runs on a side stream first, as PyTorch's CUDA-graph documentation prescribes;
    capture records the kernels without running them.
    """
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            chain(x, n_kernels)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain(x, n_kernels)
    torch.cuda.synchronize()
    return graph


def _timed(fn: Callable, device: str, name: str) -> dict:
    """The JSON summary of :meth:`LAB.bench <helpers.labs.core.Lab.bench>` of ``fn``."""
    return summarize(LAB.bench(fn, device, name))


def _time_eager(x, n: int, device: str) -> dict:
    before = x.clone()
    chain(x, n)
    sync(device)
    check_chain(x, before, n)  # correctness first
    return _timed(lambda: chain(x, n), device, f"eager_n{n}")


def _time_graph(x, n: int, device: str) -> dict:
    graph = capture_chain(x, n)
    before = x.clone()
    graph.replay()
    sync(device)
    check_chain(x, before, n)  # the replay really runs the n kernels on x
    out = _timed(graph.replay, device, f"graph_n{n}")
    del graph
    return out


def _time_batched(numel: int, device: str) -> dict:
    big = make_input(numel, device, seed=1)
    before = big.clone()
    big.neg_()
    sync(device)
    check_chain(big, before, 1)
    out = _timed(big.neg_, device, f"batched_{numel}")
    del big, before
    return out


def _host_enqueue_s(fn: Callable, device: str, n_reps: int) -> dict:
    """Host seconds to enqueue ``fn`` (perf_counter around the enqueue only; see module doc)."""
    samples = []
    for _ in range(n_reps):
        sync(device)  # start from an empty queue: nothing earlier is billed
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)  # deliberately no synchronize: host cost only
    sync(device)
    return {"median_s": statistics.median(samples), "p20_s": float(np.percentile(samples, 20)),
            "p80_s": float(np.percentile(samples, 80)), "n_reps": n_reps}


def _occupancy_data(device: str) -> dict:
    """Compile Triton kernels at several ``num_warps``; record registers, spills, shared bytes
    and measured bandwidth (bandwidth only on a GPU)."""
    import torch

    cuda = device.startswith("cuda")
    if not cuda and not kern.INTERPRETED:
        # A GPU machine asked to run on the CPU: compiled Triton kernels need CUDA tensors.
        return {"interpreted": False, "kernels": [], "skipped": "Triton needs CUDA tensors"}
    # The interpreter runs every program in Python: it stays at the smallest size whatever
    # the size tier, because it only checks the kernels (its timings mean nothing).
    tiny = kern.INTERPRETED
    numel = 4096 if tiny else LAB.size("scale_numel")
    block = 1024 if tiny else LAB.size("scale_block")
    alpha = 1.5
    x = make_input(numel, device, seed=2)
    y = torch.empty_like(x)
    ref = x.double() * alpha  # float64 reference, on the same device
    rows = []
    for w in LAB.size("scale_warps"):
        y.fill_(float("nan"))  # poisoned: an unwritten element stays NaN and fails the check
        handle = kern.scale(x, y, alpha, block=block, num_warps=w)
        sync(device)
        if not torch.allclose(y.double(), ref, rtol=1e-6, atol=0):
            raise AssertionError(f"Triton scale kernel (num_warps={w}) gave wrong values")
        entry = {"kernel": "scale", "num_warps": w, "block": block, "numel": numel,
                 "bytes": 8.0 * numel, "compiled": kern.compiled_info(handle)}
        if cuda:
            t = _timed(lambda: kern.scale(x, y, alpha, block=block, num_warps=w), device,
                       f"scale_w{w}")
            entry["bench"] = t
            entry["bytes_per_s"] = entry["bytes"] / t["median_s"]
        rows.append(entry)
    del x, y, ref
    n_rows, n_cols = (8, 512) if tiny else LAB.size("rowsum_shape")
    a = make_input(n_rows * n_cols, device, seed=3).reshape(n_rows, n_cols)
    out = torch.empty(n_rows, device=device, dtype=torch.float32)
    ref = a.double().sum(dim=1)
    for w in LAB.size("rowsum_warps"):
        out.fill_(float("nan"))
        handle = kern.rowsum(a, out, num_warps=w)
        sync(device)
        if not torch.allclose(out.double(), ref, rtol=1e-5, atol=0):
            raise AssertionError(f"Triton row-sum kernel (num_warps={w}) gave wrong values")
        entry = {"kernel": "rowsum", "num_warps": w, "block": n_cols, "numel": n_rows * n_cols,
                 "bytes": 4.0 * (n_rows * n_cols + n_rows), "compiled": kern.compiled_info(handle)}
        if cuda:
            t = _timed(lambda: kern.rowsum(a, out, num_warps=w), device, f"rowsum_w{w}")
            entry["bench"] = t
            entry["bytes_per_s"] = entry["bytes"] / t["median_s"]
        rows.append(entry)
    return {"interpreted": kern.INTERPRETED, "kernels": rows}


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    device = device or lab_device()
    cuda = device.startswith("cuda")
    n_values, chain_numel, sweep_n = LAB.size("n_values"), 1024, LAB.size("sweep_n")
    sweep_numels = LAB.size("sweep_numels")
    host_n, host_reps = LAB.size("host_n"), LAB.size("host_reps")
    result = new_result(LAB, device, n_values=n_values, chain_numel=chain_numel,
                        chain_op="x.neg_() in place, float32", sweep_n=sweep_n,
                        sweep_numels=sweep_numels, host_n=host_n, host_reps=host_reps,
                        graphs=cuda)
    m = result["measurements"]
    x = make_input(chain_numel, device)

    sweep = []
    for n in progress(n_values, desc="launch lab: chains"):
        entry = {"n": n, "eager": _time_eager(x, n, device),
                 "batched": _time_batched(n * chain_numel, device)}
        if cuda:
            entry["graph"] = _time_graph(x, n, device)
        sweep.append(entry)
    m["chain"] = sweep

    host = {"n": host_n, "eager": _host_enqueue_s(lambda: chain(x, host_n), device, host_reps)}
    host["launch_s"] = host["eager"]["median_s"] / host_n
    if cuda:
        graph = capture_chain(x, host_n)
        host["graph"] = _host_enqueue_s(graph.replay, device, host_reps)
        del graph
    m["host_enqueue"] = host

    sizes = []
    for numel in progress(sweep_numels, desc="launch lab: kernel sizes"):
        xs = make_input(numel, device, seed=4)
        entry = {"numel": numel, "bytes_per_kernel": 8.0 * numel,
                 "eager": _time_eager(xs, sweep_n, device)}
        if cuda:
            entry["graph"] = _time_graph(xs, sweep_n, device)
        sizes.append(entry)
        del xs
    m["size_sweep"] = sizes

    m["occupancy"] = _occupancy_data(device)
    m["fits"] = fits(result)
    return result


def fits(result: dict) -> dict:
    """Least-squares lines over n of a result's chain timings (:func:`launch.fit_line`).

    Returns, in seconds: ``eager_fixed_s`` and ``eager_per_kernel_s``; ``graph_launch_s`` and
    ``kernel_in_graph_s`` where graphs were measured; ``host_launch_s`` (perf_counter per
    enqueued kernel); and ``batched_per_element_s`` with ``batched_fixed_s``.
    """
    m = result["measurements"]
    ns = [e["n"] for e in m["chain"]]
    out = {}
    a, b = launch.fit_line(ns, [e["eager"]["median_s"] for e in m["chain"]])
    out.update(eager_fixed_s=a, eager_per_kernel_s=b)
    if all("graph" in e for e in m["chain"]):
        a, b = launch.fit_line(ns, [e["graph"]["median_s"] for e in m["chain"]])
        out.update(graph_launch_s=a, kernel_in_graph_s=b)
    a, b = launch.fit_line(ns, [e["batched"]["median_s"] for e in m["chain"]])
    numel = result["settings"]["chain_numel"]
    out.update(batched_fixed_s=a, batched_per_element_s=b / numel)
    out["host_launch_s"] = m["host_enqueue"]["launch_s"]
    return out


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


def graphs_note(device: str) -> str:
    """One line saying whether this run measures CUDA graphs."""
    if device.startswith("cuda"):
        return "CUDA GPU: chains run eagerly, from CUDA graphs, and as one batched kernel."
    return "No CUDA graphs on a CPU: eager dispatch and one batched op only."


def chain_times_s(result: dict, n: int | None = None) -> dict:
    """Median times (s) of the chain of ``n`` kernels (default: the longest) by mode."""
    chain_ = result["measurements"]["chain"]
    entry = chain_[-1] if n is None else next(e for e in chain_ if e["n"] == n)
    return {"n": entry["n"], **{k: entry[k]["median_s"] for k in ("eager", "graph", "batched")
                                if k in entry}}


def crossover_bytes(result: dict) -> float | None:
    """Bytes per kernel at which the measured work stops being hidden behind launches.

    With graphs (GPU): the first size at which the eager per-kernel time is within 10 % of the
    graph's (launches no longer matter), interpolated geometrically between the sweep's sizes.
    Without (CPU): the size at which the per-operator time reaches twice the smallest one (the
    work equals the dispatch cost). ``None`` if the sweep never gets there.
    """
    sweep = result["measurements"]["size_sweep"]
    n = result["settings"]["sweep_n"]
    b = np.array([e["bytes_per_kernel"] for e in sweep], dtype=float)
    eager = np.array([e["eager"]["median_s"] for e in sweep]) / n
    if "graph" in sweep[0]:
        graph = np.array([e["graph"]["median_s"] for e in sweep]) / n
        y, target = eager / graph, 1.1
        crossed = y <= target
    else:
        y, target = eager / eager.min(), 2.0
        crossed = y >= target
    idx = np.flatnonzero(crossed)
    if idx.size == 0:
        return None
    i = int(idx[0])
    if i == 0:
        return float(b[0])
    # geometric interpolation of log(bytes) against y between sizes i-1 and i
    lo, hi = y[i - 1], y[i]
    frac = 0.0 if hi == lo else (target - lo) / (hi - lo)
    frac = min(max(frac, 0.0), 1.0)
    return float(np.exp(np.log(b[i - 1]) + frac * (np.log(b[i]) - np.log(b[i - 1]))))


def predicted_crossover_bytes(result: dict, mem_bytes_per_s: float) -> float | None:
    """The model's kernel size at which device time equals the host's launch time.

    A tiny kernel costs :math:`t_{kg}` in a graph (fixed device cost); moving ``B`` bytes adds
    ``B / M``. Launches stop mattering when :math:`t_{kg} + B/M = t_l`, so
    :math:`B^* = (t_l - t_{kg}) M`. ``None`` without graphs, or if a launch is already cheaper
    than the smallest kernel.
    """
    f = result["measurements"]["fits"]
    if "kernel_in_graph_s" not in f:
        return None
    m = positive("mem_bytes_per_s", mem_bytes_per_s)
    gap = f["host_launch_s"] - f["kernel_in_graph_s"]
    return gap * m if gap > 0 else None


def _model_eager_per_kernel_s(result: dict) -> float | None:
    f = result["measurements"]["fits"]
    if "kernel_in_graph_s" not in f:
        return None
    return float(launch.eager_time_s(1, f["host_launch_s"], f["kernel_in_graph_s"]))


def _model_graph_speedup(result: dict) -> float | None:
    f = result["measurements"]["fits"]
    if "kernel_in_graph_s" not in f:
        return None
    n = result["measurements"]["chain"][-1]["n"]
    return float(launch.graph_speedup(n, f["host_launch_s"], f["kernel_in_graph_s"],
                                      max(f["graph_launch_s"], 0.0), f["kernel_in_graph_s"]))


def comparison_rows(reference: dict | None, yours: dict | None = None,
                    mem_bytes_per_s: float = specs.H200_SXM.hbm_bytes_per_s) -> list:
    """Rows of the lab's table: model (from the H200's own parameters), H200, yours.

    The model column predicts the H200's eager per-kernel cost from two independent
    measurements (the host's launch time and the kernel's time inside a graph) through
    :func:`helpers.models.launch.eager_time_s`, the graph speedup at the longest chain through
    :func:`~helpers.models.launch.graph_speedup`, and the kernel size at which launches stop
    mattering from the datasheet bandwidth (:func:`predicted_crossover_bytes`).
    """
    from helpers.labs.report import Row
    from helpers.units import MB, us

    def get(result, fn):
        if result is None:
            return None
        try:
            value = fn(result)
        except (KeyError, StopIteration):
            return None
        return None if value is None else float(value)

    def fit(key):
        return lambda r: r["measurements"]["fits"].get(key)

    def ratio(num, den):
        def f(r):
            t = chain_times_s(r)
            return t[num] / t[den] if num in t and den in t else None
        return f

    n_ref = reference["measurements"]["chain"][-1]["n"] if reference else None
    n_txt = f" (n = {n_ref})" if n_ref else ""
    return [
        Row("time per kernel, launched one by one", "µs", us,
            model=get(reference, _model_eager_per_kernel_s),
            h200=get(reference, fit("eager_per_kernel_s")), yours=get(yours, fit("eager_per_kernel_s"))),
        Row("host time per launch (perf_counter)", "µs", us,
            h200=get(reference, fit("host_launch_s")), yours=get(yours, fit("host_launch_s"))),
        Row("time per kernel inside a graph", "µs", us,
            h200=get(reference, fit("kernel_in_graph_s")), yours=get(yours, fit("kernel_in_graph_s"))),
        Row("graph launch (fixed cost)", "µs", us,
            h200=get(reference, fit("graph_launch_s")), yours=get(yours, fit("graph_launch_s"))),
        Row(f"graph speedup, longest chain{n_txt}", "x", 1.0,
            model=get(reference, _model_graph_speedup),
            h200=get(reference, ratio("eager", "graph")), yours=get(yours, ratio("eager", "graph"))),
        Row(f"batched speedup, longest chain{n_txt}", "x", 1.0,
            h200=get(reference, ratio("eager", "batched")), yours=get(yours, ratio("eager", "batched"))),
        Row("kernel size where launches stop mattering", "MB", MB,
            model=get(reference, lambda r: predicted_crossover_bytes(r, mem_bytes_per_s)),
            h200=get(reference, crossover_bytes), yours=get(yours, crossover_bytes)),
    ]


def occupancy_rows(result: dict, limits=None) -> list[dict]:
    """One row per compiled Triton kernel: kernel, warps, registers, spills, shared bytes, GB/s.

    With ``limits`` (a :class:`helpers.specs.SMLimits`, e.g. ``specs.SM90`` for an H200), each
    compiled kernel also gets its theoretical occupancy and the binding limit from
    :func:`helpers.models.occupancy.occupancy` (one block of ``num_warps`` warps).
    """
    from helpers.models.occupancy import occupancy

    rows = []
    for k in result["measurements"]["occupancy"]["kernels"]:
        c = k.get("compiled") or {}
        bw = k.get("bytes_per_s")
        row = {"kernel": k["kernel"], "num_warps": k["num_warps"],
               "registers per thread": c.get("n_regs"), "spilled registers": c.get("n_spills"),
               "shared memory (bytes)": c.get("shared_bytes"),
               "bandwidth (GB/s)": None if bw is None else round(bw / 1e9, 1)}
        if limits is not None:
            occ = None
            if c.get("n_regs"):
                occ = occupancy(threads_per_block=32 * k["num_warps"],
                                registers_per_thread=c["n_regs"],
                                smem_bytes=c.get("shared_bytes") or 0, limits=limits)
            row["occupancy"] = None if occ is None else f"{occ.fraction:.0%}"
            row["limited by"] = None if occ is None else "+".join(occ.binding)
        rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table of dicts sharing their keys (``-`` for ``None``)."""
    if not rows:
        raise ValueError("rows must hold at least one row")
    head = list(rows[0])
    cells = [head] + [["-" if r[k] is None else str(r[k]) for k in head] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                     for row in cells)


@page_numbers(["n", "eager_per_kernel", "eager_fixed", "host_launch", "kernel_in_graph",
               "graph_launch", "model_eager", "model_eager_err", "speedup", "model_speedup",
               "batched_speedup", "crossover", "model_crossover", "elements_per_dispatch",
               "residual"])
def prose_numbers(result: dict | None, mem_bytes_per_s: float) -> dict[str, str]:
    """The numbers a page quotes from one result, formatted with their units, as strings.

    Keys: ``n`` (longest chain), ``eager_per_kernel``, ``eager_fixed``, ``host_launch``,
    ``kernel_in_graph``, ``graph_launch``, ``model_eager``, ``model_eager_err``, ``speedup``,
    ``model_speedup``, ``batched_speedup``, ``crossover``, ``model_crossover``,
    ``elements_per_dispatch``, ``residual``. A value the result cannot supply (no result, no
    graphs on a CPU) is :data:`MISSING` or ``"-"``.
    """
    from helpers.labs.report import relative_error
    from helpers.units import fmt_bytes, fmt_time

    out = dict.fromkeys(prose_numbers.keys, "-")
    f = result["measurements"]["fits"]
    t = chain_times_s(result)
    out["n"] = str(t["n"])
    out["eager_per_kernel"] = fmt_time(f["eager_per_kernel_s"])
    out["eager_fixed"] = fmt_time(f["eager_fixed_s"])
    out["host_launch"] = fmt_time(f["host_launch_s"])
    out["batched_speedup"] = f"{t['eager'] / t['batched']:.3g}"
    out["elements_per_dispatch"] = f"{f['host_launch_s'] / f['batched_per_element_s']:,.0f}"
    ns = np.array([e["n"] for e in result["measurements"]["chain"]], dtype=float)
    meas = np.array([e["eager"]["median_s"] for e in result["measurements"]["chain"]])
    line = f["eager_fixed_s"] + f["eager_per_kernel_s"] * ns
    out["residual"] = f"{float(np.max(np.abs(line - meas) / meas)):.0%}"
    if "kernel_in_graph_s" in f:
        out["kernel_in_graph"] = fmt_time(f["kernel_in_graph_s"])
        out["graph_launch"] = fmt_time(f["graph_launch_s"])
        model = _model_eager_per_kernel_s(result)
        out["model_eager"] = fmt_time(model)
        out["model_eager_err"] = f"{relative_error(model, f['eager_per_kernel_s']):+.0%}"
        out["speedup"] = f"{t['eager'] / t['graph']:.3g}"
        out["model_speedup"] = f"{_model_graph_speedup(result):.3g}"
        pred = predicted_crossover_bytes(result, mem_bytes_per_s)
        out["model_crossover"] = fmt_bytes(pred) if pred else "-"
    cross = crossover_bytes(result)
    out["crossover"] = fmt_bytes(cross) if cross else "beyond the sweep"
    return out


# -- grading ---------------------------------------------------------------------------------

#: The regimes the grader draws from: (name, launch_s range, kernel_s range), in seconds.
_REGIMES = (("launch-bound (t_launch > t_kernel)", (4e-6, 12e-6), (0.5e-6, 3e-6)),
            ("work-bound (t_kernel > t_launch)", (2e-6, 6e-6), (8e-6, 60e-6)))


def grade_speedup(candidate: Callable[..., float], trials: int = 4) -> Verdict:
    """Grade a reader's ``speedup(n_kernels, launch_s, kernel_s, graph_launch_s,
    kernel_in_graph_s)``: the eager time of the chain over its graph time.

    Fresh random inputs on every call (a launch-bound and a work-bound draw per trial), each
    compared with :func:`helpers.models.launch.graph_speedup` (relative tolerance 1e-6). The
    verdict's text names the regime that failed and the likely mistake, never the numbers
    drawn, so the same mistake always earns the same verdict.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    name = "launch model"
    rng = np.random.default_rng(secrets.randbits(62))
    for _ in range(trials):
        for regime, (l_lo, l_hi), (k_lo, k_hi) in _REGIMES:
            n = int(rng.integers(2, 2000))
            t_l = float(rng.uniform(l_lo, l_hi))
            t_k = float(rng.uniform(k_lo, k_hi))
            t_g = float(rng.uniform(2e-6, 20e-6))
            t_kg = t_k * float(rng.uniform(1.0, 1.3))
            want = launch.graph_speedup(n, t_l, t_k, t_g, t_kg)
            try:
                got = float(candidate(n, t_l, t_k, t_g, t_kg))
            except Exception as exc:
                return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
            if math.isfinite(got) and math.isclose(got, want, rel_tol=1e-6):
                continue
            hint = ""
            no_launch = (n * t_k) / (t_g + n * t_kg)
            if math.isfinite(got) and math.isclose(got, no_launch, rel_tol=1e-6):
                hint = ("; it ignores the launch term: an eager kernel costs max(t_launch, "
                        "t_kernel), because the device waits for each launch")
            elif math.isfinite(got) and math.isclose(got, 1 / want, rel_tol=1e-6):
                hint = "; it is upside down: speedup is eager time over graph time"
            return Verdict(name, "FAIL", [f"wrong in the {regime} regime{hint}"])
    return Verdict(name, "PASS", [f"matches the model on {2 * trials} fresh random inputs"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
