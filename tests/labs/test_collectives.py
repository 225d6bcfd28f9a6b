"""The collectives lab: its CPU run (gloo, 2 and 4 processes), its checks, analysis and grader."""

from __future__ import annotations

import json
import math

import pytest
import torch

from helpers import specs
from helpers.distributed import free_port, loopback_store
from helpers.labs import collectives as lab
from helpers.labs.analysis import collectives as view
from helpers.labs import core
from helpers.models import collectives as model


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    """A CPU run written and read back through the command line (BOOK_SIZE=small)."""
    out = tmp_path_factory.mktemp("collectives")
    path = core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu", "--size", "small"])
    return core.load_result(path)


@pytest.fixture
def one_rank_group():
    """A gloo group of one process (this one), for checking a single rank's code."""
    import torch.distributed as dist

    store = loopback_store(0, 1, free_port())  # listens on 127.0.0.1 only, as the launcher's
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    yield dist
    dist.destroy_process_group()


def test_cpu_run_writes_a_complete_result(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "collectives" and cpu_result["tier"] == "cpu"
    runs = m["runs"]
    assert [(r["backend"], r["ranks"]) for r in runs] == [("gloo", 2), ("gloo", 4)]
    warm, reps = lab.repeats("gloo")
    for r in runs:
        assert set(r["collectives"]) == set(lab.MEASURED) == set(r["fit"])
        for name, points in r["collectives"].items():
            assert [q["message_bytes"] for q in points] == lab.gloo_sizes_bytes()
            for q in points:
                assert q["checked"] and len(q["samples_s"]) == reps == q["bench"]["n_reps"]
                assert len(q["rank_medians_s"]) == r["ranks"] and min(q["rank_medians_s"]) > 0
                assert q["algbw_bytes_per_s"] == pytest.approx(q["message_bytes"] / q["median_s"])
                assert q["busbw_bytes_per_s"] == pytest.approx(
                    q["algbw_bytes_per_s"] * model.busbw_factor(name, r["ranks"]))
            f = r["fit"][name]
            assert f["alpha_s"] >= 0 and f["beta_s_per_byte"] > 0 and len(f["residuals"]) == len(points)


def test_cpu_run_times_batches_beside_single_calls(cpu_result):
    """Issue 17: every point has a batched series (k calls per interval, the same k on every
    rank or the group would hang), both series get a one-regime and a per-regime fit, and each
    gloo group records its one-rank dispatch floor."""
    warm, reps = lab.repeats("gloo")
    target_s, k_max = lab.BATCH
    for r in cpu_result["measurements"]["runs"]:
        assert "k back-to-back blocking calls" in r["batched_timed_by"]
        for name, points in r["collectives"].items():
            for q in points:
                assert 1 <= q["batch_calls"] <= k_max
                assert q["batched_bench"]["number"] == q["batch_calls"]
                assert len(q["batched_samples_s"]) == reps and q["batched_median_s"] > 0
                assert len(q["rank_batched_medians_s"]) == r["ranks"]
                assert q["dispatch_skew_s"] == pytest.approx(q["median_s"] - q["batched_median_s"])
                assert q["enqueue_s"] is None and "graph_s" not in q  # NCCL only
                # k is the most any rank's single-call time asks for: at least rank 0's
                assert q["batch_calls"] >= lab.batch_calls(q["median_s"], q["message_bytes"],
                                                           target_s, k_max)
            for key in ("fit_batched", "regimes", "regimes_batched"):
                assert name in r[key]
            reg = r["regimes_batched"][name]
            assert reg["split_bytes"] in lab.gloo_sizes_bytes()[2:-1]
            assert len(reg["small"]["residuals"]) + len(reg["large"]["residuals"]) == len(points)
        d = r["dispatch"]
        assert d["message_bytes"] == lab.gloo_sizes_bytes()[0] and d["median_s"] > 0
        assert len(d["rank_medians_s"]) == r["ranks"] and d["bench"]["n_reps"] == reps
    rows = view.batching(cpu_result, "gloo", 2)
    assert [x["message_bytes"] for x in rows] == lab.gloo_sizes_bytes()
    nums = view.batching_numbers(cpu_result)
    assert nums["gloo2_below"] in ("below", "above", "equal to")
    assert nums["gloo4_alpha_lower"] in ("lower", "higher", "the same")
    assert core.MISSING not in (nums["gloo2_dispatch_us"], nums["gloo4_alpha_batched_us"])
    assert "batched" in view.describe(cpu_result)


def test_cpu_analysis(cpu_result):
    rs = view.rows(cpu_result, "gloo", 2)
    assert [r["message_bytes"] for r in rs] == lab.gloo_sizes_bytes()
    assert all(r["model_s"] > 0 and math.isfinite(r["error"]) for r in rs)
    assert view.rows(cpu_result, "nccl") == [] and view.largest(cpu_result, "nccl") is None
    assert len(view.fits(cpu_result)) == 2 * len(lab.MEASURED)
    assert "gloo x4 reduce_scatter" in view.describe(cpu_result)
    table = view.comparison(None, cpu_result)
    assert [t["collective"] for t in table] == list(lab.MEASURED)
    assert all(t["h200_busbw"] is None and t["yours_busbw"] > 0 for t in table)
    assert table[0]["model_busbw"] == specs.H200_SXM.nvlink.per_direction_bytes_per_s


def test_reference_is_read_when_the_file_exists(cpu_result, tmp_path, monkeypatch):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    (tmp_path / "collectives.json").write_text(json.dumps(cpu_result))
    ref = lab.reference_or_none()
    assert ref["measurements"]["runs"] == cpu_result["measurements"]["runs"]


def synthetic_nccl_result(bw=360e9, alpha=12e-6):
    """A GPU-shaped result whose times come from the model with known alpha and bandwidth."""
    sizes = [1 << k for k in range(3, 31)]
    colls, fit = {}, {}
    for name in lab.MEASURED:
        ts = [float(model.collective_time_s(name, s, 2, alpha, 1 / bw)) for s in sizes]
        colls[name] = [{"message_bytes": s, "median_s": t, "bench": {"spread": 0.01},
                        "algbw_bytes_per_s": s / t,
                        "busbw_bytes_per_s": s / t * model.busbw_factor(name, 2)}
                       for s, t in zip(sizes, ts)]
        f = model.fit_alpha_beta(sizes, ts, 2, name)
        fit[name] = {"alpha_s": f.alpha_s, "beta_s_per_byte": f.beta_s_per_byte,
                     "residuals": list(f.residuals)}
    return {"measurements": {"runs": [{"backend": "nccl", "ranks": 2, "collectives": colls,
                                       "fit": fit}]}}


def test_analysis_of_an_nccl_shaped_result():
    res = synthetic_nccl_result()
    big = view.largest(res, "nccl")
    # at 1 GiB the two latencies (24 us) are under 1 % of the 3 ms: busbw is nearly the link's
    assert 0.99 * 360e9 < big["busbw_bytes_per_s"] < 360e9
    assert all(abs(r["error"]) < 1e-9 for r in view.rows(res, "nccl"))
    f = [x for x in view.fits(res) if x["collective"] == "all_gather"][0]
    assert f["alpha_s"] == pytest.approx(12e-6) and f["bandwidth_bytes_per_s"] == pytest.approx(360e9)
    table = view.comparison(res, res)
    assert table[0]["h200_busbw"] == table[0]["yours_busbw"] == big["busbw_bytes_per_s"]


@pytest.mark.parametrize("name", lab.MEASURED)
def test_a_collective_that_leaves_out_a_rank_fails_its_check(one_rank_group, name):
    # The group really has one rank; pretending it has two means the real collective leaves
    # out rank 1's contribution, which the exact check must catch.
    if name == "all_reduce":
        _, checked = lab._case(name, 4096, 0, 2, "cpu", 1)
        with pytest.raises(AssertionError, match="all_reduce of 4096 bytes on rank 0 of 2"):
            checked()
    else:
        _, checked = lab._case(name, 4096, 0, 1, "cpu", 1)
        checked()  # right on the real one-rank group


def test_a_half_written_output_is_caught(one_rank_group, monkeypatch):
    dist, gather, scatter = lab._ops()

    def half_gather(out, inp):
        out[: out.numel() // 2] = inp[: out.numel() // 2]  # the tail keeps its NaN poison

    monkeypatch.setattr(lab, "_ops", lambda: (dist, half_gather, scatter))
    _, checked = lab._case("all_gather", 4096, 0, 1, "cpu", 1)
    with pytest.raises(AssertionError, match="512 of 1024 elements differ"):
        checked()


def test_inputs_are_random_integers_never_zero():
    b = lab._base(10_000, 3, "cpu")
    assert b.dtype == torch.float32 and b.min() >= 1 and b.max() < 64
    assert torch.equal(b, lab._base(10_000, 3, "cpu")) and not torch.equal(b, lab._base(10_000, 4, "cpu"))


def test_sizes_repeats_and_call_budget():
    assert lab.gloo_sizes_bytes()[0] == 4096 and lab.gloo_sizes_bytes()[-1] == 4 << 20
    for backend in ("gloo", "nccl"):
        warm, reps = lab.repeats(backend)
        for p in (2, 4, 8):
            assert warm + reps + 3 <= lab._max_calls(p)
    # the all-reduce timing buffer stays finite for the whole call budget
    p = 4
    x = lab._base(64, 0, "cpu") * lab._TINY
    for _ in range(lab._max_calls(p)):
        x = x * p
    assert torch.isfinite(x).all()


def test_measure_rank_refuses_a_call_budget_that_could_overflow(one_rank_group):
    assert lab._max_calls(1) > 10**6
    with pytest.raises(ValueError, match="not a multiple"):
        lab.measure_rank(0, 1, [4098], collectives=("all_gather",), warmup=1, reps=2)


def test_grader_passes_the_model_and_catches_a_factor_without_n_minus_one_over_n():
    assert lab.grade_busbw_factor(model.busbw_factor).passed
    wrong = lab.grade_busbw_factor(lambda c, p: 2.0 if c == "all_reduce" else 1.0)
    assert wrong.status == "FAIL"
    assert "all_reduce on 1 ranks: got 2, expected 0" in str(wrong)
    raising = lab.grade_busbw_factor(lambda c, p: 1 / 0)
    assert raising.status == "FAIL" and "ZeroDivisionError" in str(raising)


def test_describe_and_tables_survive_a_fit_with_no_bandwidth_term():
    """CI's CPU, oversubscribed, once timed 4 MiB no slower than 4 KiB: the fit's beta is 0,
    and the description says the bandwidth was not resolved rather than dividing by zero."""
    res = synthetic_nccl_result()
    for f in res["measurements"]["runs"][0]["fit"].values():
        f["beta_s_per_byte"] = 0.0
    text = view.describe(res)
    assert text.count("not resolved") == len(lab.MEASURED)
    assert all(row["bandwidth_bytes_per_s"] == float("inf") for row in view.fits(res))


# --- batched timing, the one-rank NCCL floor, the host-bound region (issue 17) -------------

def test_batch_calls_fill_the_target_within_the_bounds():
    assert lab.batch_calls(40e-6, 8, 1e-3, 64) == 25  # 25 calls of 40 us make 1 ms
    assert lab.batch_calls(1e-6, 8, 1e-3, 64) == 64  # capped
    assert lab.batch_calls(5e-3, 8, 1e-3, 64) == 1  # one call already lasts longer
    # one timing buffer per call of a batch: no more than fit in the memory bound
    assert lab.batch_calls(40e-6, 64 << 20, 1e-3, 64, max_buffer_bytes=256 << 20) == 4
    assert lab.batch_calls(40e-6, 1 << 30, 1e-3, 64, max_buffer_bytes=256 << 20) == 1
    for bad in (0.0, float("nan"), float("inf"), -1.0):
        assert lab.batch_calls(bad, 8, 1e-3, 64) == 1


def test_batched_all_reduce_cycles_its_timing_buffers(one_rank_group, monkeypatch):
    """A batch of k in-place all-reduces grows each of its k buffers once, so the call budget
    that keeps the values finite counts batches, not calls."""
    seen = []
    monkeypatch.setattr(one_rank_group, "all_reduce", lambda t, group=None: seen.append(id(t)))
    fn, _ = lab._case("all_reduce", 4096, 0, 1, "cpu", 1, copies=3)
    for _ in range(7):
        fn()
    assert len(set(seen)) == 3 and seen[:3] == seen[3:6] and seen[6] == seen[0]


def test_measure_rank_on_one_rank_has_both_series_and_a_dispatch_floor(one_rank_group):
    out = lab.measure_rank(0, 1, [4096, 16384], collectives=("all_gather",), warmup=1, reps=3,
                           batch=(2e-4, 4))
    (a, b) = out["collectives"]["all_gather"]
    assert 1 <= a["batch_calls"] <= 4 and len(a["batched_samples_s"]) == 3
    assert out["dispatch"]["message_bytes"] == 4096 and out["dispatch"]["median_s"] > 0


def _fake_group(backend, ranks, sizes, *, timeout_s):
    if backend == "nccl":
        raise RuntimeError("NCCL error: unhandled system error")
    return {"backend": backend, "ranks": ranks, "collectives": {}, "fit": {}}


def _gpu_tier(monkeypatch, n_gpu, group):
    import torch

    monkeypatch.setattr(lab, "nccl_ranks", lambda: n_gpu)
    monkeypatch.setattr(torch.cuda.nccl, "version", lambda: (2, 28, 9))
    monkeypatch.setattr(lab, "new_result", lambda labr, device, **kw: core.new_result(labr, "cpu", **kw))
    monkeypatch.setattr(lab, "measure_group", group)


def test_one_gpu_runs_a_one_rank_nccl_group_and_its_failure_keeps_the_gloo_runs(monkeypatch, capsys):
    _gpu_tier(monkeypatch, 1, _fake_group)
    res = lab.run("cuda")
    assert [(r["backend"], r["ranks"]) for r in res["measurements"]["runs"]] == [("gloo", 2), ("gloo", 4)]
    assert "unhandled system error" in res["settings"]["nccl_error"]
    assert "NCCL group of 1 rank" in res["settings"]["note"]
    assert "NCCL group of 1 rank failed" in capsys.readouterr().out
    calls = []

    def ok(backend, ranks, sizes, *, timeout_s):
        calls.append((backend, ranks))
        return {"backend": backend, "ranks": ranks}
    monkeypatch.setattr(lab, "measure_group", ok)
    res = lab.run("cuda")
    assert calls == [("nccl", 1), ("gloo", 2), ("gloo", 4)] and "nccl_error" not in res["settings"]


def test_a_two_gpu_nccl_failure_is_not_swallowed(monkeypatch):
    _gpu_tier(monkeypatch, 2, _fake_group)
    with pytest.raises(RuntimeError, match="unhandled system error"):
        lab.run("cuda")


def test_shipped_two_gpu_reference_is_host_bound_up_to_4_mib():
    ref = lab.reference_or_none()
    h = view.host_bound(ref)
    assert h["end_bytes"] == 4 << 20 and h["smallest_bytes"] == 8 and h["n_sizes"] == 20
    assert h["n_within"] < h["n_sizes"]  # slow repeats above the band do not end the region
    # the datasheet link alone needs more time at 4 MiB than the time grew from 8 B: no wire
    assert h["end_wire_s"] == pytest.approx(2 * (1 / 2) * (4 << 20) / specs.H200_SXM.nvlink.per_direction_bytes_per_s)
    assert h["growth_s"] < h["end_wire_s"]
    nums = view.host_bound_numbers(ref)
    assert nums["nccl_flat_end_mib"] == "4" and nums["nccl_growth_word"] in ("less", "more")
    assert core.MISSING not in nums.values()
    # it predates batched timing: the page must say so rather than show nothing as a number
    assert view.batching(ref, "nccl") == []
    assert set(view.host_bound_numbers(None).values()) == {core.MISSING}


def test_one_gpu_reference_has_a_one_rank_nccl_floor_apart_from_the_fits():
    one = lab.one_gpu_reference()
    assert one["tier"] == "gpu" and "H200" in one["provenance"]["device_name"]
    nccl = [r for r in one["measurements"]["runs"] if r["backend"] == "nccl"]
    assert len(nccl) == 1 and nccl[0]["ranks"] == 1 and nccl[0]["fit"] == {}
    # a one-rank run is never taken for the NCCL group of the analysis and the tables
    assert view._run(one, "nccl") is None and view.rows(one, "nccl") == []
    assert view.comparison(None, one)[0]["yours_busbw"] == view.largest(one, "gloo", 2)["busbw_bytes_per_s"]
    rows = view.batching(one, "nccl", 1, "all_gather")
    assert len(rows) == len(one["settings"]["nccl_sizes_bytes"])
    assert all(x["enqueue_s"] > 0 and x["graph_s"] > 0 for x in rows)
    f = view.floor_numbers(one)
    assert core.MISSING not in f.values()
    assert "no peer" in view.describe(one)


def test_one_gpu_reference_absent(tmp_path, capsys):
    assert lab.one_gpu_reference(tmp_path / "none.json") is None
    assert "not measured yet" in capsys.readouterr().out
    assert set(view.floor_numbers(None).values()) == {core.MISSING}


# --- the claims (truth loop) ----------------------------------------------------------------

def test_every_row_names_a_claim_and_the_shipped_reference_holds_them():
    ref = lab.reference_or_none()
    rows = view.comparison_rows(ref)
    assert [r.claim.key for r in rows] == ["busbw_nvlink", "busbw_extrapolated"] * 3
    assert {c.key for c in lab.LAB.claims} == {r.claim.key for r in rows}
    for r in rows:
        assert r.claim.holds(r.model, r.h200), (r.quantity, r.model, r.h200)
    # the prediction is computed from the run, not typed: move the 512 MiB time and it moves
    moved = json.loads(json.dumps(ref))
    moved["measurements"]["runs"][0]["collectives"]["all_reduce"][-2]["median_s"] *= 1.2
    assert view.extrapolated_busbw(moved) < 0.9 * view.extrapolated_busbw(ref)
    nums = view.claim_numbers(ref)
    assert nums["claim_pred_within"] == "all within it" and nums["claim_pred_tol_pct"] == "10"
    assert nums["claim_yours_pred_err_pct"] == core.MISSING


def test_claim_rows_of_a_synthetic_line_predict_exactly():
    res = synthetic_nccl_result()  # an exact alpha-beta line: the two-point prediction is exact
    for r in view.comparison(res, res):
        assert r["h200_predicted_busbw"] == pytest.approx(r["h200_busbw"], rel=1e-9)
        assert r["yours_predicted_busbw"] == pytest.approx(r["yours_busbw"], rel=1e-9)
    assert view.claim_numbers(res, res)["claim_yours_pred_err_pct"] in ("+0", "-0")
    assert view.extrapolated_busbw(None) is None
