"""Pipe counters of the attention kernels: which SM units the fused kernel keeps busy.

A second hardware-counter record next to :mod:`helpers.labs.attention_counters` (bytes): for a
few cases of the attention lab (the fused Triton kernel at d = 64 and d = 128, with and without
the causal mask, in the launch configuration the lab's H200 reference chose, and SDPA for
contrast) one warm call runs under ``ncu --clock-control none`` (:mod:`helpers.profiling.ncu`)
and the counters of :data:`PIPE_METRICS` are read: instructions issued per pipe (``xu``, the
special-function unit that computes ``exp2``; ``fma``, ``alu``; the tensor pipe's active
cycles), the elapsed SM cycles (hence the clock), the registers and shared memory per program
and the occupancy limits, and a few stall ratios. The Triton kernel's own metadata (registers,
spills, shared memory) is recorded from the compiled kernel as well.

Run on a CUDA GPU with Nsight Compute as
``python -m helpers.labs.attention_pipes --out DIR``; it writes ``DIR/attention_pipes.json``
after every case (so a run cut short keeps the cases it finished) and ``DIR/attention_pipes_raw/``
(each case's ncu output, verbatim). A metric this ncu does not know is dropped (and recorded
as such), the others are kept.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from helpers.labs import core
from helpers.labs.core import new_result

__all__ = ["PIPES_LAB", "PIPE_METRICS", "NVTX_RANGE", "pipe_cases", "case_arg", "parse_case",
           "pipes_entry", "measure_pipes", "pipes_reference", "main"]

#: The record's lab name and pages (its reference is ``labs/reference/h200/attention_pipes.json``).
PIPES_LAB = core.Lab("attention_pipes", pages=("labs/attention.md",
                                               "chapters/fusion-and-attention.md"))

#: The NVTX range around the counted call.
NVTX_RANGE = "book_pipes_call"

#: The counters asked for (those this ncu does not list are dropped at run time).
PIPE_METRICS = (
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.max",
    "gpc__cycles_elapsed.max", "sm__cycles_active.avg", "sm__cycles_elapsed.avg.per_second",
    "smsp__inst_executed.sum", "smsp__inst_executed_pipe_xu.sum",
    "smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_fmaheavy.sum",
    "smsp__inst_executed_pipe_alu.sum", "smsp__inst_executed_pipe_fp16.sum",
    "smsp__inst_executed_pipe_lsu.sum", "smsp__inst_executed_pipe_uniform.sum",
    "smsp__inst_executed_pipe_cbu.sum", "smsp__inst_executed_pipe_adu.sum",
    "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_xu.sum",
    "sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_gmma_cycles_active.avg",
    "sm__pipe_tensor_op_hmma_cycles_active.avg",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    "smsp__issue_active.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__registers_per_thread", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks", "launch__waves_per_multiprocessor", "launch__grid_size",
    "launch__block_size", "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_throttle_per_issue_active.ratio",
)

#: The fallback when ncu fails without naming a metric: the pipe counts the model needs.
SAFE_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max",
                "smsp__inst_executed.sum", "smsp__inst_executed_pipe_xu.sum",
                "smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_alu.sum",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
                "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active")

#: Seconds one case's ncu process may take, and the whole run (no case starts after it).
CASE_TIMEOUT_S = 28.0
RUN_BUDGET_S = 50.0
#: Tokens (batch x N) and model width of every case: the attention lab's full sizes.
TOKENS, HIDDEN = 16384, 2048


def pipe_cases() -> list[dict]:
    """The counted cases, most wanted first: the fused kernel in the configurations the lab's
    shipped H200 reference chose (d = 64: 128 x 64 blocks, 8 warps, 4 stages; d = 128: 128 x 128
    blocks, 3 stages, and 128 x 64 causal), at N = 4096, then SDPA, then short sequences."""
    def case(impl, d, n, causal, bm=0, bn=0, warps=0, stages=0):
        return {"impl": impl, "head_dim": d, "seq_len": n, "causal": causal,
                "batch": max(1, TOKENS // n), "n_heads": HIDDEN // d,
                "config": ({"block_m": bm, "block_n": bn, "num_warps": warps,
                            "num_stages": stages} if impl == "fused" else None)}

    return [case("fused", 64, 4096, False, 128, 64, 8, 4),
            case("fused", 128, 4096, False, 128, 128, 8, 3),
            case("sdpa", 64, 4096, False),
            case("fused", 128, 4096, True, 128, 64, 8, 3),
            case("fused", 64, 4096, True, 128, 64, 8, 4),
            case("sdpa", 128, 4096, False),
            case("fused", 64, 512, False, 128, 64, 8, 4),
            case("fused", 128, 512, False, 128, 128, 8, 3)]


def case_arg(case: dict) -> str:
    """A case as one command-line word (:func:`parse_case` reads it back).

    >>> c = pipe_cases()[0]
    >>> case_arg(c)
    'fused,64,4096,0,128,64,8,4'
    >>> parse_case(case_arg(c)) == c
    True
    """
    cfg = case["config"] or {}
    return ",".join(str(x) for x in (case["impl"], case["head_dim"], case["seq_len"],
                                     int(case["causal"]), cfg.get("block_m", 0),
                                     cfg.get("block_n", 0), cfg.get("num_warps", 0),
                                     cfg.get("num_stages", 0)))


def parse_case(spec: str) -> dict:
    """The case of a :func:`case_arg` word."""
    parts = spec.split(",")
    if len(parts) != 8 or parts[0] not in ("fused", "sdpa"):
        raise ValueError(f"spec must be impl,d,n,causal,bm,bn,warps,stages, got {spec!r}")
    impl = parts[0]
    d, n, causal, bm, bn, warps, stages = (int(x) for x in parts[1:])
    return {"impl": impl, "head_dim": d, "seq_len": n, "causal": bool(causal),
            "batch": max(1, TOKENS // n), "n_heads": HIDDEN // d,
            "config": ({"block_m": bm, "block_n": bn, "num_warps": warps,
                        "num_stages": stages} if impl == "fused" else None)}


class _Keep:
    """Stands in for the Triton kernel in ``kern.attention(kernel=...)``: launches the real one
    and keeps the compiled kernel that the launch returns."""

    def __init__(self, fn):
        self.fn, self.compiled = fn, None

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.compiled = self.fn[grid](*args, **kwargs)
            return self.compiled
        return launch


def _compiled_meta(compiled) -> dict:
    out = {}
    for key in ("n_regs", "n_spills", "n_max_threads"):
        v = getattr(compiled, key, None)
        if isinstance(v, (int, float)):
            out[key] = v
    meta = getattr(compiled, "metadata", None)
    for key in ("shared", "num_warps", "num_stages", "num_ctas"):
        v = getattr(meta, key, None) if meta is not None else None
        if isinstance(v, (int, float)):
            out[key] = v
    return out


def _counted_call(spec: str) -> None:
    """The child under ncu: one warm call (compile), then one inside :data:`NVTX_RANGE`; prints
    one ``BOOK_META`` line with the Triton kernel's registers, spills and shared memory."""
    import torch
    import torch.nn.functional as F

    case = parse_case(spec)
    d, n, causal = case["head_dim"], case["seq_len"], case["causal"]
    gen = torch.Generator().manual_seed(7)
    shape = (case["batch"], case["n_heads"], n, d)
    q, k, v = (torch.randn(shape, generator=gen).to("cuda", torch.bfloat16) for _ in range(3))
    meta: dict = {}
    if case["impl"] == "fused":
        from helpers.kernels import attention as kern

        keep = _Keep(kern.attention_fwd_kernel)
        fn = (lambda: kern.attention(q, k, v, causal=causal, kernel=keep, **case["config"]))
    else:
        keep = None
        fn = (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    fn()
    torch.cuda.synchronize()
    if keep is not None and keep.compiled is not None:
        try:
            meta = _compiled_meta(keep.compiled)
        except Exception as exc:  # metadata is extra evidence; never fail the count for it
            meta = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    print("BOOK_META " + json.dumps(meta), flush=True)
    torch.cuda.nvtx.range_push(NVTX_RANGE)
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def pipes_entry(case: dict, text: str | None = None, error: str | None = None,
                dropped: list[str] | None = None) -> dict:
    """One case's record from the ncu output ``text`` (kernels' metrics, summed counters and the
    child's ``BOOK_META`` line), or its error."""
    from helpers.profiling import ncu

    entry = dict(case)
    if dropped:
        entry["dropped_metrics"] = list(dropped)
    if error is not None:
        entry["error"] = error[:600]
    if text is None:
        return entry
    for line in text.splitlines():
        if line.startswith("BOOK_META "):
            entry["triton_meta"] = json.loads(line[len("BOOK_META "):])
    rows = ncu.parse_csv(text, keep_unknown_units=True)
    entry["kernels"] = [{"name": r.kernel[:160], "block_size": r.block_size,
                         "grid_size": r.grid_size, "metrics": r.metrics,
                         "units": r.units} for r in rows]
    return entry


def _run_case(case: dict, metrics: list[str], env: dict, raw_dir: Path) -> dict:
    """ncu on one case, dropping (up to a few) metrics ncu says it cannot find."""
    from helpers.profiling import ncu

    target = [sys.executable, "-m", "helpers.labs.attention_pipes", "--pipes-call",
              case_arg(case)]
    dropped: list[str] = []
    metrics = list(metrics)
    errors = []
    for _ in range(4):
        try:
            text = ncu.run_ncu_text(target, metrics=metrics, nvtx_range=NVTX_RANGE,
                                    timeout_s=CASE_TIMEOUT_S, env=env, print_units="base")
        except ncu.NcuNotFound:
            raise
        except ncu.NcuError as exc:
            errors.append(str(exc)[:300])
            bad = ncu.missing_metric(str(exc))
            if bad and bad in metrics:
                metrics.remove(bad)
                dropped.append(bad)
                continue
            if "ran past" not in str(exc) and len(metrics) > len(SAFE_METRICS):
                # an error that names no metric: fall back to the counters surely known
                dropped += [m for m in metrics if m not in SAFE_METRICS]
                metrics = [m for m in metrics if m in SAFE_METRICS] or list(SAFE_METRICS)
                continue
            return pipes_entry(case, error=" | ".join(errors), dropped=dropped)
        (raw_dir / f"{case_arg(case).replace(',', '_')}.txt").write_text(text)
        try:
            entry = pipes_entry(case, text, dropped=dropped)
        except Exception as exc:
            entry = pipes_entry(case, error=f"parse: {type(exc).__name__}: {exc}",
                                dropped=dropped)
        if errors:
            entry["retried_after"] = errors
        return entry
    return pipes_entry(case, error="too many unknown metrics", dropped=dropped)


def measure_pipes(out_dir, cases: list[dict] | None = None) -> Path:
    """Count each case under ncu; write ``out_dir/attention_pipes.json`` after every case."""
    import shutil
    import subprocess

    from helpers.profiling import ncu

    start = time.monotonic()
    out = Path(out_dir)
    raw_dir = out / "attention_pipes_raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    cases = pipe_cases() if cases is None else cases
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    metrics = list(PIPE_METRICS)
    known = None
    exe = shutil.which("ncu")
    if exe is None:
        raise SystemExit("attention_pipes needs Nsight Compute (ncu) on PATH; nothing measured.")
    try:
        q = subprocess.run([exe, "--query-metrics"], capture_output=True, text=True, timeout=20)
        (raw_dir / "query_metrics.txt").write_text(q.stdout + q.stderr)
        names = ncu.query_metric_names(q.stdout)
        if len(names) > 100:
            known = names
    except Exception as exc:
        (raw_dir / "query_metrics.txt").write_text(f"failed: {exc}")
    unlisted = []
    if known is not None:
        keep = [m for m in metrics if m.startswith("launch__") or ncu.base_name(m) in known]
        unlisted = [m for m in metrics if m not in keep]
        metrics = keep
    result = new_result(PIPES_LAB, "cuda", metrics_asked=list(PIPE_METRICS),
                        metrics_unlisted=unlisted, nvtx_range=NVTX_RANGE, tokens=TOKENS,
                        hidden=HIDDEN)
    result["measurements"]["cases"] = entries = []
    path = core.save_result(result, out)
    for case in cases:
        if time.monotonic() - start > RUN_BUDGET_S:
            entries.append(dict(case, error="skipped: the run's time budget was spent"))
            continue
        entries.append(_run_case(case, metrics, env, raw_dir))
        entries[-1]["elapsed_s"] = round(time.monotonic() - start, 1)
        path = core.save_result(result, out)
        print(f"attention_pipes: {case_arg(case)} done at {entries[-1]['elapsed_s']} s",
              file=sys.stderr, flush=True)
    return core.save_result(result, out)


def pipes_reference() -> dict | None:
    """The shipped H200 pipe counters (``labs/reference/h200/attention_pipes.json``), or None."""
    return core.reference_or_none(PIPES_LAB.name)


def main(argv: list[str] | None = None) -> None:
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--pipes-call" in argv:
        _counted_call(argv[argv.index("--pipes-call") + 1])
        return
    parser = argparse.ArgumentParser(prog="python -m helpers.labs.attention_pipes",
                                     description="Count the attention kernels' pipe use with ncu.")
    parser.add_argument("--out", required=True, help="directory for attention_pipes.json")
    args = parser.parse_args(argv)
    path = measure_pipes(args.out)
    print(f"attention_pipes: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
