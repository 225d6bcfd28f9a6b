"""Pipe counters of the attention kernels: which SM units the fused kernel keeps busy.

A second hardware-counter record next to :mod:`helpers.labs.attention.counters` (bytes): for a
few cases of the attention lab (the fused Triton kernel at d = 64 and d = 128, with and without
the causal mask, in the launch configuration the lab's H200 reference chose, and SDPA for
contrast) one warm call runs under ``ncu --clock-control none`` (:mod:`helpers.profiling.ncu`)
and the counters of :data:`PIPE_METRICS` are read: instructions issued per pipe (``xu``, the
special-function unit that computes ``exp2``; ``fma``, ``alu``; the tensor pipe's active
cycles), the elapsed SM cycles (hence the clock), the registers and shared memory per program
and the occupancy limits, and a few stall ratios. The Triton kernel's own metadata (registers,
spills, shared memory) is recorded from the compiled kernel as well.

Run on a CUDA GPU with Nsight Compute as
``python -m helpers.labs.attention.pipes --out DIR``; it writes ``DIR/attention_pipes.json``
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
           "pipes_entries", "measure_pipes", "sustained_clocks", "pipes_reference", "main"]

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
CASE_TIMEOUT_S = 45.0
RUN_BUDGET_S = 60.0
#: Tokens (batch x N) and model width of every case: the attention lab's full sizes.
TOKENS, HIDDEN = 16384, 2048


def pipe_cases() -> list[dict]:
    """The counted cases: the fused kernel in the configurations the lab's shipped H200
    reference chose (d = 64: 128 x 64 blocks, 8 warps, 4 stages; d = 128: 128 x 128 blocks and
    3 stages without a mask, 128 x 64 with it), at short and long sequences, causal and not;
    then SDPA at N = 4096 for contrast. The fused cases run in one process (one kernel each),
    each SDPA case in its own."""
    def case(impl, d, n, causal, bm=0, bn=0, warps=0, stages=0):
        return {"impl": impl, "head_dim": d, "seq_len": n, "causal": causal,
                "batch": max(1, TOKENS // n), "n_heads": HIDDEN // d,
                "config": ({"block_m": bm, "block_n": bn, "num_warps": warps,
                            "num_stages": stages} if impl == "fused" else None)}

    fused = []
    for n in (4096, 512, 1024, 16384):
        fused += [case("fused", 64, n, False, 128, 64, 8, 4),
                  case("fused", 128, n, False, 128, 128, 8, 3)]
    for n in (4096, 512):
        fused += [case("fused", 64, n, True, 128, 64, 8, 4),
                  case("fused", 128, n, True, 128, 64, 8, 3)]
    return fused + [case("sdpa", 64, 4096, False), case("sdpa", 128, 4096, False)]


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


def _make_call(case: dict):
    """Inputs on the GPU and a call of the case's kernel (and the launch keeper, for fused)."""
    import torch
    import torch.nn.functional as F

    d, n, causal = case["head_dim"], case["seq_len"], case["causal"]
    gen = torch.Generator().manual_seed(7)
    shape = (case["batch"], case["n_heads"], n, d)
    q, k, v = (torch.randn(shape, generator=gen).to("cuda", torch.bfloat16) for _ in range(3))
    if case["impl"] == "fused":
        from helpers.kernels import attention as kern

        keep = _Keep(kern.attention_fwd_kernel)
        return (lambda: kern.attention(q, k, v, causal=causal, kernel=keep, **case["config"])), keep
    return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), None


def _counted_call(specs: str) -> None:
    """The child under ncu, for each case of ``specs`` (``;``-separated :func:`case_arg`
    words) in order: one warm call (compile), a ``BOOK_META`` line with the Triton kernel's
    registers, spills and shared memory, then one call inside :data:`NVTX_RANGE`."""
    import torch

    for spec in specs.split(";"):
        case = parse_case(spec)
        fn, keep = _make_call(case)
        fn()
        torch.cuda.synchronize()
        meta: dict = {"case": spec}
        if keep is not None and keep.compiled is not None:
            try:
                meta.update(_compiled_meta(keep.compiled))
            except Exception as exc:  # metadata is extra evidence; never fail the count for it
                meta["error"] = f"{type(exc).__name__}: {exc}"[:200]
        print("BOOK_META " + json.dumps(meta), flush=True)
        torch.cuda.nvtx.range_push(NVTX_RANGE)
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        del fn, keep
        torch.cuda.empty_cache()


def pipes_entries(cases: list[dict], text: str | None = None, error: str | None = None,
                  dropped: list[str] | None = None) -> list[dict]:
    """The records of ``cases``, counted in one ncu process whose output is ``text``: the
    i-th kernel launch in the range and the i-th ``BOOK_META`` line belong to the i-th case
    (each case's call launches one kernel; a different count is recorded as an error)."""
    from helpers.profiling import ncu

    entries = [dict(c) for c in cases]
    for e in entries:
        if dropped:
            e["dropped_metrics"] = list(dropped)
        if error is not None:
            e["error"] = error[:600]
    if text is None:
        return entries
    metas = [json.loads(line[len("BOOK_META "):]) for line in text.splitlines()
             if line.startswith("BOOK_META ")]
    rows = ncu.parse_csv(text, keep_unknown_units=True)
    kernels = [{"name": r.kernel[:160], "block_size": r.block_size, "grid_size": r.grid_size,
                "metrics": r.metrics, "units": r.units} for r in rows]
    if len(rows) != len(cases):
        entries[0]["all_kernels"] = kernels
        for e in entries:
            e["error"] = (f"ncu profiled {len(rows)} kernels for {len(cases)} cases; all are "
                          f"kept in the first case's all_kernels")
        return entries
    for e, k, m in zip(entries, kernels, metas + [None] * (len(entries) - len(metas))):
        e["kernels"] = [k]
        if m is not None:
            e["triton_meta"] = m
    return entries


