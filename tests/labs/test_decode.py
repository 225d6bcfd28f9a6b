"""The decode lab: its CPU run and result file, the bytes model, the timed attention, the grader."""

import copy
import json

import pytest
import torch

from helpers import specs
from helpers.labs import core
from helpers.labs import decode as lab
from helpers.labs.analysis import decode as view
from helpers.models import decode_bandwidth as dbw
from helpers.models import transformer as tf
from helpers.nn import decode_models as dm
from helpers.profiling import dispatch
from helpers.nn.decoder import Decoder, KVCache
from helpers.nn.tinylm import BOOK_LM

H200 = specs.H200_SXM


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    """A CPU run written through the command line (small sizes)."""
    out = tmp_path_factory.mktemp("labdec")
    return core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu", "--size", "small"])


@pytest.fixture(scope="module")
def cpu_result(result_file):
    return core.load_result(result_file)


def gpu_shaped(result, graph_speedup=2.0):
    """The CPU result dressed as a GPU run (graph timings added), to test the GPU analysis."""
    r = copy.deepcopy(result)
    r["tier"] = "gpu"
    for mod in r["measurements"]["models"]:
        for p in mod["points"]:
            p["graph"] = copy.deepcopy(p["eager"])
            p["graph"]["median_s"] = p["eager"]["median_s"] / graph_speedup
    return r


def test_cpu_run_writes_a_valid_result(result_file, cpu_result):
    data = json.loads(result_file.read_text())
    assert data["lab"] == "decode" and data["tier"] == "cpu" and data["size_tier"] == "small"
    m = cpu_result["measurements"]
    assert m["copy"]["bytes_per_s"] > 0
    assert [mod["name"] for mod in m["models"]] == [lab.CPU_CONFIG.name, BOOK_LM.name]
    for mod in m["models"]:
        cfg = lab.CPU_CONFIG if mod["name"] == lab.CPU_CONFIG.name else BOOK_LM
        assert mod["parameters"] == tf.parameter_count(cfg)
        assert mod["weight_bytes_allocated"] == 4 * tf.parameter_count(cfg)  # fp32 on a CPU
        assert mod["check"]["batched_vs_alone"] <= lab.REL_TOLERANCE["float32"]
        assert mod["check"]["read_once_vs_stock"] <= lab.REL_TOLERANCE["float32"]
        got = [(p["context"], p["batch"]) for p in mod["points"]]
        assert got == [(c, b) for c in lab.contexts(cfg) for b in lab.batches()]
        for p in mod["points"]:  # the allocated cache is exactly the model's KV bytes
            assert p["kv_bytes"] == dbw.config_kv_cache_bytes(cfg, batch=p["batch"], context_len=p["context"],
                                                 bytes_per_element=4)
            assert p["eager"]["median_s"] > 0 and "graph" not in p
            last = (p["context"], p["batch"]) == (lab.contexts(cfg)[-1], lab.batches()[-1])
            assert ("stock_eager" in p) == last  # the book's attention, timed at one point


def test_read_once_attention_equals_the_books_on_a_prompt_and_a_step():
    torch.manual_seed(0)
    cfg = tf.TransformerConfig(name="t", n_layers=2, d_model=64, n_heads=8, n_kv_heads=2,
                               d_ff=96, vocab_size=50, max_seq_len=32)
    stock = Decoder(cfg).double().eval()
    fast = dm.read_once(copy.deepcopy(stock))
    assert all(isinstance(b.attn, dm.ReadOnceAttention) for b in fast.blocks)
    tokens = torch.randint(50, (3, 9))
    c1, c2 = (KVCache(cfg, batch=3, max_seq_len=10, dtype=torch.float64) for _ in range(2))
    with torch.no_grad():
        torch.testing.assert_close(fast(tokens, cache=c1), stock(tokens, cache=c2))
        step = torch.randint(50, (3, 1))
        torch.testing.assert_close(fast(step, cache=c1, start_pos=9),
                                   stock(step, cache=c2, start_pos=9))


