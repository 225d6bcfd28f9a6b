"""Tests of helpers.labs.compare: the one command that checks a reader's GPU against the claims."""

from __future__ import annotations

import json

import pytest

from helpers import specs
from helpers.labs import compare, core, summary


def test_gpu_recognised_from_its_name_or_given():
    assert compare.gpu_spec_for("NVIDIA A100-SXM4-80GB") == (specs.A100_SXM_80GB, True)
    assert compare.gpu_spec_for("NVIDIA H200", key="h100") == (specs.H100_SXM, True)
    assert compare.gpu_spec_for("Radeon") == (specs.H200_SXM, False)


@pytest.mark.parametrize("name", [n for n, _ in summary.LABS])
def test_the_h200_compared_with_itself_keeps_every_claim_it_keeps_in_the_book(name):
    """A reader whose run equals the shipped reference gets, per quantity, the H200's own value
    and the same verdicts as the status page."""
    ref = core.reference_or_none(name)
    if ref is None:
        pytest.skip(f"no H200 reference for {name}")
    block = compare.lab_lines(name, ref, ref, specs.H200_SXM)
    assert block["lines"], f"{name}: no quantity to compare"
    for line in block["lines"]:
        assert line["yours"] == line["h200"]
    rows = {r.row.quantity: r for r in summary.reference_rows()[0] if r.lab == name}
    for line in block["lines"]:
        row = rows.get(line["quantity"])
        if row is not None and row.claim is not None:
            assert line["holds"] == row.holds


def test_main_runs_each_lab_keeps_going_after_a_failure_and_writes_everything(tmp_path, monkeypatch,
                                                                               capsys):
    def fake(name, device, out_dir, gpu):
        if name == "gemm":
            raise RuntimeError("out of memory")
        return compare.lab_lines(name, core.load_reference(name), core.load_reference(name), gpu)

    monkeypatch.setattr(compare, "compare_lab", fake)
    rc = compare.main(["--out", str(tmp_path), "--labs", "timing,gemm", "--device", "cpu"])
    out = json.loads((tmp_path / "compare.json").read_text())
    assert rc == 1 and [b["lab"] for b in out["labs"]] == ["timing"]
    assert out["failed"][0]["lab"] == "gemm" and "out of memory" in out["failed"][0]["error"]
    printed = capsys.readouterr()
    assert "== timing" in printed.out and "gemm: FAILED" in printed.err


def test_main_refuses_unknown_labs_and_a_missing_gpu(tmp_path, monkeypatch):
    with pytest.raises(SystemExit):
        compare.main(["--out", str(tmp_path), "--labs", "nope", "--device", "cpu"])
    monkeypatch.setattr(compare, "has_cuda", lambda: False)
    with pytest.raises(SystemExit):
        compare.main(["--out", str(tmp_path)])
