"""The collectives lab's gloo worker: the point-to-point collective algorithms, timed.

Runs every algorithm of :mod:`helpers.distributed.algorithms` on gloo groups of
:data:`~helpers.distributed.algorithms.RANKS` CPU processes (one thread each), each rank's
result checked exactly against a single-process reference before it is timed
(:func:`~helpers.distributed.algorithms.measure_rank`), and writes
``collective_algorithms.json``::

    python -m helpers.labs.collectives_gloo_worker --out DIR [--size small|full] [--ranks 2,4]
                                                   [--keep-memory]

It is a second runner of the collectives lab (``chapters/collectives.md`` shows its result),
with no lab record of its own: the result is a CPU measurement (the H200 machine's host cores),
shipped under ``labs/reference/h200/gloo-cpu/``, not beside the GPU references.
"""

from __future__ import annotations

import argparse
import os
import sys

from helpers.distributed.algorithms import NAME, RANKS, measure_rank, sizes_bytes
from helpers.bench.sizes import SIZE_ENV
from helpers.labs.core import REFERENCE_DIR, load_result, new_result, save_result

__all__ = ["run", "main", "REFERENCE_FILE", "reference_or_none", "KEEP_MEMORY_ENV",
           "DEFAULT_MALLOC_FILE"]

#: glibc settings of ``--keep-memory``: blocks up to 16 MiB (above every buffer of the run;
#: glibc accepts at most 32 MiB) come from the heap, and freed memory is never handed back to
#: the kernel, so a buffer allocated in every call reuses pages already faulted in.
KEEP_MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": str(16 * 2**20),
                   "MALLOC_TRIM_THRESHOLD_": str(2**40)}
#: The shipped run on the H200 machine's host CPUs (``--keep-memory``).
REFERENCE_FILE = REFERENCE_DIR / "gloo-cpu" / f"{NAME}.json"
#: The same commit's run of 2 ranks with glibc's default allocator, beside it as evidence.
DEFAULT_MALLOC_FILE = REFERENCE_DIR / "gloo-cpu" / "default-malloc" / f"{NAME}.json"


def run(ranks=RANKS, sizes=None, reps: int = 11, timeout_s: float = 120.0,
        out_dir=None) -> dict:
    """Every algorithm on gloo groups of ``ranks`` processes (one thread each): the result
    dict for ``collective_algorithms.json`` (provenance from :func:`helpers.labs.core.new_result`).
    With ``out_dir`` the file is rewritten after each group, so a run stopped early keeps the
    groups it finished."""
    from helpers.distributed.launch import spawn

    sizes = list(sizes or sizes_bytes())
    import torch

    host_gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    result = new_result(NAME, "cpu", ranks=list(ranks), sizes_bytes=sizes, reps=reps,
                        backend="gloo", threads_per_rank=1, cpu_count=os.cpu_count(),
                        host_gpu=host_gpu,
                        malloc_env={k: os.environ[k] for k in KEEP_MEMORY_ENV if k in os.environ})
    groups = []
    for p in ranks:
        per_rank = spawn(measure_rank, p, "gloo", args=(sizes,), kwargs={"reps": reps},
                         timeout_s=timeout_s, threads_per_rank=1)
        first = per_rank[0]
        for nm, entries in first["algorithms"].items():
            for i, e in enumerate(entries):
                meds = [pr["algorithms"][nm][i]["median_s"] for pr in per_rank]
                e["rank_medians_s"] = meds
                e["max_rank_median_s"] = max(meds)
        groups.append({"ranks": p, "algorithms": first["algorithms"], "gamma": first["gamma"],
                       "copy": first["copy"], "probe": first.get("probe")})
        result["measurements"]["gloo"] = groups
        if out_dir is not None:
            save_result(result, out_dir)
        print(f"{NAME}: {p} ranks done", file=sys.stderr)
    return result


def reference_or_none(path=None) -> dict | None:
    """The shipped run (:data:`REFERENCE_FILE`), or None, with one line, when it is absent."""
    path = REFERENCE_FILE if path is None else path
    if not path.exists():
        print("gloo algorithm run on the H200 machine's CPUs not measured yet.")
        return None
    return load_result(path)


def main(argv=None):
    """``python -m helpers.labs.collectives_gloo_worker --out DIR [--size small|full]``."""
    ap = argparse.ArgumentParser(prog="python -m helpers.labs.collectives_gloo_worker")
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", choices=("small", "full"), default=None)
    ap.add_argument("--ranks", default=None, help="comma-separated rank counts")
    ap.add_argument("--keep-memory", action="store_true",
                    help="ranks keep freed memory (glibc: no mmap, no trim), so a buffer "
                         "allocated anew in each call is not faulted in again")
    args = ap.parse_args(argv)
    if args.size:
        os.environ[SIZE_ENV] = args.size
    if args.keep_memory:  # read by glibc when each spawned rank starts
        os.environ.update(KEEP_MEMORY_ENV)
    ranks = tuple(int(v) for v in args.ranks.split(",")) if args.ranks else RANKS
    path = save_result(run(ranks=ranks, out_dir=args.out), args.out)
    print(f"{NAME}: wrote {path}", file=sys.stderr)
    return path


if __name__ == "__main__":
    main()
