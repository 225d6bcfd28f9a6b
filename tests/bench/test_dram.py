"""Tests of helpers.bench.dram: the random cycle visits every line once, the topology reader
parses the kernel's files (and a missing directory), the timers return sane rates."""

import numpy as np
import pytest

from helpers.bench import dram


@pytest.mark.parametrize("n", [2, 3, 17, 1000])
def test_random_cycle_is_one_cycle_through_every_line(n):
    a = dram.random_cycle(n, seed=n)
    seen, i = [], 0
    for _ in range(n):
        seen.append(int(i))
        i = a[i]
    assert i == 0 and sorted(seen) == list(range(0, 8 * n, 8))


def test_cpulist_parsing():
    assert dram.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert dram.parse_cpulist("") == []


def test_reads_a_two_node_topology(tmp_path):
    for k, cpus in enumerate(("0-1", "2-3")):
        d = tmp_path / f"node{k}"
        d.mkdir()
        (d / "cpulist").write_text(cpus + "\n")
        (d / "distance").write_text("10 21\n" if k == 0 else "21 10\n")
        (d / "meminfo").write_text(f"Node {k} MemTotal:       1024 kB\n")
    nodes = dram.numa_nodes(tmp_path)
    assert [n.node for n in nodes] == [0, 1]
    assert nodes[1].cpus == (2, 3) and nodes[0].distances == (10, 21)
    assert nodes[0].mem_total_bytes == 1024 * 1024
    assert dram.numa_nodes(tmp_path / "absent") == []


def test_this_machine_has_at_least_one_node_where_linux_reports_them():
    nodes = dram.numa_nodes()
    if nodes:
        assert all(n.distances[n.node] == 10 for n in nodes if n.distances)


def test_timers_return_positive_rates_and_check_results():
    r_read, read = dram.read_bandwidth(1 << 20, budget_s=0.02)
    r_copy, copy = dram.copy_bandwidth(1 << 20, budget_s=0.02)
    r_chase, step = dram.chase(1 << 14, steps=256, budget_s=0.02)
    assert read > 0 and copy > 0 and step > 0
    assert read == r_read.rate(2**20) and step == pytest.approx(r_chase.median_s / 256)
    # Sanity floors on the fastest repetition, which a busy machine cannot slow down unless it
    # disturbs every one: 1 MiB read or copied at over 100 MB/s, a chase step under 100 us.
    assert 2**20 / r_read.min_s > 1e8 and 2 * 2**20 / r_copy.min_s > 1e8
    assert r_chase.min_s / 256 < 1e-4
    with pytest.raises(ValueError):
        dram.random_cycle(1)
    with pytest.raises(ValueError):
        dram.read_bandwidth(4)
