"""Lab runner: all-reduce, all-gather and reduce-scatter on real ``torch.distributed`` groups.

For each process group it runs, the runner sweeps message sizes and, per size and collective,
reports the median time (with every repeat kept), the algorithm bandwidth and the bus bandwidth
as nccl-tests defines them (:mod:`helpers.models.collectives`), and then fits the alpha-beta
model to the times (:func:`helpers.models.collectives.fit_alpha_beta`).

* **gloo** with 2 and 4 processes on the CPU (always; small sizes, 4 KiB to 4 MiB). On a CPU
  tier this is the whole lab; it is what CI runs.
* **NCCL** with ``min(2, torch.cuda.device_count())`` ranks, one GPU each, 8 B to 1 GiB (full
  size) when at least two GPUs are visible. With one GPU it says that NCCL needs two and runs
  gloo only.

How a size is measured (in every rank, :func:`measure_rank`):

1. build the inputs from a seed shared by all ranks: ``B`` of small random integers stored as
   float32 (never zeros), rank ``r`` contributing ``B + r``; integer sums are exact in float32
   in any order, so the result is compared *exactly* with the closed form (the output buffer
   is first poisoned with NaN). A wrong result raises in that rank before anything is timed;
2. barrier; a few untimed warm-up calls (the first NCCL call sets up its channels);
3. :func:`helpers.bench.bench` with a fixed repeat count (``warmup_s=0`` and
   ``min_reps = max_reps``), so every rank issues exactly the same number of collectives;
   each rank times its own calls: CUDA events on the rank's stream for NCCL (the device's own
   clock, including any wait for a late peer), ``perf_counter`` around the blocking call for
   gloo. Rank 0's times are reported (all ranks' medians are kept too).

The all-reduce is timed in place; to keep its values finite while they grow by a factor ``p``
per call, its timing buffer starts at ``(B + r) * 2**-100`` and the number of calls is bounded
(:func:`_max_calls`).

Pages: ``labs/collectives.md`` shows the result beside the H200 reference
(:func:`reference_or_none`); ``chapters/collectives.md`` quotes :func:`prose_numbers` of a small
run and of the reference. Run as
``python -m helpers.labs.collectives --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework kept here: :func:`grade_busbw_factor` (the grader of the page's
exercise) and the analysis helpers (:func:`rows`, :func:`fits`, :func:`comparison`).
"""

from __future__ import annotations

import math
from typing import Callable

from helpers import specs
from helpers.bench import bench
from helpers.labs import core
from helpers.labs.core import (MISSING, fmt, lab_device, new_result, page_numbers, progress,
                               run_cli, summarize)
from helpers.labs.grading import Verdict
from helpers.models import collectives as model

__all__ = ["LAB", "GPU", "MEASURED", "GLOO_RANKS", "gloo_sizes_bytes", "nccl_sizes_bytes",
           "repeats", "measure_rank", "measure_group", "nccl_ranks", "run", "reference_or_none",
           "rows", "fits", "largest", "comparison", "comparison_rows", "describe", "prose_numbers", "fmt", "MISSING",
           "BATCH", "ENQUEUE_REPS", "batch_calls", "batching", "host_bound", "batching_numbers",
           "host_bound_numbers", "one_gpu_reference", "ONE_GPU_FILE", "floor_numbers",
           "grade_busbw_factor", "main"]

#: The lab's record: its pages and size table (each rank times a fixed number of repeats).
LAB = core.Lab(
    "collectives", pages=("labs/collectives.md", "chapters/collectives.md"),
    sizes={"nccl_sizes_bytes": ([8, 1 << 12, 1 << 17, 1 << 20], [1 << k for k in range(3, 31)]),
           # (warm-up calls, timed repeats) per size
           "nccl_repeats": ((3, 10), (5, 25)), "gloo_repeats": ((2, 15), (3, 21)),
           "group_timeout_s": (180.0, 400.0)})
#: The GPU whose NVLink the model's bus bandwidth is compared with (the reference machine).
GPU = specs.H200_SXM
#: Collectives measured, in the nccl-tests names of :mod:`helpers.models.collectives`.
MEASURED = ("all_reduce", "all_gather", "reduce_scatter")
#: Process counts of the gloo groups.
GLOO_RANKS = (2, 4)
FP32_BYTES = 4
#: Scale of the all-reduce timing buffer (float32 keeps normal numbers down to 2**-126).
_TINY = 2.0 ** -100
#: Batched timing: (seconds a batch of back-to-back calls should last, most calls per batch).
BATCH = (1e-3, 64)
#: Timed batches of the NCCL enqueue-only measurement (host time to launch a batch).
ENQUEUE_REPS = 5


# --- sizes ----------------------------------------------------------------------------------

def gloo_sizes_bytes() -> list[int]:
    """Message sizes of the gloo groups: 4 KiB to 4 MiB by factors of 4 (every tier)."""
    return [4 << (10 + 2 * i) for i in range(6)]


def nccl_sizes_bytes() -> list[int]:
    """Message sizes of the NCCL group: 8 B to 1 GiB by factors of 2 (full), four sizes small."""
    return LAB.size("nccl_sizes_bytes")


def repeats(backend: str) -> tuple[int, int]:
    """``(warm-up calls, timed repeats)`` per size for ``backend``."""
    return LAB.size("nccl_repeats" if backend == "nccl" else "gloo_repeats")


def _max_calls(ranks: int) -> int:
    """In-place all-reduce calls before ``_TINY``-scaled values could overflow float32."""
    return int(200 / math.log2(ranks)) if ranks > 1 else 10**9


