"""Lab runner: a row-sum reduction and a fused row softmax in Triton, against torch.

For each storage type (fp32, bf16) and each row length (1024 to 16384 columns on a GPU, enough
rows for a 256 MiB tensor), the runner measures, as achieved bytes per second:

* **copy**: ``dst.copy_(x)`` of a buffer of the same size (read + written, the STREAM
  convention): the roofline for a kernel that reads and writes the tensor once;
* **row sum**: ``torch.sum(x, dim=-1)`` and the book's Triton kernel
  (:func:`helpers.kernels.reduction_softmax.row_sum`, a tile of several short rows or one
  long row per program, the tile's size tuned per row length on the GPU): one read of the
  tensor and one element written per row; the tile sweep (:func:`measure_sum_tiles`) records
  the row sum at every tile size for three row lengths;
* **softmax**: ``torch.softmax(x, dim=-1)``, the book's fused Triton kernel
  (:func:`helpers.kernels.reduction_softmax.softmax`, one program per row, the row held in
  registers), and an *unfused* softmax written as five separate torch operations (max,
  subtract, exp, sum, divide), each a pass over memory.

The bytes each operation must move are counted from the tensor's shape
(:func:`~helpers.models.roofline.softmax_bytes`, ``row_sum_bytes`` and
``unfused_softmax_bytes`` of :mod:`helpers.models.roofline`, re-exported here): the fused
softmax reads and writes the tensor once; the unfused one reads it five times and writes it
three times (plus one element per row for the max and the sum). The target recorded with the
results: the fused Triton softmax reaches at least :data:`TARGET` of the measured copy
bandwidth at every row length.

Every timed operation is checked first, with its output filled with NaN beforehand, against a
float64 reference computed from the same input (random normal values, never zeros), and its
largest error is recorded. Timing goes through :func:`helpers.bench.bench` only. On a CPU the
torch operations are timed at small sizes on every usable core, and the Triton kernels run
through Triton's interpreter on a tiny tensor, checked and not timed.

The page ``labs/reduction-softmax.md`` compares the result with the model and with the
reference result measured on an H200 (:func:`reference_or_none`). Run as
``python -m helpers.labs.reduction_softmax --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept in this module: :func:`grade_softmax` and
:func:`grade_softmax_speed` (the grader of the page's exercise) and :func:`grading_inputs` (rows
of very different magnitudes, which overflow a softmax that does not subtract the maximum).
What the page computes from a result (:func:`~helpers.labs.analysis.reduction_softmax.point_rows`,
``target_check``, ``summary``, ``comparison_rows``, ``describe``) lives in
:mod:`helpers.labs.analysis.reduction_softmax`.

>>> softmax_bytes(1024, 4096, 4) / 2**20, unfused_softmax_bytes(1024, 4096, 4) / 2**20
(32.0, 128.015625)
"""

from __future__ import annotations

from typing import Callable

from helpers import specs
from helpers.bench import sync
from helpers.labs import core
from helpers.labs.core import MISSING, fmt, lab_device, new_result, progress, run_cli, summarize
from helpers.labs.core import cpu_threads as _cpu_threads
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.labs.report import Claim
from helpers.models.roofline import (row_sum_bytes, softmax_bytes, unfused_softmax_bytes,
                                     unfused_softmax_pass_bytes)
from helpers.kernels import triton_device

__all__ = ["LAB", "GPU", "TARGET", "DTYPES", "ELEMENT_BYTES", "OPS", "FULL_COLS", "SMALL_COLS",
           "FULL_TENSOR_BYTES", "SMALL_TENSOR_BYTES", "INTERPRETER_MAX_COLS",
           "col_sizes", "tensor_bytes",
           "shape_for", "softmax_bytes", "row_sum_bytes", "unfused_softmax_bytes",
           "unfused_passes", "unfused_softmax", "measure_point", "measure_copy", "measure_sum_tiles",
           "TILE_SWEEP_COLS", "run",
           "reference_or_none", "fmt", "MISSING", "grading_inputs", "grade_softmax",
           "grade_softmax_speed", "main"]

