"""What the timing lab's page computes from a result: method times, roofline bounds, its table.

The runner (:mod:`helpers.labs.timing`) measures each operation five ways and writes a result;
this module reads one (the shipped H200 reference or the reader's run) and gives
``labs/timing.md`` its rows (:func:`comparison_rows`), the times of every method
(:func:`method_times_s`) and the roofline bound of each operation (:func:`bounds_s`).
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.timing import LAB, OPERATIONS
from helpers.models import launch, roofline

__all__ = ["predicted_times_s", "method_times_s", "bounds_s", "fixed_costs_s", "predictions_s",
           "comparison_rows", "LONG_FACTOR", "LAUNCH_BOUND_FRACTION"]


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


#: A kernel is "long" for the fixed-cost predictions when its bench() median is at least this
#: many times the fixed cost the prediction adds (launch and synchronize, or an event pair).
LONG_FACTOR = 10.0
#: A kernel is launch-bound for :func:`~helpers.models.launch.eager_time_s` when its device
#: time (queue kept full) is at most this fraction of the host's time to call it.
LAUNCH_BOUND_FRACTION = 0.5


def fixed_costs_s(result: dict) -> dict | None:
    """The fixed costs a timing method adds to a kernel, measured on the tiny add (seconds).

    ``sync``: its synchronized host time less its device time with the queue kept full (one
    launch and one synchronize); ``event_pair``: its single event pair less the same device
    time. None for a run without events (a CPU) or where a difference is not positive.
    """
    tiny = result["measurements"]["tiny_add"]
    device_s = tiny.get("backlogged_s")
    if device_s is None or tiny.get("events_s") is None:
        return None
    out = {"device_s": device_s, "sync": tiny["host_sync_s"] - device_s,
           "event_pair": tiny["events_s"] - device_s}
    return out if out["sync"] > 0 and out["event_pair"] > 0 else None


def predictions_s(result: dict) -> dict:
    """``{(claim key, operation): predicted seconds}`` for the operations in each claim's domain.

    ``sync_host_timer`` and ``event_pair``: :func:`helpers.models.launch.serial_time_s` of one
    kernel, its launch cost the fixed cost of :func:`fixed_costs_s` and its device time the
    bench() median, for kernels at least :data:`LONG_FACTOR` times that cost;
    ``launch_bound_bench``: :func:`helpers.models.launch.eager_time_s` of one kernel, the host's
    unsynchronized call time against the device time with the queue kept full, for kernels at
    most :data:`LAUNCH_BOUND_FRACTION` of their call time.
    """
    fixed = fixed_costs_s(result)
    if fixed is None:
        return {}
    out = {}
    for op in OPERATIONS:
        e = result["measurements"][op]
        bench_s = e["bench"]["median_s"]
        for key, cost in (("sync_host_timer", fixed["sync"]), ("event_pair", fixed["event_pair"])):
            if bench_s >= LONG_FACTOR * cost:
                out[key, op] = launch.serial_time_s(1, cost, bench_s)
        device_s = e.get("backlogged_s")
        if device_s is not None and device_s <= LAUNCH_BOUND_FRACTION * e["host_no_sync_s"]:
            out["launch_bound_bench", op] = launch.eager_time_s(1, e["host_no_sync_s"], device_s)
    return out


#: What each prediction is compared with: the method's entry in a result's operation.
_MEASURED = {"sync_host_timer": ("host timer + sync", lambda e: e["host_sync_s"]),
             "event_pair": ("one pair of events", lambda e: e["events_s"]),
             "launch_bound_bench": ("bench() median", lambda e: e["bench"]["median_s"])}


def _bounded_s(entry: dict, op: str) -> float:
    """The measurement the roofline bounds: bench()'s median, after a flush for the L2 copy."""
    return (entry["bench_flushed"] if op == "l2_copy" else entry["bench"])["median_s"]


def comparison_rows(ref: dict | None, mine: dict | None = None,
                    gpu: specs.GPUSpec = specs.H200_SXM) -> list:
    """Rows of the lab's table: each operation's roofline bound on ``gpu`` against its bench()
    median (the L2-sized copy's after a flush), then the predictions of :func:`predictions_s`
    against the method they predict; the H200's values and the reader's (None where absent).

    The model values are computed from ``ref`` (from ``mine`` when there is no reference).
    """
    from helpers.labs.report import Row

    basis = ref if ref is not None else mine
    if basis is None:
        return []

    def value(result, op, get):
        if result is None:
            return None
        return get(result["measurements"][op])

    bounds = bounds_s(basis, gpu)
    rows = [Row(f"{op.replace('_', ' ')}{', L2 flushed' if op == 'l2_copy' else ''}: bench() time",
                "µs", 1e-6, model=bounds[op],
                h200=value(ref, op, lambda e, op=op: _bounded_s(e, op)),
                yours=value(mine, op, lambda e, op=op: _bounded_s(e, op)),
                claim=LAB.claim("roofline_time"))
            for op in OPERATIONS]
    for (key, op), predicted in predictions_s(basis).items():
        what, get = _MEASURED[key]
        rows.append(Row(f"{op.replace('_', ' ')}: {what}", "µs", 1e-6, model=predicted,
                        h200=value(ref, op, get), yours=value(mine, op, get),
                        claim=LAB.claim(key)))
    return rows


def prediction_summary(ref: dict) -> dict:
    """How the predictions of :func:`comparison_rows` fare on ``ref``, through the truth loop's
    own accounting (:mod:`helpers.labs.summary`): ``n`` prediction rows with a model and a
    measured value, ``within`` of them inside their claim's tolerance (:meth:`Claim.holds
    <helpers.labs.report.Claim.holds>`), and the largest and the median ``|model - H200| /
    H200`` (:func:`helpers.labs.summary.median_abs_error`)."""
    from helpers.labs import summary

    rows = summary.lab_rows(LAB.name, ref)
    preds = summary.predictions(rows)
    return {"n": len(preds), "within": sum(r.holds for r in preds),
            "max_abs_error": max(abs(r.error) for r in preds),
            "median_abs_error": summary.median_abs_error(rows)}
