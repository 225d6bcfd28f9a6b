"""What the serving lab's page computes from a result: the engine-vs-simulator metrics, the
KV-memory series, the comparison table's rows and the numbers its prose glues.

Reads a result of :mod:`helpers.labs.serving` (the shipped H200 reference or the reader's run);
the runner measures, this module only reads.
"""

from __future__ import annotations

import numpy as np

from helpers.labs.core import page_numbers
from helpers.labs.serving import LAB, SCHEDULERS, TOLERANCE
from helpers.models import inference

__all__ = ["QUANTITIES", "SENSITIVITY", "metrics_rows", "memory_series", "comparison",
           "comparison_rows", "describe", "prose_numbers", "claim_key", "before_after",
           "tail_numbers"]

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


def _step_model(d: dict):
    from helpers.sim.serving import StepModel

    return StepModel(**d)


def _pct(x: float) -> str:
    return f"{x * 100:+.0f} %"


def before_after(result: dict) -> list[dict]:
    """Per scheduler and quantity: the simulator's error with the earlier three-term model
    fitted to the measured runs' own steps (``before``) and with the page's model
    (``after``), as fractions."""
    out = []
    for sched in SCHEDULERS:
        r = result["measurements"][sched]
        for key, q, label, _, _ in QUANTITIES:
            e = _get(r["engine"], key, q)
            old, new = _get(r["simulator_own_linear_fit"], key, q), _get(r["simulator"], key, q)
            out.append({"scheduler": sched, "quantity": label, "before": old / e - 1,
                        "after": new / e - 1})
    return out


def _p90_ttft(result: dict, step_model, scheduler: str) -> float:
    from helpers.labs.serving import _sim_kw
    from helpers.sim.serving import simulate
    from helpers.sim.workload import Request

    trace = [Request(**d) for d in result["measurements"]["trace"]]
    out = simulate(trace, scheduler, step_model, **_sim_kw(result["settings"]))
    return inference.trace_metrics(out["requests"])["ttft_s"]["p90"]


#: The step-time change the tail's sensitivity is shown for (a few per cent: the drift of a
#: host's speed between two runs).
SENSITIVITY = 0.03


@page_numbers(["cc_ns", "g0_us", "gs_us", "gs_static_us", "kv_bytes", "kv_gbps", "kv_hbm_pct",
               "host_pct", "cap_cal", "cap_lin", "cap_lin_pct", "cap_lin_word", "load_lin",
               "step_err_cont", "step_err_static", "full_steps", "steps", "full_old",
               "full_old_word", "full_new", "tail_n", "tail_slot", "slot_wait_ms",
               "sens_minus", "sens_plus", "sens_pct", "tail_within", "tail_within_before",
               "ttft90_before", "ttft90_after", "tpot90_before", "tpot90_after"])
