"""Tests of helpers.bench.cgroups: the readers on fake v1 and v2 trees and on this machine,
and the thread-pool workload."""

import math
import os
import sys

import pytest

from helpers.bench import cgroups as cgb


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_parse_proc_cgroup_maps_each_controller():
    got = cgb.parse_proc_cgroup("0::/a\n3:cpu,cpuacct:/b\n\nbroken line\n")
    assert got == {"": "/a", "cpu": "/b", "cpuacct": "/b"}


def test_v2_tree_with_a_quota(tmp_path):
    root = tmp_path / "cg"
    _write(root / "cgroup.controllers", "cpu memory\n")
    _write(root / "pod" / "cpu.max", "400000 100000\n")
    _write(root / "pod" / "memory.max", "8589934592\n")
    _write(root / "pod" / "cpuset.cpus.effective", "0-127\n")
    _write(root / "pod" / "cpu.stat", "usage_usec 9\nnr_periods 50\nnr_throttled 20\n"
           "throttled_usec 1500000\n")
    _write(tmp_path / "self", "0::/pod\n")
    lim = cgb.read_cgroup_limits(root, tmp_path / "self")
    assert lim.version == "v2"
    assert lim.cpu_quota_s == pytest.approx(0.4) and lim.cpu_period_s == pytest.approx(0.1)
    assert lim.quota_cpus == pytest.approx(4.0)
    assert lim.memory_limit_bytes == 8 * 2**30 and lim.cpuset == "0-127"
    assert lim.sources["cpu"].endswith("pod/cpu.max")
    st = cgb.read_cpu_stat(root, tmp_path / "self")
    assert st == {"nr_periods": 50, "nr_throttled": 20, "throttled_s": pytest.approx(1.5)}


def test_v2_tree_without_limits_reads_max(tmp_path):
    root = tmp_path / "cg"
    _write(root / "cgroup.controllers", "cpu\n")
    _write(root / "cpu.max", "max 100000\n")
    _write(root / "memory.max", "max\n")
    lim = cgb.read_cgroup_limits(root, tmp_path / "missing")
    assert lim.cpu_quota_s is None and lim.quota_cpus == math.inf
    assert lim.memory_limit_bytes is None


def test_v1_tree(tmp_path):
    root = tmp_path / "cg"
    _write(root / "cpu" / "cpu.cfs_quota_us", "150000\n")
    _write(root / "cpu" / "cpu.cfs_period_us", "100000\n")
    _write(root / "cpu" / "cpu.stat", "nr_periods 10\nnr_throttled 4\nthrottled_time 2000000000\n")
    _write(root / "memory" / "docker" / "x" / "memory.limit_in_bytes", "1073741824\n")
    _write(tmp_path / "self", "4:memory:/docker/x\n1:cpu:/\n")
    lim = cgb.read_cgroup_limits(root, tmp_path / "self")
    assert lim.version == "v1" and lim.quota_cpus == pytest.approx(1.5)
    assert lim.memory_limit_bytes == 2**30
    assert cgb.read_cpu_stat(root, tmp_path / "self")["throttled_s"] == pytest.approx(2.0)
    _write(root / "cpu" / "cpu.cfs_quota_us", "-1\n")
    _write(root / "memory" / "docker" / "x" / "memory.limit_in_bytes", "9223372036854771712\n")
    lim = cgb.read_cgroup_limits(root, tmp_path / "self")
    assert lim.cpu_quota_s is None and lim.memory_limit_bytes is None


def test_no_cgroup_filesystem(tmp_path):
    lim = cgb.read_cgroup_limits(tmp_path, tmp_path / "none")
    assert lim.version == "none" and lim.quota_cpus == math.inf
    assert cgb.read_cpu_stat(tmp_path, tmp_path / "none") == {}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc and /sys")
def test_this_machine_reads_consistently():
    lim = cgb.read_cgroup_limits()
    assert lim.version in ("v1", "v2", "none")
    assert lim.quota_cpus > 0
    assert "net" in cgb.namespaces()
    mem = cgb.host_memory_bytes()
    assert mem is not None and mem > 2**26
    if lim.memory_limit_bytes is not None:
        assert lim.memory_limit_bytes > 0
    assert len(os.sched_getaffinity(0)) <= os.cpu_count()


def test_hash_work_is_correct_on_any_pool_size():
    w = cgb.HashWork(n_tasks=6, task_bytes=8192)
    ref = w.reference()
    assert len(set(ref)) == 6  # distinct buffers, distinct digests
    for threads in (1, 2, 5, 16):
        assert w.run(threads) == ref
    assert w.total_bytes == 6 * 8192
    w.check(w.run(3))
    with pytest.raises(ValueError, match="differ"):
        w.check(ref[::-1])
    with pytest.raises(ValueError):
        w.run(0)
    with pytest.raises(ValueError):
        cgb.HashWork(n_tasks=0, task_bytes=8192)


def test_busy_cpus_tells_spinning_from_sleeping():
    import time
    spin = cgb.busy_cpus(lambda: sum(range(20_000)), min_s=0.1)
    sleep = cgb.busy_cpus(lambda: time.sleep(0.01), min_s=0.1)
    # CPU time over wall time: load only lowers both (a process cannot use more than one CPU
    # per thread, nor a sleeper much at all). The spinner's floor asks only for a tenth of a
    # CPU, which a machine keeps unless some 20 runnable tasks share each core.
    assert sleep < 0.05 and 0.1 < spin < 1.5
    with pytest.raises(ValueError):
        cgb.busy_cpus(lambda: None, min_s=0)


def test_busy_cpus_is_cpu_time_over_wall_time(monkeypatch):
    # Exactly, on fake clocks: work burning 3 ms of CPU per 4 ms of wall time is 0.75 busy;
    class Clocks:
        cpu_s = wall_s = 0.0

        def process_time(self):
            return self.cpu_s

        def perf_counter(self):
            return self.wall_s

    clocks = Clocks()

    def work():
        clocks.cpu_s += 0.003
        clocks.wall_s += 0.004

    monkeypatch.setattr(cgb, "time", clocks)
    # 26 calls reach 104 ms of wall time, past min_s: the ratio uses the wall time measured
    assert cgb.busy_cpus(work, min_s=0.101) == pytest.approx(0.75, rel=1e-9)
