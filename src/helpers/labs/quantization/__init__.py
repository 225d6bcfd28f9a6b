"""Lab runner: weight-only int8 (and int4) quantization of the book's model, and FP8.

Four measurements, one per question a quantized deployment has to answer:

1. **Error and quality.** ``book-lm`` (:func:`helpers.nn.tinylm.load`) is quantized with each
   scheme of :data:`helpers.nn.quantize.SCHEMES` (per-tensor and per-channel int8, int4 with
   groups of 32, 64 and 128). Per layer, the RMS and largest weight error are set beside the
   rounding-error model of :mod:`helpers.models.quantization` (:math:`s/\\sqrt{12}` and
   :math:`s/2` with each weight's own scale). The model's quality is the bits per byte on the
   first windows of the validation split, before and after, and the greedy continuations of a
   few validation prompts are compared token by token with the unquantized model's.
2. **Memory.** Bytes of the state of the model (bf16, as shipped) per scheme, against
   :func:`helpers.models.quantization.quantized_weight_bytes` for the quantized matrices plus
   two bytes per remaining parameter.
3. **Speed.** The small model fits in any GPU's L2 cache, so speed is measured on a
   decode-shaped matrix product large enough to stream from HBM (``K = N = 8192``, ``M`` = 1,
   4, 16 tokens): bf16 ``torch.nn.functional.linear``, the naive weight-only path (dequantize
   the int8 matrix in torch, then the same product), and the book's Triton kernel
   (:func:`helpers.kernels.int8_gemv.int8_matmul`, a few launch configurations tried, the
   fastest kept), each checked against float64 on a sample of output columns before it is
   timed, with L2 flushed between repetitions. The model is the bytes each moves divided by the
   HBM bandwidth measured by a device-to-device copy
   (:func:`helpers.models.quantization.weight_only_matmul_bytes`).

4. **FP8.** W8A8 GEMMs (``torch._scaled_mm``) against bf16 at prefill shapes, one decode
   step's attention over an FP8 KV cache against a bf16 one, and the batch each lets fit:
   :mod:`helpers.labs.quantization.fp8`, whose claims are :data:`FP8_CLAIMS`.

On a CPU (the small tier) the Triton kernels run through the interpreter at tiny sizes (checked,
not timed), and the torch paths are timed at ``K = N = 1024`` in fp32, marked as such.

Page: ``labs/quantization.md``. Run as
``python -m helpers.labs.quantization --out DIR [--size small|full] [--device cpu|cuda]``.

The page's grader is :func:`grade_per_channel`; what the page computes from a result (the
speed rows, the table) is in :mod:`helpers.labs.analysis.quantization`.
"""

from __future__ import annotations

import math

from helpers import specs
from helpers.bench import sync
from helpers.bench.device import copy_rate
from helpers.labs import core
from helpers.labs.core import (fastest_config, lab_device, new_result, progress, run_cli,
                                summarize)
from helpers.labs.grading import Verdict, check_outputs
from helpers.labs.report import Claim
from helpers.models.quantization import weight_only_matmul_bytes

__all__ = ["LAB", "GPU", "SCHEMES", "QUALITY_TOLERANCE", "SPEED_K", "speed_shape", "speed_rows_m",
           "FP8_CLAIMS", "layer_errors",
           "measure_model", "measure_kernel_checks", "measure_speed",
           "run", "reference_or_none", "grade_per_channel", "reference_per_channel", "main"]

#: The GPU whose datasheet the page quotes (and on which the reference was measured).
GPU = specs.H200_SXM
#: The schemes compared, coarsest int8 first.
SCHEMES = ("int8-tensor", "int8-channel", "int4-g32", "int4-g64", "int4-g128")
#: The quality constraint: bits per byte may grow by less than this fraction.
QUALITY_TOLERANCE = 0.01
#: Reduction depth and output width of the full-size speed sweep (a 7-8B model's d_model).
SPEED_K = 8192


