"""What the checkpointing lab's page computes from a result: the kill experiment in a few
numbers, the failure-injected runs by interval, the comparison table's rows and the numbers its
prose glues.

Reads a result of :mod:`helpers.labs.checkpointing` (the shipped reference or the reader's
run); the runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.checkpointing import LAB
from helpers.labs.core import MISSING

__all__ = ["kill_summary", "interval_rows", "factor_points", "comparison_rows", "prose_numbers",
           "claim_numbers", "planning_points", "planning_rows", "drift_numbers", "MISSING"]


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


def factor_points(result: dict) -> list[dict]:
    """Per interval factor (times Daly's interval), in order: the measured goodput and the
    model's with the costs benchmarked beforehand and with the costs each run paid, each the
    mean over the factor's repeats."""
    groups: dict = {}
    for p in interval_rows(result):
        groups.setdefault(p["factor"], []).append(p)
    return [{"factor": f, "repeats": len(ps),
             "goodput": float(np.mean([p["goodput"] for p in ps])),
             "model_goodput": float(np.mean([p["model_goodput"] for p in ps])),
             "model_goodput_run_costs": float(np.mean([p["model_goodput_run_costs"]
                                                       for p in ps]))}
            for f, ps in sorted(groups.items())]


def _daly(points: list[dict]) -> dict:
    """The factor nearest Daly's interval (1, or the nearest on a log scale)."""
    return min(points, key=lambda p: abs(np.log(p["factor"])))


def _label(factor: float) -> str:
    return "Daly's interval" if factor == 1 else f"{factor:g}x Daly's interval"


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the page's table: the costs and Daly's interval (measurements), then the goodput
    at each interval factor, predicted with the costs each run paid (claim
    ``goodput_run_costs``). The planner's numbers, from the costs benchmarked beforehand, are
    :func:`planning_rows` (no claim: the costs drifted before the runs paid them)."""
    from helpers.labs.report import Row

    riv = ref and ref["measurements"]["interval"]
    miv = mine and mine["measurements"]["interval"]
    rows = [
        Row("checkpoint cost delta", "ms", 1e-3, h200=riv and riv["checkpoint_s"],
            yours=miv and miv["checkpoint_s"]),
        Row("restart (verify + load) R", "ms", 1e-3, h200=riv and riv["restart_s"],
            yours=miv and miv["restart_s"]),
        Row("Daly's interval", "ms", 1e-3, h200=riv and riv["daly_interval_s"],
            yours=miv and miv["daly_interval_s"]),
    ]
    rpts = {p["factor"]: p for p in factor_points(ref)} if ref else {}
    mpts = {p["factor"]: p for p in factor_points(mine)} if mine else {}
    factors = sorted(rpts or mpts) or [1.0]
    paid = LAB.claim("goodput_run_costs")
    for f in factors:
        r, y = rpts.get(f), mpts.get(f)
        rows.append(Row(f"goodput at {_label(f)}, run's own costs", "%", 0.01,
                        model=r and r["model_goodput_run_costs"], h200=r and r["goodput"],
                        yours=y and y["goodput"], claim=paid))
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
    daly = _daly(factor_points(result))
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
        "g_daly": f"{daly['goodput']:.0%}", "g_model": f"{daly['model_goodput']:.0%}",
        "best_factor": f"{best:g}", "g_best": f"{np.mean(by_factor[best]):.0%}",
        "inplace_loaded": f"{demo['loaded_step']}", "inplace_newest": f"{demo['newest_step']}",
    }


def claim_numbers(result: dict | None) -> dict:
    """The numbers the page's account of its claims states (MISSING when absent): how many
    interval factors each goodput claim holds at, and the costs benchmarked beforehand against
    the range the failure-injected runs paid (step, checkpoint, restart, in ms)."""
    keys = ("n_factors", "paid_within", "paid_worst_pct",
            "step_ms", "run_step_ms", "delta_ms", "run_delta_ms", "restart_ms",
            "run_restart_ms", "slower_word")
    if result is None:
        return {k: MISSING for k in keys}
    rows = [r for r in comparison_rows(result) if r.claim is not None]
    paid = [r for r in rows if r.claim.key == "goodput_run_costs"]
    iv = result["measurements"]["interval"]
    pts = iv["points"]

    def span(key):
        vals = [p[key] for p in pts if p[key] is not None]
        return f"{min(vals) * 1e3:.2g} to {max(vals) * 1e3:.2g}"

    slower = all(min(p[k] for p in pts if p[k] is not None) > iv[c]
                 for k, c in (("run_step_s", "step_s"), ("run_checkpoint_s", "checkpoint_s"),
                              ("run_restart_s", "restart_s")))
    return {"n_factors": f"{len(paid)}",
            "paid_within": f"{sum(r.claim.holds(r.model, r.h200) for r in paid)}",
            "paid_worst_pct": f"{100 * max(abs(r.model / r.h200 - 1) for r in paid):.0f}",
            "step_ms": f"{iv['step_s'] * 1e3:.2g}", "run_step_ms": span("run_step_s"),
            "delta_ms": f"{iv['checkpoint_s'] * 1e3:.2g}", "run_delta_ms": span("run_checkpoint_s"),
            "restart_ms": f"{iv['restart_s'] * 1e3:.2g}", "run_restart_ms": span("run_restart_s"),
            "slower_word": "slower" if slower else "not uniformly slower"}


def planning_points(result: dict) -> list[dict]:
    """Per interval factor, in order: what a planner would have said (the goodput model with
    the costs benchmarked before the runs), the same model with the costs each run paid, the
    measured goodput, and how much of the planner's excess over the run-cost model each drifted
    cost accounts for (the planned goodput minus the model with only that cost replaced by the
    run's: ``step``, ``checkpoint``, ``restart``), each the mean over the factor's repeats, and
    each cost's drift as the mean ratio of paid to benchmarked."""
    from helpers.models import checkpointing as ck

    iv = result["measurements"]["interval"]
    step, delta, restart, mtbf = iv["step_s"], iv["checkpoint_s"], iv["restart_s"], iv["mtbf_s"]
    groups: dict = {}
    for p in interval_rows(result):
        groups.setdefault(p["factor"], []).append(p)
    out = []
    for f, ps in sorted(groups.items()):
        def mean(fn):
            return float(np.mean([fn(p) for p in ps]))

        def paid_restart(p):
            return p["run_restart_s"] if p["run_restart_s"] is not None else restart

        planned = mean(lambda p: ck.goodput(p["interval_steps"] * step, delta, restart, mtbf))
        only = {
            "step": mean(lambda p: ck.goodput(p["interval_steps"] * p["run_step_s"], delta,
                                              restart, mtbf)),
            "checkpoint": mean(lambda p: ck.goodput(p["interval_steps"] * step,
                                                    p["run_checkpoint_s"], restart, mtbf)),
            "restart": mean(lambda p: ck.goodput(p["interval_steps"] * step, delta,
                                                 paid_restart(p), mtbf))}
        out.append({"factor": f, "planned": planned,
                    "run_costs": mean(lambda p: p["model_goodput_run_costs"]),
                    "goodput": mean(lambda p: p["goodput"]),
                    "drift_by": {k: planned - v for k, v in only.items()},
                    "ratio": {"step": mean(lambda p: p["run_step_s"] / step),
                              "checkpoint": mean(lambda p: p["run_checkpoint_s"] / delta),
                              "restart": mean(lambda p: paid_restart(p) / restart)}})
    return out


def planning_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the planner's table: at each interval factor the goodput model with the costs
    benchmarked before the runs against the measured goodput. No claim: the costs drifted
    between the benchmark and the runs (:func:`drift_numbers`), so these rows say what a planner
    would have predicted, not what the model predicts from the costs the runs paid."""
    from helpers.labs.report import Row

    rpts = {p["factor"]: p for p in planning_points(ref)} if ref else {}
    mpts = {p["factor"]: p for p in planning_points(mine)} if mine else {}
    out = []
    for f in sorted(rpts or mpts) or [1.0]:
        r, y = rpts.get(f), mpts.get(f)
        out.append(Row(f"goodput at {_label(f)}, benchmarked costs", "%", 0.01,
                       model=r and r["planned"], h200=r and r["goodput"],
                       yours=y and y["goodput"]))
    return out


_COSTS = {"step": "the slower steps", "checkpoint": "the dearer checkpoints",
          "restart": "the slower restarts"}


def drift_numbers(result: dict | None) -> dict:
    """The numbers the page states about the planner's prediction (MISSING when absent): at the
    longest interval factor the planned goodput, the run-cost model's and the measured; the
    points the drift of the costs moved the prediction (planned minus run-cost model) and the
    direction word; each cost's drift (paid over benchmarked, as a percentage, at that factor);
    which cost moved it most and by how many points; and the largest planner's error over all
    factors with the number of factors within the goodput claim's tolerance."""
    keys = ("factor", "planned_pct", "paid_pct", "measured_pct", "moved_pp", "moved_word",
            "step_pct", "checkpoint_pct", "restart_pct", "main_cost", "main_pp",
            "planned_worst_pct", "planned_within", "n_factors")
    if result is None:
        return {k: MISSING for k in keys}
    pts = planning_points(result)
    last = pts[-1]
    moved = last["planned"] - last["run_costs"]
    main = max(last["drift_by"], key=lambda k: abs(last["drift_by"][k]))
    tol = LAB.claim("goodput_run_costs").tolerance
    errs = [p["planned"] / p["goodput"] - 1 for p in pts]
    pct = lambda x: f"{100 * (x - 1):+.0f}"
    return {"factor": f"{last['factor']:g}", "planned_pct": f"{100 * last['planned']:.0f}",
            "paid_pct": f"{100 * last['run_costs']:.0f}",
            "measured_pct": f"{100 * last['goodput']:.0f}",
            "moved_pp": f"{100 * abs(moved):.0f}",
            "moved_word": "down" if moved > 0 else "up",
            "step_pct": pct(last["ratio"]["step"]),
            "checkpoint_pct": pct(last["ratio"]["checkpoint"]),
            "restart_pct": pct(last["ratio"]["restart"]),
            "main_cost": _COSTS[main], "main_pp": f"{100 * abs(last['drift_by'][main]):.0f}",
            "planned_worst_pct": f"{100 * max(abs(e) for e in errs):.0f}",
            "planned_within": f"{sum(abs(e) <= tol for e in errs)}",
            "n_factors": f"{len(pts)}"}
