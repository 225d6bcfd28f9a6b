"""What the launch-overhead lab's page computes from a result: its table, crossover, numbers.

The runner (:mod:`helpers.labs.launch_overhead`) times chains of tiny kernels (eager, from a
CUDA graph, batched), a kernel-size sweep and compiled Triton kernels, and fits its lines; this
module reads a result (the shipped H200 reference or the reader's run) and gives
``labs/launch-overhead.md`` its rows (:func:`comparison_rows`), the measured and predicted
crossover sizes, the occupancy table and the numbers its prose glues (:func:`prose_numbers`).
"""

from __future__ import annotations

import numpy as np

from helpers import specs
from helpers.labs.core import MISSING, page_numbers
from helpers.labs.launch_overhead import LAB
from helpers.models import launch
from helpers.models._checks import positive

#: Eager time per kernel over the graph's at which launches "stop mattering" (the crossover the
#: lab reads off its sweep on a GPU).
MET_RATIO = 1.1

__all__ = ["MET_RATIO", "graphs_note", "chain_times_s", "crossover_bytes", "predicted_crossover_bytes",
           "large_kernel_line", "device_crossover_bytes",
           "run_bandwidth_bytes_per_s", "host_launch_s", "host_launch_slope_s",
           "model_eager_chain_s", "model_graph_speedup", "big_kernel_points", "comparison_rows", "occupancy_rows", "format_rows", "prose_numbers", "MISSING"]


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
        y, target = eager / graph, MET_RATIO
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


def run_bandwidth_bytes_per_s(result: dict) -> float | None:
    """The best bandwidth any of the run's compiled Triton streaming kernels reached (bytes/s):
    the run's own HBM ceiling, or None where none was timed (a CPU run)."""
    rates = [k["bytes_per_s"] for k in result["measurements"]["occupancy"]["kernels"]
             if k.get("bytes_per_s")]
    return max(rates) if rates else None


def large_kernel_line(result: dict, l2_bytes: float = specs.H200_SXM.l2_bytes
                      ) -> tuple[float, float] | None:
    """The device time of a streaming kernel, :math:`t_k(B) = t_0 + B/M`, as a least-squares
    line through the per-kernel graph times of the sweep's kernels whose tensor is larger than
    ``l2_bytes`` (they stream from HBM whatever the rotation): ``(t_0, M)`` in seconds and
    bytes per second, or None with fewer than two such kernels or without graphs."""
    sweep = result["measurements"]["size_sweep"]
    n = result["settings"]["sweep_n"]
    big = [e for e in sweep if e["bytes_per_kernel"] / 2 > l2_bytes and "graph" in e]
    if len(big) < 2:
        return None
    t0, slope = launch.fit_line([e["bytes_per_kernel"] for e in big],
                                [e["graph"]["median_s"] / n for e in big])
    return (t0, 1.0 / slope) if t0 > 0 and slope > 0 else None


def device_crossover_bytes(result: dict) -> float | None:
    """Bytes per kernel at which the measured device time reaches the host's launch time: the
    per-kernel graph time of the size sweep against ``fits.host_launch_s``, interpolated
    linearly between the two sweep sizes around it (None without graphs, or where no size
    of the sweep reaches it)."""
    sweep = result["measurements"]["size_sweep"]
    t_l = result["measurements"]["fits"]["host_launch_s"]
    n = result["settings"]["sweep_n"]
    if "graph" not in sweep[0]:
        return None
    b = [e["bytes_per_kernel"] for e in sweep]
    t = [e["graph"]["median_s"] / n for e in sweep]
    i = next((k for k, tk in enumerate(t) if tk >= t_l), None)
    if i is None:
        return None
    if i == 0:
        return float(b[0])
    return float(b[i - 1] + (t_l - t[i - 1]) / (t[i] - t[i - 1]) * (b[i] - b[i - 1]))


