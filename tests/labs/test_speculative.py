"""The speculative-decoding lab: exact greedy output, cycle statistics, the result file (CPU,
tiny) with and without an H200 reference, and the grader."""

from __future__ import annotations

import json

import pytest
import torch

from helpers.labs import core
from helpers.labs import speculative as lab
from helpers.labs.analysis import speculative as view
from helpers.models import speculative as model
from helpers.profiling import dispatch
from helpers.serving import speculative as sd


@pytest.fixture(scope="module")
def models():
    return lab.load_models("cpu")


@pytest.fixture(scope="module")
def prompt():
    return lab.prompts("cpu", n=1, length=16)[0]


@pytest.mark.parametrize("g", [1, 3, 8])
def test_speculative_output_is_the_targets_greedy_output(models, prompt, g):
    target, draft = models
    st = {}
    out = sd.speculative_generate(target, draft, prompt, 24, g, stats=st)
    assert torch.equal(out, target.generate(prompt, 24))
    assert st["accepted"] <= st["tested"] <= st["proposed"] == st["cycles"] * g
    assert all(1 <= k <= g + 1 for k in st["per_cycle"]) and sum(st["per_cycle"]) >= 24
    assert sum(st["per_cycle"]) == st["accepted"] + st["cycles"]


def test_a_draft_equal_to_the_target_accepts_everything(models, prompt):
    target, _ = models
    st = {}
    out = sd.speculative_generate(target, target, prompt, 20, 4, stats=st)
    assert torch.equal(out, target.generate(prompt, 20))
    assert st["accepted"] == st["tested"] == st["proposed"]
    assert st["per_cycle"] == [5] * 4
    rate, n = sd.agreement(target, target, out)
    assert rate == 1.0 and n == out.shape[1]


def test_count_ops_scales_with_layers(models):
    target, draft = models
    tok = torch.tensor([[65]])
    t = dispatch.count_ops(lambda: target(tok))
    d = dispatch.count_ops(lambda: draft(tok))
    assert 0.3 < d / t < 0.8 and t > 50


@pytest.fixture(scope="module")
def cpu_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("speculative")
    mp = pytest.MonkeyPatch()
    mp.setattr(lab, "draft_lengths", lambda: [1, 3])
    mp.setattr(lab, "n_prompts", lambda: 2)
    mp.setattr(lab, "prompt_len", lambda: 16)
    mp.setattr(lab, "new_tokens", lambda: 12)
    try:
        path = core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu",
                                               "--size", "small"])
    finally:
        mp.undo()
    return core.load_result(path)


def test_the_result_file(cpu_result):
    m = cpu_result["measurements"]
    assert cpu_result["lab"] == "speculative" and cpu_result["tier"] == "cpu"
    assert m["correctness"]["identical"] and len(m["correctness"]["cases"]) == 4
    assert 0 < m["correctness"]["alpha_teacher_forced"] < 1
    assert m["steps"]["cost_ratio"] > 0 and 0 < m["steps"]["ops_ratio"] < 1
    rows = view.sweep_rows(cpu_result)
    assert [r["draft_len"] for r in rows] == [1, 3]
    for r in rows:
        assert 1 <= r["tokens_per_cycle"] <= r["draft_len"] + 1
        assert r["tokens_model"] == pytest.approx(
            model.expected_tokens_per_cycle(r["alpha"], r["draft_len"]))
        assert r["speedup"] > 0 and r["cycle_s"] > 0
    assert "exact: True" in view.describe(cpu_result)
    assert torch.get_num_threads() >= 1  # restored after the one-thread CPU run


def test_table_without_and_with_a_reference(cpu_result, tmp_path, monkeypatch):
    assert "no measurement yet" in str(view.comparison_table(None, None))
    mine = view.comparison_table(None, cpu_result)
    assert "yours" in str(mine) and "tokens per cycle g=3" in str(mine)
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    core.save_result(cpu_result, tmp_path)
    ref = lab.reference_or_none()
    assert ref is not None
    rows = view.comparison_rows(ref, cpu_result)
    assert all(r.h200 is not None and r.model is not None for r in rows)
    assert all(r.claim is not None for r in rows)  # each names its claim ...
    json.dumps([{k: v for k, v in r.__dict__.items() if k != "claim"} for r in rows])  # ... the rest is data


