"""The quantization lab: its CPU run and result file, the traffic model, the analysis of a
GPU-shaped result, and its grader (right and wrong per-channel quantizers)."""

import copy
import json

import pytest
import torch

from helpers.kernels import int8_gemv  # noqa: F401  (before triton: the interpreter on a CPU)
from helpers.labs import quantization as lab
from helpers.labs.quantization import fp8 as fp8lab
from helpers.labs.analysis import quantization as view
from helpers.models import quantization as qz


def gpu_shaped(result, int8_speed=1.8, fp8_speed=1.7, kv_s=(2e-3, 1.1e-3)):
    """The CPU result with int8 kernel timings added (``int8_speed`` times the dense path), the
    FP8 sweep and the decode attention timed (``fp8_speed`` times bf16; ``kv_s`` for the bf16
    and FP8 caches) and a batch-that-fits measurement."""
    r = copy.deepcopy(result)
    m = r["measurements"]
    for p in m["speed"]["points"]:
        p["int8"] = copy.deepcopy(p["dense"])
        p["int8"]["bench"]["median_s"] = p["dense"]["bench"]["median_s"] / int8_speed
    bench = lambda t: {**m["speed"]["points"][0]["dense"]["bench"], "median_s": t}
    m["fp8_gemm"]["timed"] = m["kv_decode"]["timed"] = True
    for p in m["fp8_gemm"]["points"]:
        p["bf16"]["bench"] = bench(1e-3)
        for mode in view.FP8_MODES:
            p[mode]["bench"] = bench(1e-3 / fp8_speed)
            p[mode]["bench_with_act_quant"] = bench(1.2e-3 / fp8_speed)
    for name, t in zip(("bf16", "fp8_e4m3"), kv_s):
        m["kv_decode"]["caches"][name]["chosen"]["bench"] = bench(t)
    m["kv_batch"]["caches"] = {
        name: {"bytes_per_element": e, "free_bytes": 149e9, "total_bytes": 150e9,
               "kv_bytes_per_token": 65536.0 * e, "model_sequences": int(124 * 2 / e),
               "sequences_allocated": int(124 * 2 / e) - 1}
        for name, e in (("bf16", 2.0), ("fp8_e4m3", 1.0))}
    return r


def test_cpu_run_writes_a_valid_result(result_file, cpu_result):
    data = json.loads(result_file.read_text())
    assert data["lab"] == "quantization" and data["tier"] == "cpu" and data["size_tier"] == "small"
    m = cpu_result["measurements"]
    checks = m["kernel_checks"]["cases"]
    assert {c["dtype"] for c in checks} == {"float32", "float16", "bfloat16"}
    assert all(c["rel_error"] <= lab.KERNEL_RTOL[c["dtype"]] for c in checks)
    assert {e["scheme"] for e in m["errors"]} == set(lab.SCHEMES)
    for e in m["errors"]:  # the rounding-error model: never above s/2, RMS near s/sqrt(12)
        assert e["max_over_half_step"] <= 1.001
        assert 0.8 < e["rms_error"] / e["rms_model"] < 1.2
    q = m["quality"]
    assert q["schemes"]["int8-channel"]["within_tolerance"]
    assert q["schemes"]["int8-channel"]["bpb_increase"] < q["schemes"]["int4-g128"]["bpb_increase"]
    mem = m["memory"]
    for s in mem["schemes"].values():
        assert abs(s["measured_bytes"] / s["model_bytes"] - 1) < 1e-3
    assert mem["schemes"]["int4-g32"]["measured_bytes"] < mem["schemes"]["int8-channel"]["measured_bytes"] < mem["bf16_bytes"]
    sp = m["speed"]
    assert not sp["kernel_timed"] and sp["dtype"] == "float32"
    assert [p["m"] for p in sp["points"]] == lab.speed_rows_m()
    for p in sp["points"]:
        assert "int8" not in p and p["dense"]["bench"]["median_s"] > 0


