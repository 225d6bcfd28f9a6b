"""Lab runner: a data-parallel training step on two processes, measured against the bucket model.

Two ranks (:func:`helpers.distributed.spawn`: gloo on the CPU, NCCL with one GPU per rank)
train the same multi-layer perceptron with ``torch.nn.parallel.DistributedDataParallel`` (DDP).
Each rank measures, with the same fixed repetition counts so that the ranks' collectives pair
up:

* correctness first: after a few steps both ranks hold identical weights, equal to a single
  process trained on the concatenated batch;
* the DDP step time with one gradient bucket per layer (all-reduces overlap the backward pass)
  and with one bucket for (nearly) all gradients (little overlap);
* the compute-only step (``no_sync``: no all-reduce), its forward pass and its optimizer step,
  from which the backward pass follows;
* the all-reduce of gradient-sized buffers alone, over a sweep of sizes, to fit the latency and
  inverse bandwidth (alpha, beta) of :func:`helpers.models.collectives.ring_allreduce_time_s`;
* one profiled step per rank (``torch.profiler``), whose traces the parent aligns on one clock
  (:mod:`helpers.profiling.align`) to draw the timeline and measure exposed communication.

The model (:func:`helpers.models.distributed_analysis.dp_step_time_s`) predicts the step from
the measured forward, backward and optimizer times and the fitted all-reduce cost of each
bucket DDP actually built.

The model's predictions and the page's table rows, read from a result, are in
:mod:`helpers.labs.analysis.data_parallel`. Pages: ``labs/data-parallel.md`` (the lab) and
``chapters/distributed-analysis.md`` (which quotes the reference). Run on a GPU machine as ``python -m helpers.labs.data_parallel --out DIR``.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
from typing import Callable, Sequence

from helpers.labs import core
from helpers.units import MiB
from helpers.labs.core import lab_device, new_result, run_cli
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import distributed_analysis as da

__all__ = ["LAB", "WORLD_SIZE", "settings_for", "run", "reference_or_none", "grade_exposed_comm",
           "timeline_of", "main"]

_CEILINGS = ("the forward, backward (compute-only step minus forward and optimizer) and "
             "optimizer times measured in the same run, the slower rank's medians; each "
             "bucket's all-reduce read off the same run's all-reduce sweep (the slower rank's "
             "medians, log-log between sizes); DDP's copies of the gradients into the buckets "
             "and back at the datasheet HBM bandwidth (an upper limit of the copy rate)")

#: The lab's record: its pages, size table (every rank times a fixed number of steps) and
#: claims: the DDP model predicts the step and the communication it leaves exposed.
LAB = core.Lab(
    "data_parallel", pages=("labs/data-parallel.md", "chapters/distributed-analysis.md"),
    sizes={"width": (512, 4096), "depth": (8, 8), "rows_per_rank": (256, 8192),
           "warmup_steps": (2, 5), "reps": (5, 20), "sweep_points": (4, 8),
           "timeout_s": (240.0, 540.0)},
    claims=(
        Claim("step_time", "time of one DDP training step", "prediction",
              model="helpers.models.distributed_analysis.ddp_step_time_s", ceilings=_CEILINGS,
              tolerance=0.10,
              why="every component is the run's own median (known to about half a per cent) "
                  "and each all-reduce the sweep's own measurement at its size; the model "
                  "leaves out the slowdown of a backward pass that shares the GPU with an "
                  "all-reduce, a few per cent of the step"),
        Claim("exposed_comm", "communication the step waits for (step minus compute-only "
              "step)", "prediction",
              model="helpers.models.distributed_analysis.ddp_exposed_comm_s",
              ceilings=_CEILINGS, tolerance=0.15,
              why="the measured exposure is a difference of two medians (each known to about "
                  "0.1 ms) of 1 to 2 ms, and the copies run somewhat below the datasheet HBM "
                  "bandwidth the model charges them at",
              miss=("with a bucket per layer the all-reduces that overlap the backward pass "
                    "slow it, which the model (overlap for free) omits: in the profiled step "
                    "the matrix products that run beside an NCCL kernel take longer than those "
                    "that run alone, together by a large part of the residual on the faster "
                    "rank and by more than all of it on the rank that waits inside its "
                    "all-reduces; charging it needs the "
                    "backward pass timed beside an all-reduce, which the run does not measure. "
                    "With one bucket nothing overlaps and the model holds")),
    ))
WORLD_SIZE = 2


def settings_for(device: str) -> dict:
    """The run's sizes and counts at the size tier in force (plain data, sent to every rank)."""
    cuda = device.startswith("cuda")
    width, depth = LAB.size("width"), LAB.size("depth")
    layer_bytes = 4.0 * (width * width + width)  # fp32 gradients of one Linear layer
    total = depth * layer_bytes
    return dict(
        backend="nccl" if cuda else "gloo",
        width=width, depth=depth,
        rows_per_rank=LAB.size("rows_per_rank"),
        autocast_bf16=cuda,
        # relative error of the weight update, DDP vs one process: fp32 agrees to rounding;
        # bf16 matrix products round the gradients to about 3 significant digits
        update_tolerance=5e-2 if cuda else 1e-4,
        lr=1e-2,
        check_steps=3,
        warmup_steps=LAB.size("warmup_steps"),
        reps=LAB.size("reps"),
        # one bucket per layer (the cap is below one layer's bytes) vs one bucket for all
        configs={"per_layer": 0.5 * layer_bytes / MiB, "one_bucket": 1.5 * total / MiB},
        sweep_bytes=[float(b) for b in _sweep(total, LAB.size("sweep_points"))],
        timeout_s=LAB.size("timeout_s"),
        threads_per_rank=1 if not cuda else None,
    )


