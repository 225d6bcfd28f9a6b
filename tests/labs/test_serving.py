"""The serving lab's runner: a tiny CPU run through the command line, its analysis, its grader."""

import pytest

from helpers.labs import report
from helpers.labs import serving as lab
from helpers.labs.analysis import serving as view

_SETTINGS = lab.settings


def tiny():
    """The settings of the CPU run (``result_file`` in conftest.py puts them in place)."""
    s = _SETTINGS()
    s.update(n_requests=10, prompt_len=(4, 20), output_mean=6.0, output_cap=16, prefix_len=8,
             max_batch=4, token_budget=32, num_blocks=32)
    return s


def test_result_file(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "serving" and cpu_result["tier"] == "cpu"
    assert m["check"]["exact_token_match"] and len(m["trace"]) == 10
    for sched in lab.SCHEDULERS:
        r = m[sched]
        assert r["engine"]["n_requests"] == r["simulator"]["n_requests"] == 10
        assert r["engine"]["output_tokens_per_s"] > 0
        mem = r["memory"]
        assert mem["tokens_stored_at_peak"] <= mem["paged_reserved_tokens"]
    f = m["fit"]
    assert min(f.values()) >= 0 and f["fixed_s"] + f["per_decode_s"] > 0


def test_table_and_prose_with_and_without_a_reference(cpu_result):
    rows = view.comparison_rows(None, cpu_result)
    assert all(r.model is None and r.h200 is None and r.yours is not None for r in rows)
    # the with-reference path, with this CPU result standing in for the H200 file
    rows = view.comparison_rows(cpu_result, cpu_result)
    assert all(r.model is not None and r.h200 is not None for r in rows if "TPOT" not in r.quantity)
    assert "quantity" in str(report.Table("t", rows, yours_label="yours"))
    words = view.prose_numbers(cpu_result)
    assert words["n_requests"] == "10" and "%" in words["err_thr_cont"]
    assert set(view.prose_numbers(None)) == set(words)
    assert view.comparison_rows(None)  # no result at all: rows of dashes
    mem = view.memory_series(cpu_result)
    assert mem and all(m["used_tokens"] <= m["reserved_tokens"] for m in mem)
    from helpers.figures import scheduling_kv as fig
    import matplotlib.pyplot as plt
    plt.close(fig.memory_figure(mem, title="t"))
    plt.close(fig.metrics_figure(view.metrics_rows(cpu_result), title="t"))


def test_grader():
    assert lab.grade_blocks_needed(lambda n, b: -(-n // b)).passed
    bad = lab.grade_blocks_needed(lambda n, b: n // b + 1)  # off by one on exact multiples
    assert bad.status == "FAIL" and "0 tokens in blocks of 1 need 0 blocks, got 1" in str(bad)
    assert not lab.grade_blocks_needed(lambda n, b: n // b).passed
    assert not lab.grade_blocks_needed(lambda n, b: 1 / 0).passed


def test_a_changed_output_is_caught_unless_it_was_a_near_tie():
    import torch
    from helpers.nn import tinylm
    from helpers.serving import engine as E

    model = tinylm.load("book-lm")
    prompt = tinylm.encode("The roofline of a GPU").numpy()
    want = model.generate(torch.tensor(prompt)[None], 4)[0, len(prompt):].tolist()
    served = {"requests": [{"id": 0, "output": list(want)}]}
    assert E.mismatches(served, {0: want}, model, {0: prompt}) == []
    wrong = list(want)
    wrong[1] = (wrong[1] + 1) % 256
    served = {"requests": [{"id": 0, "output": wrong}]}
    assert E.mismatches(served, {0: want}, model, {0: prompt}) == [0]
    assert not E.near_tie(model, prompt, want, want + [1])


def test_every_row_names_its_claim():
    rows = view.comparison_rows(None)
    assert {r.claim.key for r in rows} == {"throughput", "median_latency", "tail_latency"}
    assert all(r.claim.kind == "prediction" for r in rows)
    assert [r.claim.key for r in rows if "p90" in r.quantity] == ["tail_latency"] * 4


def test_the_step_model_is_calibrated_apart_and_the_tail_evidence_is_computed(cpu_result):
    """Issue 17: the simulator's step model comes from the calibration batch's steps (which
    the result keeps, with the new log fields), not from the measured runs'; the page's tail
    numbers are computed from the result."""
    from helpers.sim.serving import StepModel, fit_step_model

    m, s = cpu_result["measurements"], cpu_result["settings"]
    cal, after = m["calibration"], m["calibration_after"]
    for sched in lab.SCHEDULERS:
        assert {"context_tokens", "kv_slots_read", "host_gap_s"} <= set(m[sched]["steps"][0])
        assert min(st["host_gap_s"] for st in m[sched]["steps"]) >= 0
    # the rate comes from the four-term model fitted to the first calibration batch
    assert fit_step_model(cal["steps"], context=True, gaps=cal["steps"]).__dict__ == \
        cal["step_model"]
    assert fit_step_model(cal["steps"]).__dict__ == cal["fit"]
    assert cal["rate_per_s"] == pytest.approx(s["load"] * cal["capacity_tokens_per_s"]
                                              / s["output_mean"])
    # the simulator's model: step time from the static run, gap from the later calibration
    gap = fit_step_model(after["steps"]["continuous"], gaps=after["steps"]["continuous"])
    static = fit_step_model(m["static"]["steps"], context=True)
    assert m["fit"] == dict(static.__dict__, gap_s=gap.gap_s, gap_per_seq_s=gap.gap_per_seq_s)
    assert m["fit"] == m["step_models"]["continuous"] != m["step_models"]["static"]
    own = fit_step_model([st for sched in lab.SCHEDULERS for st in m[sched]["steps"]])
    assert own.__dict__ == m["own_steps_linear_fit"] != m["fit"]
    StepModel(**m["fit"])  # a valid model
    got = view.tail_numbers(cpu_result)
    r = m["continuous"]
    p90 = r["engine"]["ttft_s"]["p90"]
    tail = [q for q in r["requests"] if q["token_times_s"][0] - q["arrival_s"] >= p90]
    assert got["tail_n"] == str(len(tail)) and int(got["tail_slot"]) <= len(tail)
    assert got["steps"] == str(len(r["steps"]))
    word = "overstates" if cal["linear_capacity_tokens_per_s"] > m["saturated_tokens_per_s"] \
        else "understates"
    assert got["cap_lin_word"] == word and got["sens_minus"].endswith("%")
    assert set(view.tail_numbers(None)) == set(got)
    rows = {(r["scheduler"], r["quantity"]): r for r in view.metrics_rows(cpu_result)}
    for r in view.before_after(cpu_result):
        assert r["after"] == pytest.approx(rows[r["scheduler"], r["quantity"]]["error"])
