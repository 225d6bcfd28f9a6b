"""The attention lab: its CPU run and result file, its analysis helpers and its grader."""

import copy
import json

import pytest
import torch

from helpers import specs
from helpers.kernels import attention as kern  # before triton: the interpreter on a CPU
from helpers.labs import attention as lab
from helpers.labs.analysis import attention as view
from helpers.models import attention as att
from helpers.models import roofline

triton = pytest.importorskip("triton")

tl = triton.language
H200 = specs.H200_SXM


def gpu_shaped(result, fused_speed=0.8):
    """The CPU result with fused timings added (``fused_speed`` of SDPA's) and profiler names,
    so the analysis of a GPU run can be checked without a GPU."""
    r = copy.deepcopy(result)
    for p in r["measurements"]["sweep"]["points"]:
        p["fused"] = copy.deepcopy(p["sdpa"])
        p["fused"]["bench"]["median_s"] = p["sdpa"]["bench"]["median_s"] / fused_speed
    r["measurements"]["sweep"]["sdpa_kernels"] = {
        "d64_full": ["Memcpy DtoD", "void pytorch_flash::flash_fwd_kernel<...>"]}
    return r


def test_cpu_run_writes_a_valid_result(result_file, cpu_result):
    data = json.loads(result_file.read_text())
    assert data["lab"] == "attention" and data["tier"] == "cpu" and data["size_tier"] == "small"
    m = cpu_result["measurements"]
    checks = m["kernel_checks"]["cases"]
    assert {c["seq_len"] for c in checks} == {64, 97, 128}  # 97: not a multiple of a block
    assert {c["causal"] for c in checks} == {False, True}
    assert all(c["max_abs_error"] <= lab.TOLERANCE[c["dtype"]] for c in checks)
    sweep = m["sweep"]
    assert not sweep["fused_timed"]
    assert [p["seq_len"] for p in sweep["points"] if not p["causal"]] == lab.seq_lens()
    for p in sweep["points"]:
        assert p["batch"] * p["seq_len"] == lab.tokens()
        assert p["n_heads"] * p["head_dim"] == lab.hidden()
        for name in ("naive", "sdpa"):
            assert p[name]["bench"]["median_s"] > 0
            assert p[name]["max_abs_error"] <= lab.TOLERANCE["float32"]
        assert "fused" not in p
        assert p["flop"] == att.attention_flop(p["seq_len"], p["head_dim"], n_heads=p["n_heads"],
                                               batch=p["batch"], causal=p["causal"])


def test_reference_is_none_without_a_file_and_read_with_one(install_reference):
    assert lab.reference_or_none() is None
    install_reference()
    ref = lab.reference_or_none()
    assert ref["lab"] == "attention"
    table = str(view.comparison_table(ref, ref))
    assert "naive N=" in table and "sdpa N=" in table
    assert view.fused_vs_sdpa(ref) == {}  # a CPU result has no fused timings
    assert "(not measured yet)" not in view.describe(ref)


def test_analysis_of_a_gpu_shaped_result(cpu_result):
    r = gpu_shaped(cpu_result, fused_speed=0.8)
    rows = view.point_rows(r)
    for row in rows:
        assert row["fused_s"] == pytest.approx(row["sdpa_s"] / 0.8)
        assert row["fused_bound_s"] == roofline.kernel_time_lower_bound_s(
            row["flop"], row["fused_bytes"], H200.peak_flop_per_s("bf16"), H200.hbm_bytes_per_s)
        assert row["naive_bound_s"] >= row["fused_bound_s"]  # more bytes, at least as much work
    vs = view.fused_vs_sdpa(r)
    assert set(vs) == {(64, False), (64, True)}
    assert all(v["fraction"] == pytest.approx(0.8) and v["seq_len"] == max(lab.seq_lens())
               for v in vs.values())
    assert view.sdpa_kernel_name(r, 64, False) == "void pytorch_flash::flash_fwd_kernel<...>"
    assert view.sdpa_kernel_name(r, 64, True) is None and view.sdpa_kernel_name(None, 64, True) is None
    p = view.point_at(rows, lab.seq_lens()[0], 64, True)
    assert p["causal"] and view.point_at(rows, 3, 64, True) is None
    assert "fused N=" in str(view.comparison_table(r, None))
    # the fused kernel's two-level time of its point (query block, L2, one program per SM);
    # the prediction is the larger of it and the pipe model's, at least the compute time
    for row, pt in zip(rows, r["measurements"]["sweep"]["points"]):
        assert row["fused_pred_s"] == max(row["fused_pipe_s"], row["fused_two_level_s"])
        assert row["fused_pipe_s"] == view.fused_pipe_time_s(pt, view.pipes_reference())
        assert row["fused_two_level_s"] == att.flash2_attention_time_s(
            pt["seq_len"], pt["head_dim"], pt["bytes_per_element"],
            block_rows=pt["fused_config"]["block_m"], l2_capacity_bytes=H200.l2_bytes,
            concurrent_programs=H200.sm_count * lab.PROGRAMS_PER_SM,
            peak_flop_per_s=H200.peak_flop_per_s("bf16"), mem_bytes_per_s=H200.hbm_bytes_per_s,
            l2_bytes_per_s=H200.l2_bytes_per_s, n_heads=pt["n_heads"], batch=pt["batch"],
            causal=pt["causal"])
        assert roofline.compute_time_s(row["flop"], H200.peak_flop_per_s("bf16")) <= \
            row["fused_pred_s"]


