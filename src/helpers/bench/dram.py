"""Measuring DRAM on this machine, and reading its NUMA topology ({ref}`sec-dram-and-numa`).

* :func:`read_bandwidth` and :func:`copy_bandwidth`: streaming throughput of NumPy over a
  buffer far larger than the caches, timed with :func:`helpers.bench.bench`;
* :func:`chase` : the time per step of a dependent chase through a random cycle, from Python.
  One step costs the interpreter's overhead plus one load that cannot start before the
  previous one finished; the difference between a buffer that fits in L1 and one that does not
  fit in any cache is the extra latency of a load served from far away;
* :func:`numa_nodes`: the nodes, their CPUs, memory and distances, as
  ``/sys/devices/system/node`` reports them (empty where the directory is absent).

Used by: foundations/dram-and-numa.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .timing import BenchResult, bench

__all__ = ["read_bandwidth", "copy_bandwidth", "random_cycle", "chase", "NumaNode",
           "numa_nodes", "parse_cpulist"]

NODE_ROOT = "/sys/devices/system/node"


def _buffer(n_bytes: float, seed: int) -> np.ndarray:
    n = int(n_bytes) // 8
    if n < 1:
        raise ValueError(f"n_bytes must be >= 8, got {n_bytes!r}")
    return np.random.default_rng(seed).random(n)  # never time on all-zero data


def read_bandwidth(n_bytes: float, *, budget_s: float = 0.2, seed: int = 0
                   ) -> tuple[BenchResult, float]:
    """Time ``a.sum()`` over ``n_bytes`` of float64; returns (result, bytes read per second)."""
    a = _buffer(n_bytes, seed)
    expect = float(np.sum(a, dtype=np.float64))
    def check(got):
        if not np.isclose(got, expect):
            raise AssertionError(f"sum is {got!r}, expected {expect!r}")

    r = bench(lambda: a.sum(), name=f"read {a.nbytes} B", warmup_s=0.02, budget_s=budget_s,
              check=check, env=False)
    return r, r.rate(a.nbytes)


def copy_bandwidth(n_bytes: float, *, budget_s: float = 0.2, seed: int = 0
                   ) -> tuple[BenchResult, float]:
    """Time ``np.copyto(b, a)``; returns (result, bytes moved per second, counting the read and
    the write: 2 x ``n_bytes``)."""
    a = _buffer(n_bytes, seed)
    b = np.empty_like(a)
    b.fill(1.0)  # touch the destination first, so page faults are not timed

    def run():
        np.copyto(b, a)
        return b

    def check(got):
        if not np.array_equal(got, a):
            raise AssertionError("the copy differs from its source")

    r = bench(run, name=f"copy {a.nbytes} B", warmup_s=0.02, budget_s=budget_s, check=check,
              env=False)
    return r, r.rate(2 * a.nbytes)


def random_cycle(n: int, *, stride: int = 8, seed: int = 0) -> np.ndarray:
    """An int64 array of ``n * stride`` slots in which, starting at 0, ``i = a[i]`` visits every
    ``stride``-th slot once in random order and returns to 0 (a random permutation, each slot linked to the next).

    With ``stride=8`` each visited slot is in its own 64-byte line.
    """
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n!r}")
    # Visit the slots in a random order and link each to the next: one cycle through all n.
    perm = np.random.default_rng(seed).permutation(n)
    a = np.zeros(n * stride, dtype=np.int64)
    a[perm * stride] = np.roll(perm, -1) * stride
    return a


def chase(n_bytes: float, *, steps: int = 1 << 15, budget_s: float = 0.2, seed: int = 0
          ) -> tuple[BenchResult, float]:
    """Time ``steps`` dependent loads ``i = a[i]`` through a random cycle over ``n_bytes``
    (one load per 64-byte line). Returns (result, seconds per step)."""
    n = max(2, int(n_bytes) // 64)
    a = random_cycle(n, seed=seed)
    item = a.item

    def run():
        i = 0
        for _ in range(steps):
            i = item(i)
        return i

    r = bench(run, name=f"chase {n * 64} B", warmup_s=0.02, budget_s=budget_s, env=False)
    return r, r.median_s / steps


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8,10-11"`` -> ``[0, 1, 2, 3, 8, 10, 11]`` (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


@dataclass(frozen=True)
class NumaNode:
    """One NUMA node as the kernel reports it."""

    node: int
    cpus: tuple[int, ...]
    mem_total_bytes: float | None
    distances: tuple[int, ...]  # to node 0, 1, ... (SLIT units: 10 is local)


def numa_nodes(root: str | os.PathLike = NODE_ROOT) -> list[NumaNode]:
    """The NUMA nodes under ``root``; an empty list where the kernel exposes none."""
    root = Path(root)
    nodes = []
    if not root.is_dir():
        return nodes
    for d in sorted(root.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        def read(name):
            try:
                return (d / name).read_text()
            except OSError:
                return ""
        mem = re.search(r"MemTotal:\s+(\d+)\s*kB", read("meminfo"))
        nodes.append(NumaNode(
            node=int(d.name[4:]),
            cpus=tuple(parse_cpulist(read("cpulist"))),
            mem_total_bytes=float(mem.group(1)) * 1024 if mem else None,
            distances=tuple(int(x) for x in read("distance").split())))
    return nodes
