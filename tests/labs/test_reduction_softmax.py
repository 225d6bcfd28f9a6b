"""The reduction and softmax lab: its Triton kernels (interpreter), byte counts, CPU run,
analysis and grader."""

import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import specs
from helpers.labs import core
from helpers.labs import reduction_softmax as lab
from helpers.labs.analysis import reduction_softmax as view
from helpers.kernels import reduction_softmax as kern

H200 = specs.H200_SXM


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    """A CPU run written and read back through the command line (BOOK_SIZE=small)."""
    out = tmp_path_factory.mktemp("reduction_softmax")
    path = core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu", "--size", "small"])
    return core.load_result(path)


def synthetic_gpu_result(softmax_fraction=0.93, unfused_slowdown=3.6, copy_fraction=0.9):
    """A result shaped like a GPU run: the copy reaches ``copy_fraction`` of the datasheet
    bandwidth, the Triton softmax ``softmax_fraction`` of the copy, the unfused softmax takes
    ``unfused_slowdown`` times the fused one."""
    copy_bw = copy_fraction * H200.hbm_bytes_per_s

    def b(t):
        return {"median_s": t, "spread": 0.01}

    copies, points = {}, []
    for name, esize in lab.ELEMENT_BYTES.items():
        n = (1 << 28) // esize
        copies[name] = {"dtype": name, "buffer_bytes": float(n * esize),
                        "moved_bytes": 2.0 * n * esize, "bench": b(2.0 * n * esize / copy_bw)}
        for cols in (1024, 4096, 16384):
            rows = n // cols
            q = {"sum": lab.row_sum_bytes(rows, cols, esize),
                 "softmax": lab.softmax_bytes(rows, cols, esize),
                 "unfused_softmax": lab.unfused_softmax_bytes(rows, cols, esize)}
            t_soft = q["softmax"] / (softmax_fraction * copy_bw)
            points.append({"dtype": name, "rows": rows, "cols": cols, "element_bytes": esize,
                           "bytes": q, "max_error": {op: 0.0 for op in lab.OPS},
                           "torch_sum": b(q["sum"] / copy_bw), "triton_sum": b(q["sum"] / copy_bw),
                           "torch_softmax": b(t_soft), "triton_softmax": b(t_soft),
                           "unfused_softmax": b(unfused_slowdown * t_soft)})
    return {"lab": str(lab.LAB), "schema": core.SCHEMA, "tier": "gpu", "provenance": {},
            "measurements": {"copy": copies, "points": points, "grading": {}}}


# --- kernels (Triton interpreter on a CPU) ---------------------------------------------------

