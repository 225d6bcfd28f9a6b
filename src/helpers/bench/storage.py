"""Measuring file reads on this machine: the page cache, ``read`` against ``mmap``, cold
against warm, and the cost of deserialising a checkpoint.

Dropping the whole page cache (``echo 3 > /proc/sys/vm/drop_caches``) needs root. This module
does something narrower that any user may do: it asks the kernel to forget *one file's* clean
pages with ``posix_fadvise(..., POSIX_FADV_DONTNEED)``, and then checks with ``mincore`` how
much of the file is still resident, so a "cold" read is verified rather than assumed. Where
either call is missing (not Linux), :func:`evict` returns False and pages say so.

A cold read cannot be timed with :func:`helpers.bench.bench`, whose warm-up would warm the
cache; :func:`cold_read_times_s` evicts before every repetition and times each with the
monotonic clock, and reports every sample, as the book's timing rules ask.

Introduced in {ref}`sec-storage-and-model-loading`.

Used by: foundations/storage-and-model-loading.md, foundations/syscalls-and-profiling.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import pickle
import time
from pathlib import Path

import numpy as np

__all__ = ["write_test_file", "evict", "resident_fraction", "read_all", "mmap_touch",
           "cold_read_times_s", "write_checkpoint", "load_checkpoint_pickle",
           "load_checkpoint_mmap", "deserialize_pickle", "checksum", "PAGE_BYTES"]

PAGE_BYTES = mmap.PAGESIZE
_CHUNK = 8 * 2**20


def write_test_file(path: str | os.PathLike, n_bytes: int, *, seed: int = 0) -> Path:
    """Write ``n_bytes`` of random non-zero bytes to ``path`` and flush them to the device
    (``fsync``), so that its pages are clean and can be evicted."""
    if n_bytes < PAGE_BYTES:
        raise ValueError(f"n_bytes must be an integer >= {PAGE_BYTES}, got {n_bytes!r}")
    path = Path(path)
    rng = np.random.default_rng(seed)
    with open(path, "wb") as fh:
        left = int(n_bytes)
        while left:
            k = min(left, _CHUNK)
            fh.write(rng.integers(1, 256, k, dtype=np.uint8).tobytes())
            left -= k
        fh.flush()
        os.fsync(fh.fileno())
    return path


def evict(path: str | os.PathLike) -> bool:
    """Ask the kernel to drop ``path``'s clean pages from the page cache. True if the call
    exists; whether it worked is for :func:`resident_fraction` to say."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def _libc():
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name, use_errno=True)
        lib.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
        return lib
    except (OSError, AttributeError):
        return None


def resident_fraction(path: str | os.PathLike) -> float | None:
    """Fraction of ``path``'s pages in the page cache (``mincore``), or None if unknown."""
    lib = _libc()
    size = os.path.getsize(path)
    if lib is None or size == 0:
        return None
    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), size, prot=mmap.PROT_READ)
    try:
        view = np.frombuffer(mm, dtype=np.uint8)
        n_pages = (size + PAGE_BYTES - 1) // PAGE_BYTES
        vec = (ctypes.c_ubyte * n_pages)()
        rc = lib.mincore(ctypes.c_void_p(view.ctypes.data), ctypes.c_size_t(size), vec)
        del view
        if rc != 0:
            return None
        return float(np.count_nonzero(np.frombuffer(vec, dtype=np.uint8) & 1)) / n_pages
    finally:
        mm.close()


def read_all(path: str | os.PathLike, out: bytearray | None = None) -> bytearray:
    """Read the whole file with ``read`` system calls into a buffer (copying every byte out
    of the page cache)."""
    size = os.path.getsize(path)
    buf = bytearray(size) if out is None else out
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        off = 0
        while off < size:
            k = fh.readinto(view[off:off + _CHUNK])
            if not k:
                raise OSError(f"short read of {path} at byte {off}")
            off += k
    return buf


def mmap_touch(path: str | os.PathLike) -> int:
    """Map the file and touch one byte of every page (each first touch is a page fault that
    maps a page-cache page, copying nothing); returns the sum of the touched bytes."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), size, prot=mmap.PROT_READ)
    try:
        view = np.frombuffer(mm, dtype=np.uint8)
        total = int(view[::PAGE_BYTES].sum(dtype=np.int64))
        del view
        return total
    finally:
        mm.close()


def cold_read_times_s(path: str | os.PathLike, fn, *, repeats: int = 3) -> tuple[list, list]:
    """Evict ``path``, then time ``fn(path)`` with the monotonic clock, ``repeats`` times.
    Returns (times in s, resident fraction measured just before each timed call)."""
    times, before = [], []
    for _ in range(int(repeats)):
        evict(path)
        before.append(resident_fraction(path))
        t0 = time.perf_counter_ns()
        fn(path)
        times.append((time.perf_counter_ns() - t0) * 1e-9)
    return times, before


def write_checkpoint(directory: str | os.PathLike, n_bytes: int, *, n_tensors: int = 8,
                     seed: int = 0) -> dict:
    """Write one "checkpoint" of ``n_tensors`` float32 arrays (about ``n_bytes`` in all) in two
    formats: a pickle (as PyTorch's ``.bin`` files are) and raw ``.npy`` files that can be
    memory-mapped (as safetensors files can). Returns the paths and the arrays' checksum."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    per = max(1, int(n_bytes) // (4 * n_tensors))
    tensors = {f"layer{i}.weight": rng.standard_normal(per, dtype=np.float32)
               for i in range(n_tensors)}
    pkl = directory / "weights.pkl"
    with open(pkl, "wb") as fh:
        pickle.dump(tensors, fh, protocol=5)
        fh.flush()
        os.fsync(fh.fileno())
    npys = []
    for name, arr in tensors.items():
        p = directory / f"{name}.npy"
        np.save(p, arr)
        npys.append(p)
    checksum = float(sum(float(a[::997].sum(dtype=np.float64)) for a in tensors.values()))
    return {"pickle": pkl, "npy": npys, "checksum": checksum,
            "n_bytes": float(sum(a.nbytes for a in tensors.values()))}


def load_checkpoint_pickle(path: str | os.PathLike) -> dict:
    """Load the pickle checkpoint: read and copy every byte into new arrays."""
    with open(path, "rb") as fh:
        return pickle.load(fh)


def deserialize_pickle(blob: bytes) -> dict:
    """Rebuild the pickle checkpoint's arrays from bytes already in memory: the
    deserialisation stage alone, without reading the file."""
    return pickle.loads(blob)


def load_checkpoint_mmap(paths) -> dict:
    """Load the ``.npy`` checkpoint memory-mapped: no byte is read until a tensor is used."""
    return {Path(p).stem: np.load(p, mmap_mode="r") for p in paths}


def checksum(tensors: dict) -> float:
    """The same checksum :func:`write_checkpoint` returns, to check a load before timing it.
    (It touches one element in 997, so on a memory-mapped load it faults those pages in.)"""
    return float(sum(float(np.asarray(a)[::997].sum(dtype=np.float64)) for a in tensors.values()))

