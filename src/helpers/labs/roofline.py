"""Lab runner: measuring the roofline (copy bandwidth, matrix-product rates, an intensity sweep).

Three measurements place a machine on its roofline and test the model's predicted times:

* **copy**: ``dst.copy_(src)`` (torch's own device-to-device copy) and the book's Triton copy
  kernel (:func:`helpers.kernels.roofline.triton_copy`) over a few buffer sizes, as bytes
  per second (read + written, the STREAM convention) and as a fraction of the datasheet's HBM
  bandwidth. On a GPU a few block sizes of the Triton kernel are tried first and the fastest
  kept (all are recorded). This is the memory roof.
* **matmul**: ``torch.matmul`` of square matrices in bf16, in fp32 with TF32 disabled
  (``torch.backends.cuda.matmul.fp32_precision = "ieee"``) and in fp32 with TF32 allowed
  (``"tf32"``), against the dense peaks of :mod:`helpers.specs`. This is the compute roof of
  the tensor cores. On a CPU: fp32 only.
* **sweep**: one Triton kernel that reads ``x``, applies ``k`` dependent fused multiply-adds to
  each element in registers and writes ``y`` (fp32): ``2k`` FLOP per 8 bytes, so an arithmetic
  intensity of ``k / 4`` FLOP/byte, for ``k`` on a log grid from 1 to 2048. Each point's time is
  predicted by :func:`helpers.models.roofline.kernel_time_lower_bound_s` with the fp32
  (non-tensor) peak and the HBM bandwidth
  (:func:`helpers.labs.analysis.roofline.sweep_rows`). On a CPU the kernel runs through
  Triton's interpreter at a tiny size and is checked, not timed.

Every timed operation is checked against a reference before it is timed, on random inputs
drawn in [0.5, 1.5) (never zeros). Timing goes through :func:`helpers.bench.bench` only. On a
CPU the torch operations use every usable core (:func:`helpers.bench.probes.threads`), as the
book's CPU roofline probes do, and :func:`helpers.labs.analysis.roofline.empirical_roof` builds
this machine's roofline from the copy bandwidth and the fp32 matrix-product rate.

Pages: ``labs/roofline.md`` compares the result with the model and with the reference result
measured on an H200 (:func:`reference_or_none`); ``chapters/gpu-architecture.md`` quotes the
reference's best rates. Run as
``python -m helpers.labs.roofline --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept in this module: :func:`grade_copy` and
:func:`grade_copy_speed` (the grader of the page's exercise). What the pages compute from a
result (rows, tables, the roofline panel, the sweep's check) is in
:mod:`helpers.labs.analysis.roofline`.
"""

from __future__ import annotations

from typing import Callable

from helpers import specs
from helpers.bench import sync
from helpers.bench.device import uniform
from helpers.bench.precision import matmul_precision
from helpers.labs import core
from helpers.labs.core import lab_device, new_result, progress, run_cli, summarize
from helpers.labs.core import cpu_threads as _cpu_threads
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.labs.report import Claim
from helpers.models import roofline
from helpers.kernels import triton_device

__all__ = ["LAB", "GPU", "FP32_BYTES", "copy_sizes_bytes", "matmul_sizes", "sweep_ks",
           "measure_copy", "measure_matmul", "measure_sweep", "run", "reference_or_none",
           "grade_copy", "grade_copy_speed", "main"]