# --- one rank -------------------------------------------------------------------------------

def _ops():
    import torch.distributed as dist

    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    return dist, gather, scatter


def _base(n: int, seed: int, device: str):
    """``n`` random integers in [1, 64) as float32, the same on every rank (shared seed)."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    return torch.randint(1, 64, (n,), generator=g, device=device, dtype=torch.float32)


def _case(name: str, size: int, rank: int, p: int, device: str, seed: int, copies: int = 1,
          group=None):
    """(fn timed, check) for one collective at ``size`` bytes on this rank.

    ``check()`` poisons the output, runs the collective once and raises AssertionError unless
    the output equals the closed form exactly. The in-place all-reduce's ``fn`` cycles through
    ``copies`` timing buffers, so a batch of ``copies`` back-to-back calls grows each buffer
    once (:func:`_max_calls` bounds the calls per buffer, not per batch). ``group`` is the
    process group the timed ``fn`` uses (None: the default group).
    """
    import torch

    dist, gather, scatter = _ops()
    n = size // FP32_BYTES
    m = n // p
    base = _base(n, seed, device)
    if name == "all_reduce":
        x = torch.empty_like(base)
        want = base * p + p * (p - 1) / 2

        def check():
            x.copy_(base).add_(rank)
            dist.all_reduce(x)
            return x, want
        timed = [(base + rank) * _TINY for _ in range(copies)]
        turn = [0]

        def fn():
            i = turn[0]
            turn[0] = (i + 1) % copies
            dist.all_reduce(timed[i], group=group)
    elif name == "all_gather":
        inp = base[rank * m:(rank + 1) * m] + rank
        out = torch.empty(n, device=device)
        want = base + torch.arange(p, device=device, dtype=torch.float32).repeat_interleave(m)

        def check():
            out.fill_(float("nan"))
            gather(out, inp)
            return out, want

        def fn():
            gather(out, inp, group=group)
    elif name == "reduce_scatter":
        inp = base + rank
        out = torch.empty(m, device=device)
        want = base[rank * m:(rank + 1) * m] * p + p * (p - 1) / 2

        def check():
            out.fill_(float("nan"))
            scatter(out, inp)
            return out, want

        def fn():
            scatter(out, inp, group=group)
    else:
        raise ValueError(f"collective must be one of {MEASURED}, got {name!r}")

    def checked():
        got, expected = check()
        if device != "cpu":
            torch.cuda.synchronize(device)
        if not torch.equal(got, expected):
            bad = int((got != expected).sum())  # NaN != anything: unwritten elements count
            raise AssertionError(f"{name} of {size} bytes on rank {rank} of {p}: {bad} of "
                                 f"{got.numel()} elements differ from the exact sum")
    return fn, checked


def batch_calls(single_call_s: float, size: int, target_s: float, max_calls: int,
                max_buffer_bytes: float = 256 * 2**20) -> int:
    """Calls per timed batch: enough for the batch to last ``target_s`` at the single-call time
    (1 to ``max_calls``), and no more copies of a ``size``-byte buffer than fit in
    ``max_buffer_bytes`` (the all-reduce keeps one timing buffer per call of a batch)."""
    if not (single_call_s > 0 and math.isfinite(single_call_s)):
        return 1
    k = max(1, min(int(max_calls), math.ceil(target_s / single_call_s)))
    return max(1, min(k, int(max_buffer_bytes // max(size, 1))))


def _agree(value: int, device: str) -> int:
    """The largest of ``value`` over the ranks (every rank must issue the same calls)."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([int(value)], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


def _enqueue_s(fn, calls: int, reps: int, device: str) -> float:
    """Median host time (s) to *enqueue* one of ``calls`` back-to-back asynchronous NCCL calls:
    ``perf_counter`` around the ``calls`` launches, the stream synchronized outside the timing."""
    import time

    import torch

    per_call = []
    for _ in range(reps):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter_ns() - t0) * 1e-9 / calls)
        torch.cuda.synchronize(device)
    return sorted(per_call)[len(per_call) // 2]


def _graph_s(fn, calls: int, reps: int, device: str) -> tuple[float | None, str | None]:
    """NCCL: ``calls`` back-to-back calls captured in one CUDA graph, the graph replayed
    ``reps`` times under :func:`bench` (one event pair per replay); the per-call median (s) and
    None, or None and the reason the capture failed. A replay launches the whole batch at
    once, so no host dispatch sits between the calls."""
    import torch

    graph, error = None, None
    try:
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):  # capture wants its collectives warmed on a side stream
            fn()
        torch.cuda.current_stream(device).wait_stream(side)
        torch.cuda.synchronize(device)
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            for _ in range(calls):
                fn()
        graph = captured
    except Exception as exc:  # noqa: BLE001 - recorded: the page says why there is no number
        error = f"{type(exc).__name__}: {exc}"[:300]
    # replay only if every rank captured: a rank replaying alone would wait for ever
    if _agree(0 if graph is not None else 1, device):
        return None, error or "another rank's capture failed"
    r = bench(graph.replay, device=device, name="graph", warmup_s=0.0, budget_s=1.0,
              min_reps=reps, max_reps=reps, env=False)
    return r.median_s / calls, None