#: The GPU whose datasheet the model uses (and on which the reference was measured).
GPU = specs.H200_SXM
#: The fused softmax's target: this share of the measured copy bandwidth, at every row length.
TARGET = 0.90
#: Storage types measured: name -> (torch dtype name, bytes per element).
DTYPES = {"fp32": ("float32", 4), "bf16": ("bfloat16", 2)}
ELEMENT_BYTES = {name: b for name, (_, b) in DTYPES.items()}
#: Operations timed at each point; the Triton ones only on a GPU.
OPS = ("torch_sum", "triton_sum", "torch_softmax", "triton_softmax", "unfused_softmax")
#: Row lengths of the full (GPU) and small (CPU) runs; one small length is not a power of two.
FULL_COLS = (1024, 2048, 4096, 8192, 16384)
SMALL_COLS = (256, 1000, 4096)
#: Longest row the Triton kernels are checked on through the interpreter (it is slow).
INTERPRETER_MAX_COLS = 1024
#: Bytes of each input tensor of the full (GPU) and small (CPU) runs.
FULL_TENSOR_BYTES = 1 << 28
SMALL_TENSOR_BYTES = 1 << 22

#: The lab's record: its page, sizes, bench settings and claims (its table's rows name them).
LAB = core.Lab(
    "reduction_softmax", pages=("labs/reduction-softmax.md",),
    sizes={"cols": (SMALL_COLS, FULL_COLS), "tensor_bytes": (SMALL_TENSOR_BYTES, FULL_TENSOR_BYTES),
           # the grader's correctness check (rows, cols; the row length not a power of two)
           "grading_shape": ((24, 1000), (512, 3000)),
           # the speed check's fp32 tensor: 256 MiB in rows of 4096 (a few MiB on a CPU)
           "speed_shape": ((256, 4096), (16384, 4096))},
    budget_s=(0.1, 0.3), warmup_s=(0.02, 0.05),
    claims=(
        Claim("hbm_bound", "bandwidth of the copy, the row sums and the softmaxes", "bound",
              model="helpers.specs.GPUSpec.hbm_bytes_per_s", ceilings="datasheet HBM bandwidth",
              limit="upper", why="each operation's bytes are the least it must move, and HBM "
                                 "moves no more than its datasheet rate"),
        Claim("fused_softmax_time", "time of the fused Triton softmax (median over row lengths)",
              "prediction", model="helpers.models.roofline.memory_time_s",
              ceilings="copy rate measured in the same run, same dtype and tensor size",
              tolerance=0.10,
              why="the fused kernel reads and writes the tensor once, as the copy does; the "
                  "run's spread is 1-2 %; left out: the gap between a row's load and its store "
                  "within one program, which other programs on the SM fill only in part (a "
                  "few per cent, more with long rows)"),
        Claim("row_sum_time", "time of the Triton row sum (median over row lengths)",
              "prediction", model="helpers.models.roofline.memory_time_s",
              ceilings="copy rate measured in the same run, same dtype and tensor size",
              tolerance=0.10,
              why="the row sum reads the tensor once; a read-only stream runs a few per cent "
                  "faster than a copy (no writes to interleave), and the run's spread is 2-4 %; "
                  "the kernel loads one tile of several short rows or part of one long row per "
                  "program and step, its size tuned per row length, so every row length "
                  "streams (the run's tile sweep shows launches of 16-byte loads per thread "
                  "and step at 76-84 us for the same bytes)"),
        Claim("fusion_ratio_bound", "unfused over fused softmax time", "bound",
              model="helpers.models.roofline.memory_time_s",
              ceilings="datasheet HBM bandwidth for the unfused passes' bytes, over the fused "
                       "kernel's measured time", limit="lower",
              why="the five unfused passes cannot move their bytes faster than HBM's "
                  "datasheet rate"),
    ))


# --- sizes and byte counts ------------------------------------------------------------------

def col_sizes() -> list[int]:
    """Row lengths (columns): 1024 to 16384 on a GPU; three short ones, one odd, on a CPU."""
    return list(LAB.size("cols"))