#: The lab's record: its pages, sizes and bench settings.
LAB = core.Lab(
    "roofline", pages=("labs/roofline.md", "chapters/gpu-architecture.md"),
    sizes={"copy_sizes_bytes": ([1 << 22, 1 << 24, 1 << 26], [1 << 27, 1 << 28, 1 << 30, 1 << 31]),
           "matmul_sizes": ([128, 256, 512], [2048, 4096, 8192]),
           "sweep_ks": ([1, 4, 16, 64], [2**i for i in range(12)]),
           "sweep_elements": (3001, 1 << 28),  # a GPU's; a CPU checks 3001, untimed
           # elements of the grader's correctness and speed checks: neither a block's multiple
           "grading_elements": (10_007, (1 << 22) + 7),
           "speed_check_elements": (10_007, (1 << 28) + 7)},
    budget_s=(0.15, 0.4), warmup_s=(0.03, 0.1),
    claims=(
        Claim("copy_hbm", "copy bandwidth at the largest buffer", "bound",
              model="helpers.specs.GPUSpec.hbm_bytes_per_s",
              ceilings="datasheet HBM bandwidth (helpers.specs.H200_SXM)", limit="upper",
              why="a copy of a buffer far larger than L2 streams every byte through HBM, which "
                  "cannot move more than its datasheet rate"),
        Claim("matmul_peak", "best matrix-product rate of a precision", "bound",
              model="helpers.specs.GPUSpec.peak_flop_per_s",
              ceilings="datasheet dense peak of the precision at the boost clock", limit="upper",
              why="no matrix product does more FLOP per second than every tensor core (or "
                  "FP32 lane) at the boost clock"),
        Claim("sweep_roofline", "time of an intensity-sweep point", "bound",
              model="helpers.models.roofline.kernel_time_lower_bound_s",
              ceilings="datasheet fp32 (non-tensor) peak and HBM bandwidth", limit="lower",
              why="the kernel cannot finish its FMAs faster than the fp32 peak nor move its "
                  "bytes (1 GiB in, 1 GiB out: far beyond L2) faster than HBM"),
        Claim("sweep_measured_roof",
              "time of a sweep point at least 4x from the ridge, on the run's own roof",
              "prediction", model="helpers.models.roofline.kernel_time_lower_bound_s",
              ceilings="measured in the same run: torch's copy bandwidth at the largest buffer, "
                       "and the fp32 peak from the SM count, FP32 lanes and the SM clock read "
                       "at the end of the run (helpers.models.gpu_peaks.sm_peak_flop_per_s)",
              tolerance=0.10,
              why="far from the ridge one roof alone sets the time, and both roofs are the "
                  "run's; left out: the sweep is a Triton kernel, not torch's copy (the Triton "
                  "copy reached 99.6% of torch's), its loads, stores and index arithmetic beside "
                  "the FMAs, and the clock under load, which nvidia-smi samples once, at the "
                  "end: a few percent each, 10% in all"),
    ))
#: The GPU whose datasheet the model uses (and on which the reference was measured).
GPU = specs.H200_SXM
FP32_BYTES = 4.0
#: Precisions of the matrix products: name -> (torch dtype name, float32 matmul precision).
MATMUL_PRECISIONS = {"bf16": ("bfloat16", "ieee"), "fp32": ("float32", "ieee"),
                     "tf32": ("float32", "tf32")}


# --- sizes ---------------------------------------------------------------------------------

def copy_sizes_bytes() -> list[int]:
    """Bytes per buffer of the copy measurements (128 MiB to 2 GiB on a GPU, 4-64 MiB small).

    The smallest GPU buffer is still more than twice an H200's L2 cache, and its copy (tens of
    microseconds) is long beside a kernel launch, so the launch is hidden behind queued work.
    """
    return LAB.size("copy_sizes_bytes")


def matmul_sizes() -> list[int]:
    """Square matrix sizes of the matrix products."""
    return LAB.size("matmul_sizes")


def sweep_ks() -> list[int]:
    """FMAs per element of the intensity sweep: powers of two up to 2048 (up to 64 small)."""
    return LAB.size("sweep_ks")


# --- measurements ---------------------------------------------------------------------------

def _checked_copy(fn: Callable[[], object], src, dst, what: str) -> None:
    """Poison ``dst`` with NaN, run ``fn`` once, require ``dst == src`` exactly."""
    import torch

    dst.fill_(float("nan"))
    fn()
    if not torch.equal(dst, src):
        raise AssertionError(f"{what}: the destination differs from the source")


