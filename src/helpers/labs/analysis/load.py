"""What the load lab's page computes from a result: one row per run (measured and predicted),
the evidence for where attainment departs from the models (the replay with each run's own
service times, idle-while-waiting), the comparison table's rows and the numbers its prose glues.

Reads a result of :mod:`helpers.labs.load` (the shipped reference or the reader's run); the
runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.core import MISSING, page_numbers
from helpers.labs.load import LAB, SEED, _arr

__all__ = ["own_service_formula", "own_formula_goodput_norm", "service_drift", "finite_run_evidence", "formula_numbers", "replay_own_service", "idle_while_waiting", "gap_rows", "run_rows",
           "replay_goodput_norm", "comparison_rows", "prose_numbers", "IDLE_CHECK_FROM_FACTOR",
           "gap_numbers", "claim_numbers"]


def _own_service(run: dict) -> tuple[np.ndarray, float]:
    """The admitted requests' own service times (s) and their mean prefill (s)."""
    admitted = np.asarray(run["admitted"], dtype=bool)
    start, first, finish = _arr(run["start_s"]), _arr(run["first_s"]), _arr(run["finish_s"])
    own = (finish - start)[admitted]
    if own.size == 0:
        raise ValueError("the run admitted no request: there are no service times to use")
    return own, float(np.mean((first - start)[admitted]))


def own_service_formula(run: dict, servers: int, slo_s: float) -> dict:
    """The queueing formulas (:func:`helpers.models.slo.mgc_wait_slo_attainment`) with the
    service-time distribution the run itself measured: the admitted requests' mean service time
    and its squared coefficient of variation, and their mean prefill for the SLO's wait budget;
    the arrival rate is the run's. Returns blocking, attainment among the admitted, goodput
    (requests/s), and the service statistics used."""
    from helpers.models import slo as slom

    own, prefill = _own_service(run)
    arrival = _arr(run["arrival_s"])
    lam = (arrival.size - 1) / float(arrival[-1] - arrival[0])
    mean = float(own.mean())
    scv = float(own.var() / mean ** 2)
    block, att = slom.mgc_wait_slo_attainment(max(0.0, slo_s - prefill), lam, 1.0 / mean,
                                              servers, service_scv=scv,
                                              capacity=run["capacity"], n_requests=arrival.size)
    return {"blocked_fraction": block, "admitted_attainment": att,
            "goodput_per_s": slom.goodput_per_s(lam, block, att), "mean_service_s": mean,
            "service_scv": scv, "mean_prefill_s": prefill,
            "utilization": lam * mean / servers}


def own_formula_goodput_norm(res: dict, run: dict) -> float:
    """:func:`own_service_formula`'s goodput for one run, as a share of the calibrated capacity
    ``c * mu`` (the normalization of :func:`run_rows`)."""
    m = res["measurements"]
    cap_rate = m["servers"] / m["calibration"]["mean_service_s"]
    return own_service_formula(run, m["servers"], m["slo_s"])["goodput_per_s"] / cap_rate


def service_drift(result: dict) -> dict:
    """How far the service times during the runs departed from the calibration's: the
    calibration's mean and squared coefficient of variation, the smallest and largest run mean
    as ratios to it, and the same for the runs of the table (:func:`_table_runs`)."""
    m = result["measurements"]
    cal = m["calibration"]
    stats = {}
    for r in m["runs"]:
        own, _ = _own_service(r)
        stats[(r["factor"], r["policy"])] = (float(own.mean()), float(own.var() / own.mean() ** 2))
    ratios = [v[0] / cal["mean_service_s"] for v in stats.values()]
    return {"cal_mean_s": cal["mean_service_s"], "cal_scv": cal["service_cv"] ** 2,
            "min_ratio": min(ratios), "max_ratio": max(ratios),
            "scv_min": min(v[1] for v in stats.values()),
            "scv_max": max(v[1] for v in stats.values()), "runs": stats}