def tensor_bytes() -> int:
    """Bytes of each input tensor: 256 MiB on a GPU (far above the L2 cache), 4 MiB small."""
    return LAB.size("tensor_bytes")


def shape_for(cols: int, element_bytes: int, total_bytes: int | None = None) -> tuple[int, int]:
    """``(rows, cols)`` of a tensor of about ``total_bytes`` with rows of ``cols`` elements."""
    total = tensor_bytes() if total_bytes is None else total_bytes
    if cols < 1 or element_bytes < 1 or total < cols * element_bytes:
        raise ValueError(f"need cols >= 1, element_bytes >= 1 and room for one row, got "
                         f"{cols}, {element_bytes}, {total}")
    return total // (cols * element_bytes), cols


#: The byte counts come from the model (:mod:`helpers.models.roofline`).
unfused_passes = unfused_softmax_pass_bytes


def unfused_softmax(x):
    """Softmax along the last dimension as five separate torch operations (five passes)."""
    m = x.amax(dim=-1, keepdim=True)
    z = x - m
    e = z.exp()
    s = e.sum(dim=-1, keepdim=True)
    return e / s


# --- helpers --------------------------------------------------------------------------------

def _dtype(name: str):
    import torch

    return getattr(torch, DTYPES[name][0])


def _normal(shape, gen, device: str, dtype, scale: float = 4.0):
    """Normal values times ``scale`` in fp32, drawn with ``gen`` where it lives, cast to ``dtype``."""
    import torch

    x = torch.randn(shape, generator=gen, device=gen.device, dtype=torch.float32) * scale
    return x.to(device=device, dtype=dtype)


def _tolerance(dtype_name: str) -> float:
    """Largest accepted error against float64: absolute for softmax probabilities, relative to
    the sum of magnitudes for a row sum (fp32: accumulation error; bf16: the output's rounding)."""
    return {"fp32": 1e-5, "bf16": 1e-2}[dtype_name]


def _softmax_error(out, want64) -> float:
    """Largest absolute error of a softmax against float64 (NaN, unwritten, counts as infinite)."""
    err = (out.double() - want64).abs().max()
    return float("inf") if bool(err.isnan()) else float(err)


def _sum_error(out, want64, scale64) -> float:
    """Largest error of row sums relative to each row's sum of magnitudes."""
    err = ((out.double() - want64).abs() / scale64).max()
    return float("inf") if bool(err.isnan()) else float(err)


def _checked(kind: str, fn: Callable, out, want64, scale64, tol: float, what: str):
    """Poison ``out`` with NaN, run ``fn`` (writing ``out`` or returning the result), check it
    against the float64 reference and return the error."""
    out.fill_(float("nan"))
    got = fn()
    got = out if got is None else got
    err = (_softmax_error(got, want64) if kind == "softmax" else
           _sum_error(got, want64, scale64))
    if not err <= tol:
        raise AssertionError(f"{what}: error {err:.3g} against float64 exceeds {tol:g}")
    return err


# --- measurements ---------------------------------------------------------------------------

def measure_copy(device: str, gen, dtype_name: str) -> dict:
    """``dst.copy_(src)`` of a :func:`tensor_bytes` buffer of ``dtype_name``: the copy roof."""
    import torch

    esize = ELEMENT_BYTES[dtype_name]
    n = tensor_bytes() // esize
    src = _normal(n, gen, device, _dtype(dtype_name))
    dst = torch.empty_like(src)
    dst.fill_(float("nan"))
    dst.copy_(src)
    if not torch.equal(dst, src):
        raise AssertionError(f"torch copy {dtype_name}: the destination differs from the source")
    r = LAB.bench(lambda: dst.copy_(src), device, f"copy_{dtype_name}")
    return {"dtype": dtype_name, "buffer_bytes": float(n * esize),
            "moved_bytes": float(2 * n * esize), "bench": summarize(r)}


