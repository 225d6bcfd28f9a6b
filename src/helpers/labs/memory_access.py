"""Lab runner: memory access patterns (strided reads, naive and tiled transposes, bank conflicts).

Three measurements, each beside the sector model's prediction:

* ``strided_read``: a sum of ``n`` float32 elements ``stride`` apart in a large buffer, for
  strides 1, 2, 4, ... 64. The useful traffic is ``4 n`` bytes at every stride; the memory
  fetches whole 32-byte sectors (64-byte lines on a CPU), so the useful bandwidth falls with
  :func:`predicted_efficiency`. ``strided_read_same_span`` repeats the sweep over one span
  (that of stride :data:`SPAN_STRIDE`), ``n`` shrinking as the stride grows. On a GPU the sum
  is :func:`helpers.kernels.memory_access.strided_sum_kernel`; on a CPU torch's sum over a
  strided view. Its hardware counters: :mod:`helpers.labs.memory_access_worker`.
* ``transpose``: an ``M x N`` float32 matrix transposed by torch, by a naive Triton kernel
  (coalesced reads, writes ``M`` elements apart) and a tiled one (both sides coalesced),
  beside a copy of the same bytes; on a CPU torch's transpose and the copy only.
* ``bank_conflicts``: the CUDA C shared-memory transpose of
  :mod:`helpers.kernels.smem_transpose` with ``tile[32][32]`` and ``tile[32][33]``, where a
  CUDA compiler is usable; otherwise recorded as unavailable with the reason.

Every timed kernel is checked against a reference first, on random (never all-zero) inputs.
The models are :mod:`helpers.models.memory_access`; what the page ``labs/memory-access.md``
computes from a result is :mod:`helpers.labs.analysis.memory_access`. Run on a GPU machine as
``python -m helpers.labs.memory_access --out DIR`` (``--counters`` for the counters).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from helpers.bench import bench, has_cuda, sync
from helpers.labs import core
from helpers.labs.core import (lab_device, new_result, progress, run_cli,
                               summarize)
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.labs.report import Claim
from helpers.models.dram import CPU_LINE_BYTES
from helpers.models.memory_access import (FP32_BYTES, SECTOR_BYTES, WARP_SIZE,
                                          predicted_conflict_degree, predicted_efficiency)

__all__ = ["LAB", "STRIDES", "ELEMENT_BYTES", "SECTOR_BYTES", "CPU_LINE_BYTES", "WARP_SIZE",
           "check_kernels", "strided_read",
           "transposes", "bank_conflicts", "run", "reference_or_none", "grade_transpose",
           "grade_transpose_performance", "GRADE_SHAPE", "main"]

#: The lab's record: its page, size table, ``bench`` budget and claims (its table's rows name them).
LAB = core.Lab(
    "memory_access", pages=("labs/memory-access.md",),
    sizes={"strided_elements": (1 << 18, 1 << 25), "transpose_shape": ((512, 768), (8192, 8192)),
           "bank_shape": ((1024, 1024), (8192, 8192)), "grade_speed_shape": ((2048, 2048), (8192, 8192))},
    budget_s=(0.1, 0.3),
    claims=(
        Claim("strided_sector_bound", "useful bandwidth of the strided read", "bound",
              model="helpers.models.memory_access.predicted_strided_bytes_per_s",
              ceilings="datasheet HBM bandwidth x the 32-byte-sector efficiency", limit="upper",
              why="a warp moves at least one whole sector per float it uses, and HBM moves no "
                  "more than its datasheet rate"),
        Claim("strided_read_time", "time of the strided read at strides 2 to 64", "prediction",
              model="helpers.models.memory_access.strided_read_time_s",
              ceilings="HBM rates measured in the same run: the stride-1 read's where the "
                       "64-byte accesses abut (strides up to 16), and where they do not, the "
                       "same stride's read over another span and element count (the "
                       "same-span sweep); 64 bytes per isolated access and the dirty L2 lines "
                       "the cache flush leaves", tolerance=0.10,
              why="the run's spread is under 3 %; the terms left out (launch, the first "
                  "wave's latency) are a few per cent; the ncu counters show the time per "
                  "float of a sparse read independent of its span to within 1 % at spans "
                  "of 2 GB and more, and its bytes the same 64 per float"),
        Claim("transpose_hbm_bound", "bytes moved per second by a transpose or a copy", "bound",
              model="helpers.models.memory_access.predicted_transpose_time_s",
              ceilings="datasheet HBM bandwidth, 32-byte sectors on the strided side",
              limit="upper", why="no transpose moves its bytes faster than HBM's datasheet rate "
                                 "nor writes less than a sector per strided float"),
        Claim("transpose_time", "time of the Triton tiled and naive transposes", "prediction",
              model="helpers.models.memory_access.transpose_time_from_copy_s",
              ceilings="copy of the same bytes measured in the same run", tolerance=0.10,
              why="both kernels are bandwidth-bound and the copy measures the rate; the run's "
                  "spread is 1-2 %; left out: the tiled kernel's on-chip shuffle and the edge "
                  "of the last wave, a few per cent"),
        Claim("smem_transpose_bound", "time of the CUDA C shared-memory transpose", "bound",
              model="helpers.models.memory_access.smem_transpose_min_time_s",
              ceilings="datasheet SM count, boost clock (one shared-memory pass per SM per "
                       "clock) and HBM bandwidth", limit="lower",
              why="every pass of every bank conflict takes a clock of its SM, and the matrix "
                  "crosses HBM twice"),
    ))
#: Strides (elements) of the strided read.
STRIDES = (1, 2, 4, 8, 16, 32, 64)
#: Bytes of one float32 element (the models' :data:`~helpers.models.memory_access.FP32_BYTES`).
ELEMENT_BYTES = FP32_BYTES
#: The stride whose span (``strided_elements`` x stride x 4 bytes) every stride of the
#: same-span sweep reads over.
SPAN_STRIDE = 16
#: Shape (rows, columns) the grader checks the reader's transpose on: not square and not a
#: multiple of the tile, so a kernel with a missing or swapped mask leaves elements unwritten.
GRADE_SHAPE = {"cpu": (45, 77), "gpu": (1023, 2049)}


def _kernels():
    from helpers.kernels import memory_access as k  # sets TRITON_INTERPRET on a CPU

    return k


def _rand(shape, device: str, gen):
    """Uniform floats in [0.5, 1.5): random, never zero, on ``device``."""
    import torch

    if device.startswith("cuda"):
        x = torch.rand(shape, device=device, dtype=torch.float32)
    else:
        x = torch.rand(shape, generator=gen, dtype=torch.float32)
    return x.add_(0.5)  # in place: the strided read's buffer is large


def check_kernels(device: str) -> dict:
    """:func:`helpers.kernels.memory_access.self_check`: the Triton kernels against torch at a
    tiny size (through the interpreter on a CPU); raises if one is wrong."""
    return _kernels().self_check(device)


def span_elements(span_bytes: int, stride: int) -> int:
    """Elements a read ``stride`` apart uses over ``span_bytes`` of float32 (at least one)."""
    return max(1, int(span_bytes) // (int(stride) * ELEMENT_BYTES))


def strided_read(device: str, budget_s: float, strides=STRIDES) -> tuple[dict, dict]:
    """Time the strided sum at each stride, twice: the same ``n`` elements at every stride (the
    span grows with the stride) and the same span at every stride (``n`` shrinks with it, the
    span being that of stride 16 in the first sweep). Useful bytes per second of each row."""
    import torch

    cuda = device.startswith("cuda")
    n = LAB.size("strided_elements")
    seg = SECTOR_BYTES if cuda else CPU_LINE_BYTES
    threads = torch.get_num_threads()
    if not cuda:  # one core: the cache lines of one core, and no thread-pool overhead
        torch.set_num_threads(1)
    try:
        gen = torch.Generator().manual_seed(2)
        x = _rand(n * max(strides), device, gen)
        span = n * SPAN_STRIDE * ELEMENT_BYTES
        same_n = _strided_rows(x, device, budget_s, strides, seg, lambda s: n)
        same_span = _strided_rows(x, device, budget_s, strides, seg,
                                  lambda s: span_elements(span, s))
        same_span["span_bytes"] = span
        del x
        return same_n, same_span
    finally:
        torch.set_num_threads(threads)


def _strided_rows(x, device: str, budget_s: float, strides, seg: int, count) -> dict:
    import torch

    cuda = device.startswith("cuda")
    k = _kernels() if cuda else None
    n_max = max(count(s) for s in strides)
    partial = (torch.empty(-(-n_max // k.STRIDED_BLOCK), dtype=torch.float32, device=device)
               if cuda else None)
    rows = []
    for s in progress(list(strides), desc="strided read"):
        n = count(s)
        view = x[: (n - 1) * s + 1: s]
        want = float(view.double().sum())
        if cuda:  # this stride's partial sums only: n shrinks with the stride at one span
            def fn(s=s, n=n, part=partial[: -(-n // k.STRIDED_BLOCK)]):
                return k.strided_sum(x, n, s, part)
        else:
            def fn(view=view):
                return view.sum()

        def check(out, want=want, s=s):
            got = float(out.double().sum())
            if not math.isclose(got, want, rel_tol=1e-5):
                raise AssertionError(f"strided read at stride {s}: sum {got}, expected {want}")

        r = bench(fn, device=device, name=f"stride {s}", budget_s=budget_s, flush_cache=True,
                  check=check, env=False)
        useful = float(n * ELEMENT_BYTES)
        rows.append({"stride": s, "n_elements": n, "span_bytes": float(n * s * ELEMENT_BYTES),
                     "useful_bytes": useful,
                     "useful_bytes_per_s": useful / r.median_s,
                     "predicted_efficiency": predicted_efficiency(s, ELEMENT_BYTES,
                                                                  segment_bytes=seg),
                     "bench": summarize(r)})
    return {"n_elements": count(strides[0]), "element_bytes": ELEMENT_BYTES, "segment_bytes": seg,
            "kernel": "triton strided_sum_kernel" if cuda else "torch sum of a strided view (CPU)",
            "rows": rows}


def transposes(device: str, budget_s: float) -> dict:
    """Time torch's transpose, a copy and (on a GPU) the naive and tiled Triton transposes."""
    import torch

    cuda = device.startswith("cuda")
    m, n = LAB.size("transpose_shape")
    gen = torch.Generator().manual_seed(3)
    x = _rand((m, n), device, gen)
    y = torch.empty((n, m), dtype=torch.float32, device=device)
    flat = torch.empty_like(x)
    want = x.t().contiguous()
    ops: dict[str, Callable[[], Any]] = {
        "copy": lambda: flat.copy_(x),
        "torch": lambda: x.t().contiguous(),
    }
    if cuda:
        k = _kernels()
        ops["triton_naive"] = lambda: k.transpose_naive(x, y)
        ops["triton_tiled"] = lambda: k.transpose_tiled(x, y)
    moved = 2.0 * m * n * ELEMENT_BYTES
    out = {"shape": [m, n], "bytes_moved": moved, "ops": {}}
    for name, fn in progress(list(ops.items()), desc="transpose"):
        ref = x if name == "copy" else want

        def check(res, ref=ref, name=name):
            if not torch.equal(res, ref):
                raise AssertionError(f"{name} result differs from the reference")

        if name != "copy":
            y.fill_(float("nan"))  # poisoned: an element the kernel skips stays NaN
        r = bench(fn, device=device, name=name, budget_s=budget_s, check=check, env=False)
        out["ops"][name] = {"bytes_per_s": moved / r.median_s, "bench": summarize(r)}
    return out


