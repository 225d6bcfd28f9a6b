"""What the quantization lab's page computes from a result (:mod:`helpers.labs.quantization`).

Per scheme, the weights' rounding error beside the absmax model (:func:`error_rows`); per M of
the speed sweep, each path's time beside its bytes at the copy bandwidth measured in the same
run (:func:`speed_rows`); per shape of the FP8 GEMM sweep, the speed-ups beside the datasheet's
bound and the error beside its model (:func:`fp8_rows`, :func:`fp8_table`); per KV-cache dtype,
the decode attention time beside its bytes at the copy rate (:func:`kv_rows`) and the batch
that fits beside its model (:func:`kv_batch_rows`); the FP8 section's glued numbers
(:func:`fp8_numbers`); the page's model-vs-H200 rows and table (:func:`comparison_rows`,
:func:`comparison_table`) and a summary of a result (:func:`describe`).

The rows name the lab's claims (:data:`helpers.labs.quantization.LAB`): the state's bytes
(``state_bytes``) and the RMS weight error (``rms_error``) are predictions; the largest error
(``max_error``, half a step) and the matmul times at the copy rate (``matmul_copy_bound``) are
bounds; so are the FP8 speed-up (``fp8_speedup``, the ratio of the datasheet's peaks) and the
decode attention time (``kv_decode_bound``); the FP8 product's error (``fp8_error``) and the
KV batch that fits (``kv_batch``) are predictions.
"""

from __future__ import annotations

import math

from helpers import specs, units
from helpers.labs.core import MISSING, fmt, page_numbers
from helpers.labs.quantization import FP8_CLAIMS, GPU, LAB, SCHEMES
from helpers.labs.report import Row, Table
from helpers.models import quantization as qz

__all__ = ["IMPLS", "block_size", "error_rows", "speed_rows", "FP8_MODES", "fp8_rows",
           "fp8_table", "kv_rows", "kv_batch_rows", "decode_step_s", "fp8_numbers",
           "comparison_rows", "comparison_table", "claim_numbers", "describe"]


def block_size(scheme: str, shape) -> int:
    """Weights sharing one scale under ``scheme`` for a matrix of ``shape`` (out, in): the
    whole matrix (per tensor), a row (per channel) or a group."""
    from helpers.nn import quantize as nq

    s = nq.scheme(scheme)
    n, k = shape
    return {"tensor": n * k, "channel": k}.get(s.granularity) or s.group_size


def error_rows(result: dict) -> list[dict]:
    """Per scheme, over its quantized matrices: the measured RMS weight error and the absmax
    model's (:func:`helpers.models.quantization.absmax_rms_rounding_error`, each weight's own
    step, one exact weight per block), both over the weights' RMS; and the largest error in
    half-steps of its own scale (the bound is one)."""
    by: dict[str, list[dict]] = {}
    for e in result["measurements"]["errors"]:
        by.setdefault(e["scheme"], []).append(e)
    rows = []
    for name in [s for s in SCHEMES if s in by] + [s for s in by if s not in SCHEMES]:
        es = by[name]
        n = [e["shape"][0] * e["shape"][1] for e in es]
        model = [qz.absmax_rms_rounding_error(e["rms_model"] * math.sqrt(12),
                                              block_size(name, e["shape"])) for e in es]
        w2 = sum(ni * e["weight_rms"] ** 2 for ni, e in zip(n, es))
        rows.append({"scheme": name, "layers": len(es), "weights": sum(n),
                     "rms_error": math.sqrt(sum(ni * e["rms_error"] ** 2
                                                for ni, e in zip(n, es)) / w2),
                     "rms_model": math.sqrt(sum(ni * m ** 2 for ni, m in zip(n, model)) / w2),
                     "rms_uniform": math.sqrt(sum(ni * e["rms_model"] ** 2
                                                  for ni, e in zip(n, es)) / w2),
                     "max_over_half_step": max(e["max_over_half_step"] for e in es)})
    return rows

IMPLS = ("dense", "naive", "int8")