def measure_copy(device: str, gen) -> dict:
    """Copy bandwidth of torch's copy and (on a GPU) the Triton copy kernel, per buffer size.

    On a CPU the Triton kernel runs once through the interpreter at a tiny size that is not a
    multiple of its block, and is checked, not timed.
    """
    import torch

    from helpers.kernels import roofline as kern

    cuda = device.startswith("cuda")
    out: dict = {"sizes": [], "triton_configs": {}}
    sizes = copy_sizes_bytes()
    block, warps = kern.COPY_BLOCK, kern.COPY_WARPS
    if cuda:  # choose the Triton configuration on the largest buffer
        n = sizes[-1] // 4
        src, dst = uniform(n, gen, device=device), torch.empty(n, device=device)
        best = None
        for b, w in progress(kern.COPY_CONFIGS, desc="copy configs"):
            fn = (lambda b=b, w=w: kern.triton_copy(src, dst, block=b, num_warps=w))
            _checked_copy(fn, src, dst, f"triton copy BLOCK={b}")
            r = LAB.bench(fn, device, f"triton_copy_{b}_{w}")
            out["triton_configs"][f"{b}x{w}"] = {"block": b, "num_warps": w, "bench": summarize(r)}
            if best is None or r.median_s < best[0]:
                best = (r.median_s, b, w)
        _, block, warps = best
        del src, dst
    else:
        n = 3001  # not a multiple of any block: exercises the mask
        tdev = triton_device(device)
        src, dst = uniform(n, gen, device=tdev), torch.empty(n, device=tdev)
        _checked_copy(lambda: kern.triton_copy(src, dst, block=1024, num_warps=4), src, dst,
                      "triton copy (interpreter)")
        out["triton_interpreter_checked_elements"] = n
    out["triton_block"], out["triton_num_warps"] = block, warps
    with _cpu_threads(device) as n_threads:
        out["cpu_threads"] = n_threads
        for size in progress(sizes, desc="copy sizes"):
            n = size // 4
            src, dst = uniform(n, gen, device=device), torch.empty(n, device=device)
            entry = {"buffer_bytes": float(n * FP32_BYTES),
                     "moved_bytes": float(2 * n * FP32_BYTES)}
            fn = (lambda: dst.copy_(src))
            _checked_copy(fn, src, dst, "torch copy")
            entry["torch"] = summarize(LAB.bench(fn, device, f"torch_copy_{size}"))
            if cuda:
                fn = (lambda: kern.triton_copy(src, dst, block=block, num_warps=warps))
                _checked_copy(fn, src, dst, "triton copy")
                entry["triton"] = summarize(LAB.bench(fn, device, f"triton_copy_{size}"))
            out["sizes"].append(entry)
            del src, dst
    return out