def test_rows_name_the_labs_claims(cpu_result):
    r = gpu_shaped(cpu_result)
    rows = view.comparison_rows(r, r)
    kinds = {row.quantity.split()[0]: (row.claim.key, row.claim.kind) if row.claim else None
             for row in rows}
    assert kinds == {"naive": ("naive_time", "bound"), "fused": ("fused_time", "prediction"),
                     "sdpa": None}
    by_point = {(p["seq_len"], p["head_dim"], p["causal"]): p for p in view.point_rows(r)}
    for row in rows:
        n, *case = row.quantity.split("N=")[1].split()
        d = int(case[0].removeprefix("d=")) if case else 64
        p = by_point[(int(n), d, "causal" in case)]
        want = {"naive": p["naive_bound_s"], "fused": p["fused_pred_s"], "sdpa": None}
        assert row.model == want[row.quantity.split()[0]]
    assert {c.key for c in lab.LAB.claims} == {"naive_time", "fused_time"}
    assert lab.LAB.claim("fused_time").miss is None  # the pipe model holds at every point


def test_naive_and_sdpa_agree_with_float64_with_and_without_the_mask():
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 50, 16, generator=g) for _ in range(3))
    for causal in (False, True):
        want = kern.attention_reference(q, k, v, causal=causal)
        for fn in (lab.naive_attention, lab.sdpa_attention):
            assert torch.allclose(fn(q, k, v, causal=causal).double(), want, atol=1e-5)


def test_max_error_sees_a_wrong_row_and_a_nan():
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 40, 16, generator=g) for _ in range(3))
    out = lab.naive_attention(q, k, v, causal=True)
    assert lab._max_error(out, q, k, v, True, g) < 1e-5
    bad = out.clone()
    bad[..., :] += 0.5  # every row wrong: any sample of rows sees it
    assert lab._max_error(bad, q, k, v, True, g) == pytest.approx(0.5, abs=1e-4)
    bad[..., :] = float("nan")
    assert lab._max_error(bad, q, k, v, True, g) != lab._max_error(bad, q, k, v, True, g)  # NaN


# --- the kernel (through Triton's interpreter on a CPU) -----------------------------------------

@pytest.mark.parametrize("n, d, causal, blocks", [
    (1, 16, False, (16, 16)), (33, 16, True, (32, 16)), (97, 32, False, (32, 32)),
    (97, 32, True, (64, 16)), (64, 64, True, (16, 16))])
def test_kernel_matches_float64(n, d, causal, blocks):
    g = torch.Generator().manual_seed(n + d)
    q, k, v = (torch.randn(3, n, d, generator=g) for _ in range(3))
    o = kern.attention(q, k, v, causal=causal, block_m=blocks[0], block_n=blocks[1])
    assert torch.allclose(o.double(), kern.attention_reference(q, k, v, causal=causal), atol=1e-5)