def test_per_channel_beats_per_tensor_on_every_layer(cpu_result):
    err = {(e["scheme"], e["layer"]): e["rms_error"] for e in cpu_result["measurements"]["errors"]}
    layers = {layer for scheme, layer in err if scheme == "int8-channel"}
    assert all(err[("int8-channel", l)] <= err[("int8-tensor", l)] for l in layers)


def test_reference_is_none_without_a_file_and_read_with_one(install_reference):
    assert lab.reference_or_none() is None
    install_reference()
    ref = lab.reference_or_none()
    assert ref["lab"] == "quantization"
    table = str(view.comparison_table(ref, ref))
    assert "int8-channel" in table and "dense M=1" in table and "int8 M=" not in table
    assert "no measurement yet" in str(view.comparison_table(None, None))


def test_analysis_of_a_gpu_shaped_result(cpu_result):
    r = gpu_shaped(cpu_result)
    rows = view.speed_rows(r)
    for row in rows:
        assert row["speedup"] == pytest.approx(1.8)
        # a CPU result is fp32: int8 quarters the weights' bytes (not x's, nor y's)
        assert 3.5 < row["speedup_bound"] < 4.0
    assert "int8 M=1" in str(view.comparison_table(r, None))
    assert "int8" in view.describe(r)


def test_cpu_tier_checks_fp8_and_the_kv_cache_without_timing(cpu_result):
    m = cpu_result["measurements"]
    fp = m["fp8_gemm"]
    assert not fp["timed"]
    if not hasattr(torch, "_scaled_mm"):  # the CPU tier says so in one line, and goes on
        assert fp["skipped"] and fp["points"] == []
    else:
        assert [(p["m"], p["n"], p["k"]) for p in fp["points"]] == fp8lab.fp8_shapes()
        model = qz.fp8_matmul_rel_rms_error()
        for p in fp["points"]:
            assert p["bf16"]["rel_rms_vs_exact"] < 0.01
            for mode in view.FP8_MODES:
                assert p[mode]["rel_rms_vs_fp32"] <= fp8lab.GEMM_RTOL
                assert "bench" not in p[mode]
                assert 0.7 < p[mode]["rel_rms_vs_exact"] / model < 1.3  # a few thousand outputs
    kv = m["kv_decode"]
    assert not kv["timed"] and set(kv["caches"]) == {"bf16", "fp8_e4m3"}
    for e in kv["caches"].values():
        assert e["chosen"]["rel_max_error"] <= fp8lab.KV_RTOL and "bench" not in e["chosen"]
    fp8_err = kv["caches"]["fp8_e4m3"]["chosen"]["rel_rms_vs_bf16_exact"]
    assert kv["caches"]["bf16"]["chosen"]["rel_rms_vs_bf16_exact"] < 0.01 < fp8_err < 0.1
    assert kv["caches"]["bf16"]["cache_bytes"] == 2 * kv["caches"]["fp8_e4m3"]["cache_bytes"]
    assert m["kv_batch"]["skipped"] and m["kv_batch"]["caches"] == {}
    assert view.fp8_rows(cpu_result) == view.kv_rows(cpu_result) == []
    assert "FP8 GEMM" in view.describe(cpu_result)


