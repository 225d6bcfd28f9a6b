"""The checkpointing lab: its worker, its kill controller, its interval runs and its grader."""

import os

import pytest

from helpers.checkpoint import CheckpointStore
from helpers.checkpoint import store as st
from helpers.labs import checkpointing as lab
from helpers.labs.analysis import checkpointing as view
from helpers.labs import checkpointing_worker as worker


_SETTINGS = lab.settings


def tiny(**over):
    """The settings of the CPU run (``result_file`` in conftest.py puts them in place)."""
    s = _SETTINGS()
    s.update(steps=40, interval_steps=10, kills=3, write_kill_fraction=0.5, write_pause_s=0.2,
             work_s=0.15, failures_per_run=4, interval_factors=[0.5, 2.0], repeats=1,
             sim_runs=50)
    s.update(over)
    return s


def check_resumptions(k: dict, interval: int) -> None:
    """Every start resumed from the newest checkpoint reported saved before it (or a later
    checkpoint the killed life wrote before the signal landed), never from scratch once one
    was saved; each kill cost at most one interval of recomputation."""
    lives = k["lives"]
    assert lives[0]["resumed_step"] == 0
    saved = 0
    for n, (prev, life) in enumerate(zip(lives, lives[1:]), start=1):
        saved = max([saved, *prev["saved"]])
        r = life["resumed_step"]
        assert r >= saved, f"start {n} resumed from step {r}, but step {saved} was saved"
        assert r % interval == 0 or r == k["steps"], f"start {n} resumed from step {r}"
    assert sum(l["resumed_step"] > 0 for l in lives) >= 1  # the plan exercises a resumption
    assert 0 <= k["steps_recomputed"] <= k["kills"] * interval, k["steps_recomputed"]


def test_the_killed_run_ends_bit_identical_with_nothing_corrupt(cpu_result):
    k = cpu_result["measurements"]["kills"]
    assert k["kills"] == 3 and k["bit_identical"]
    assert k["digest_killed"] == k["digest_uninterrupted"]
    # the same digest is reached by a store that never resumes (each start from step 0):
    # the resumed steps and the steps recomputed tell the two apart
    check_resumptions(k, cpu_result["settings"]["interval_steps"])
    assert k["corrupt_checkpoints_found"] == 0 and k["corrupt_skipped_on_resume"] == 0
    # every kill during a write left a partial temporary file, which the next start swept
    assert k["write_kills_leaving_partial_file"] == k["kills_during_write"]
    assert k["debris_swept"] >= k["kills_during_write"]


def test_the_resumption_check_fails_a_store_that_never_resumes(cpu_result):
    k = cpu_result["measurements"]["kills"]
    never = {**k, "lives": [{**l, "resumed_step": 0} for l in k["lives"]]}
    with pytest.raises(AssertionError, match="resumed from step 0"):
        check_resumptions(never, cpu_result["settings"]["interval_steps"])


def test_the_result_file_has_the_interval_runs_and_the_demo(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "checkpointing" and cpu_result["tier"] == "cpu"
    for key in ("step", "checkpoint", "restart"):
        assert m["costs"][key]["median_s"] > 0
    pts = view.interval_rows(cpu_result)
    assert len(pts) == 2 and all(0 < p["goodput"] <= 1 for p in pts)
    assert all(0 < p["model_goodput"] < 1 for p in pts)
    demo = m["kill_in_place"]
    assert demo["in_place"]["corrupt_detected"] and demo["in_place"]["loaded_step"] == 1
    assert not demo["atomic"]["corrupt_detected"] and demo["atomic"]["loaded_step"] == 2
    summary = view.kill_summary(cpu_result)
    assert summary["bit_identical"] and summary["kills"] == 3
    rows = view.comparison_rows(None, cpu_result)
    assert rows[-1].yours is not None and rows[-1].h200 is None
    rows = view.comparison_rows(cpu_result, cpu_result)  # the with-reference path
    assert rows[-1].error() != "-"
    rows = view.comparison_rows(cpu_result)  # the status page's call: the reference alone
    assert all(r.yours is None for r in rows) and rows[-1].model and rows[-1].h200


def test_resuming_in_process_is_bit_identical(tmp_path):
    whole = worker.train(tmp_path / "a", 30, 7, emit=lambda *w: None)
    worker.train(tmp_path / "b", 12, 7, emit=lambda *w: None)  # stops after step 12
    resumed = worker.train(tmp_path / "b", 30, 7, emit=lambda *w: None)
    assert resumed == whole
    # without the RNG states the run would differ: dropout and the noise draw differently
    other = worker.train(tmp_path / "c", 30, 30, emit=lambda *w: None)
    assert other == whole  # the interval does not change the trajectory either


def test_a_resume_that_forgets_the_rng_state_is_not_bit_identical(tmp_path, monkeypatch):
    whole = worker.train(tmp_path / "a", 20, 5, emit=lambda *w: None)
    worker.train(tmp_path / "b", 10, 5, emit=lambda *w: None)
    monkeypatch.setattr("helpers.checkpoint.restore_rng_state", lambda state: None)
    assert worker.train(tmp_path / "b", 20, 5, emit=lambda *w: None) != whole


def test_grader_fails_an_in_place_save_and_passes_the_reference():
    def in_place(path, data):
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    v = lab.grade_atomic_save(in_place)
    assert v.status == "FAIL" and "neither the old contents nor the new" in str(v)
    assert lab.grade_atomic_save(lab.atomic_save_reference).passed


def test_grader_requires_fsync_and_keeping_the_old_file(tmp_path):
    def no_fsync(path, data):
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)

    def remove_first(path, data):
        if os.path.exists(path):
            os.remove(path)
        lab.atomic_save_reference(path, data)

    assert "never called os.fsync" in str(lab.grade_atomic_save(no_fsync))
    assert "left no file" in str(lab.grade_atomic_save(remove_first))