def test_kernel_handles_large_scores_without_overflow():
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 40, 16, generator=g) for _ in range(3))
    q = q * 30  # scores of several hundred: exp would overflow without the running max
    o = kern.attention(q, k, v, block_m=16, block_n=16)
    assert torch.isfinite(o).all()
    assert torch.allclose(o.double(), kern.attention_reference(q, k, v), atol=1e-4)


def test_kernel_wrapper_rejects_bad_arguments():
    x = torch.randn(2, 8, 16)
    with pytest.raises(ValueError):
        kern.attention(x, x, torch.randn(2, 8, 32))
    with pytest.raises(ValueError):
        kern.attention(torch.randn(2, 8, 24), torch.randn(2, 8, 24), torch.randn(2, 8, 24))
    with pytest.raises(ValueError):
        kern.attention(x, x, x, block_m=24)
    with pytest.raises(ValueError):
        kern.attention(x, x, x, causal=True, block_m=16, block_n=32)
    with pytest.raises(ValueError):
        kern.attention(x, x, x, out=torch.empty(2, 8, 16, dtype=torch.float64))
    with pytest.raises(ValueError):
        kern.default_config(48)


def test_heads_keep_the_model_width_fixed():
    assert lab.FULL_HIDDEN // 64 == 32 and lab.FULL_HIDDEN // 128 == 16  # FlashAttention-2, 4.1
    assert lab.n_heads(64) * 64 == lab.hidden()
    with pytest.raises(ValueError):
        lab.n_heads(48)


def test_default_configs_are_the_hopper_settings():
    assert kern.default_config(64) == {"block_m": 128, "block_n": 64, "num_warps": 8,
                                       "num_stages": 4}
    assert kern.default_config(128)["num_stages"] == 3
    assert lab.fused_configs(128)[0] == kern.default_config(128)


# --- grader -------------------------------------------------------------------------------------

@triton.jit
def _no_rescale_kernel(Q, K, V, O, sm_scale, N_CTX, HEAD_DIM: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    base = tl.program_id(1).to(tl.int64) * N_CTX * HEAD_DIM
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_CTX,
                other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    ell = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        k = tl.load(K + base + cols[None, :] * HEAD_DIM + dims[:, None],
                    mask=cols[None, :] < N_CTX, other=0.0)
        v = tl.load(V + base + cols[:, None] * HEAD_DIM + dims[None, :],
                    mask=cols[:, None] < N_CTX, other=0.0)
        s = tl.where(cols[None, :] < N_CTX, tl.dot(q, k) * sm_scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        ell = ell * alpha + tl.sum(p, 1)
        acc = acc + tl.dot(p.to(v.dtype), v)  # forgets acc * alpha
        m = m_new
    tl.store(O + base + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / ell[:, None]).to(O.dtype.element_ty), mask=rows[:, None] < N_CTX)


def test_grader_passes_the_book_kernel_and_fails_one_without_the_rescale():
    v = lab.grade_attention(kern.attention_fwd_kernel, device="cpu")
    assert v.passed, str(v)
    bad = lab.grade_attention(_no_rescale_kernel, device="cpu")
    assert bad.status == "FAIL" and "no mask" in bad.reasons[0]
    assert "wrong values" in str(bad)


def test_speed_is_not_graded_on_a_cpu():
    assert lab.grade_attention_speed(kern.attention_fwd_kernel, device="cpu") is None


def test_kernel_names_keep_device_kernels_of_every_backend():
    """The first filter matched names and dropped cuDNN's kernels (``cudnn...``), leaving the
    shipped H200 result without the SDPA backend; the filter now reads the device type."""
    from types import SimpleNamespace as Ev

    from torch.autograd import DeviceType

    events = [Ev(key="cudaLaunchKernel", device_type=DeviceType.CPU, device_time_total=0),
              Ev(key="Memset (Device)", device_type=DeviceType.CUDA, device_time_total=1.0),
              Ev(key="cudnn_generated_fort_native_sdpa_sm90_flash_fprop", device_type=DeviceType.CUDA,
                 device_time_total=90.0),
              Ev(key="void pytorch_flash::flash_fwd_kernel<>", device_type=DeviceType.CUDA,
                 device_time_total=120.0)]
    assert lab._kernel_names(events) == ["void pytorch_flash::flash_fwd_kernel<>",
                                         "cudnn_generated_fort_native_sdpa_sm90_flash_fprop"]
    assert lab._kernel_names(events[:2]) == []