def _dispatch_floor(rank: int, world_size: int, size: int, reps: int, seed: int) -> dict:
    """Gloo: each rank times an all-reduce of ``size`` bytes on a one-rank group of its own
    (``dist.new_subgroups``): Python, c10d and gloo's hand-off to its worker thread, no peer
    and no wire. Every rank creates the subgroups (a collective call)."""
    import torch.distributed as dist

    own, _ = dist.new_subgroups(group_size=1)
    fn, _ = _case("all_reduce", size, 0, 1, "cpu", seed, group=own)
    r = bench(fn, device="cpu", name=f"gloo_dispatch_{size}", warmup_s=0.0, budget_s=1.0,
              min_reps=reps, max_reps=reps, env=False)
    return {"message_bytes": size, "median_s": r.median_s,
            "bench": summarize(r) if rank == 0 else None}


def measure_rank(rank: int, world_size: int, sizes: list[int], collectives=MEASURED,
                 warmup: int = 2, reps: int = 9, seed: int = 2024,
                 batch: tuple[float, int] | None = None) -> dict:
    """Run in every rank (under :func:`helpers.distributed.spawn`): check, then time, each
    collective at each size, twice: one call per timed interval (dispatch included), then a
    batch of k back-to-back calls per interval (:func:`batch_calls`, ``batch`` = (target
    seconds per batch, most calls), the same k on every rank), reported per call. On NCCL also
    the host time to enqueue one call of a batch; on gloo a one-rank group's call at the
    smallest size (the dispatch floor). Returns this rank's medians, and rank 0's full
    summaries with every repeat."""
    import torch.distributed as dist

    target_s, k_max = BATCH if batch is None else batch
    backend = dist.get_backend()
    device = f"cuda:{rank}" if backend == "nccl" else "cpu"
    # calls per timing buffer: the single-call series; the batched one (first call, a warm-up
    # batch, reps batches, and the enqueue batches on NCCL, each buffer once per batch)
    per_buffer = max(warmup + reps + 3,
                     reps + 3 + (ENQUEUE_REPS + 1 + reps + 2 if backend == "nccl" else 0))
    if "all_reduce" in collectives and per_buffer > _max_calls(world_size):
        raise ValueError(f"{warmup} + {reps} all-reduce calls could overflow float32 on "
                         f"{world_size} ranks; at most {_max_calls(world_size) - 3}")
    out: dict = {"rank": rank, "backend": backend, "device": device, "collectives": {}}
    for name in collectives:
        entries = []
        for size in sizes:  # no progress bar in the ranks: the parent shows one per group
            if size % (FP32_BYTES * world_size):
                raise ValueError(f"size {size} is not a multiple of 4 bytes x {world_size} ranks")
            fn, checked = _case(name, size, rank, world_size, device, seed + size)
            checked()
            dist.barrier()
            for _ in range(warmup):
                fn()
            r = bench(fn, device=device, name=f"{backend}_{name}_{size}", warmup_s=0.0,
                      budget_s=1.0, min_reps=reps, max_reps=reps, env=False)
            entry = {"message_bytes": size, "median_s": r.median_s, "checked": True}
            if rank == 0:
                entry["bench"] = summarize(r)
                entry["samples_s"] = list(r.samples_s)
            del fn
            # batched: k calls per event pair (NCCL) or per perf_counter pair (gloo)
            k = _agree(batch_calls(r.median_s, size, target_s, k_max), device)
            fn, _ = _case(name, size, rank, world_size, device, seed + size, copies=k)
            dist.barrier()
            rb = bench(fn, device=device, name=f"{backend}_{name}_{size}_x{k}", warmup_s=0.0,
                       budget_s=1.0, min_reps=reps, max_reps=reps, number=k, env=False)
            entry.update({"batch_calls": k, "batched_median_s": rb.median_s,
                          "enqueue_s": (_enqueue_s(fn, k, ENQUEUE_REPS, device)
                                        if backend == "nccl" else None)})
            if backend == "nccl":
                dist.barrier()
                entry["graph_s"], entry["graph_error"] = _graph_s(fn, k, reps, device)
            if rank == 0:
                entry["batched_bench"] = summarize(rb)
                entry["batched_samples_s"] = list(rb.samples_s)
            entries.append(entry)
            del fn, checked
        out["collectives"][name] = entries
    if backend == "gloo" and sizes:
        out["dispatch"] = _dispatch_floor(rank, world_size, min(sizes), reps, seed)
    dist.barrier()
    return out


# --- one group ------------------------------------------------------------------------------

def _fit_record(sizes, times, ranks: int, name: str) -> dict:
    f = model.fit_alpha_beta(sizes, times, ranks, name)
    return {"alpha_s": f.alpha_s, "beta_s_per_byte": f.beta_s_per_byte,
            "residuals": [float(v) for v in f.residuals]}


def _regime_record(sizes, times, ranks: int, name: str) -> dict | None:
    if len(set(sizes)) < 4:
        return None
    f = model.fit_alpha_beta_regimes(sizes, times, ranks, name)
    return {"split_bytes": f.split_bytes, "sse": f.sse,
            **{side: {"alpha_s": g.alpha_s, "beta_s_per_byte": g.beta_s_per_byte,
                      "residuals": [float(v) for v in g.residuals]}
               for side, g in (("small", f.small), ("large", f.large))}}


