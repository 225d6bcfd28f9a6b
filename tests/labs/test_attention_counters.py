"""The attention runner's hardware-counter mode, without a GPU: its case list, the JSON it
assembles from ncu's rows (the recorded H200 output of tests/profiling/data), a run with a
stand-in for ncu in which one case fails, and the shipped counters against the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.bench.sizes import FORCE_CPU_ENV
from helpers import specs
from helpers.labs.attention import counters as lab
from helpers.labs.analysis import attention as view
from helpers.labs import attention, core
from helpers.models import attention as att
from helpers.profiling import ncu

FIXTURE = Path(__file__).resolve().parents[1] / "profiling" / "data" / "ncu_matmul_h200.csv"


def test_cases_cover_the_three_paths_at_each_size_and_one_causal_case():
    cases = lab.counter_cases()
    dims, lens = lab.COUNTERS_LAB.size("head_dims"), lab.COUNTERS_LAB.size("seq_lens")
    assert len(cases) == 3 * (len(dims) * len(lens) + 1)
    assert [c["impl"] for c in cases[:3]] == list(lab.COUNTER_IMPLS)
    causal = [c for c in cases if c["causal"]]
    assert {(c["head_dim"], c["seq_len"]) for c in causal} == {(dims[-1], lens[-1])}
    for c in cases:
        assert c["batch"] * c["seq_len"] == lab.tokens()
        assert c["n_heads"] * c["head_dim"] == attention.hidden()


def test_the_models_block_rows_are_the_kernels():
    from helpers.kernels import attention as kern

    for d in (64, 128):
        assert lab.COUNTER_BLOCK_ROWS["fused"] == kern.default_config(d)["block_m"]


def test_entry_from_the_recorded_ncu_rows():
    totals = ncu.totals(ncu.parse_csv(FIXTURE.read_text()))
    case = {"impl": "fused", "head_dim": 128, "seq_len": 4096, "causal": False, "batch": 4,
            "n_heads": 16}
    e = lab.counter_entry(case, totals)
    assert e["dram_read_bytes"] == 8_410_368.0 + 8_413_184.0
    assert e["dram_bytes"] == e["dram_read_bytes"] + e["dram_write_bytes"]
    assert e["l2_bytes"] == 107_396_512.0 + 108_709_920.0
    assert e["kernel_time_s"] == pytest.approx(51.008e-6)
    assert e["n_kernels"] == 2 and e["kernels"][0].startswith("nvjet")
    # the model's bytes: compulsory in HBM (the H200's L2 holds the heads in flight), the
    # one-level count through L2
    assert e["model_dram_bytes"] == att.flash2_attention_compulsory_bytes(
        4096, 128, 2.0, n_heads=16, batch=4)
    assert e["model_l2_bytes"] == e["one_level_bytes"] == att.flash2_attention_hbm_bytes(
        4096, 128, 2.0, block_rows=128, n_heads=16, batch=4)
    naive = lab.counter_entry(dict(case, impl="naive", causal=True), error="RuntimeError: boom")
    assert naive["error"] == "RuntimeError: boom" and "dram_bytes" not in naive
    assert naive["score_passes"] == 2  # the scaling and the mask
    assert naive["model_dram_bytes"] == naive["one_level_bytes"]  # 4 GiB of scores: no fit


def test_a_run_with_a_stand_in_ncu_keeps_every_case(tmp_path):
    rows = ncu.parse_csv(FIXTURE.read_text())
    calls = []

    def runner(target, **kw):
        calls.append((target, kw))
        if "naive" in target[-1]:
            raise ncu.NcuError("ncu exited with 1: ==ERROR== out of memory")
        return rows

    cases = lab.counter_cases()
    path = lab.measure_counters(tmp_path, cases=cases, runner=runner)
    assert path.name == "attention_counters.json"
    result = core.load_result(path)
    assert result["lab"] == "attention_counters"
    entries = result["measurements"]["cases"]
    assert len(entries) == len(cases) == len(calls)
    assert all(kw["nvtx_range"] == lab.NVTX_RANGE for _, kw in calls)
    assert calls[0][0][-4:] == ["-m", "helpers.labs.attention.counters", "--counted-call",
                                "naive,64,128,0"]
    failed = [e for e in entries if "error" in e]
    assert {e["impl"] for e in failed} == {"naive"} and "out of memory" in failed[0]["error"]
    assert all(e["dram_bytes"] > 0 for e in entries if "error" not in e)
    rows_back = view.counter_rows(result)
    assert len(rows_back) == len(entries) and rows_back[0]["error"] is not None
    assert view.counter_rows(None) is None


def test_a_missing_ncu_stops_the_run(tmp_path):
    def runner(target, **kw):
        raise ncu.NcuNotFound("'ncu' not found on PATH")

    with pytest.raises(ncu.NcuNotFound):
        lab.measure_counters(tmp_path, cases=lab.counter_cases()[:1], runner=runner)


def test_counters_mode_on_a_cpu_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(FORCE_CPU_ENV, "1")
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        lab.main(["--out", str(tmp_path)])
    from helpers.labs import attention  # the lab's own flag delegates here

    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        attention.main(["--counters", "--out", str(tmp_path)])


def test_shipped_counters_against_the_two_level_model():
    ref = lab.counters_reference()
    if ref is None:
        pytest.skip("labs/reference/h200/attention_counters.json not measured yet")
    assert ref["lab"] == "attention_counters" and ref["tier"] == "gpu"
    gpu = specs.H200_SXM
    for e in ref["measurements"]["cases"]:
        assert "error" not in e, e
        model = lab.counter_model(e, gpu)
        if e["impl"] == "naive":
            # every pass over the scores reaches HBM: the count within 5 % (the causal mask's
            # N x N booleans are read too)
            assert e["dram_bytes"] == pytest.approx(model["model_dram_bytes"], rel=0.05)
        else:
            # fused and SDPA: Q, K, V read once (the re-reads hit L2); O written at most once
            # (part of it is still in L2 when the kernel ends)
            qkv = 3 / 4 * model["model_dram_bytes"]
            assert e["dram_read_bytes"] == pytest.approx(qkv, rel=0.01)
            assert 0.5 * qkv / 3 <= e["dram_write_bytes"] <= 1.01 * qkv / 3
            # the one-level count bounds the L2 traffic from above, within 5 % (the causal case
            # measured 2.5 % more), and both are far above HBM's
            assert e["dram_bytes"] < e["l2_bytes"] <= 1.05 * model["model_l2_bytes"]
