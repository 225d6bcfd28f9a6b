"""Lab runner: a tiled GEMM in Triton against ``torch.matmul`` (cuBLAS).

Three measurements, each kernel checked against a float64 reference on fresh random inputs
(drawn in [0.5, 1.5), never zeros) before it is timed, with the error recorded:

* **check**: the book's Triton kernel (:func:`helpers.kernels.gemm.matmul`) on small shapes,
  one of them odd (``50 x 70 x 30``, which exercises every mask), in bf16 and fp32. On a CPU
  this runs through Triton's interpreter and is all the Triton work the CPU tier does.
* **configs** (GPU): a small explicit sweep of tilings (:data:`CONFIGS`: block sizes, pipeline
  stages 3/4/5, grouped ordering ``GROUP_M`` 1 vs 8) at ``8192^3`` in bf16, beside
  ``torch.matmul`` at the same size. A tiling the GPU cannot hold (too much shared memory) is
  recorded as failed, with its reason, and skipped.
* **sizes**: square bf16 products from 1024 to 8192 (some awkward for 132 SMs) with the best
  tiling and with ``torch.matmul`` on a GPU; on a CPU, ``torch.matmul`` in fp32 over small
  sizes, which shows this machine's rate against size.
  On a GPU each product is timed twice: one Python call per timed interval (the launcher
  included), and replayed back to back from a CUDA graph (the kernels alone), which is what
  the page's predictions compare with.
* **launch** and **probe** (GPU): an empty Triton launch timed the same three ways (one call
  per interval, host time per call, from a graph), and ``n x n x K`` products with short K
  loops at :data:`PROBE_SIZES`, whose line gives a fixed cost per product and a rate per step.
* **fp32** (GPU): the best block shape in fp32 with TF32 off (``input_precision="ieee"``,
  against torch with ``torch.backends.cuda.matmul.fp32_precision = "ieee"``) and on
  (``"tf32"`` for both), so each comparison is made at the same setting.

Timing goes through :func:`helpers.bench.bench` only (CUDA events on a GPU). Page:
``labs/gemm.md``; it compares the results with the models of :mod:`helpers.models.gemm` and with
the reference measured on an H200 (:func:`reference_or_none`). Run as
``python -m helpers.labs.gemm --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept in this module: :func:`grade_gemm` and
:func:`grade_gemm_speed` (the grader of the page's exercise). What the page computes from a
result (``config_rows``, ``size_rows``, ``best_config``, ``comparison_rows``, ``describe``, ...)
lives in :mod:`helpers.labs.analysis.gemm`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

from helpers import specs
from helpers.bench import sync
from helpers.bench.device import graph_bench, graph_calls, uniform
from helpers.labs import core
from helpers.labs.core import (MISSING, NoConfigRan, fastest_config, fmt, lab_device,
                                new_result, progress, run_cli, summarize)
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.labs.report import Claim
from helpers.models import roofline
from helpers.kernels import triton_device

__all__ = ["LAB", "GPU", "FULL_SIZES", "CONFIGS", "FP32_CONFIG", "CHECK_SHAPES", "GRADE_CONFIG", "sizes",
           "sweep_size", "measure_check", "measure_configs", "measure_sizes", "measure_fp32",
           "measure_launch", "measure_probe", "PROBE_SIZES",
           "run", "reference_or_none", "fmt", "MISSING", "grade_gemm", "grade_gemm_speed", "main"]

#: The GPU whose datasheet the model uses (and on which the reference was measured).
GPU = specs.H200_SXM


#: The tilings of the GPU sweep, as ``(BM, BN, BK, GROUP_M, stages, warps)``.
CONFIGS = ((128, 256, 64, 8, 3, 8), (256, 128, 64, 8, 3, 8), (128, 128, 64, 8, 4, 4),
           (128, 128, 64, 8, 3, 8), (128, 256, 64, 8, 4, 8), (128, 128, 64, 8, 5, 4),
           (128, 256, 64, 1, 3, 8), (128, 128, 64, 1, 4, 4), (64, 128, 64, 8, 3, 4))
#: The tiling of the fp32 runs (fp32 tiles take twice the shared memory of bf16 ones).
FP32_CONFIG = (128, 128, 32, 8, 3, 8)
#: Shapes ``(M, N, K)`` of the correctness check; the second is not a multiple of any block.
CHECK_SHAPES = ((64, 64, 64), (50, 70, 30))
#: The tiling used by the correctness check and the grader on a CPU (small blocks: the
#: interpreter is slow, and ``K = 30`` then ends in a partial block).
SMALL_CONFIG = (32, 32, 16, 2, 2, 4)
#: The tiling the grader times on a GPU (a known-good Hopper tiling).
GRADE_CONFIG = (128, 256, 64, 8, 3, 8)
TOLERANCE = {"bf16": 1e-2, "fp32": 1e-4, "tf32": 5e-3}


def _cfg(t):
    from helpers.kernels.gemm import GemmConfig

    return GemmConfig(*t)


# --- sizes ---------------------------------------------------------------------------------

#: Square sizes of the GPU's size sweep (some awkward for 132 SMs).
FULL_SIZES = (1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192)


#: The lab's record: its page, size table, bench settings and claims (its table's rows name them).
LAB = core.Lab(
    "gemm", pages=("labs/gemm.md",),
    sizes={"sizes": ([64, 128, 192, 256, 384, 512], list(FULL_SIZES)), "sweep_size": (256, 8192),
           "fp32_size": (256, 4096), "speed_check_size": (1024, 8192)},
    budget_s=(0.1, 0.3), warmup_s=(0.02, 0.05),
    claims=(
        Claim("peak_bound", "rate of torch.matmul and the Triton kernel", "bound",
              model="helpers.specs.GPUSpec.peak_flop_per_s",
              ceilings="datasheet dense peak of the precision (bf16, fp32, tf32)", limit="upper",
              why="no product runs faster than the tensor (or FP32) cores' datasheet rate at "
                  "the boost clock"),
        Claim("wave_bound", "rate of the best Triton tiling at 8192^3", "bound",
              model="helpers.models.gemm.quantized_rate_flop_per_s",
              ceilings="datasheet dense bf16 peak, the tiling's waves on the datasheet's SMs",
              limit="upper",
              why="the kernel's last wave leaves SMs idle and its partial tiles compute padding, "
                  "at best at the datasheet rate"),
        Claim("triton_rate", "rate of the best Triton tiling at each size", "prediction",
              model="helpers.models.gemm.quantized_rate_flop_per_s",
              ceilings="cuBLAS's (torch.matmul) bf16 rate at 8192^3 measured in the same run, "
                       "as the rate of a full wave; the tiling's waves on 132 SMs",
              tolerance=0.10,
              why="the kernel is timed from a CUDA graph of back-to-back calls, so the host's "
                  "launcher (about 12 us per call, the run's empty Triton launch) is not in "
                  "it; the run's spread is 1-2 %; at 8192 the two kernels agree within a few "
                  "per cent; left out: a fixed cost per product (launch, the pipeline's fill "
                  "and drain, the epilogue: about 4 us on the run's probe) and any change of "
                  "the rate per K step with the size, a few per cent of a long K loop",
              miss="at 1024 only 32 tiles run, one on each of 32 SMs, and the product takes "
                   "13 us: the run's short-K probe at the same size gives a fixed cost of 4.2 "
                   "us and a rate per K step 28 % above the wave model's (candidates: operands "
                   "of 2 MiB that stay in L2 across back-to-back products, and a clock not "
                   "held down by a long full load), two terms the model leaves out that only "
                   "partly cancel; the probe's own line (claim small_product_rate) predicts "
                   "the size within 2 %"),
        Claim("small_product_rate", "rate of the best Triton tiling at the probe's sizes",
              "prediction", model="helpers.models.gemm.rate_with_fixed_cost_flop_per_s",
              ceilings="fixed cost and rate per K step of the line through two n x n x K "
                       "products of the same run with short K loops (K = BLOCK_K x stages and "
                       "twice that), timed from a CUDA graph",
              tolerance=0.10,
              why="a product's time is a fixed cost plus a cost per K step (Hockney's t0 + "
                  "F/R); both come from other shapes of the same run, never from the rows "
                  "predicted; the run's spread is about 1 %; left out: the rate per step can "
                  "change as K grows (operands in L2 at short K, epilogue overlap), a few "
                  "per cent"),
    ))


def sizes() -> list[int]:
    """Square sizes of the size sweep: :data:`FULL_SIZES` on a GPU, small ones on a CPU."""
    return LAB.size("sizes")


def sweep_size() -> int:
    """The size of the configuration sweep (GPU only): 8192."""
    return LAB.size("sweep_size")


# --- helpers --------------------------------------------------------------------------------

def _pair(a_shape, b_shape, gen, device: str, dtype):
    """Operands ``a`` and ``b`` of ``dtype`` on ``device``, drawn in turn from ``gen`` by
    :func:`helpers.bench.device.uniform` (values in [0.5, 1.5), never zero)."""
    return (uniform(a_shape, gen, device=device, dtype=dtype),
            uniform(b_shape, gen, device=device, dtype=dtype))


def _dtype(prec: str):
    import torch

    return torch.bfloat16 if prec == "bf16" else torch.float32


@contextmanager
def _torch_precision(mode: str):
    """torch's cuBLAS fp32 products in ``"ieee"`` or ``"tf32"`` (the roofline lab's switch)."""
    from helpers.bench.precision import matmul_precision

    with matmul_precision(mode):
        yield


def _max_rel_error(fn, a, b, gen, rows: int | None = None) -> float:
    """Poison the output, run ``fn() -> C``, and return the largest relative error of C (or of
    ``rows`` random rows of it) against float64 computed from the same inputs."""
    import torch

    c = fn()
    sync(str(c.device))
    if rows is not None and rows < a.shape[0]:
        idx = torch.randperm(a.shape[0], generator=gen)[:rows].to(a.device)
        want = (a[idx].double() @ b.double()).cpu()
        got = c[idx].double().cpu()
    else:
        want = (a.double() @ b.double()).cpu()
        got = c.double().cpu()
    err = ((got - want).abs() / want.abs()).max()
    return float(err) if not torch.isnan(err) else float("inf")


def _triton_call(a, b, cfg, out, allow_tf32: bool = False):
    from helpers.kernels.gemm import matmul

    def fn():
        return matmul(a, b, cfg, out=out, allow_tf32=allow_tf32)
    return fn


def _require(err: float, tol: float, what: str) -> None:
    if not err <= tol:
        raise AssertionError(f"{what}: relative error {err:.3g} against float64 exceeds {tol:g}")


# --- measurements ---------------------------------------------------------------------------

def measure_check(device: str, gen) -> list[dict]:
    """The Triton kernel on :data:`CHECK_SHAPES` in bf16, fp32 (and TF32 on a GPU), against
    float64; C is poisoned with NaN first, so an unwritten element fails."""
    import torch

    tdev = triton_device(device)
    cfg = _cfg(SMALL_CONFIG)
    precs = ("bf16", "fp32", "tf32") if tdev.startswith("cuda") else ("bf16", "fp32")
    rows = []
    for m, n, k in CHECK_SHAPES:
        for prec in precs:
            a, b = _pair((m, k), (k, n), gen, tdev, _dtype(prec))
            out = torch.full((m, n), float("nan"), device=tdev, dtype=_dtype(prec))
            err = _max_rel_error(_triton_call(a, b, cfg, out, prec == "tf32"), a, b, gen)
            _require(err, TOLERANCE[prec], f"triton gemm {prec} {m}x{n}x{k}")
            rows.append({"m": m, "n": n, "k": k, "precision": prec, "config": cfg.as_dict(),
                         "max_rel_error": err, "tolerance": TOLERANCE[prec],
                         "interpreted": not tdev.startswith("cuda")})
    return rows


def measure_configs(device: str, gen) -> tuple[dict, tuple]:
    """The tiling sweep at :func:`sweep_size` in bf16 (GPU), beside ``torch.matmul``; returns
    the record and the fastest tiling (:data:`GRADE_CONFIG` on a CPU or if none ran)."""
    import torch

    n = sweep_size()
    out: dict = {"n": n, "flop": roofline.matmul_flop(n, n, n), "configs": []}
    if not device.startswith("cuda"):
        return out, GRADE_CONFIG
    a, b = _pair((n, n), (n, n), gen, device, torch.bfloat16)
    c = torch.empty((n, n), device=device, dtype=torch.bfloat16)
    fn = (lambda: torch.matmul(a, b, out=c))
    c.fill_(float("nan"))
    err = _max_rel_error(fn, a, b, gen, rows=16)
    _require(err, TOLERANCE["bf16"], "torch.matmul bf16")
    out["torch"] = {"max_rel_error": err, "bench": summarize(LAB.bench(fn, device, f"torch_{n}"))}

    def attempt(t, entry):
        cfg = _cfg(t)
        c.fill_(float("nan"))
        fn = _triton_call(a, b, cfg, c)
        err = _max_rel_error(fn, a, b, gen, rows=16)
        _require(err, TOLERANCE["bf16"], f"triton gemm {cfg.name}")
        entry["max_rel_error"] = err
        entry["bench"] = summarize(LAB.bench(fn, device, f"triton_{cfg.name}"))
        return entry["bench"]["median_s"]

    try:  # e.g. triton OutOfResources: a tiling that does not fit is recorded as failed
        best = fastest_config(progress(CONFIGS, desc="tilings"), attempt,
                              describe=lambda t: {"config": _cfg(t).as_dict(),
                                                  "name": _cfg(t).name},
                              error_key="failed", what="tiling", tried=out["configs"])[0]
    except NoConfigRan:  # every tiling failed: the record says why; time the known-good one
        best = GRADE_CONFIG
    del a, b, c
    return out, best


#: K of the fixed-cost probe: one pipeline's worth of steps of the best tiling is
#: ``BLOCK_K * stages``; the probe runs ``n x n x K`` products at the smallest sizes.
PROBE_SIZES = (1024, 2048)


def _graph_time(fn, device: str, name: str, per_call_s: float) -> dict:
    """The per-call summary of ``fn`` timed from a CUDA graph replay
    (:func:`helpers.bench.device.graph_bench`), with ``calls`` chosen from the plain per-call
    time by :func:`~helpers.bench.device.graph_calls`, and that call count. A replay launches
    the whole batch at once, so no host (Python launcher) time sits between calls: what is
    timed is the kernels themselves."""
    calls = graph_calls(max(per_call_s, 1e-7))
    s = summarize(graph_bench(fn, device=device, calls=calls, name=name, bench_fn=LAB.bench))
    s["graph_calls"] = calls
    return s


def _try_graph(entry: dict, fn, device: str, name: str) -> bool:
    """``entry["graph"]`` = :func:`_graph_time` of ``fn`` (from ``entry``'s plain time), or
    ``entry["graph_error"]`` with the reason a capture failed; whether it succeeded."""
    try:
        entry["graph"] = _graph_time(fn, device, name, entry["bench"]["median_s"])
        return True
    except Exception as exc:  # noqa: BLE001 - recorded: the page then uses the plain time
        entry["graph_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return False


def measure_launch(device: str) -> dict:
    """The cost of a Triton launch that does no work (:func:`helpers.kernels.gemm.empty`), GPU
    only: the GPU time per call when each call is its own timed interval (CUDA events around
    one Python call: the launcher's host time shows as GPU idle time), the host time per call
    of a loop of calls (perf_counter), and the GPU time per call replayed from a CUDA graph."""
    import time

    import torch

    from helpers.kernels.gemm import empty

    if not device.startswith("cuda"):
        return {}
    x = torch.zeros(16, device=device)
    empty(x)
    torch.cuda.synchronize(device)
    plain = summarize(LAB.bench(lambda: empty(x), device, "empty_plain"))
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        empty(x)
    host_s = (time.perf_counter() - t0) / n
    torch.cuda.synchronize(device)
    graph = _graph_time(lambda: empty(x), device, "empty_graph", 2e-6)
    if not bool((x == 0).all()):
        raise AssertionError("the empty kernel wrote its buffer")
    return {"plain": plain, "host_per_call_s": host_s, "host_calls": n, "graph": graph}


def measure_probe(device: str, gen, best: tuple) -> list[dict]:
    """Fixed costs per launch and tile, measured apart from the sizes they may explain: at each
    of :data:`PROBE_SIZES`, an ``n x n x K`` product of the best tiling with ``K = BLOCK_K *
    stages`` (one pipeline fill) and twice that, timed from a CUDA graph (GPU only)."""
    import torch

    if not device.startswith("cuda"):
        return []
    cfg = _cfg(best)
    rows = []
    for n in PROBE_SIZES:
        for steps in (cfg.num_stages, 2 * cfg.num_stages):
            k = cfg.block_k * steps
            a, b = _pair((n, k), (k, n), gen, device, torch.bfloat16)
            c = torch.full((n, n), float("nan"), device=device, dtype=torch.bfloat16)
            fn = _triton_call(a, b, cfg, c)
            err = _max_rel_error(fn, a, b, gen, rows=16)
            _require(err, TOLERANCE["bf16"], f"triton gemm probe {n}x{n}x{k}")
            plain = summarize(LAB.bench(fn, device, f"probe_{n}_{k}_plain"))
            rows.append({"m": n, "n": n, "k": k, "k_steps": steps, "config": cfg.as_dict(),
                         "flop": roofline.matmul_flop(n, n, k), "max_rel_error": err,
                         "plain": plain,
                         "graph": _graph_time(fn, device, f"probe_{n}_{k}_graph", plain["median_s"])})
            del a, b, c
    return rows


def measure_sizes(device: str, gen, best: tuple) -> dict:
    """Square products over :func:`sizes`: torch (and the best tiling on a GPU), bf16 on a GPU,
    fp32 on a CPU (where torch's CPU matmul is what runs)."""
    import torch

    from helpers.bench.probes import threads

    cuda = device.startswith("cuda")
    prec = "bf16" if cuda else "fp32"
    dtype = _dtype(prec)
    cfg = _cfg(best)
    rows = []
    with (threads() if not cuda else _null()):
        for n in progress(sizes(), desc="sizes"):
            a, b = _pair((n, n), (n, n), gen, device, dtype)
            c = torch.empty((n, n), device=device, dtype=dtype)
            entry = {"n": n, "precision": prec, "flop": roofline.matmul_flop(n, n, n)}
            fn = (lambda: torch.matmul(a, b, out=c))
            c.fill_(float("nan"))
            err = _max_rel_error(fn, a, b, gen, rows=16)
            _require(err, TOLERANCE[prec], f"torch.matmul {prec} n={n}")
            entry["torch"] = {"max_rel_error": err, "bench": summarize(LAB.bench(fn, device, f"torch_{n}"))}
            if cuda:
                _try_graph(entry["torch"], fn, device, f"torch_{n}_graph")
                c.fill_(float("nan"))
                fn = _triton_call(a, b, cfg, c)
                err = _max_rel_error(fn, a, b, gen, rows=16)
                _require(err, TOLERANCE[prec], f"triton gemm {cfg.name} n={n}")
                entry["triton"] = {"config": cfg.as_dict(), "max_rel_error": err,
                                   "bench": summarize(LAB.bench(fn, device, f"triton_{n}"))}
                c.fill_(float("nan"))
                if _try_graph(entry["triton"], fn, device, f"triton_{n}_graph"):
                    err = _max_rel_error(lambda: c, a, b, gen, rows=16)  # the replays wrote C
                    _require(err, TOLERANCE[prec], f"triton gemm {cfg.name} n={n}, graph replay")
            rows.append(entry)
            del a, b, c
    return {"precision": prec, "sizes": rows}


@contextmanager
def _null():
    yield None


def measure_fp32(device: str, gen) -> dict:
    """fp32 products at one size (GPU): Triton and torch with TF32 off, then both with it on."""
    import torch

    if not device.startswith("cuda"):
        return {}
    n = LAB.size("fp32_size")
    cfg = _cfg(FP32_CONFIG)
    a, b = _pair((n, n), (n, n), gen, device, torch.float32)
    c = torch.empty((n, n), device=device)
    out: dict = {"n": n, "flop": roofline.matmul_flop(n, n, n), "config": cfg.as_dict()}
    for prec, mode in (("fp32", "ieee"), ("tf32", "tf32")):
        entry = {"torch_fp32_precision": mode, "triton_input_precision": mode}
        with _torch_precision(mode):
            fn = (lambda: torch.matmul(a, b, out=c))
            c.fill_(float("nan"))
            err = _max_rel_error(fn, a, b, gen, rows=16)
            _require(err, TOLERANCE[prec], f"torch.matmul {prec}")
            entry["torch"] = {"max_rel_error": err, "bench": summarize(LAB.bench(fn, device, f"torch_{prec}"))}
        c.fill_(float("nan"))
        fn = _triton_call(a, b, cfg, c, allow_tf32=(prec == "tf32"))
        err = _max_rel_error(fn, a, b, gen, rows=16)
        _require(err, TOLERANCE[prec], f"triton gemm {prec}")
        entry["triton"] = {"max_rel_error": err, "bench": summarize(LAB.bench(fn, device, f"triton_{prec}"))}
        out[prec] = entry
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    import torch

    device = device or lab_device()
    result = new_result(LAB, device, sizes=sizes(), sweep_size=sweep_size(),
                        configs=[list(t) for t in CONFIGS], fp32_config=list(FP32_CONFIG),
                        check_shapes=[list(s) for s in CHECK_SHAPES], budget_s=LAB.budget(),
                        config_fields=["block_m", "block_n", "block_k", "group_m", "num_stages",
                                       "num_warps"],
                        tf32_note="fp32 rows: TF32 off for both torch (fp32_precision 'ieee') "
                                  "and Triton (input_precision 'ieee'); tf32 rows: on for both")
    gen = torch.Generator().manual_seed(2024)
    m = result["measurements"]
    m["check"] = measure_check(device, gen)
    m["configs"], best = measure_configs(device, gen)
    m["best_config"] = list(best)
    m["sizes"] = measure_sizes(device, gen, best)
    for key, fn in (("launch", lambda: measure_launch(device)),
                    ("probe", lambda: measure_probe(device, gen, best))):
        try:  # evidence only: a failure here is recorded, and the lab's rows still stand
            m[key] = fn()
        except Exception as exc:  # noqa: BLE001 - recorded in the result
            m[key], m[f"{key}_error"] = {}, f"{type(exc).__name__}: {exc}"[:300]
    m["fp32"] = measure_fp32(device, gen)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading --------------------------------------------------------------------------------

def _grade_inputs(m: int, n: int, k: int, device: str, prec: str):
    def make(gen):
        return _pair((m, k), (k, n), gen, device, _dtype(prec))
    return make


def grade_gemm(kernel, device: str | None = None, trials: int = 2) -> Verdict:
    """Correctness of a reader's kernel (the signature of :func:`helpers.kernels.gemm.gemm_kernel`)
    on a shape that is not a multiple of any block, in fp32 and bf16: fresh random inputs, C
    poisoned with NaN, compared with float64."""
    from helpers.kernels.gemm import matmul

    device = triton_device(device or lab_device())
    m, n, k = CHECK_SHAPES[-1]
    cfg = _cfg(SMALL_CONFIG)
    for prec in ("fp32", "bf16"):
        v = check_outputs(lambda a, b, out: matmul(a, b, cfg, out=out, kernel=kernel),
                          lambda a, b: a @ b, _grade_inputs(m, n, k, device, prec),
                          name=f"gemm kernel ({prec}, {m}x{n}x{k})", trials=trials,
                          make_output=lambda a, b: a.new_empty((a.shape[0], b.shape[1])),
                          rtol=TOLERANCE[prec], atol=0.0, device=device)
        if not v.passed:
            return v
    return Verdict("gemm kernel", "PASS",
                   [f"fp32 and bf16 match a float64 reference at {m}x{n}x{k} on {trials} fresh "
                    "random inputs each"])


def grade_gemm_speed(kernel, device: str | None = None, min_fraction: float = 0.9) -> Verdict:
    """Speed of a reader's kernel on a GPU at ``8192^3`` bf16 with :data:`GRADE_CONFIG`, against
    ``torch.matmul`` (cuBLAS) at the same size: PASS at ``min_fraction`` of torch's rate."""
    import torch

    from helpers.kernels.gemm import matmul

    device = device or lab_device()
    if not device.startswith("cuda"):
        raise ValueError("grade_gemm_speed needs a CUDA device; the CPU tier grades correctness")
    gen = torch.Generator().manual_seed(7)
    n = LAB.size("speed_check_size")
    a, b = _pair((n, n), (n, n), gen, device, torch.bfloat16)
    c = torch.full((n, n), float("nan"), device=device, dtype=torch.bfloat16)
    cfg = _cfg(GRADE_CONFIG)
    fn = (lambda: matmul(a, b, cfg, out=c, kernel=kernel))
    _require(_max_rel_error(fn, a, b, gen, rows=16), TOLERANCE["bf16"], "your gemm")
    mine = LAB.bench(fn, device, "your_gemm")
    ref = LAB.bench(lambda: torch.matmul(a, b), device, "torch_gemm")
    flop = roofline.matmul_flop(n, n, n)
    print(f"your kernel: {flop / mine.median_s / 1e12:.4g} TFLOP/s, torch.matmul "
          f"{flop / ref.median_s / 1e12:.4g} TFLOP/s ({ref.median_s / mine.median_s:.0%})")
    return check_performance(mine.median_s, ref.median_s, name="gemm kernel speed (bound: "
                             "torch.matmul's time)", spread=max(mine.spread, ref.spread),
                             min_fraction=min_fraction)


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
