"""Lab runner: attention, naive (materialised scores) vs a fused Triton kernel vs torch's SDPA.

Three ways to compute the attention forward pass ``O = softmax(Q K^T / sqrt(d)) V`` are timed
across sequence lengths at a fixed number of tokens (``batch * seq``), for head dimensions 64
and 128, with and without a causal mask:

* **naive** (:func:`helpers.kernels.attention_torch.naive_attention`): ``torch.matmul``,
  ``torch.softmax``, ``torch.matmul``, with the ``N x N`` score and probability matrices
  written to memory (standard attention, Dao et al. 2022, Algorithm 0).
  It needs ``2 N^2`` elements per head at once, so it is skipped, and the skip recorded, where
  that would exceed :data:`NAIVE_LIMIT_BYTES`;
* **fused**: the book's Triton kernel :func:`helpers.kernels.attention.attention`
  (FlashAttention-2 style: online softmax over key blocks, fp32 accumulators, bf16 in and out).
  On a GPU a few launch configurations are tried at the longest sequence and the fastest kept
  (all are recorded);
* **sdpa**: ``torch.nn.functional.scaled_dot_product_attention``, with the backend torch picks
  (not forced). The runner records which attention kernels ran, read from the profiler.

Every timed kernel is first checked against a float64 reference on fresh random inputs (a few
heads and query rows, computed on the device in float64), and its worst error is recorded.
Each point carries the model's FLOP and HBM bytes (:mod:`helpers.models.attention`) and the
roofline's lower bound on its time for the H200's bf16 tensor-core peak and HBM bandwidth.

On a CPU (the small tier) the fused kernel runs through Triton's interpreter at tiny sizes
(sequence lengths 64 to 128 and an odd one, head dimensions 16 and 32, fp32 and fp16, causal and
not) and is checked, not timed; the naive path and SDPA are timed with torch on the CPU in fp32.
(Triton 3.5's interpreter computes bf16 ``tl.dot`` wrongly, so the CPU tier checks fp16.)

Page: ``labs/attention.md`` (the model, this runner's result, the H200 reference and the
exercise). Run as
``python -m helpers.labs.attention --out DIR [--size small|full] [--device cpu|cuda]``.

Additions to the lab framework, kept in this module: :func:`grade_attention` and
:func:`grade_attention_speed` (the grader of the page's exercise). What the page computes from
a result (rows, tables, the prose's numbers) is in :mod:`helpers.labs.analysis.attention`.

Implementations and records kept elsewhere: the naive and SDPA paths are in
:mod:`helpers.kernels.attention_torch`; the hardware-counter records, by ncu, are
:mod:`helpers.labs.attention.counters` (bytes through HBM and L2;
``python -m helpers.labs.attention --counters --out DIR`` still runs it) and
:mod:`helpers.labs.attention.pipes` (instructions per SM pipe, registers, occupancy).
"""

from __future__ import annotations

import math
import sys
from typing import Callable

from helpers import specs
from helpers.bench import sync
from helpers.labs import core
from helpers.labs.core import (fastest_config, lab_device, new_result, progress, run_cli,
                                summarize)
from helpers.labs.report import Claim
from helpers.kernels.attention_torch import naive_attention, sdpa_attention
from helpers.kernels.attention_torch import kernel_names as _kernel_names
from helpers.kernels.attention_torch import sdpa_backends as _sdpa_backends
from helpers.kernels.attention_torch import sdpa_kernels as _sdpa_kernels
from helpers.labs.grading import Verdict, check_outputs, check_performance
from helpers.models import attention as model

__all__ = ["LAB", "CLAIMS", "PROGRAMS_PER_SM", "SFU_OPS_PER_CLOCK_PER_SM",
           "ALU_OPS_PER_CLOCK_PER_SM", "PIPE_RATES", "DEFAULT_OPS_PER_SCORE", "GPU", "FULL_HIDDEN", "FULL_TOKENS",
           "NAIVE_LIMIT_BYTES", "TOLERANCE", "tokens", "hidden", "n_heads", "seq_lens",
           "head_dims", "fused_configs", "naive_attention", "sdpa_attention",
           "measure_kernel_checks", "measure_sweep", "run", "reference_or_none",
           "grade_attention", "grade_attention_speed", "main"]

