"""The FP8 half of the quantization lab (issue 19, item 5): W8A8 GEMMs and an FP8 KV cache.

Three measurements, made inside :func:`helpers.labs.quantization.run` with that lab's record
(its size table, bench settings and claims, :data:`helpers.labs.quantization.FP8_CLAIMS`):

1. :func:`measure_fp8_gemm`: bf16 ``torch.matmul`` against FP8 E4M3 ``torch._scaled_mm``
   (per-tensor and row-wise steps, bf16 output) at prefill shapes, each product checked
   against float32 before it is timed; the bound is the ratio of the datasheet's peaks
   (:func:`helpers.models.quantization.low_precision_speedup_bound`), the error model
   :func:`helpers.models.quantization.fp8_matmul_rel_rms_error`.
2. :func:`measure_kv_decode`: one decode step's attention over a bf16 and an FP8 KV cache
   with the book's Triton kernel (:mod:`helpers.kernels.kv_decode`), checked against float64;
   the bound is the cache's bytes at the copy rate of the same run.
3. :func:`measure_kv_batch` (a GPU only): how many sequences' caches the allocator gives
   beside an 8B model's weights, against :func:`helpers.models.quantization.kv_max_batch`.

What the page computes from them is in :mod:`helpers.labs.analysis.quantization`.
"""

from __future__ import annotations

from helpers.bench import sync
from helpers.labs.core import fastest_config, progress, summarize
from helpers.labs.quantization import LAB

__all__ = ["FP8_CHECK_ROWS", "GEMM_RTOL", "fp8_shapes", "measure_fp8_gemm", "KV_DECODE_CONFIGS",
           "KV_CHECK_HEADS", "KV_RTOL", "KV_MODEL_NAME", "KV_CONTEXT_LEN", "measure_kv_decode",
           "measure_kv_batch"]

# --- FP8 W8A8 GEMMs: torch._scaled_mm against bf16 at prefill shapes ---------------------------

#: Rows of each output compared with the float32 references (a sample keeps the check cheap).
FP8_CHECK_ROWS = 256
#: Largest relative RMS error of a product against the float32 product of the operands it was
#: given (only fp32 accumulation and the bf16 output's rounding, 2^-9 RMS, remain).
GEMM_RTOL = 1e-2


def fp8_shapes() -> list[tuple[int, int, int]]:
    """``(M, N, K)`` of the FP8 GEMM sweep at the size tier in force."""
    return [tuple(s) for s in LAB.size("fp8_shapes")]


def _device_generator(gen, device: str):
    """A generator on ``device`` seeded from ``gen``: the sweep's large Gaussian inputs are
    drawn where they live, zero-mean as the error model assumes (not
    :func:`helpers.bench.device.uniform`'s positive values)."""
    import torch

    return torch.Generator(device=device).manual_seed(
        int(torch.randint(0, 2**62, (1,), generator=gen)))


def _rel_rms(got, want) -> float:
    """RMS of ``got - want`` over the RMS of ``want``, in float64 on the CPU."""
    got, want = got.double().cpu(), want.double().cpu()
    return float((got - want).pow(2).mean().sqrt() / want.pow(2).mean().sqrt())


def _checked(entry: dict, got, want, what: str) -> None:
    """Record ``got``'s relative RMS error against ``want`` in ``entry``; raise above
    :data:`GEMM_RTOL` (also on NaN)."""
    entry["rel_rms_vs_fp32"] = err = _rel_rms(got, want)
    if not err <= GEMM_RTOL:
        raise AssertionError(f"{what}: relative RMS error {err:.3g} against float32")