@pytest.mark.parametrize("cols", [1, 17, 1000, 1024, 3000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_triton_softmax_matches_float64_and_writes_every_element(cols, dtype):
    gen = torch.Generator().manual_seed(cols)
    x = (torch.randn(4, cols, generator=gen) * 10).to(dtype)
    y = torch.full_like(x, float("nan"))
    kern.softmax(x, y)
    want = torch.softmax(x.double(), dim=-1)
    rtol, atol = (1e-5, 1e-8) if dtype == torch.float32 else (1e-2, 1e-3)
    assert not torch.isnan(y).any()
    assert torch.allclose(y.double(), want, rtol=rtol, atol=atol)
    assert torch.allclose(y.double().sum(-1), torch.ones(4, dtype=torch.float64),
                          atol=1e-5 if dtype == torch.float32 else 2e-2)


def test_triton_softmax_survives_huge_inputs():
    x = torch.tensor([[1000.0, 999.0, -1000.0], [-1e38, 0.0, 1e38]])
    y = kern.softmax(x)
    want = torch.softmax(x.double(), dim=-1)
    assert torch.allclose(y.double(), want, atol=1e-7) and not torch.isnan(y).any()


@pytest.mark.parametrize("cols", [1, 300, 4096, 4097, 9000])
def test_triton_row_sum_matches_float64(cols):
    x = torch.rand(3, cols, generator=torch.Generator().manual_seed(cols)) + 0.5
    s = torch.full((3,), float("nan"))
    kern.row_sum(x, s)
    assert torch.allclose(s.double(), x.double().sum(-1), rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("tile", [None, 2048, 4096, 32768])
@pytest.mark.parametrize("shape", [(1, 1), (13, 100), (9, 1000), (5, 4097)])
def test_triton_row_sum_packs_rows_and_writes_every_one(shape, tile, dtype):
    # fresh random inputs of both signs, a row count that leaves the last program's tile
    # part empty, and odd row lengths; every output poisoned first
    gen = torch.Generator().manual_seed(sum(shape) + (tile or 0))
    x = (torch.randn(shape, generator=gen) * 4).to(dtype)
    s = torch.full((shape[0],), float("nan"), dtype=dtype)
    kern.row_sum(x, s, tile_bytes=tile)
    x64 = x.double()
    err = ((s.double() - x64.sum(-1)).abs() / x64.abs().sum(-1)).max()
    assert not torch.isnan(s).any() and err <= (1e-5 if dtype == torch.float32 else 1e-2)


@given(st.integers(1, 1 << 15), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from(kern.SUM_TILE_CHOICES + kern.SUM_TUNE_CHOICES))
def test_sum_config_moves_one_tile_per_step(cols, esize, tile):
    c = kern.sum_config(cols, esize, tile)
    block, rows = c["BLOCK"], c["ROWS"]
    assert block & (block - 1) == 0 and rows & (rows - 1) == 0 and rows >= 1
    assert c["N_STEPS"] * block >= cols > (c["N_STEPS"] - 1) * block  # covers the row, no extra step
    # every program loads a tile of the same bytes, whatever the row length
    assert rows * block * esize == max(16, tile // esize) * esize or rows == 1
    assert rows == 1 or block >= cols  # several rows per program only when a row fits in one step
    assert c["num_warps"] == kern.warps_for(rows * block)


def test_sum_config_gives_short_bf16_rows_the_fp32_tile():
    # the reference's slow points: bf16 rows of 1024-4096 columns got programs of half the bytes
    for cols in (1024, 2048, 4096):
        bf, fp = kern.sum_config(cols, 2), kern.sum_config(cols, 4)
        assert bf["ROWS"] * bf["BLOCK"] * 2 == fp["ROWS"] * fp["BLOCK"] * 4 == kern.SUM_TILE_BYTES
    with pytest.raises(ValueError, match="element_bytes"):
        kern.sum_config(1024, 0)
    assert kern.tuned_tile(torch.rand(2, 8), torch.empty(2)) == kern.SUM_TILE_BYTES  # interpreter


def test_kernel_arguments_are_checked():
    with pytest.raises(ValueError, match="2-D"):
        kern.softmax(torch.rand(8))
    with pytest.raises(ValueError, match="n_cols"):
        kern.block_for(kern.MAX_COLS + 1)
    with pytest.raises(ValueError, match="shape"):
        kern.softmax(torch.rand(2, 8), torch.empty(2, 9))
    with pytest.raises(ValueError, match="shape"):
        kern.row_sum(torch.rand(2, 8), torch.empty(3))
    assert [kern.block_for(n) for n in (1, 16, 17, 1000, 1024)] == [16, 16, 32, 1024, 1024]
    assert [kern.warps_for(b) for b in (1024, 2048, 4096, 16384)] == [4, 8, 16, 16]


# --- byte counts ----------------------------------------------------------------------------

@given(st.integers(1, 1 << 16), st.integers(1, 1 << 15), st.sampled_from([2, 4]))
def test_byte_counts(rows, cols, esize):
    n, r = rows * cols * esize, rows * esize
    assert lab.softmax_bytes(rows, cols, esize) == 2 * n
    assert lab.row_sum_bytes(rows, cols, esize) == n + r
    # oracle: five passes, each reading a tensor; three write one; two read a per-row vector back
    assert lab.unfused_softmax_bytes(rows, cols, esize) == 8 * n + 4 * r
    ratio = lab.unfused_softmax_bytes(rows, cols, esize) / lab.softmax_bytes(rows, cols, esize)
    assert 4 <= ratio <= 6  # -> 4 for long rows, 6 for rows of one element


def test_unfused_softmax_is_softmax_and_its_passes_are_counted():
    x = torch.randn(5, 33, generator=torch.Generator().manual_seed(3)) * 8
    assert torch.allclose(lab.unfused_softmax(x), torch.softmax(x, -1), atol=1e-7)
    assert [p[0] for p in lab.unfused_passes(5, 33, 4)] == ["max", "subtract", "exp", "sum", "divide"]


def test_shapes_and_value_errors():
    assert lab.shape_for(1024, 4, 1 << 28) == (65536, 1024)
    assert lab.shape_for(16384, 2, 1 << 28) == (8192, 16384)
    with pytest.raises(ValueError, match="room for one row"):
        lab.shape_for(1024, 4, 100)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            lab.softmax_bytes(bad, 8, 4)


# --- the CPU run ----------------------------------------------------------------------------

def test_cpu_run_writes_a_complete_result(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == str(lab.LAB) and cpu_result["tier"] == "cpu"
    assert cpu_result["size_tier"] == "small"
    assert set(m["copy"]) == set(lab.DTYPES)
    assert [(p["dtype"], p["cols"]) for p in m["points"]] == [
        (d, c) for d in lab.DTYPES for c in lab.col_sizes()]
    for p in m["points"]:
        assert "triton_softmax" not in p and "triton_sum" not in p  # not timed on a CPU
        assert p["torch_softmax"]["median_s"] > 0 and p["unfused_softmax"]["median_s"] > 0
        assert all(e <= p["tolerance"] for e in p["max_error"].values())
        assert p["tensor_bytes"] <= lab.tensor_bytes()
    checked = m["triton_checked"]
    assert {(c["dtype"], c["cols"]) for c in checked} == {
        (d, c) for d in lab.DTYPES for c in lab.col_sizes() if c <= lab.INTERPRETER_MAX_COLS}
    assert any(c["cols"] % 16 for c in checked)  # a row length that is not a power of two
    assert all(c["softmax_max_error"] < 1e-2 and c["sum_max_error"] < 1e-2 for c in checked)
    assert m["grading"] == {}


def test_cpu_analysis(cpu_result):
    rows = view.point_rows(cpu_result)
    assert {r["op"] for r in rows} == {"torch_sum", "torch_softmax", "unfused_softmax"}
    assert view.target_check(cpu_result) is None
    s = view.summary(cpu_result, "fp32")
    assert s["triton_softmax"] is None and s["torch_softmax"] > 0
    assert s["byte_ratio"] == pytest.approx(4.0, rel=0.02)
    assert "interpreter" in view.describe(cpu_result)


def test_reference_is_read_when_the_file_exists(cpu_result, tmp_path, monkeypatch):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    (tmp_path / f"{lab.LAB}.json").write_text(json.dumps(cpu_result))
    ref = lab.reference_or_none()
    assert ref["measurements"]["points"] == cpu_result["measurements"]["points"]
    table = view.comparison_rows(ref, cpu_result)
    assert table[0].quantity == "copy (torch), fp32" and table[0].h200 == table[0].yours


# --- analysis of a GPU-shaped result ---------------------------------------------------------

def test_analysis_recovers_the_synthetic_fractions():
    res = synthetic_gpu_result(softmax_fraction=0.93, unfused_slowdown=3.6, copy_fraction=0.9)
    t = view.target_check(res)
    assert t["met"] and t["worst_fraction"] == pytest.approx(0.93) and t["n_met"] == t["n"] == 6
    assert not view.target_check(synthetic_gpu_result(softmax_fraction=0.85))["met"]
    for r in view.point_rows(res):
        if r["op"] == "triton_softmax":
            assert r["hbm_fraction"] == pytest.approx(0.93 * 0.9)
    s = view.summary(res, "bf16")
    assert s["unfused_over_fused"] == pytest.approx(3.6)
    rows = view.comparison_rows(res, None)
    assert len(rows) == 2 * (1 + len(lab.OPS) + 2 + 1)
    assert rows[0].error() == f"{1 / 0.9 - 1:+.0%}"
    assert all(r.claim in lab.LAB.claims for r in rows)
    by = {r.quantity: r for r in rows}
    # the predictions follow the run's own copy: a softmax at 93 % of the copy is 7 % slower
    fused = by["softmax, Triton (fused) time, fp32"]
    assert fused.claim.kind == "prediction"
    assert (fused.model - fused.h200) / fused.h200 == pytest.approx(0.93 - 1)
    assert by["row sum, Triton time, bf16"].model == pytest.approx(
        by["row sum, Triton time, bf16"].h200, rel=2e-3)  # one element per row: 1/cols of the bytes
    # the ratio's bound: unfused bytes at the datasheet rate over the fused time
    ratio = by["unfused / fused softmax time, bf16"]
    assert ratio.claim.limit == "lower" and ratio.h200 == pytest.approx(3.6)
    assert ratio.model == pytest.approx(s["byte_ratio"] * 0.93 * 0.9, rel=1e-3)
    slower = synthetic_gpu_result(softmax_fraction=0.5)
    assert not {r.quantity: r for r in view.comparison_rows(slower)}[
        "softmax, Triton (fused) time, fp32"].verdict().startswith("-7%")
    assert lab.fmt(None) == lab.MISSING and lab.fmt(0.931, ".0%") == "93%"


# --- grading --------------------------------------------------------------------------------

def no_max_softmax(x, out):
    e = torch.exp(x)  # overflows to inf for the large rows: inf / inf = NaN
    out.copy_(e / e.sum(-1, keepdim=True))
    return out


@settings(max_examples=5, deadline=None)
@given(st.integers(2, 64), st.integers(1, 300))
def test_grading_inputs_span_small_and_huge_magnitudes(rows, cols):
    (x,) = lab.grading_inputs(rows, cols, "cpu")(torch.Generator().manual_seed(rows * cols))
    assert x.shape == (rows, cols) and x.dtype == torch.float32 and bool(x.abs().sum() > 0)
    assert float(x[-1].abs().max()) > 88.7 or cols < 3  # beyond fp32's exp range


def test_grader_passes_the_book_kernel_and_catches_a_missing_max():
    assert lab.grade_softmax(kern.softmax).passed
    v = lab.grade_softmax(no_max_softmax)
    assert v.status == "FAIL" and "NaN" in str(v)
    wrong = lab.grade_softmax(lambda x, out: out.copy_(torch.softmax(x * 1.01, -1)))
    assert wrong.status == "FAIL" and "wrong values" in str(wrong)
    with pytest.raises(ValueError, match="CUDA"):
        lab.grade_softmax_speed(kern.softmax, device="cpu")


@given(st.integers(1, 1 << 14), st.integers(1, 1 << 14))
def test_unfused_traffic_is_the_triton_tutorials_count(m, n):
    # Triton's fused-softmax tutorial counts the naive torch softmax of an M x N matrix as
    # "read 5MN + 2M elements ; wrote 3MN + 2M elements"
    passes = lab.unfused_passes(m, n, 1)
    assert sum(r for _, r, _ in passes) == 5 * m * n + 2 * m
    assert sum(w for _, _, w in passes) == 3 * m * n + 2 * m


def test_the_gpu_path_of_a_point_runs_on_a_tiny_tensor(monkeypatch):
    """measure_point with the Triton kernels timed (the GPU tier's code), through the
    interpreter on a tensor of a few rows, then the analysis of a result built from it."""
    monkeypatch.setattr(lab, "tensor_bytes", lambda: 4 * 100 * 4)
    gen = torch.Generator().manual_seed(5)
    p = lab.measure_point("cpu", gen, "fp32", 100, timed_triton=True)
    assert (p["rows"], p["cols"]) == (4, 100)
    assert set(lab.OPS) <= set(p) and set(p["max_error"]) == set(lab.OPS)
    assert all(e <= p["tolerance"] for e in p["max_error"].values())
    copy = lab.measure_copy("cpu", gen, "fp32")
    res = {"measurements": {"copy": {"fp32": copy}, "points": [p]}}
    rows = view.point_rows(res)
    assert {r["op"] for r in rows} == set(lab.OPS)
    t = view.target_check(res)
    assert t["n"] == 1 and t["worst_cols"] == 100