def test_grader():
    assert lab.grade_tokens_per_cycle(model.expected_tokens_per_cycle).passed
    v = lab.grade_tokens_per_cycle(lambda a, g: a ** g)
    assert v.status == "FAIL" and "the cycle yields" in str(v)
    v = lab.grade_tokens_per_cycle(lambda a, g: (1 - a ** (g + 1)) / (1 - a))
    assert v.status == "FAIL" and "ZeroDivisionError" in str(v)


def test_bad_input(models, prompt):
    target, draft = models
    with pytest.raises(ValueError, match="prompt"):
        sd.speculative_generate(target, draft, prompt[0], 4, 2)
    with pytest.raises(ValueError, match="draft_len"):
        sd.speculative_generate(target, draft, prompt, 4, 0)
    with pytest.raises(ValueError, match="prompts"):
        lab.prompts("cpu", n=0)


def test_agreement_summary_against_a_direct_computation(cpu_result):
    """The worst relative errors equal a plain loop over the sweep rows; the verdicts follow
    the tolerances; every number the page quotes exists with and without a result."""
    rows = view.sweep_rows(cpu_result)
    a = view.agreement_summary(cpu_result)
    tok = max(abs(r["tokens_per_cycle"] / r["tokens_model"] - 1) for r in rows)
    spd = max(abs(r["speedup"] / r["speedup_model_v"] - 1) for r in rows)
    assert a["tokens_err"] == pytest.approx(tok) and a["speedup_err"] == pytest.approx(spd)
    assert a["tokens_within"] == (tok <= view.TOKENS_TOLERANCE)
    assert a["speedup_within"] == (spd <= view.SPEEDUP_TOLERANCE)
    assert a["tokens_side_longest"] in ("above", "below") and a["longest_g"] == 3
    assert view.agreement_summary(None) is None
    with_ref, without = view.prose_numbers(cpu_result), view.prose_numbers(None)
    assert with_ref.keys() == without.keys()
    assert with_ref["tok_verdict"] in ("within", "outside")
    assert set(without.values()) == {view.MISSING}


def test_the_median_round_is_kept_with_every_rounds_time():
    rounds = [{"median_s": 3.0, "tag": "slow"}, {"median_s": 1.0, "tag": "fast"},
              {"median_s": 2.0, "tag": "mid"}]
    mid = lab._median_round(rounds)
    assert mid["tag"] == "mid" and mid["rounds_s"] == [3.0, 1.0, 2.0]
    assert lab._middle([[5.0], [4.0]], key=sum) == [4.0]  # even count: the lower middle


def test_shipped_reference_rows_are_predictions_from_the_runs_own_inputs():
    """Every row names one of the lab's three predictions; the cost-ratio row's model is the
    run's operator counts, and the tokens rows' standard error follows the capped geometric
    spread over the run's cycles."""
    import math

    ref = lab.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    rows = view.comparison_rows(ref)
    assert {r.claim.key for r in rows} == {"tokens_per_cycle", "speedup", "cost_ratio"}
    assert all(r.claim.kind == "prediction" for r in rows)
    st = ref["measurements"]["steps"]
    (c_row,) = [r for r in rows if r.claim.key == "cost_ratio"]
    assert c_row.model == pytest.approx(st["draft"]["ops"] / st["target"]["ops"])
    assert view.TOKENS_TOLERANCE == lab.LAB.claim("tokens_per_cycle").tolerance
    for r, p in zip(view.sweep_rows(ref), ref["measurements"]["sweep"]["points"]):
        want = (model.tokens_per_cycle_std(r["alpha"], r["draft_len"]) / math.sqrt(p["cycles"])
                / r["tokens_model"])
        assert r["tokens_stderr"] == pytest.approx(want)
    # the longest draft is the least pinned: its standard error is the largest
    se = [r["tokens_stderr"] for r in view.sweep_rows(ref)]
    assert max(se) == se[-1] and min(se) == se[0]
