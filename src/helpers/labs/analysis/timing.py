"""What the timing lab's page computes from a result: method times, roofline bounds, its table.

The runner (:mod:`helpers.labs.timing`) measures each operation five ways and writes a result;
this module reads one (the shipped H200 reference or the reader's run) and gives
``labs/timing.md`` its rows (:func:`comparison_rows`), the times of every method
(:func:`method_times_s`) and the roofline bound of each operation (:func:`bounds_s`).
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.timing import LAB, OPERATIONS
from helpers.models import roofline

__all__ = ["predicted_times_s", "method_times_s", "bounds_s", "comparison_rows"]


def predicted_times_s(ops: dict, gpu: specs.GPUSpec, precision: str) -> dict:
    """The roofline lower bound of each operation's time on ``gpu`` (seconds).

    ``ops[name]`` holds ``flop`` and ``bytes``; the matrix product uses ``gpu``'s dense
    ``precision`` peak, every other operation its fp32 peak, and all use its HBM bandwidth
    (:func:`helpers.models.roofline.kernel_time_lower_bound_s`).
    """
    out = {}
    for name, op in ops.items():
        peak = gpu.peak_flop_per_s(precision if name == "matmul" else "fp32")
        out[name] = roofline.kernel_time_lower_bound_s(max(op["flop"], 1.0), op["bytes"], peak,
                                                      gpu.hbm_bytes_per_s)
    return out


def method_times_s(result: dict) -> dict:
    """``{operation: {method_s: seconds or None}}`` from a result file, for tables and plots."""
    out = {}
    for name in OPERATIONS:
        e = result["measurements"][name]
        out[name] = {"host_no_sync_s": e["host_no_sync_s"], "host_sync_s": e["host_sync_s"],
                     "events_s": e["events_s"], "bench_s": e["bench"]["median_s"],
                     "backlogged_s": e.get("backlogged_s")}
    return out


def bounds_s(result: dict, gpu: specs.GPUSpec) -> dict:
    """Roofline lower bound of each operation of ``result`` on ``gpu`` (seconds)."""
    m = result["measurements"]
    precision = {"float32": "fp32", "bfloat16": "bf16"}[m["matmul"]["dtype"]]
    return predicted_times_s({k: m[k] for k in OPERATIONS}, gpu, precision)


def comparison_rows(ref: dict | None, mine: dict | None = None,
                    gpu: specs.GPUSpec = specs.H200_SXM) -> list:
    """Rows of the lab's table: each operation's roofline bound on ``gpu`` (the model), the
    H200's ``bench()`` median and the reader's (None where absent)."""
    from helpers.labs.report import Row

    basis = ref if ref is not None else mine
    if basis is None:
        return []
    bounds = bounds_s(basis, gpu)
    ref_t = method_times_s(ref) if ref is not None else {}
    mine_t = method_times_s(mine) if mine is not None else {}
    return [Row(f"{op.replace('_', ' ')}: time", "µs", 1e-6, model=bounds[op],
                h200=ref_t[op]["bench_s"] if ref_t else None,
                yours=mine_t[op]["bench_s"] if mine_t else None)
            for op in OPERATIONS]