def speed_rows(result: dict) -> list[dict]:
    """Per M: each path's median time, its bytes, its bound at the measured copy bandwidth, and
    the fraction of that bandwidth it reaches."""
    sp = result["measurements"]["speed"]
    bw = sp["copy_bandwidth"]["bytes_per_s"]
    rows = []
    for p in sp["points"]:
        row = {"m": p["m"], "bandwidth": bw}
        for name in IMPLS:
            e = p.get(name)
            row[f"{name}_bytes"] = p[f"{name}_bytes"]
            row[f"{name}_bound_s"] = p[f"{name}_bytes"] / bw
            row[f"{name}_s"] = e["bench"]["median_s"] if e else None
            row[f"{name}_of_bw"] = (p[f"{name}_bytes"] / bw / e["bench"]["median_s"]) if e else None
        row["speedup"] = (row["dense_s"] / row["int8_s"]) if row["int8_s"] else None
        row["speedup_bound"] = p["dense_bytes"] / p["int8_bytes"]
        rows.append(row)
    return rows


#: The FP8 GEMM's scalings: one step per tensor, one per row (of x) and per column (of w^T).
FP8_MODES = ("fp8_tensor", "fp8_row")


def _measured(result: dict | None, key: str) -> dict | None:
    """``result``'s measurement ``key`` if it was timed (a GPU run), else None."""
    part = ((result or {}).get("measurements") or {}).get(key)
    return part if part and part.get("timed") else None


def fp8_rows(result: dict | None) -> list[dict]:
    """Per shape of the FP8 GEMM sweep (timed results only; ``[]`` otherwise): the bf16 and
    FP8 median times and rates, the speed-ups (with the activations quantized beforehand, and
    in the call: ``_dyn``), the datasheet's bound
    (:func:`helpers.models.quantization.low_precision_speedup_bound`) and each product's error
    against the exact product beside the model
    (:func:`helpers.models.quantization.fp8_matmul_rel_rms_error`)."""
    fp = _measured(result, "fp8_gemm")
    if fp is None:
        return []
    bound = qz.low_precision_speedup_bound(GPU.peak_flop_per_s("fp8"), GPU.peak_flop_per_s("bf16"))
    rows = []
    for p in fp["points"]:
        t16 = p["bf16"]["bench"]["median_s"]
        row = {"m": p["m"], "n": p["n"], "k": p["k"], "bf16_s": t16,
               "bf16_flop_per_s": p["flop"] / t16, "speedup_bound": bound,
               "error_model": qz.fp8_matmul_rel_rms_error(),
               "bf16_error": p["bf16"]["rel_rms_vs_exact"]}
        for mode in FP8_MODES:
            e = p[mode]
            t, t_dyn = e["bench"]["median_s"], e["bench_with_act_quant"]["median_s"]
            row.update({f"{mode}_s": t, f"{mode}_flop_per_s": p["flop"] / t,
                        f"{mode}_speedup": t16 / t, f"{mode}_dyn_speedup": t16 / t_dyn,
                        f"{mode}_error": e["rel_rms_vs_exact"]})
        rows.append(row)
    return rows


def fp8_table(result: dict | None) -> str:
    """The FP8 sweep as a text table: shape, bf16 and FP8 (per-tensor) TFLOP/s, the speed-ups
    per tensor, per row and per tensor with the activations quantized in the call, the
    fraction of the datasheet's bound, and the error (one line saying so when not measured)."""
    rows = fp8_rows(result)
    if not rows:
        return "FP8 GEMM sweep: " + MISSING
    head = ("M", "N", "K", "bf16 TFLOP/s", "FP8 TFLOP/s", "speed-up", "of bound", "row-wise",
            "with quant.", "FP8 error")
    body = [(f"{r['m']}", f"{r['n']}", f"{r['k']}", fmt(r["bf16_flop_per_s"], ".0f", units.TFLOP),
             fmt(r["fp8_tensor_flop_per_s"], ".0f", units.TFLOP),
             fmt(r["fp8_tensor_speedup"], ".2f"),
             fmt(r["fp8_tensor_speedup"] / r["speedup_bound"], ".0%"),
             fmt(r["fp8_row_speedup"], ".2f"), fmt(r["fp8_tensor_dyn_speedup"], ".2f"),
             fmt(r["fp8_tensor_error"], ".2%")) for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in [head, *body])