def measure_fp8_gemm(device: str, gen, *, timed: bool | None = None) -> dict:
    """bf16 ``torch.matmul`` and FP8 E4M3 ``torch._scaled_mm`` (per-tensor and row-wise steps,
    :func:`helpers.models.quantization.fp8_quantize`, bf16 output) at prefill shapes. Each
    product is first checked against the float32 product of the operands it was given, on a
    sample of rows, and its error against the exact product of the bf16 inputs recorded; then
    timed, with the activations quantized beforehand (the W8A8 GEMM) and, apart, in the call.
    On a CPU: checked at tiny shapes, not timed (``timed`` overrides that, so that a test
    takes the GPU's path)."""
    import torch

    from helpers.models.quantization import fp8_quantize

    timed = device.startswith("cuda") if timed is None else timed
    out = {"timed": timed, "fmt": "float8_e4m3fn", "out_dtype": "bfloat16",
           "check_rows": FP8_CHECK_ROWS, "gemm_rtol": GEMM_RTOL, "points": []}
    if not hasattr(torch, "_scaled_mm"):
        out["skipped"] = "this torch has no torch._scaled_mm"
        return out
    for m, n, k in progress(fp8_shapes(), desc="fp8 gemm shapes"):
        dgen = _device_generator(gen, device)
        x = torch.randn(m, k, generator=dgen, device=device).to(torch.bfloat16)
        w = (torch.randn(n, k, generator=dgen, device=device) * 0.02).to(torch.bfloat16)
        rows = torch.randperm(m, generator=gen)[:FP8_CHECK_ROWS].to(device)
        exact = x[rows].float() @ w.float().T  # the bf16 inputs' product, in float32
        point = {"m": m, "n": n, "k": k, "flop": 2.0 * m * n * k, "bf16": {}}
        bf16 = (lambda x=x, w=w: torch.matmul(x, w.T))
        _checked(point["bf16"], bf16()[rows], exact, f"bf16 M={m} N={n} K={k}")
        point["bf16"]["rel_rms_vs_exact"] = point["bf16"]["rel_rms_vs_fp32"]
        if timed:
            point["bf16"]["bench"] = summarize(LAB.bench(bf16, device, f"bf16_{m}_{n}_{k}"))
        for mode in ("tensor", "row"):
            rowwise = mode == "row"
            xq, sx = fp8_quantize(x, rowwise=rowwise)
            wq, sw = fp8_quantize(w, rowwise=rowwise)
            sw_t = sw.reshape(1, -1) if rowwise else sw  # scale_b: one per output column

            def fp8(xq=xq, sx=sx, wq=wq, sw_t=sw_t):
                return torch._scaled_mm(xq, wq.T, scale_a=sx, scale_b=sw_t,
                                        out_dtype=torch.bfloat16)

            def fp8_dynamic(x=x, wq=wq, sw_t=sw_t, rowwise=rowwise):
                return fp8(*fp8_quantize(x, rowwise=rowwise), wq, sw_t)

            entry = {}
            deq = (xq[rows].float() * (sx[rows] if rowwise else sx)) @ (wq.float() * sw).T
            y = fp8()[rows]
            _checked(entry, y, deq, f"_scaled_mm {mode} M={m} N={n} K={k}")
            entry["rel_rms_vs_exact"] = _rel_rms(y, exact)
            if timed:
                entry["bench"] = summarize(LAB.bench(fp8, device, f"fp8_{mode}_{m}_{n}_{k}"))
                entry["bench_with_act_quant"] = summarize(
                    LAB.bench(fp8_dynamic, device, f"fp8_dynamic_{mode}_{m}_{n}_{k}"))
            point[f"fp8_{mode}"] = entry
        out["points"].append(point)
        del x, w
        sync(device)
    return out


# --- the FP8 KV cache: one decode step's attention, and the batch that fits -------------------

#: Launch configurations of the decode kernel tried on a GPU (``block_n``, ``num_warps``).
KV_DECODE_CONFIGS = ((32, 4), (64, 4), (64, 8), (128, 8))
#: (sequence, head) pairs compared with the float64 reference (a sample).
KV_CHECK_HEADS = 16
#: Largest error of the decode kernel against float64 attention over the values it stores,
#: relative to the largest output (the output is rounded to bf16, 2^-9).
KV_RTOL = 1e-2
#: The model and context of the batch-that-fits measurement.
KV_MODEL_NAME, KV_CONTEXT_LEN = "Llama-3-8B", 8192


