"""The data-parallel lab's runner (CPU tier, gloo on two processes) and its grader."""

import json

import pytest

from helpers.labs import core, report
from helpers.labs import data_parallel as dp
from helpers.labs.analysis import data_parallel as dpv
from helpers.models import distributed_analysis as da


@pytest.fixture(scope="module")
def result():
    return dp.run("cpu")  # BOOK_SIZE=small: the root conftest sets it for every test


def test_cpu_run_is_correct_and_measures_every_part(result):
    m = result["measurements"]
    assert result["lab"] == "data_parallel" and result["tier"] == "cpu"
    assert m["correct"]["passed"] and m["correct"]["max_weight_diff_between_ranks"] == 0.0
    assert len(m["ranks"]) == dp.WORLD_SIZE
    for r in m["ranks"]:
        t = r["timings"]
        for key in ("compute_step", "forward", "optimizer"):
            assert t[key]["median_s"] > 0 and t[key]["n_reps"] == result["settings"]["reps"]
        assert len(t["per_layer"]["bucket_bytes"]) == result["settings"]["depth"]
        assert len(t["one_bucket"]["bucket_bytes"]) == 1
        assert sum(t["per_layer"]["bucket_bytes"]) == pytest.approx(4 * m["n_params"])
        sizes = [p["bytes"] for p in r["allreduce_sweep"]]
        assert sizes == sorted(sizes) and all(p["median_s"] > 0 for p in r["allreduce_sweep"])


def test_timeline_has_both_ranks_on_one_clock(result):
    tl = result["measurements"]["timeline"]
    assert [r["rank"] for r in tl["ranks"]] == [0, 1]
    for r in tl["ranks"]:
        assert r["compute"] and r["comm"]
        assert all(a >= 0 and b >= a for a, b in r["compute"] + r["comm"])
        assert 0 <= r["exposed_comm_s"] <= sum(b - a for a, b in r["comm"]) + 1e-12
    assert tl["slowest_rank"] in (0, 1) and tl["slowest_span_s"] > 0


def test_prediction_uses_the_measured_parts(result):
    p = dpv.predict(result)
    assert p["alpha_s"] >= 0 and p["beta_s_per_byte"] > 0
    per, one = p["configs"]["per_layer"], p["configs"]["one_bucket"]
    assert per["n_buckets"] == result["settings"]["depth"] and one["n_buckets"] == 1
    # one bucket cannot overlap anything: all its communication is exposed
    assert one["exposed_comm_s"] == pytest.approx(one["total_comm_s"])
    assert per["exposed_comm_s"] < one["exposed_comm_s"]
    compute = p["forward_s"] + p["backward_s"] + p["optimizer_s"]
    assert per["step_s"] == pytest.approx(compute + per["exposed_comm_s"])


def test_result_file_round_trips_and_feeds_the_table(result, tmp_path):
    path = core.save_result(result, tmp_path)
    back = core.load_result(path)
    assert json.loads(path.read_text())["lab"] == "data_parallel"
    rows = dpv.model_rows(back, reference=back)  # the with-reference path of the page
    assert len(rows) == 4 and all(r.yours is not None for r in rows)
    assert rows[0].h200 is not None and rows[2].h200 is not None  # the step rows
    # an exposed time measured as zero has no relative error; it is left blank, not divided by
    zeroed = json.loads(json.dumps(back))
    for r in zeroed["measurements"]["ranks"]:
        r["timings"]["per_layer"]["step"]["median_s"] = r["timings"]["compute_step"]["median_s"]
    z = dpv.model_rows(back, reference=zeroed)
    assert z[1].h200 is None and "step, bucket per layer" in str(report.Table("t", z))
    assert all(r.h200 is None for r in dpv.model_rows(back))


def right(compute, comm):
    return da.exposed_comm_s(compute, comm)


def all_exposed(compute, comm):
    return sum(b - a for a, b in comm)