def _run_group(cases: list[dict], metrics: list[str], env: dict, raw_dir: Path,
               timeout_s: float) -> list[dict]:
    """ncu on one process counting ``cases``, dropping metrics ncu says it cannot find."""
    from helpers.profiling import ncu

    words = ";".join(case_arg(c) for c in cases)
    target = [sys.executable, "-m", "helpers.labs.attention.pipes", "--pipes-call", words]
    dropped: list[str] = []
    metrics = list(metrics)
    errors = []
    for _ in range(4):
        try:
            text = ncu.run_ncu_text(target, metrics=metrics, nvtx_range=NVTX_RANGE,
                                    timeout_s=timeout_s, env=env, print_units="base")
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
            return pipes_entries(cases, error=" | ".join(errors), dropped=dropped)
        (raw_dir / f"{case_arg(cases[0]).replace(',', '_')}_x{len(cases)}.txt").write_text(text)
        try:
            entries = pipes_entries(cases, text, dropped=dropped)
        except Exception as exc:
            entries = pipes_entries(cases, error=f"parse: {type(exc).__name__}: {exc}",
                                    dropped=dropped)
        if errors:
            for e in entries:
                e["retried_after"] = errors
        return entries
    return pipes_entries(cases, error="too many unknown metrics", dropped=dropped)


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
    src = str(Path(__file__).resolve().parents[3])
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
    groups = [[c for c in cases if c["impl"] == "fused"]] + [[c] for c in cases
                                                             if c["impl"] != "fused"]
    for group in (g for g in groups if g):
        left = RUN_BUDGET_S - (time.monotonic() - start)
        if left < 8:
            entries += [dict(c, error="skipped: the run's time budget was spent") for c in group]
            continue
        got = _run_group(group, metrics, env, raw_dir, min(CASE_TIMEOUT_S, left))
        left = RUN_BUDGET_S - (time.monotonic() - start)
        if len(group) > 1 and all("error" in e for e in got) and left > 20:
            # the one process failed: count the two most wanted cases on their own
            got = [e for c in group[:2] for e in _run_group([c], metrics, env, raw_dir,
                                                              min(CASE_TIMEOUT_S, left / 2))] + got[2:]
        entries += got
        entries[-1]["elapsed_s"] = round(time.monotonic() - start, 1)
        path = core.save_result(result, out)
        print(f"attention_pipes: {len(group)} case(s) from {case_arg(group[0])} done at "
              f"{entries[-1]['elapsed_s']} s", file=sys.stderr, flush=True)
    left = RUN_BUDGET_S + 15 - (time.monotonic() - start)
    sus = [c for c in cases if c["impl"] == "fused" and c["seq_len"] == 4096 and not c["causal"]]
    if left > 4 * len(sus):
        result["measurements"]["sustained"] = sustained_clocks(sus, seconds=min(2.0, left / 4))
    else:
        result["measurements"]["sustained"] = [dict(c, error="skipped: no time left") for c in sus]
    return core.save_result(result, out)


def sustained_clocks(cases: list[dict], seconds: float = 2.0) -> list[dict]:
    """Each case's kernel run back to back for ``seconds`` while ``nvidia-smi`` samples the SM
    clock and the power every 100 ms: the clock the kernel runs at under sustained load (ncu's
    single counted call sees the clock of a short burst), with the calls' median time by CUDA
    events. Samples of the first quarter (the ramp) are dropped."""
    import shutil
    import statistics
    import subprocess

    import torch

    smi = shutil.which("nvidia-smi")
    out = []
    for case in cases:
        entry = dict(case)
        try:
            fn, _ = _make_call(case)
            fn()
            torch.cuda.synchronize()
            proc = (subprocess.Popen([smi, "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                      "--format=csv,noheader,nounits", "-lms", "100"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    if smi else None)
            times = []
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for _ in range(5):
                    fn()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) / 5 * 1e-3)
            if proc is not None:
                proc.terminate()
                text = proc.communicate(timeout=5)[0]
                samples = []
                for line in text.splitlines():
                    parts = [x.strip() for x in line.split(",")]
                    try:
                        samples.append([float(x) for x in parts[:3]])
                    except ValueError:
                        continue
                keep = samples[len(samples) // 4:]
                entry["smi_samples"] = samples[:60]
                if keep:
                    entry["sm_clock_mhz_median"] = statistics.median(x[0] for x in keep)
                    entry["power_w_median"] = statistics.median(x[1] for x in keep)
            steady = times[len(times) // 4:] or times
            entry["median_s"] = statistics.median(steady)
            entry["n_reps"] = 5 * len(steady)
            entry["p20_s"], entry["p80_s"] = (sorted(steady)[int(0.2 * (len(steady) - 1))],
                                              sorted(steady)[int(0.8 * (len(steady) - 1))])
            del fn
            torch.cuda.empty_cache()
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
        out.append(entry)
    return out


def pipes_reference() -> dict | None:
    """The shipped H200 pipe counters (``labs/reference/h200/attention_pipes.json``), or None."""
    return core.reference_or_none(PIPES_LAB.name)


def main(argv: list[str] | None = None) -> None:
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--pipes-call" in argv:
        _counted_call(argv[argv.index("--pipes-call") + 1])
        return
    parser = argparse.ArgumentParser(prog="python -m helpers.labs.attention.pipes",
                                     description="Count the attention kernels' pipe use with ncu.")
    parser.add_argument("--out", required=True, help="directory for attention_pipes.json")
    args = parser.parse_args(argv)
    path = measure_pipes(args.out)
    print(f"attention_pipes: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
