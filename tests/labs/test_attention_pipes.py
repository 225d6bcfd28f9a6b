"""The attention lab's pipe counters (helpers.labs.attention.pipes) and the pipe model they back:
the runner's pieces without a GPU (its case words, the mapping of ncu's kernels to cases, a run
with a stand-in for ncu), then the shipped H200 counters against the model term by term, and the
prediction against every point of the shipped sweep."""

from __future__ import annotations

import pytest

from helpers import specs
from helpers.labs import attention as lab
from helpers.labs import core
from helpers.labs.analysis import attention as view
from helpers.labs.attention import pipes
from helpers.models import attention as att
from helpers.models import occupancy

H200 = specs.H200_SXM
CONFIGS = [(64, False, 64), (128, False, 128), (64, True, 64), (128, True, 64)]


def test_case_words_round_trip_and_bad_words_raise():
    for c in pipes.pipe_cases():
        assert pipes.parse_case(pipes.case_arg(c)) == c
        assert c["batch"] * c["seq_len"] == pipes.TOKENS and c["n_heads"] * c["head_dim"] == pipes.HIDDEN
    for bad in ("fused,64", "nope,64,4096,0,128,64,8,4"):
        with pytest.raises(ValueError, match="impl,d,n"):
            pipes.parse_case(bad)


def _ncu_text(cases):
    head = '"ID","Kernel Name","Block Size","Grid Size","Metric Name","Metric Unit","Metric Value"'
    lines = [f'BOOK_META {{"case": "{pipes.case_arg(c)}", "n_regs": 122}}' for c in cases]
    lines += ["==PROF== done", head]
    for i, _ in enumerate(cases):
        lines.append(f'"{i}","attention_fwd_kernel","(256, 1, 1)","(32, 128, 1)",'
                     f'"smsp__inst_executed_pipe_xu.sum","inst","{1000 + i:,}"')
        lines.append(f'"{i}","attention_fwd_kernel","(256, 1, 1)","(32, 128, 1)",'
                     f'"sm__cycles_elapsed.avg.per_second","hz","1,770,000,000"')
    return "\n".join(lines) + "\n"


def test_kernels_and_metadata_go_to_their_cases_in_order():
    cases = pipes.pipe_cases()[:3]
    entries = pipes.pipes_entries(cases, _ncu_text(cases))
    for i, e in enumerate(entries):
        assert e["kernels"][0]["metrics"]["smsp__inst_executed_pipe_xu.sum"] == 1000 + i
        assert e["triton_meta"]["case"] == pipes.case_arg(cases[i]) and "error" not in e
    # one kernel too many or too few: every case says so, and the kernels are kept
    short = pipes.pipes_entries(cases, _ncu_text(cases[:2]))
    assert all("2 kernels for 3 cases" in e["error"] for e in short)
    assert len(short[0]["all_kernels"]) == 2


def test_a_run_with_a_stand_in_ncu_drops_an_unknown_metric(tmp_path, monkeypatch):
    from helpers.profiling import ncu

    calls = []

    def fake(target, *, metrics, **kw):
        calls.append((target, list(metrics)))
        if "sm__throughput.avg.pct_of_peak_sustained_elapsed" in metrics:
            raise ncu.NcuError("ncu exited with 1: ==ERROR== Failed to find metric "
                               "sm__throughput.avg.pct_of_peak_sustained_elapsed")
        return _ncu_text([pipes.parse_case(w) for w in target[-1].split(";")])

    monkeypatch.setattr(ncu, "run_ncu_text", fake)
    monkeypatch.setattr("shutil.which", lambda name: f"/bin/{name}")
    monkeypatch.setattr("subprocess.run", lambda *a, **k: type("P", (), {"stdout": "", "stderr": ""})())
    monkeypatch.setattr(pipes, "new_result", lambda lab_, device, **s: dict(
        core.new_result(lab_, "cpu", **s), tier="gpu"))
    monkeypatch.setattr(pipes, "sustained_clocks", lambda cases, seconds: [dict(c) for c in cases])
    path = pipes.measure_pipes(tmp_path)
    result = core.load_result(path)
    entries = result["measurements"]["cases"]
    assert len(entries) == len(pipes.pipe_cases())
    fused = [e for e in entries if e["impl"] == "fused"]
    assert all(e["dropped_metrics"] == ["sm__throughput.avg.pct_of_peak_sustained_elapsed"]
               and "error" not in e for e in fused)
    assert calls[0][0][-2] == "--pipes-call" and calls[0][0][-1].count(";") == len(fused) - 1
    assert (tmp_path / "attention_pipes_raw").is_dir()


# --- the shipped H200 counters against the model --------------------------------------------------

