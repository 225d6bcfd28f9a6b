"""Tests of the load lab's runner: a tiny CPU run, its result file, predictions, the grader."""

import json

import numpy as np
import pytest

from helpers.labs import load as lab
from helpers.labs.analysis import load as view
from helpers.labs.report import Table
from helpers.models import queueing as qm


_SETTINGS = lab.settings


def tiny():
    """The settings of the CPU run (``result_file`` in conftest.py puts them in place)."""
    return {**_SETTINGS(), "servers": 1, "output_mean_tokens": 2.0, "output_cap_tokens": 4,
            "calibration_requests": 4, "requests_per_run": 10, "load_factors": [0.5, 2.0]}


def test_a_tiny_cpu_run_writes_a_valid_result(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "load" and m["checked"] and m["servers"] == 1
    cal = m["calibration"]
    assert cal["mean_service_s"] > cal["mean_prefill_s"] > 0 and cal["service_cv"] >= 0
    assert len(m["runs"]) == 4 and {r["policy"] for r in m["runs"]} == {"none", "cap"}
    for r in m["runs"]:
        adm = np.array(r["admitted"])
        starts = np.array([np.nan if x is None else x for x in r["start_s"]])
        arr = np.array(r["arrival_s"])
        assert np.all(starts[adm] >= arr[adm] - 1e-3)  # nobody starts before arriving
        if r["policy"] == "none":
            assert adm.all()
        meas, pred = r["measured"], r["predicted"]
        assert 0 <= meas["admitted_attainment"] <= 1 and 0 <= pred["model_admitted_attainment"] <= 1
        assert meas["goodput_per_s"] <= meas["offered_rate_per_s"] + 1e-9
    json.dumps(cpu_result)  # serializable


def test_the_page_table_reads_a_result_file(cpu_result):
    rows = view.comparison_rows(cpu_result, cpu_result)
    assert rows[0].h200 == cpu_result["measurements"]["calibration"]["mean_service_s"]
    assert all(r.model is not None for r in rows[1:])
    assert "goodput / capacity" in str(Table("load", rows, yours_label="yours"))
    assert [r.h200 for r in view.comparison_rows(None)] == [None] * len(rows)
    assert len(view.run_rows(cpu_result)) == 4


def test_predictions_on_a_synthetic_run():
    cal = {"mean_service_s": 1.0, "mean_prefill_s": 0.0, "service_s": [1.0] * 50}
    arrival = np.arange(200) / 1.5  # 1.5 per second into 2 servers
    run = {"arrival_s": arrival.tolist(), "capacity": None}
    p = lab.predict(run, cal, 2, 1.0)
    assert p["utilization"] == pytest.approx(0.75)
    assert p["model_admitted_attainment"] == pytest.approx(qm.mmc_wait_attainment(1.0, 1.5, 1.0, 2))
    assert p["sim_admitted_attainment"] == 1.0  # evenly spaced, constant service: no wait
    capped = lab.predict({**run, "capacity": 3}, cal, 2, 1.0)
    assert capped["model_blocked_fraction"] > 0 and capped["sim_blocked_fraction"] == 0


def test_admission_capacity_is_the_predicted_wait_rule():
    assert lab.admission_capacity(4, 0.1, 0.1) == 8
    assert lab.admission_capacity(1, 1.0, 0.0) == 2
    with pytest.raises(ValueError):
        lab.admission_capacity(0, 0.1, 0.1)
    with pytest.raises(ValueError):
        lab.Pool(0)


def test_grader_passes_erlang_c_and_fails_the_mm1_formula():
    assert lab.grade_erlang_c(qm.erlang_c, seed=1).passed
    bad = lab.grade_erlang_c(lambda c, a: a / c, seed=1)
    assert bad.status == "FAIL" and "M/M/1" in str(bad) and "0.174132" in str(bad)
    broken = lab.grade_erlang_c(lambda c, a: 1 / 0, seed=1)
    assert broken.status == "FAIL" and "ZeroDivisionError" in str(broken)


def test_usable_cpus():
    assert lab.usable_cpus() >= 1
    assert 1 <= lab.settings()["servers"] <= 8


def _toy_run(capacity=None):
    # two servers; requests 0-2 arrive at 0, 0, 0.5; each takes 1 s; request 2 waits 0.5 s
    # while both servers are busy (never idle while it waits)
    return {"arrival_s": [0.0, 0.0, 0.5], "admitted": [True, True, True],
            "start_s": [0.0, 0.0, 1.0], "first_s": [0.1, 0.1, 1.1],
            "finish_s": [1.0, 1.0, 2.0], "capacity": capacity}


def test_replay_with_the_runs_own_service_reproduces_its_waits():
    """Fed with the run's own service times, the c-server replay reproduces a run that a
    work-conserving dispatcher served: the same waits, hence the same attainment."""
    run = _toy_run()
    # SLO on the first token 0.45 s with prefill 0.1 s: a wait budget of 0.35 s; request 2
    # waited 0.5 s, so 2 of 3 meet it
    got = view.replay_own_service(run, 2, 0.45)
    assert got["admitted_attainment"] == pytest.approx(2 / 3)
    assert got["mean_service_s"] == pytest.approx(1.0)
    assert got["mean_prefill_s"] == pytest.approx(0.1)
    assert got["utilization"] == pytest.approx((2 / 0.5) * 1.0 / 2)
    assert view.idle_while_waiting(run, 2) == 0.0
    # a dispatcher that left a server idle for the whole wait
    late = dict(run, start_s=[0.0, 0.0, 1.0], finish_s=[1.0, 0.4, 2.0])
    assert view.idle_while_waiting(late, 2) == pytest.approx(1.0)  # one server idle all along
    with pytest.raises(ValueError):
        view.replay_own_service(dict(run, admitted=[False] * 3), 2, 0.45)


def test_gap_numbers_cover_a_result_and_its_absence(cpu_result):
    rows = view.gap_rows(cpu_result)
    assert len(rows) == len(cpu_result["measurements"]["runs"])
    for r in rows:
        assert 0.0 <= r["sim_own_service"] <= 1.0 and 0.0 <= r["idle_while_waiting"] <= 1.0
        assert r["service_ratio"] > 0
    with_ref, without = view.gap_numbers(cpu_result), view.gap_numbers(None)
    assert with_ref.keys() == without.keys()
    assert set(without.values()) == {lab.MISSING}


def test_rows_name_both_claims_and_the_replay_is_computed_from_the_run(cpu_result):
    rows = view.comparison_rows(cpu_result)
    goodput = [r for r in rows if r.quantity.startswith("goodput")]
    assert [r.claim.key for r in goodput] == ["goodput_formula", "goodput_replay"] * (len(goodput) // 2)
    assert all(r.claim.kind == "prediction" for r in goodput)
    assert rows[0].claim is None and rows[0].model is None  # the service time: a measurement
    # the replay row's model is the own-service replay's goodput, normalized like run_rows
    run = [r for r in cpu_result["measurements"]["runs"] if r["policy"] == "none"][0]
    assert goodput[1].model == pytest.approx(view.replay_goodput_norm(cpu_result, run))
    words = view.claim_numbers(cpu_result)
    assert words.keys() == view.claim_numbers(None).keys()
    assert int(words["replay_within"]) <= int(words["n_rows"])


def test_table_runs_pick_lowest_near_saturation_and_highest():
    runs = [{"policy": "none", "factor": f} for f in (0.4, 0.8, 0.9, 1.1, 3.0)]
    picked = view._table_runs({"measurements": {"runs": runs}}, "none")
    assert [(label, r["factor"]) for label, r in picked] == [
        ("lowest load", 0.4), ("near saturation (0.9x)", 0.9), ("highest load", 3.0)]
    # no run below saturation other than the lowest: no near-saturation row
    runs = [{"policy": "cap", "factor": f} for f in (0.9, 1.5)]
    assert [label for label, _ in view._table_runs({"measurements": {"runs": runs}}, "cap")] == [
        "lowest load", "highest load"]


def test_formula_claim_uses_the_runs_own_service_distribution():
    """The formula rows are mgc_wait_slo_attainment with the run's own service mean and squared
    coefficient of variation, not the calibration's."""
    from helpers.models import slo as slom

    run = dict(_toy_run(capacity=3), arrival_s=[0.0, 0.4, 0.5],
               finish_s=[1.0, 1.5, 2.0], start_s=[0.0, 0.4, 1.0], first_s=[0.1, 0.5, 1.1])
    got = view.own_service_formula(run, 2, 0.45)
    own = np.array([1.0, 1.1, 1.0])
    assert got["mean_service_s"] == pytest.approx(own.mean())
    assert got["service_scv"] == pytest.approx(own.var() / own.mean() ** 2)
    lam = 2 / 0.5
    want = slom.mgc_wait_slo_attainment(0.45 - 0.1, lam, 1 / own.mean(), 2,
                                        service_scv=got["service_scv"], capacity=3,
                                        n_requests=3)
    assert (got["blocked_fraction"], got["admitted_attainment"]) == pytest.approx(want)
    assert got["goodput_per_s"] == pytest.approx(slom.goodput_per_s(lam, *want))


def test_formula_rows_and_numbers_read_the_run(cpu_result):
    rows = [r for r in view.comparison_rows(cpu_result) if r.claim is not None
            and r.claim.key == "goodput_formula"]
    m = cpu_result["measurements"]
    picked = [run for pol in ("none", "cap") for _, run in view._table_runs(cpu_result, pol)]
    assert len(rows) == len(picked)
    for row, run in zip(rows, picked):
        assert row.model == pytest.approx(view.own_formula_goodput_norm(cpu_result, run))
    drift = view.service_drift(cpu_result)
    assert drift["min_ratio"] <= drift["max_ratio"] and len(drift["runs"]) == len(m["runs"])
    words = view.formula_numbers(cpu_result)
    assert words.keys() == view.formula_numbers(None).keys()
    ev = view.finite_run_evidence(cpu_result, m["runs"][-1], n_runs=5)
    assert 0 <= ev["sim_p05"] <= ev["sim_mean"] <= ev["sim_p95"] <= 1 and ev["relaxation_s"] > 0