#: The lab's record: its page, size table and bench settings (the cache flushed before every
#: repetition: the weights must come from HBM, as in a decode step).
LAB = core.Lab(
    "quantization", pages=("labs/quantization.md",),
    sizes={"speed_k": (1024, SPEED_K), "val_windows": (4, None),
           "gen_settings": ((2, 48, 24), (16, 64, 128)), "copy_bytes": (32 * 2**20, 2**30),
           # (M, N, K): prefill tokens x Llama-3-8B's MLP (up 4096 -> 14336, down 14336 -> 4096)
           "fp8_shapes": (((64, 96, 128), (33, 40, 72)),
                          ((4096, 14336, 4096), (8192, 14336, 4096), (16384, 14336, 4096),
                           (8192, 4096, 14336))),
           # (sequences, KV heads, cached tokens, head dim): one layer of Llama-3-8B at batch 128
           "kv_decode_shape": ((2, 3, 70, 32), (128, 8, 4096, 128))},
    budget_s=(0.1, 0.2), warmup_s=(0.02, 0.05), min_reps=(5, 5), flush_cache=True,
    claims=(
        Claim("state_bytes", "bytes of the quantized model's state", "prediction",
              model="helpers.models.quantization.quantized_weight_bytes",
              ceilings="none: a count of codes and fp16 scales, plus two bytes per remaining "
                       "(bf16) parameter",
              tolerance=0.01,
              why="the bytes are counted, not measured with noise: the per-tensor model leaves "
                  "out one 2-byte scale per matrix (a few dozen bytes in megabytes) and the "
                  "state holds no other tensor, so 1 % (the table's resolution) is loose"),
        Claim("rms_error", "RMS weight error over the weights' RMS, per scheme", "prediction",
              model="helpers.models.quantization.absmax_rms_rounding_error",
              ceilings="none: each weight's own step (its block's absmax / q_max) and the "
                       "number of weights per scale",
              tolerance=0.01,
              why="the rounding error of the weights that are not a block's maximum is uniform "
                  "over a step only on average: 33k to 164k weights per matrix leave a "
                  "sampling spread of 0.1 to 0.3 % per matrix (0.45 / sqrt(n)), and int4's "
                  "seven codes per side make the weights' density less flat over a step than "
                  "int8's; 1 % still tells the one exact weight per group of 32 (1.6 %) apart"),
        Claim("max_error", "largest weight error in half-steps of its own scale", "bound",
              model="helpers.models.quantization.max_rounding_error",
              ceilings="none: rounding to the nearest code of an absmax grid (nothing clips)",
              limit="upper",
              why="rounding to the nearest point of a grid of step s moves a value by at most "
                  "s/2; book-lm's weights, stored in 16 bits, sit exactly on some half-steps, "
                  "so the bound is reached"),
        Claim("matmul_copy_bound", "decode matmul time (L2 flushed)", "bound",
              model="helpers.models.quantization.weight_only_matmul_bytes",
              ceilings="the copy rate (read + write) measured in the same run",
              limit="lower", tolerance=0.05,
              why="the product must read its weights and activations and write its output; a "
                  "stream that mostly reads may run a few % faster than a copy, which also "
                  "writes, hence the allowed overshoot"),
    ))
#: The FP8 section's claims (issue 19, item 5), by key. They join ``LAB.claims`` once the
#: shipped H200 reference carries the FP8 measurements: the truth loop
#: (``tests/labs/test_truth_loop.py``) requires a row of the reference for every declared claim,
#: and fails on a row whose claim its lab does not declare, so neither step can be skipped.
#: Until then the page's table holds a reader's GPU run to them.
FP8_CLAIMS = {c.key: c for c in (
    Claim("fp8_speedup", "FP8 (E4M3) over bf16 GEMM speed-up at prefill shapes", "bound",
          model="helpers.models.quantization.low_precision_speedup_bound",
          ceilings="the datasheet's dense FP8 and BF16 tensor-core peaks "
                   "(helpers.specs.H200_SXM)",
          limit="upper", tolerance=0.05,
          why="both products are compute-bound at these shapes and the FP8 tensor cores "
              "do twice the bf16 work per clock; FP8 could pass the ratio only by reaching "
              "a larger share of its peak than cuBLAS's bf16 kernel reaches of its own, "
              "hence a small allowed overshoot"),
    Claim("fp8_error", "RMS error of the FP8 product over the RMS of the exact product",
          "prediction", model="helpers.models.quantization.fp8_matmul_rel_rms_error",
          ceilings="none: E4M3's 3 mantissa bits for both operands, bf16's 7 for the output",
          tolerance=0.03,
          why="the model assumes log-uniform mantissas, and a uniform one gives 4 % less "
              "error: Gaussian inputs lie between (a float64 simulation of the same "
              "rounding on the CPU lands 0.4 % under the model); the 256 sampled rows of "
              "thousands of outputs leave a sampling spread well under 1 %"),
    Claim("kv_decode_bound", "decode attention time over a KV cache (L2 flushed)", "bound",
          model="helpers.labs.analysis.quantization.kv_rows",
          ceilings="the copy rate (read + write) measured in the same run",
          limit="lower", tolerance=0.05,
          why="one decode step must read every cached key and value once; a stream that "
              "only reads may run a few % faster than a copy, which also writes"),
    Claim("kv_batch", "sequences whose KV cache fits beside Llama-3-8B's bf16 weights",
          "prediction", model="helpers.models.quantization.kv_max_batch",
          ceilings="the free device memory the driver reports (cudaMemGetInfo) in the run",
          tolerance=0.02,
          why="the allocator hands out whole 2 MiB pages and the driver may keep some "
              "memory for its page tables: one sequence (1 GiB in bf16) of about 125 is "
              "0.8 %, so 2 % allows the count to fall short by two"),)}
