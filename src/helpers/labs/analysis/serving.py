"""What the serving lab's page computes from a result: the engine-vs-simulator metrics, the
KV-memory series, the comparison table's rows and the numbers its prose glues.

Reads a result of :mod:`helpers.labs.serving` (the shipped H200 reference or the reader's run);
the runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.core import page_numbers
from helpers.labs.serving import LAB, SCHEDULERS, TOLERANCE

__all__ = ["QUANTITIES", "metrics_rows", "memory_series", "comparison", "comparison_rows",
           "describe", "prose_numbers", "claim_key", "full_batch_numbers"]

#: The quantities compared, per scheduler: (metric key, percentile or None, label, unit, scale).
QUANTITIES = (("output_tokens_per_s", None, "throughput", "tok/s", 1.0),
              ("ttft_s", "p50", "TTFT p50", "ms", 1e-3),
              ("ttft_s", "p90", "TTFT p90", "ms", 1e-3),
              ("tpot_s", "p50", "TPOT p50", "ms", 1e-3),
              ("tpot_s", "p90", "TPOT p90", "ms", 1e-3))


def claim_key(percentile: str | None) -> str:
    """The lab's claim a quantity falls under: throughput (no percentile), the medians, or the
    90th percentiles."""
    return {None: "throughput", "p50": "median_latency", "p90": "tail_latency"}[percentile]


def _get(m: dict, key: str, q: str | None):
    v = m.get(key)
    if q is None:
        return v
    return None if v is None else v.get(q)


def metrics_rows(result: dict) -> list[dict]:
    """Per scheduler and quantity: the engine's value, the simulator's and the error."""
    out = []
    for sched in SCHEDULERS:
        r = result["measurements"][sched]
        for key, q, label, unit, scale in QUANTITIES:
            e, s = _get(r["engine"], key, q), _get(r["simulator"], key, q)
            out.append({"scheduler": sched, "quantity": label, "unit": unit, "scale": scale,
                        "claim": claim_key(q), "engine": e, "simulator": s,
                        "error": (s / e - 1) if (e and s is not None) else None})
    return out


def memory_series(result: dict, scheduler: str = "continuous") -> list[dict]:
    """The engine's KV slots held (whole blocks) and tokens stored after each step, in the
    layout of :func:`helpers.figures.scheduling_kv.memory_figure`."""
    bs = result["settings"]["block_size"]
    return [{"t_s": st["t_start_s"] + st["duration_s"], "reserved_tokens": st["blocks_used"] * bs,
             "used_tokens": st["tokens_stored"]}
            for st in result["measurements"][scheduler]["steps"]]


def comparison(reference: dict | None, mine: dict | None = None) -> list[dict]:
    """Rows for the lab table: the simulator's prediction (fitted on the H200's own steps),
    the H200's measurement, yours."""
    out = []
    ref_rows = metrics_rows(reference) if reference else None
    my_rows = metrics_rows(mine) if mine else None
    base = ref_rows or my_rows or [
        {"scheduler": sc, "quantity": lab, "unit": u, "scale": k, "claim": claim_key(q),
         "engine": None, "simulator": None}
        for sc in SCHEDULERS for _, q, lab, u, k in QUANTITIES]
    for i, row in enumerate(base):
        out.append({"quantity": f"{row['scheduler']} {row['quantity']}", "unit": row["unit"],
                    "scale": row["scale"], "claim": row["claim"],
                    "model": ref_rows[i]["simulator"] if ref_rows else None,
                    "h200": ref_rows[i]["engine"] if ref_rows else None,
                    "yours": my_rows[i]["engine"] if my_rows else None})
    return out


def comparison_rows(reference: dict | None, mine: dict | None = None) -> list:
    """:func:`comparison` as ``report.Row`` (model = the simulator with the step model fitted
    to the H200's own step log), each naming the lab's claim for it."""
    from helpers.labs.report import Row

    return [Row(r["quantity"], r["unit"], r["scale"], model=r["model"], h200=r["h200"],
                yours=r["yours"], claim=LAB.claim(r["claim"]))
            for r in comparison(reference, mine)]


@page_numbers(["full_steps", "steps", "full_ratio", "full_ratio_word", "rest_ratio",
               "slot_waits", "n_requests", "host_pct"])
def full_batch_numbers(result: dict | None, scheduler: str = "continuous") -> dict:
    """The step log's evidence for the tail-latency miss: how many of ``scheduler``'s steps ran
    with all ``max_batch`` slots busy, their total time against the fitted step model's (and
    the other steps'), how many requests waited more than two fitted full-batch steps for a
    slot, and the host time between steps as a share of the busy time."""
    m = result["measurements"]
    r, f = m[scheduler], m["fit"]
    full_b = result["settings"]["max_batch"]
    steps = r["steps"]
    dur = np.array([st["duration_s"] for st in steps])
    fit = np.array([f["fixed_s"] + f["per_decode_s"] * st["n_decode"]
                    + f["per_prefill_token_s"] * st["n_prefill_tokens"] for st in steps])
    full = np.array([st["n_seqs"] >= full_b for st in steps])
    ratio = float(dur[full].sum() / fit[full].sum()) if full.any() else float("nan")
    rest = float(dur[~full].sum() / fit[~full].sum()) if (~full).any() else float("nan")
    limit = 2 * (f["fixed_s"] + f["per_decode_s"] * full_b)
    waits = sum(1 for q in r["requests"] if q["admitted_s"] - q["arrival_s"] > limit)
    return {"full_steps": f"{int(full.sum())}", "steps": f"{len(steps)}",
            "full_ratio": f"{ratio:.2f}",
            "full_ratio_word": "longer" if ratio > 1 else "shorter",
            "rest_ratio": f"{rest:.2f}", "slot_waits": f"{waits}",
            "n_requests": f"{len(r['requests'])}",
            "host_pct": f"{100 * (r['engine_wall_s'] - r['engine_busy_s']) / r['engine_busy_s']:.0f}"}