def test_grader_passes_a_right_answer_and_explains_a_wrong_one(result):
    tl = result["measurements"]["timeline"]
    assert dp.grade_exposed_comm(right, tl).passed
    wrong = dp.grade_exposed_comm(all_exposed, tl)
    assert wrong.status == "FAIL" and "counts all communication as exposed" in str(wrong)
    crash = dp.grade_exposed_comm(lambda a, b: 1 / 0)
    assert crash.status == "FAIL" and "ZeroDivisionError" in str(crash)
    with pytest.raises(ValueError):
        dp.grade_exposed_comm(right, trials=0)


def test_settings_reject_nothing_silently():
    s = dp.settings_for("cpu")
    assert s["backend"] == "gloo" and s["configs"]["per_layer"] < s["configs"]["one_bucket"]
    assert dp.settings_for("cuda")["backend"] == "nccl"


def test_the_pages_reference_path_with_a_result_file(result, tmp_path, monkeypatch, capsys):
    """What the lab page does once labs/reference/h200/data_parallel.json exists (a CPU file
    stands in for it here, in a temporary directory)."""
    from helpers.figures import distributed_analysis as distfig
    from helpers.labs import report

    core.save_result(result, tmp_path)
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    ref = dp.reference_or_none()
    assert ref is not None and "not measured" not in capsys.readouterr().out
    assert core.provenance_line(ref).endswith(".")
    table = report.Table("t", dpv.model_rows(result, ref), yours_label="yours (cpu)")
    assert "step, bucket per layer" in str(table)
    rows = dpv.model_rows(result, ref)
    assert rows[0].h200 == rows[0].yours and rows[0].error() != "-"
    distfig.timeline_figure(ref["measurements"]["timeline"], title="ref")
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path / "absent")
    assert dp.reference_or_none() is None
    assert "H200 reference not measured yet" in capsys.readouterr().out


def test_rows_name_their_claims_and_the_exposure_evidence_adds_up(result):
    rows = dpv.model_rows(result, reference=result)
    assert [r.claim.key for r in rows] == ["step_time", "exposed_comm"] * 2
    ev = dpv.exposure_evidence(result, 1e12)
    pred = dpv.predict(result)
    for name, c in pred["configs"].items():
        assert ev["excess_s"][name] == pytest.approx(c["measured_exposed_s"] - c["exposed_comm_s"])
    # the sweep's largest size is the whole gradient, and the copy bound reads and writes it
    assert ev["sweep_largest_bytes"] == pytest.approx(ev["gradient_bytes"], rel=1e-3)
    assert ev["copy_out_min_s"] == pytest.approx(2 * ev["gradient_bytes"] / 1e12)
    assert ev["allreduce_alone_s"] > 0 and ev["allreduce_fit_s"] > 0


def test_ddp_prediction_reads_the_sweep_and_charges_the_copies(result):
    p = dpv.predict(result, copy_bytes_per_s=1e11)
    sweep = result["measurements"]["ranks"][0]["allreduce_sweep"]
    for name, c in p["configs"].items():
        # each bucket's all-reduce is the sweep read at its size (between the slower ranks' points)
        assert len(c["bucket_sweep_s"]) == c["n_buckets"] and min(c["bucket_sweep_s"]) > 0
        assert c["ddp_step_s"] == pytest.approx(p["compute_step_s"] + c["ddp_exposed_s"])
    one = p["configs"]["one_bucket"]
    g = sum(result["measurements"]["ranks"][0]["timings"]["one_bucket"]["bucket_bytes"])
    assert one["ddp_exposed_s"] == pytest.approx(one["bucket_sweep_s"][0] + 4 * g / 1e11)
    # a CPU run names no GPU: no datasheet copy rate, the copies are left out
    assert dpv.copy_rate_of(result) is None
    free = dpv.predict(result)["configs"]["one_bucket"]
    assert free["ddp_exposed_s"] == pytest.approx(free["bucket_sweep_s"][0])
    assert sweep and dpv.overlap_stretch(result["measurements"]["timeline"])