def kv_rows(result: dict | None) -> list[dict]:
    """Per KV-cache dtype of the decode-attention measurement (timed results only): the
    fastest configuration's median time, the bytes it must read and write (the cache, the
    queries and the outputs), their time at the run's copy rate (the bound, claim
    ``kv_decode_bound``), the fraction of it reached, and the output's error against the exact
    attention over the bf16 cache."""
    kv = _measured(result, "kv_decode")
    if kv is None:
        return []
    rate = result["measurements"]["speed"]["copy_bandwidth"]["bytes_per_s"]
    rows = []
    for name, e in kv["caches"].items():
        t = e["chosen"]["bench"]["median_s"]
        n_bytes = e["cache_bytes"] + e["qo_bytes"]
        rows.append({"cache": name, "time_s": t, "n_bytes": n_bytes, "copy_bytes_per_s": rate,
                     "bound_s": n_bytes / rate, "of_bound": n_bytes / rate / t,
                     "block_n": e["chosen"]["block_n"], "num_warps": e["chosen"]["num_warps"],
                     "error": e["chosen"]["rel_rms_vs_bf16_exact"]})
    return rows


def kv_batch_rows(result: dict | None) -> list[dict]:
    """Per KV-cache dtype: the sequences whose cache the allocator gave beside the weights and
    :func:`helpers.models.quantization.kv_max_batch` at the free memory the driver reported
    (claim ``kv_batch``); ``[]`` where it was not measured (a CPU run)."""
    kb = ((result or {}).get("measurements") or {}).get("kv_batch") or {}
    return [{"cache": name, **e} for name, e in kb.get("caches", {}).items()]


def decode_step_s(result: dict | None, cfg=None) -> dict[str, float]:
    """Per KV-cache dtype, what the measurements imply for one decode step of ``cfg``
    (Llama-3-8B by default) at the measured batch and context: its bf16 weights read once at
    the run's copy rate, plus ``n_layers`` times the measured attention over one layer's cache
    (the measured shape is one layer of Llama-3-8B). The projections' other work and the
    launches are left out, so this is the memory traffic's time, not a full step's."""
    from helpers.models import transformer as tm

    cfg = cfg or tm.LLAMA3_8B
    out = {}
    for r in kv_rows(result):
        weights = tm.weight_bytes(tm.parameter_count(cfg), 2.0)
        out[r["cache"]] = weights / r["copy_bytes_per_s"] + cfg.n_layers * r["time_s"]
    return out


_FP8_KEYS = ("bound", "goal", "best_speedup", "best_shape", "goal_verdict", "n_goal",
             "n_shapes", "frac_lo", "frac_hi", "row_lo", "row_hi", "dyn_lo", "dyn_hi",
             "bf16_tflops_hi", "fp8_tflops_hi", "err_model", "err_lo", "err_hi",
             "kv_bf16_us", "kv_fp8_us", "kv_bf16_frac", "kv_fp8_frac", "kv_speedup",
             "kv_cache_ratio", "kv_error", "kv_shape",
             "batch_bf16", "batch_fp8", "batch_model_bf16", "batch_model_fp8", "free_gb",
             "total_gb", "step_bf16_ms", "step_fp8_ms", "token_bf16_us", "token_fp8_us",
             "step_ratio", "batch_decode", "kv_word", "batch_word")
#: The issue's goal for FP8 W8A8 at a prefill-sized GEMM (issue 19, item 5).
FP8_GOAL = 1.6


