"""The checkpointing lab: its worker, its kill controller, its interval runs and its grader."""

import os

import pytest

from helpers.checkpoint import CheckpointStore
from helpers.labs import checkpointing as lab
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


def test_the_killed_run_ends_bit_identical_with_nothing_corrupt(cpu_result):
    k = cpu_result["measurements"]["kills"]
    assert k["kills"] == 3 and k["bit_identical"]
    assert k["digest_killed"] == k["digest_uninterrupted"]
    assert k["corrupt_checkpoints_found"] == 0 and k["corrupt_skipped_on_resume"] == 0
    # every kill during a write left a partial temporary file, which the next start swept
    assert k["write_kills_leaving_partial_file"] == k["kills_during_write"]
    assert k["debris_swept"] >= k["kills_during_write"]


def test_the_result_file_has_the_interval_runs_and_the_demo(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "checkpointing" and cpu_result["tier"] == "cpu"
    for key in ("step", "checkpoint", "restart"):
        assert m["costs"][key]["median_s"] > 0
    pts = lab.interval_rows(cpu_result)
    assert len(pts) == 2 and all(0 < p["goodput"] <= 1 for p in pts)
    assert all(0 < p["model_goodput"] < 1 for p in pts)
    demo = m["kill_in_place"]
    assert demo["in_place"]["corrupt_detected"] and demo["in_place"]["loaded_step"] == 1
    assert not demo["atomic"]["corrupt_detected"] and demo["atomic"]["loaded_step"] == 2
    summary = lab.kill_summary(cpu_result)
    assert summary["bit_identical"] and summary["kills"] == 3
    rows = lab.comparison_rows(None, cpu_result)
    assert rows[-1].yours is not None and rows[-1].h200 is None
    rows = lab.comparison_rows(cpu_result, cpu_result)  # the with-reference path
    assert rows[-1].error() != "-"
    rows = lab.comparison_rows(cpu_result)  # the status page's call: the reference alone
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

    words = lab.prose_numbers(cpu_result)
    assert words["kills"] == "3" and words["identical"] == "identical"
    assert lab.MISSING not in words.values()
    assert set(lab.prose_numbers(None).values()) == {lab.MISSING}
    labfig.kill_timeline(cpu_result, title="t")
    labfig.interval_figure(cpu_result, title="t")
