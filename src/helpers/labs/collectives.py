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
(:func:`reference_or_none`, and :func:`one_gpu_reference` for the one-GPU run);
``chapters/collectives.md`` quotes a small run and the reference. What the pages compute from a
result (rows, fits, tables, glued numbers) is in :mod:`helpers.labs.analysis.collectives`. Run as
``python -m helpers.labs.collectives --out DIR [--size small|full] [--device cpu|cuda]``.

Kept here beside the measurement: :func:`grade_busbw_factor`, the grader of the page's
exercise.
"""

from __future__ import annotations

import math
from typing import Callable

from helpers import specs
from helpers.bench import bench
from helpers.bench.device import capture_graph
from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.grading import Verdict
from helpers.labs.report import Claim
from helpers.models import collectives as model

__all__ = ["LAB", "GPU", "MEASURED", "GLOO_RANKS", "gloo_sizes_bytes", "nccl_sizes_bytes",
           "repeats", "measure_rank", "measure_group", "nccl_ranks", "run", "reference_or_none",
           "BATCH", "ENQUEUE_REPS", "batch_calls", "one_gpu_reference", "ONE_GPU_FILE",
           "grade_busbw_factor", "main"]

#: The lab's record: its pages and size table (each rank times a fixed number of repeats).
LAB = core.Lab(
    "collectives", pages=("labs/collectives.md", "chapters/collectives.md"),
    sizes={"nccl_sizes_bytes": ([8, 1 << 12, 1 << 17, 1 << 20], [1 << k for k in range(3, 31)]),
           # (warm-up calls, timed repeats) per size
           "nccl_repeats": ((3, 10), (5, 25)), "gloo_repeats": ((2, 15), (3, 21)),
           "group_timeout_s": (180.0, 400.0)},
    claims=(
        Claim("busbw_nvlink", "bus bandwidth at the largest message (each collective)", "bound",
              model="helpers.specs.H200_SXM.nvlink.per_direction_bytes_per_s",
              ceilings="datasheet: NVLink 4 of the H200 SXM, 450 GB/s per direction",
              why="bus bandwidth counts the bytes one rank's link carries in one direction "
                  "(nccl-tests); between two GPUs every byte crosses that one link, so no "
                  "collective can report more than the link's rate",
              limit="upper"),
        Claim("busbw_extrapolated", "bus bandwidth at the largest message, predicted from the "
              "two sizes below it (each collective)", "prediction",
              model="helpers.models.collectives.two_point_time_s, then busbw_bytes_per_s",
              ceilings="measured in the same run: the collective's times at a quarter and at "
                       "half the largest size (256 and 512 MiB on the H200)",
              why="the alpha-beta line through the two sizes below assumes beta stays constant "
                  "one doubling further; on the H200 pair the bus bandwidth still rises about "
                  "5 % per doubling at the top (NCCL's pipeline fills better with larger "
                  "chunks), so the line can run that much slow, plus the run's spread of about "
                  "1 %; 10 % covers both with room for a second doubling's worth of that drift",
              tolerance=0.10)))
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
    graph, error = None, None
    try:  # capture wants its collectives warmed on a side stream, as capture_graph does
        graph, _ = capture_graph(fn, device=device, calls=calls)
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