def measure_point(device: str, gen, dtype_name: str, cols: int, *, timed_triton: bool) -> dict:
    """Check and time every operation on one ``rows x cols`` tensor of ``dtype_name``."""
    import torch

    from helpers.kernels import reduction_softmax as kern

    esize = ELEMENT_BYTES[dtype_name]
    rows, cols = shape_for(cols, esize)
    x = _normal((rows, cols), gen, device, _dtype(dtype_name))
    x64 = x.double()
    want_softmax = torch.softmax(x64, dim=-1)
    want_sum, sum_scale = x64.sum(dim=-1), x64.abs().sum(dim=-1)
    del x64
    tol = _tolerance(dtype_name)
    y = torch.empty_like(x)
    s = torch.empty(rows, dtype=x.dtype, device=device)
    ops: dict[str, tuple[str, Callable, object]] = {
        "torch_sum": ("sum", lambda: torch.sum(x, dim=-1, out=s), s),
        "torch_softmax": ("softmax", lambda: torch.softmax(x, dim=-1), y),
        "unfused_softmax": ("softmax", lambda: unfused_softmax(x), y),
    }
    if timed_triton:
        ops["triton_sum"] = ("sum", lambda: kern.row_sum(x, s), s)
        ops["triton_softmax"] = ("softmax", lambda: kern.softmax(x, y), y)
    entry = {"dtype": dtype_name, "rows": rows, "cols": cols, "element_bytes": esize,
             "tensor_bytes": float(rows * cols * esize),
             "bytes": {"sum": row_sum_bytes(rows, cols, esize),
                       "softmax": softmax_bytes(rows, cols, esize),
                       "unfused_softmax": unfused_softmax_bytes(rows, cols, esize)},
             "max_error": {}, "tolerance": tol}
    if timed_triton:  # the tile the row sum tuned for this row length (bytes per program-step)
        entry["sum_tile_bytes"] = kern.tuned_tile(x, s)
        entry["sum_config"] = kern.sum_config(cols, esize, entry["sum_tile_bytes"])
    for name in OPS:
        if name not in ops:
            continue
        kind, fn, out = ops[name]
        want = want_sum if kind == "sum" else want_softmax
        entry["max_error"][name] = _checked(kind, fn, out, want, sum_scale, tol,
                                            f"{name} {dtype_name} {rows}x{cols}")
        sync(device)
        entry[name] = summarize(LAB.bench(fn, device, f"{name}_{dtype_name}_{cols}"))
    return entry


#: Row lengths of the row sum's tile sweep (GPU only): short, middle and long rows.
TILE_SWEEP_COLS = (1024, 4096, 16384)


def measure_sum_tiles(device: str, gen) -> list[dict]:
    """The Triton row sum at each tile size of
    :data:`~helpers.kernels.reduction_softmax.SUM_TILE_CHOICES` (bytes per program and step),
    each dtype and :data:`TILE_SWEEP_COLS` (GPU only): the evidence for the default tile.
    Each launch is checked against float64 first, its output poisoned with NaN."""
    if not device.startswith("cuda"):
        return []
    import torch

    from helpers.kernels import reduction_softmax as kern

    out = []
    for dtype_name in DTYPES:
        esize = ELEMENT_BYTES[dtype_name]
        for cols in TILE_SWEEP_COLS:
            rows, cols = shape_for(cols, esize)
            x = _normal((rows, cols), gen, device, _dtype(dtype_name))
            x64 = x.double()
            want, scale = x64.sum(dim=-1), x64.abs().sum(dim=-1)
            del x64
            s = torch.empty(rows, dtype=x.dtype, device=device)
            for tile in kern.SUM_TILE_CHOICES:
                fn = (lambda t=tile: kern.row_sum(x, s, tile_bytes=t))
                err = _checked("sum", fn, s, want, scale, _tolerance(dtype_name),
                               f"triton row sum {dtype_name} {rows}x{cols} tile {tile}")
                sync(device)
                r = LAB.bench(fn, device, f"sum_tile_{dtype_name}_{cols}_{tile}",
                              warmup_s=0.01, budget_s=0.08)
                out.append({"dtype": dtype_name, "rows": rows, "cols": cols, "tile_bytes": tile,
                            "config": kern.sum_config(cols, esize, tile), "max_error": err,
                            "bytes": row_sum_bytes(rows, cols, esize), "bench": summarize(r)})
            del x, want, scale, s
            torch.cuda.empty_cache()
    return out


