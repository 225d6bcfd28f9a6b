"""What the roofline lab's pages compute from a result: copy, matmul and sweep rows, the table.

The runner (:mod:`helpers.labs.roofline`) measures the copy bandwidth, the matrix-product
rates and the intensity sweep; this module reads a result (the shipped H200 reference or the
reader's run) and gives ``labs/roofline.md`` and ``chapters/gpu-architecture.md`` their rows
(:func:`comparison_rows`), the roofline panel, the sweep's check and the numbers they quote.
"""

from __future__ import annotations

import math

from helpers import specs
from helpers.labs.core import MISSING, fmt
from helpers.labs.roofline import GPU, LAB, MATMUL_PRECISIONS
from helpers.models import roofline

__all__ = ["copy_rows", "copy_target", "matmul_rows", "sweep_rows", "far_from_ridge",
           "empirical_roof", "best_matmul", "comparison_rows", "roofline_panel", "sweep_check",
           "clock_evidence", "describe", "measured_roof", "measured_roof_rows", "FAR_FACTOR",
           "fmt", "MISSING"]


def _rate(work: float, entry: dict) -> float:
    return work / entry["median_s"]


def copy_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per buffer size: bytes/s of torch's and the Triton copy, fractions of ``gpu``'s HBM peak."""
    rows = []
    for e in result["measurements"]["copy"]["sizes"]:
        row = {"buffer_bytes": e["buffer_bytes"],
               "torch_bytes_per_s": _rate(e["moved_bytes"], e["torch"]),
               "triton_bytes_per_s": None, "triton_over_torch": None, "spread": e["torch"]["spread"]}
        row["torch_fraction"] = row["torch_bytes_per_s"] / gpu.hbm_bytes_per_s
        if "triton" in e:
            row["triton_bytes_per_s"] = _rate(e["moved_bytes"], e["triton"])
            row["triton_fraction"] = row["triton_bytes_per_s"] / gpu.hbm_bytes_per_s
            row["triton_over_torch"] = row["triton_bytes_per_s"] / row["torch_bytes_per_s"]
        rows.append(row)
    return rows


def copy_target(result: dict, target: float = 0.95) -> dict | None:
    """Whether the Triton copy reaches ``target`` of torch's copy at every size (None on a CPU)."""
    rows = [r for r in copy_rows(result) if r["triton_over_torch"] is not None]
    if not rows:
        return None
    worst = min(r["triton_over_torch"] for r in rows)
    return {"target": target, "worst_ratio": worst, "met": worst >= target,
            "best_torch_bytes_per_s": max(r["torch_bytes_per_s"] for r in rows),
            "best_triton_bytes_per_s": max(r["triton_bytes_per_s"] for r in rows)}