def test_check_batched_decode_catches_a_decoder_that_mixes_sequences():
    model = dm.read_once(dm.build_model(BOOK_LM, "cpu", torch.float32))
    assert lab.check_batched_decode(model, "cpu")["batched_vs_alone"] < 1e-4
    original = model.blocks[0].mlp.forward
    model.blocks[0].mlp.forward = lambda x: original(x) + x.mean(0, keepdim=True)  # batch leak
    with pytest.raises(AssertionError, match="batched vs one-by-one"):
        lab.check_batched_decode(model, "cpu")


def test_point_rows_on_cpu_and_gpu_shaped_results(cpu_result):
    rows = view.point_rows(cpu_result)
    copy_bw = cpu_result["measurements"]["copy"]["bytes_per_s"]
    for r in rows:
        assert r["bound_s"] == pytest.approx(r["step_bytes"] / copy_bw)  # a CPU: the copy rate
        assert r["timed"] == "eager" and r["roofline_s"] is None
        assert r["tokens_per_s"] == pytest.approx(r["batch"] / r["eager_s"])
    g = view.point_rows(gpu_shaped(cpu_result))
    for r in g:
        assert r["timed"] == "graph" and r["step_s"] == pytest.approx(r["eager_s"] / 2)
        assert r["bound_s"] == pytest.approx(r["step_bytes"] / H200.hbm_bytes_per_s)
        assert r["roofline_s"] >= r["bound_s"] * (1 - 1e-12)


def test_comparison_rows_with_and_without_a_reference(cpu_result, tmp_path, monkeypatch):
    assert view.comparison_rows(None) == []
    assert "no measurement yet" in str(view.comparison_table(None, None))
    mine = view.comparison_rows(None, cpu_result)
    assert [r.yours for r in mine] and all(r.h200 is None for r in mine)
    # the with-file path: a result saved where the reference is looked for
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    assert lab.reference_or_none() is None
    core.save_result(gpu_shaped(cpu_result), tmp_path)
    ref = lab.reference_or_none()
    rows = view.comparison_rows(ref)
    assert rows and all(r.model is not None and r.h200 is not None and r.yours is None
                        for r in rows)
    assert "yours" in str(view.comparison_table(ref, cpu_result))
    assert "decode-lab-small" in view.describe(ref)


def test_grader_passes_the_model_and_names_the_classic_mistakes():
    assert lab.grade_decode_bytes(dbw.config_decode_step_bytes).passed

    def weights_only(cfg, b, s, e):
        return tf.weight_bytes(tf.matmul_parameter_count(cfg), e)

    def per_sequence(cfg, b, s, e):
        return b * dbw.config_decode_step_bytes(cfg, 1, s, e)

    v = lab.grade_decode_bytes(weights_only)
    assert not v.passed and "KV cache" in str(v)
    v = lab.grade_decode_bytes(per_sequence)
    assert not v.passed and "once per sequence" in str(v)
    v = lab.grade_decode_bytes(lambda *a: 1 / 0)
    assert not v.passed and "ZeroDivisionError" in str(v)
    with pytest.raises(ValueError):
        lab.grade_decode_bytes(dbw.config_decode_step_bytes, trials=0)


def test_kernel_profile_is_gpu_evidence_only():
    """The kernel profile (count, time, matmul vs other) needs the CUDA profiler: None on a CPU,
    and kernels_per_step follows it."""
    assert dispatch.kernel_profile(lambda: None, "cpu") is None
    assert dispatch.kernels_per_step(lambda: None, "cpu") is None
    assert all(m == m.lower() for m in dispatch.MATMUL_KERNEL_MARKS)


