"""Tests of helpers.bench.env: the environment recorded with every measurement."""

from __future__ import annotations

import json
import os
import re
from types import SimpleNamespace

import pytest

from helpers.bench import env


class TestCpuEnvironment:
    def test_keys_and_json(self):
        e = env.environment("cpu")
        for key in ("date_utc", "commit", "platform", "cpu", "usable_cores", "cpu_caches_bytes",
                    "omp_num_threads", "torch_threads", "clock", "device", "python", "numpy",
                    "torch", "triton"):
            assert key in e
        assert e["device"] == "cpu"
        json.dumps(e)  # JSON-ready
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", e["date_utc"])
        assert "cuda_runtime" not in e

    def test_usable_cores_is_the_affinity_mask(self):
        n = env.usable_cores()
        assert 1 <= n <= (os.cpu_count() or n)
        if hasattr(os, "sched_getaffinity"):
            assert n == len(os.sched_getaffinity(0))

    def test_cpu_model_is_a_name(self):
        assert isinstance(env.cpu_model(), str) and env.cpu_model()

    def test_commit(self):
        c = env.git_commit()
        assert c is None or re.fullmatch(r"[0-9a-f]{12}", c)

    def test_commit_without_git(self, monkeypatch):
        monkeypatch.setattr(env.shutil, "which", lambda name: None)
        assert env.git_commit() is None

    def test_run_returns_none_on_failure(self):
        assert env._run(["false"]) is None
        assert env._run(["/no/such/program"]) is None


class TestCaches:
    def _fake_sysfs(self, root, entries):
        for i, (level, kind, size) in enumerate(entries):
            d = root / f"index{i}"
            d.mkdir()
            (d / "level").write_text(f"{level}\n")
            (d / "type").write_text(f"{kind}\n")
            (d / "size").write_text(f"{size}\n")

    def test_parses_linux_sysfs(self, tmp_path):
        self._fake_sysfs(tmp_path, [(1, "Data", "48K"), (1, "Instruction", "32K"),
                                    (2, "Unified", "2048K"), (3, "Unified", "480M")])
        sizes = env.cache_sizes_bytes(tmp_path)
        assert sizes == {"L1d": 48 * 1024, "L1i": 32 * 1024, "L2": 2 * 1024**2,
                         "L3": 480 * 1024**2}

    def test_skips_unreadable_entries(self, tmp_path):
        self._fake_sysfs(tmp_path, [(2, "Unified", "lots")])
        (tmp_path / "index9").mkdir()
        assert env.cache_sizes_bytes(tmp_path) == {}
        assert env.cache_sizes_bytes(tmp_path / "missing") == {}

    def test_llc_is_the_highest_level(self, monkeypatch):
        monkeypatch.setattr(env, "cache_sizes_bytes",
                            lambda: {"L1d": 1, "L2": 2048, "L3": 1 << 25})
        assert env.llc_bytes() == 1 << 25
        monkeypatch.setattr(env, "cache_sizes_bytes", lambda: {})
        assert env.llc_bytes() is None

    @pytest.mark.parametrize("text,expected", [("48K", 49152), ("2M", 2 << 20), ("1G", 1 << 30),
                                               ("512", 512), ("x", None), ("", None)])
    def test_parse_size(self, text, expected):
        assert env._parse_size(text) == expected


class TestCudaEnvironment:
    """The CUDA branch, with torch.cuda's queries and nvidia-smi replaced by fakes."""

    @pytest.fixture
    def fake_gpu(self, monkeypatch):
        torch = pytest.importorskip("torch")
        asked = {}

        def props(idx):
            asked["props"] = idx
            return SimpleNamespace(name="NVIDIA H200", multi_processor_count=132,
                                   total_memory=150754820096, major=9, minor=0)

        def smi(cmd, timeout=5.0):
            asked["smi"] = cmd
            return "580.159.04, 1980, 3201, 1980, 700.00, 35"

        monkeypatch.setattr(torch.cuda, "get_device_properties", props)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(env, "_run", smi)
        return asked

    def test_device_fields(self, fake_gpu):
        e = env.environment("cuda:2")
        assert fake_gpu["props"] == 2 and "--id=2" in fake_gpu["smi"]
        assert e["device_name"] == "NVIDIA H200" and e["sm_count"] == 132
        assert e["compute_capability"] == "9.0" and e["cuda_runtime"] == "13.0"
        assert e["driver"] == "580.159.04" and e["sm_clock_mhz"] == "1980"
        assert e["power_limit_w"] == "700.00" and e["cuda_index"] == 2
        json.dumps(e)

    def test_plain_cuda_means_the_current_device(self, fake_gpu):
        assert env.environment("cuda")["cuda_index"] == 0

    def test_without_nvidia_smi(self, fake_gpu, monkeypatch):
        monkeypatch.setattr(env, "_run", lambda cmd, timeout=5.0: None)
        e = env.environment("cuda:0")
        assert e["device_name"] == "NVIDIA H200" and "driver" not in e

    @pytest.mark.parametrize("bad", ["cuda:", "cuda:x", "gpu:0", "cpu"])
    def test_bad_index(self, bad):
        with pytest.raises(ValueError, match="cuda"):
            env.cuda_index(bad)