def _check_triton_small(device: str, gen) -> list[dict]:
    """Run both Triton kernels once per dtype and row length (up to
    :data:`INTERPRETER_MAX_COLS`) on a few rows and check them (Triton's interpreter on a CPU:
    a tiny tensor, not timed)."""
    import torch

    from helpers.kernels import reduction_softmax as kern

    tdev = triton_device(device)
    out = []
    for dtype_name in DTYPES:
        tol = _tolerance(dtype_name)
        for cols in [c for c in col_sizes() if c <= INTERPRETER_MAX_COLS]:
            x = _normal((3, cols), gen, tdev, _dtype(dtype_name))
            x64 = x.double()
            y, s = torch.empty_like(x), torch.empty(3, dtype=x.dtype, device=tdev)
            err_sm = _checked("softmax", lambda: kern.softmax(x, y), y,
                              torch.softmax(x64, dim=-1), None, tol, f"triton softmax {cols}")
            err_sum = _checked("sum", lambda: kern.row_sum(x, s), s, x64.sum(dim=-1),
                               x64.abs().sum(dim=-1), tol, f"triton row sum {cols}")
            out.append({"dtype": dtype_name, "rows": 3, "cols": cols,
                        "softmax_max_error": err_sm, "sum_max_error": err_sum})
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    import torch

    device = device or lab_device()
    cuda = device.startswith("cuda")
    result = new_result(LAB, device, col_sizes=col_sizes(), tensor_bytes=tensor_bytes(),
                        dtypes=list(DTYPES), budget_s=LAB.budget(), target=TARGET,
                        target_note="fused Triton softmax >= target x measured copy bandwidth, "
                                    "at every row length")
    gen = torch.Generator(device=device if cuda else "cpu").manual_seed(2026)
    m = result["measurements"]
    m["triton_checked"] = ([] if cuda else _check_triton_small(device, torch.Generator().manual_seed(1)))
    m["copy"], m["points"] = {}, []
    with _cpu_threads(device) as n_threads:
        m["cpu_threads"] = n_threads
        for dtype_name in DTYPES:
            m["copy"][dtype_name] = measure_copy(device, gen, dtype_name)
            for cols in progress(col_sizes(), desc=f"{dtype_name} row lengths"):
                m["points"].append(measure_point(device, gen, dtype_name, cols,
                                                 timed_triton=cuda))
                if cuda:
                    torch.cuda.empty_cache()
    try:  # evidence only: a failure here is recorded, and the lab's rows still stand
        m["sum_tiles"] = measure_sum_tiles(device, gen)
    except Exception as exc:  # noqa: BLE001 - recorded in the result
        m["sum_tiles"], m["sum_tiles_error"] = [], f"{type(exc).__name__}: {exc}"[:300]
    m["grading"] = _grading_reference(device)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading --------------------------------------------------------------------------------

def grading_inputs(rows: int, cols: int, device: str):
    """``make_inputs`` for the grader: fp32 rows of normal values whose scales run from 1 to
    1000 across the rows, so a softmax that exponentiates without subtracting the row's
    maximum overflows (``exp(x)`` is infinite in fp32 beyond about 88.7)."""
    import torch

    scales = torch.logspace(0, 3, rows, dtype=torch.float32)[:, None]

    def make(gen):
        x = torch.randn((rows, cols), generator=gen, dtype=torch.float32) * scales
        return (x.to(device),)
    return make


def grade_softmax(softmax_fn: Callable, device: str | None = None, trials: int = 3) -> Verdict:
    """Correctness of a reader's ``softmax_fn(x, out)`` (rows of ``x``, into ``out``): fresh
    random inputs of large and small magnitude, a row length that is not a power of two,
    ``out`` poisoned with NaN, compared with a float64 softmax."""
    import torch

    device = device or lab_device()
    rows, cols = LAB.size("grading_shape")
    make = grading_inputs(rows, cols, device)
    verdict = check_outputs(softmax_fn, lambda x: torch.softmax(x, dim=-1), make,
                            name="fused softmax", trials=trials,
                            make_output=lambda x: torch.empty_like(x), device=device)
    if verdict.status == "FAIL" and "NaN" in str(verdict):
        hint = _overflow_hint(softmax_fn, make, device)
        if hint:
            verdict.reasons.append(hint)
    return verdict


