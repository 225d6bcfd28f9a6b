"""What a process can learn about its own container: CPU counts, the cgroup's CPU quota and
memory limit, its namespaces, and how often it was throttled. Plus a GIL-free CPU-bound
workload for measuring what a thread pool of a given size achieves.

Reads Linux's files (``/proc/self/cgroup``, ``/sys/fs/cgroup``, ``/proc/self/ns``) and
understands both cgroup versions:

* **v2** (one unified hierarchy): ``cpu.max`` holds ``"$MAX $PERIOD"`` in microseconds,
  ``max`` meaning no quota; ``memory.max`` holds bytes or ``max``; ``cpu.stat`` counts
  ``nr_throttled`` periods and ``throttled_usec``.
* **v1** (one hierarchy per controller): ``cpu/cpu.cfs_quota_us`` (-1 for none) and
  ``cpu/cpu.cfs_period_us``; ``memory/memory.limit_in_bytes`` (a huge number for none);
  ``cpu/cpu.stat`` counts ``nr_throttled`` and ``throttled_time`` (ns).

Every reader returns ``None`` for what it cannot find rather than guessing, and records the
file it read. Introduced in {ref}`sec-containers-and-cgroups`.

Used by: foundations/containers-and-cgroups.md.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CgroupLimits", "parse_proc_cgroup", "read_cgroup_limits", "read_cpu_stat",
           "namespaces", "host_memory_bytes", "HashWork", "busy_cpus"]

# v1 reports "no memory limit" as the largest page-aligned signed 64-bit number.
_V1_UNLIMITED_BYTES = 2**62


@dataclass(frozen=True)
class CgroupLimits:
    """The limits the process's cgroup sets; ``None`` where there is none or it is unreadable."""

    version: str                 # "v2", "v1" or "none"
    cpu_quota_s: float | None    # quota per period, s of CPU time (None: no quota)
    cpu_period_s: float | None   # s
    memory_limit_bytes: float | None
    cpuset: str | None           # e.g. "0-3", from cpuset.cpus(.effective)
    sources: dict = field(default_factory=dict)  # what -> file read

    @property
    def quota_cpus(self) -> float:
        """The quota in CPUs (``inf`` without a quota)."""
        if self.cpu_quota_s is None or not self.cpu_period_s:
            return math.inf
        return self.cpu_quota_s / self.cpu_period_s


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """Map each controller (``""`` for the v2 hierarchy) to the process's cgroup path.

    >>> parse_proc_cgroup("0::/user.slice\\n4:memory:/docker/ab\\n3:cpu,cpuacct:/docker/ab\\n")
    {'': '/user.slice', 'memory': '/docker/ab', 'cpu': '/docker/ab', 'cpuacct': '/docker/ab'}
    """
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for name in (controllers.split(",") if controllers else [""]):
            out[name] = path
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _first(candidates) -> tuple[str | None, Path | None]:
    for p in candidates:
        text = _read(p)
        if text is not None:
            return text, p
    return None, None


def _dirs(base: Path, rel: str | None) -> list[Path]:
    """The process's own cgroup directory first (if mounted), then the mount's root, which is
    the process's cgroup when the container has its own cgroup namespace."""
    out = []
    if rel and rel != "/":
        out.append(base / rel.lstrip("/"))
    out.append(base)
    return out


def read_cgroup_limits(root: str | os.PathLike = "/sys/fs/cgroup",
                       proc_cgroup: str | os.PathLike = "/proc/self/cgroup") -> CgroupLimits:
    """Read the CPU quota, memory limit and cpuset of this process's cgroup (v2 or v1)."""
    root = Path(root)
    paths = parse_proc_cgroup(_read(Path(proc_cgroup)) or "")
    src: dict[str, str] = {}
    if (root / "cgroup.controllers").exists():  # a pure v2 mount
        base = _dirs(root, paths.get(""))
        text, p = _first(d / "cpu.max" for d in base)
        quota = period = None
        if text:
            src["cpu"] = str(p)
            q, _, per = text.partition(" ")
            period = int(per) * 1e-6 if per else 0.1
            quota = None if q == "max" else int(q) * 1e-6
        mtext, mp = _first(d / "memory.max" for d in base)
        mem = None
        if mtext:
            src["memory"] = str(mp)
            mem = None if mtext == "max" else float(mtext)
        ctext, cp = _first(d / n for d in base for n in ("cpuset.cpus.effective", "cpuset.cpus"))
        if ctext:
            src["cpuset"] = str(cp)
        return CgroupLimits("v2", quota, period, mem, ctext or None, src)
    if (root / "cpu").is_dir() or (root / "memory").is_dir():  # v1 (or hybrid)
        cpu_dirs = _dirs(root / "cpu", paths.get("cpu"))
        qtext, qp = _first(d / "cpu.cfs_quota_us" for d in cpu_dirs)
        ptext, _ = _first(d / "cpu.cfs_period_us" for d in cpu_dirs)
        quota = period = None
        if qtext is not None:
            src["cpu"] = str(qp)
            period = int(ptext) * 1e-6 if ptext else 0.1
            quota = None if int(qtext) < 0 else int(qtext) * 1e-6
        mtext, mp = _first(d / "memory.limit_in_bytes"
                           for d in _dirs(root / "memory", paths.get("memory")))
        mem = None
        if mtext is not None:
            src["memory"] = str(mp)
            mem = None if int(mtext) >= _V1_UNLIMITED_BYTES else float(mtext)
        ctext, cp = _first(d / n for d in _dirs(root / "cpuset", paths.get("cpuset"))
                           for n in ("cpuset.effective_cpus", "cpuset.cpus"))
        if ctext:
            src["cpuset"] = str(cp)
        return CgroupLimits("v1", quota, period, mem, ctext or None, src)
    return CgroupLimits("none", None, None, None, None, src)


