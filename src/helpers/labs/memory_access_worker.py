"""The memory-access lab's hardware counters: its strided read counted by Nsight Compute.

``python -m helpers.labs.memory_access --counters --out DIR`` (or this module with the same
arguments) runs this module again as a child, ``python -m helpers.labs.memory_access_worker
--counted-reads``, under ``ncu --clock-control none`` (:mod:`helpers.profiling.ncu`), once per
group of :data:`COUNTER_GROUPS`. The child sums each read of :func:`counter_cases` once warm
and once inside the NVTX range :data:`NVTX_RANGE`, so ncu counts one launch per read, with the
caches flushed before each replayed pass (ncu's default ``--cache-control all``). The parent
writes ``DIR/memory_access_counters.json``: per read its layout, stride, element count and
counters (DRAM bytes and cycles, L2 sectors and misses, the kernel's time). The lab's page
reads the shipped file (:func:`counters_reference`).

The reads: every stride of the lab's sweep at its element count (the span grows with the
stride), the same strides and two sparser ones over one span (that of stride 16), and strides
16 and 64 over growing spans up to the whole buffer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers.bench import has_cuda
from helpers.labs import core
from helpers.labs.core import new_result
from helpers.labs.memory_access import (ELEMENT_BYTES, LAB, SPAN_STRIDE, STRIDES, _kernels,
                                        _rand, span_elements)

__all__ = ["COUNTERS_LAB", "NVTX_RANGE", "COUNTER_GROUPS", "COUNTER_LAYOUTS", "counter_cases",
           "measure_counters", "counters_reference", "main"]

#: The counters' record: a lab of its own name and file, read by this lab's page.
COUNTERS_LAB = core.Lab("memory_access_counters", pages=("labs/memory-access.md",),
                        sizes={"strides": ([1, 8], [1, 2, 4, 8, 16, 32, 64])})
#: The NVTX range that marks each counted read (ncu keeps only kernels launched inside it).
NVTX_RANGE = "book_counted_read"
#: Counter groups, each one ncu process: the first tells DRAM bytes from L2 traffic and time;
#: the second (L1 and L2 requests, the warps' waiting) is kept apart so that a metric this
#: ncu lacks loses only its own group.
COUNTER_GROUPS = {
    "bytes": ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
              "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "dram__cycles_elapsed.avg",
              "dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum"),
    "requests": ("dram__sectors_read.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
                 "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
                 "lts__t_requests_srcunit_tex_op_read.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                 "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
                 "sm__warps_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum"),
}
#: The two layouts counted at every stride, in launch order: the lab's sweep (same ``n``) and
#: the same span; a third, ``span_sweep``, follows (:func:`counter_cases`).
COUNTER_LAYOUTS = ("same_n", "same_span")
#: Seconds one ncu process may take.
COUNTER_TIMEOUT_S = 40.0


def counter_cases() -> list[dict]:
    """The reads counted, in launch order: every stride of :data:`COUNTERS_LAB` in each layout,
    with its element count (the full lab's sizes, whatever the size tier)."""
    n = LAB.size("strided_elements")
    span = n * SPAN_STRIDE * ELEMENT_BYTES
    cases = [{"layout": lay, "stride": s,
              "n_elements": n if lay == "same_n" else span_elements(span, s)}
             for lay in COUNTER_LAYOUTS for s in COUNTERS_LAB.size("strides")]
    # sparser than the lab's sweep, over the same span: fewer floats per DRAM row
    cases += [{"layout": "same_span", "stride": s, "n_elements": span_elements(span, s)}
              for s in (128, 256)]
    # the span alone: strides 16 and 64 (64 bytes per float each) over growing n, each up to
    # the buffer's whole span (n x 64 floats)
    return cases + [{"layout": "span_sweep", "stride": s, "n_elements": max(1, n * f // 64)}
                    for s in (16, 64) for f in (1, 4, 16, 64, 128, 256) if f * s <= 64 * 64]


def counted_reads() -> None:
    """The child of :func:`measure_counters`: each case once warm, then once inside the range."""
    import torch

    cases = counter_cases()
    k = _kernels()
    n = LAB.size("strided_elements")
    x = _rand(n * max(STRIDES), "cuda", None)
    partial = torch.empty(-(-max(c["n_elements"] for c in cases) // k.STRIDED_BLOCK),
                          dtype=torch.float32, device="cuda")
    for c in cases:
        k.strided_sum(x, c["n_elements"], c["stride"], partial)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(NVTX_RANGE)
        k.strided_sum(x, c["n_elements"], c["stride"], partial)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def measure_counters(out_dir, runner=None):
    """Count every case of :func:`counter_cases` under ncu, one process per counter group;
    write ``out_dir/memory_access_counters.json``. A group that fails is recorded, not fatal.

    ``runner`` (default :func:`helpers.profiling.ncu.run_ncu`) is called as
    ``runner(target, metrics=..., nvtx_range=..., kernel_regex=..., timeout_s=..., env=...)``
    and returns kernel rows.
    """
    from helpers.profiling import ncu

    if runner is None:
        if not has_cuda():
            raise SystemExit("memory_access --counters needs a CUDA GPU and Nsight Compute "
                             "(ncu); none is usable here, so nothing was measured.")
        runner = ncu.run_ncu
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cases = [dict(c, metrics={}) for c in counter_cases()]
    errors: dict = {}
    result = new_result(COUNTERS_LAB, "cuda" if runner is ncu.run_ncu else "cpu",
                        groups={g: list(m) for g, m in COUNTER_GROUPS.items()},
                        nvtx_range=NVTX_RANGE, element_bytes=ELEMENT_BYTES,
                        span_stride=SPAN_STRIDE, cache_control="ncu default (all: flushed "
                        "before each replayed pass)")
    result["measurements"].update(cases=cases, errors=errors)
    path = None
    for group, metrics in COUNTER_GROUPS.items():
        target = [sys.executable, "-m", "helpers.labs.memory_access_worker", "--counted-reads"]
        try:
            rows = runner(target, metrics=metrics, nvtx_range=NVTX_RANGE,
                          kernel_regex="strided_sum", timeout_s=COUNTER_TIMEOUT_S, env=env)
        except ncu.NcuNotFound:
            raise
        except Exception as exc:  # one failing group must not lose the other
            errors[group] = f"{type(exc).__name__}: {exc}"[:600]
            continue
        if len(rows) != len(cases):
            errors[group] = f"{len(rows)} kernels counted for {len(cases)} reads"
            continue
        for case, row in zip(cases, rows):
            case["metrics"].update({m: row.metrics.get(m) for m in metrics})
            case["kernel"] = row.kernel
        path = core.save_result(result, out_dir)  # after each group: a later one may time out
    return core.save_result(result, out_dir) if path is None or errors else path


def counters_reference() -> dict | None:
    """The shipped H200 counters (``labs/reference/h200/memory_access_counters.json``), or None."""
    return core.reference_or_none(COUNTERS_LAB.name)


def main(argv: list[str] | None = None) -> None:
    """``--counted-reads`` (the child under ncu) or ``--counters --out DIR`` (the parent)."""
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--counted-reads" in argv:
        counted_reads()
        return
    parser = argparse.ArgumentParser(prog="python -m helpers.labs.memory_access --counters",
                                     description="Count the strided read's bytes with ncu.")
    parser.add_argument("--counters", action="store_true")
    parser.add_argument("--out", required=True, help="directory for memory_access_counters.json")
    args = parser.parse_args(argv)
    path = measure_counters(args.out)
    print(f"memory_access_counters: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
