"""The collectives lab: its CPU run (gloo, 2 and 4 processes), its checks, analysis and grader."""

from __future__ import annotations

import json
import math

import pytest
import torch

from helpers import specs
from helpers.distributed import free_port, loopback_store
from helpers.labs import collectives as lab
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


def test_cpu_analysis(cpu_result):
    rs = lab.rows(cpu_result, "gloo", 2)
    assert [r["message_bytes"] for r in rs] == lab.gloo_sizes_bytes()
    assert all(r["model_s"] > 0 and math.isfinite(r["error"]) for r in rs)
    assert lab.rows(cpu_result, "nccl") == [] and lab.largest(cpu_result, "nccl") is None
    assert len(lab.fits(cpu_result)) == 2 * len(lab.MEASURED)
    assert "gloo x4 reduce_scatter" in lab.describe(cpu_result)
    table = lab.comparison(None, cpu_result)
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
    big = lab.largest(res, "nccl")
    # at 1 GiB the two latencies (24 us) are under 1 % of the 3 ms: busbw is nearly the link's
    assert 0.99 * 360e9 < big["busbw_bytes_per_s"] < 360e9
    assert all(abs(r["error"]) < 1e-9 for r in lab.rows(res, "nccl"))
    f = [x for x in lab.fits(res) if x["collective"] == "all_gather"][0]
    assert f["alpha_s"] == pytest.approx(12e-6) and f["bandwidth_bytes_per_s"] == pytest.approx(360e9)
    table = lab.comparison(res, res)
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
    text = lab.describe(res)
    assert text.count("not resolved") == len(lab.MEASURED)
    assert all(row["bandwidth_bytes_per_s"] == float("inf") for row in lab.fits(res))
