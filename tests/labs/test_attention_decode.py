"""The decode section of the attention lab: its CPU run and result file (small sizes), and what
its analysis module makes of a GPU result (claims, rows, the page's numbers)."""

from __future__ import annotations

import copy
import json

import pytest

from helpers.kernels import attention_decode as kern  # before triton: the interpreter on a CPU
from helpers.labs import core
from helpers.labs.analysis import attention_decode as view
from helpers.labs.attention import decode as lab
from helpers.models import attention as att


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("decode")
    lab.main(["--out", str(out), "--size", "small", "--device", "cpu"])
    return json.loads((out / "attention_decode.json").read_text())


def test_cpu_run_writes_a_checked_result_with_provenance(cpu_result):
    r = cpu_result
    assert r["lab"] == "attention_decode" and r["tier"] == "cpu" and r["size_tier"] == "small"
    assert r["provenance"]["torch"] and "date_utc" in r["provenance"]
    m = r["measurements"]
    assert m["checks"]["interpreted"] == kern.INTERPRETED
    assert {c["n_heads"] // c["n_kv_heads"] for c in m["checks"]["cases"]} >= {1, 4, 7}
    assert all(c["max_abs_error"] <= lab.TOLERANCE[c["dtype"]] for c in m["checks"]["cases"])
    assert all(c["max_abs_error"] <= 1e-4 for c in m["training_checks"]["cases"])
    pts = m["sweep"]["points"]
    assert [(p["context_len"], p["batch"]) for p in pts] == [
        (n, b) for n in lab.LAB.size("context_lens") for b in lab.LAB.size("batches")]
    for p in pts:  # the split kernel is checked, not timed, in the interpreter
        assert "split" not in p and p["sdpa"]["bench"]["n_reps"] >= 1
    # no copy rate, no GPU timing: the page shows no fraction and no comparison row
    assert view.comparison_rows(r) == [] and "odd shapes" in view.describe(r)


def fake_gpu_result(cpu_result, fraction=0.9, copy_bytes_per_s=4.0e12):
    """The CPU result dressed as a GPU run: each point's split kernel timed at ``fraction`` of
    the copy rate (the analysis does not care where the numbers came from)."""
    r = copy.deepcopy(cpu_result)
    r["measurements"]["copy"] = {"bytes_per_s": copy_bytes_per_s}
    r["provenance"]["device_name"] = "NVIDIA H200"
    for p in r["measurements"]["sweep"]["points"]:
        p["context_len"] *= lab.PREDICTED_FROM // 100  # some points below, some above
        n_bytes = att.decode_attention_bytes(p["context_len"], 128, 2.0, n_heads=32,
                                             n_kv_heads=8, batch=p["batch"], n_splits=4)
        p["split"] = {"n_bytes": n_bytes, "splits": 4, "max_abs_error": 1e-3, "spread": 0.01,
                      "n_reps": 5, "median_s": n_bytes / copy_bytes_per_s / fraction}
    return r


def test_rows_claims_and_numbers_of_a_gpu_result(cpu_result):
    r = fake_gpu_result(cpu_result, fraction=0.9)
    rows = view.comparison_rows(r)
    assert len(rows) == len(r["measurements"]["sweep"]["points"])
    kinds = {row.claim.key for row in rows}
    assert kinds == {c.key for c in lab.LAB.claims}  # both claims have rows
    for row in rows:
        n = int(row.quantity.split("N=")[1].split()[0])
        assert row.claim.key == ("decode_time" if n >= lab.PREDICTED_FROM else "decode_hbm")
        assert row.claim.holds(row.model, row.h200)  # -10 % within 20 %; bound not passed
    nums = view.prose_numbers(r)
    assert nums["dec_frac_b1"] == "0.90" and nums["dec_goal_word"] == "reaches"
    assert nums["dec_err_lo"] == nums["dec_err_hi"] == "-10"
    assert nums["dec_copy_tbs"] == "4" and nums["dec_device"] == "NVIDIA H200"
    slow = view.prose_numbers(fake_gpu_result(cpu_result, fraction=0.7))
    assert slow["dec_goal_word"] == "falls short of"
    assert not lab.LAB.claim("decode_time").holds(1.0, 1 / 0.7)


def test_prose_numbers_without_a_reference():
    assert set(view.prose_numbers(None).values()) == {core.MISSING}


def test_naive_and_sdpa_match_the_reference():
    import torch

    g = torch.Generator().manual_seed(5)
    q, k, v = torch.randn(2, 8, 16, generator=g), *torch.randn(2, 2, 2, 50, 16, generator=g)
    want = kern.decode_reference(q, k, v)
    for fn in (lab.naive_decode, lab.sdpa_decode):
        assert torch.allclose(fn(q, k, v).float(), want, atol=1e-5)
