"""Tests of helpers.bench.syscalls: call counting, /proc/self/io, chunked reads, the sampler."""

import os
import sys

import pytest

from helpers.bench import syscalls as sc
from helpers.models import syscalls as sm


def test_repeat_calls_calls_n_times():
    seen = []
    run = sc.repeat_calls(lambda: seen.append(1) or len(seen), 5)
    assert run() == 5 and len(seen) == 5
    with pytest.raises(ValueError):
        sc.repeat_calls(lambda: None, 0)


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/self/io")
def test_read_calls_are_counted_by_the_kernel(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"\x01" * 100_000)
    base0 = sc.proc_io()["syscr"]
    base1 = sc.proc_io()["syscr"]
    overhead = base1 - base0                     # the reads of /proc/self/io itself
    before = sc.proc_io()["syscr"]
    assert sc.read_in_chunks(p, 4096) == 100_000
    after = sc.proc_io()["syscr"]
    # ceil(N/c) reads with data, one more that returns end-of-file.
    assert after - before - overhead == sm.n_calls(100_000, 4096) + 1


def test_strace_counts_is_none_or_counts_the_calls():
    got = sc.strace_counts("import os\nfor _ in range(300): os.getppid()", timeout_s=60)
    if got is None:
        pytest.skip("strace missing or not permitted here")
    assert got.get("getppid", 0) >= 300


def test_sampler_sees_both_functions_in_about_the_right_share():
    with sc.SamplingProfiler(0.001) as sp:
        sc.two_phase_work(1_500_000, 0.5, slices=30)
    assert sys.getswitchinterval() == pytest.approx(0.005)   # restored
    n = sp.counts["work_a"] + sp.counts["work_b"]
    if n < 20:
        pytest.skip(f"only {n} samples on this busy machine")
    share = sp.share("work_a", among=("work_a", "work_b"))
    assert abs(share - 0.5) < 5 * sm.sampling_stderr(0.5, n)
    with pytest.raises(ValueError):
        sc.SamplingProfiler(0)