def finite_run_evidence(result: dict, run: dict, n_runs: int = 100, seed: int = SEED) -> dict:
    r"""Why the steady-state formulas cannot describe ``run`` (an uncapped run near or past
    saturation), from the run itself: the time scale on which its queue approaches a steady
    state, :math:`\sigma^2/m^2` for the Brownian approximation of the queue (drift
    :math:`m = \lambda - c\mu`, variance :math:`\sigma^2 = \lambda(1 + c_s^2)`; Abate and
    Whitt 1987), against the run's length; a Monte Carlo of the same finite run from empty
    (Poisson arrivals at the run's rate, gamma service times with the run's own mean and
    squared coefficient of variation) giving its mean attainment among the admitted and its
    5-95 % band; and the mean service time of the requests that met the SLO against the run's
    mean."""
    from helpers.sim.queue import simulate_multi_server

    m = result["measurements"]
    c, slo_s = m["servers"], m["slo_s"]
    f = own_service_formula(run, c, slo_s)
    arrival = _arr(run["arrival_s"])
    n = arrival.size
    lam = (n - 1) / float(arrival[-1] - arrival[0])
    drift = lam - c / f["mean_service_s"]
    var = lam * (1.0 + f["service_scv"])
    d = max(0.0, slo_s - f["mean_prefill_s"])
    rng = np.random.default_rng(seed)
    shape = 1.0 / max(f["service_scv"], 1e-6)
    att = []
    for _ in range(n_runs):
        arr = np.cumsum(rng.exponential(1.0 / lam, n))
        svc = rng.gamma(shape, f["mean_service_s"] / shape, n)
        att.append(simulate_multi_server(arr, svc, c, capacity=run["capacity"]).wait_attainment(d))
    admitted = np.asarray(run["admitted"], dtype=bool)
    first, start, finish = _arr(run["first_s"]), _arr(run["start_s"]), _arr(run["finish_s"])
    met = admitted & ((first - arrival) <= slo_s)
    service = finish - start
    return {"relaxation_s": var / drift ** 2 if drift != 0 else float("inf"),
            "run_s": float(arrival[-1] - arrival[0]), "utilization": f["utilization"],
            "formula": f["admitted_attainment"], "sim_mean": float(np.mean(att)),
            "sim_p05": float(np.quantile(att, 0.05)), "sim_p95": float(np.quantile(att, 0.95)),
            "measured": run["measured"]["admitted_attainment"],
            "met_service_ratio": (float(np.mean(service[met])) / f["mean_service_s"]
                                  if met.any() else float("nan"))}


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


def _table_runs(res: dict, policy: str) -> list[tuple[str, dict]]:
    """The runs of ``policy`` the table shows, labelled: the lowest load, the highest below
    saturation (where the queue is most sensitive to the service rate) and the highest."""
    runs = [r for r in res["measurements"]["runs"] if r["policy"] == policy]
    below = [r for r in runs if r["factor"] < 1]
    picked = [("lowest load", runs[0])]
    if below and below[-1] is not runs[0]:
        picked.append((f"near saturation ({below[-1]['factor']:g}x)", below[-1]))
    picked.append(("highest load", runs[-1]))
    return picked


def replay_goodput_norm(res: dict, run: dict) -> float:
    """The goodput of :func:`replay_own_service` for one run, as a share of the calibrated
    capacity ``c * mu`` (the normalization of :func:`run_rows`)."""
    from helpers.models import slo as slom

    m = res["measurements"]
    own = replay_own_service(run, m["servers"], m["slo_s"])
    arrival = _arr(run["arrival_s"])
    lam = (arrival.size - 1) / float(arrival[-1] - arrival[0])
    cap_rate = m["servers"] / m["calibration"]["mean_service_s"]
    return slom.goodput_per_s(lam, own["blocked_fraction"], own["admitted_attainment"]) / cap_rate


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list:
    """Rows of the page's table: goodput (as a share of capacity) at the lowest load, the
    highest below saturation and the highest, with and without admission control; each run
    twice, predicted by the queueing formulas with the calibration's service rate (claim
    ``goodput_formula``) and by the queue replaying the run's own service times (claim
    ``goodput_replay``)."""
    from helpers.labs.report import Row

    def picked(res, policy):
        if res is None:
            return None
        by_factor = {}
        rows = {r["factor"]: r for r in run_rows(res) if r["policy"] == policy}
        for label, run in _table_runs(res, policy):
            by_factor[label] = (run, rows[run["factor"]])
        return by_factor

    out = []
    cal_ref = ref and ref["measurements"]["calibration"]
    cal_mine = mine and mine["measurements"]["calibration"]
    out.append(Row("mean service time", "ms", 1e-3, h200=cal_ref and cal_ref["mean_service_s"],
                   yours=cal_mine and cal_mine["mean_service_s"]))
    formula, replay = LAB.claim("goodput_formula"), LAB.claim("goodput_replay")
    for policy, label in (("none", "no admission control"), ("cap", "admission control")):
        r_runs, y_runs = picked(ref, policy), picked(mine, policy)
        labels = list((r_runs or y_runs or {"lowest load": 0, "highest load": 0}).keys())
        for load in labels:
            r = r_runs and r_runs.get(load)
            y = y_runs and y_runs.get(load)
            name = f"goodput / capacity, {label}, {load}"
            out.append(Row(name, "%", 0.01, model=r and own_formula_goodput_norm(ref, r[0]),
                           h200=r and r[1]["goodput_norm"], yours=y and y[1]["goodput_norm"],
                           digits=2, claim=formula))
            out.append(Row(f"{name}, replayed", "%", 0.01,
                           model=r and replay_goodput_norm(ref, r[0]),
                           h200=r and r[1]["goodput_norm"], yours=y and y[1]["goodput_norm"],
                           digits=2, claim=replay))
    return out