@page_numbers(_FP8_KEYS)
def fp8_numbers(result: dict) -> dict[str, str]:
    """The FP8 section's glued numbers, as the text the page prints, from ``result``; every
    value is :data:`~helpers.labs.core.MISSING` for parts it did not measure."""
    f, k, kb = fp8_rows(result), {r["cache"]: r for r in kv_rows(result)}, {
        r["cache"]: r for r in kv_batch_rows(result)}
    out = dict.fromkeys(_FP8_KEYS, MISSING)
    out["bound"] = fmt(qz.low_precision_speedup_bound(GPU.peak_flop_per_s("fp8"),
                                                      GPU.peak_flop_per_s("bf16")), ".3g")
    out["goal"] = fmt(FP8_GOAL, ".2g")
    out["err_model"] = fmt(qz.fp8_matmul_rel_rms_error(), ".2%")
    if f:
        best = max(f, key=lambda r: r["fp8_tensor_speedup"])
        met = [r for r in f if r["fp8_tensor_speedup"] >= FP8_GOAL]
        span = lambda key, spec: (fmt(min(r[key] for r in f), spec),
                                  fmt(max(r[key] for r in f), spec))
        out.update(best_speedup=fmt(best["fp8_tensor_speedup"], ".2f"),
                   best_shape="M = {m}, N = {n}, K = {k}".format(**best),
                   goal_verdict="meets" if met else "misses", n_goal=str(len(met)),
                   n_shapes=str(len(f)),
                   bf16_tflops_hi=fmt(max(r["bf16_flop_per_s"] for r in f), ".0f", units.TFLOP),
                   fp8_tflops_hi=fmt(max(r["fp8_tensor_flop_per_s"] for r in f), ".0f",
                                     units.TFLOP))
        frac = [r["fp8_tensor_speedup"] / r["speedup_bound"] for r in f]
        out["frac_lo"], out["frac_hi"] = fmt(min(frac), ".0%"), fmt(max(frac), ".0%")
        out["row_lo"], out["row_hi"] = span("fp8_row_speedup", ".2f")
        out["dyn_lo"], out["dyn_hi"] = span("fp8_tensor_dyn_speedup", ".2f")
        errs = [r[f"{m}_error"] for r in f for m in FP8_MODES]
        out["err_lo"], out["err_hi"] = fmt(min(errs), ".2%"), fmt(max(errs), ".2%")
    if {"bf16", "fp8_e4m3"} <= set(k):
        a, b = k["bf16"], k["fp8_e4m3"]
        kv = result["measurements"]["kv_decode"]
        step = decode_step_s(result)
        out.update(kv_bf16_us=fmt(a["time_s"], ".3g", units.us),
                   kv_fp8_us=fmt(b["time_s"], ".3g", units.us),
                   kv_bf16_frac=fmt(a["of_bound"], ".0%"), kv_fp8_frac=fmt(b["of_bound"], ".0%"),
                   kv_speedup=fmt(a["time_s"] / b["time_s"], ".2f"),
                   kv_cache_ratio=fmt(a["n_bytes"] / b["n_bytes"], ".2f"),
                   kv_error=fmt(b["error"], ".1%"),
                   kv_shape="{b} sequences of {s} tokens, {h} KV heads of {d}".format(**kv),
                   step_bf16_ms=fmt(step["bf16"], ".3g", units.ms),
                   step_fp8_ms=fmt(step["fp8_e4m3"], ".3g", units.ms),
                   token_bf16_us=fmt(step["bf16"] / kv["b"], ".3g", units.us),
                   token_fp8_us=fmt(step["fp8_e4m3"] / kv["b"], ".3g", units.us),
                   step_ratio=fmt(step["bf16"] / step["fp8_e4m3"], ".2f"),
                   kv_word="less" if b["time_s"] < a["time_s"] else "more",
                   batch_decode=str(kv["b"]))
    if {"bf16", "fp8_e4m3"} <= set(kb):
        a, b = kb["bf16"], kb["fp8_e4m3"]
        out.update(batch_bf16=str(a["sequences_allocated"]),
                   batch_fp8=str(b["sequences_allocated"]),
                   batch_model_bf16=str(a["model_sequences"]),
                   batch_model_fp8=str(b["model_sequences"]),
                   free_gb=fmt(a["free_bytes"], ".4g", units.GB),
                   batch_word=("exactly as many as" if all(
                       r["sequences_allocated"] == r["model_sequences"] for r in (a, b))
                       else "within a few sequences of"),
                   total_gb=fmt(a["total_bytes"], ".4g", units.GB))
    return out


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list[Row]:
    """Model | H200 | yours rows: memory per scheme (MB, claim ``state_bytes``), the RMS weight
    error per scheme (claim ``rms_error``) and its largest error in half-steps (claim
    ``max_error``), and the speed sweep's times (us, claim ``matmul_copy_bound``).

    The bound on a time is the bytes moved over the copy bandwidth measured in the same run
    (the H200 run's for the H200 column; the H200 datasheet's peak is quoted on the page)."""
    rows: list[Row] = []
    mem_ref = ref["measurements"]["memory"]["schemes"] if ref else {}
    mem_mine = mine["measurements"]["memory"]["schemes"] if mine else {}
    for name in SCHEMES:
        a, b = mem_ref.get(name, {}), mem_mine.get(name, {})
        if not a and not b:
            continue
        rows.append(Row(f"state of book-lm, {name}", "MB", 1e6,
                        model=(a or b).get("model_bytes"), h200=a.get("measured_bytes"),
                        yours=b.get("measured_bytes"), claim=LAB.claim("state_bytes")))
    e_ref = {r["scheme"]: r for r in error_rows(ref)} if ref else {}
    e_mine = {r["scheme"]: r for r in error_rows(mine)} if mine else {}
    names = list(e_ref) + [n for n in e_mine if n not in e_ref]
    for name in names:
        a, b = e_ref.get(name, {}), e_mine.get(name, {})
        rows.append(Row(f"RMS weight error / RMS weight, {name}", "%", 0.01,
                        model=(a or b).get("rms_model"), h200=a.get("rms_error"),
                        yours=b.get("rms_error"), claim=LAB.claim("rms_error")))
    for name in names:
        a, b = e_ref.get(name, {}), e_mine.get(name, {})
        rows.append(Row(f"largest weight error, {name}", "half-steps", 1.0, model=1.0,
                        h200=a.get("max_over_half_step"), yours=b.get("max_over_half_step"),
                        claim=LAB.claim("max_error")))
    r_ref = {r["m"]: r for r in speed_rows(ref)} if ref else {}
    r_mine = {r["m"]: r for r in speed_rows(mine)} if mine else {}
    for m in sorted(set(r_ref) | set(r_mine)):
        a, b = r_ref.get(m, {}), r_mine.get(m, {})
        for name in IMPLS:
            if a.get(f"{name}_s") is None and b.get(f"{name}_s") is None:
                continue
            rows.append(Row(f"{name} M={m}", "us", 1e-6, model=a.get(f"{name}_bound_s"),
                            h200=a.get(f"{name}_s"), yours=b.get(f"{name}_s"),
                            claim=LAB.claim("matmul_copy_bound")))
    rows += _fp8_comparison_rows(ref, mine)
    return rows


