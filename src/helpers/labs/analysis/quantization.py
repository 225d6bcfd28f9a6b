"""What the quantization lab's page computes from a result (:mod:`helpers.labs.quantization`).

Per scheme, the weights' rounding error beside the absmax model (:func:`error_rows`); per M of
the speed sweep, each path's time beside its bytes at the copy bandwidth measured in the same
run (:func:`speed_rows`); the page's model-vs-H200 rows and table (:func:`comparison_rows`,
:func:`comparison_table`) and a summary of a result (:func:`describe`).

The rows name the lab's claims (:data:`helpers.labs.quantization.LAB`): the state's bytes
(``state_bytes``) and the RMS weight error (``rms_error``) are predictions; the largest error
(``max_error``, half a step) and the matmul times at the copy rate (``matmul_copy_bound``) are
bounds.
"""

from __future__ import annotations

import math

from helpers.labs.quantization import LAB, SCHEMES
from helpers.labs.report import Row, Table
from helpers.models import quantization as qz

__all__ = ["IMPLS", "block_size", "error_rows", "speed_rows", "comparison_rows",
           "comparison_table", "claim_numbers", "describe"]


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
    return rows


def comparison_table(ref: dict | None, mine: dict | None) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine) or [Row("no measurement yet", "us", 1e-6)]
    return Table("Weight-only quantization: memory, weight error and decode matmul time", rows,
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
    return "\n".join(lines)