def matmul_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per precision and size: FLOP/s, the dense peak of ``gpu`` and the fraction reached."""
    rows = []
    for prec, block in result["measurements"]["matmul"].items():
        peak = gpu.peak_flop_per_s(prec)
        for e in block["sizes"]:
            rate = _rate(e["flop"], e["bench"])
            predicted = roofline.kernel_time_lower_bound_s(e["flop"], e["min_bytes"], peak,
                                                           gpu.hbm_bytes_per_s)
            rows.append({"precision": prec, "n": e["n"], "flop_per_s": rate,
                         "peak_flop_per_s": peak, "fraction_of_peak": rate / peak,
                         "predicted_s": predicted, "measured_s": e["bench"]["median_s"],
                         "intensity": e["flop"] / e["min_bytes"]})
    return rows


def sweep_rows(result: dict, gpu: specs.GPUSpec = GPU, precision: str = "fp32",
               mem_bytes_per_s: float | None = None,
               peak_flop_per_s: float | None = None) -> list[dict]:
    """Each sweep point with the roofline's predicted time beside the measured one.

    The prediction is :func:`~helpers.models.roofline.kernel_time_lower_bound_s` with ``gpu``'s
    dense ``precision`` peak and HBM bandwidth, unless ``peak_flop_per_s`` or
    ``mem_bytes_per_s`` override them (e.g. a measured roof). ``error`` is
    ``(predicted - measured) / measured`` (negative: the kernel is slower than the model);
    ``ridge_distance`` is the intensity over the ridge intensity. Untimed points (CPU tier) have
    ``measured_s`` None.
    """
    peak = peak_flop_per_s or gpu.peak_flop_per_s(precision)
    bw = mem_bytes_per_s or gpu.hbm_bytes_per_s
    ridge = roofline.ridge_intensity_flop_per_byte(peak, bw)
    rows = []
    for e in result["measurements"]["sweep"]["points"]:
        intensity = roofline.arithmetic_intensity_flop_per_byte(e["flop"], e["bytes"])
        predicted = roofline.kernel_time_lower_bound_s(e["flop"], e["bytes"], peak, bw)
        measured = e["bench"]["median_s"] if "bench" in e else None
        rows.append({
            "k": e["k"], "intensity": intensity, "predicted_s": predicted, "measured_s": measured,
            "error": None if measured is None else (predicted - measured) / measured,
            "flop_per_s": None if measured is None else e["flop"] / measured,
            "kind": roofline.bound_kind(intensity, peak, bw), "ridge_distance": intensity / ridge,
            "spread": e["bench"]["spread"] if "bench" in e else None})
    return rows


def far_from_ridge(rows: list[dict], factor: float = 4.0) -> tuple[list[dict], list[dict]]:
    """Split sweep rows into those at least ``factor`` away from the ridge and the rest."""
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor!r}")
    far = [r for r in rows if r["ridge_distance"] <= 1 / factor or r["ridge_distance"] >= factor]
    near = [r for r in rows if r not in far]
    return far, near


def empirical_roof(result: dict) -> tuple[float, float]:
    """(peak FLOP/s, bandwidth bytes/s) measured: the best fp32 matmul rate and copy bandwidth.

    Uses fp32 with TF32 disabled where present (the only precision on a CPU) and torch's copy.
    """
    mm = result["measurements"]["matmul"]["fp32"]["sizes"]
    peak = max(_rate(e["flop"], e["bench"]) for e in mm)
    bw = max(_rate(e["moved_bytes"], e["torch"]) for e in result["measurements"]["copy"]["sizes"])
    return peak, bw


def _largest(result: dict) -> dict:
    return result["measurements"]["copy"]["sizes"][-1]


def best_matmul(result: dict, precision: str) -> dict | None:
    """The fastest size of ``precision`` in ``result`` (None if it was not measured)."""
    rows = [r for r in matmul_rows(result) if r["precision"] == precision]
    return max(rows, key=lambda r: r["flop_per_s"]) if rows else None


#: A sweep point is "far" from the ridge, where one roof alone sets its time, when its
#: intensity is at least this factor above or below the ridge's (as :func:`sweep_check`).
FAR_FACTOR = 4.0


def measured_roof(result: dict, gpu: specs.GPUSpec = GPU) -> tuple[float, float] | None:
    """The run's own fp32 roof: ``(peak FLOP/s, bytes/s)``, the fp32 peak at the SM clock read
    at the end of the run (:func:`clock_evidence`) and torch's copy bandwidth at the largest
    buffer. None for a run without a recorded clock (a CPU run)."""
    clock = clock_evidence(result, gpu)
    if clock is None:
        return None
    e = _largest(result)
    return clock["fp32_peak_at_end_clock"], _rate(e["moved_bytes"], e["torch"])


def measured_roof_rows(result: dict, gpu: specs.GPUSpec = GPU,
                       factor: float = FAR_FACTOR) -> list[dict]:
    """The timed sweep points at least ``factor`` from the ridge of the run's own roof
    (:func:`measured_roof`), each with the time that roof predicts (:func:`sweep_rows`)."""
    roof = measured_roof(result, gpu)
    if roof is None:
        return []
    peak, bw = roof
    rows = [r for r in sweep_rows(result, gpu, mem_bytes_per_s=bw, peak_flop_per_s=peak)
            if r["measured_s"]]
    return far_from_ridge(rows, factor)[0]


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the page's table: the model, the H200 reference, the reader's run.

    Bounds from the datasheet: the copy bandwidth at the largest buffer, the best rate of each
    matrix-product precision and the time of each sweep point (the reader's column only where
    the point was timed). Predictions from the run's own roof (:func:`measured_roof_rows`):
    the time of each sweep point at least :data:`FAR_FACTOR` from its ridge.
    """
    from helpers.labs.report import Row

    def copy_bw(result, impl):
        if result is None:
            return None
        e = _largest(result)
        return _rate(e["moved_bytes"], e[impl]) if impl in e else None

    def mm_rate(result, prec):
        row = best_matmul(result, prec) if result is not None else None
        return row["flop_per_s"] if row else None

    rows = [Row(f"copy, {name}", "GB/s", 1e9, model=GPU.hbm_bytes_per_s,
                h200=copy_bw(ref, impl), yours=copy_bw(mine, impl), digits=4,
                claim=LAB.claim("copy_hbm"))
            for name, impl in (("torch", "torch"), ("Triton", "triton"))]
    rows += [Row(f"matmul {prec}", "TFLOP/s", 1e12, model=GPU.peak_flop_per_s(prec),
                 h200=mm_rate(ref, prec), yours=mm_rate(mine, prec),
                 claim=LAB.claim("matmul_peak"))
             for prec in MATMUL_PRECISIONS]
    ref_sweep = {r["k"]: r for r in sweep_rows(ref)} if ref is not None else {}
    my_sweep = {r["k"]: r for r in sweep_rows(mine)} if mine is not None else {}
    ks = sorted(set(ref_sweep) | {k for k, r in my_sweep.items() if r["measured_s"]})
    for k in ks:
        basis = ref_sweep.get(k) or my_sweep[k]
        rows.append(Row(f"sweep k={k}: time", "ms", 1e-3, model=basis["predicted_s"],
                        h200=ref_sweep[k]["measured_s"] if k in ref_sweep else None,
                        yours=my_sweep[k]["measured_s"] if k in my_sweep else None,
                        claim=LAB.claim("sweep_roofline")))
    basis = ref if ref is not None else mine
    for r in measured_roof_rows(basis) if basis is not None else []:
        rows.append(Row(f"sweep k={r['k']}: time, run's own roof", "ms", 1e-3,
                        model=r["predicted_s"], h200=r["measured_s"] if ref is not None else None,
                        yours=my_sweep.get(r["k"], {}).get("measured_s"),
                        claim=LAB.claim("sweep_measured_roof")))
    return rows