def measure_group(backend: str, ranks: int, sizes: list[int], *, timeout_s: float = 300.0
                  ) -> dict:
    """Spawn ``ranks`` processes on ``backend``, run :func:`measure_rank`, and assemble the
    run: per collective and size, rank 0's summary and repeats of both series (one call per
    interval; a batch per interval), every rank's medians, algbw, busbw, the dispatch and skew
    per call (single minus batched); then per collective the alpha-beta fit of each series
    over all sizes (``fit``, ``fit_batched``) and per size regime (``regimes``,
    ``regimes_batched``; :func:`helpers.models.collectives.fit_alpha_beta_regimes`). A group
    of one rank sends nothing: its times are the launch and dispatch floor, and it has no fit."""
    from helpers.distributed import spawn

    warmup, reps = repeats(backend)
    per_rank = spawn(measure_rank, ranks, backend,
                     args=(list(sizes), MEASURED, warmup, reps, 2024, BATCH),
                     timeout_s=timeout_s, threads_per_rank=1 if backend == "gloo" else None)
    run = {"backend": backend, "ranks": ranks, "device": per_rank[0]["device"],
           "warmup_calls": warmup, "repeats": reps, "timed_by": (
               "CUDA events on each rank's stream (rank 0 reported)" if backend == "nccl"
               else "perf_counter around each blocking call (rank 0 reported)"),
           "batched_timed_by": (
               f"one CUDA event pair around k back-to-back calls, k for a batch of "
               f"{BATCH[0] * 1e3:g} ms, 1 to {BATCH[1]} (rank 0 reported, per call)"
               if backend == "nccl" else
               f"one perf_counter pair around k back-to-back blocking calls, k for a batch of "
               f"{BATCH[0] * 1e3:g} ms, 1 to {BATCH[1]} (rank 0 reported, per call)"),
           "dispatch": ({k: v for k, v in per_rank[0]["dispatch"].items()}
                        | {"rank_medians_s": [pr["dispatch"]["median_s"] for pr in per_rank]}
                        if "dispatch" in per_rank[0] else None),
           "collectives": {}, "fit": {}, "fit_batched": {}, "regimes": {},
           "regimes_batched": {}}
    for name in MEASURED:
        points = []
        for i, e in enumerate(per_rank[0]["collectives"][name]):
            t = e["median_s"]
            points.append({**e,
                           "rank_medians_s": [pr["collectives"][name][i]["median_s"]
                                              for pr in per_rank],
                           "rank_batched_medians_s": [pr["collectives"][name][i]["batched_median_s"]
                                                      for pr in per_rank],
                           "dispatch_skew_s": t - e["batched_median_s"],
                           "algbw_bytes_per_s": float(model.algbw_bytes_per_s(e["message_bytes"], t)),
                           "busbw_bytes_per_s": float(model.busbw_bytes_per_s(
                               e["message_bytes"], t, name, ranks))})
        run["collectives"][name] = points
        if ranks < 2:
            continue
        n = [q["message_bytes"] for q in points]
        single = [q["median_s"] for q in points]
        batched = [q["batched_median_s"] for q in points]
        run["fit"][name] = _fit_record(n, single, ranks, name)
        run["fit_batched"][name] = _fit_record(n, batched, ranks, name)
        run["regimes"][name] = _regime_record(n, single, ranks, name)
        run["regimes_batched"][name] = _regime_record(n, batched, ranks, name)
    return run


def nccl_ranks() -> int:
    """GPUs the NCCL group uses: ``min(2, torch.cuda.device_count())`` (0 without CUDA)."""
    import torch

    return min(2, torch.cuda.device_count()) if torch.cuda.is_available() else 0


def run(device: str | None = None) -> dict:
    """Measure the gloo groups and, on a machine with two GPUs, the NCCL group; with one GPU,
    an NCCL group of one rank (its launch and dispatch floor: no wire). A failure of that
    one-rank group is recorded in ``settings["nccl_error"]`` and the gloo groups still run."""
    device = device or lab_device()
    cuda = device.startswith("cuda")
    n_gpu = nccl_ranks() if cuda else 0
    result = new_result(LAB, device, collectives=list(MEASURED), gloo_ranks=list(GLOO_RANKS),
                        gloo_sizes_bytes=gloo_sizes_bytes(), nccl_sizes_bytes=nccl_sizes_bytes(),
                        repeats={b: list(repeats(b)) for b in ("gloo", "nccl")},
                        batch={"target_s": BATCH[0], "max_calls": BATCH[1],
                               "enqueue_reps": ENQUEUE_REPS},
                        dtype="float32", seed=2024)
    runs = []
    groups = [("gloo", p, gloo_sizes_bytes()) for p in GLOO_RANKS]
    if cuda and n_gpu >= 1:
        import torch

        v = torch.cuda.nccl.version()
        result["settings"]["nccl_version"] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        groups.insert(0, ("nccl", n_gpu, nccl_sizes_bytes()))
    if cuda and n_gpu < 2:
        note = (f"NCCL needs 2 GPUs to send anything and this machine has {n_gpu}: "
                + ("an NCCL group of 1 rank measures the launch and dispatch floor, and "
                   if n_gpu else "") + "the gloo groups run on the CPU.")
        print(note)
        result["settings"]["note"] = note
    for backend, p, sizes in progress(groups, desc="process groups"):
        try:
            runs.append(measure_group(backend, p, sizes,
                                      timeout_s=LAB.size("group_timeout_s")))
        except Exception as exc:  # noqa: BLE001 - a one-rank NCCL failure must not lose gloo
            if backend != "nccl" or p >= 2:
                raise
            msg = f"NCCL group of 1 rank failed: {type(exc).__name__}: {exc}"
            print(msg)
            result["settings"]["nccl_error"] = msg[:2000]
    result["measurements"]["runs"] = runs
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference
#: Where the one-GPU H200 run lives (an NCCL group of one rank beside the gloo groups): a
#: folder of its own, since the lab's reference file is the two-GPU run.
ONE_GPU_FILE = core.REFERENCE_DIR / "one-gpu" / "collectives.json"