#: Largest error of the int8 kernel against float64, relative to the largest |output|, per
#: activation dtype (the output is rounded to that dtype).
KERNEL_RTOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}


# --- sizes ---------------------------------------------------------------------------------

def speed_shape() -> tuple[int, int]:
    """``(N, K)`` of the speed sweep's weight matrix."""
    k = LAB.size("speed_k")
    return k, k


def speed_rows_m() -> list[int]:
    """Tokens per decode step in the speed sweep."""
    return [1, 4, 16]


def _val_windows() -> int | None:
    """Validation windows of 256 bytes scored (None: the whole validation split)."""
    return LAB.size("val_windows")


def _gen_settings() -> tuple[int, int, int]:
    """(prompts, prompt bytes, new tokens) of the greedy-agreement test."""
    return LAB.size("gen_settings")


# --- error and quality -------------------------------------------------------------------------

def layer_errors(model, quantized) -> list[dict]:
    """Per quantized layer: measured RMS and largest weight error against the model's
    :math:`\\sqrt{\\overline{s^2}/12}` and :math:`\\max s/2` (each weight's own scale)."""
    import torch

    from helpers.models import quantization as qz
    from helpers.nn import quantize as nq

    originals = dict(model.named_modules())
    rows = []
    for lname, layer in nq.quantized_layers(quantized).items():
        w = originals[lname].weight.detach().double().cpu()
        err = layer.dequantized_weight(torch.float64).cpu() - w
        s = qz.dequantize(torch.ones_like(w), layer.scales.double().cpu())  # each weight's scale
        rows.append({
            "scheme": layer.scheme.name, "layer": lname, "shape": list(w.shape),
            "rms_error": float(err.pow(2).mean().sqrt()),
            "rms_model": float(s.pow(2).mean().sqrt() / math.sqrt(12)),
            "max_error": float(err.abs().max()),
            "max_model": float(s.max() / 2),
            "max_over_half_step": float((err.abs() / (s / 2)).max()),
            "weight_rms": float(w.pow(2).mean().sqrt()),
        })
    return rows


def _greedy(model, prompts, new_tokens: int):
    return model.generate(prompts, new_tokens)[:, prompts.shape[1]:]