def _overflow_hint(softmax_fn: Callable, make, device: str) -> str | None:
    """Why a softmax left NaN: if only rows holding values beyond fp32's exp range did, the
    exponentials overflowed (inf / inf), which subtracting the row's maximum prevents."""
    import numpy as np
    import torch

    (x,) = make(torch.Generator().manual_seed(0))
    out = torch.full_like(x, float("nan"))
    try:
        with np.errstate(all="ignore"):  # the interpreter computes with NumPy
            softmax_fn(x, out)
        sync(device)
    except Exception:  # noqa: BLE001 - the verdict already reports the crash
        return None
    bad = torch.isnan(out).any(dim=-1).cpu()
    big = (x.abs().amax(dim=-1) > 88.7).cpu()
    if bool(bad.any()) and bool((bad <= big).all()) and bool((~bad & ~big).any()):
        return ("NaN appears only in rows with values beyond 88.7, where exp overflows in fp32: "
                "subtract each row's maximum before exponentiating")
    return None


def _grading_reference(device: str) -> dict:
    """Times of torch's copy, torch's softmax and the book's softmax at the speed check's size
    (GPU only)."""
    if not device.startswith("cuda"):
        return {}
    import torch

    from helpers.kernels import reduction_softmax as kern

    rows, cols = LAB.size("speed_shape")
    gen = torch.Generator(device=device).manual_seed(11)
    x = _normal((rows, cols), gen, device, torch.float32)
    y = torch.empty_like(x)
    out = {"rows": rows, "cols": cols, "moved_bytes": softmax_bytes(rows, cols, 4)}
    want = torch.softmax(x.double(), dim=-1)
    _checked("softmax", lambda: kern.softmax(x, y), y, want, None, _tolerance("fp32"), "book softmax")
    del want
    for name, fn in (("copy", lambda: y.copy_(x)), ("torch_softmax", lambda: torch.softmax(x, dim=-1)),
                     ("triton_softmax", lambda: kern.softmax(x, y))):
        out[name] = summarize(LAB.bench(fn, device, f"grading_{name}"))
    return out


def grade_softmax_speed(softmax_fn: Callable, reference: dict | None = None,
                        device: str | None = None, min_fraction: float = 0.8) -> Verdict:
    """Speed of a reader's ``softmax_fn(x, out)`` on a GPU against the copy-bandwidth bound:
    the time of torch's copy of the same bytes, measured now on this GPU. PASS when the
    softmax reaches ``min_fraction`` of it; INCONCLUSIVE when the run is noisy."""
    import torch

    device = device or lab_device()
    if not device.startswith("cuda"):
        raise ValueError("grade_softmax_speed needs a CUDA device; the CPU tier grades correctness")
    rows, cols = LAB.size("speed_shape")
    gen = torch.Generator(device=device).manual_seed(13)
    x = _normal((rows, cols), gen, device, torch.float32)
    y = torch.empty_like(x)
    want = torch.softmax(x.double(), dim=-1)
    _checked("softmax", lambda: softmax_fn(x, y), y, want, None, _tolerance("fp32"), "your softmax")
    del want
    mine = LAB.bench(lambda: softmax_fn(x, y), device, "your_softmax")
    bound = LAB.bench(lambda: y.copy_(x), device, "torch_copy").median_s
    ref_s = None
    g = (reference or {}).get("measurements", {}).get("grading", {})
    if g.get("rows") == rows and g.get("cols") == cols:
        ref_s = g["triton_softmax"]["median_s"] * bound / g["copy"]["median_s"]
    moved = softmax_bytes(rows, cols, 4)
    print(f"your softmax: {moved / mine.median_s / 1e12:.3g} TB/s, "
          f"{bound / mine.median_s:.0%} of torch's copy of the same bytes")
    return check_performance(mine.median_s, bound, name="fused softmax speed",
                             spread=mine.spread, min_fraction=min_fraction, reference_s=ref_s)


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
