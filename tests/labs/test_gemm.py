"""The GEMM lab: its Triton kernel (interpreter), its CPU run, its analysis and its grader."""

import pytest
import torch

from helpers import specs
from helpers.kernels import gemm as kern
from helpers.labs import core
from helpers.labs import gemm as lab
from helpers.labs.analysis import gemm as view
from helpers.models import gemm as gm

H200 = specs.H200_SXM
SMALL = kern.GemmConfig(16, 16, 16, 2, 1, 1)
tl = kern.tl  # Triton only through helpers.kernels, which sets the interpreter up


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    """A CPU run written and read back through the command line (BOOK_SIZE=small)."""
    out = tmp_path_factory.mktemp("gemm")
    path = core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu", "--size", "small"])
    return core.load_result(path)


def synthetic_gpu_result():
    """A result shaped like a GPU run: the sweep's times made from known rates."""
    def bench(t):
        return {"median_s": t, "spread": 0.01}
    n, flop = 8192, 2.0 * 8192**3
    configs = []
    for i, t in enumerate(lab.CONFIGS):
        c = dict(zip(["block_m", "block_n", "block_k", "group_m", "num_stages", "num_warps"], t))
        e = {"config": c, "name": kern.GemmConfig(*t).name}
        if i == 4:
            e["failed"] = "OutOfResources: shared memory"
        else:
            e["bench"] = bench(flop / (500e12 + 10e12 * i))
        configs.append(e)
    sizes = [{"n": s, "precision": "bf16", "flop": 2.0 * s**3,
              "torch": {"max_rel_error": 1e-3, "bench": bench(2.0 * s**3 / 700e12)},
              "triton": {"max_rel_error": 1e-3, "bench": bench(2.0 * s**3 / 600e12)}}
             for s in (1024, 8192)]
    return {"lab": "gemm", "schema": core.SCHEMA, "tier": "gpu", "provenance": {},
            "measurements": {"check": [], "best_config": list(lab.CONFIGS[-1]),
                             "configs": {"n": n, "flop": flop, "configs": configs,
                                         "torch": {"bench": bench(flop / 700e12)}},
                             "sizes": {"precision": "bf16", "sizes": sizes}, "fp32": {}}}


# --- kernel (Triton interpreter on a CPU) -----------------------------------------------------

