"""The memory-access lab: its Triton kernels (interpreter), CPU run and grader (its predictions
are tested in tests/models/test_memory_access.py)."""

import json

import pytest
import torch

from helpers.book import ROOT
from helpers.labs import core
from helpers.labs import memory_access as lab
from helpers.labs.analysis import memory_access as view
from helpers.kernels import memory_access as kern
from helpers.models import memory_access as ma

triton = pytest.importorskip("triton")
tl = triton.language


# --- kernels, through the interpreter on a CPU ---------------------------------------------------

def test_kernels_agree_with_torch():
    checked = lab.check_kernels("cpu")
    assert checked["interpreter"] is True


@pytest.mark.parametrize("shape", [(1, 1), (5, 70), (33, 31), (64, 32)])
def test_transposes_on_odd_shapes(shape):
    x = torch.rand(shape) + 0.5
    want = x.t().contiguous()
    assert torch.equal(kern.transpose_tiled(x, block_m=16, block_n=16), want)
    assert torch.equal(kern.transpose_naive(x, block=16), want)


def test_strided_sum_of_known_values():
    x = torch.arange(1, 1001, dtype=torch.float32)
    part = kern.strided_sum(x, 100, 10, block=64)  # 1, 11, ..., 991
    assert part.shape == (2,) and float(part.sum()) == sum(range(1, 1001, 10))


def test_kernel_wrappers_reject_bad_shapes():
    with pytest.raises(ValueError):
        kern.strided_sum(torch.ones(10), 5, 3)  # index 12 is past the end
    with pytest.raises(ValueError):
        kern.transpose_tiled(torch.ones(4, 5), torch.empty(4, 5))
    with pytest.raises(ValueError):
        kern.transpose_naive(torch.ones(4, 5).t())  # not contiguous


# --- the CPU run and its result file ------------------------------------------------------------

@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("labmem")
    return lab.main(["--out", str(out), "--device", "cpu", "--size", "small"]) or \
        out / "memory_access.json"


def test_cpu_run_writes_a_valid_result(result_file):
    r = core.load_result(result_file)
    assert r["lab"] == str(lab.LAB) and r["tier"] == "cpu" and r["size_tier"] == "small"
    m = r["measurements"]
    rows = m["strided_read"]["rows"]
    assert [row["stride"] for row in rows] == list(lab.STRIDES)
    assert m["strided_read"]["segment_bytes"] == lab.CPU_LINE_BYTES
    for row in rows:
        assert row["bench"]["checked"] and row["useful_bytes_per_s"] > 0
        assert row["predicted_efficiency"] == ma.predicted_efficiency(
            row["stride"], 4, segment_bytes=64)
    assert set(m["transpose"]["ops"]) == {"copy", "torch"}
    assert all(op["bench"]["checked"] for op in m["transpose"]["ops"].values())
    bank = m["bank_conflicts"]
    assert bank["available"] is False and "CPU" in bank["reason"]
    assert bank["predicted_conflict_degree"] == {"pad0": 32, "pad1": 1}
    json.dumps(r, allow_nan=False)


def test_reference_is_none_without_a_file_and_read_with_one(result_file, monkeypatch, tmp_path):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    (tmp_path / result_file.name).write_text(result_file.read_text())
    ref = lab.reference_or_none()
    assert ref is not None and ref["lab"] == str(lab.LAB)


# --- the grader -------------------------------------------------------------------------------

@triton.jit
def _rows_only(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < BLOCK_N * 1000)  # columns never masked
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def _swapped_bounds(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    out_mask = (rn[:, None] < M) & (rm[None, :] < N)  # M and N swapped
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile), mask=out_mask)


def test_grader_passes_the_reference_kernel():
    v = lab.grade_transpose(kern.transpose_tiled_kernel, "cpu")
    assert v.passed, str(v)
    assert str(v) == "PASS tiled transpose: matches a float64 reference on 3 fresh random inputs"


def test_grader_catches_a_store_past_the_end():
    v = lab.grade_transpose(_rows_only, "cpu", trials=1)
    assert v.status == "FAIL" and "past the end of the output" in str(v)


def test_grader_catches_swapped_bounds_by_poisoning():
    v = lab.grade_transpose(_swapped_bounds, "cpu", trials=1)
    assert v.status == "FAIL" and ("still NaN" in str(v) or "wrong values" in str(v))


def test_grade_shape_is_neither_square_nor_a_multiple_of_the_tile():
    for m, n in lab.GRADE_SHAPE.values():
        assert m != n and m % kern.TILE and n % kern.TILE


def test_performance_is_not_graded_on_a_cpu():
    assert lab.grade_transpose_performance(kern.transpose_tiled_kernel, "cpu") is None


