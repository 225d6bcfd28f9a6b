"""What the load lab's page computes from a result: one row per run (measured and predicted),
the evidence for where attainment departs from the models (the replay with each run's own
service times, idle-while-waiting), the comparison table's rows and the numbers its prose glues.

Reads a result of :mod:`helpers.labs.load` (the shipped reference or the reader's run); the
runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.core import MISSING, page_numbers
from helpers.labs.load import SEED, _arr

__all__ = ["replay_own_service", "idle_while_waiting", "gap_rows", "run_rows",
           "comparison_rows", "prose_numbers", "IDLE_CHECK_FROM_FACTOR", "gap_numbers"]


def replay_own_service(run: dict, servers: int, slo_s: float, seed: int = SEED) -> dict:
    """The replaying simulator fed with the run's *own* service times instead of the
    calibration's: each admitted request keeps the service time it measured
    (``finish - start``), a turned-away one draws from those, and the SLO's wait budget uses
    the run's own mean prefill. If this replay matches the measurement while the calibrated one
    does not, the queue behaved as the c-server model says and the gap is in the service times.
    Returns the simulated blocking and attainment, the run's mean service and prefill times, and
    the utilization they imply at the run's arrival rate."""
    from helpers.sim.queue import simulate_multi_server

    arrival = _arr(run["arrival_s"])
    admitted = np.asarray(run["admitted"], dtype=bool)
    start, first, finish = _arr(run["start_s"]), _arr(run["first_s"]), _arr(run["finish_s"])
    own = (finish - start)[admitted]
    if own.size == 0:
        raise ValueError("the run admitted no request: there are no service times to replay")
    service = finish - start
    rng = np.random.default_rng(seed)
    service[~admitted] = own[rng.integers(0, own.size, size=int((~admitted).sum()))]
    prefill = float(np.mean((first - start)[admitted]))
    sim = simulate_multi_server(arrival, service, servers, capacity=run["capacity"])
    lam = (arrival.size - 1) / float(arrival[-1] - arrival[0])
    return {"admitted_attainment": sim.wait_attainment(max(0.0, slo_s - prefill)),
            "blocked_fraction": sim.blocking_fraction(),
            "mean_service_s": float(own.mean()), "mean_prefill_s": prefill,
            "utilization": lam * float(own.mean()) / servers}


def idle_while_waiting(run: dict, servers: int) -> float:
    """Of the time during which at least one admitted request was waiting (arrived, not yet
    started), the fraction in which fewer than ``servers`` requests were in service: a
    dispatcher that keeps workers busy makes this near 0, a slow one does not. Computed exactly
    from the run's event times (0.0 when no request ever waited)."""
    arrival = _arr(run["arrival_s"])
    admitted = np.asarray(run["admitted"], dtype=bool)
    a, st, fn = arrival[admitted], _arr(run["start_s"])[admitted], _arr(run["finish_s"])[admitted]
    # piecewise-constant counts between consecutive events
    times = np.unique(np.concatenate([a, st, fn]))
    if times.size < 2:
        return 0.0
    mid = (times[:-1] + times[1:]) / 2
    dt = np.diff(times)
    waiting = ((a[None, :] <= mid[:, None]) & (st[None, :] > mid[:, None])).sum(axis=1)
    busy = ((st[None, :] <= mid[:, None]) & (fn[None, :] > mid[:, None])).sum(axis=1)
    wait_time = float(dt[waiting > 0].sum())
    if wait_time == 0.0:
        return 0.0
    return float(dt[(waiting > 0) & (busy < servers)].sum() / wait_time)


def gap_rows(result: dict) -> list[dict]:
    """Per run, the evidence for where measured attainment departs from the predictions:
    measured, the formula's and the calibrated replay's admitted attainment, the replay with the
    run's own service times (:func:`replay_own_service`), the run's mean service time against
    the calibration's, and :func:`idle_while_waiting`."""
    m = result["measurements"]
    cal = m["calibration"]
    rows = []
    for r in m["runs"]:
        own = replay_own_service(r, m["servers"], m["slo_s"])
        rows.append({"factor": r["factor"], "policy": r["policy"],
                     "measured": r["measured"]["admitted_attainment"],
                     "formula": r["predicted"]["model_admitted_attainment"],
                     "sim_calibrated": r["predicted"]["sim_admitted_attainment"],
                     "sim_own_service": own["admitted_attainment"],
                     "service_ratio": own["mean_service_s"] / cal["mean_service_s"],
                     "utilization_calibrated": r["predicted"]["utilization"],
                     "utilization_own": own["utilization"],
                     "idle_while_waiting": idle_while_waiting(r, m["servers"])})
    return rows