def measure_model(model, device: str) -> tuple[list[dict], dict, dict]:
    """Quantize ``model`` (fp32) with every scheme once; return the per-layer errors, the
    quality (bits per byte before and after, agreement of greedy continuations) and the memory
    of each quantized model with its remaining parameters in bf16 (as shipped)."""
    import torch

    from helpers.models import quantization as qz
    from helpers.nn import quantize as nq
    from helpers.nn import tinylm

    _, val = tinylm.split(tinylm.corpus_bytes())
    windows = _val_windows()
    n_prompts, p_len, new = _gen_settings()
    starts = torch.linspace(0, len(val) - p_len - 1, n_prompts).long()
    prompts = torch.stack([val[s:s + p_len] for s in starts]).to(device)
    base_bpb = tinylm.bits_per_byte(model, val, max_windows=windows)
    base_gen = _greedy(model, prompts, new)
    quality = {"val_windows": windows,
               "val_bytes_scored": 256 * (windows or (len(val) - 1) // 256),
               "prompts": n_prompts, "prompt_bytes": p_len, "new_tokens": new,
               "baseline_bpb": base_bpb, "schemes": {},
               "baseline_sample": tinylm.decode(base_gen[0].cpu()),
               "prompt_sample": tinylm.decode(prompts[0].cpu())}
    n_total = model.num_parameters()
    n_quant = sum(m.weight.numel() for n, m in model.named_modules()
                  if isinstance(m, torch.nn.Linear) and n.startswith("blocks."))
    memory = {"parameters": n_total, "quantized_parameters": n_quant,
              "bf16_bytes": nq.model_bytes(nq.cast_unquantized(model, torch.bfloat16)),
              "bf16_model": 2.0 * n_total, "schemes": {}}
    errors = []
    for name in progress(SCHEMES, desc="schemes"):
        q = nq.quantize_model(model, name)
        errors += layer_errors(model, q)
        bpb = tinylm.bits_per_byte(q, val, max_windows=windows)
        gen = _greedy(q, prompts, new)
        same = (gen == base_gen)
        first_diff = [int(row.logical_not().nonzero()[0]) if not bool(row.all()) else new
                      for row in same]
        quality["schemes"][name] = {
            "bpb": bpb, "bpb_increase": bpb / base_bpb - 1,
            "within_tolerance": bool(bpb / base_bpb - 1 < QUALITY_TOLERANCE),
            "token_agreement": float(same.float().mean()),
            "tokens_before_divergence": first_diff,
            "sample": tinylm.decode(gen[0].cpu()),
        }
        s = nq.scheme(name)
        group = s.group_size if s.granularity == "group" else None
        layers = nq.quantized_layers(q).values()
        if s.granularity == "channel":  # one fp16 scale per row of in_features weights
            pred_q = sum(qz.quantized_weight_bytes(l.out_features * l.in_features, s.bits,
                                                   group_size=l.in_features) for l in layers)
        else:  # per tensor: one scale per matrix, left out by the model
            pred_q = qz.quantized_weight_bytes(n_quant, s.bits, group_size=group)
        memory["schemes"][name] = {
            "measured_bytes": nq.model_bytes(nq.cast_unquantized(q, torch.bfloat16)),
            "model_bytes": pred_q + 2.0 * (n_total - n_quant),
            "bits_per_weight": qz.bits_per_weight(s.bits, group_size=group)}
    return errors, quality, memory


# --- the kernel: correctness at tiny sizes and speed -------------------------------------------

def _kernel_inputs(m: int, n: int, k: int, gen, device: str, dtype):
    """Random activations, int8 codes (never all zero) and positive fp16 scales."""
    import torch

    x = torch.randn(m, k, generator=gen).to(device=device, dtype=dtype)
    q = torch.randint(-127, 128, (n, k), generator=gen, dtype=torch.int8).to(device)
    s = (torch.rand(n, generator=gen) * 0.02 + 1e-3).to(device=device, dtype=torch.float16)
    return x, q, s


def _rel_error(got, want) -> float:
    return float((got.double().cpu() - want).abs().max() / want.abs().max().clamp_min(1e-30))


def measure_kernel_checks(gen) -> dict:
    """The int8 kernel against float64 dequantize-then-matmul at tiny, odd sizes (the
    interpreter on a CPU): M = 1, 3, 16, 17; N and K not multiples of a block; fp32, fp16, bf16."""
    import torch

    from helpers.kernels import int8_gemv as kern
    from helpers.kernels import triton_device

    device = triton_device("cpu")
    # one warp in the interpreter (fast); a GPU gets four, as tl.dot's tensor-core paths expect
    cfg = kern.Int8Config(16, 32, 1, 1) if kern.INTERPRETED else kern.Int8Config(16, 32, 4, 2)
    cases = []
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for m, n, k in ((1, 40, 96), (3, 33, 70), (16, 48, 64), (17, 20, 50)):
            x, q, s = _kernel_inputs(m, n, k, gen, device, dtype)
            out = torch.full((m, n), float("nan"), dtype=dtype, device=device)
            kern.int8_matmul(x, q, s, cfg, out=out)
            err = _rel_error(out, kern.reference(x, q, s))
            name = str(dtype).removeprefix("torch.")
            if not err <= KERNEL_RTOL[name]:  # also catches NaN (an unwritten element)
                raise AssertionError(f"int8 kernel {name} M={m} N={n} K={k}: relative error "
                                     f"{err:.3g} exceeds {KERNEL_RTOL[name]:g}")
            cases.append({"dtype": name, "m": m, "n": n, "k": k, "rel_error": err})
    return {"device": device, "interpreted": kern.INTERPRETED, "cases": cases}


def _checked_error(y, x, w_dense_cols, cols) -> float:
    """Largest error of ``y[:, cols]`` against float64 ``x @ w_dense_cols^T``, relative."""
    want = (x.double() @ w_dense_cols.double().T).cpu()
    return _rel_error(y[:, cols], want)


def _copy_bandwidth(device: str) -> dict:
    """The device's copy rate (:func:`helpers.bench.device.copy_rate`: bytes read + written per
    second), the bound of every memory-bound kernel of the run."""
    r = copy_rate(LAB.size("copy_bytes"), device=device, bench_fn=LAB.bench)
    return {"buffer_bytes": r.buffer_bytes, "bytes_per_s": r.bytes_per_s,
            "bench": summarize(r.result)}


def measure_speed(device: str, gen) -> dict:
    """Time dense 16-bit, naive dequantize-then-matmul and (GPU) the int8 kernel per M."""
    import torch
    import torch.nn.functional as F

    from helpers.kernels import int8_gemv as kern
    from helpers.models import quantization as qz

    cuda = device.startswith("cuda")
    dtype = torch.bfloat16 if cuda else torch.float32
    esize = torch.finfo(dtype).bits // 8
    n, k = speed_shape()
    w = (torch.randn(n, k, generator=gen) * 0.02).to(device=device, dtype=dtype)
    scales = qz.absmax_scales(w.float(), "channel", bits=8).to(torch.float16)
    codes = qz.quantize(w.float(), scales.float(), bits=8).to(torch.int8)
    s_vec = scales.reshape(-1).contiguous()
    w_hat = qz.dequantize(codes.float(), scales.float())  # what the int8 paths multiply by
    cols = torch.randperm(n, generator=gen)[:256].to(device)
    bw = _copy_bandwidth(device)
    out = {"dtype": str(dtype).removeprefix("torch."), "n": n, "k": k, "kernel_timed": cuda,
           "copy_bandwidth": bw, "points": [], "configs": {}}
    for m in progress(speed_rows_m(), desc="speed per M"):
        x = torch.randn(m, k, generator=gen).to(device=device, dtype=dtype)
        impls = {
            "dense": (lambda: F.linear(x, w), w),
            "naive": (lambda: F.linear(x, codes.to(dtype) * scales.to(dtype)), w_hat),
        }
        if cuda:
            def attempt(cfg, entry, x=x, m=m):
                fn = (lambda: kern.int8_matmul(x, codes, s_vec, cfg))
                entry["rel_error"] = _checked_error(fn(), x, w_hat[cols], cols)
                if not entry["rel_error"] <= KERNEL_RTOL[out["dtype"]]:
                    raise AssertionError(f"int8 kernel {cfg.name} M={m}: relative error "
                                         f"{entry['rel_error']:.3g}")
                entry["median_s"] = LAB.bench(fn, device, f"int8_{cfg.name}_{m}").median_s
                return entry["median_s"]

            best, tried = fastest_config(list(kern.TUNING_CONFIGS), attempt,
                                         describe=lambda cfg: cfg.as_dict(),
                                         what="int8 kernel configuration")
            out["configs"][str(m)] = {"chosen": best.as_dict(), "tried": tried}
            impls["int8"] = ((lambda cfg=best: kern.int8_matmul(x, codes, s_vec, cfg)), w_hat)
        point = {"m": m,
                 "dense_bytes": weight_only_matmul_bytes(m, n, k, weight_bits=8 * esize,
                                                         act_bytes=esize),
                 "int8_bytes": weight_only_matmul_bytes(m, n, k, weight_bits=8, act_bytes=esize),
                 # the naive path reads the codes, writes and reads a dense copy, then as dense
                 "naive_bytes": weight_only_matmul_bytes(m, n, k, weight_bits=8, act_bytes=esize)
                 + 2.0 * n * k * esize + (m * k + m * n) * esize}
        for name, (fn, dense) in impls.items():
            err = _checked_error(fn(), x, dense[cols], cols)
            if not err <= KERNEL_RTOL[out["dtype"]]:
                raise AssertionError(f"{name} M={m}: relative error {err:.3g} against float64")
            point[name] = {"rel_error": err,
                           "bench": summarize(LAB.bench(fn, device, f"{name}_{m}"))}
        out["points"].append(point)
        sync(device)
    return out


def run(device: str | None = None) -> dict:
    """Measure everything this lab reports on ``device`` and return the result dict."""
    import torch

    from helpers.labs.quantization import fp8  # its measurements use this record
    from helpers.nn import tinylm

    device = device or lab_device()
    n, k = speed_shape()
    result = new_result(LAB, device, schemes=list(SCHEMES), quality_tolerance=QUALITY_TOLERANCE,
                        val_windows=_val_windows(), generation=list(_gen_settings()),
                        speed_n=n, speed_k=k, speed_m=speed_rows_m(), budget_s=LAB.budget(),
                        kernel_rtol=KERNEL_RTOL, scale_dtype="float16")
    gen = torch.Generator().manual_seed(2026)
    m = result["measurements"]
    m["kernel_checks"] = measure_kernel_checks(gen)
    model = tinylm.load("book-lm", device=device)
    m["errors"], m["quality"], m["memory"] = measure_model(model, device)
    del model
    m["speed"] = measure_speed(device, gen)
    m["fp8_gemm"] = fp8.measure_fp8_gemm(device, torch.Generator().manual_seed(2027))
    m["kv_decode"] = fp8.measure_kv_decode(device, torch.Generator().manual_seed(2028))
    m["kv_batch"] = fp8.measure_kv_batch(device)
    return result


#: The shipped H200 result, or None (with a one-line note) before it is measured.
reference_or_none = LAB.reference


# --- grading -------------------------------------------------------------------------------

def reference_per_channel(w):
    """Per-channel absmax int8 codes and scales of ``w`` (the answer the grader expects)."""
    from helpers.models import quantization as qz

    s = qz.absmax_scales(w, "channel", bits=8)
    return qz.quantize(w, s, bits=8), s


def _grading_inputs(gen):
    """A float64 ``(24, 80)`` matrix whose rows differ in magnitude by up to 1000x."""
    import torch

    w = torch.randn(24, 80, generator=gen, dtype=torch.float64)
    return (w * 10 ** (3 * torch.rand(24, 1, generator=gen, dtype=torch.float64) - 2),)


def grade_per_channel(fn, trials: int = 3) -> Verdict:
    """Check a reader's ``fn(w) -> (codes, scales)``: per-channel absmax int8 quantization.

    ``w`` is ``(N, K)`` float64; ``codes`` must be integers in [-127, 127] (any integer or float
    dtype), ``scales`` one per row (``(N, 1)``) equal to ``max|w_row| / 127``; the dequantized
    ``codes * scales`` must match the float64 reference on fresh random matrices whose rows
    differ in magnitude (so one scale per tensor fails)."""
    import torch

    name = "per-channel int8"
    gen = torch.Generator().manual_seed(7)
    (w,) = _grading_inputs(gen)
    try:
        codes, scales = fn(w.clone())
    except Exception as exc:
        return Verdict(name, "FAIL", [f"raised {type(exc).__name__}: {exc}"])
    codes, scales = torch.as_tensor(codes), torch.as_tensor(scales)
    n = w.shape[0]
    if tuple(codes.shape) != tuple(w.shape):
        return Verdict(name, "FAIL", [f"codes have shape {tuple(codes.shape)}, expected {tuple(w.shape)}"])
    if scales.numel() == 1:
        return Verdict(name, "FAIL", ["one scale for the whole tensor: per-channel quantization "
                                      f"needs one scale per output row, shape ({n}, 1)"])
    if tuple(scales.shape) != (n, 1):
        return Verdict(name, "FAIL", [f"scales have shape {tuple(scales.shape)}, expected ({n}, 1)"])
    c = codes.double()
    if not bool((c == c.round()).all()) or float(c.abs().max()) > 127:
        return Verdict(name, "FAIL", [f"codes must be integers in [-127, 127]; got values from "
                                      f"{float(c.min()):g} to {float(c.max()):g}"])
    _, want_s = reference_per_channel(w)
    ratio = (scales.double() / want_s).flatten()
    if not torch.allclose(ratio, torch.ones_like(ratio), rtol=1e-6):
        return Verdict(name, "FAIL", [f"scales are not max|w_row| / 127: got {float(ratio.median()):.4f} "
                                      "times that (127/128 = 0.9921 means dividing by 128, "
                                      "which clips the largest weight)"])
    v = check_outputs(lambda w: (lambda q, s: torch.as_tensor(q).double() * torch.as_tensor(s).double())(*fn(w)),
                      lambda w: (lambda q, s: q * s)(*reference_per_channel(w)),
                      _grading_inputs, name=name, trials=trials)
    if v.passed:
        v.reasons = [f"codes and one scale per row match a float64 reference on {trials} fresh "
                     "random matrices"]
    return v


def main(argv: list[str] | None = None) -> None:
    run_cli(LAB, run, argv)


if __name__ == "__main__":
    main()