def roofline_panel(result: dict | None, title: str, *, gpu: specs.GPUSpec = GPU) -> dict:
    """A panel for :func:`helpers.figures.lab_roofline.roofline_panels` from one result.

    A GPU result: the datasheet fp32 roof, the roof with the measured copy bandwidth, and the
    timed sweep points. A CPU result: the empirical roof (fp32 matmul rate, copy bandwidth) and
    the matrix products as points. None: the datasheet roof and a note.
    """
    fp32 = gpu.peak_flop_per_s("fp32")
    if result is None:
        return {"title": title, "note": "H200 reference not measured yet",
                "roofs": [(f"{gpu.name} fp32, datasheet", fp32, gpu.hbm_bytes_per_s, "main")]}
    bw = _rate(_largest(result)["moved_bytes"], _largest(result)["torch"])
    if result["tier"] == "gpu":
        points = [(f"k={r['k']}", r["intensity"], r["flop_per_s"])
                  for r in sweep_rows(result) if r["measured_s"]]
        return {"title": title, "points": points,
                "roofs": [(f"{gpu.name} fp32, datasheet", fp32, gpu.hbm_bytes_per_s, "main"),
                          ("fp32 peak, measured copy bandwidth", fp32, bw, "aux")]}
    peak, bw = empirical_roof(result)
    points = [(f"matmul {r['n']}", r["intensity"], r["flop_per_s"]) for r in matmul_rows(result)]
    return {"title": title, "points": points,
            "roofs": [("measured: fp32 matmul, copy", peak, bw, "main")]}