@pytest.mark.parametrize("shape", [(16, 16, 16), (50, 70, 30), (1, 33, 17), (40, 1, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_kernel_matches_float64_on_odd_shapes(shape, dtype):
    m, n, k = shape
    g = torch.Generator().manual_seed(m * n * k)
    a = (torch.rand(m, k, generator=g) + 0.5).to(dtype)
    b = (torch.rand(k, n, generator=g) + 0.5).to(dtype)
    out = torch.full((m, n), float("nan"), dtype=dtype)
    kern.matmul(a, b, SMALL, out=out)
    want = a.double() @ b.double()
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    assert torch.allclose(out.double(), want, rtol=tol, atol=0), (out.double() - want).abs().max()


def test_kernel_handles_transposed_strides():
    a = torch.rand(40, 24) + 0.5
    b = torch.rand(56, 24) + 0.5
    c = kern.matmul(a, b.t(), SMALL)
    assert torch.allclose(c.double(), a.double() @ b.t().double(), rtol=1e-5)


def test_grouped_order_does_not_change_the_result():
    a, b = torch.rand(64, 32) + 0.5, torch.rand(32, 80) + 0.5
    c1 = kern.matmul(a, b, kern.GemmConfig(16, 16, 16, 1, 1, 1))
    c8 = kern.matmul(a, b, kern.GemmConfig(16, 16, 16, 8, 1, 1))
    assert torch.equal(c1, c8)


@pytest.mark.parametrize("call", [
    lambda: kern.matmul(torch.rand(4, 5), torch.rand(4, 5), SMALL),
    lambda: kern.matmul(torch.rand(4, 5), torch.rand(5, 4).double(), SMALL),
    lambda: kern.matmul(torch.rand(4, 5).double(), torch.rand(5, 4).double(), SMALL),
    lambda: kern.matmul(torch.rand(4, 5), torch.rand(5, 4), (16, 16, 16)),
    lambda: kern.matmul(torch.rand(4, 5), torch.rand(5, 4), SMALL, out=torch.empty(5, 5)),
    lambda: kern.GemmConfig(24, 16, 16),
    lambda: kern.GemmConfig(16, 16, 16, 0),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- the CPU run ------------------------------------------------------------------------------

def test_cpu_run_writes_a_checked_result(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "gemm" and cpu_result["tier"] == "cpu"
    assert {(r["m"], r["n"], r["k"]) for r in m["check"]} == set(lab.CHECK_SHAPES)
    assert all(r["max_rel_error"] <= r["tolerance"] for r in m["check"])
    assert m["configs"]["configs"] == []  # the sweep is GPU-only
    rows = view.size_rows(cpu_result)
    assert [r["n"] for r in rows] == lab.sizes()
    assert all(r["torch_flop_per_s"] > 0 and r["torch_of_peak"] is None for r in rows)
    assert view.best_config(cpu_result) is None and view.fp32_rows(cpu_result) == []


def test_cpu_result_is_read_as_a_reference(cpu_result, tmp_path, monkeypatch):
    core.save_result(cpu_result, tmp_path)
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none()["lab"] == "gemm"
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path / "missing")
    assert lab.reference_or_none() is None


# --- analysis ---------------------------------------------------------------------------------

def test_config_rows_and_best_config_of_a_gpu_shaped_result():
    r = synthetic_gpu_result()
    rows = view.config_rows(r)
    assert len(rows) == len(lab.CONFIGS) and rows[4]["failed"] and rows[4]["flop_per_s"] is None
    best = view.best_config(r)
    assert best["name"] == kern.GemmConfig(*lab.CONFIGS[-1]).name
    assert best["of_torch"] == pytest.approx((500e12 + 80e12) / 700e12)
    assert best["of_peak"] == pytest.approx((500e12 + 80e12) / H200.peak_flop_per_s("bf16"))
    assert rows[0]["smem_bytes"] == gm.smem_bytes(128, 256, 64, 2.0, 3)


def test_comparison_rows_without_a_run_of_ones_own():
    rows = view.comparison_rows(synthetic_gpu_result())
    assert all(r.yours is None for r in rows)
    assert any(r.model is not None and r.h200 is not None for r in rows)


def test_every_row_names_a_claim_and_the_prediction_follows_the_runs_cublas_rate():
    r = synthetic_gpu_result()
    rows = [row for row in view.comparison_rows(r) if row.model is not None]
    assert all(row.claim in lab.LAB.claims for row in rows)
    pred = {row.quantity: row for row in rows if row.claim.key == "triton_rate"}
    bm, bn = lab.CONFIGS[-1][:2]
    for n in (1024, 8192):
        row = pred[f"Triton bf16 {n}^3, from cuBLAS's rate"]
        tiles = gm.tile_count(n, n, bm, bn)
        # the full-wave rate is the run's torch rate (700 TFLOP/s), not the datasheet peak
        assert row.model == pytest.approx(700e12 * gm.wave_efficiency(tiles, 132)
                                          * gm.tile_quantization_efficiency(n, n, bm, bn))
        assert row.h200 == pytest.approx(600e12)
    bound = next(row for row in rows if row.claim.key == "wave_bound")
    assert bound.model == pytest.approx(view.predicted_rate_flop_per_s(8192, bm, bn))
    assert bound.model <= H200.peak_flop_per_s("bf16")


def test_size_rows_carry_the_wave_model():
    rows = view.size_rows(synthetic_gpu_result())
    bm, bn = lab.CONFIGS[-1][:2]
    for r in rows:
        tiles = gm.tile_count(r["n"], r["n"], bm, bn)
        assert r["tiles"] == tiles and r["wave_efficiency"] == gm.wave_efficiency(tiles, 132)
        assert r["triton_over_torch"] == pytest.approx(6 / 7)


# --- grader -----------------------------------------------------------------------------------

def test_grader_passes_the_book_kernel_and_fails_a_wrong_one():
    assert lab.grade_gemm(kern.gemm_kernel).passed

    @kern.triton.jit
    def no_accumulate(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                      INPUT_PRECISION: tl.constexpr):
        pid = tl.program_id(0)
        offs_n = tl.arange(0, BLOCK_N)
        tl.store(c_ptr + pid * 0 + offs_n, offs_n.to(tl.float32), mask=offs_n < N)

    v = lab.grade_gemm(no_accumulate)
    assert v.status == "FAIL" and "still NaN" in str(v)


def test_speed_grader_refuses_a_cpu():
    with pytest.raises(ValueError):
        lab.grade_gemm_speed(kern.gemm_kernel, device="cpu")