def run_rows(result: dict) -> list[dict]:
    """One flat dict per run: factor, policy, and the measured and predicted outcomes, with
    goodput also as a fraction of the pool's capacity ``c * mu``."""
    m = result["measurements"]
    cap_rate = m["servers"] / m["calibration"]["mean_service_s"]
    rows = []
    for r in m["runs"]:
        row = {"factor": r["factor"], "policy": r["policy"], **r["measured"], **r["predicted"]}
        for k in ("goodput_per_s", "model_goodput_per_s", "sim_goodput_per_s",
                  "offered_rate_per_s", "throughput_per_s"):
            row[k.replace("_per_s", "_norm")] = row[k] / cap_rate
        rows.append(row)
    return rows


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the page's table: goodput (as a share of capacity) at the lowest and highest
    loads with and without admission control, model against measured."""
    from helpers.labs.report import Row

    def pick_row(res, policy, which):
        if res is None:
            return None
        rows = [r for r in run_rows(res) if r["policy"] == policy]
        return rows[0] if which == "low" else rows[-1]

    out = []
    cal_ref = ref and ref["measurements"]["calibration"]
    cal_mine = mine and mine["measurements"]["calibration"]
    out.append(Row("mean service time", "ms", 1e-3, h200=cal_ref and cal_ref["mean_service_s"],
                   yours=cal_mine and cal_mine["mean_service_s"]))
    for policy, label in (("none", "no admission control"), ("cap", "admission control")):
        for which, load in (("low", "lowest load"), ("high", "highest load")):
            r, y = pick_row(ref, policy, which), pick_row(mine, policy, which)
            out.append(Row(f"goodput / capacity, {label}, {load}", "%", 0.01,
                           model=r and r["model_goodput_norm"], h200=r and r["goodput_norm"],
                           yours=y and y["goodput_norm"], digits=2))
    return out


@page_numbers(["servers", "cpus", "service_ms", "cv", "prefill_ms", "slo_ms", "cap", "n_runs",
               "high_factor", "free_high_pct", "free_high_model_pct", "cap_high_pct",
               "cap_high_model_pct", "cap_high_block_pct", "cap_high_block_model_pct",
               "sim_mae_pct", "model_mae_pct", "best_free_pct", "best_free_factor"])
def prose_numbers(result: dict | None) -> dict:
    """The numbers the page's prose states about a result, formatted (MISSING when absent)."""
    m = result["measurements"]
    cal = m["calibration"]
    rows = run_rows(result)
    free = [r for r in rows if r["policy"] == "none"]
    cap = [r for r in rows if r["policy"] == "cap"]
    best = max(free, key=lambda r: r["goodput_norm"])
    return {
        "servers": str(m["servers"]),
        "cpus": str(result["settings"]["usable_cpus"]),
        "service_ms": f"{cal['mean_service_s'] * 1e3:.3g}",
        "cv": f"{cal['service_cv']:.2f}",
        "prefill_ms": f"{cal['mean_prefill_s'] * 1e3:.3g}",
        "slo_ms": f"{m['slo_s'] * 1e3:.3g}",
        "cap": str(m["capacity"]),
        "n_runs": str(len(rows)),
        "high_factor": f"{free[-1]['factor']:g}",
        "free_high_pct": f"{100 * free[-1]['goodput_norm']:.0f}",
        "free_high_model_pct": f"{100 * free[-1]['model_goodput_norm']:.0f}",
        "cap_high_pct": f"{100 * cap[-1]['goodput_norm']:.0f}",
        "cap_high_model_pct": f"{100 * cap[-1]['model_goodput_norm']:.0f}",
        "cap_high_block_pct": f"{100 * cap[-1]['blocked_fraction']:.0f}",
        "cap_high_block_model_pct": f"{100 * cap[-1]['model_blocked_fraction']:.0f}",
        "sim_mae_pct": f"{100 * np.mean([abs(r['sim_goodput_norm'] - r['goodput_norm']) for r in rows]):.0f}",
        "model_mae_pct": f"{100 * np.mean([abs(r['model_goodput_norm'] - r['goodput_norm']) for r in rows]):.0f}",
        "best_free_pct": f"{100 * best['goodput_norm']:.0f}",
        "best_free_factor": f"{best['factor']:g}",
    }


#: Offered load (times capacity) from which the page reports idle-while-waiting: below it the
#: queue is rarely non-empty, so the fraction says little about the dispatcher.
IDLE_CHECK_FROM_FACTOR = 0.8


@page_numbers([f"{tag}_{k}" for tag in ("near", "over") for k in (
    "factor", "measured", "formula", "sim_cal", "sim_own", "service_pct", "rho_cal", "rho_own")]
    + ["mae_cal", "mae_own", "idle_max_pct", "idle_from"])
def gap_numbers(result: dict | None) -> dict:
    """The numbers the page's account of the gaps states, formatted (MISSING when absent):
    the uncapped run nearest below saturation and the capped run at the highest load (each
    measured, formula, calibrated replay, own-service replay, service-time change and the
    utilizations), the mean absolute attainment error of both replays over all runs, and the
    largest idle-while-waiting fraction at :data:`IDLE_CHECK_FROM_FACTOR` of capacity and above."""
    rows = gap_rows(result)
    free = [r for r in rows if r["policy"] == "none" and r["factor"] < 1]
    near = max(free or [r for r in rows if r["policy"] == "none"], key=lambda r: r["factor"])
    over = max((r for r in rows if r["policy"] == "cap"), key=lambda r: r["factor"])
    out = {}
    for tag, r in (("near", near), ("over", over)):
        out.update({f"{tag}_factor": f"{r['factor']:g}",
                    f"{tag}_measured": f"{r['measured']:.2f}",
                    f"{tag}_formula": f"{r['formula']:.2f}",
                    f"{tag}_sim_cal": f"{r['sim_calibrated']:.2f}",
                    f"{tag}_sim_own": f"{r['sim_own_service']:.2f}",
                    f"{tag}_service_pct": f"{100 * (r['service_ratio'] - 1):.0f}",
                    f"{tag}_rho_cal": f"{r['utilization_calibrated']:.2f}",
                    f"{tag}_rho_own": f"{r['utilization_own']:.2f}"})
    out["mae_cal"] = f"{np.mean([abs(r['sim_calibrated'] - r['measured']) for r in rows]):.2f}"
    out["mae_own"] = f"{np.mean([abs(r['sim_own_service'] - r['measured']) for r in rows]):.2f}"
    busy = [r["idle_while_waiting"] for r in rows if r["factor"] >= IDLE_CHECK_FROM_FACTOR]
    out["idle_max_pct"] = f"{100 * max(busy):.0f}" if busy else MISSING
    out["idle_from"] = f"{IDLE_CHECK_FROM_FACTOR:g}"
    return out
