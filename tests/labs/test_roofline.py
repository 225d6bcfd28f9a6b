"""The roofline lab: its Triton kernels (interpreter), its CPU run, its analysis and its grader."""

import json
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import specs
from helpers.labs import core
from helpers.labs import roofline as lab
from helpers.labs.analysis import roofline as view
from helpers.kernels import roofline as kern
from helpers.models import roofline

H200 = specs.H200_SXM


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    """A CPU run written and read back through the command line (BOOK_SIZE=small)."""
    out = tmp_path_factory.mktemp("roofline")
    path = core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu", "--size", "small"])
    return core.load_result(path)


def synthetic_gpu_result(copy_fraction=0.9, clock_fraction=0.88, overlap_loss=0.3):
    """A result shaped like a GPU run, with times made from the model and known distortions:
    the copy reaches ``copy_fraction`` of the datasheet bandwidth, arithmetic runs at
    ``clock_fraction`` of the peak, and at the ridge the two overlap imperfectly."""
    bw = copy_fraction * H200.hbm_bytes_per_s
    peak = clock_fraction * H200.peak_flop_per_s("fp32")

    def bench(t):
        return {"median_s": t, "spread": 0.01}

    n = 1 << 28
    points = []
    for k in [2**i for i in range(12)]:
        flop, q = 2.0 * k * n, 8.0 * n
        tc, tm = flop / peak, q / bw
        t = max(tc, tm) + overlap_loss * min(tc, tm)
        points.append({"k": k, "n": n, "flop": flop, "bytes": q, "bench": bench(t)})
    sizes = [{"buffer_bytes": float(b), "moved_bytes": 2.0 * b, "torch": bench(2.0 * b / bw),
              "triton": bench(2.0 * b / (0.97 * bw))} for b in (1 << 27, 1 << 31)]
    mm = {prec: {"sizes": [{"n": 8192, "flop": 2.0 * 8192**3, "min_bytes": 3 * 8192**2 * 2.0,
                             "bench": bench(2.0 * 8192**3 / (0.7 * H200.peak_flop_per_s(prec)))}]}
          for prec in ("bf16", "fp32", "tf32")}
    return {"lab": "roofline", "schema": core.SCHEMA, "tier": "gpu", "provenance": {},
            "measurements": {"copy": {"sizes": sizes}, "matmul": mm,
                             "sweep": {"points": points}}}


# --- kernels (Triton interpreter on a CPU) ---------------------------------------------------

@pytest.mark.parametrize("n", [1, 1023, 1025, 5000])
def test_triton_copy_covers_every_element_including_the_tail(n):
    src = torch.rand(n) + 0.5
    dst = torch.full_like(src, float("nan"))
    kern.triton_copy(src, dst, block=1024, num_warps=4)
    assert torch.equal(dst, src)


@pytest.mark.parametrize("k", [1, 3, 8, 48])
def test_fma_sweep_matches_a_float64_loop(k):
    x = torch.rand(2000, generator=torch.Generator().manual_seed(k)) + 0.5
    y = kern.fma_sweep(x, k)
    want = x.double()
    for _ in range(k):  # the oracle: the recurrence itself, in float64
        want = kern.FMA_A * want + kern.FMA_B
    assert torch.allclose(y.double(), want, rtol=0, atol=4 * k * 2.0**-24 + 1e-7)


@given(st.integers(1, 4096), st.floats(0.5, 1.5))
def test_fma_closed_form_is_the_recurrence(k, x):
    want = x
    for _ in range(k):
        want = kern.FMA_A * want + kern.FMA_B
    assert kern.fma_reference(x, k) == pytest.approx(want, rel=1e-12)
    assert 0.5 <= kern.fma_reference(x, k) <= 1.5  # values stay near 1 for every k


def test_kernel_arguments_are_checked():
    x = torch.rand(16)
    with pytest.raises(ValueError, match="k must be"):
        kern.fma_sweep(x, 0)
    with pytest.raises(ValueError, match="fp32"):
        kern.fma_sweep(x.double(), 2)
    with pytest.raises(ValueError, match="same shape"):
        kern.triton_copy(x, torch.empty(8))
    with pytest.raises(ValueError, match="power of two"):
        kern.triton_copy(x, torch.empty(16), block=1000)


# --- the CPU run ---------------------------------------------------------------------------