def test_the_runner_uses_the_models_constants():
    from helpers.models import memory_access as ma

    assert lab.ELEMENT_BYTES == ma.FP32_BYTES == 4 and lab.SECTOR_BYTES == ma.SECTOR_BYTES


# --- the page, with and without a reference file -------------------------------------------------

def _run_page_cells(monkeypatch, ref_dir, result):
    """Execute the page's code cells in-process (all but the grading ones), collecting glue."""
    import re
    from pathlib import Path

    import jupytext
    import matplotlib

    matplotlib.use("Agg")
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.__setitem__(key, value))
    monkeypatch.setattr(core, "REFERENCE_DIR", ref_dir)
    monkeypatch.setattr(lab, "run", lambda device=None: result)
    page = ROOT / "labs" / "memory-access.md"
    ns: dict = {}
    for cell in jupytext.read(page).cells:
        src = cell.source
        if cell.cell_type != "code" or src.startswith("# Exercise") or "transpose_tile_kernel" in src:
            continue
        exec(compile(src, str(page), "exec"), ns)
    keys = set(re.findall(r"\{glue:text\}`(labmem_\w+)", page.read_text()))
    return glued, keys


def test_page_glues_every_key_without_a_reference(result_file, monkeypatch, tmp_path):
    result = core.load_result(result_file)
    glued, keys = _run_page_cells(monkeypatch, tmp_path, result)
    assert keys <= set(glued), sorted(keys - set(glued))
    assert glued["labmem_ref_r8_pct"] == "(not measured yet)"


def test_page_reads_a_reference_file_when_there_is_one(result_file, monkeypatch, tmp_path):
    (tmp_path / result_file.name).write_text(result_file.read_text())
    result = core.load_result(result_file)
    glued, keys = _run_page_cells(monkeypatch, tmp_path, result)
    assert keys <= set(glued), sorted(keys - set(glued))
    ratios = view.stride_ratios(result)
    assert glued["labmem_ref_r8_pct"] == f"{100 * ratios[8]:.3g}"
    assert glued["labmem_ref_s8_side"] in ("above", "below")
    # a CPU result has no Triton timings and no bank-conflict measurement: those stay pending
    assert glued["labmem_ref_triton_tiled_pct"] == "(not measured yet)"
    assert "Not measured on the H200" in glued["labmem_ref_bank_note"]


# --- the analysis: claims and predictions computed from the result ------------------------------

def test_every_row_names_a_declared_claim_and_predictions_follow_the_result():
    import copy

    ref = core.reference_or_none("memory_access")
    if ref is None:
        pytest.skip("no H200 reference shipped")
    rows = view.comparison_rows(ref)
    assert all(r.claim in lab.LAB.claims for r in rows)
    pred = {r.quantity: r.model for r in rows if r.claim.key == "strided_read_time"}
    assert set(pred) == {f"strided read time, stride {s}" for s in lab.STRIDES[1:]}
    # the prediction is built from the run's own reads: a slower stride 1 slows the strides
    # whose accesses abut; the sparse ones follow the same-span sweep's reads at their stride
    dense = {f"strided read time, stride {s}" for s in lab.STRIDES[1:] if ma.accesses_abut(s)}
    slow = copy.deepcopy(ref)
    slow["measurements"]["strided_read"]["rows"][0]["bench"]["median_s"] *= 2
    slow_pred = {r.quantity: r.model for r in view.comparison_rows(slow)
                 if r.claim.key == "strided_read_time"}
    assert all(slow_pred[q] == pytest.approx(2 * pred[q]) for q in dense)
    if "strided_read_same_span" in ref["measurements"]:
        assert all(slow_pred[q] == pytest.approx(pred[q]) for q in set(pred) - dense)
        for r in slow["measurements"]["strided_read_same_span"]["rows"]:
            r["bench"]["median_s"] *= 2
        sparse_pred = {r.quantity: r.model for r in view.comparison_rows(slow)
                       if r.claim.key == "strided_read_time"}
        assert all(sparse_pred[q] > 1.9 * pred[q] for q in set(pred) - dense)
    # the transposes' predictions follow the run's copy
    t = {r.quantity: r.model for r in rows if r.claim.key == "transpose_time"}
    copy_s = ref["measurements"]["transpose"]["ops"]["copy"]["bench"]["median_s"]
    assert t["triton tiled time"] == copy_s and t["triton naive time"] == pytest.approx(8.5 * copy_s)


def test_dirty_bytes_only_when_the_run_flushed():
    flushed = {"tier": "gpu", "settings": {"flush_cache_strided": True}}
    assert view.dirty_bytes(flushed, 100.0) == 100.0
    assert view.dirty_bytes({"tier": "gpu", "settings": {}}, 100.0) == 0.0
    assert view.dirty_bytes(flushed | {"tier": "cpu"}, 100.0) == 0.0  # no GPU L2 to write back