def one_gpu_reference(path=None) -> dict | None:
    """The shipped one-GPU H200 run (its NCCL group of one rank: the launch and dispatch
    floor), checked by :func:`helpers.labs.core.load_result`; None, with one line, when the
    file is absent."""
    path = ONE_GPU_FILE if path is None else path
    if not path.exists():
        print("One-GPU H200 run not measured yet.")
        return None
    return core.load_result(path)


# --- analysis (the page's tables and plots) -------------------------------------------------

def _run(result: dict, backend: str, ranks: int | None = None) -> dict | None:
    """The first run of ``backend`` with ``ranks`` ranks; ``ranks=None`` takes the first run of
    two or more ranks (a one-rank group has no fit: ask for it with ``ranks=1``)."""
    for r in result["measurements"]["runs"]:
        if r["backend"] == backend and (r["ranks"] == ranks if ranks is not None
                                        else r["ranks"] >= 2):
            return r
    return None


def rows(result: dict, backend: str, ranks: int | None = None, collective: str = "all_reduce"
         ) -> list[dict]:
    """Per size of one run: measured time, algbw, busbw, the fitted model's time and its error.
    Empty when the result has no such run."""
    r = _run(result, backend, ranks)
    if r is None:
        return []
    fit = r["fit"][collective]
    out = []
    for q in r["collectives"][collective]:
        t_model = float(model.collective_time_s(collective, q["message_bytes"], r["ranks"],
                                                fit["alpha_s"], fit["beta_s_per_byte"]))
        out.append({"message_bytes": q["message_bytes"], "measured_s": q["median_s"],
                    "model_s": t_model, "error": t_model / q["median_s"] - 1,
                    "algbw_bytes_per_s": q["algbw_bytes_per_s"],
                    "busbw_bytes_per_s": q["busbw_bytes_per_s"],
                    "spread": q["bench"]["spread"]})
    return out


def fits(result: dict) -> list[dict]:
    """One row per run and collective: backend, ranks, alpha (s), bandwidth 1/beta (bytes/s),
    the worst relative residual."""
    out = []
    for r in result["measurements"]["runs"]:
        for name, f in r["fit"].items():
            b = f["beta_s_per_byte"]
            out.append({"backend": r["backend"], "ranks": r["ranks"], "collective": name,
                        "alpha_s": f["alpha_s"], "bandwidth_bytes_per_s": 1 / b if b > 0 else math.inf,
                        "worst_residual": max(abs(v) for v in f["residuals"])})
    return out


def largest(result: dict, backend: str, ranks: int | None = None,
            collective: str = "all_reduce") -> dict | None:
    """The largest message's row of :func:`rows` (None if the run is absent)."""
    rs = rows(result, backend, ranks, collective)
    return rs[-1] if rs else None