#: The GPU whose datasheet the model uses (and on which the reference was measured).
GPU = specs.H200_SXM
#: The naive path is skipped where its score and probability matrices would exceed this.
NAIVE_LIMIT_BYTES = 8 * 2**30
#: Largest absolute error against float64 accepted per input dtype (outputs are of order 1).
TOLERANCE = {"bfloat16": 6e-2, "float16": 1e-2, "float32": 1e-4,
             # On a GPU, tl.dot rounds float32 inputs to TF32 (a 10-bit mantissa) for the
             # tensor cores, as torch does with allow_tf32: the same kernel's float32 error is
             # then that of TF32 products (measured 1.2e-3 on the H200 at these sizes).
             "tf32": 5e-3}
#: Model width and tokens per point of the full sweep (the FlashAttention-2 benchmark's).
FULL_HIDDEN = 2048
FULL_TOKENS = 16384
#: Query rows checked against float64 per (batch, head) slice.
CHECK_ROWS = 64

#: Programs of a fused kernel resident per SM assumed by the two-level traffic model (its L2
#: working set): concurrent programs = SMs x this. (The pipe model reads the real occupancy of
#: each launch from the counters: two at d = 64, one at d = 128; attention_pipes.json.)
PROGRAMS_PER_SM = 1

#: Special-function results (exp2, log2, rcp, ...) per clock per SM on Hopper: CUDA C++
#: Programming Guide, "Arithmetic Instructions" throughput table, compute capability 9.0; the
#: same rate as FlashAttention-3's 3.9 TFLOP/s of special functions on an H100 SXM5 (Shah et
#: al. 2024, Section 3.1) at 132 SMs and the 1830 MHz tensor clock.
SFU_OPS_PER_CLOCK_PER_SM = 16
#: ALU pipe lanes per SM on Hopper (integer, compare, min/max, conversion): 16 per SM
#: sub-partition, the 64 INT32 units per SM of the H100 whitepaper's SM description.
ALU_OPS_PER_CLOCK_PER_SM = 64
#: The per-SM rates of the pipe model (helpers.models.attention.flash2_tile_cycles).
PIPE_RATES = {"tensor_fma_per_clock": GPU.tensor_fma_per_clock_per_sm["bf16"],
              "sfu_ops_per_clock": SFU_OPS_PER_CLOCK_PER_SM,
              "fma_ops_per_clock": GPU.fp32_lanes_per_sm,
              "alu_ops_per_clock": ALU_OPS_PER_CLOCK_PER_SM}
#: Operations per score assumed where no counters describe a launch: on the FMA pipe the scale,
#: the subtraction of the row max and the row sum; on the ALU the row max and half a bf16 pack.
#: (The counters of attention_pipes.json replace them: 3.4 to 3.9 and 1.9 to 2.5.)
DEFAULT_OPS_PER_SCORE = {"fma_ops_per_score": 3.0, "alu_ops_per_score": 1.5}

#: What the lab's models claim (helpers.labs.report.Claim), read by its rows.
CLAIMS = (
    Claim("naive_time", "naive attention forward time", "bound",
          model="helpers.models.roofline.kernel_time_lower_bound_s",
          ceilings="datasheet: the H200's dense bf16 peak and HBM bandwidth (specs.H200_SXM)",
          why="the roofline: no kernel computes faster than the peak or moves its bytes faster "
              "than HBM, and the naive path's passes over the N x N scores (far larger than the "
              "L2) all reach HBM, as the shipped ncu counters show (attention_counters.json)",
          limit="lower"),
    Claim("fused_time", "fused attention forward time", "prediction",
          model="helpers.models.attention.flash2_attention_pipe_time_s",
          ceilings="datasheet: the H200's per-SM tensor-core rate, FP32 lanes, SM count and "
                   "1830 MHz tensor clock (specs.H200_SXM), the special-function units' 16 "
                   "results and the ALU's 64 lanes per clock per SM (SFU_OPS_PER_CLOCK_PER_SM, "
                   "ALU_OPS_PER_CLOCK_PER_SM); counters of a separate ncu run "
                   "(attention_pipes.json): the FMA and ALU operations per score, the registers "
                   "and shared memory that set the programs per SM, and the fixed cycles per "
                   "program (the intercept of the counted cycles over four lengths); the larger "
                   "of this and the two-level memory time (far below it)",
          why="the run's spread (p20 to p80) is up to 6 %; the clock under load is not the "
              "datasheet's 1830 MHz but 1.77 GHz under ncu and about 1.88 GHz sustained "
              "(nvidia-smi), 3 to 4 % either way; and the per-tile rule (the products, "
              "exponentials and FMA work in series with one program per SM, the softmax pipes "
              "with two) matches the counted cycles per tile within 5 %",
          tolerance=0.15),
)