def tail_numbers(result: dict | None, scheduler: str = "continuous") -> dict:
    """The simulator's step model and the evidence for the tail: its context and host-gap
    coefficients; the context term as an equivalent KV read bandwidth against the H200's HBM;
    the host gap's share of the busy time; the capacity the model reaches on a saturated batch
    against the linear estimate (and the load a trace at :data:`~helpers.labs.serving.LOAD` of
    the linear estimate puts on the engine); its median per-step error on the measured steps;
    the full-batch steps against the earlier and the new model; which requests make the p90
    TTFT; and how far that p90 moves in the simulator for a step model :data:`SENSITIVITY`
    cheaper or dearer."""
    from dataclasses import replace

    from helpers.models import transformer as tf
    from helpers.nn.tinylm import BOOK_LM
    from helpers.specs import H200_SXM

    m, st_ = result["measurements"], result["settings"]
    f, fs = m["step_models"]["continuous"], m["step_models"]["static"]
    r = m[scheduler]
    steps = r["steps"]
    kv_bytes = tf.kv_cache_bytes_per_token(BOOK_LM, 4.0)  # float32 KV cache
    kv_bw = kv_bytes / f["per_context_token_s"] if f["per_context_token_s"] > 0 else float("inf")
    dur = np.array([st["duration_s"] for st in steps])
    gaps = np.array([st["host_gap_s"] for st in steps])
    new, old = _step_model(f), _step_model(m["own_steps_linear_fit"])
    full = np.array([st["n_seqs"] >= st_["max_batch"] for st in steps])
    t_new = np.array([new(st["n_decode"], st["n_prefill_tokens"], st["context_tokens"])
                      for st in steps])
    t_old = np.array([old(st["n_decode"], st["n_prefill_tokens"]) for st in steps])
    ratio_old = float(dur[full].sum() / t_old[full].sum()) if full.any() else float("nan")
    ratio_new = float(dur[full].sum() / t_new[full].sum()) if full.any() else float("nan")
    # the requests at or above the engine's p90 TTFT, and how many waited for a slot for
    # most of it (admission later than half their TTFT)
    p90 = r["engine"]["ttft_s"]["p90"]
    tail = [q for q in r["requests"] if q["token_times_s"][0] - q["arrival_s"] >= p90]
    slot = [q for q in tail
            if q["admitted_s"] - q["arrival_s"] > 0.5 * (q["token_times_s"][0] - q["arrival_s"])]
    wait = np.median([q["admitted_s"] - q["arrival_s"] for q in tail]) if tail else 0.0
    base = r["simulator"]["ttft_s"]["p90"]
    sens = [_p90_ttft(result, replace(new, **{k: v * (1 + d) for k, v in f.items()}), scheduler)
            / base - 1 for d in (-SENSITIVITY, SENSITIVITY)]
    cap, lin = m["saturated_tokens_per_s"], m["calibration"]["linear_capacity_tokens_per_s"]
    return {"cc_ns": f"{f['per_context_token_s'] * 1e9:.0f}", "g0_us": f"{f['gap_s'] * 1e6:.0f}",
            "gs_us": f"{f['gap_per_seq_s'] * 1e6:.1f}",
            "gs_static_us": f"{(fs['gap_s'] + fs['gap_per_seq_s'] * st_['max_batch']) * 1e6:.0f}",
            "kv_bytes": f"{kv_bytes:.0f}", "kv_gbps": f"{kv_bw / 1e9:.2g}",
            "kv_hbm_pct": f"{100 * kv_bw / H200_SXM.hbm_bytes_per_s:.2g}",
            "host_pct": f"{100 * gaps.sum() / dur.sum():.0f}",
            "cap_cal": f"{cap:.0f}", "cap_lin": f"{lin:.0f}",
            "cap_lin_pct": f"{abs(lin / cap - 1) * 100:.0f}",
            "cap_lin_word": "overstates" if lin > cap else "understates",
            "load_lin": f"{st_['load'] * lin / cap:.2f}",
            "step_err_cont": f"{m['continuous']['step_fit_median_abs_error'] * 100:.0f} %",
            "step_err_static": f"{m['static']['step_fit_median_abs_error'] * 100:.0f} %",
            "full_steps": f"{int(full.sum())}", "steps": f"{len(steps)}",
            "full_old": f"{ratio_old:.2f}",
            "full_old_word": "longer" if ratio_old > 1 else "shorter",
            "full_new": f"{ratio_new:.2f}", "tail_n": f"{len(tail)}", "tail_slot": f"{len(slot)}",
            "slot_wait_ms": f"{wait * 1e3:.1f}",
            "sens_minus": _pct(sens[0]), "sens_plus": _pct(sens[1]),
            "sens_pct": f"{SENSITIVITY * 100:.0f}",
            **_tail_errors(result, scheduler)}


def _tail_errors(result: dict, scheduler: str) -> dict:
    rows = [r for r in before_after(result) if r["quantity"].endswith("p90")]
    mine = {r["quantity"]: r for r in rows if r["scheduler"] == scheduler}

    def within(k):
        return f"{sum(abs(r[k]) <= TOLERANCE for r in rows)} of {len(rows)}"

    return {"tail_within": within("after"), "tail_within_before": within("before"),
            "ttft90_before": _pct(mine["TTFT p90"]["before"]),
            "ttft90_after": _pct(mine["TTFT p90"]["after"]),
            "tpot90_before": _pct(mine["TPOT p90"]["before"]),
            "tpot90_after": _pct(mine["TPOT p90"]["after"])}


def describe(result: dict) -> str:
    """A few lines: the calibrated step model, each scheduler's throughput and TTFT, memory."""
    f = result["measurements"]["fit"]
    lines = [f"step model (static run; host gap: calibration): {f['fixed_s'] * 1e3:.3g} ms + "
             f"{f['per_decode_s'] * 1e6:.3g} us per decoding sequence + "
             f"{f['per_prefill_token_s'] * 1e6:.3g} us per prefill token + "
             f"{f.get('per_context_token_s', 0.0) * 1e9:.3g} ns per context token; host gap "
             f"{f.get('gap_s', 0.0) * 1e6:.3g} us + {f.get('gap_per_seq_s', 0.0) * 1e6:.3g} us "
             "per sequence"]
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
               "fit_c0_ms", "fit_cd_us", "fit_cp_us", "fit_cc_ns", "fit_g0_us", "fit_gs_us",
               "fit_err", "peak_paged", "peak_stored",
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
        "fit_cc_ns": f"{f['per_context_token_s'] * 1e9:.0f}",
        "fit_g0_us": f"{f['gap_s'] * 1e6:.0f}", "fit_gs_us": f"{f['gap_per_seq_s'] * 1e6:.1f}",
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