def describe(result: dict) -> str:
    """A few lines: the fitted step model, each scheduler's throughput and TTFT, memory."""
    f = result["measurements"]["fit"]
    lines = [f"step model: {f['fixed_s'] * 1e3:.3g} ms + {f['per_decode_s'] * 1e6:.3g} us per "
             f"decoding sequence + {f['per_prefill_token_s'] * 1e6:.3g} us per prefill token"]
    for sched in SCHEDULERS:
        r = result["measurements"][sched]
        e, s, m = r["engine"], r["simulator"], r["memory"]
        lines.append(f"{sched}: {e['output_tokens_per_s']:.0f} tok/s measured, "
                     f"{s['output_tokens_per_s']:.0f} simulated; TTFT p50 "
                     f"{e['ttft_s']['p50'] * 1e3:.1f} ms measured, {s['ttft_s']['p50'] * 1e3:.1f} "
                     f"simulated; peak KV {m['paged_reserved_tokens']} slots paged vs "
                     f"{m['contiguous_reserved_tokens']} contiguous")
    return "\n".join(lines)


@page_numbers(["thr_static", "thr_cont", "thr_ratio", "ttft_static_ms", "ttft_cont_ms",
               "tpot_static_ms", "tpot_cont_ms", "err_thr_static", "err_thr_cont",
               "err_ttft_cont", "err_tpot_cont", "err_ttft_static", "err_tpot_static",
               "fit_c0_ms", "fit_cd_us", "fit_cp_us", "fit_err", "peak_paged", "peak_stored",
               "peak_contig", "peak_contig_model", "shared", "n_requests", "rate", "within",
               "preempt", "gap_ms"])
def prose_numbers(result: dict | None) -> dict:
    """Strings for the page's prose (:data:`~helpers.labs.core.MISSING` everywhere without a
    result)."""
    m = result["measurements"]
    st, co, f = m["static"], m["continuous"], m["fit"]

    def pct(e, s_):
        return f"{(s_ / e - 1) * 100:+.0f} %"

    rows = metrics_rows(result)
    core_rows = [r for r in rows if r["quantity"] in ("throughput", "TTFT p50", "TPOT p50")]
    within = sum(1 for r in core_rows if r["error"] is not None and abs(r["error"]) <= TOLERANCE)
    gaps = [co["engine_wall_s"] - co["engine_busy_s"], st["engine_wall_s"] - st["engine_busy_s"]]
    return {
        "thr_static": f"{st['engine']['output_tokens_per_s']:.0f}",
        "thr_cont": f"{co['engine']['output_tokens_per_s']:.0f}",
        "thr_ratio": f"{co['engine']['output_tokens_per_s'] / st['engine']['output_tokens_per_s']:.2f}",
        "ttft_static_ms": f"{st['engine']['ttft_s']['p50'] * 1e3:.1f}",
        "ttft_cont_ms": f"{co['engine']['ttft_s']['p50'] * 1e3:.1f}",
        "tpot_static_ms": f"{st['engine']['tpot_s']['p50'] * 1e3:.2f}",
        "tpot_cont_ms": f"{co['engine']['tpot_s']['p50'] * 1e3:.2f}",
        "err_thr_static": pct(st["engine"]["output_tokens_per_s"], st["simulator"]["output_tokens_per_s"]),
        "err_thr_cont": pct(co["engine"]["output_tokens_per_s"], co["simulator"]["output_tokens_per_s"]),
        "err_ttft_static": pct(st["engine"]["ttft_s"]["p50"], st["simulator"]["ttft_s"]["p50"]),
        "err_ttft_cont": pct(co["engine"]["ttft_s"]["p50"], co["simulator"]["ttft_s"]["p50"]),
        "err_tpot_static": pct(st["engine"]["tpot_s"]["p50"], st["simulator"]["tpot_s"]["p50"]),
        "err_tpot_cont": pct(co["engine"]["tpot_s"]["p50"], co["simulator"]["tpot_s"]["p50"]),
        "fit_c0_ms": f"{f['fixed_s'] * 1e3:.2f}", "fit_cd_us": f"{f['per_decode_s'] * 1e6:.0f}",
        "fit_cp_us": f"{f['per_prefill_token_s'] * 1e6:.1f}",
        "fit_err": f"{max(st['step_fit_median_abs_error'], co['step_fit_median_abs_error']) * 100:.0f} %",
        "peak_paged": f"{co['memory']['paged_reserved_tokens']}",
        "peak_stored": f"{co['memory']['tokens_stored_at_peak']}",
        "peak_contig": f"{co['memory']['contiguous_reserved_tokens']}",
        "peak_contig_model": f"{co['memory']['contiguous_reserved_tokens_model_max']}",
        "shared": f"{co['shared_prefix_tokens']}",
        "n_requests": f"{len(m['trace'])}",
        "rate": f"{m['calibration']['rate_per_s']:.1f}",
        "within": f"{within} of {len(core_rows)}",
        "preempt": f"{co['preemptions']}",
        "gap_ms": f"{max(gaps) * 1e3:.0f}",
    }