def test_fp8_analysis_of_a_gpu_shaped_result(cpu_result):
    if not cpu_result["measurements"]["fp8_gemm"]["points"]:
        pytest.skip("this torch has no torch._scaled_mm on the CPU")
    r = gpu_shaped(cpu_result)
    for row in view.fp8_rows(r):
        assert row["fp8_tensor_speedup"] == pytest.approx(1.7)
        assert row["fp8_row_dyn_speedup"] == pytest.approx(1.7 / 1.2)
        assert row["speedup_bound"] == pytest.approx(2.0, rel=1e-3)
    kv = {row["cache"]: row for row in view.kv_rows(r)}
    rate = r["measurements"]["speed"]["copy_bandwidth"]["bytes_per_s"]
    assert kv["bf16"]["of_bound"] == pytest.approx(kv["bf16"]["n_bytes"] / rate / 2e-3)
    numbers = view.fp8_numbers(r)
    assert numbers["best_speedup"] == "1.70" and numbers["goal_verdict"] == "meets"
    assert numbers["frac_lo"] == numbers["frac_hi"] == "85%"
    assert numbers["kv_speedup"] == "1.82" and numbers["batch_fp8"] == "247"
    assert view.fp8_numbers(gpu_shaped(cpu_result, fp8_speed=1.5))["goal_verdict"] == "misses"
    assert view.fp8_numbers(None)["kv_fp8_us"] == "(not measured yet)"
    table = str(view.comparison_table(r, None))
    for text in ("FP8 per-tensor speed-up", "FP8 row-wise error", "decode attention, fp8_e4m3",
                 "sequences that fit, bf16"):
        assert text in table
    assert "85% of bound" in table
    assert "M" in view.fp8_table(r).splitlines()[0] and len(view.fp8_table(r).splitlines()) == 3


def test_the_gpu_path_of_the_fp8_and_kv_measurements_on_the_cpu(cpu_result):
    """The timed branches a GPU takes, run on the CPU at small sizes (``timed=True``), read by
    the analysis as a GPU result is."""
    from helpers.bench.sizes import use_tier

    if not hasattr(torch, "_scaled_mm"):
        pytest.skip("this torch has no torch._scaled_mm on the CPU")
    r = copy.deepcopy(cpu_result)
    with use_tier("small"):
        r["measurements"]["fp8_gemm"] = fp8lab.measure_fp8_gemm(
            "cpu", torch.Generator().manual_seed(1), timed=True)
        r["measurements"]["kv_decode"] = fp8lab.measure_kv_decode(
            "cpu", torch.Generator().manual_seed(2), timed=True)
    rows = view.fp8_rows(r)
    assert [(x["m"], x["n"], x["k"]) for x in rows] == fp8lab.fp8_shapes()
    assert all(x["fp8_tensor_speedup"] > 0 and x["fp8_row_dyn_speedup"] > 0 for x in rows)
    assert {x["cache"] for x in view.kv_rows(r)} == {"bf16", "fp8_e4m3"}
    numbers = view.fp8_numbers(r)
    assert numbers["kv_cache_ratio"] != "(not measured yet)" and numbers["n_shapes"] == "2"
    assert "FP8 row-wise speed-up" in str(view.comparison_table(r, r))


def right(w):
    s = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.round(w / s).clamp(-127, 127).to(torch.int8), s


def per_tensor(w):
    s = w.abs().max() / 127
    return torch.round(w / s).clamp(-127, 127), s.reshape(1, 1)


def by_128(w):
    s = w.abs().amax(dim=1, keepdim=True) / 128
    return torch.round(w / s).clamp(-127, 127), s


def truncating(w):
    s = w.abs().amax(dim=1, keepdim=True) / 127
    return torch.trunc(w / s), s


def test_grader_accepts_the_right_answer():
    v = lab.grade_per_channel(right)
    assert v.passed, str(v)
    assert str(v).startswith("PASS per-channel int8: codes and one scale per row")


@pytest.mark.parametrize("fn, message", [
    (per_tensor, "one scale for the whole tensor"),
    (by_128, "dividing by 128"),
    (truncating, "wrong values"),
    (lambda w: (w, w), "scales have shape"),
    (lambda w: 1 / 0, "raised ZeroDivisionError"),
])
def test_grader_rejects_wrong_answers_with_a_reason(fn, message):
    v = lab.grade_per_channel(fn)
    assert v.status == "FAIL" and message in str(v), str(v)