@pytest.fixture(scope="module")
def ref():
    r = pipes.pipes_reference()
    if r is None:
        pytest.skip("labs/reference/h200/attention_pipes.json not measured yet")
    return r


def _fused(ref):
    return [c for c in ref["measurements"]["cases"] if c["impl"] == "fused"]


def test_the_shipped_counters_are_complete(ref):
    assert ref["lab"] == "attention_pipes" and ref["tier"] == "gpu"
    assert len(_fused(ref)) == 12 and all("error" not in c for c in ref["measurements"]["cases"])


def test_tensor_pipe_share_is_the_datasheet_rate_over_the_counted_cycles(ref):
    # the tiles the model counts (diagonal tiles whole) at 2048 multiply-adds per clock per SM
    for c in _fused(ref):
        n = view.pipe_counts(c)
        model_share = (2 * c["head_dim"] / H200.tensor_fma_per_clock_per_sm["bf16"]
                       / n["cycles_per_score"])
        assert model_share == pytest.approx(n["tensor_active"], rel=0.01), c["seq_len"]


def test_one_exponential_per_score_and_one_per_row_per_thread(ref):
    for c in _fused(ref):
        bn = c["config"]["block_n"]
        # a score's exp2, and the rescale factor of each row by the 4 threads that hold it
        # (short sequences add the output's reciprocals per row: within 2 %)
        rel = 0.002 if c["seq_len"] >= 4096 else 0.02
        assert view.pipe_counts(c)["xu"] == pytest.approx(1 + 4 / bn, rel=rel)


def test_fma_pipe_does_the_softmax_arithmetic_and_the_rescale(ref):
    for c in _fused(ref):
        d, bn = c["head_dim"], c["config"]["block_n"]
        fma = view.pipe_counts(c)["fma"]
        # scale, subtract the max, row sum (3) and the accumulator's rescale (d / B_c), plus
        # address arithmetic and, on the diagonal tiles and short rows, the masks
        assert 3 + d / bn <= fma <= 3 + d / bn + 3.5, (d, c["causal"], c["seq_len"])


def test_occupancy_from_registers_and_shared_memory_is_what_ncu_reports(ref):
    for c in _fused(ref):
        meta, k = c["triton_meta"], c["kernels"][0]["metrics"]
        occ = occupancy.occupancy(threads_per_block=32 * meta["num_warps"],
                                  registers_per_thread=meta["n_regs"], smem_bytes=meta["shared"],
                                  limits=specs.SM90)
        assert occ.blocks_per_sm == min(k["launch__occupancy_limit_registers"],
                                        k["launch__occupancy_limit_shared_mem"])
        # d = 128 without a mask: 252 registers and 224 KiB of shared memory leave room for one
        assert occ.blocks_per_sm == (2 if c["head_dim"] == 64 else 1)


@pytest.mark.parametrize("d, causal, bn", CONFIGS)
def test_the_per_tile_rule_matches_the_counted_cycles_per_tile(ref, d, causal, bn):
    inp = view.pipe_inputs(ref, d, causal, 128, bn)
    terms = att.flash2_tile_cycles(d, block_rows=128, block_cols=bn,
                                   fma_ops_per_score=inp["fma_ops_per_score"],
                                   alu_ops_per_score=inp["alu_ops_per_score"], **lab.PIPE_RATES)
    rule = att.flash2_sm_tile_cycles(terms, inp["programs_per_sm"])
    assert rule == pytest.approx(inp["tile_cycles"], rel=0.05)
    # nothing overlapping would be too slow where two programs share an SM
    if inp["programs_per_sm"] == 2:
        assert terms["total"] > 1.25 * inp["tile_cycles"]


def test_the_clocks_bracket_the_datasheet_tensor_clock(ref):
    for c in _fused(ref):
        assert view.pipe_counts(c)["clock_hz"] == pytest.approx(H200.tensor_boost_clock_hz, rel=0.06)
    for s in ref["measurements"]["sustained"]:
        assert s["sm_clock_mhz_median"] * 1e6 == pytest.approx(H200.tensor_boost_clock_hz, rel=0.06)


def test_the_prediction_holds_at_every_point_and_the_old_model_did_not():
    r = lab.reference_or_none()
    if r is None:
        pytest.skip("no attention reference")
    rows = view.point_rows(r)
    tol = lab.LAB.claim("fused_time").tolerance
    assert len(rows) == 24
    for row in rows:
        assert abs(row["fused_pred_s"] / row["fused_s"] - 1) <= tol, row
        # the two-level time (products at peak, memory) is about half the measured time
        assert row["fused_two_level_s"] / row["fused_s"] - 1 < -0.4
    # without counters the same model still runs (assumed counts, one program per SM)
    plain = view.point_rows(r, pipes=None)
    assert all(p["fused_pipe_s"] > 0 for p in plain)
