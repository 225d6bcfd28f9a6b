"""What the reduction-and-softmax lab's page computes from a result (``labs/reduction-softmax.md``).

The runner :mod:`helpers.labs.reduction_softmax` measures and writes a result; this module
reads one (the shipped H200 reference or the reader's run) and gives the page its per-point
rows, the target check, the per-dtype summary, the rows of its model-vs-H200 table and a short
description.
"""

from __future__ import annotations

import statistics

from helpers import specs
from helpers.labs import report
from helpers.labs.core import MISSING
from helpers.labs.reduction_softmax import DTYPES, GPU, LAB, OPS, TARGET
from helpers.models.roofline import memory_time_s

__all__ = ["claim_rows", "tile_rows", "tuned_tiles", "row_verdict", "point_rows", "target_check", "summary", "predicted_times", "fusion_ratio_bound",
           "comparison_rows", "describe"]


_BYTES_OF = {"torch_sum": "sum", "triton_sum": "sum", "torch_softmax": "softmax",
             "triton_softmax": "softmax", "unfused_softmax": "unfused_softmax"}


def _copy_rate(result: dict, dtype_name: str) -> float:
    c = result["measurements"]["copy"][dtype_name]
    return c["moved_bytes"] / c["bench"]["median_s"]


def point_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per point and operation: bytes moved, achieved bytes/s, and its fraction of the measured
    copy bandwidth and of ``gpu``'s datasheet HBM bandwidth (operations not timed: absent)."""
    rows = []
    for p in result["measurements"]["points"]:
        copy = _copy_rate(result, p["dtype"])
        for op in OPS:
            if op not in p:
                continue
            q = p["bytes"][_BYTES_OF[op]]
            t = p[op]["median_s"]
            rows.append({"dtype": p["dtype"], "cols": p["cols"], "rows": p["rows"], "op": op,
                         "bytes": q, "time_s": t, "bytes_per_s": q / t,
                         "copy_fraction": q / t / copy, "hbm_fraction": q / t / gpu.hbm_bytes_per_s,
                         "copy_bytes_per_s": copy, "spread": p[op]["spread"],
                         "max_error": p["max_error"][op]})
    return rows


def tile_rows(result: dict) -> list[dict]:
    """The row sum's tile sweep (GPU): per dtype, row length and tile (bytes per program and
    step), the launch configuration, the time and the fraction of the copy rate reached
    (empty for a run without the sweep)."""
    rows = []
    for t in result["measurements"].get("sum_tiles") or []:
        copy = _copy_rate(result, t["dtype"])
        time_s = t["bench"]["median_s"]
        rows.append({"dtype": t["dtype"], "cols": t["cols"], "tile_bytes": t["tile_bytes"],
                     **t["config"], "time_s": time_s, "copy_fraction": t["bytes"] / time_s / copy,
                     "spread": t["bench"]["spread"]})
    return rows


def tuned_tiles(result: dict) -> dict[tuple[str, int], int]:
    """``(dtype, cols) -> tile bytes`` the row sum chose at each point of a GPU run."""
    return {(p["dtype"], p["cols"]): p["sum_tile_bytes"] for p in result["measurements"]["points"]
            if "sum_tile_bytes" in p}


def target_check(result: dict, target: float = TARGET) -> dict | None:
    """Whether the fused Triton softmax reaches ``target`` of the copy bandwidth everywhere.

    Returns the worst and best fractions and the point of the worst, or None when the result
    has no timed Triton softmax (the CPU tier).
    """
    rows = [r for r in point_rows(result) if r["op"] == "triton_softmax"]
    if not rows:
        return None
    worst = min(rows, key=lambda r: r["copy_fraction"])
    return {"target": target, "met": worst["copy_fraction"] >= target,
            "worst_fraction": worst["copy_fraction"], "worst_dtype": worst["dtype"],
            "worst_cols": worst["cols"],
            "best_fraction": max(r["copy_fraction"] for r in rows),
            "n_met": sum(r["copy_fraction"] >= target for r in rows), "n": len(rows)}


def summary(result: dict, dtype_name: str) -> dict:
    """Per operation of ``dtype_name``: the median over row lengths of achieved bytes/s, plus
    the copy bandwidth and the unfused/fused time ratio (median over row lengths)."""
    rows = [r for r in point_rows(result) if r["dtype"] == dtype_name]
    out: dict = {"copy": _copy_rate(result, dtype_name)}
    for op in OPS:
        vals = [r["bytes_per_s"] for r in rows if r["op"] == op]
        out[op] = statistics.median(vals) if vals else None
    ratios = []
    for p in result["measurements"]["points"]:
        fused = "triton_softmax" if "triton_softmax" in p else "torch_softmax"
        if p["dtype"] == dtype_name:
            ratios.append(p["unfused_softmax"]["median_s"] / p[fused]["median_s"])
    out["unfused_over_fused"] = statistics.median(ratios) if ratios else None
    pts = [p for p in result["measurements"]["points"] if p["dtype"] == dtype_name]
    out["byte_ratio"] = (pts[0]["bytes"]["unfused_softmax"] / pts[0]["bytes"]["softmax"]
                         if pts else None)
    return out


_LABELS = {"copy": "copy (torch)", "torch_sum": "row sum, torch", "triton_sum": "row sum, Triton",
           "torch_softmax": "softmax, torch", "triton_softmax": "softmax, Triton (fused)",
           "unfused_softmax": "softmax, unfused torch"}