def measure_matmul(device: str, gen) -> dict:
    """Rates of square ``torch.matmul`` per precision and size (fp32 only on a CPU)."""
    import torch

    cuda = device.startswith("cuda")
    names = ("bf16", "fp32", "tf32") if cuda else ("fp32",)
    tolerance = {"bf16": 2e-2, "fp32": 1e-4, "tf32": 5e-3}
    out: dict = {}
    with _cpu_threads(device):
        for prec in names:
            dtype_name, mode = MATMUL_PRECISIONS[prec]
            dtype = getattr(torch, dtype_name)
            rows = []
            with matmul_precision(mode):
                for n in progress(matmul_sizes(), desc=f"matmul {prec}"):
                    a, b = (uniform((n, n), gen, device=device, dtype=dtype) for _ in range(2))
                    fn = (lambda: torch.matmul(a, b))
                    c = fn()
                    sync(device)
                    pick_rows = torch.randperm(n, generator=gen)[:8]
                    want = a.double()[pick_rows.to(device)].cpu() @ b.double().cpu()
                    got = c[pick_rows.to(device)].double().cpu()
                    err = float(((got - want).abs() / want.abs()).max())
                    if not err <= tolerance[prec]:
                        raise AssertionError(f"matmul {prec} n={n}: relative error {err:.3g} "
                                             f"against float64 exceeds {tolerance[prec]:g}")
                    del c
                    r = LAB.bench(fn, device, f"matmul_{prec}_{n}")
                    esize = float(torch.finfo(dtype).bits // 8)
                    rows.append({"n": n, "flop": roofline.matmul_flop(n, n, n),
                                 "min_bytes": roofline.matmul_min_bytes(n, n, n, esize),
                                 "max_rel_error": err, "bench": summarize(r)})
                    del a, b
            out[prec] = {"dtype": dtype_name, "cuda_matmul_fp32_precision": mode, "sizes": rows}
    return out


def measure_sweep(device: str, gen) -> dict:
    """The intensity sweep: ``k`` dependent FMAs per fp32 element; timed on a GPU only."""
    import torch

    from helpers.kernels import roofline as kern

    cuda = device.startswith("cuda")
    n = LAB.size("sweep_elements") if cuda else 3001
    x = uniform(n, gen, device=triton_device(device))
    y = torch.empty_like(x)
    x64 = x.double()  # the float64 reference is computed where x lives
    points = []
    for k in progress(sweep_ks(), desc="intensity sweep"):
        fn = (lambda k=k: kern.fma_sweep(x, k, y))
        y.fill_(float("nan"))
        fn()
        sync(triton_device(device))
        err = float((y.double() - kern.fma_reference(x64, k)).abs().max())
        tol = 4 * k * 2.0**-24 + 1e-6  # one rounding per FMA, values near 1
        if not err <= tol:  # also catches NaN (unwritten elements)
            raise AssertionError(f"fma sweep k={k}: max error {err:.3g} exceeds {tol:.3g}")
        entry = {"k": k, "n": n, "flop": 2.0 * k * n, "bytes": 2 * FP32_BYTES * n,
                 "max_abs_error": err}
        if cuda:
            entry["bench"] = summarize(LAB.bench(fn, device, f"fma_k{k}"))
        points.append(entry)
    return {"n": n, "a": kern.FMA_A, "b": kern.FMA_B, "timed": cuda, "points": points}


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    import torch

    device = device or lab_device()
    result = new_result(LAB, device, copy_sizes_bytes=copy_sizes_bytes(),
                        matmul_sizes=matmul_sizes(), sweep_ks=sweep_ks(),
                        budget_s=LAB.budget(), matmul_precisions=list(MATMUL_PRECISIONS),
                        tf32_note="fp32 rows: TF32 disabled (torch.backends.cuda.matmul."
                                  "fp32_precision = 'ieee'); tf32 rows: 'tf32'")
    gen = torch.Generator().manual_seed(2024)
    m = result["measurements"]
    m["copy"] = measure_copy(device, gen)
    m["matmul"] = measure_matmul(device, gen)
    m["sweep"] = measure_sweep(device, gen)
    m["grading"] = _grading_reference(device, gen)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading --------------------------------------------------------------------------------

def _copy_inputs(n: int, device: str):
    def make(gen):
        return (uniform(n, gen, device=device),)
    return make


def grade_copy(copy_fn: Callable, device: str | None = None, trials: int = 3) -> Verdict:
    """Correctness of a reader's ``copy_fn(src, dst)`` on a length that is not a multiple of
    any block: fresh random inputs, ``dst`` poisoned with NaN, compared with float64."""
    device = device or lab_device()
    n = LAB.size("grading_elements")
    return check_outputs(copy_fn, lambda src: src, _copy_inputs(n, device), name="copy kernel",
                         trials=trials, make_output=lambda src: src.new_empty(src.shape),
                         rtol=0.0, atol=0.0, device=device)


def _grading_reference(device: str, gen) -> dict:
    """Times of torch's and the book's copy at the speed check's size (GPU only)."""
    if not device.startswith("cuda"):
        return {}
    import torch

    from helpers.kernels import roofline as kern

    n = LAB.size("speed_check_elements")
    src, dst = uniform(n, gen, device=device), torch.empty(n, device=device)
    out = {"n": n, "moved_bytes": 2.0 * n * FP32_BYTES}
    for name, fn in (("torch", lambda: dst.copy_(src)), ("triton", lambda: kern.triton_copy(src, dst))):
        _checked_copy(fn, src, dst, name)
        out[name] = summarize(LAB.bench(fn, device, f"grading_{name}"))
    return out


def grade_copy_speed(copy_fn: Callable, reference: dict | None = None,
                     device: str | None = None, min_fraction: float = 0.75) -> Verdict:
    """Speed of a reader's ``copy_fn(src, dst)`` on a GPU against the copy's bandwidth bound.

    The bound is the model's memory time at the datasheet bandwidth on an H200, and the time
    of torch's own copy on any other GPU (whose datasheet this book does not hold). PASS when
    the kernel reaches ``min_fraction`` of it; INCONCLUSIVE when the run is noisy.
    """
    import torch

    device = device or lab_device()
    if not device.startswith("cuda"):
        raise ValueError("grade_copy_speed needs a CUDA device; the CPU tier grades correctness")
    gen = torch.Generator().manual_seed(7)
    n = LAB.size("speed_check_elements")
    src, dst = uniform(n, gen, device=device), torch.empty(n, device=device)
    moved = 2.0 * n * FP32_BYTES
    _checked_copy(lambda: copy_fn(src, dst), src, dst, "your copy")
    mine = LAB.bench(lambda: copy_fn(src, dst), device, "your_copy")
    name = torch.cuda.get_device_name()
    if "H200" in name:
        bound = roofline.memory_time_s(moved, GPU.hbm_bytes_per_s)
        what = "the H200 datasheet bandwidth"
    else:
        _checked_copy(lambda: dst.copy_(src), src, dst, "torch copy")
        bound = LAB.bench(lambda: dst.copy_(src), device, "torch_copy").median_s
        what = "torch's own copy on this GPU"
    ref_s = None
    if reference and reference["measurements"].get("grading", {}).get("n") == n:
        ref_s = reference["measurements"]["grading"]["triton"]["median_s"]
    print(f"your copy: {moved / mine.median_s / 1e12:.3g} TB/s, "
          f"{bound / mine.median_s:.0%} of the bound set by {what}")
    return check_performance(mine.median_s, bound, name="copy kernel speed", spread=mine.spread,
                             min_fraction=min_fraction, reference_s=ref_s)


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
