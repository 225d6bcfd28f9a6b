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

__all__ = ["graphs_note", "chain_times_s", "crossover_bytes", "predicted_crossover_bytes",
           "comparison_rows", "occupancy_rows", "format_rows", "prose_numbers", "MISSING"]


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