def test_kernel_breakdown_splits_the_step():
    """A synthetic profiled point: the parts add up, the rates follow from the bytes, and a
    point without a profile (a CPU run) gives None."""
    prof = {"kernels": 10, "kernel_time_s": 8e-3, "matmul_kernels": 4, "matmul_time_s": 6e-3,
            "other_kernels": 6, "other_time_s": 2e-3, "top": []}
    point = {"batch": 1, "context": 128, "kv_bytes": 1, "step_bytes": 12e9,
             "eager": {"median_s": 20e-3}, "graph": {"median_s": 10e-3}, "kernel_profile": prof}
    result = {"measurements": {"copy": {"bytes_per_s": 3e12},
                               "models": [{"name": "m", "points": [point]}]}}
    kb = view.kernel_breakdown(result, "m", 128, 1)
    assert kb["step_s"] == 10e-3 and kb["timed"] == "graph"
    assert kb["matmul_s"] + kb["other_s"] == pytest.approx(kb["kernel_time_s"])
    assert kb["idle_s"] == pytest.approx(2e-3)
    assert kb["matmul_bytes_per_s"] == pytest.approx(2e12)
    assert kb["copy_bound_s"] == pytest.approx(4e-3)
    assert kb["other_each_s"] == pytest.approx(2e-3 / 6)
    assert view.kernel_breakdown(result, "m", 128, 2) is None
    del point["kernel_profile"]
    assert view.kernel_breakdown(result, "m", 128, 1) is None


def _profiled(eager_s, graph_s, kernels, batch=1, context=128):
    return {"batch": batch, "context": context, "kv_bytes": 1, "step_bytes": 1e6,
            "eager": {"median_s": eager_s}, "graph": {"median_s": graph_s},
            "kernels_per_step": kernels}


def test_launch_model_reads_the_small_models_host_time_and_predicts_the_eager_step():
    """Synthetic run: book-lm's eager step is 200 kernels in 4 ms (20 us each, host-bound); the
    big model launches 500 kernels (host 10 ms) and its graph replays in 2 ms (host-bound) or
    30 ms (device-bound)."""
    small = {"name": "tiny", "matmul_parameters": 10, "points": [_profiled(4e-3, 0.4e-3, 200)]}
    big = {"name": "big", "matmul_parameters": 10**9,
           "points": [_profiled(10.5e-3, 2e-3, 500), _profiled(31e-3, 30e-3, 500, batch=256),
                      {**_profiled(9e-3, 2e-3, None, batch=4)}]}  # not profiled: no row
    result = {"tier": "gpu", "measurements": {"copy": {"bytes_per_s": 3e12},
                                              "models": [big, small]}}
    host = view.launch_s(result)
    assert host["model"] == "tiny" and host["launch_s"] == pytest.approx(20e-6)
    rows = view.eager_rows(result)
    assert [(r["batch"], r["model"]) for r in rows] == [(1, "big"), (256, "big")]
    assert rows[0]["model_s"] == pytest.approx(10e-3)  # the host's 500 launches
    assert rows[1]["model_s"] == pytest.approx(30e-3)  # the device's work
    # no small model, or a CPU result without kernel counts: no prediction
    assert view.eager_rows({"measurements": {"models": [big]}}) == []
    del small["points"][0]["graph"]
    assert view.launch_s(result) is None


def test_cpu_result_has_no_eager_prediction(cpu_result):
    assert view.eager_rows(cpu_result) == []
    assert all(r.claim is lab.LAB.claim("tokens_hbm_bound")
               for r in view.comparison_rows(None, cpu_result))


def test_shipped_reference_rows_name_both_claims():
    ref = lab.reference_or_none()
    if ref is None:
        pytest.skip("no H200 reference shipped")
    rows = view.comparison_rows(ref)
    kinds = {r.claim.key: r.claim.kind for r in rows}
    assert kinds == {"tokens_hbm_bound": "bound", "eager_step": "prediction"}
    eager = [r for r in rows if r.claim.key == "eager_step"]
    assert len(eager) == 4  # B = 1 and 256 at both contexts: the profiled points
    # the model is computed from the run: kernels x book-lm's time per launch, or the graph
    host = view.launch_s(ref)
    one = next(r for r in view.eager_rows(ref) if (r["context"], r["batch"]) == (128, 1))
    assert one["model_s"] == pytest.approx(one["kernels"] * host["launch_s"])
