"""Cache probes: pointer-chase latency, a working-set sweep and a cache-line probe, on the CPU.

A cache shows itself only to code whose next load depends on the last one: then the processor
cannot overlap misses, and the time per load is the latency of the level that served it.
Python's interpreter costs tens of nanoseconds per step, more than an L1 or L2 hit, so the
chase loop is a few lines of C, compiled on first use with the system's C compiler (``cc``)
and called through :mod:`ctypes`. Where no compiler exists, :func:`available` says so and
the page prints one line instead of the measurement.

* :func:`chase_cycle` builds the chase: one 8-byte pointer in each 64-byte line of a buffer,
  linked in a random cyclic order (so the hardware prefetcher cannot guess the next line);
* :func:`chase_latency` times a chase over a working set (seconds per load);
* :func:`working_set_sweep` runs it over growing working sets: the knees are the cache sizes;
* :func:`line_probe` makes each step two dependent loads, the second ``offset_bytes`` past the
  first: while the offset stays inside the line the second load hits, beyond it a second miss
  is paid, which exposes the line size.

Timing goes through :func:`helpers.bench.bench`. Each probe checks its chase against a
NumPy reference (the node reached after a number of steps) before timing it.

Introduced in {ref}`sec-memory-hierarchy`.

References
----------
Drepper, U. (2007), "What every programmer should know about memory", section 3.3 (the
random pointer chase and its working-set curve). Bryant and O'Hallaron (2015), section 6.6
(the memory mountain).

Used by: foundations/memory-hierarchy.md, foundations/start-here.md.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..models._checks import positive, positive_int
from ..models.dram import CPU_LINE_BYTES
from .timing import BenchResult, bench

__all__ = ["available", "unavailable_reason", "chase_cycle", "follow", "chase_latency",
           "working_set_sweep", "line_probe", "ChasePoint", "CPU_LINE_BYTES"]

# The line size assumed when building a chase is CPU_LINE_BYTES (helpers.models.dram): one
# pointer per 64 bytes. If a machine's lines were longer, two pointers would share a line and
# the measured plateaus would be a little lower; line_probe measures the line size instead.
_WORD = 8  # bytes per int64 pointer

_SOURCE = r"""
#include <stdint.h>
/* Follow next[i] for `steps` steps from `start`; return the last node (so the loop is kept). */
int64_t chase(const int64_t *next, int64_t start, int64_t steps) {
    int64_t i = start;
    for (int64_t k = 0; k < steps; k++) i = next[i];
    return i;
}
/* Two dependent loads per step: a[i] holds the distance to the second word, which holds
   the next node. */