def predicted_crossover_bytes(result: dict, mem_bytes_per_s: float | None = None,
                              l2_bytes: float = specs.H200_SXM.l2_bytes) -> float | None:
    """The model's kernel size at which device time equals the host's launch time.

    :func:`helpers.models.launch.launch_crossover_bytes`, :math:`B^* = (t_l - t_0) M`, with
    the run's host time per launch and the device-time line :math:`t_0 + B/M` of the sweep's
    kernels larger than the L2 (:func:`large_kernel_line`: sizes other than the crossing's).
    Where the run has no such line (fewer than two large kernels), the tiny kernel's time in a
    graph and ``mem_bytes_per_s`` (default: :func:`run_bandwidth_bytes_per_s`) stand in.
    ``None`` without graphs or a bandwidth, or if a launch is already cheaper than a kernel.
    """
    f = result["measurements"]["fits"]
    if "kernel_in_graph_s" not in f:
        return None
    line = large_kernel_line(result, l2_bytes)
    if line is not None:
        fixed, m = line
    else:
        fixed = f["kernel_in_graph_s"]
        m = mem_bytes_per_s if mem_bytes_per_s is not None else run_bandwidth_bytes_per_s(result)
        if m is None:
            return None
    b = launch.launch_crossover_bytes(f["host_launch_s"], fixed, positive("mem_bytes_per_s", m))
    return b if b > 0 else None


def _chain(result: dict, n: int) -> dict | None:
    return next((e for e in result["measurements"]["chain"] if e["n"] == n), None)


def host_launch_s(result: dict, n: int | None = None) -> float | None:
    """The host's time per launch for the chain of ``n`` kernels: its own host-timed loop
    where the run has one (``chain[i].host_enqueue``), else the run's single host timing
    (of the chain of ``settings.host_n`` kernels, timed once in the run)."""
    if n is not None:
        e = _chain(result, n)
        if e is not None and "host_enqueue" in e:
            return e["host_enqueue"]["median_s"] / n
    return result["measurements"]["fits"]["host_launch_s"]


def host_launch_slope_s(result: dict) -> float:
    """The host's launch cost as the slope over n of its per-chain host timings (the same fit
    as the events' line), or its single host timing where it has no per-chain ones."""
    chains = result["measurements"]["chain"]
    if all("host_enqueue" in e for e in chains):
        return launch.fit_line([e["n"] for e in chains],
                               [e["host_enqueue"]["median_s"] for e in chains])[1]
    return result["measurements"]["fits"]["host_launch_s"]


def model_eager_chain_s(result: dict, n: int) -> float | None:
    """:func:`helpers.models.launch.eager_time_s` of the chain of ``n`` kernels, from the
    host's time per launch of that chain and the kernel's time inside a graph."""
    f = result["measurements"]["fits"]
    t_l = host_launch_s(result, n)
    if "kernel_in_graph_s" not in f or t_l is None:
        return None
    return float(launch.eager_time_s(n, t_l, f["kernel_in_graph_s"]))


def _model_eager_per_kernel_s(result: dict) -> float | None:
    f = result["measurements"]["fits"]
    if "kernel_in_graph_s" not in f:
        return None
    return float(launch.eager_time_s(1, host_launch_slope_s(result), f["kernel_in_graph_s"]))


def model_graph_speedup(result: dict, n: int | None = None) -> float | None:
    """:func:`helpers.models.launch.graph_speedup` of the chain of ``n`` kernels (default: the
    longest), from the host's time per launch and the fitted graph line."""
    f = result["measurements"]["fits"]
    n = result["measurements"]["chain"][-1]["n"] if n is None else n
    t_l = host_launch_s(result, n)
    if "kernel_in_graph_s" not in f or t_l is None:
        return None
    return float(launch.graph_speedup(n, t_l, f["kernel_in_graph_s"],
                                      max(f["graph_launch_s"], 0.0), f["kernel_in_graph_s"]))