def test_error_rows_against_a_synthetic_result():
    """Two matrices with known errors: the rows weight them by their sizes, and the model is
    s/sqrt(12) * sqrt(1 - 1/G) with G the weights per scale."""
    import math

    errs = [{"scheme": "int4-g32", "layer": "a", "shape": [2, 64], "rms_error": 0.3,
             "rms_model": 0.3, "max_error": 0.5, "max_model": 0.5, "max_over_half_step": 0.9,
             "weight_rms": 1.0},
            {"scheme": "int4-g32", "layer": "b", "shape": [4, 64], "rms_error": 0.6,
             "rms_model": 0.6, "max_error": 0.5, "max_model": 0.5, "max_over_half_step": 1.0,
             "weight_rms": 2.0}]
    (row,) = view.error_rows({"measurements": {"errors": errs}})
    assert row["weights"] == 384 and row["max_over_half_step"] == 1.0
    w2 = 128 * 1.0 + 256 * 4.0
    assert row["rms_error"] == pytest.approx(math.sqrt((128 * 0.09 + 256 * 0.36) / w2))
    assert row["rms_model"] == pytest.approx(row["rms_uniform"] * math.sqrt(1 - 1 / 32))
    assert view.block_size("int8-tensor", (3, 5)) == 15
    assert view.block_size("int8-channel", (3, 5)) == 5
    assert view.block_size("int4-g128", (3, 256)) == 128


def test_shipped_reference_rms_error_needs_the_exact_weight_per_block():
    """On the H200 run the absmax model holds every scheme within its tolerance, and the plain
    uniform model s/sqrt(12) (no exact weight per block) would leave it at groups of 32: the
    claim can fail."""
    ref = lab.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    claim = lab.LAB.claim("rms_error")
    rows = {r["scheme"]: r for r in view.error_rows(ref)}
    assert set(rows) == set(lab.SCHEMES)
    assert all(claim.holds(r["rms_model"], r["rms_error"]) for r in rows.values())
    g32 = rows["int4-g32"]
    assert not claim.holds(g32["rms_uniform"], g32["rms_error"])
    kinds = {r.claim.key: r.claim.kind for r in view.comparison_rows(ref)}
    fp8 = {"fp8_speedup": "bound", "fp8_error": "prediction", "kv_decode_bound": "bound",
           "kv_batch": "prediction"}
    assert kinds == {"state_bytes": "prediction", "rms_error": "prediction",
                     "max_error": "bound", "matmul_copy_bound": "bound",
                     **(fp8 if view.fp8_rows(ref) else {})}


def test_fp8_claims_are_declared_exactly_when_the_reference_measures_them():
    """The FP8 claims join the lab's record with the H200 reference that measures them: the
    truth loop then holds every shipped FP8 value to its claim (and a declared claim with no
    row, or a row whose claim is undeclared, fails it)."""
    ref = lab.reference_or_none()
    declared = {c.key for c in lab.LAB.claims}
    measured = bool(view.fp8_rows(ref) and view.kv_rows(ref) and view.kv_batch_rows(ref))
    assert set(lab.FP8_CLAIMS) <= declared if measured else not set(lab.FP8_CLAIMS) & declared
    assert {c.kind for c in lab.FP8_CLAIMS.values()} == {"bound", "prediction"}


def test_claim_numbers_of_the_shipped_reference():
    """What the page says of its claims: the predictions' largest errors within their
    tolerances, the bounds' fractions at most 1, the uniform model's error at g32 above the
    rms claim's tolerance (the correction matters)."""
    ref = lab.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    cn = view.claim_numbers(ref)
    assert cn["state_bytes"] <= lab.LAB.claim("state_bytes").tolerance
    assert cn["rms_error"] <= lab.LAB.claim("rms_error").tolerance < abs(cn["uniform_g32"])
    for key in ("max_error", "dense", "int8", "naive"):
        lo, hi = cn[key]
        assert 0 < lo <= hi <= 1 + (lab.LAB.claim("matmul_copy_bound").tolerance
                                    if key != "max_error" else 0)