@page_numbers(["servers", "cpus", "service_ms", "cv", "prefill_ms", "slo_ms", "cap", "n_runs",
               "high_factor", "free_high_pct", "free_high_model_pct", "cap_high_pct",
               "cap_high_model_pct", "cap_high_block_pct", "cap_high_block_model_pct",
               "sim_mae_pct", "model_mae_pct", "best_free_pct", "best_free_factor", "free_high_word"])
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
        "free_high_word": "fell to" if free[-1]["goodput_norm"] < best["goodput_norm"] else "was",
    }


#: Offered load (times capacity) from which the page reports idle-while-waiting: below it the
#: queue is rarely non-empty, so the fraction says little about the dispatcher.
IDLE_CHECK_FROM_FACTOR = 0.8


@page_numbers([f"{tag}_{k}" for tag in ("near", "over") for k in (
    "factor", "measured", "formula", "sim_cal", "sim_own", "service_pct", "rho_cal", "rho_own")]
    + [f"{tag}_service_word" for tag in ("near", "over")]
    + ["mae_cal", "mae_own", "idle_max_pct", "idle_from", "departs"])
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
                    f"{tag}_service_pct": f"{100 * abs(r['service_ratio'] - 1):.0f}",
                    f"{tag}_service_word": "longer" if r["service_ratio"] >= 1 else "shorter",
                    f"{tag}_rho_cal": f"{r['utilization_calibrated']:.2f}",
                    f"{tag}_rho_own": f"{r['utilization_own']:.2f}"})
    out["mae_cal"] = f"{np.mean([abs(r['sim_calibrated'] - r['measured']) for r in rows]):.2f}"
    out["mae_own"] = f"{np.mean([abs(r['sim_own_service'] - r['measured']) for r in rows]):.2f}"
    busy = [r["idle_while_waiting"] for r in rows if r["factor"] >= IDLE_CHECK_FROM_FACTOR]
    out["idle_max_pct"] = f"{100 * max(busy):.0f}" if busy else MISSING
    out["idle_from"] = f"{IDLE_CHECK_FROM_FACTOR:g}"
    below = all(r["measured"] < min(r["formula"], r["sim_calibrated"]) for r in (near, over))
    out["departs"] = "falls below both predictions" if below else "departs from the predictions"
    return out


@page_numbers(["formula_within", "replay_within", "n_rows", "replay_worst_pct",
               "free_over_factor", "free_over_met", "free_over_n", "free_over_first",
               "free_over_formula_pct", "free_over_sim_pct", "free_over_pct",
               "free_over_replay_pct", "sim_vs_formula"])
def claim_numbers(result: dict | None) -> dict:
    """The numbers the page's account of its claims states (MISSING when absent): how many of
    the table's rows of each claim hold; the replay's worst error; and, for the uncapped run at
    the highest load, how many requests met the SLO, whether they were exactly the first
    arrivals, and its goodput measured, by the formula, by the calibrated simulator (which, like
    the run, starts empty) and by the own-service replay."""
    rows = [r for r in comparison_rows(result) if r.model is not None and r.h200 is not None]
    formula = [r for r in rows if r.claim.key == "goodput_formula"]
    replay = [r for r in rows if r.claim.key == "goodput_replay"]
    m = result["measurements"]
    run = [r for r in m["runs"] if r["policy"] == "none"][-1]
    row = [r for r in run_rows(result) if r["policy"] == "none"][-1]
    arrival, first = _arr(run["arrival_s"]), _arr(run["first_s"])
    met = np.flatnonzero((first - arrival) <= m["slo_s"])
    worst = max(abs(r.model / r.h200 - 1) for r in replay)
    return {"formula_within": f"{sum(r.claim.holds(r.model, r.h200) for r in formula)}",
            "replay_within": f"{sum(r.claim.holds(r.model, r.h200) for r in replay)}",
            "n_rows": f"{len(formula)}", "replay_worst_pct": f"{100 * worst:.0f}",
            "free_over_factor": f"{run['factor']:g}", "free_over_met": f"{met.size}",
            "free_over_n": f"{arrival.size}",
            "free_over_first": ("all of them the first arrivals of the run"
                                if met.size and met[-1] == met.size - 1
                                else "not only the run's first arrivals"),
            "free_over_formula_pct": f"{100 * own_formula_goodput_norm(result, run):.0f}",
            "free_over_sim_pct": f"{100 * row['sim_goodput_norm']:.0f}",
            "free_over_pct": f"{100 * row['goodput_norm']:.0f}",
            "free_over_replay_pct": f"{100 * replay_goodput_norm(result, run):.0f}",
            "sim_vs_formula": ("more" if row["sim_goodput_norm"]
                               > own_formula_goodput_norm(result, run) else "no more")}