def big_kernel_points(result: dict, l2_bytes: float) -> list[dict]:
    """Size-sweep kernels whose tensor is larger than ``l2_bytes`` (each streams from HBM),
    with the measured per-kernel time in a graph and :func:`helpers.models.launch.
    graph_kernel_time_s` at the run's own bandwidth (empty without graphs or a bandwidth)."""
    f = result["measurements"]["fits"]
    bw = run_bandwidth_bytes_per_s(result)
    n = result["settings"]["sweep_n"]
    out = []
    if "kernel_in_graph_s" not in f or bw is None:
        return out
    for e in result["measurements"]["size_sweep"]:
        tensor_bytes = e["bytes_per_kernel"] / 2  # x.neg_() reads and writes one tensor
        if tensor_bytes > l2_bytes and "graph" in e:
            out.append({"tensor_bytes": tensor_bytes, "measured_s": e["graph"]["median_s"] / n,
                        "model_s": launch.graph_kernel_time_s(e["bytes_per_kernel"],
                                                              f["kernel_in_graph_s"], bw)})
    return out


def comparison_rows(reference: dict | None, yours: dict | None = None,
                    mem_bytes_per_s: float | None = None,
                    gpu: specs.GPUSpec = specs.H200_SXM) -> list:
    """Rows of the lab's table: model (from the run's own parameters), H200, yours.

    Every model value is a prediction from other measurements of the same run: the eager
    chain timed by the host too and the fitted eager slope (:func:`helpers.models.launch.
    eager_time_s` of the host's launch time and the kernel's time in a graph), the graph
    speedup at that chain and at the longest (:func:`~helpers.models.launch.graph_speedup`),
    the per-kernel time in a graph of each kernel larger than ``gpu``'s L2
    (:func:`~helpers.models.launch.graph_kernel_time_s`, at the run's best Triton bandwidth,
    ``mem_bytes_per_s`` where the run has none) and the kernel size at which the device time
    reaches the host's launch time (:func:`predicted_crossover_bytes`, against
    :func:`device_crossover_bytes`). Rows without a model are measured values: the parameters
    the predictions use, and the size at which eager launches come within :data:`MET_RATIO`
    of the graph (:func:`crossover_bytes`).
    """
    from helpers.labs.report import Row
    from helpers.units import MB, MiB, ms, us

    def get(result, fn):
        if result is None:
            return None
        try:
            value = fn(result)
        except (KeyError, StopIteration, TypeError):
            return None
        return None if value is None else float(value)

    def fit(key):
        return lambda r: r["measurements"]["fits"].get(key)

    def ratio(num, den, n=None):
        def f(r):
            t = chain_times_s(r, n)
            return t[num] / t[den] if num in t and den in t else None
        return f

    def bandwidth(r):
        return run_bandwidth_bytes_per_s(r) or mem_bytes_per_s

    basis = reference if reference is not None else yours
    if basis is None:
        return []
    n_long = basis["measurements"]["chain"][-1]["n"]
    n_host = basis["measurements"]["host_enqueue"]["n"]
    n_host = n_host if _chain(basis, n_host) is not None else None
    rows = []
    if n_host is not None:
        rows.append(Row(f"eager chain of n = {n_host} (host-timed too)", "ms", ms,
                        model=get(basis, lambda r: model_eager_chain_s(r, n_host)),
                        h200=get(reference, lambda r: _chain(r, n_host)["eager"]["median_s"]),
                        yours=get(yours, lambda r: _chain(r, n_host)["eager"]["median_s"]),
                        claim=LAB.claim("eager_chain")))
    rows += [
        Row("time per kernel, launched one by one (slope)", "µs", us,
            model=get(basis, _model_eager_per_kernel_s),
            h200=get(reference, fit("eager_per_kernel_s")), yours=get(yours, fit("eager_per_kernel_s")),
            claim=LAB.claim("eager_chain")),
        Row("host time per launch (perf_counter)", "µs", us,
            h200=get(reference, fit("host_launch_s")), yours=get(yours, fit("host_launch_s"))),
        Row("time per kernel inside a graph", "µs", us,
            h200=get(reference, fit("kernel_in_graph_s")), yours=get(yours, fit("kernel_in_graph_s"))),
        Row("graph launch (fixed cost)", "µs", us,
            h200=get(reference, fit("graph_launch_s")), yours=get(yours, fit("graph_launch_s"))),
    ]
    for n in dict.fromkeys(k for k in (n_host, n_long) if k is not None):
        rows.append(Row(f"graph speedup, chain of n = {n}", "x", 1.0,
                        model=get(basis, lambda r, n=n: model_graph_speedup(r, n)),
                        h200=get(reference, ratio("eager", "graph", n)),
                        yours=get(yours, ratio("eager", "graph", n)),
                        claim=LAB.claim("graph_speedup")))
    rows.append(Row(f"batched speedup, chain of n = {n_long}", "x", 1.0,
                    h200=get(reference, ratio("eager", "batched")),
                    yours=get(yours, ratio("eager", "batched"))))
    ref_big = big_kernel_points(reference, gpu.l2_bytes) if reference is not None else []
    for p in big_kernel_points(basis, gpu.l2_bytes):
        measured = next((q["measured_s"] for q in ref_big
                         if q["tensor_bytes"] == p["tensor_bytes"]), None)
        rows.append(Row(f"kernel on {p['tensor_bytes'] / MiB:.0f} MiB (> L2), in a graph",
                        "µs", us, model=p["model_s"], h200=measured,
                        claim=LAB.claim("graph_kernel_hbm")))
    rows.append(Row("kernel size where device time reaches the launch", "MB", MB,
                    model=get(basis, lambda r: predicted_crossover_bytes(r, bandwidth(r),
                                                                         gpu.l2_bytes)),
                    h200=get(reference, device_crossover_bytes),
                    yours=get(yours, device_crossover_bytes), claim=LAB.claim("launch_crossover")))
    rows.append(Row(f"kernel size where eager is within {MET_RATIO:.2g}x of graph", "MB", MB,
                    h200=get(reference, crossover_bytes), yours=get(yours, crossover_bytes)))
    return rows


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
               "batched_speedup", "batched_share", "crossover", "model_crossover", "elements_per_dispatch",
               "residual", "host_n", "eager_host_n", "model_eager_host_n",
               "model_eager_host_n_err", "speedup_host_n", "model_speedup_host_n",
               "per_kernel_low", "per_kernel_high", "chain_spread_max", "run_bandwidth",
               "big_kernels_worst_err", "crossover_low", "crossover_high", "crossover_low_ratio",
               "device_crossover", "model_device_crossover_err", "line_fixed", "line_rate",
               "eager_gap_low", "eager_gap_high", "outside"])