def test_cpu_run_writes_a_complete_result(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "roofline" and cpu_result["tier"] == "cpu"
    assert cpu_result["size_tier"] == "small"
    assert [e["buffer_bytes"] for e in m["copy"]["sizes"]] == [float(b) for b in lab.copy_sizes_bytes()]
    assert all(e["torch"]["median_s"] > 0 and "triton" not in e for e in m["copy"]["sizes"])
    assert m["copy"]["triton_interpreter_checked_elements"] % 1024 != 0
    assert list(m["matmul"]) == ["fp32"]
    assert [e["n"] for e in m["matmul"]["fp32"]["sizes"]] == lab.matmul_sizes()
    assert all(e["max_rel_error"] <= 1e-4 for e in m["matmul"]["fp32"]["sizes"])
    sweep = m["sweep"]
    assert not sweep["timed"] and [p["k"] for p in sweep["points"]] == lab.sweep_ks()
    assert all("bench" not in p and p["max_abs_error"] < 1e-4 for p in sweep["points"])
    assert m["grading"] == {}


def test_cpu_analysis(cpu_result):
    rows = view.copy_rows(cpu_result)
    assert all(r["triton_bytes_per_s"] is None and r["torch_bytes_per_s"] > 0 for r in rows)
    assert view.copy_target(cpu_result) is None
    peak, bw = view.empirical_roof(cpu_result)
    assert peak == max(r["flop_per_s"] for r in view.matmul_rows(cpu_result))
    assert bw == max(r["torch_bytes_per_s"] for r in rows)
    sweep = view.sweep_rows(cpu_result)
    assert all(r["measured_s"] is None and r["error"] is None for r in sweep)
    with pytest.raises(ValueError, match="no timed sweep"):
        view.sweep_check(cpu_result)
    panel = view.roofline_panel(cpu_result, "mine")
    assert len(panel["points"]) == len(lab.matmul_sizes())


def test_reference_is_read_when_the_file_exists(cpu_result, tmp_path, monkeypatch):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    (tmp_path / "roofline.json").write_text(json.dumps(cpu_result))
    ref = lab.reference_or_none()
    assert ref["measurements"]["sweep"]["points"] == cpu_result["measurements"]["sweep"]["points"]
    table = view.comparison_rows(ref, cpu_result)
    assert [r.quantity for r in table[:2]] == ["copy, torch", "copy, Triton"]
    assert table[0].h200 == table[0].yours  # the same file on both sides


# --- analysis of a GPU-shaped result ---------------------------------------------------------

def test_sweep_prediction_is_the_roofline_bound():
    res = synthetic_gpu_result()
    for r, p in zip(view.sweep_rows(res), res["measurements"]["sweep"]["points"]):
        assert r["intensity"] == p["k"] / 4  # 2k FLOP per 8 bytes
        assert r["predicted_s"] == roofline.kernel_time_lower_bound_s(
            p["flop"], p["bytes"], H200.peak_flop_per_s("fp32"), H200.hbm_bytes_per_s)
        assert r["error"] < 0  # every synthetic time is above the bound


def test_sweep_check_finds_the_distortions_it_was_given():
    # perfect overlap: far from the ridge the errors are the bandwidth and clock shortfalls
    c = view.sweep_check(synthetic_gpu_result(copy_fraction=0.9, clock_fraction=0.88,
                                             overlap_loss=0.0))
    assert c["memory_far_error"] == pytest.approx(0.9 - 1)
    assert c["compute_far_error"] == pytest.approx(0.88 - 1)
    assert c["memory_far_error_measured_bw"] == pytest.approx(0.0, abs=1e-12)
    assert c["peak_fraction"] == pytest.approx(0.88)
    assert c["n_far_within"] == c["n_far"] > 0
    # imperfect overlap hurts most at the ridge, where compute and memory times are equal
    c = view.sweep_check(synthetic_gpu_result(overlap_loss=0.3))
    ridge = H200.ridge_intensity_flop_per_byte("fp32")
    assert c["ridge_k"] == min((2**i for i in range(12)), key=lambda k: abs(math.log(k / 4 / ridge)))
    assert c["ridge_error"] < c["compute_far_error"] and c["ridge_error"] < c["memory_far_error"]
    assert c["ridge_between"] and c["ridge_bound_s"] < c["ridge_measured_s"] < c["ridge_no_overlap_s"]
    bad = view.sweep_check(synthetic_gpu_result(copy_fraction=0.6))
    assert bad["n_far_within"] < bad["n_far"]


def test_copy_target_and_table_on_a_gpu_result():
    res = synthetic_gpu_result()
    t = view.copy_target(res)
    assert t["worst_ratio"] == pytest.approx(0.97) and t["met"]
    assert not view.copy_target(res, target=0.99)["met"]
    rows = view.comparison_rows(res, None)
    assert rows[0].h200 == pytest.approx(0.9 * H200.hbm_bytes_per_s)
    assert rows[0].error() == "+11%"
    assert len(rows) == 2 + 3 + 12  # no clock recorded: bounds only, no run's own roof
    panel = view.roofline_panel(res, "H200")
    assert len(panel["points"]) == 12 and len(panel["roofs"]) == 2
    assert view.roofline_panel(None, "H200")["note"].startswith("H200 reference not measured")


def test_far_from_ridge_and_fmt():
    rows = [{"ridge_distance": d} for d in (0.1, 0.3, 1.0, 3.0, 10.0)]
    far, near = view.far_from_ridge(rows, 4.0)
    assert [r["ridge_distance"] for r in far] == [0.1, 10.0] and len(near) == 3
    with pytest.raises(ValueError, match="factor"):
        view.far_from_ridge(rows, 0.5)
    assert view.fmt(None) == view.MISSING and view.fmt(float("nan")) == view.MISSING
    assert view.fmt(0.953, ".0%") == "95%"


# --- grading --------------------------------------------------------------------------------

def tail_less_copy(src, dst):
    n = src.numel()
    kern.copy_kernel[(n // 1024,)](src, dst, n, BLOCK=1024)  # no program for the last block


def test_grader_passes_the_book_kernel_and_catches_a_missing_tail():
    assert lab.grade_copy(kern.triton_copy).passed
    v = lab.grade_copy(tail_less_copy)
    assert v.status == "FAIL" and "left unwritten (still NaN)" in str(v)
    wrong = lab.grade_copy(lambda src, dst: dst.copy_(src * 1.001))
    assert wrong.status == "FAIL" and "wrong values" in str(wrong)
    with pytest.raises(ValueError, match="CUDA"):
        lab.grade_copy_speed(kern.triton_copy, device="cpu")


def test_clock_evidence_scales_the_peak_with_the_clock():
    res = synthetic_gpu_result()
    assert view.clock_evidence(res) is None  # no clock recorded
    res["provenance"] = {"after_run": {"sm_clock_mhz": str(H200.boost_clock_hz / 2e6)}}
    ev = view.clock_evidence(res)
    derived = H200.sm_count * H200.fp32_lanes_per_sm * 2 * H200.boost_clock_hz
    assert ev["fp32_peak_at_end_clock"] == pytest.approx(derived / 2)
    assert derived == pytest.approx(H200.peak_flop_per_s("fp32"), rel=0.01)  # the datasheet's
    res["provenance"] = {"after_run": {"sm_clock_mhz": "[N/A]"}}
    assert view.clock_evidence(res) is None


# --- claims: datasheet bounds and the run's own roof (helpers.labs.analysis.roofline) --------

def test_the_run_s_own_roof_predicts_the_far_points_it_was_made_from():
    res = synthetic_gpu_result(clock_fraction=0.9, overlap_loss=0.3)
    assert view.measured_roof(res) is None and view.measured_roof_rows(res) == []  # no clock
    clock_hz = 0.9 * H200.boost_clock_hz
    res["provenance"] = {"after_run": {"sm_clock_mhz": str(clock_hz / 1e6)}}
    peak, bw = view.measured_roof(res)
    assert bw == pytest.approx(0.9 * H200.hbm_bytes_per_s)
    assert peak == pytest.approx(H200.sm_count * H200.fp32_lanes_per_sm * 2 * clock_hz)
    rows = view.measured_roof_rows(res)
    ridge = peak / bw
    assert rows and all(r["intensity"] <= ridge / 4 or r["intensity"] >= ridge * 4 for r in rows)
    # far from the ridge the overlap loss is at most 0.3 * (ridge distance)^-1 <= 7.5 %
    assert all(abs(r["error"]) <= 0.3 / 4 + 1e-9 for r in rows)
    table = view.comparison_rows(res)
    predictions = [r for r in table if r.claim.kind == "prediction"]
    assert len(predictions) == len(rows)
    assert all(r.claim is lab.LAB.claim("sweep_measured_roof") for r in predictions)
    assert {r.claim.key for r in table} == {c.key for c in lab.LAB.claims}


def test_shipped_reference_holds_every_roofline_claim():
    ref = lab.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    rows = [r for r in view.comparison_rows(ref) if r.model is not None and r.h200 is not None]
    assert all(r.claim.holds(r.model, r.h200) for r in rows)
    assert any(r.claim.kind == "prediction" for r in rows)
