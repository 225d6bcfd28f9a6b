"""Tests of helpers.checkpoint.store: round trips, corruption detected, debris ignored, RNG state."""

import json
import os
import random

import numpy as np
import pytest
import torch

from helpers.checkpoint import store as st
from helpers.checkpoint.store import CheckpointStore


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    p = tmp_path / "f.bin"
    st.atomic_write_bytes(p, b"old")
    st.atomic_write_bytes(p, b"new bytes")
    assert p.read_bytes() == b"new bytes"
    assert [q.name for q in tmp_path.iterdir()] == ["f.bin"]


def test_atomic_write_rejects_non_bytes(tmp_path):
    with pytest.raises(ValueError):
        st.atomic_write_bytes(tmp_path / "f", "text")


def test_store_keeps_the_last_k_and_loads_the_newest(tmp_path):
    s = CheckpointStore(tmp_path, keep=2)
    for step in (1, 2, 3):
        s.save(step, {"w": torch.full((4,), float(step))})
    assert [e["step"] for e in s.entries()] == [2, 3]
    assert not (tmp_path / "ckpt-000000001.pt").exists()
    step, state = s.load_latest()
    assert step == 3 and torch.equal(state["w"], torch.full((4,), 3.0))


def test_a_corrupt_checkpoint_is_detected_and_the_previous_one_used(tmp_path):
    s = CheckpointStore(tmp_path, keep=3)
    for step in (1, 2):
        s.save(step, {"w": torch.randn(100)})
    newest = tmp_path / s.entries()[-1]["file"]
    data = bytearray(newest.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    newest.write_bytes(bytes(data))
    fresh = CheckpointStore(tmp_path, keep=3)
    step, _ = fresh.load_latest()
    assert step == 1 and fresh.corrupt == [newest.name]


def test_a_truncated_checkpoint_is_detected_and_the_store_refuses_to_start_over(tmp_path):
    s = CheckpointStore(tmp_path)
    s.save(7, {"w": torch.randn(1000)})
    f = tmp_path / s.entries()[-1]["file"]
    f.write_bytes(f.read_bytes()[:100])
    with pytest.raises(st.CheckpointError, match="refusing to start again from step 0"):
        s.load_latest()  # not None: that would restart from step 0 in silence
    assert s.corrupt == [f.name] and f.exists()  # reported, and kept for inspection


def test_a_truncated_temp_file_is_ignored_and_swept(tmp_path):
    s = CheckpointStore(tmp_path)
    s.save(1, {"w": torch.arange(5.0)})
    tmp = st.temp_path_for(s.path_for(2))
    tmp.write_bytes(b"half a checkpoi")  # a writer killed before its rename
    assert s.temp_files() == [tmp]
    step, _ = s.load_latest()
    assert step == 1 and not s.corrupt
    assert s.sweep() == [tmp] and s.temp_files() == []


def test_an_unreadable_manifest_without_checkpoints_is_reported_loudly(tmp_path):
    s = CheckpointStore(tmp_path)
    (tmp_path / st.MANIFEST).write_text("{not json")
    with pytest.raises(st.CheckpointError, match="unreadable"):
        s.load_latest()
    assert st.MANIFEST in s.corrupt


def test_an_empty_directory_or_only_temp_files_is_a_fresh_start(tmp_path):
    s = CheckpointStore(tmp_path)
    assert s.load_latest() is None
    st.temp_path_for(s.path_for(1)).write_bytes(b"a first write, killed")
    assert s.load_latest() is None and not s.corrupt and s.recovered is None


def test_sweep_removes_only_the_stores_own_temp_files(tmp_path):
    s = CheckpointStore(tmp_path)
    s.save(1, {"w": torch.arange(5.0)})
    mine = [st.temp_path_for(s.path_for(2)), st.temp_path_for(tmp_path / st.MANIFEST)]
    others = [tmp_path / "notes.tmp-1", tmp_path / ".data.bin.tmp-7", tmp_path / "ckpt-x.pt"]
    for p in mine + others:
        p.write_bytes(b"x")
    assert s.sweep() == sorted(mine)
    assert all(p.exists() for p in others)


def test_rng_state_round_trip_repeats_the_same_draws():
    torch.manual_seed(1), np.random.seed(1), random.seed(1)
    state = st.capture_rng_state()
    first = (torch.rand(3), np.random.rand(3), random.random())
    st.restore_rng_state(state)
    again = (torch.rand(3), np.random.rand(3), random.random())
    assert torch.equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert first[2] == again[2]


def test_state_digest_sees_a_single_bit():
    a = {"w": torch.randn(10), "b": torch.zeros(2)}
    b = {k: v.clone() for k, v in a.items()}
    assert st.state_digest(a) == st.state_digest(b)
    b["w"].view(torch.int32)[3] ^= 1
    assert st.state_digest(a) != st.state_digest(b)
    with pytest.raises(ValueError):
        st.state_digest({"x": 1.0})


def test_bad_arguments_raise(tmp_path):
    with pytest.raises(ValueError, match="keep"):
        CheckpointStore(tmp_path, keep=0)
    with pytest.raises(ValueError, match="step"):
        CheckpointStore(tmp_path).save(-1, {})
    with pytest.raises(ValueError, match="data must be bytes"):
        CheckpointStore(tmp_path).save(1, {}, data="text")
    with pytest.raises(ValueError, match="not a torch.save payload"):
        CheckpointStore(tmp_path).save(1, {}, data=b"not a checkpoint")
    with pytest.raises(ValueError, match="step"):
        st.pack_checkpoint(-1, b"")
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_a_state_that_weights_only_would_refuse_is_refused_at_save(tmp_path):
    import fractions

    s = CheckpointStore(tmp_path)
    with pytest.raises(ValueError, match="fractions.Fraction"):
        s.save(1, {"lr": fractions.Fraction(1, 3)})
    assert list(tmp_path.iterdir()) == []


def test_loading_uses_weights_only_and_restores_numpys_generator(tmp_path, monkeypatch):
    np.random.seed(3), torch.manual_seed(3), random.seed(3)
    s = CheckpointStore(tmp_path)
    s.save(1, {"w": torch.arange(3.0), "rng": st.capture_rng_state()})
    want = (np.random.rand(4), torch.rand(2), random.random())
    seen = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: seen.append(k) or real(*a, **k))
    step, state = CheckpointStore(tmp_path).load_latest()
    assert step == 1 and seen and all(k.get("weights_only") is True for k in seen)
    st.restore_rng_state(state["rng"])  # numpy's state: an ndarray inside a tuple
    got = (np.random.rand(4), torch.rand(2), random.random())
    assert np.array_equal(got[0], want[0]) and torch.equal(got[1], want[1]) and got[2] == want[2]


def test_weights_only_refuses_a_pickled_object_even_if_its_checksum_is_right(tmp_path):
    import fractions

    payload = CheckpointStore.serialize({"x": fractions.Fraction(1, 3)})  # bypasses save
    blob = st.pack_checkpoint(1, payload)
    (tmp_path / "ckpt-000000001.pt").write_bytes(blob)
    with pytest.raises(st.CheckpointError, match="weights_only"):
        CheckpointStore(tmp_path).load_latest()
