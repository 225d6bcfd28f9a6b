"""What the attention lab's page computes from a result: its rows, tables and prose numbers.

Reads a result of :mod:`helpers.labs.attention` (the shipped H200 reference or the reader's own
run): :func:`point_rows` (per point, each implementation's time and the models'),
:func:`comparison_rows` and :func:`comparison_table` (model, H200 and the reader's times, each
row naming one of the lab's claims), :func:`fused_vs_sdpa`, :func:`describe`, and, for the
fusion chapter, :func:`counter_rows` of the hardware-counter record.
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.attention import GPU, LAB, PROGRAMS_PER_SM
from helpers.labs.report import Row, Table
from helpers.models import attention as model
from helpers.models import roofline

__all__ = ["IMPLS", "point_rows", "fused_vs_sdpa", "point_at", "sdpa_kernel_name",
           "comparison_rows", "comparison_table", "describe", "counter_rows"]

IMPLS = ("naive", "fused", "sdpa")


def point_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per point: each implementation's time, FLOP/s (useful FLOP) and the models' times.

    The bounds are :func:`helpers.models.roofline.kernel_time_lower_bound_s` with ``gpu``'s
    bf16 dense peak and HBM bandwidth, for the naive path's full FLOP and bytes and for the
    fused kernel's FLOP and one-level bytes (:func:`helpers.models.attention.flash2_attention_hbm_bytes`);
    ``fused_pred_s`` is the fused kernel's two-level prediction
    (:func:`helpers.models.attention.flash2_attention_time_s`: ``gpu``'s peak, HBM bandwidth, L2
    size and bandwidth, one program per SM, the point's query block).
    """
    peak = gpu.peak_flop_per_s("bf16")
    bw = gpu.hbm_bytes_per_s
    rows = []
    for p in result["measurements"]["sweep"]["points"]:
        row = {k: p[k] for k in ("head_dim", "causal", "seq_len", "batch", "flop")}
        row["naive_bound_s"] = roofline.kernel_time_lower_bound_s(p["naive_flop"],
                                                                  p["naive_bytes"], peak, bw)
        row["fused_bound_s"] = roofline.kernel_time_lower_bound_s(p["flop"], p["fused_bytes"],
                                                                  peak, bw)
        row["fused_pred_s"] = model.flash2_attention_time_s(
            p["seq_len"], p["head_dim"], p["bytes_per_element"],
            block_rows=p["fused_config"]["block_m"], l2_capacity_bytes=gpu.l2_bytes,
            concurrent_programs=gpu.sm_count * PROGRAMS_PER_SM, compute_flop_per_s=peak,
            dram_bytes_per_s=bw, l2_bytes_per_s=gpu.l2_bytes_per_s, n_heads=p["n_heads"],
            batch=p["batch"], causal=p["causal"])
        row["naive_bytes"], row["fused_bytes"] = p["naive_bytes"], p["fused_bytes"]
        for name in IMPLS:
            e = p.get(name)
            row[f"{name}_s"] = e["bench"]["median_s"] if e else None
            row[f"{name}_flop_per_s"] = p["flop"] / e["bench"]["median_s"] if e else None
            row[f"{name}_error"] = e["max_abs_error"] if e else None
        rows.append(row)
    return rows


def fused_vs_sdpa(result: dict | None) -> dict:
    """Fused kernel's time as a fraction of SDPA's speed (sdpa_s / fused_s) per case, at the
    longest sequence; empty when the result has no fused timings (CPU tier) or is None."""
    if result is None:
        return {}
    out = {}
    rows = [r for r in point_rows(result) if r["fused_s"] and r["sdpa_s"]]
    for r in rows:
        key = (r["head_dim"], r["causal"])
        if key not in out or r["seq_len"] > out[key]["seq_len"]:
            out[key] = {"seq_len": r["seq_len"], "fraction": r["sdpa_s"] / r["fused_s"]}
    return out


def point_at(rows: list[dict], seq_len: int, head_dim: int, causal: bool) -> dict | None:
    """The row of :func:`point_rows` at one (sequence length, head dimension, mask), or None."""
    return next((r for r in rows if (r["seq_len"], r["head_dim"], r["causal"])
                 == (seq_len, head_dim, causal)), None)


