"""Measuring virtual memory on this machine ({ref}`sec-virtual-memory`).

* :func:`page_size_bytes`, :func:`thp_mode` and :func:`rss_bytes`: what the kernel reports
  (the base page, the transparent-huge-page policy, this process's resident memory);
* :func:`minor_faults`: this process's count of page faults served without I/O;
* :func:`first_touch`: the time and the fault count of writing one byte in every page of fresh
  anonymous memory, optionally with a huge-page hint (``madvise(MADV_HUGEPAGE)``), timed with
  :func:`helpers.bench.bench`; :func:`retouch`: the same writes to memory already mapped.

Used by: foundations/virtual-memory.md.
"""

from __future__ import annotations

import mmap
import os
import re
import resource
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .timing import BenchResult, bench

__all__ = ["page_size_bytes", "thp_mode", "rss_bytes", "minor_faults", "FirstTouch",
           "first_touch", "retouch"]

THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"


def page_size_bytes() -> int:
    """The base page size the kernel uses for this process (bytes)."""
    return int(os.sysconf("SC_PAGE_SIZE"))


def thp_mode(path: str | os.PathLike = THP_ENABLED) -> str | None:
    """The bracketed choice of ``always [madvise] never``; None where the file is absent."""
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else None


def rss_bytes(path: str | os.PathLike = "/proc/self/status") -> float | None:
    """This process's resident set (``VmRSS``) in bytes; None where not reported."""
    try:
        m = re.search(r"VmRSS:\s+(\d+)\s*kB", Path(path).read_text())
    except OSError:
        return None
    return float(m.group(1)) * 1024 if m else None


def minor_faults() -> int:
    """Minor page faults this process has taken so far (``getrusage``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _touch(n_bytes: int, huge: bool, stride: int) -> int:
    """Map fresh memory, write one byte per ``stride``, unmap; return the faults taken."""
    m = mmap.mmap(-1, n_bytes)
    try:
        if huge and hasattr(mmap, "MADV_HUGEPAGE"):
            m.madvise(mmap.MADV_HUGEPAGE)
        a = np.frombuffer(m, dtype=np.uint8)
        f0 = minor_faults()
        a[::stride] = 1
        faults = minor_faults() - f0
        del a
    finally:
        m.close()
    return faults


@dataclass(frozen=True)
class FirstTouch:
    """A first-touch measurement: the timing, the faults of one call, the pages written."""

    result: BenchResult
    faults: int
    pages: int

    @property
    def s_per_fault(self) -> float:
        return self.result.median_s / max(self.faults, 1)

    @property
    def s_per_page(self) -> float:
        return self.result.median_s / self.pages


def first_touch(n_bytes: float, *, huge: bool = False, budget_s: float = 0.3) -> FirstTouch:
    """Time mapping ``n_bytes`` of fresh memory and writing one byte in each base page."""
    page = page_size_bytes()
    n = int(n_bytes) // page * page
    if n < page:
        raise ValueError(f"n_bytes must be at least one page ({page} bytes), got {n_bytes!r}")
    faults = _touch(n, huge, page)  # counted on a call of its own, outside the timing
    r = bench(lambda: _touch(n, huge, page), name=f"first touch {n} B huge={huge}",
              warmup_s=0.01, budget_s=budget_s, min_reps=5, env=False)
    return FirstTouch(result=r, faults=faults, pages=n // page)


def retouch(n_bytes: float, *, budget_s: float = 0.2) -> tuple[BenchResult, int]:
    """Time the same per-page writes on memory that is already mapped; (result, pages)."""
    page = page_size_bytes()
    n = int(n_bytes) // page * page
    if n < page:
        raise ValueError(f"n_bytes must be at least one page ({page} bytes), got {n_bytes!r}")
    m = mmap.mmap(-1, n)
    a = np.frombuffer(m, dtype=np.uint8)
    a[::page] = 1  # fault everything in first

    def run():
        a[::page] += 1

    r = bench(run, name=f"retouch {n} B", warmup_s=0.01, budget_s=budget_s, env=False)
    return r, n // page
