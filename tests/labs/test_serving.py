"""The serving lab's runner: a tiny CPU run through the command line, its analysis, its grader."""

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
    # issue 17: the step log keeps what a step model with a context term and a host gap needs
    from helpers.sim.serving import fit_step_model
    for sched in lab.SCHEDULERS:
        steps = m[sched]["steps"]
        assert set(lab.STEP_KEYS) == set(steps[0])
        assert all(st["kv_slots_read"] >= st["context_tokens"] > 0 and st["host_gap_s"] >= 0
                   for st in steps)
        fit_step_model(steps, context=True, gaps=steps)  # fits


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


def test_every_row_names_its_claim_and_the_tail_evidence_is_computed():
    rows = view.comparison_rows(None)
    assert {r.claim.key for r in rows} == {"throughput", "median_latency", "tail_latency"}
    assert all(r.claim.kind == "prediction" for r in rows)
    assert [r.claim.key for r in rows if "p90" in r.quantity] == ["tail_latency"] * 4
    # two full-batch steps of twice the fitted time, one other step at the fit; one request
    # waited for a slot longer than two fitted full-batch steps, one did not
    fit = {"fixed_s": 1e-3, "per_decode_s": 1e-4, "per_prefill_token_s": 0.0}
    steps = [{"duration_s": 2 * (1e-3 + 2e-4), "n_decode": 2, "n_prefill_tokens": 0, "n_seqs": 2}] * 2
    steps += [{"duration_s": 1e-3 + 1e-4, "n_decode": 1, "n_prefill_tokens": 0, "n_seqs": 1}]
    reqs = [{"arrival_s": 0.0, "admitted_s": 3e-3}, {"arrival_s": 0.0, "admitted_s": 1e-3}]
    result = {"settings": {"max_batch": 2},
              "measurements": {"fit": fit, "continuous": {
                  "steps": steps, "requests": reqs, "engine_wall_s": 1.1, "engine_busy_s": 1.0}}}
    got = view.full_batch_numbers(result)
    assert got["full_steps"] == "2" and got["steps"] == "3"
    assert got["full_ratio"] == "2.00" and got["full_ratio_word"] == "longer"
    assert got["rest_ratio"] == "1.00" and got["slot_waits"] == "1" and got["host_pct"] == "10"
