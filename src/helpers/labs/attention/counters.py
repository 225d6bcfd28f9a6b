"""Hardware counters of the attention kernels (ncu): the bytes each path moves through HBM and L2.

A second record of the attention lab, :data:`COUNTERS_LAB` (its own name and file), used by
``chapters/fusion-and-attention.md`` and ``labs/attention.md``:
``python -m helpers.labs.attention.counters --out DIR`` (or, as before,
``python -m helpers.labs.attention --counters --out DIR``) runs, on a CUDA GPU, one warm call
of each of naive, fused and SDPA per case of :func:`counter_cases` under
``ncu --clock-control none`` (:mod:`helpers.profiling.ncu`), each in a process of its own that
marks the counted call with an NVTX range, and writes ``DIR/attention_counters.json``: per case
the DRAM bytes read and written, the L2 (``lts``) bytes, the kernels' time and names, and the
two-level model's predicted DRAM and L2 bytes (:mod:`helpers.models.attention`). A case that
fails records its error; the others go on.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers import specs
from helpers.labs import core
from helpers.labs.attention import GPU, PROGRAMS_PER_SM, _inputs, hidden, n_heads, tokens
from helpers.labs.core import new_result, progress
from helpers.kernels.attention_torch import naive_attention, sdpa_attention
from helpers.models import attention as model

__all__ = ["COUNTERS_LAB", "COUNTER_IMPLS", "NVTX_RANGE", "COUNTER_BLOCK_ROWS", "counter_cases",
           "counter_model", "counter_entry", "counters_result", "measure_counters",
           "counters_reference", "main"]


# --- hardware counters (ncu) ---------------------------------------------------------------

#: The counters' record: a lab of its own name and file, read by the fusion chapter.
COUNTERS_LAB = core.Lab(
    "attention_counters", pages=("chapters/fusion-and-attention.md",),
    sizes={"seq_lens": ([128, 256], [1024, 4096]), "head_dims": ([64], [64, 128])})
#: Implementations counted, in the order they run.
COUNTER_IMPLS = ("naive", "fused", "sdpa")
#: The NVTX range that marks the counted call (ncu keeps only the kernels launched inside it).
NVTX_RANGE = "book_counted_call"
#: Query rows per program assumed by the model: the fused kernel's default block
#: (:func:`helpers.kernels.attention.default_config`); for SDPA's cuDNN kernel (named
#: ``..._64x128x{d}_...`` on the H200, 64-row tiles per warp group) 128 rows per program, as
#: FlashAttention-3's two consumer warp groups; the counters show how much its L1 and
#: shared memory save beyond that.
COUNTER_BLOCK_ROWS = {"fused": 128, "sdpa": 128}
#: Seconds one case's ncu process may take.
COUNTER_TIMEOUT_S = 120.0


def counter_cases() -> list[dict]:
    """The cases counted: naive, fused and SDPA at every (d, N) of :data:`COUNTERS_LAB`'s
    sizes without a mask, and one causal case (the largest d and N), at the lab's token count
    and model width (``batch = tokens / N``, ``heads = hidden / d``)."""
    dims, lens = COUNTERS_LAB.size("head_dims"), COUNTERS_LAB.size("seq_lens")
    shapes = [(d, n, False) for d in dims for n in lens] + [(dims[-1], lens[-1], True)]
    return [{"impl": impl, "head_dim": d, "seq_len": n, "causal": causal,
             "batch": max(1, tokens() // n), "n_heads": n_heads(d)}
            for d, n, causal in shapes for impl in COUNTER_IMPLS]


def counter_model(case: dict, gpu: specs.GPUSpec = GPU, bytes_per_element: float = 2.0) -> dict:
    """The two-level model's bytes for one case of :func:`counter_cases` on ``gpu``.

    Fused and SDPA: :func:`helpers.models.attention.flash2_attention_dram_bytes` and
    ``..._l2_traffic_bytes`` with :data:`COUNTER_BLOCK_ROWS`, ``gpu``'s L2 and SM count times
    :data:`PROGRAMS_PER_SM` programs in flight, no log-sum-exp (neither writes one without
    autograd). Naive: ``standard_attention_dram_bytes`` and ``..._l2_traffic_bytes`` with one
    extra pass over the scores for the scaling and one more for a causal mask.
    """
    n, d, causal = case["seq_len"], case["head_dim"], case["causal"]
    kw = dict(n_heads=case["n_heads"], batch=case["batch"])
    out = {"flop": model.attention_flop(n, d, causal=causal and case["impl"] != "naive", **kw),
           "one_level_bytes": None, "model_dram_bytes": None, "model_l2_bytes": None}
    if case["impl"] == "naive":
        passes = 1 + int(causal)
        out["score_passes"] = passes
        out["model_l2_bytes"] = model.standard_attention_l2_traffic_bytes(
            n, d, bytes_per_element, score_passes=passes, **kw)
        out["model_dram_bytes"] = model.standard_attention_dram_bytes(
            n, d, bytes_per_element, l2_capacity_bytes=gpu.l2_bytes, score_passes=passes, **kw)
        out["one_level_bytes"] = out["model_l2_bytes"]
    else:
        br = COUNTER_BLOCK_ROWS[case["impl"]]
        programs = gpu.sm_count * PROGRAMS_PER_SM
        out.update(block_rows=br, concurrent_programs=programs,
                   resident_kv_bytes=model.flash2_resident_kv_bytes(
                       n, d, bytes_per_element, block_rows=br, concurrent_programs=programs, **kw))
        out["model_l2_bytes"] = model.flash2_attention_l2_traffic_bytes(
            n, d, bytes_per_element, block_rows=br, causal=causal, **kw)
        out["model_dram_bytes"] = model.flash2_attention_dram_bytes(
            n, d, bytes_per_element, block_rows=br, l2_capacity_bytes=gpu.l2_bytes,
            concurrent_programs=programs, causal=causal, **kw)
        out["one_level_bytes"] = out["model_l2_bytes"]
    return out


def counter_entry(case: dict, totals: dict | None = None, error: str | None = None,
                  gpu: specs.GPUSpec = GPU) -> dict:
    """One case's record: the case, the model's bytes and the counters summed over the call's
    kernels (``totals`` from :func:`helpers.profiling.ncu.totals`), or the error."""
    entry = dict(case)
    entry.update(counter_model(case, gpu))
    keys = {"dram_read_bytes": "dram__bytes_read.sum", "dram_write_bytes": "dram__bytes_write.sum",
            "l2_bytes": "lts__t_bytes.sum", "kernel_time_s": "gpu__time_duration.sum"}
    if totals is not None:
        for key, metric in keys.items():
            entry[key] = totals.get(metric)
        entry["kernels"] = list(totals.get("kernels", []))[:16]
        entry["n_kernels"] = totals.get("n_kernels", 0)
        if totals.get("incomplete"):
            entry["incomplete_metrics"] = list(totals["incomplete"])
        if entry["dram_read_bytes"] is not None and entry["dram_write_bytes"] is not None:
            entry["dram_bytes"] = entry["dram_read_bytes"] + entry["dram_write_bytes"]
    if error is not None:
        entry["error"] = error[:400]
    return entry


def counters_result(entries: list[dict], device: str = "cuda", **settings) -> dict:
    """The ``attention_counters`` result (``core.new_result``) holding ``entries``."""
    from helpers.profiling import ncu

    result = new_result(COUNTERS_LAB, device, metrics=list(ncu.METRICS), nvtx_range=NVTX_RANGE,
                        tokens=tokens(), hidden=hidden(), l2_capacity_bytes=GPU.l2_bytes,
                        programs_per_sm=PROGRAMS_PER_SM, block_rows=COUNTER_BLOCK_ROWS,
                        **settings)
    result["measurements"]["cases"] = entries
    return result


def _case_arg(case: dict) -> str:
    return f"{case['impl']},{case['head_dim']},{case['seq_len']},{int(case['causal'])}"


def _counted_call(spec: str) -> None:
    """The child of :func:`measure_counters`: one warm call, then one inside :data:`NVTX_RANGE`."""
    import torch

    impl, d, n, causal = spec.split(",")
    d, n, causal = int(d), int(n), bool(int(causal))
    if impl not in COUNTER_IMPLS:
        raise ValueError(f"impl must be one of {COUNTER_IMPLS}, got {impl!r}")
    gen = torch.Generator().manual_seed(7)
    q, k, v = _inputs((max(1, tokens() // n), n_heads(d), n, d), gen, "cuda", torch.bfloat16)
    if impl == "naive":
        mask = torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1) if causal else None
        fn = (lambda: naive_attention(q, k, v, causal=causal, mask=mask))
    elif impl == "fused":
        from helpers.kernels import attention as kern

        fn = (lambda: kern.attention(q, k, v, causal=causal))
    else:
        fn = (lambda: sdpa_attention(q, k, v, causal=causal))
    fn()  # warm: compile, plan, allocate
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(NVTX_RANGE)
    fn()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def measure_counters(out_dir, cases: list[dict] | None = None, runner=None) -> Path:
    """Count each case's kernels under ncu on the GPU; write ``out_dir/attention_counters.json``.

    ``runner`` (default :func:`helpers.profiling.ncu.run_ncu`) is called as
    ``runner(target, nvtx_range=..., timeout_s=..., env=...)`` and returns kernel rows. A
    missing ncu stops the run with its message; any other failure is recorded in the case.
    """
    from helpers.bench.sizes import has_cuda
    from helpers.profiling import ncu

    if runner is None:
        if not has_cuda():
            raise SystemExit("attention --counters needs a CUDA GPU and Nsight Compute (ncu); "
                             "none is usable here, so nothing was measured.")
        runner = ncu.run_ncu
    cases = counter_cases() if cases is None else cases
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    entries = []
    for case in progress(cases, desc="attention counters"):
        target = [sys.executable, "-m", "helpers.labs.attention.counters", "--counted-call",
                  _case_arg(case)]
        try:
            rows = runner(target, nvtx_range=NVTX_RANGE, timeout_s=COUNTER_TIMEOUT_S, env=env)
            entries.append(counter_entry(case, ncu.totals(rows)))
        except ncu.NcuNotFound:
            raise
        except Exception as exc:  # one failing case must not lose the others
            entries.append(counter_entry(case, error=f"{type(exc).__name__}: {exc}"))
    result = counters_result(entries, "cuda" if runner is ncu.run_ncu else "cpu")
    return core.save_result(result, out_dir)


def counters_reference() -> dict | None:
    """The shipped H200 counters (``labs/reference/h200/attention_counters.json``), or None."""
    return core.reference_or_none(COUNTERS_LAB.name)


def main(argv: list[str] | None = None) -> None:
    """``--out DIR``: count every case; ``--counted-call SPEC``: the child process of a case.
    (``--counters``, the flag of ``python -m helpers.labs.attention``, is accepted and ignored.)"""
    import argparse

    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--counters"]
    if "--counted-call" in argv:  # the child process of measure_counters
        _counted_call(argv[argv.index("--counted-call") + 1])
        return
    parser = argparse.ArgumentParser(prog="python -m helpers.labs.attention.counters",
                                     description="Count DRAM and L2 bytes with ncu.")
    parser.add_argument("--out", required=True, help="directory for attention_counters.json")
    args = parser.parse_args(argv)
    path = measure_counters(args.out)
    print(f"attention_counters: wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