def _sweep(total_bytes: float, n: int) -> list[int]:
    """``n`` message sizes, geometric from 64 KiB to the whole gradient (4-byte multiples)."""
    lo = 64 * 1024
    hi = max(total_bytes, 2 * lo)
    return [int(round(lo * (hi / lo) ** (i / (n - 1)) / 4)) * 4 for i in range(n)]


# --- what every rank runs ----------------------------------------------------------------

def _build(settings: dict, device):
    import torch
    from torch import nn

    torch.manual_seed(1234)  # the same initial weights on every rank and in the reference
    layers = []
    for i in range(settings["depth"]):
        layers.append(nn.Linear(settings["width"], settings["width"]))
        if i < settings["depth"] - 1:
            layers.append(nn.GELU())
    return nn.Sequential(*layers).to(device)


def _global_batch(settings: dict, world_size: int, seed: int, device):
    import torch

    g = torch.Generator().manual_seed(seed)
    n = settings["rows_per_rank"] * world_size
    x = torch.randn(n, settings["width"], generator=g)
    y = torch.randn(n, settings["width"], generator=g)
    return x.to(device), y.to(device)


def _step_fn(model, opt, x, y, settings: dict, device_type: str) -> Callable[[], None]:
    import torch
    import torch.nn.functional as F

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast(device_type, dtype=torch.bfloat16, enabled=settings["autocast_bf16"]):
            out = model(x)
        # squared error summed over features, averaged over rows: DDP's averaging of the
        # ranks' gradients then equals the gradient of one process over the whole batch
        (F.mse_loss(out.float(), y, reduction="sum") / y.shape[0]).backward()
        opt.step()

    return step


def _lockstep_bench(fn, device: str, reps: int):
    """``helpers.bench.bench`` with a fixed repetition count (ranks must call collectives in
    lockstep, so a time-based warm-up, which differs between ranks, is not allowed)."""
    from helpers.bench import bench
    from helpers.labs.core import summarize

    res = bench(fn, device=device, warmup_s=0.0, budget_s=1e-3, min_reps=reps, max_reps=reps,
                env=False, disable_gc=True)
    return summarize(res)