def prose_numbers(result: dict | None, mem_bytes_per_s: float) -> dict[str, str]:
    """The numbers a page quotes from one result, formatted with their units, as strings.

    Keys: ``n`` (longest chain), ``eager_per_kernel``, ``eager_fixed``, ``host_launch``,
    ``kernel_in_graph``, ``graph_launch``, ``model_eager``, ``model_eager_err``, ``speedup``,
    ``model_speedup``, ``batched_speedup`` (the longest eager chain's time over the batched
    kernel's) and ``batched_share`` (its inverse, in per cent), ``crossover``, ``model_crossover``,
    ``elements_per_dispatch``, ``residual``; ``host_n`` (the chain the host timed too) with
    its measured and predicted eager times, error and graph speedups; ``per_kernel_low`` and
    ``per_kernel_high`` (the range of per-kernel eager times of chains of 5 or more kernels)
    and ``chain_spread_max`` (their largest p20-p80 spread); ``run_bandwidth`` (the best
    Triton bandwidth of the run, which the model's crossover uses when there is one, else
    ``mem_bytes_per_s``); ``big_kernels_worst_err`` (the largest error of the kernels larger
    than an H200's L2); ``crossover_low``, ``crossover_high`` (the sweep sizes around the
    measured crossing) and ``crossover_low_ratio`` (eager over graph at the lower one);
    ``device_crossover`` (:func:`device_crossover_bytes`) and the model's error against it,
    ``line_fixed`` and ``line_rate`` (:func:`large_kernel_line`), ``eager_gap_low`` and
    ``eager_gap_high`` (the range, over the sweep's kernels whose device time exceeds the
    launch, of the eager per-kernel time minus the graph's); ``outside``, a clause saying how
    many of the table's predictions fall outside their tolerance. A
    value the result cannot supply (no result, no graphs on a CPU) is :data:`MISSING` or
    ``"-"``.
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
    out["batched_share"] = f"{100 * t['batched'] / t['eager']:.2g} %"
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
        out["model_speedup"] = f"{model_graph_speedup(result):.3g}"
        bw = run_bandwidth_bytes_per_s(result) or mem_bytes_per_s
        out["run_bandwidth"] = f"{bw / 1e12:.3g} TB/s"
        pred = predicted_crossover_bytes(result, bw)
        out["model_crossover"] = fmt_bytes(pred) if pred else "-"
        n_host = result["measurements"]["host_enqueue"]["n"]
        if _chain(result, n_host) is not None:
            t_host = chain_times_s(result, n_host)
            model_host = model_eager_chain_s(result, n_host)
            out["host_n"] = str(n_host)
            out["eager_host_n"] = fmt_time(t_host["eager"])
            out["model_eager_host_n"] = fmt_time(model_host)
            out["model_eager_host_n_err"] = f"{relative_error(model_host, t_host['eager']):+.0%}"
            out["speedup_host_n"] = f"{t_host['eager'] / t_host['graph']:.3g}"
            out["model_speedup_host_n"] = f"{model_graph_speedup(result, n_host):.3g}"
        big = big_kernel_points(result, specs.H200_SXM.l2_bytes)
        if big:
            worst = max(abs(relative_error(p["model_s"], p["measured_s"])) for p in big)
            out["big_kernels_worst_err"] = f"{worst:.0%}"
    chains = [e for e in result["measurements"]["chain"] if e["n"] >= 5]
    if chains:
        per_kernel = [e["eager"]["median_s"] / e["n"] for e in chains]
        out["per_kernel_low"] = fmt_time(min(per_kernel))
        out["per_kernel_high"] = fmt_time(max(per_kernel))
        out["chain_spread_max"] = f"{max(e['eager']['spread'] for e in chains):.0%}"
    line = large_kernel_line(result)
    if line is not None:
        out["line_fixed"] = fmt_time(line[0])
        out["line_rate"] = f"{line[1] / 1e12:.3g} TB/s"
    dev = device_crossover_bytes(result)
    if dev:
        out["device_crossover"] = fmt_bytes(dev)
        pred = predicted_crossover_bytes(result, run_bandwidth_bytes_per_s(result) or mem_bytes_per_s)
        if pred:
            out["model_device_crossover_err"] = f"{relative_error(pred, dev):+.0%}"
    sweep_ = result["measurements"]["size_sweep"]
    n_sw = result["settings"]["sweep_n"]
    gaps = [(e["eager"]["median_s"] - e["graph"]["median_s"]) / n_sw for e in sweep_
            if "graph" in e and e["graph"]["median_s"] / n_sw > f["host_launch_s"]]
    if gaps:
        out["eager_gap_low"] = fmt_time(min(gaps))
        out["eager_gap_high"] = fmt_time(max(gaps))
    preds = [r for r in comparison_rows(result, None, mem_bytes_per_s)
             if r.claim is not None and r.claim.kind == "prediction" and r.model is not None
             and r.h200 is not None]
    n_out = sum(not r.claim.holds(r.model, r.h200) for r in preds)
    out["outside"] = ("every one is within it" if n_out == 0 else
                      f"{n_out} of {len(preds)} fall outside theirs, and the check below says why")
    cross = crossover_bytes(result)
    out["crossover"] = fmt_bytes(cross) if cross else "beyond the sweep"
    sweep = result["measurements"]["size_sweep"]
    if cross and "graph" in sweep[0]:
        sizes = [e["bytes_per_kernel"] for e in sweep]
        i = next((k for k, b in enumerate(sizes) if b >= cross), len(sizes) - 1)
        if i > 0:
            lo_e = sweep[i - 1]
            out["crossover_low"] = fmt_bytes(sizes[i - 1])
            out["crossover_high"] = fmt_bytes(sizes[i])
            out["crossover_low_ratio"] = f"{lo_e['eager']['median_s'] / lo_e['graph']['median_s']:.3g}"
    return out