def _claim(key: str):
    """The claim ``key``: the lab's declared one, or, while the H200 reference lacks the FP8
    measurements, the FP8 section's (:data:`helpers.labs.quantization.FP8_CLAIMS`)."""
    return next((c for c in LAB.claims if c.key == key), None) or FP8_CLAIMS[key]


def _pair_by(rows_of, key, ref, mine):
    """``(key, reference row or {}, reader's row or {})`` over both results, reference order
    first."""
    a = {key(r): r for r in rows_of(ref)}
    b = {key(r): r for r in rows_of(mine)}
    return [(k, a.get(k, {}), b.get(k, {})) for k in list(a) + [k for k in b if k not in a]]


def _fp8_comparison_rows(ref: dict | None, mine: dict | None) -> list[Row]:
    """The FP8 rows of :func:`comparison_rows`: speed-up (claim ``fp8_speedup``) and error
    (``fp8_error``) per shape and scaling, decode attention time per cache (``kv_decode_bound``)
    and the batch that fits per cache (``kv_batch``)."""
    rows = []
    for shape, a, b in _pair_by(fp8_rows, lambda r: (r["m"], r["n"], r["k"]), ref, mine):
        label = "M={} N={} K={}".format(*shape)
        for mode, word in (("fp8_tensor", "per-tensor"), ("fp8_row", "row-wise")):
            rows.append(Row(f"FP8 {word} speed-up over bf16, {label}", "x", 1.0,
                            model=(a or b)["speedup_bound"], h200=a.get(f"{mode}_speedup"),
                            yours=b.get(f"{mode}_speedup"), claim=_claim("fp8_speedup")))
            rows.append(Row(f"FP8 {word} error / RMS of product, {label}", "%", 0.01,
                            model=(a or b)["error_model"], h200=a.get(f"{mode}_error"),
                            yours=b.get(f"{mode}_error"), claim=_claim("fp8_error")))
    for name, a, b in _pair_by(kv_rows, lambda r: r["cache"], ref, mine):
        rows.append(Row(f"decode attention, {name} KV cache", "us", 1e-6, model=a.get("bound_s"),
                        h200=a.get("time_s"), yours=b.get("time_s"),
                        claim=_claim("kv_decode_bound")))
    for name, a, b in _pair_by(kv_batch_rows, lambda r: r["cache"], ref, mine):
        rows.append(Row(f"sequences that fit, {name} KV cache", "", 1.0, digits=4,
                        model=a.get("model_sequences"), h200=a.get("sequences_allocated"),
                        yours=b.get("sequences_allocated"), claim=_claim("kv_batch")))
    return rows


def comparison_table(ref: dict | None, mine: dict | None) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine) or [Row("no measurement yet", "us", 1e-6)]
    return Table("Weight-only and FP8 quantization: memory, error, matmul and decode time", rows,
                 yours_label="yours" if mine is not None else None)