def _flat(model):
    import torch

    return torch.cat([p.detach().float().reshape(-1) for p in model.parameters()])


def _rank_main(rank: int, world_size: int, settings: dict, trace_dir: str) -> dict:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from helpers.bench import sync

    cuda = settings["backend"] == "nccl"
    device = f"cuda:{rank}" if cuda else "cpu"
    dtype_dev = "cuda" if cuda else "cpu"
    out: dict = {"rank": rank}
    b = settings["rows_per_rank"]
    lo, hi = rank * b, (rank + 1) * b

    # 1. correctness: DDP on halves == one process on the whole batch, ranks identical
    x, y = _global_batch(settings, world_size, seed=7, device=device)
    assert float(x.abs().sum()) > 0 and float(y.abs().sum()) > 0
    model = _build(settings, device)
    w0 = _flat(model)
    ddp = DDP(model, device_ids=[rank] if cuda else None,
              bucket_cap_mb=settings["configs"]["per_layer"])
    opt = torch.optim.SGD(ddp.parameters(), lr=settings["lr"])
    step = _step_fn(ddp, opt, x[lo:hi], y[lo:hi], settings, dtype_dev)
    for _ in range(settings["check_steps"]):
        step()
    sync(device)
    w = _flat(model)
    w_rank0 = w.clone()
    dist.broadcast(w_rank0, src=0)
    diff = (w - w_rank0).abs().max().reshape(1)
    dist.all_reduce(diff, op=dist.ReduceOp.MAX)
    out["max_weight_diff_between_ranks"] = float(diff)
    if float(diff) > 1e-6:  # every rank knows (MAX-reduced): stop before anything is timed
        raise AssertionError(f"ranks hold different weights after {settings['check_steps']} "
                             f"DDP steps (max difference {float(diff):.3g})")
    if rank == 0:
        ref = _build(settings, device)
        ref_opt = torch.optim.SGD(ref.parameters(), lr=settings["lr"])
        ref_step = _step_fn(ref, ref_opt, x, y, settings, dtype_dev)
        for _ in range(settings["check_steps"]):
            ref_step()
        w_ref = _flat(ref)
        upd_ddp, upd_ref = w - w0, w_ref - w0
        out["update_rel_error_vs_single"] = float((upd_ddp - upd_ref).norm() / upd_ref.norm())
        out["update_norm"] = float(upd_ref.norm())
        if out["update_rel_error_vs_single"] > 4 * settings["update_tolerance"]:
            raise AssertionError("DDP's weight update differs from one process on the whole "
                                 f"batch by {out['update_rel_error_vs_single']:.3g} (relative)")
        del ref, ref_opt, w_ref
    del ddp, opt, model, x, y
    dist.barrier()

    # 2. timing: the two bucket configurations, then compute-only
    x, y = _global_batch(settings, world_size, seed=11 + rank, device=device)
    x, y = x[:b], y[:b]
    reps, warm = settings["reps"], settings["warmup_steps"]
    timings: dict = {}
    for name, cap_mb in settings["configs"].items():
        model = _build(settings, device)
        ddp = DDP(model, device_ids=[rank] if cuda else None, bucket_cap_mb=cap_mb)
        opt = torch.optim.SGD(ddp.parameters(), lr=settings["lr"])
        step = _step_fn(ddp, opt, x, y, settings, dtype_dev)
        for _ in range(warm):  # DDP rebuilds its buckets after the first step
            step()
        sync(device)
        timings[name] = {"step": _lockstep_bench(step, device, reps),
                         "bucket_bytes": _bucket_bytes(ddp, settings)}
        if name == "per_layer":
            with ddp.no_sync():
                timings["compute_step"] = _lockstep_bench(step, device, reps)
            inner = ddp.module

            def forward():
                with torch.no_grad(), torch.autocast(dtype_dev, dtype=torch.bfloat16,
                                                     enabled=settings["autocast_bf16"]):
                    inner(x)

            timings["forward"] = _lockstep_bench(forward, device, reps)
            timings["optimizer"] = _lockstep_bench(opt.step, device, reps)
            timings["profile"] = _profile(step, device, cuda, rank, trace_dir)
        del ddp, opt, model
        dist.barrier()
    out["timings"] = timings

    # 3. the all-reduce alone, over a sweep of sizes
    sweep = []
    ranks_sum = world_size * (world_size + 1) / 2  # rank r contributes (r + 1) x the same base
    for nbytes in settings["sweep_bytes"]:
        g = torch.Generator().manual_seed(int(nbytes))
        base = torch.randn(int(nbytes) // 4, generator=g).to(device)
        buf = base * (rank + 1)
        dist.all_reduce(buf)  # checked before it is timed
        if not torch.allclose(buf, base * ranks_sum, rtol=1e-5, atol=1e-5):
            raise AssertionError(f"all-reduce of {nbytes:.0f} bytes returned a wrong sum")
        ar = lambda: dist.all_reduce(buf)
        sync(device)
        sweep.append({"bytes": nbytes, **_lockstep_bench(ar, device, reps)})
        del buf, base
    out["allreduce_sweep"] = sweep
    return out


def _bucket_bytes(ddp, settings: dict) -> list[float]:
    """The bytes of each gradient bucket DDP built, in the order it reduces them."""
    try:
        data = ddp._get_ddp_logging_data()
        sizes = data.get("rebuilt_bucket_sizes") or data.get("bucket_sizes")
        return [float(s) for s in str(sizes).split(",") if s.strip()]
    except Exception:  # a private interface: fall back to DDP's documented rule
        cap = settings["configs"]["per_layer"] * MiB
        layer = 4.0 * (settings["width"] ** 2 + settings["width"])
        return [layer] * settings["depth"] if layer >= cap else [layer * settings["depth"]]


def _profile(step, device: str, cuda: bool, rank: int, trace_dir: str) -> str:
    """Profile one step preceded by a small all-reduce (the anchor); return the trace path."""
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile

    from helpers.bench import sync

    anchor = torch.ones(1, device=device)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync(device)
    with profile(activities=acts) as prof:
        dist.all_reduce(anchor)
        step()
        sync(device)
    path = os.path.join(trace_dir, f"rank{rank}.json")
    prof.export_chrome_trace(path)
    return path


# --- the parent ---------------------------------------------------------------------------

def timeline_of(trace_paths: Sequence[str]) -> dict:
    """Aligned compute and communication intervals per rank, from the profiled step's traces."""
    from helpers.profiling import align
    from helpers.profiling.trace import load_trace

    tls = align.align_ranks([load_trace(p) for p in trace_paths])
    exposed = align.exposed_comm_by_rank(tls)
    slow, span = align.slowest_rank(tls)
    t0 = tls[0].anchor_s
    ranks = []
    for tl, ex in zip(tls, exposed):
        cut = tl.after(t0)
        ranks.append({"rank": tl.rank, "offset_s": tl.offset_s,
                      "compute": [[a - t0, b - t0] for a, b in cut.compute],
                      "comm": [[a - t0, b - t0] for a, b in cut.comm],
                      "exposed_comm_s": ex})
    return {"ranks": ranks, "slowest_rank": slow, "slowest_span_s": span}


def run(device: str | None = None) -> dict:
    """Spawn the ranks, gather their measurements, align the traces; return the result dict."""
    from helpers.distributed import spawn

    device = device or lab_device()
    settings = settings_for(device)
    result = new_result(LAB, device, world_size=WORLD_SIZE, **settings)
    with tempfile.TemporaryDirectory(prefix="dp-lab-") as trace_dir:
        ranks = spawn(_rank_main, WORLD_SIZE, settings["backend"], args=(settings, trace_dir),
                      timeout_s=settings["timeout_s"],
                      threads_per_rank=settings["threads_per_rank"])
        timeline = timeline_of([r["timings"]["profile"] for r in ranks])
    for r in ranks:
        r["timings"].pop("profile")
    m = result["measurements"]
    m["ranks"] = ranks
    m["timeline"] = timeline
    m["n_params"] = settings["depth"] * (settings["width"] ** 2 + settings["width"])
    m["tokens_per_step"] = settings["rows_per_rank"] * WORLD_SIZE
    m["correct"] = c = _correctness(ranks, settings)
    # a wrong result must not be timed and shipped; a near miss of the bf16 tolerance is
    # recorded (``passed`` False) and shown, since the timings are still those of correct code
    if c["max_weight_diff_between_ranks"] > 1e-6 or c["update_rel_error_vs_single"] > 4 * c["tolerance"]:
        raise AssertionError(f"data-parallel training disagrees with one process: {c}")
    return result


def _correctness(ranks: list[dict], settings: dict) -> dict:
    tol = settings["update_tolerance"]
    r0 = ranks[0]
    same = r0["max_weight_diff_between_ranks"]
    err = r0["update_rel_error_vs_single"]
    return {"max_weight_diff_between_ranks": same, "update_rel_error_vs_single": err,
            "tolerance": tol, "passed": bool(same <= 1e-6 and err <= tol)}


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading ------------------------------------------------------------------------------

def _random_intervals(rng, n: int, t_max: float) -> list[tuple[float, float]]:
    out = []
    for _ in range(n):
        a = rng.uniform(0, t_max)
        out.append((a, a + rng.uniform(0.01, 0.3) * t_max))
    return out


def grade_exposed_comm(candidate: Callable, timeline: dict | None = None, trials: int = 20
                       ) -> Verdict:
    """Grade ``candidate(compute_intervals, comm_intervals) -> seconds`` for one rank.

    It is checked against :func:`helpers.models.distributed_analysis.exposed_comm_s` on fresh
    random, overlapping intervals (and, if given, on each rank of a measured ``timeline``).
    """
    import secrets

    import numpy as np

    name = "exposed communication"
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    rng = np.random.default_rng(secrets.randbits(62))
    cases = []
    cases.append(([(0.0, 1.0)], [(0.5, 1.5)], "half-hidden"))
    cases.append(([(0.0, 1.0)], [(0.2, 0.4)], "fully hidden"))
    for _ in range(trials):
        cases.append((_random_intervals(rng, int(rng.integers(1, 6)), 10.0),
                      _random_intervals(rng, int(rng.integers(1, 6)), 10.0), "random"))
    if timeline is not None:
        for r in timeline["ranks"]:
            cases.append(([tuple(iv) for iv in r["compute"]], [tuple(iv) for iv in r["comm"]],
                          f"measured rank {r['rank']}"))
    for compute, comm, what in cases:
        expected = da.exposed_comm_s(compute, comm)
        try:
            got = float(candidate(list(compute), list(comm)))
        except Exception as exc:
            return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
        total = sum(b - a for a, b in da.union_intervals(comm))
        if not math.isfinite(got) or abs(got - expected) > 1e-9 + 1e-6 * total:
            hint = ""
            if abs(got - total) <= 1e-9 + 1e-6 * total and expected < total:
                hint = ": it counts all communication as exposed, including what overlaps compute"
            elif got > total + 1e-9:
                hint = ": more than the communication itself (overlapping comm counted twice?)"
            return Verdict(name, "FAIL", [f"wrong on a {what} case, got {got:.6g} s, "
                                          f"expected {expected:.6g} s{hint}"])
    return Verdict(name, "PASS", [f"matches the interval arithmetic on {len(cases)} cases, "
                                  "including overlapping and fully hidden communication"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