def _median_time(result: dict | None, dtype_name: str, op: str) -> float | None:
    """Median over row lengths of ``op``'s time (s): every point moves the same bytes."""
    if result is None:
        return None
    times = [p[op]["median_s"] for p in result["measurements"]["points"]
             if p["dtype"] == dtype_name and op in p]
    return statistics.median(times) if times else None


def predicted_times(result: dict, dtype_name: str) -> dict[str, float]:
    """The predictions of a result's Triton kernels (s): each moves its bytes at the copy rate
    measured in the same run (:func:`helpers.models.roofline.memory_time_s`); the bytes are the
    same at every row length (the tensor's size is fixed), so one time per dtype."""
    p = next(p for p in result["measurements"]["points"] if p["dtype"] == dtype_name)
    copy = _copy_rate(result, dtype_name)
    return {"triton_softmax": memory_time_s(p["bytes"]["softmax"], copy),
            "triton_sum": memory_time_s(p["bytes"]["sum"], copy)}


def fusion_ratio_bound(result: dict, dtype_name: str, gpu: specs.GPUSpec = GPU) -> float | None:
    """Lower bound on the unfused-over-fused time ratio: the median over row lengths of the
    unfused softmax's least time (its bytes at ``gpu``'s datasheet HBM bandwidth) over the
    fused kernel's measured time (Triton's where timed, else torch's)."""
    bounds = []
    for p in result["measurements"]["points"]:
        if p["dtype"] != dtype_name:
            continue
        fused = "triton_softmax" if "triton_softmax" in p else "torch_softmax"
        bounds.append(memory_time_s(p["bytes"]["unfused_softmax"], gpu.hbm_bytes_per_s)
                      / p[fused]["median_s"])
    return statistics.median(bounds) if bounds else None


def comparison_rows(ref: dict | None, mine: dict | None = None, gpu: specs.GPUSpec = GPU) -> list:
    """The table's rows, each naming its claim (:data:`helpers.labs.reduction_softmax.LAB`):
    per dtype, every operation's bandwidth (median over row lengths) against ``gpu``'s datasheet
    HBM bandwidth (a bound); the Triton kernels' times predicted from the run's own copy rate;
    and the unfused-over-fused time ratio against its datasheet lower bound. Predictions and
    the ratio's bound come from the reference (without one, from the reader's run)."""
    basis = ref or mine
    rows = []
    for dtype_name in DTYPES:
        s_ref = summary(ref, dtype_name) if ref is not None else {}
        s_mine = summary(mine, dtype_name) if mine is not None else {}
        for key in ("copy",) + OPS:
            rows.append(report.Row(f"{_LABELS[key]}, {dtype_name}", "TB/s", 1e12,
                                   model=gpu.hbm_bytes_per_s, h200=s_ref.get(key),
                                   yours=s_mine.get(key), claim=LAB.claim("hbm_bound")))
        pred = predicted_times(basis, dtype_name) if basis is not None else {}
        for op, key in (("triton_softmax", "fused_softmax_time"), ("triton_sum", "row_sum_time")):
            rows.append(report.Row(f"{_LABELS[op]} time, {dtype_name}", "µs", 1e-6,
                                   model=pred.get(op), h200=_median_time(ref, dtype_name, op),
                                   yours=_median_time(mine, dtype_name, op),
                                   claim=LAB.claim(key)))
        bound = fusion_ratio_bound(basis, dtype_name, gpu) if basis is not None else None
        rows.append(report.Row(f"unfused / fused softmax time, {dtype_name}", "x", 1.0,
                               model=bound, h200=s_ref.get("unfused_over_fused"),
                               yours=s_mine.get("unfused_over_fused"),
                               claim=LAB.claim("fusion_ratio_bound")))
    return rows


def describe(result: dict) -> str:
    """A few lines summarizing a result: copy bandwidth and each operation's rate."""
    from helpers.units import fmt_rate

    lines = []
    for c in result["measurements"].get("triton_checked", []):
        lines.append(f"Triton {c['dtype']} {c['rows']}x{c['cols']} (interpreter, not timed): "
                     f"softmax error {c['softmax_max_error']:.1e}, row sum {c['sum_max_error']:.1e}")
    for dtype_name in DTYPES:
        lines.append(f"copy {dtype_name}: {fmt_rate(_copy_rate(result, dtype_name), 'B/s')}")
    for r in point_rows(result):
        lines.append(f"{r['dtype']} {r['rows']}x{r['cols']} {r['op']}: "
                     f"{fmt_rate(r['bytes_per_s'], 'B/s')} ({r['copy_fraction']:.0%} of copy), "
                     f"error {r['max_error']:.1e}")
    return "\n".join(lines)


def row_verdict(rows: list, quantity: str, as_bound: bool = False) -> str:
    """The page's number for one row of ``rows`` (rows of :func:`comparison_rows` with both
    values): a prediction's error in per cent (``"+3"``), or, ``as_bound``, the fraction of its
    bound (``"65%"``); :data:`~helpers.labs.core.MISSING` when the row is absent."""
    r = next((r for r in rows if r.quantity == quantity), None)
    if r is None:
        return MISSING
    if as_bound:
        return f"{r.claim.fraction_of_bound(r.model, r.h200):.0%}"
    return f"{100 * (r.model - r.h200) / r.h200:+.2g}"


def claim_rows(ref: dict | None) -> list:
    """The reference's table rows that carry both a model and an H200 value, as
    :class:`helpers.labs.summary.LabRow` (what the status page reads), so the page's
    summaries (``summary.median_abs_error``, ``summary.predictions``, each row's ``holds``)
    are the status page's own."""
    from helpers.labs import summary

    return [] if ref is None else summary.lab_rows("reduction_softmax", ref)
