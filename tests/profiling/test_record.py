"""The trace recorder: both variants compute the same tokens; the traces are valid Chrome traces."""

import gzip
import json

import pytest

from helpers.profiling import record as rec


def test_variants_compute_the_same_tokens():
    w = rec.make_workload(width=32, n_layers=2, vocab=50)
    flawed = rec.run_steps(w, 7, "flawed")
    fixed = rec.run_steps(w, 7, "nosync")
    assert flawed == fixed
    assert len(fixed) == 7 and all(0 <= t < 50 for t in fixed)


def test_flawed_variant_stops_at_end_of_sequence():
    w = rec.make_workload(width=32, n_layers=2, vocab=50)
    tokens = rec.run_steps(w, 7, "nosync")
    assert rec.run_steps(w, 7, "flawed", eos_token=tokens[2]) == tokens[:tokens.index(tokens[2]) + 1]


def test_record_writes_traces_and_manifest(tmp_path):
    manifest = rec.record(tmp_path, n_steps=3, width=32, n_layers=1, vocab=20, repeats=1)
    saved = json.loads((tmp_path / "manifest.json").read_text())
    assert list(saved["variants"]) == ["flawed", "nosync"] == list(rec.variants_for("cpu"))
    assert saved["tokens_match"] is True and manifest["device"] == "cpu"
    for variant in rec.variants_for("cpu"):
        trace = json.load(gzip.open(tmp_path / f"trace-{variant}.json.gz"))
        names = [e.get("name") for e in trace["traceEvents"]]
        assert "aten::mm" in names or "aten::matmul" in names


@pytest.mark.parametrize("kwargs", [dict(width=4), dict(n_layers=0), dict(vocab=1)])
def test_bad_workload_shapes_raise(kwargs):
    with pytest.raises(ValueError):
        rec.make_workload(**kwargs)


def test_bad_variant_and_steps_raise():
    w = rec.make_workload(width=16, n_layers=1, vocab=10)
    with pytest.raises(ValueError, match="variant"):
        rec.run_steps(w, 2, "fast")
    with pytest.raises(ValueError, match="n_steps"):
        rec.run_steps(w, 0, "nosync")
    with pytest.raises(ValueError, match="CUDA"):
        rec.run_steps(w, 2, "graph")


@pytest.mark.gpu
def test_graph_variant_matches_eager_on_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU; torch.cuda.is_available() is False on this machine")
    w = rec.make_workload(width=64, n_layers=2, vocab=100, device="cuda")
    assert rec.run_steps(w, 9, "graph") == rec.run_steps(w, 9, "flawed") == rec.run_steps(w, 9, "nosync")