def sweep_check(result: dict, *, target: float = 0.15, factor: float = 4.0,
                gpu: specs.GPUSpec = GPU) -> dict:
    """How well the roofline predicts the sweep: far from the ridge and at it.

    Returns the share of timed points at least ``factor`` from the ridge whose predicted time
    is within ``target`` of the measured one, the worst such error, the point nearest the ridge
    with its error and whether its measured time lies between the bound and the no-overlap sum
    :math:`F/P + Q/M`, and the errors again with the measured copy bandwidth in place of the
    datasheet's (which separates a bandwidth shortfall from a failure of the model's shape).
    """
    rows = [r for r in sweep_rows(result, gpu) if r["measured_s"]]
    if not rows:
        raise ValueError("the result has no timed sweep points (CPU tier)")
    far, _ = far_from_ridge(rows, factor)
    within = [r for r in far if abs(r["error"]) <= target]
    nearest = min(rows, key=lambda r: abs(math.log(r["ridge_distance"])))
    e = next(p for p in result["measurements"]["sweep"]["points"] if p["k"] == nearest["k"])
    no_overlap = roofline.kernel_time_no_overlap_s(e["flop"], e["bytes"],
                                                   gpu.peak_flop_per_s("fp32"),
                                                   gpu.hbm_bytes_per_s)
    bw = _rate(_largest(result)["moved_bytes"], _largest(result)["torch"])
    measured_bw = sweep_rows(result, gpu, mem_bytes_per_s=bw)
    far_bw, _ = far_from_ridge([r for r in measured_bw if r["measured_s"]], factor)
    mem_far = [r for r in far if r["kind"] == "memory-bound"]
    comp_far = [r for r in far if r["kind"] == "compute-bound"]
    return {
        "n_far": len(far), "n_far_within": len(within),
        "worst_far_error": max((abs(r["error"]) for r in far), default=float("nan")),
        "memory_far_error": (sum(r["error"] for r in mem_far) / len(mem_far)
                             if mem_far else float("nan")),
        "compute_far_error": (sum(r["error"] for r in comp_far) / len(comp_far)
                              if comp_far else float("nan")),
        "memory_far_error_measured_bw": (
            sum(r["error"] for r in far_bw if r["kind"] == "memory-bound")
            / max(1, sum(1 for r in far_bw if r["kind"] == "memory-bound"))),
        "worst_k": max(rows, key=lambda r: abs(r["error"]))["k"],
        "ridge_k": nearest["k"], "ridge_error": nearest["error"],
        "ridge_measured_s": nearest["measured_s"], "ridge_bound_s": nearest["predicted_s"],
        "ridge_no_overlap_s": no_overlap,
        "ridge_between": nearest["predicted_s"] <= nearest["measured_s"] <= no_overlap,
        "peak_fraction": max(r["flop_per_s"] for r in rows) / gpu.peak_flop_per_s("fp32"),
        "measured_copy_bytes_per_s": bw,
    }


def clock_evidence(result: dict, gpu: specs.GPUSpec = GPU) -> dict | None:
    """The SM clock ``nvidia-smi`` read at the end of a GPU run, and the fp32 peak at that clock.

    :func:`helpers.models.gpu_peaks.sm_peak_flop_per_s` with ``gpu``'s SM count and FP32 lanes
    gives the peak the arithmetic could reach at the clock the GPU was running; the datasheet's
    peak assumes the boost clock. None when the run recorded no clock (a CPU run, or no
    ``nvidia-smi``).
    """
    from helpers.models import gpu_peaks

    after = (result.get("provenance") or {}).get("after_run") or {}
    try:
        clock_hz = float(after.get("sm_clock_mhz")) * 1e6
    except (TypeError, ValueError):
        return None
    if not clock_hz > 0 or gpu.boost_clock_hz is None:
        return None
    lanes = gpu_peaks.fma_per_clock_per_sm(gpu, "fp32")
    return {"end_clock_hz": clock_hz, "boost_clock_hz": gpu.boost_clock_hz,
            "fp32_peak_at_end_clock": gpu_peaks.sm_peak_flop_per_s(gpu.sm_count, lanes, clock_hz)}


def describe(result: dict) -> str:
    """A few lines summarizing a result: copy bandwidths, matmul rates, sweep times."""
    from helpers.units import fmt_bytes, fmt_rate, fmt_time

    lines = []
    for r in copy_rows(result):
        line = (f"copy {fmt_bytes(r['buffer_bytes'], binary=True)}: torch "
                f"{fmt_rate(r['torch_bytes_per_s'], 'B/s')}")
        if r["triton_bytes_per_s"] is not None:
            line += (f", Triton {fmt_rate(r['triton_bytes_per_s'], 'B/s')} "
                     f"({r['triton_over_torch']:.1%} of torch)")
        lines.append(line)
    for r in matmul_rows(result):
        lines.append(f"matmul {r['precision']} n={r['n']}: {fmt_rate(r['flop_per_s'], 'FLOP/s')}")
    for r in sweep_rows(result):
        if r["measured_s"] is None:
            lines.append(f"sweep k={r['k']}: checked against float64 (not timed on this tier)")
        else:
            lines.append(f"sweep k={r['k']} (I = {r['intensity']:.3g} FLOP/B): measured "
                         f"{fmt_time(r['measured_s'])}, model {fmt_time(r['predicted_s'])}, "
                         f"error {r['error']:+.0%}")
    return "\n".join(lines)
