"""Tests of the launch-overhead lab runner: a CPU run, its kernels, its grader, its errors."""

import json

import pytest
import torch

from helpers.bench.sizes import SIZE_ENV
from helpers.bench import has_cuda
from helpers.labs import launch_overhead as lab
from helpers.labs.analysis import launch_overhead as view
from helpers.labs.core import load_result, save_result
from helpers.kernels import launch_overhead as kern
from helpers.models import launch


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory, monkeypatch_module):
    monkeypatch_module.setenv(SIZE_ENV, "small")
    out = tmp_path_factory.mktemp("launch")
    lab.main(["--out", str(out), "--device", "cpu", "--size", "small"])
    return load_result(out / f"{lab.LAB}.json")


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_cpu_run_writes_a_valid_result(cpu_result):
    r = cpu_result
    assert r["lab"] == "launch_overhead" and r["tier"] == "cpu" and r["size_tier"] == "small"
    m = r["measurements"]
    assert [e["n"] for e in m["chain"]] == r["settings"]["n_values"]
    for e in m["chain"]:
        assert "graph" not in e  # no graphs on a CPU
        assert e["eager"]["median_s"] > 0 and e["eager"]["n_reps"] >= 5
    # time grows with the number of operators: the longest chain is slower than the shortest,
    # compared on the fastest repetitions (load only ever adds time)
    assert m["chain"][-1]["eager"]["min_s"] > m["chain"][0]["eager"]["min_s"]
    assert m["fits"]["eager_per_kernel_s"] > 0
    assert m["host_enqueue"]["launch_s"] > 0
    assert [e["numel"] for e in m["size_sweep"]] == r["settings"]["sweep_numels"]
    occ = m["occupancy"]
    assert occ["interpreted"] is True and all(k["compiled"] is None for k in occ["kernels"])
    json.dumps(r, allow_nan=False)  # JSON-clean


def test_fits_recover_a_synthetic_result(tmp_path, cpu_result):
    # Replace the measured medians with a known line, save, reload: the fit returns the line.
    r = json.loads(json.dumps(cpu_result))
    for e in r["measurements"]["chain"]:
        e["eager"]["median_s"] = 3e-6 + 5e-6 * e["n"]
        e["graph"] = {"median_s": 4e-6 + 1.5e-6 * e["n"]}
    f = lab.fits(load_result(save_result(r, tmp_path)))
    assert f["eager_per_kernel_s"] == pytest.approx(5e-6)
    assert f["eager_fixed_s"] == pytest.approx(3e-6)
    assert f["graph_launch_s"] == pytest.approx(4e-6)
    assert f["kernel_in_graph_s"] == pytest.approx(1.5e-6)


def test_reference_or_none_reads_a_file_when_there_is_one(tmp_path, monkeypatch, cpu_result):
    import helpers.labs.core as core

    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path / "none")
    assert lab.reference_or_none() is None
    save_result(cpu_result, tmp_path / "ref")
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path / "ref")
    got = lab.reference_or_none()
    assert got is not None and got["measurements"]["fits"] == cpu_result["measurements"]["fits"]


def test_chain_and_its_check():
    x = lab.make_input(64, "cpu")
    before = x.clone()
    lab.chain(x, 3)
    lab.check_chain(x, before, 3)
    with pytest.raises(AssertionError):
        lab.check_chain(x, before, 4)
    assert bool((before.abs() >= 0.5).all())  # never zero inputs


def test_triton_kernels_match_a_float64_reference_in_the_interpreter():
    x = lab.make_input(3000, "cpu", seed=5)
    y = torch.full_like(x, float("nan"))
    kern.scale(x, y, 1.5, block=1024)
    assert torch.allclose(y.double(), x.double() * 1.5, rtol=1e-6, atol=0)
    a = lab.make_input(6 * 300, "cpu", seed=6).reshape(6, 300)
    out = torch.full((6,), float("nan"))
    kern.rowsum(a, out)
    assert torch.allclose(out.double(), a.double().sum(1), rtol=1e-5, atol=0)


def test_grader_passes_the_model_and_fails_the_usual_mistakes():
    assert lab.grade_speedup(launch.graph_speedup).passed
    v = lab.grade_speedup(lambda n, tl, tk, tg, tkg: (n * tk) / (tg + n * tkg))
    assert v.status == "FAIL" and "ignores the launch term" in str(v)
    v = lab.grade_speedup(lambda n, tl, tk, tg, tkg: 1 / launch.graph_speedup(n, tl, tk, tg, tkg))
    assert v.status == "FAIL" and "upside down" in str(v)
    v = lab.grade_speedup(lambda *a: 1 / 0)
    assert v.status == "FAIL" and "ZeroDivisionError" in str(v)


