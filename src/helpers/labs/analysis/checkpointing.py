"""What the checkpointing lab's page computes from a result: the kill experiment in a few
numbers, the failure-injected runs by interval, the comparison table's rows and the numbers its
prose glues.

Reads a result of :mod:`helpers.labs.checkpointing` (the shipped reference or the reader's
run); the runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.core import MISSING

__all__ = ["kill_summary", "interval_rows", "comparison_rows", "prose_numbers", "MISSING"]


def kill_summary(result: dict) -> dict:
    """The kill experiment's evidence in a few numbers."""
    k = result["measurements"]["kills"]
    ready = k["restart_to_ready_s"]
    return {"kills": k["kills"], "during_write": k["kills_during_write"],
            "partial_files": k["write_kills_leaving_partial_file"],
            "corrupt_found": k["corrupt_checkpoints_found"],
            "corrupt_skipped": k["corrupt_skipped_on_resume"], "debris": k["debris_swept"],
            "steps": k["steps"], "recomputed": k["steps_recomputed"],
            "bit_identical": k["bit_identical"],
            "restart_s": float(np.median(ready)) if ready else None}


def interval_rows(result: dict) -> list[dict]:
    """One row per failure-injected run, sorted by interval."""
    return sorted(result["measurements"]["interval"]["points"],
                  key=lambda p: (p["interval_steps"], p["repeat"]))


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the page's table: the optimum interval and goodput, model against measured."""
    from helpers.labs.report import Row

    def best(res):
        if res is None:
            return None, None, None
        iv = res["measurements"]["interval"]
        pts = interval_rows(res)
        nearest = min(abs(np.log(p["factor"])) for p in pts)  # Daly's interval, or nearest
        one = [p for p in pts if abs(np.log(p["factor"])) == nearest]
        meas = float(np.mean([p["goodput"] for p in one]))
        model = one[0]["model_goodput"]
        return iv, model, meas

    riv, rmodel, rmeas = best(ref)
    miv, mmodel, mmeas = best(mine)
    rows = [
        Row("checkpoint cost delta", "ms", 1e-3, h200=riv and riv["checkpoint_s"],
            yours=miv and miv["checkpoint_s"]),
        Row("restart (verify + load) R", "ms", 1e-3, h200=riv and riv["restart_s"],
            yours=miv and miv["restart_s"]),
        Row("Daly's interval", "ms", 1e-3, h200=riv and riv["daly_interval_s"],
            yours=miv and miv["daly_interval_s"]),
        Row("goodput at Daly's interval", "%", 0.01, model=rmodel, h200=rmeas, yours=mmeas),
    ]
    return rows


def _ms(seconds: float) -> str:
    """Milliseconds for prose: three significant digits, no exponent."""
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def prose_numbers(result: dict | None) -> dict:
    """The numbers the page's prose states about a result, formatted (MISSING when absent)."""
    keys = ("kills", "during_write", "partial_files", "corrupt_found", "debris", "steps",
            "recomputed", "identical", "restart_s", "delta_ms", "restart_ms", "mtbf_ms",
            "young_ms", "daly_ms", "step_ms", "ckpt_kib", "n_points", "n_inside", "g_daly",
            "g_model", "g_best", "best_factor", "inplace_loaded", "inplace_newest")
    if result is None:
        return {k: MISSING for k in keys}
    k = kill_summary(result)
    iv = result["measurements"]["interval"]
    pts = interval_rows(result)
    inside = [p for p in pts if p["sim_goodput_p05"] <= p["goodput"] <= p["sim_goodput_p95"]]
    by_factor = {}
    for p in pts:
        by_factor.setdefault(p["factor"], []).append(p["goodput"])
    best = max(by_factor, key=lambda f: np.mean(by_factor[f]))
    rows = comparison_rows(result, result)
    demo = result["measurements"]["kill_in_place"]["in_place"]
    return {
        "kills": f"{k['kills']}", "during_write": f"{k['during_write']}",
        "partial_files": f"{k['partial_files']}", "corrupt_found": f"{k['corrupt_found']}",
        "debris": f"{k['debris']}", "steps": f"{k['steps']}", "recomputed": f"{k['recomputed']}",
        "identical": "identical" if k["bit_identical"] else "DIFFERENT",
        "restart_s": f"{k['restart_s']:.2g}" if k["restart_s"] is not None else MISSING,
        "delta_ms": _ms(iv['checkpoint_s']), "restart_ms": _ms(iv['restart_s']),
        "mtbf_ms": _ms(iv['mtbf_s']), "young_ms": _ms(iv['young_interval_s']),
        "daly_ms": _ms(iv['daly_interval_s']), "step_ms": f"{iv['step_s'] * 1e3:.2g}",
        "ckpt_kib": f"{result['measurements']['costs']['checkpoint_bytes'] / 1024:.0f}",
        "n_points": f"{len(pts)}", "n_inside": f"{len(inside)}",
        "g_daly": f"{rows[-1].h200:.0%}", "g_model": f"{rows[-1].model:.0%}",
        "best_factor": f"{best:g}", "g_best": f"{np.mean(by_factor[best]):.0%}",
        "inplace_loaded": f"{demo['loaded_step']}", "inplace_newest": f"{demo['newest_step']}",
    }
