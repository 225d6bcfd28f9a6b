"""Tests of helpers.bench.sizes: the one switch for problem sizes."""

from __future__ import annotations

import sys

import pytest

from helpers.bench import sizes


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(sizes, "has_cuda", lambda: False)


@pytest.fixture
def a_gpu(monkeypatch):
    monkeypatch.setattr(sizes, "has_cuda", lambda: True)


@pytest.mark.parametrize("value,tier", [("small", "small"), ("full", "full"), (" Small ", "small"),
                                        ("FULL", "full")])
def test_explicit_tier(monkeypatch, no_gpu, value, tier):
    monkeypatch.setenv(sizes.SIZE_ENV, value)
    assert sizes.size_tier() == tier
    assert sizes.pick(small=1, full=2) == (1 if tier == "small" else 2)


def test_unset_follows_the_hardware(monkeypatch, no_gpu):
    monkeypatch.delenv(sizes.SIZE_ENV, raising=False)
    assert sizes.size_tier() == "small"


def test_unset_on_a_gpu_is_full(monkeypatch, a_gpu):
    monkeypatch.delenv(sizes.SIZE_ENV, raising=False)
    assert sizes.size_tier() == "full"
    monkeypatch.setenv(sizes.SIZE_ENV, "small")
    assert sizes.size_tier() == "small"  # the variable wins over the hardware


def test_empty_value_is_unset(monkeypatch, no_gpu):
    monkeypatch.setenv(sizes.SIZE_ENV, "")
    assert sizes.size_tier() == "small"


@pytest.mark.parametrize("value", ["medium", "0", "tiny"])
def test_bad_value(monkeypatch, value):
    monkeypatch.setenv(sizes.SIZE_ENV, value)
    with pytest.raises(ValueError, match=sizes.SIZE_ENV):
        sizes.size_tier()
    with pytest.raises(ValueError):
        sizes.pick(small=1, full=2)


def test_pick_is_keyword_only():
    with pytest.raises(TypeError):
        sizes.pick(1, 2)


def test_force_cpu_hides_a_gpu(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv(sizes.FORCE_CPU_ENV, raising=False)
    assert sizes.has_cuda() is True
    monkeypatch.setenv(sizes.FORCE_CPU_ENV, "1")
    assert sizes.has_cuda() is False


def test_no_torch_means_no_cuda(monkeypatch):
    monkeypatch.delenv(sizes.FORCE_CPU_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert sizes.has_cuda() is False


def test_real_answer_matches_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv(sizes.FORCE_CPU_ENV, raising=False)
    assert sizes.has_cuda() == torch.cuda.is_available()


def test_use_tier_overrides_the_environment_and_restores_it(monkeypatch, no_gpu):
    monkeypatch.setenv(sizes.SIZE_ENV, "small")
    with sizes.use_tier("full"):
        assert sizes.size_tier() == "full" and sizes.pick(small=1, full=2) == 2
        assert sizes.forced_tier() == "full"
        with sizes.use_tier("small"):
            assert sizes.size_tier() == "small"
        with sizes.use_tier(None):   # None keeps what is in force
            assert sizes.size_tier() == "full"
        assert sizes.size_tier() == "full"
    assert sizes.size_tier() == "small" and sizes.forced_tier() is None
    import os
    assert os.environ[sizes.SIZE_ENV] == "small"   # never written


def test_use_tier_refuses_an_unknown_tier():
    with pytest.raises(ValueError, match="tier must be one of"):
        with sizes.use_tier("medium"):
            pass
    assert sizes.forced_tier() is None