def bank_conflicts(device: str, budget_s: float) -> dict:
    """Time the padded and unpadded shared-memory transposes, if CUDA C can be compiled here."""
    predicted = {"pad0": predicted_conflict_degree(32, 0), "pad1": predicted_conflict_degree(32, 1)}
    base = {"predicted_conflict_degree": predicted, "tile": [32, 32]}
    if not device.startswith("cuda"):
        return {"available": False, "reason": "no CUDA GPU: the CPU tier has no shared memory "
                "banks to measure", **base}
    from helpers.kernels import smem_transpose

    nvcc, reason = smem_transpose.cuda_compiler()
    if nvcc is None:
        return {"available": False, "reason": reason, **base}
    import torch

    try:
        mod, build_s = smem_transpose.build()
    except Exception as exc:  # a compiler that fails is reported, not fatal
        msg = " ".join(str(exc).split())[:300]
        return {"available": False, "reason": f"building the CUDA C kernels failed: "
                f"{type(exc).__name__}: {msg}", **base}
    m, n = LAB.size("bank_shape")
    x = _rand((m, n), device, None)
    y = torch.empty((n, m), dtype=torch.float32, device=device)
    want = x.t().contiguous()
    moved = 2.0 * m * n * ELEMENT_BYTES
    out = {"available": True, "nvcc": nvcc, "build_s": build_s, "shape": [m, n],
           "bytes_moved": moved, **base}
    for pad in progress([0, 1], desc="bank conflicts"):
        y.fill_(float("nan"))

        def check(res):
            if not torch.equal(res, want):
                raise AssertionError(f"shared-memory transpose (pad {pad}) differs from torch")

        stream = torch.cuda.current_stream().cuda_stream  # the stream bench records events on
        r = bench(lambda: mod.transpose_smem(x, y, pad, stream), device=device, name=f"pad {pad}",
                  budget_s=budget_s, check=check, env=False)
        out[f"pad{pad}"] = {"bytes_per_s": moved / r.median_s, "bench": summarize(r)}
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    device = device or lab_device()
    budget = LAB.budget()
    result = new_result(LAB, device, strides=list(STRIDES), budget_s=budget,
                        element_bytes=ELEMENT_BYTES, flush_cache_strided=True)
    m = result["measurements"]
    m["kernels_checked"] = check_kernels(device)
    m["strided_read"], m["strided_read_same_span"] = strided_read(device, budget)
    m["transpose"] = transposes(device, budget)
    m["bank_conflicts"] = bank_conflicts(device, budget)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