def measure_kv_decode(device: str, gen, *, timed: bool | None = None) -> dict:
    """One decode step of attention (one query per KV head) over a bf16 cache and over the
    same cache in FP8 E4M3 with one step per tensor, by the book's Triton kernel
    (:mod:`helpers.kernels.kv_decode`, a few launch configurations, the fastest kept). Each
    configuration is checked against float64 attention over the values it stores before it is
    timed; the chosen one's output is also compared with the exact result of the bf16 cache
    (the FP8 cache's effect on attention). On a CPU: checked through the interpreter at a tiny
    shape with one configuration, not timed (``timed`` overrides that, for a test)."""
    import torch

    from helpers.kernels import kv_decode as kd
    from helpers.kernels import triton_device
    from helpers.models.quantization import fp8_quantize

    kdev = triton_device(device)
    timed = device.startswith("cuda") if timed is None else timed
    b, h, s, d = LAB.size("kv_decode_shape")
    dgen = _device_generator(gen, kdev)
    q, k, v = (torch.randn(shape, generator=dgen, device=kdev).to(torch.bfloat16)
               for shape in ((b, h, d), (b, h, s, d), (b, h, s, d)))
    (k8, sk), (v8, sv) = (fp8_quantize(t.reshape(-1, d)) for t in (k, v))
    k8, v8, sk, sv = k8.reshape(k.shape), v8.reshape(v.shape), float(sk), float(sv)
    heads = torch.randperm(b * h, generator=gen)[:KV_CHECK_HEADS]

    def sample(t):
        return t.reshape(b * h, *t.shape[2:])[heads.to(t.device)]

    exact = kd.decode_attention_reference(sample(q), sample(k), sample(v))
    out = {"b": b, "h": h, "s": s, "d": d, "timed": timed, "k_step": sk, "v_step": sv,
           "check_heads": int(heads.numel()), "rtol": KV_RTOL, "caches": {}}
    for name, kc, vc, ks, vs in (("bf16", k, v, 1.0, 1.0), ("fp8_e4m3", k8, v8, sk, sv)):
        own = kd.decode_attention_reference(sample(q), sample(kc), sample(vc), k_step=ks,
                                            v_step=vs)

        def attempt(cfg, entry, kc=kc, vc=vc, ks=ks, vs=vs, own=own, name=name):
            fn = (lambda: kd.decode_attention(q, kc, vc, k_step=ks, v_step=vs, block_n=cfg[0],
                                              num_warps=cfg[1]))
            o = sample(fn()).double().cpu()
            entry["rel_max_error"] = err = float((o - own).abs().max() / own.abs().max())
            if not err <= KV_RTOL:
                raise AssertionError(f"decode attention {name} {cfg}: largest error {err:.3g} "
                                     "against float64")
            entry["rel_rms_vs_bf16_exact"] = _rel_rms(o, exact)
            if not timed:
                return 0.0
            entry["bench"] = summarize(LAB.bench(fn, kdev, f"kv_{name}_{cfg[0]}_{cfg[1]}"))
            return entry["bench"]["median_s"]

        configs = ((16, 1),) if kd.INTERPRETED else KV_DECODE_CONFIGS
        best, tried = fastest_config(configs, attempt,
                                     describe=lambda c: {"block_n": c[0], "num_warps": c[1]},
                                     what="decode attention configuration")
        chosen = next(e for e in tried if (e["block_n"], e["num_warps"]) == best)
        out["caches"][name] = {"cache_bytes": float(kc.nbytes + vc.nbytes),
                               "qo_bytes": float(2 * q.nbytes), "chosen": chosen,
                               "tried": tried}
    sync(kdev)
    return out


def measure_kv_batch(device: str) -> dict:
    """How many sequences' KV caches (Llama-3-8B, :data:`KV_CONTEXT_LEN` tokens, one tensor per
    sequence) the allocator gives beside the model's bf16 weights, with a bf16 and with an FP8
    cache, beside :func:`helpers.models.quantization.kv_max_batch` at the free memory the
    driver reports just before. A GPU only: it fills the device's memory, then frees it."""
    import gc

    import torch

    from helpers.models import transformer as tm
    from helpers.models.quantization import kv_max_batch

    cfg = tm.CONFIGS[KV_MODEL_NAME]
    weights = tm.weight_bytes(tm.parameter_count(cfg), 2.0)
    out = {"model": cfg.name, "context_len": KV_CONTEXT_LEN, "weight_bytes": weights,
           "caches": {}}
    if not device.startswith("cuda"):
        out["skipped"] = "needs a CUDA GPU (it fills the device's memory)"
        return out
    for name, element_bytes in (("bf16", 2.0), ("fp8_e4m3", 1.0)):
        gc.collect()
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info(device)
        per_token = tm.kv_cache_bytes_per_token(cfg, element_bytes)
        model = kv_max_batch(free, weights, per_token, KV_CONTEXT_LEN)
        held, n = [torch.empty(int(weights), dtype=torch.uint8, device=device)], 0
        try:
            while n <= 2 * model + 8:  # a stop, should the allocator never refuse
                held.append(torch.empty(int(per_token * KV_CONTEXT_LEN), dtype=torch.uint8,
                                        device=device))
                n += 1
        except torch.cuda.OutOfMemoryError:
            pass
        finally:
            del held
            torch.cuda.empty_cache()
        out["caches"][name] = {"bytes_per_element": element_bytes, "free_bytes": float(free),
                               "total_bytes": float(total), "kv_bytes_per_token": per_token,
                               "model_sequences": model, "sequences_allocated": n}
    return out