#: The lab's record: its page, size table and bench settings.
LAB = core.Lab(
    "attention", pages=("labs/attention.md",), claims=CLAIMS,
    sizes={"tokens": (1024, FULL_TOKENS), "hidden": (256, FULL_HIDDEN),
           "seq_lens": ([128, 256, 512], [512, 1024, 2048, 4096, 8192, 16384]),
           "head_dims": ([64], [64, 128])},
    budget_s=(0.1, 0.25), warmup_s=(0.02, 0.05), min_reps=(3, 3))


# --- sizes ---------------------------------------------------------------------------------

def tokens() -> int:
    """``batch * seq`` of every point of the sweep (fixed, as in the FlashAttention-2 paper's
    benchmark: 16k tokens at full size)."""
    return LAB.size("tokens")


def hidden() -> int:
    """Model width ``heads * head_dim``, fixed across head dimensions (2048 at full size, as in
    the FlashAttention-2 paper's benchmark, Section 4.1)."""
    return LAB.size("hidden")


def n_heads(head_dim: int = 64) -> int:
    """Heads at ``head_dim``: ``hidden() // head_dim`` (32 at d = 64, 16 at d = 128, full)."""
    if head_dim < 1 or hidden() % head_dim:
        raise ValueError(f"head_dim must divide {hidden()}, got {head_dim!r}")
    return hidden() // head_dim


def seq_lens() -> list[int]:
    return LAB.size("seq_lens")


def head_dims() -> list[int]:
    return LAB.size("head_dims")


def fused_configs(head_dim: int) -> list[dict]:
    """Launch configurations of the fused kernel tried on a GPU (the first is the default)."""
    from helpers.kernels import attention as kern

    first = kern.default_config(head_dim)
    return [first,
            {"block_m": 128, "block_n": 128, "num_warps": 8, "num_stages": 2},
            {"block_m": 128, "block_n": 128, "num_warps": 8, "num_stages": 3},
            {"block_m": 128, "block_n": 64, "num_warps": 4, "num_stages": 3},
            {"block_m": 64, "block_n": 128, "num_warps": 4, "num_stages": 3},
            {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 4}]


# --- inputs and checks ---------------------------------------------------------------------

def _inputs(shape, gen, device: str, dtype):
    """Standard normal q, k, v drawn on the CPU from ``gen``, then moved (never zeros)."""
    import torch

    return tuple(torch.randn(shape, generator=gen).to(device=device, dtype=dtype)
                 for _ in range(3))


def _max_error(out, q, k, v, causal: bool, gen) -> float:
    """Worst absolute error of ``out`` against float64 on a few heads and query rows.

    The reference is computed where the tensors live, in float64, for the first and last
    (batch, head) slice and :data:`CHECK_ROWS` random query rows of each (all rows if fewer).
    """
    import torch

    b, h, n, d = q.shape
    rows = torch.randperm(n, generator=gen)[:CHECK_ROWS].sort().values.to(q.device)
    worst = 0.0
    for bi, hi in {(0, 0), (b - 1, h - 1)}:
        q64, k64, v64 = (t[bi, hi].double() for t in (q, k, v))
        s = (q64[rows] @ k64.T) / math.sqrt(d)
        if causal:
            cols = torch.arange(n, device=q.device)
            s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
        want = torch.softmax(s, dim=-1) @ v64
        got = out[bi, hi][rows].double()
        err = (got - want).abs().max()
        if torch.isnan(err):
            return float("nan")
        worst = max(worst, float(err))
    return worst


def _checked(name: str, fn, q, k, v, causal: bool, gen, dtype_name: str) -> float:
    out = fn()
    sync(str(q.device))
    err = _max_error(out, q, k, v, causal, gen)
    tol = TOLERANCE[dtype_name]
    if not err <= tol:  # also catches NaN
        raise AssertionError(f"{name}: max error {err:.3g} against float64 exceeds {tol:g}")
    return err


# --- measurements ---------------------------------------------------------------------------

def measure_kernel_checks(gen) -> dict:
    """The fused kernel against float64 at tiny sizes, masks included (interpreter on a CPU).

    Sequence lengths 64, 97 (not a multiple of any block) and 128; head dimensions 16 and 32;
    causal and not; fp32 and fp16; blocks of 32 query rows and 16 keys.
    """
    import torch

    from helpers.kernels import attention as kern

    device = "cpu" if kern.INTERPRETED else "cuda"
    cases = []
    for dtype in (torch.float32, torch.float16):
        for n, d in ((64, 16), (97, 32), (128, 32)):
            for causal in (False, True):
                q, k, v = _inputs((2, n, d), gen, device, dtype)
                o = kern.attention(q, k, v, causal=causal, block_m=32, block_n=16)
                err = float((o.double().cpu() - kern.attention_reference(q, k, v, causal=causal))
                            .abs().max())
                name = str(dtype).removeprefix("torch.")
                tol = TOLERANCE["tf32" if name == "float32" and not kern.INTERPRETED else name]
                if not err <= tol:
                    raise AssertionError(f"fused kernel {name} n={n} d={d} causal={causal}: "
                                         f"max error {err:.3g} exceeds {tol:g}")
                cases.append({"dtype": name, "seq_len": n, "head_dim": d, "causal": causal,
                              "max_abs_error": err})
    return {"device": device, "interpreted": kern.INTERPRETED, "cases": cases}