@pytest.mark.parametrize("call", [
    lambda: lab.make_input(0, "cpu"),
    lambda: lab.grade_speedup(launch.graph_speedup, trials=0),
    lambda: kern.scale(torch.ones(4), torch.ones(5), 2.0),
    lambda: kern.rowsum(torch.ones(2, 4), torch.ones(3)),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda(), reason="needs a CUDA GPU; none is usable on this machine")
def test_gpu_run_measures_graphs_and_compiled_kernels(monkeypatch):
    monkeypatch.setenv(SIZE_ENV, "small")
    r = lab.run("cuda")
    m = r["measurements"]
    assert all("graph" in e for e in m["chain"])
    assert m["fits"]["kernel_in_graph_s"] > 0
    assert all(k["compiled"] and k["compiled"]["n_regs"] > 0 for k in m["occupancy"]["kernels"])


def _synthetic(result, launch_s=5e-6, kernel_s=1.5e-6, graph_s=4e-6, bw=4e12):
    """``result`` with its measurements replaced by the model's, graphs included."""
    r = json.loads(json.dumps(result))
    m = r["measurements"]
    for e in m["chain"]:
        e["eager"]["median_s"] = float(launch.eager_time_s(e["n"], launch_s, kernel_s, 1e-6))
        e["graph"] = {"median_s": float(launch.graph_time_s(e["n"], graph_s, kernel_s))}
        e["host_enqueue"] = {"median_s": e["n"] * launch_s}
    n = r["settings"]["sweep_n"]
    for e in m["size_sweep"]:
        k = kernel_s + e["bytes_per_kernel"] / bw
        e["eager"]["median_s"] = n * max(launch_s, k)
        e["graph"] = {"median_s": n * k}
    m["host_enqueue"]["launch_s"] = launch_s
    m["fits"] = lab.fits(r)
    return r


def test_comparison_rows_and_prose_numbers(cpu_result):
    from helpers.labs.report import Table

    ref = _synthetic(cpu_result)
    f = ref["measurements"]["fits"]
    assert f["kernel_in_graph_s"] == pytest.approx(1.5e-6) and f["graph_launch_s"] == pytest.approx(4e-6)
    rows = {r.quantity.split(",")[0]: r for r in view.comparison_rows(ref, cpu_result, 4e12)}
    eager = rows["time per kernel"]
    assert eager.model == pytest.approx(5e-6) and eager.h200 == pytest.approx(5e-6)
    assert eager.yours == pytest.approx(cpu_result["measurements"]["fits"]["eager_per_kernel_s"])
    speed = rows["graph speedup"]
    assert speed.model == pytest.approx(speed.h200, rel=0.05)
    size = rows["kernel size where device time reaches the launch"]
    # no kernel of the CPU sweep is larger than an L2: the model falls back to the tiny
    # kernel's time in a graph and the given bandwidth, (t_l - t_kg) * M
    assert size.model == pytest.approx((5e-6 - 1.5e-6) * 4e12)
    assert size.h200 is None  # the CPU sweep's largest kernel (8 MB) is below the crossing
    assert rows["kernel size where eager is within 1.1x of graph"].model is None
    slow = _synthetic(cpu_result, bw=1e12)  # crossing at 3.5 MB: inside the sweep
    want = view.predicted_crossover_bytes(slow, 1e12)
    sizes = [e["bytes_per_kernel"] for e in slow["measurements"]["size_sweep"]]
    assert sizes[-2] < want < sizes[-1]
    # the synthetic device time is linear in the bytes, so the interpolation is exact
    assert view.device_crossover_bytes(slow) == pytest.approx(want)
    assert sizes[-2] < view.crossover_bytes(slow) <= sizes[-1]
    # with two kernels larger than the L2, the line through them replaces t_kg and M
    big = json.loads(json.dumps(slow))
    n = big["settings"]["sweep_n"]
    big["measurements"]["size_sweep"] += [
        {"numel": k, "bytes_per_kernel": 8.0 * k, "eager": {"median_s": n * (3e-6 + 8.0 * k / 2e12)},
         "graph": {"median_s": n * (3e-6 + 8.0 * k / 2e12)}} for k in (1 << 24, 1 << 26)]
    assert view.large_kernel_line(big) == pytest.approx((3e-6, 2e12))
    assert view.predicted_crossover_bytes(big, 1e12) == pytest.approx((5e-6 - 3e-6) * 2e12)
    assert "prediction" in str(Table("t", list(rows.values()), yours_label="yours"))
    text = view.prose_numbers(ref, 4e12)
    assert text["model_eager_err"] == "+0%" and text["n"] == str(ref["settings"]["n_values"][-1])
    assert set(view.prose_numbers(None, 4e12).values()) == {view.MISSING}
    assert view.prose_numbers(cpu_result, 4e12)["speedup"] == "-"


def test_crossover_bytes_interpolates_between_sweep_sizes(cpu_result):
    r = json.loads(json.dumps(cpu_result))
    n = r["settings"]["sweep_n"]
    sweep = r["measurements"]["size_sweep"]
    for i, e in enumerate(sweep):  # per-op time doubles exactly at the third size
        e["eager"]["median_s"] = n * 1e-6 * (1, 1.5, 2, 8)[i]
    assert view.crossover_bytes(r) == pytest.approx(sweep[2]["bytes_per_kernel"])
    for e in sweep:
        e["eager"]["median_s"] = n * 1e-6
    assert view.crossover_bytes(r) is None


def test_format_rows():
    text = view.format_rows([{"a": 1, "b": None}, {"a": 22, "b": 3}])
    assert text.splitlines() == ["a   b", "1   -", "22  3"]
    with pytest.raises(ValueError):
        view.format_rows([])


def test_compiled_triton_is_skipped_for_cpu_tensors(monkeypatch):
    # A GPU machine asked for --device cpu: Triton compiles for CUDA and cannot read CPU
    # tensors, so the occupancy part says so instead of crashing.
    monkeypatch.setattr(kern, "INTERPRETED", False)
    got = lab._occupancy_data("cpu")
    assert got["kernels"] == [] and "CUDA" in got["skipped"]


def test_occupancy_rows_use_the_occupancy_model(cpu_result):
    from helpers import specs
    from helpers.models.occupancy import occupancy

    r = json.loads(json.dumps(cpu_result))
    k = r["measurements"]["occupancy"]["kernels"][0]
    k["compiled"] = {"n_regs": 128, "n_spills": 0, "shared_bytes": 0, "num_warps": k["num_warps"]}
    row = view.occupancy_rows(r, specs.SM90)[0]
    want = occupancy(threads_per_block=32 * k["num_warps"], registers_per_thread=128,
                     smem_bytes=0, limits=specs.SM90)
    assert row["occupancy"] == f"{want.fraction:.0%}" and row["limited by"] == "+".join(want.binding)
    assert "registers" in row["limited by"]  # 128 registers per thread bind before warp slots
    assert view.occupancy_rows(r, specs.SM90)[1]["occupancy"] is None  # not compiled: no number
    assert "occupancy" not in view.occupancy_rows(r)[0]


def test_runner_times_the_host_beside_every_chain(cpu_result):
    for e in cpu_result["measurements"]["chain"]:
        assert e["host_enqueue"]["median_s"] > 0 and e["host_enqueue"]["n_reps"] >= 5


def test_predictions_use_the_chain_s_own_host_timing_and_the_run_s_bandwidth(cpu_result):
    ref = _synthetic(cpu_result)
    n = ref["measurements"]["chain"][-1]["n"]
    ref["measurements"]["chain"][-1]["host_enqueue"]["median_s"] = n * 7e-6  # a faster host
    assert view.host_launch_s(ref, n) == pytest.approx(7e-6)
    assert view.model_eager_chain_s(ref, n) == pytest.approx(n * 7e-6)
    del ref["measurements"]["chain"][-1]["host_enqueue"]  # an older result: the single timing
    assert view.host_launch_s(ref, n) == pytest.approx(5e-6)
    assert view.run_bandwidth_bytes_per_s(ref) is None  # the CPU tier times no Triton kernel
    ref["measurements"]["occupancy"]["kernels"][0]["bytes_per_s"] = 2e12
    assert view.predicted_crossover_bytes(ref) == pytest.approx((5e-6 - 1.5e-6) * 2e12)


def test_only_kernels_larger_than_l2_are_held_to_the_hbm_model(cpu_result):
    ref = _synthetic(cpu_result)
    ref["measurements"]["occupancy"]["kernels"][0]["bytes_per_s"] = 4e12
    sweep = ref["measurements"]["size_sweep"]
    l2 = sweep[-2]["bytes_per_kernel"] / 2  # the largest kernel's tensor is the only one above
    points = view.big_kernel_points(ref, l2)
    assert [p["tensor_bytes"] for p in points] == [sweep[-1]["bytes_per_kernel"] / 2]
    assert points[0]["model_s"] == pytest.approx(1.5e-6 + sweep[-1]["bytes_per_kernel"] / 4e12)


def test_every_row_with_a_model_names_a_declared_prediction(cpu_result):
    ref = _synthetic(cpu_result)
    ref["measurements"]["occupancy"]["kernels"][0]["bytes_per_s"] = 4e12
    rows = [r for r in view.comparison_rows(ref) if r.model is not None]
    assert rows and all(r.claim in lab.LAB.claims and r.claim.kind == "prediction" for r in rows)
    # on a run that follows the model exactly, every prediction holds
    assert all(r.claim.holds(r.model, r.h200) for r in rows if r.h200 is not None
               and r.claim.key != "launch_crossover")