int64_t hop2(const int64_t *a, int64_t start, int64_t steps) {
    int64_t i = start;
    for (int64_t k = 0; k < steps; k++) { int64_t j = i + a[i]; i = a[j]; }
    return i;
}
"""

_LIB = None
_REASON: str | None = None


def _load():
    """Compile (once per source version, cached in the temp directory) and load the kernels."""
    global _LIB, _REASON
    if _LIB is not None or _REASON is not None:
        return _LIB
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        _REASON = "no C compiler (cc, gcc or clang) found"
        return None
    tag = hashlib.sha256(_SOURCE.encode()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"helpers-cache-probe-{tag}-{os.getuid()}.so"
    if not out.exists():
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "probe.c"
            src.write_text(_SOURCE)
            lib_tmp = Path(tmp) / "probe.so"
            try:
                subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib_tmp), str(src)],
                               check=True, capture_output=True, timeout=60)
            except (OSError, subprocess.SubprocessError) as exc:
                _REASON = f"compiling the probe with {cc} failed: {exc}"
                return None
            shutil.copy(lib_tmp, out.with_suffix(".tmp"))
            os.replace(out.with_suffix(".tmp"), out)
    lib = ctypes.CDLL(str(out))
    for name in ("chase", "hop2"):
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    _LIB = lib
    return lib


def available() -> bool:
    """True if the chase kernels compiled and loaded on this machine."""
    return _load() is not None


def unavailable_reason() -> str | None:
    """Why :func:`available` is False (None when it is True)."""
    _load()
    return _REASON


def _aligned_zeros(n_words: int, align_bytes: int = 4096) -> np.ndarray:
    """int64 zeros whose first element sits on an ``align_bytes`` boundary."""
    raw = np.zeros(n_words + align_bytes // _WORD, dtype=np.int64)
    skip = (-raw.ctypes.data % align_bytes) // _WORD
    out = raw[skip:skip + n_words]
    assert out.ctypes.data % align_bytes == 0
    return out


def chase_cycle(working_set_bytes: float, *, seed: int = 0) -> tuple[np.ndarray, int]:
    """A random cyclic chase through every 64-byte line of a ``working_set_bytes`` buffer.

    Returns ``(next, start)``: ``next`` is an int64 array (page-aligned) in which the first word
    of each line holds the index of the first word of the next line in the cycle; the other
    words are zero and never read. Following ``next`` from ``start`` visits every line once
    before returning to ``start``.

    >>> nxt, start = chase_cycle(64 * 8, seed=1)
    >>> seen, i = [], start
    >>> for _ in range(8):
    ...     seen.append(i); i = int(nxt[i])
    >>> sorted(seen) == list(range(0, 64, 8)) and i == start
    True
    """
    n_bytes = positive("working_set_bytes", working_set_bytes)
    n_lines = int(n_bytes // CPU_LINE_BYTES)
    if n_lines < 2:
        raise ValueError(f"working_set_bytes must hold at least two {CPU_LINE_BYTES}-byte lines, "
                         f"got {working_set_bytes!r}")
    per_line = CPU_LINE_BYTES // _WORD
    order = np.random.default_rng(seed).permutation(n_lines).astype(np.int64) * per_line
    nxt = _aligned_zeros(n_lines * per_line)
    nxt[order] = np.roll(order, -1)
    return nxt, int(order[0])


def follow(nxt: np.ndarray, start: int, steps: int) -> int:
    """The node reached after ``steps`` steps, computed in NumPy (the reference for the C loop)."""
    i = int(start)
    for _ in range(int(steps)):
        i = int(nxt[i])
    return i


@dataclass(frozen=True)
class ChasePoint:
    """One measurement: seconds per load at a working set (or at a second-load offset)."""

    working_set_bytes: float
    seconds_per_load: float
    steps: int
    result: BenchResult
    offset_bytes: float = 0.0


def _run(kernel: str, arr: np.ndarray, start: int, steps: int, budget_s: float) -> BenchResult:
    """Time ``steps`` steps per call; each call continues where the last one stopped, so the
    calls walk the whole cycle rather than repeating its first ``steps`` nodes."""
    lib = _load()
    if lib is None:
        raise RuntimeError(f"cache probes are unavailable: {_REASON}")
    fn = getattr(lib, kernel)
    ptr = arr.ctypes.data
    state = [int(start)]

    def step():
        state[0] = fn(ptr, state[0], steps)
        return state[0]

    return bench(step, device="cpu", name=kernel, warmup_s=min(0.05, budget_s / 4),
                 budget_s=budget_s, min_reps=5)


def chase_latency(working_set_bytes: float, *, steps: int = 1 << 18, budget_s: float = 0.2,
                  seed: int = 0) -> ChasePoint:
    """Seconds per dependent load of a random chase over ``working_set_bytes``.

    The chase is checked against :func:`follow` on a short prefix before timing. Before the
    timed calls, one whole pass over the cycle (plus :func:`bench`'s warm-up) puts the working
    set in whatever caches can hold it; successive calls continue along the cycle.
    """
    steps = positive_int("steps", steps)
    nxt, start = chase_cycle(working_set_bytes, seed=seed)
    lib = _load()
    if lib is None:
        raise RuntimeError(f"cache probes are unavailable: {_REASON}")
    probe_steps = min(steps, 1000)
    got = lib.chase(nxt.ctypes.data, start, probe_steps)
    want = follow(nxt, start, probe_steps)
    if got != want:
        raise RuntimeError(f"chase kernel reached node {got}, NumPy reference {want}")
    lib.chase(nxt.ctypes.data, start, nxt.size // (CPU_LINE_BYTES // _WORD))  # one warm pass
    result = _run("chase", nxt, start, steps, budget_s)
    return ChasePoint(float(working_set_bytes), result.median_s / steps, steps, result)


def working_set_sweep(sizes_bytes, *, steps: int = 1 << 18, budget_s: float = 0.15,
                      seed: int = 0) -> list[ChasePoint]:
    """:func:`chase_latency` at each working-set size (bytes)."""
    return [chase_latency(s, steps=steps, budget_s=budget_s, seed=seed) for s in sizes_bytes]


def line_probe(offset_bytes: float, *, region_bytes: float = 4096, n_regions: int = 16384,
               steps: int = 1 << 16, budget_s: float = 0.15, seed: int = 0) -> ChasePoint:
    """Seconds per step of a chase whose every step makes two dependent loads.

    The buffer is ``n_regions`` page-aligned regions of ``region_bytes``, visited in random
    order (a working set far beyond the private caches). In each region the first word holds
    the distance to a second word ``offset_bytes`` further on, and that word holds the next
    region. With the offset inside the first word's cache line the second load hits; beyond
    it the second load misses too, so the time per step jumps where the offset reaches the
    line size.
    """
    offset = int(positive("offset_bytes", offset_bytes))
    region = int(positive("region_bytes", region_bytes))
    n_regions = positive_int("n_regions", n_regions, minimum=2)
    steps = positive_int("steps", steps)
    if offset % _WORD or not 0 < offset < region:
        raise ValueError(f"offset_bytes must be a multiple of {_WORD} in (0, region_bytes="
                         f"{region}), got {offset_bytes!r}")
    if region % _WORD:
        raise ValueError(f"region_bytes must be a multiple of {_WORD}, got {region_bytes!r}")
    words = region // _WORD
    starts = np.random.default_rng(seed).permutation(n_regions).astype(np.int64) * words
    a = _aligned_zeros(n_regions * words)
    a[starts] = offset // _WORD
    a[starts + offset // _WORD] = np.roll(starts, -1)
    start = int(starts[0])
    lib = _load()
    if lib is None:
        raise RuntimeError(f"cache probes are unavailable: {_REASON}")
    i = start
    for _ in range(min(steps, 100)):
        i = int(a[i + int(a[i])])
    got = lib.hop2(a.ctypes.data, start, min(steps, 100))
    if got != i:
        raise RuntimeError(f"hop2 kernel reached node {got}, NumPy reference {i}")
    result = _run("hop2", a, start, steps, budget_s)
    return ChasePoint(float(n_regions * region), result.median_s / steps, steps, result,
                      offset_bytes=float(offset))