def grade_transpose(kernel, device: str | None = None, trials: int = 3) -> Verdict:
    """Grade a reader's tiled transpose ``kernel`` for correctness.

    ``kernel`` has the signature of ``transpose_tiled_kernel``: ``(x_ptr, y_ptr, M, N,
    BLOCK_M, BLOCK_N)``, for a contiguous ``M x N`` input and ``N x M`` output; it is launched
    on a grid of ``cdiv(M, 32) x cdiv(N, 32)`` tiles. Fresh random inputs, a NaN-poisoned
    output, a float64 reference, on a shape that is neither square nor a multiple of the tile,
    and a check that nothing is written past the end of the output.
    """
    device = device or lab_device()
    k = _kernels()
    shape = GRADE_SHAPE["gpu" if device.startswith("cuda") else "cpu"]
    make_inputs, make_output, state, guard_check = k.guarded_buffers(shape, device)

    def candidate(x, out):
        state["out"][out.numel():].fill_(float("nan"))
        k.transpose_with(kernel, x, out)
        sync(device)
        guard_check()

    return check_outputs(candidate, lambda x: x.t().contiguous(), make_inputs,
                         name="tiled transpose", trials=trials, make_output=make_output,
                         device=device)


def grade_transpose_performance(kernel, device: str | None = None) -> Verdict | None:
    """On a GPU, grade the reader's kernel's time against a copy of the same bytes.

    The bound is the model's: a transpose moves the bytes of a copy, so at best it takes a
    copy's time (measured here, on the reader's GPU). PASS at half of that or better. None on
    a CPU, where performance is not graded.
    """
    device = device or lab_device()
    if not device.startswith("cuda"):
        return None
    import torch

    k = _kernels()
    m, n = LAB.size("grade_speed_shape")
    x = _rand((m, n), device, None)
    y = torch.empty((n, m), dtype=torch.float32, device=device)
    flat = torch.empty_like(x)
    want = x.t().contiguous()

    def check(res):
        if not torch.equal(res, want):
            raise AssertionError("the kernel's result differs from torch's transpose")

    copy = bench(lambda: flat.copy_(x), device=device, name="copy", budget_s=0.3, env=False)
    mine = bench(lambda: k.transpose_with(kernel, x, y), device=device, name="tiled transpose",
                 budget_s=0.3, check=check, env=False)
    ref = reference_or_none()
    ref_s = None
    if ref is not None and "triton_tiled" in ref["measurements"]["transpose"]["ops"]:
        ref_ops = ref["measurements"]["transpose"]["ops"]
        # the reference's tiled time, scaled to the reader's copy: the same fraction of a copy
        ref_s = copy.median_s * (ref_ops["triton_tiled"]["bench"]["median_s"]
                                 / ref_ops["copy"]["bench"]["median_s"])
    return check_performance(mine.median_s, copy.median_s, name="tiled transpose speed",
                             spread=max(mine.spread, copy.spread), min_fraction=0.5,
                             reference_s=ref_s)


def main(argv: list[str] | None = None) -> None:
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if "--counters" in argv:  # the ncu counters of the strided read (their own JSON)
        from helpers.labs import memory_access_worker

        memory_access_worker.main(argv)
        return
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