def read_cpu_stat(root: str | os.PathLike = "/sys/fs/cgroup",
                  proc_cgroup: str | os.PathLike = "/proc/self/cgroup") -> dict[str, float]:
    """The cgroup's throttling counters: ``nr_periods``, ``nr_throttled`` and
    ``throttled_s`` (converted from v2's ``throttled_usec`` or v1's ``throttled_time`` in ns).
    Empty if there is no ``cpu.stat`` with them."""
    root = Path(root)
    paths = parse_proc_cgroup(_read(Path(proc_cgroup)) or "")
    if (root / "cgroup.controllers").exists():
        cands = [d / "cpu.stat" for d in _dirs(root, paths.get(""))]
    else:
        cands = [d / "cpu.stat" for d in _dirs(root / "cpu", paths.get("cpu"))]
    for p in cands:
        text = _read(p)
        if not text:
            continue
        kv = {}
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            try:
                kv[k] = float(v)
            except ValueError:
                continue
        if "nr_throttled" not in kv:
            continue
        out = {"nr_periods": kv.get("nr_periods", 0.0), "nr_throttled": kv["nr_throttled"]}
        if "throttled_usec" in kv:
            out["throttled_s"] = kv["throttled_usec"] * 1e-6
        elif "throttled_time" in kv:
            out["throttled_s"] = kv["throttled_time"] * 1e-9
        return out
    return {}


def namespaces(proc_ns: str | os.PathLike = "/proc/self/ns") -> dict[str, str]:
    """Each namespace this process is in, by kind, as the kernel names it (``"net:[4026...]"``).

    Two processes share a namespace exactly when these names are equal; from inside a
    container there is no way to see the host's names, so the list does not say whether the
    process is containerised."""
    out = {}
    d = Path(proc_ns)
    try:
        entries = sorted(d.iterdir())
    except OSError:
        return out
    for p in entries:
        try:
            out[p.name] = os.readlink(p)
        except OSError:
            continue
    return out


def host_memory_bytes(meminfo: str | os.PathLike = "/proc/meminfo") -> float | None:
    """``MemTotal`` from ``/proc/meminfo`` in bytes: the host's (or VM's) memory, which a
    container sees whatever its cgroup limit."""
    text = _read(Path(meminfo))
    if not text:
        return None
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            return float(parts[1]) * 1024.0  # the kernel writes kB meaning KiB
    return None


@dataclass
class HashWork:
    """CPU-bound work that runs in parallel on Python threads: SHA-256 of ``n_tasks``
    buffers of ``task_bytes`` each. ``hashlib`` releases the GIL while hashing large
    buffers, so threads can use several cores at once, as a tokenizer or a C++ operator
    called from a Python server does.

    ``run(threads)`` hashes every buffer on a pool of ``threads`` threads and returns the
    digests (so a benchmark can check them against :meth:`reference`).
    """

    n_tasks: int
    task_bytes: int
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_tasks < 1 or self.task_bytes < 4096:
            raise ValueError(f"need n_tasks >= 1 and task_bytes >= 4096, got "
                             f"{self.n_tasks}, {self.task_bytes}")
        # Distinct, non-zero contents (the book never times all-zero inputs).
        base = hashlib.sha256(str(self.seed).encode()).digest() * (self.task_bytes // 32 + 1)
        self._bufs = [bytes([i % 251 + 1]) + base[1:self.task_bytes] for i in range(self.n_tasks)]

    @staticmethod
    def _digest(buf: bytes) -> bytes:
        return hashlib.sha256(buf).digest()

    def reference(self) -> list[bytes]:
        """The digests computed serially."""
        return [self._digest(b) for b in self._bufs]

    def check(self, digests) -> None:
        """Raise ``ValueError`` unless ``digests`` are the serial reference's."""
        if not hasattr(self, "_ref"):
            self._ref = self.reference()
        if list(digests) != self._ref:
            raise ValueError("the pool's digests differ from the serial reference")

    def run(self, threads: int) -> list[bytes]:
        if threads < 1:
            raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(self._digest, self._bufs))

    @property
    def total_bytes(self) -> float:
        return float(self.n_tasks * self.task_bytes)


def busy_cpus(fn, *, min_s: float = 0.2) -> float:
    """CPUs this process kept busy while running ``fn()`` repeatedly for at least ``min_s``
    seconds: its CPU time (user + system, all threads) over the wall time. One thread
    spinning gives about 1; a pool that keeps c cores busy gives about c; a throttled or
    waiting process gives less."""
    if not (min_s > 0 and math.isfinite(min_s)):
        raise ValueError(f"min_s must be a finite number in (0, inf), got {min_s!r}")
    cpu0, t0 = time.process_time(), time.perf_counter()
    while True:
        fn()
        wall = time.perf_counter() - t0
        if wall >= min_s:
            return (time.process_time() - cpu0) / wall
