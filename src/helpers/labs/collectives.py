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


def _case(name: str, size: int, rank: int, p: int, device: str, seed: int):
    """(fn timed, check) for one collective at ``size`` bytes on this rank.

    ``check()`` poisons the output, runs the collective once and raises AssertionError unless
    the output equals the closed form exactly.
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
        timed = (base + rank) * _TINY

        def fn():
            dist.all_reduce(timed)
    elif name == "all_gather":
        inp = base[rank * m:(rank + 1) * m] + rank
        out = torch.empty(n, device=device)
        want = base + torch.arange(p, device=device, dtype=torch.float32).repeat_interleave(m)

        def check():
            out.fill_(float("nan"))
            gather(out, inp)
            return out, want

        def fn():
            gather(out, inp)
    elif name == "reduce_scatter":
        inp = base + rank
        out = torch.empty(m, device=device)
        want = base[rank * m:(rank + 1) * m] * p + p * (p - 1) / 2

        def check():
            out.fill_(float("nan"))
            scatter(out, inp)
            return out, want

        def fn():
            scatter(out, inp)
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


def measure_rank(rank: int, world_size: int, sizes: list[int], collectives=MEASURED,
                 warmup: int = 2, reps: int = 9, seed: int = 2024) -> dict:
    """Run in every rank (under :func:`helpers.distributed.spawn`): check, then time, each
    collective at each size. Returns this rank's medians, and rank 0's full summaries with
    every repeat."""
    import torch.distributed as dist

    backend = dist.get_backend()
    device = f"cuda:{rank}" if backend == "nccl" else "cpu"
    if "all_reduce" in collectives and warmup + reps + 3 > _max_calls(world_size):
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
            entries.append(entry)
            del fn, checked
        out["collectives"][name] = entries
    dist.barrier()
    return out


# --- one group ------------------------------------------------------------------------------

def measure_group(backend: str, ranks: int, sizes: list[int], *, timeout_s: float = 300.0
                  ) -> dict:
    """Spawn ``ranks`` processes on ``backend``, run :func:`measure_rank`, and assemble the
    run: per collective and size, rank 0's summary and repeats, every rank's median, algbw,
    busbw; then the alpha-beta fit per collective."""
    from helpers.distributed import spawn

    warmup, reps = repeats(backend)
    per_rank = spawn(measure_rank, ranks, backend, args=(list(sizes), MEASURED, warmup, reps),
                     timeout_s=timeout_s, threads_per_rank=1 if backend == "gloo" else None)
    run = {"backend": backend, "ranks": ranks, "device": per_rank[0]["device"],
           "warmup_calls": warmup, "repeats": reps, "timed_by": (
               "CUDA events on each rank's stream (rank 0 reported)" if backend == "nccl"
               else "perf_counter around each blocking call (rank 0 reported)"),
           "collectives": {}, "fit": {}}
    for name in MEASURED:
        points = []
        for i, e in enumerate(per_rank[0]["collectives"][name]):
            t = e["median_s"]
            points.append({**e,
                           "rank_medians_s": [pr["collectives"][name][i]["median_s"]
                                              for pr in per_rank],
                           "algbw_bytes_per_s": float(model.algbw_bytes_per_s(e["message_bytes"], t)),
                           "busbw_bytes_per_s": float(model.busbw_bytes_per_s(
                               e["message_bytes"], t, name, ranks))})
        run["collectives"][name] = points
        fit = model.fit_alpha_beta([q["message_bytes"] for q in points],
                                   [q["median_s"] for q in points], ranks, name)
        run["fit"][name] = {"alpha_s": fit.alpha_s, "beta_s_per_byte": fit.beta_s_per_byte,
                            "residuals": [float(v) for v in fit.residuals]}
    return run


def nccl_ranks() -> int:
    """GPUs the NCCL group uses: ``min(2, torch.cuda.device_count())`` (0 without CUDA)."""
    import torch

    return min(2, torch.cuda.device_count()) if torch.cuda.is_available() else 0


def run(device: str | None = None) -> dict:
    """Measure the gloo groups and, on a machine with two GPUs, the NCCL group."""
    device = device or lab_device()
    cuda = device.startswith("cuda")
    n_gpu = nccl_ranks() if cuda else 0
    result = new_result(LAB, device, collectives=list(MEASURED), gloo_ranks=list(GLOO_RANKS),
                        gloo_sizes_bytes=gloo_sizes_bytes(), nccl_sizes_bytes=nccl_sizes_bytes(),
                        repeats={b: list(repeats(b)) for b in ("gloo", "nccl")},
                        dtype="float32", seed=2024)
    runs = []
    groups = [("gloo", p, gloo_sizes_bytes()) for p in GLOO_RANKS]
    if cuda and n_gpu >= 2:
        import torch

        v = torch.cuda.nccl.version()
        result["settings"]["nccl_version"] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        groups.insert(0, ("nccl", n_gpu, nccl_sizes_bytes()))
    elif cuda:
        note = (f"NCCL needs 2 GPUs and this machine has {n_gpu}: only the gloo groups "
                "run (on the CPU).")
        print(note)
        result["settings"]["note"] = note
    for backend, p, sizes in progress(groups, desc="process groups"):
        runs.append(measure_group(backend, p, sizes,
                                  timeout_s=LAB.size("group_timeout_s")))
    result["measurements"]["runs"] = runs
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- analysis (the page's tables and plots) -------------------------------------------------

def _run(result: dict, backend: str, ranks: int | None = None) -> dict | None:
    for r in result["measurements"]["runs"]:
        if r["backend"] == backend and (ranks is None or r["ranks"] == ranks):
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
        for name in MEASURED:
            f = r["fit"][name]
            big = r["collectives"][name][-1]
            bw = (fmt_rate(1 / f["beta_s_per_byte"], "B/s") if f["beta_s_per_byte"] > 0 else
                  "not resolved (the times do not grow with size here)")
            lines.append(f"{r['backend']} x{r['ranks']} {name}: alpha {fmt_time(f['alpha_s'])}, "
                         f"1/beta {bw}; busbw at "
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