def _quiet(*words):
    pass


@pytest.mark.parametrize("damage", ["deleted", "truncated", "not json", "entry without sha256"])
def test_a_lost_manifest_resumes_from_the_checkpoints_and_warns(tmp_path, damage):
    whole = worker.train(tmp_path / "a", 30, 7, emit=_quiet)
    worker.train(tmp_path / "b", 12, 7, emit=_quiet)  # checkpoints of steps 7 and 12
    m = tmp_path / "b" / st.MANIFEST
    if damage == "deleted":
        m.unlink()
    elif damage == "truncated":
        m.write_bytes(m.read_bytes()[:40])
    elif damage == "not json":
        m.write_text("{")
    else:
        m.write_text(m.read_text().replace('"sha256"', '"sha"'))
    events = []
    assert worker.train(tmp_path / "b", 30, 7, emit=lambda *w: events.append(w)) == whole
    warning = [e for e in events if e[0] == "warning"]
    assert len(warning) == 1 and st.MANIFEST in warning[0][1] and "step 12" in warning[0][1]
    resumed = [e for e in events if e[0] == "resumed"]
    assert resumed[0][1] == 12  # not 0: nothing is recomputed
    assert [e[1] for e in events if e[0] == "step"][0] == 13


def test_a_worker_whose_checkpoints_are_all_damaged_stops_instead_of_starting_over(tmp_path):
    worker.train(tmp_path, 12, 7, emit=_quiet)
    for p in tmp_path.glob("ckpt-*.pt"):
        p.write_bytes(p.read_bytes()[:1000])
    events = []
    with pytest.raises(st.CheckpointError, match="refusing to start again from step 0"):
        worker.train(tmp_path, 30, 7, emit=lambda *w: events.append(w))
    assert not [e for e in events if e[0] in ("resumed", "step")]


def test_worker_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        worker.train(tmp_path, 0, 1, emit=lambda *w: None)
    with pytest.raises(ValueError):
        worker.train(tmp_path, 10, 0, emit=lambda *w: None)


def test_the_pages_numbers_and_figures_come_from_a_result_file(cpu_result):
    # the page's reference section, fed with a CPU result as it will be with the H200 file
    import matplotlib

    matplotlib.use("Agg")
    from helpers.figures import lab_checkpointing as labfig

    words = view.prose_numbers(cpu_result)
    assert words["kills"] == "3" and words["identical"] == "identical"
    assert view.MISSING not in words.values()
    assert set(view.prose_numbers(None).values()) == {view.MISSING}
    labfig.kill_timeline(cpu_result, title="t")
    labfig.interval_figure(cpu_result, title="t")


def test_goodput_rows_name_the_run_cost_claim_per_interval_and_the_planner_is_apart(cpu_result):
    rows = view.comparison_rows(cpu_result)
    claimed = [r for r in rows if r.claim is not None]
    assert [r.claim.key for r in claimed] == ["goodput_run_costs"] * len(claimed)
    pts = view.factor_points(cpu_result)
    assert len(claimed) == len(pts)
    for paid, p in zip(claimed, pts):
        assert paid.h200 == pytest.approx(p["goodput"])
        assert paid.model == pytest.approx(p["model_goodput_run_costs"])
    # the planner's rows: the benchmarked-cost model, no claim, same measured goodput
    plan = view.planning_rows(cpu_result)
    assert [r.claim for r in plan] == [None] * len(pts)
    for r, p in zip(plan, pts):
        assert r.model == pytest.approx(p["model_goodput"]) and r.h200 == pytest.approx(p["goodput"])
    words = view.claim_numbers(cpu_result)
    assert words.keys() == view.claim_numbers(None).keys()
    assert int(words["paid_within"]) <= int(words["n_factors"]) == len(pts)
    drift = view.drift_numbers(cpu_result)
    assert drift.keys() == view.drift_numbers(None).keys() and view.MISSING not in drift.values()


def test_the_drift_decomposition_adds_up_to_the_planned_model_when_nothing_drifted(cpu_result):
    import copy

    res = copy.deepcopy(cpu_result)
    iv = res["measurements"]["interval"]
    for p in iv["points"]:  # the runs paid exactly the benchmarked costs
        p["run_step_s"], p["run_checkpoint_s"], p["run_restart_s"] = (
            iv["step_s"], iv["checkpoint_s"], iv["restart_s"])
    for p in view.planning_points(res):
        assert all(v == pytest.approx(0.0, abs=1e-12) for v in p["drift_by"].values())
        assert all(v == pytest.approx(1.0) for v in p["ratio"].values())
    # a slower step alone: the step's share is the whole move
    for p in iv["points"]:
        p["run_step_s"] = 2 * iv["step_s"]
    for p in view.planning_points(res):
        assert p["drift_by"]["checkpoint"] == pytest.approx(0.0, abs=1e-12)
        assert p["drift_by"]["step"] != pytest.approx(0.0, abs=1e-6)


def test_factor_points_average_the_repeats():
    pts = [{"factor": f, "repeat": r, "interval_steps": int(4 * f), "goodput": g,
            "model_goodput": 0.5, "model_goodput_run_costs": m}
           for f, r, g, m in ((1.0, 0, 0.6, 0.4), (1.0, 1, 0.8, 0.6), (2.0, 0, 0.5, 0.5))]
    got = view.factor_points({"measurements": {"interval": {"points": pts}}})
    assert [p["factor"] for p in got] == [1.0, 2.0] and got[0]["repeats"] == 2
    assert got[0]["goodput"] == pytest.approx(0.7) and got[0]["model_goodput_run_costs"] == pytest.approx(0.5)