def _choose_config(q, k, v, causal: bool, gen, device: str, d: int) -> tuple[dict, list]:
    """Try :func:`fused_configs` on these inputs; return the fastest and every attempt."""
    from helpers.kernels import attention as kern

    def attempt(cfg, entry):
        fn = (lambda: kern.attention(q, k, v, causal=causal, **cfg))
        entry["max_abs_error"] = _checked("fused", fn, q, k, v, causal, gen, "bfloat16")
        entry["median_s"] = LAB.bench(fn, device, f"fused_cfg_{cfg}").median_s
        return entry["median_s"]

    return fastest_config(fused_configs(d), attempt, what="fused-kernel configuration")


def measure_sweep(device: str, gen) -> dict:
    """Time naive, fused (GPU only) and SDPA per head dimension, mask and sequence length."""
    import torch

    from helpers.kernels import attention as kern

    cuda = device.startswith("cuda")
    dtype = torch.bfloat16 if cuda else torch.float32
    dtype_name = str(dtype).removeprefix("torch.")
    esize = float(torch.finfo(dtype).bits // 8)
    out: dict = {"dtype": dtype_name, "tokens": tokens(), "hidden": hidden(), "points": [],
                 "fused_timed": cuda, "configs": {}, "sdpa_kernels": {}}
    cases = [(d, c) for d in head_dims() for c in (False, True)]
    for d, causal in progress(cases, desc="attention cases"):
        heads = n_heads(d)
        key = f"d{d}_{'causal' if causal else 'full'}"
        cfg = kern.default_config(d)
        if cuda:  # choose the fused kernel's configuration at the longest sequence
            n = seq_lens()[-1]
            q, k, v = _inputs((max(1, tokens() // n), heads, n, d), gen, device, dtype)
            cfg, tried = _choose_config(q, k, v, causal, gen, device, d)
            out["configs"][key] = {"chosen": cfg, "tried": tried}
            out["sdpa_kernels"][key] = _sdpa_kernels(q, k, v, causal)
            del q, k, v
        for n in seq_lens():
            batch = max(1, tokens() // n)
            q, k, v = _inputs((batch, heads, n, d), gen, device, dtype)
            point = {"head_dim": d, "causal": causal, "seq_len": n, "batch": batch,
                     "n_heads": heads, "bytes_per_element": esize,
                     "flop": model.attention_flop(n, d, n_heads=heads, batch=batch,
                                                  causal=causal),
                     "naive_flop": model.attention_flop(n, d, n_heads=heads, batch=batch),
                     "naive_bytes": model.standard_attention_hbm_bytes(
                         n, d, esize, n_heads=heads, batch=batch)
                     + (2.0 * n * n * esize * heads * batch if causal else 0.0),
                     "fused_bytes": model.flash2_attention_hbm_bytes(
                         n, d, esize, block_rows=cfg["block_m"], n_heads=heads, batch=batch,
                         causal=causal),
                     "fused_config": cfg}
            impls: dict[str, Callable] = {}
            peak = model.naive_attention_peak_bytes(n, esize, n_heads=heads, batch=batch)
            if peak <= NAIVE_LIMIT_BYTES:
                mask = (torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
                        if causal else None)
                impls["naive"] = (lambda mask=mask: naive_attention(q, k, v, causal=causal,
                                                                    mask=mask))
            else:
                point["naive_skipped"] = (f"needs {peak / 2**30:.0f} GiB for the scores "
                                          f"(limit {NAIVE_LIMIT_BYTES / 2**30:.0f} GiB)")
            if cuda:
                impls["fused"] = (lambda: kern.attention(q, k, v, causal=causal, **cfg))
            impls["sdpa"] = (lambda: sdpa_attention(q, k, v, causal=causal))
            for name, fn in impls.items():
                err = _checked(f"{name} n={n} d={d} causal={causal}", fn, q, k, v, causal, gen,
                               dtype_name)
                point[name] = {"max_abs_error": err,
                               "bench": summarize(LAB.bench(fn, device, f"{name}_{key}_{n}"))}
            out["points"].append(point)
            del q, k, v, impls
            if cuda:
                torch.cuda.empty_cache()
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    import torch

    device = device or lab_device()
    result = new_result(LAB, device, tokens=tokens(), hidden=hidden(), seq_lens=seq_lens(),
                        head_dims=head_dims(), budget_s=LAB.budget(),
                        naive_limit_bytes=NAIVE_LIMIT_BYTES, tolerance=TOLERANCE,
                        flop_convention="4 N^2 d per head, halved when causal (FlashAttention "
                                        "benchmarks); the naive path computes the full 4 N^2 d")
    gen = torch.Generator().manual_seed(2025)
    m = result["measurements"]
    m["kernel_checks"] = measure_kernel_checks(gen)
    m["sweep"] = measure_sweep(device, gen)
    m["sdpa_backends_enabled"] = _sdpa_backends()
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference




# --- grading --------------------------------------------------------------------------------

def _grading_shape(device: str) -> tuple[tuple[int, int, int], dict, str]:
    """(shape, launch settings, dtype name): tiny fp32 blocks on a CPU, bf16 defaults on a GPU."""
    if device.startswith("cuda"):
        return (4, 1000, 64), {}, "bfloat16"
    return (2, 75, 16), {"block_m": 32, "block_n": 16}, "float32"


def grade_attention(kernel, device: str | None = None, trials: int = 2) -> Verdict:
    """Correctness of a reader's fused attention kernel (same signature as
    :func:`helpers.kernels.attention.attention_fwd_kernel`), without and with the causal
    mask, on fresh random inputs whose length is not a multiple of a block; the output is
    poisoned with NaN first and compared with float64."""
    import torch

    from helpers.kernels import attention as kern

    device = device or lab_device()
    shape, launch, dtype_name = _grading_shape(device)
    dtype = getattr(torch, dtype_name)

    def make(gen):
        return _inputs(shape, gen, device, dtype)

    atol = TOLERANCE[dtype_name]
    for causal in (False, True):
        v = check_outputs(
            lambda q, k, v, o: kern.attention(q, k, v, causal=causal, out=o, kernel=kernel,
                                              **launch),
            lambda q, k, v: kern.attention_reference(q, k, v, causal=causal), make,
            name="fused attention kernel", trials=trials, make_output=lambda q, k, v: torch.empty_like(q),
            rtol=0.0, atol=atol, device=device)
        if not v.passed:
            v.reasons.insert(0, "causal" if causal else "no mask")
            return v
    return Verdict("fused attention kernel", "PASS",
                   [f"matches a float64 reference without and with the causal mask on "
                    f"{trials} fresh random inputs each"])


def grade_attention_speed(kernel, device: str | None = None, seq_len: int = 4096,
                          min_fraction: float = 0.5) -> Verdict | None:
    """Speed of a reader's kernel against SDPA on a GPU (None on a CPU): PASS when it reaches
    ``min_fraction`` of SDPA's speed at ``seq_len``, d = 64, no mask; INCONCLUSIVE if noisy.

    The default asks half of SDPA's speed of the page's exercise, a plain loop with a mask on
    every block; the book's own kernel aims at 80 % (:func:`fused_vs_sdpa` reports it)."""
    import torch

    from helpers.kernels import attention as kern

    device = device or lab_device()
    if not device.startswith("cuda"):
        return None
    gen = torch.Generator().manual_seed(11)
    heads = FULL_HIDDEN // 64
    q, k, v = _inputs((max(1, FULL_TOKENS // seq_len), heads, seq_len, 64), gen, device,
                      torch.bfloat16)
    mine_fn = (lambda: kern.attention(q, k, v, kernel=kernel))
    _checked("your kernel", mine_fn, q, k, v, False, gen, "bfloat16")
    mine = LAB.bench(mine_fn, device, "your_attention")
    sdpa = LAB.bench(lambda: sdpa_attention(q, k, v), device, "sdpa")
    flop = model.attention_flop(seq_len, 64, n_heads=heads, batch=q.shape[0])
    print(f"your kernel: {flop / mine.median_s / 1e12:.3g} TFLOP/s, SDPA "
          f"{flop / sdpa.median_s / 1e12:.3g} TFLOP/s")
    return check_performance(mine.median_s, sdpa.median_s, name="fused attention speed vs SDPA",
                             spread=max(mine.spread, sdpa.spread), min_fraction=min_fraction)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--counters" in argv or "--counted-call" in argv:  # the counters record's own CLI
        from helpers.labs.attention import counters

        counters.main(argv)
        return
    run_cli(LAB, run, argv)