def comparison(reference: dict | None, yours: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """The lab table's numbers: busbw at the largest size, model (NVLink per direction on the
    datasheet) vs the H200's NCCL run, and yours (your NCCL run, else your 2-process gloo)."""
    link = gpu.nvlink.per_direction_bytes_per_s
    out = []
    for name in MEASURED:
        h200 = largest(reference, "nccl", None, name) if reference else None
        mine = largest(yours, "nccl", None, name) or largest(yours, "gloo", 2, name)
        out.append({"collective": name, "model_busbw": link,
                    "h200_busbw": h200["busbw_bytes_per_s"] if h200 else None,
                    "yours_busbw": mine["busbw_bytes_per_s"] if mine else None})
    return out


def comparison_rows(reference: dict | None, yours: dict | None = None,
                    gpu: specs.GPUSpec = GPU) -> list:
    """The lab table's rows (:func:`comparison` as ``report.Row``): busbw at the largest
    message, the NVLink datasheet model against the H200's NCCL run and yours."""
    from helpers import units
    from helpers.labs.report import Row

    empty = {"measurements": {"runs": []}}
    return [Row(f"{r['collective']} busbw", "GB/s", units.GB, model=r["model_busbw"],
                h200=r["h200_busbw"], yours=r["yours_busbw"])
            for r in comparison(reference, yours if yours is not None else empty, gpu)]


def describe(result: dict) -> str:
    """A few lines per run: the fitted alpha and bandwidth, and the largest size's busbw."""
    from helpers.units import fmt_rate, fmt_time

    lines = []
    for r in result["measurements"]["runs"]:
        if r["ranks"] < 2:
            q = r["collectives"]["all_reduce"][0]
            lines.append(f"{r['backend']} x1 (no peer: launch and dispatch floor) all_reduce of "
                         f"{q['message_bytes']} B: one call {fmt_time(q['median_s'])}"
                         + (f", batched {fmt_time(q['batched_median_s'])} per call"
                            if "batched_median_s" in q else ""))
            continue
        for name in MEASURED:
            f = r["fit"][name]
            big = r["collectives"][name][-1]
            bw = (fmt_rate(1 / f["beta_s_per_byte"], "B/s") if f["beta_s_per_byte"] > 0 else
                  "not resolved (the times do not grow with size here)")
            fb = r.get("fit_batched", {}).get(name)
            lines.append(f"{r['backend']} x{r['ranks']} {name}: alpha {fmt_time(f['alpha_s'])}"
                         + (f" (batched {fmt_time(fb['alpha_s'])})" if fb else "")
                         + f", 1/beta {bw}; busbw at "
                         f"{big['message_bytes']} B {fmt_rate(big['busbw_bytes_per_s'], 'B/s')}")
    return "\n".join(lines)


def _fit_numbers(result: dict | None, backend: str, ranks: int | None, name: str) -> dict:
    r = _run(result, backend, ranks) if result else None
    if r is None:
        return {"ranks": None, "alpha_s": None, "bw": None, "worst": None, "busbw": None,
                "size": None, "n_half": None}
    f = r["fit"][name]
    ca, cb = model._coefficients(name, r["ranks"])
    big = r["collectives"][name][-1]
    bw = 1 / f["beta_s_per_byte"] if f["beta_s_per_byte"] > 0 else None
    return {"ranks": r["ranks"], "alpha_s": f["alpha_s"], "bw": bw,
            "worst": max(abs(v) for v in f["residuals"]), "busbw": big["busbw_bytes_per_s"],
            "size": big["message_bytes"],
            # the size at which the latency and bandwidth terms are equal
            "n_half": ca * f["alpha_s"] * bw / cb if bw else None}


_NCCL_KEYS = ("ranks", "alpha_us", "bw_gbs", "worst_pct", "busbw_gbs", "size_mib",
              "busbw_link_pct", "n_half_kib")
_GLOO_KEYS = ("alpha_us", "bw_mbs", "worst_pct", "busbw_mbs", "size_mib", "n_half_kib")


@page_numbers([f"nccl_{k}" for k in _NCCL_KEYS]
              + [f"gloo{p}_{k}" for p in GLOO_RANKS for k in _GLOO_KEYS])
def prose_numbers(result: dict | None, gpu: specs.GPUSpec = GPU) -> dict[str, str]:
    """The strings a page glues about one result (all-reduce fits and bandwidths); every value
    is :data:`MISSING` when ``result`` is None or lacks the run."""
    link = gpu.nvlink.per_direction_bytes_per_s
    nccl = _fit_numbers(result, "nccl", None, "all_reduce")
    out = {"nccl_ranks": fmt(nccl["ranks"], "d"),
           "nccl_alpha_us": fmt(nccl["alpha_s"], ".4g", 1e-6),
           "nccl_bw_gbs": fmt(nccl["bw"], ".3g", 1e9),
           "nccl_worst_pct": fmt(nccl["worst"], ".0f", 0.01),
           "nccl_busbw_gbs": fmt(nccl["busbw"], ".3g", 1e9),
           "nccl_size_mib": fmt(nccl["size"], ".4g", 2**20),
           "nccl_busbw_link_pct": fmt(nccl["busbw"] / link if nccl["busbw"] else None, ".0f", 0.01),
           "nccl_n_half_kib": fmt(nccl["n_half"], ".4g", 2**10)}
    for p in GLOO_RANKS:
        g = _fit_numbers(result, "gloo", p, "all_reduce")
        out.update({f"gloo{p}_alpha_us": fmt(g["alpha_s"], ".4g", 1e-6),
                    f"gloo{p}_bw_mbs": fmt(g["bw"], ".0f", 1e6),
                    f"gloo{p}_worst_pct": fmt(g["worst"], ".0f", 0.01),
                    f"gloo{p}_busbw_mbs": fmt(g["busbw"], ".0f", 1e6),
                    f"gloo{p}_size_mib": fmt(g["size"], ".3g", 2**20),
                    f"gloo{p}_n_half_kib": fmt(g["n_half"], ".0f", 2**10)})
    return out


def batching(result: dict | None, backend: str, ranks: int | None = None,
             collective: str = "all_reduce") -> list[dict]:
    """Per size of one run, the two timings side by side: one call per interval (dispatch
    included), the batched per-call time, their difference (dispatch and peer skew per call),
    the calls per batch and, on NCCL, the host time to enqueue one call. Empty when the run is
    absent or was measured before batched timing existed (the shipped 2-GPU reference)."""
    r = _run(result, backend, ranks) if result else None
    if r is None:
        return []
    out = []
    for q in r["collectives"][collective]:
        if "batched_median_s" not in q:
            return []
        out.append({"message_bytes": q["message_bytes"], "single_s": q["median_s"],
                    "batched_s": q["batched_median_s"],
                    "dispatch_skew_s": q["median_s"] - q["batched_median_s"],
                    "batch_calls": q["batch_calls"], "enqueue_s": q.get("enqueue_s"),
                    "graph_s": q.get("graph_s")})
    return out


def host_bound(result: dict | None, backend: str = "nccl", ranks: int | None = None,
               collective: str = "all_reduce", rel_tol: float = 0.2,
               gpu: specs.GPUSpec = GPU) -> dict | None:
    """Where one run's single-call times are flat
    (:func:`helpers.models.collectives.flat_region_end_bytes`): the region's last size, the
    smallest size's time, how many sizes are in the region and how many of them inside the
    band, the time at the region's end and the bandwidth term the datasheet link alone needs
    at that size (alpha = 0, beta = 1 / NVLink per direction). None without the run."""
    r = _run(result, backend, ranks) if result else None
    if r is None:
        return None
    pts = r["collectives"][collective]
    n = [q["message_bytes"] for q in pts]
    t = [q["median_s"] for q in pts]
    end = model.flat_region_end_bytes(n, t, rel_tol)
    inside = [(m, x) for m, x in zip(n, t) if m <= end]
    link = gpu.nvlink.per_direction_bytes_per_s
    t_end = dict(zip(n, t))[end]
    return {"end_bytes": end, "floor_s": t[n.index(min(n))], "smallest_bytes": float(min(n)),
            "n_sizes": len(inside), "n_within": sum(x <= (1 + rel_tol) * t[n.index(min(n))]
                                                    for _, x in inside),
            "end_s": t_end, "rel_tol": rel_tol,
            "end_wire_s": float(model.collective_time_s(collective, end, r["ranks"], 0.0, 1 / link)),
            "growth_s": t_end - t[n.index(min(n))]}


def _batch_numbers(result: dict | None, p: int) -> dict:
    r = _run(result, "gloo", p) if result else None
    rows_ = batching(result, "gloo", p)
    if r is None or not rows_:
        return {}
    first = rows_[0]
    fs, fb = r["fit"]["all_reduce"], r["fit_batched"]["all_reduce"]
    reg = r["regimes_batched"]["all_reduce"]
    d = r.get("dispatch") or {}
    return {"single_us": first["single_s"], "batched_us": first["batched_s"],
            "diff_us": first["dispatch_skew_s"],
            "diff_pct": first["dispatch_skew_s"] / first["single_s"],
            "n_below": sum(x["batched_s"] < x["single_s"] for x in rows_), "n_sizes": len(rows_),
            "k": first["batch_calls"], "alpha_us": fs["alpha_s"], "alpha_batched_us": fb["alpha_s"],
            "alpha_ratio": fb["alpha_s"] / fs["alpha_s"] if fs["alpha_s"] > 0 else None,
            "small_alpha_us": reg["small"]["alpha_s"] if reg else None,
            "large_bw_mbs": (1 / reg["large"]["beta_s_per_byte"]
                             if reg and reg["large"]["beta_s_per_byte"] > 0 else None),
            "split_kib": reg["split_bytes"] if reg else None,
            "dispatch_us": d.get("median_s"),
            "dispatch_alpha": (d["median_s"] / fs["alpha_s"]
                               if d.get("median_s") and fs["alpha_s"] > 0 else None)}


_BATCH_KEYS = ("size_kib", "k", "single_us", "batched_us", "diff_us", "diff_pct", "below",
               "n_below", "n_sizes", "alpha_us", "alpha_batched_us", "alpha_ratio",
               "alpha_lower", "small_alpha_us", "large_bw_mbs", "split_kib", "dispatch_us",
               "dispatch_alpha_pct")


@page_numbers([f"gloo{p}_{k}" for p in GLOO_RANKS for k in _BATCH_KEYS])
def batching_numbers(result: dict | None) -> dict[str, str]:
    """The strings a page glues about batched timing of the gloo all-reduce: at the smallest
    size the single-call and batched per-call times, their difference and whether batched is
    below; the fitted alpha of each series; the per-regime fit of the batched series; the
    one-rank dispatch floor. Every value is :data:`MISSING` without the data."""
    out = {}
    for p in GLOO_RANKS:
        b = _batch_numbers(result, p)
        get = b.get
        diff = get("diff_us")
        ratio = get("alpha_ratio")
        sizes = gloo_sizes_bytes()
        out.update({
            f"gloo{p}_size_kib": fmt(float(sizes[0]) if b else None, ".0f", 2**10),
            f"gloo{p}_k": fmt(get("k"), "d"),
            f"gloo{p}_single_us": fmt(get("single_us"), ".4g", 1e-6),
            f"gloo{p}_batched_us": fmt(get("batched_us"), ".4g", 1e-6),
            f"gloo{p}_diff_us": fmt(abs(diff) if diff is not None else None, ".4g", 1e-6),
            f"gloo{p}_diff_pct": fmt(abs(get("diff_pct")) if diff is not None else None, ".0f", 0.01),
            f"gloo{p}_below": (MISSING if diff is None else "below" if diff > 0
                               else "above" if diff < 0 else "equal to"),
            f"gloo{p}_n_below": fmt(get("n_below"), "d"),
            f"gloo{p}_n_sizes": fmt(get("n_sizes"), "d"),
            f"gloo{p}_alpha_us": fmt(get("alpha_us"), ".4g", 1e-6),
            f"gloo{p}_alpha_batched_us": fmt(get("alpha_batched_us"), ".4g", 1e-6),
            f"gloo{p}_alpha_ratio": fmt(ratio, ".2f"),
            f"gloo{p}_alpha_lower": (MISSING if ratio is None else "lower" if ratio < 1
                                     else "higher" if ratio > 1 else "the same"),
            f"gloo{p}_small_alpha_us": fmt(get("small_alpha_us"), ".4g", 1e-6),
            f"gloo{p}_large_bw_mbs": fmt(get("large_bw_mbs"), ".0f", 1e6),
            f"gloo{p}_split_kib": fmt(get("split_kib"), ".0f", 2**10),
            f"gloo{p}_dispatch_us": fmt(get("dispatch_us"), ".3g", 1e-6),
            f"gloo{p}_dispatch_alpha_pct": fmt(get("dispatch_alpha"), ".0f", 0.01)})
    return out


_HOST_KEYS = ("flat_end_mib", "flat_from_b", "flat_n_sizes", "flat_n_within", "flat_tol_pct",
              "floor_us", "end_us", "end_wire_us", "growth_us", "growth_word", "alpha_floor_pct",
              "small_alpha_us", "small_bw_gbs", "large_alpha_us", "large_bw_gbs", "split_mib")


@page_numbers([f"nccl_{k}" for k in _HOST_KEYS])
def host_bound_numbers(result: dict | None, gpu: specs.GPUSpec = GPU) -> dict[str, str]:
    """The strings a page glues about which NCCL all-reduce sizes are host-bound
    (:func:`host_bound`) and the per-regime fit of the single-call times (computed here when
    the result predates it). Every value is :data:`MISSING` without an NCCL run."""
    h = host_bound(result, "nccl", None, "all_reduce", gpu=gpu)
    r = _run(result, "nccl", None) if result else None
    reg = None
    if r is not None:
        reg = r.get("regimes", {}).get("all_reduce")
        if reg is None:
            pts = r["collectives"]["all_reduce"]
            reg = _regime_record([q["message_bytes"] for q in pts], [q["median_s"] for q in pts],
                                 r["ranks"], "all_reduce")
    hv = h or {}
    alpha = r["fit"]["all_reduce"]["alpha_s"] if r else None
    ca = model._coefficients("all_reduce", r["ranks"])[0] if r else None
    growth = hv.get("growth_s")

    def side(name, key):
        return reg[name][key] if reg else None

    lb, sb = side("large", "beta_s_per_byte"), side("small", "beta_s_per_byte")
    return {"nccl_flat_end_mib": fmt(hv.get("end_bytes"), ".4g", 2**20),
            "nccl_flat_from_b": fmt(hv.get("smallest_bytes"), ".0f"),
            "nccl_flat_n_sizes": fmt(hv.get("n_sizes"), "d"),
            "nccl_flat_n_within": fmt(hv.get("n_within"), "d"),
            "nccl_flat_tol_pct": fmt(hv.get("rel_tol"), ".0f", 0.01),
            "nccl_floor_us": fmt(hv.get("floor_s"), ".3g", 1e-6),
            "nccl_end_us": fmt(hv.get("end_s"), ".3g", 1e-6),
            "nccl_end_wire_us": fmt(hv.get("end_wire_s"), ".3g", 1e-6),
            "nccl_growth_us": fmt(abs(growth) if growth is not None else None, ".2g", 1e-6),
            "nccl_growth_word": (MISSING if growth is None else "less" if growth < 0
                                 else "more"),
            # the share of the smallest size's time that the fitted latency terms account for
            "nccl_alpha_floor_pct": fmt(ca * alpha / hv["floor_s"] if h else None, ".0f", 0.01),
            "nccl_small_alpha_us": fmt(side("small", "alpha_s"), ".3g", 1e-6),
            "nccl_small_bw_gbs": fmt(1 / sb if sb else None, ".3g", 1e9),
            "nccl_large_alpha_us": fmt(side("large", "alpha_s"), ".3g", 1e-6),
            "nccl_large_bw_gbs": fmt(1 / lb if lb else None, ".3g", 1e9),
            "nccl_split_mib": fmt(reg["split_bytes"] if reg else None, ".4g", 2**20)}


_FLOOR_KEYS = ("single_us", "batched_us", "enqueue_us", "graph_us", "enqueue_share_pct",
               "graph_ratio", "graph_word", "host_bound", "size_b", "k")
#: The enqueue's share of the batched per-call time above which the batch is host-bound.
HOST_BOUND_SHARE = 0.8


@page_numbers([f"floor_{k}" for k in _FLOOR_KEYS])
def floor_numbers(result: dict | None, collective: str = "all_gather") -> dict[str, str]:
    """The strings a page glues about an NCCL group of one rank at its smallest size (no peer,
    no wire): one call timed by events (dispatch included), the batched per-call time, the host
    enqueue time per call, the CUDA-graph replay per call, the enqueue's share of the batched
    time and how many times the graph replay fits in the batched call. The all-gather is the
    default because with one rank it still copies its input (an in-place all-reduce of one
    rank has nothing to do). :data:`MISSING` without the run."""
    rows_ = batching(result, "nccl", 1, collective) if result else []
    q = rows_[0] if rows_ else {}
    g, b, e = q.get("graph_s"), q.get("batched_s"), q.get("enqueue_s")
    return {"floor_single_us": fmt(q.get("single_s"), ".3g", 1e-6),
            "floor_batched_us": fmt(b, ".3g", 1e-6),
            "floor_enqueue_us": fmt(e, ".3g", 1e-6),
            "floor_graph_us": fmt(g, ".2g", 1e-6),
            "floor_enqueue_share_pct": fmt(e / b if e and b else None, ".0f", 0.01),
            "floor_graph_ratio": fmt(max(b / g, g / b) if g and b else None, ".0f"),
            "floor_graph_word": MISSING if not (g and b) else "less" if g < b else "more",
            "floor_host_bound": (MISSING if not (e and b) else
                                 "host-bound: the GPU waits for the host to launch each call"
                                 if e >= HOST_BOUND_SHARE * b else
                                 "not host-bound: the host launches calls faster than the GPU "
                                 "runs them"),
            "floor_size_b": fmt(q.get("message_bytes"), ".0f"),
            "floor_k": fmt(q.get("batch_calls"), "d")}


# --- grading --------------------------------------------------------------------------------

def grade_busbw_factor(factor_fn: Callable[[str, int], float]) -> Verdict:
    """Check a reader's ``factor_fn(collective, ranks)`` against nccl-tests' bus-bandwidth
    factors for every measured collective and 1 to 16 ranks. The verdict names the first
    mismatch (collective, ranks, value expected)."""
    name = "bus bandwidth factor"
    for coll in MEASURED:
        for p in range(1, 17):
            want = model.busbw_factor(coll, p)
            try:
                got = float(factor_fn(coll, p))
            except Exception as exc:  # the reader's code raising is a failure, said plainly
                return Verdict(name, "FAIL", [f"{coll} on {p} ranks raised {type(exc).__name__}: {exc}"])
            if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
                hint = ("all-reduce moves 2(n-1)/n of the buffer per link" if coll == "all_reduce"
                        else "all-gather and reduce-scatter move (n-1)/n of it")
                return Verdict(name, "FAIL", [f"{coll} on {p} ranks: got {got:.4g}, expected "
                                              f"{want:.4g} ({hint}, nccl-tests)"])
    return Verdict(name, "PASS", [f"matches nccl-tests for {', '.join(MEASURED)} on 1 to 16 ranks"])


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