@page_numbers(["cal_ms", "cal_scv", "run_lo_ms", "run_hi_ms", "run_lo_pct", "run_hi_pct",
               "run_hi_word", "scv_lo", "scv_hi", "planner_worst_pct", "planner_within",
               "near_factor", "near_rho", "near_relax_s", "near_run_s", "near_relax_x",
               "near_formula", "near_sim", "near_p05", "near_p95", "near_measured",
               "over_factor", "over_sim", "over_p05", "over_p95", "over_measured",
               "over_met_pct", "over_met_word"])
def formula_numbers(result: dict | None) -> dict:
    """The numbers the page states about the formula claim (MISSING when absent): the
    calibration's service time and variability against the range the runs measured; how the
    same formulas fare on the table's rows with the calibration's service rate (what a planner
    would have said); and :func:`finite_run_evidence` for the uncapped run nearest below
    saturation and the uncapped run at the highest load."""
    m = result["measurements"]
    drift = service_drift(result)
    means = [v[0] for v in drift["runs"].values()]
    cap_rate = m["servers"] / m["calibration"]["mean_service_s"]
    tol = LAB.claim("goodput_formula").tolerance
    planner = []
    for policy in ("none", "cap"):
        for _, run in _table_runs(result, policy):
            meas = run["measured"]["goodput_per_s"] / cap_rate
            if meas > 0:
                planner.append(run["predicted"]["model_goodput_per_s"] / cap_rate / meas - 1)
    free = [r for r in m["runs"] if r["policy"] == "none"]
    near = max([r for r in free if r["factor"] < 1] or free, key=lambda r: r["factor"])
    over = free[-1]
    ev_n, ev_o = finite_run_evidence(result, near), finite_run_evidence(result, over)
    lo, hi = drift["min_ratio"] - 1, drift["max_ratio"] - 1
    return {"cal_ms": f"{drift['cal_mean_s'] * 1e3:.3g}", "cal_scv": f"{drift['cal_scv']:.2f}",
            "run_lo_ms": f"{min(means) * 1e3:.3g}", "run_hi_ms": f"{max(means) * 1e3:.3g}",
            "run_lo_pct": f"{100 * lo:+.0f}", "run_hi_pct": f"{100 * hi:+.0f}",
            "run_hi_word": "longer" if hi > 0 else "no longer",
            "scv_lo": f"{drift['scv_min']:.2f}", "scv_hi": f"{drift['scv_max']:.2f}",
            "planner_worst_pct": f"{100 * max(abs(e) for e in planner):.0f}",
            "planner_within": f"{sum(abs(e) <= tol for e in planner)}",
            "near_factor": f"{near['factor']:g}", "near_rho": f"{ev_n['utilization']:.3f}",
            "near_relax_s": f"{ev_n['relaxation_s']:.3g}", "near_run_s": f"{ev_n['run_s']:.2g}",
            "near_relax_x": f"{ev_n['relaxation_s'] / ev_n['run_s']:.0f}",
            "near_formula": f"{ev_n['formula']:.2f}", "near_sim": f"{ev_n['sim_mean']:.2f}",
            "near_p05": f"{ev_n['sim_p05']:.2f}", "near_p95": f"{ev_n['sim_p95']:.2f}",
            "near_measured": f"{ev_n['measured']:.2f}",
            "over_factor": f"{over['factor']:g}", "over_sim": f"{ev_o['sim_mean']:.3f}",
            "over_p05": f"{ev_o['sim_p05']:.3f}", "over_p95": f"{ev_o['sim_p95']:.3f}",
            "over_measured": f"{ev_o['measured']:.3f}",
            "over_met_pct": f"{100 * abs(ev_o['met_service_ratio'] - 1):.0f}",
            "over_met_word": "shorter" if ev_o["met_service_ratio"] < 1 else "longer"}