def sdpa_kernel_name(result: dict | None, head_dim: int, causal: bool) -> str | None:
    """The attention kernel the profiler saw in SDPA's call (the first name that mentions
    attention, flash or fmha; else the first name), or None when not recorded."""
    if result is None:
        return None
    key = f"d{head_dim}_{'causal' if causal else 'full'}"
    names = result["measurements"]["sweep"].get("sdpa_kernels", {}).get(key) or []
    hits = [n for n in names if any(w in n.lower() for w in ("attention", "flash", "fmha", "sdpa"))]
    return (hits or names or [None])[0]


def comparison_rows(ref: dict | None, mine: dict | None = None, head_dim: int = 64,
                    causal: bool = False) -> list[Row]:
    """Model | H200 | yours rows: times of the three implementations per sequence length.

    The model column is the naive path's roofline bound (claim ``naive_time``) and the fused
    kernel's two-level prediction ``fused_pred_s`` (claim ``fused_time``); SDPA has no model
    of its own.
    """
    def index(result):
        return {} if result is None else {
            (r["seq_len"], r["head_dim"], r["causal"]): r for r in point_rows(result)}

    r_ref, r_mine = index(ref), index(mine)
    keys = sorted({k for k in r_ref} | {k for k in r_mine}) or []
    rows = []
    for n, d, c in keys:
        if d != head_dim or c != causal:
            continue
        a, b = r_ref.get((n, d, c), {}), r_mine.get((n, d, c), {})
        for name in IMPLS:
            model_s = {"naive": (a or b).get("naive_bound_s"),
                       "fused": (a or b).get("fused_pred_s")}.get(name)
            if a.get(f"{name}_s") is None and b.get(f"{name}_s") is None:
                continue
            claim = {"naive": "naive_time", "fused": "fused_time"}.get(name)
            rows.append(Row(f"{name} N={n}", "ms", 1e-3, model=model_s, h200=a.get(f"{name}_s"),
                            yours=b.get(f"{name}_s"), claim=LAB.claim(claim) if claim else None))
    return rows


def comparison_table(ref: dict | None, mine: dict | None, head_dim: int = 64,
                     causal: bool = False) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine, head_dim, causal) or [Row("no measurement yet", "ms", 1e-3)]
    title = f"Attention forward, d={head_dim}, {'causal' if causal else 'no mask'}"
    return Table(title, rows, yours_label="yours" if mine is not None else None)


def describe(result: dict) -> str:
    """A few lines summarizing a result: rates of each implementation per point."""
    lines = []
    checks = result["measurements"]["kernel_checks"]
    worst = max(c["max_abs_error"] for c in checks["cases"])
    lines.append(f"fused kernel checked on {len(checks['cases'])} tiny cases "
                 f"({'interpreter' if checks['interpreted'] else 'GPU'}): worst error {worst:.2g}")
    for r in point_rows(result):
        parts = [f"{name} {r[f'{name}_flop_per_s'] / 1e12:.3g}" for name in IMPLS
                 if r[f"{name}_flop_per_s"] is not None]
        lines.append(f"d={r['head_dim']} {'causal' if r['causal'] else 'full  '} "
                     f"N={r['seq_len']:>5}: TFLOP/s " + ", ".join(parts))
    return "\n".join(lines)


def counter_rows(result: dict | None) -> list[dict] | None:
    """Per counted case: model and counters side by side (None when ``result`` is None).

    Each row has the case's keys, ``model_dram_bytes``, ``dram_bytes`` (read + write, None if
    failed), ``model_l2_bytes``, ``l2_bytes``, ``one_level_bytes`` and ``kernel_time_s``.
    """
    if result is None:
        return None
    keys = ("impl", "head_dim", "seq_len", "causal", "batch", "n_heads", "model_dram_bytes",
            "dram_bytes", "dram_read_bytes", "dram_write_bytes", "model_l2_bytes", "l2_bytes",
            "one_level_bytes", "kernel_time_s", "flop", "error")
    return [{k: e.get(k) for k in keys} for e in result["measurements"]["cases"]]