def claim_numbers(ref: dict) -> dict:
    """What the page says of its table's claims on ``ref``: per prediction the largest
    ``|error|`` (``state_bytes``, ``rms_error``), per bound the smallest and largest fraction
    reached (``max_error``; ``matmul_copy_bound`` per path as ``dense``, ``int8``, ``naive``),
    and the plain uniform model's relative error at int4 in groups of 32 (``uniform_g32``)."""
    from helpers.labs.report import relative_error

    rows = comparison_rows(ref)
    out = {key: max(abs(relative_error(r.model, r.h200)) for r in rows if r.claim.key == key)
           for key in ("state_bytes", "rms_error")}
    out["max_error"] = [r.claim.fraction_of_bound(r.model, r.h200) for r in rows
                        if r.claim.key == "max_error"]
    for path in IMPLS:
        out[path] = [r.claim.fraction_of_bound(r.model, r.h200) for r in rows
                     if r.claim.key == "matmul_copy_bound" and r.quantity.startswith(path + " ")]
    for key in ["max_error", *IMPLS]:
        out[key] = (min(out[key]), max(out[key])) if out[key] else None
    g32 = {r["scheme"]: r for r in error_rows(ref)}.get("int4-g32")
    out["uniform_g32"] = relative_error(g32["rms_uniform"], g32["rms_error"]) if g32 else None
    return out


def describe(result: dict) -> str:
    """A few lines summarizing a result."""
    m = result["measurements"]
    checks = m["kernel_checks"]
    worst = max(c["rel_error"] for c in checks["cases"])
    lines = [f"int8 kernel checked on {len(checks['cases'])} tiny cases "
             f"({'interpreter' if checks['interpreted'] else 'GPU'}): worst relative error "
             f"{worst:.2g}"]
    q = m["quality"]
    lines.append(f"bits per byte, unquantized: {q['baseline_bpb']:.4f} "
                 f"({q['val_bytes_scored']} validation bytes)")
    for name, s in q["schemes"].items():
        lines.append(f"  {name:<13} {s['bpb']:.4f} ({100 * s['bpb_increase']:+.2f} %), greedy "
                     f"tokens agreeing {100 * s['token_agreement']:.0f} %")
    sp = m["speed"]
    lines.append(f"copy bandwidth {sp['copy_bandwidth']['bytes_per_s'] / 1e9:.3g} GB/s; "
                 f"matmul {sp['n']} x {sp['k']} in {sp['dtype']}")
    for r in speed_rows(result):
        parts = [f"{name} {r[f'{name}_s'] * 1e6:.3g} us ({100 * r[f'{name}_of_bw']:.0f} % of bw)"
                 for name in IMPLS if r[f"{name}_s"] is not None]
        lines.append(f"  M={r['m']:>2}: " + ", ".join(parts))
    fp = m.get("fp8_gemm", {})
    if fp.get("skipped"):
        lines.append(f"FP8 GEMM not run: {fp['skipped']}")
    for p in fp.get("points", []):
        errs = ", ".join(f"{mode} {100 * p[mode]['rel_rms_vs_exact']:.2f} %" for mode in FP8_MODES)
        lines.append(f"FP8 GEMM M={p['m']} N={p['n']} K={p['k']} checked; error against the "
                     f"exact product: {errs} (bf16 {100 * p['bf16']['rel_rms_vs_exact']:.2f} %)")
    if fp.get("timed"):
        lines += fp8_table(result).splitlines()
    kv = m.get("kv_decode")
    if kv:
        errs = ", ".join(f"{n} {100 * e['chosen']['rel_rms_vs_bf16_exact']:.2f} %"
                         for n, e in kv["caches"].items())
        lines.append(f"decode attention ({kv['b']} x {kv['h']} heads x {kv['s']} tokens x "
                     f"{kv['d']}) checked; error against the bf16 cache's exact result: {errs}")
    for r in kv_rows(result):
        lines.append(f"  {r['cache']}: {r['time_s'] * 1e6:.3g} us, {100 * r['of_bound']:.0f} % "
                     "of the copy-rate bound")
    for r in kv_batch_rows(result):
        lines.append(f"KV batch that fits, {r['cache']}: {r['sequences_allocated']} allocated, "
                     f"{r['model_sequences']} predicted")
    return "\n".join(lines)


