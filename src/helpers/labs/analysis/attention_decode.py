"""What the attention lab's decode section computes from a result of
:mod:`helpers.labs.attention.decode` (the shipped H200 reference or the reader's own run).

:func:`point_rows` (per context length and batch: the split kernel's time, the model's time at
the run's copy rate and at the datasheet's HBM bandwidth, the fraction of the copy rate
reached, SDPA's and the naive path's times), :func:`comparison_rows` and
:func:`comparison_table` (each row naming one of the lab's claims), :func:`describe` and
:func:`prose_numbers`.
"""

from __future__ import annotations

from helpers import specs
from helpers.labs import core
from helpers.labs.compare import gpu_spec_for
from helpers.labs.attention.decode import LAB, PREDICTED_FROM
from helpers.labs.report import Row, Table
from helpers.models import roofline

__all__ = ["datasheet", "point_rows", "point_at", "comparison_rows", "comparison_table", "describe",
           "prose_numbers"]


def datasheet(result: dict) -> specs.GPUSpec:
    """The datasheet of the GPU a result was measured on, recognised from its device name
    (:func:`helpers.labs.compare.gpu_spec_for`; the H200's when the name is not known)."""
    return gpu_spec_for(result["provenance"].get("device_name") or "")[0]


def _copy_rate(result: dict) -> float | None:
    copy = result["measurements"].get("copy")
    return copy["bytes_per_s"] if copy else None


def point_rows(result: dict, gpu: specs.GPUSpec | None = None) -> list[dict]:
    """Per point of the sweep: ``context_len``, ``batch``, ``n_bytes`` (the split kernel's
    bytes, :func:`helpers.models.attention.decode_attention_bytes`), ``splits``, ``split_s``
    (None on a CPU), ``model_s`` (the bytes at the run's copy rate,
    :func:`helpers.models.roofline.memory_time_s`; None without one), ``hbm_bound_s`` (at
    ``gpu``'s datasheet HBM bandwidth; by default the measured device's, :func:`datasheet`),
    ``fraction_of_copy`` (``model_s / split_s``: the share
    of the copy rate the kernel's bytes reach), ``sdpa_s`` and ``naive_s`` (None when they
    failed, with the reason in ``sdpa_error``, ``naive_error``)."""
    copy = _copy_rate(result)
    gpu = gpu or datasheet(result)
    rows = []
    for p in result["measurements"]["sweep"]["points"]:
        sp = p.get("split")
        row = {"context_len": p["context_len"], "batch": p["batch"],
               "n_bytes": sp["n_bytes"] if sp else None, "splits": sp["splits"] if sp else None,
               "split_s": sp["median_s"] if sp else None, "model_s": None, "hbm_bound_s": None,
               "fraction_of_copy": None}
        if sp:
            row["hbm_bound_s"] = roofline.memory_time_s(sp["n_bytes"], gpu.hbm_bytes_per_s)
            if copy:
                row["model_s"] = roofline.memory_time_s(sp["n_bytes"], copy)
                row["fraction_of_copy"] = row["model_s"] / sp["median_s"]
        for name in ("sdpa", "naive"):
            e = p.get(name, {})
            row[f"{name}_s"] = e["bench"]["median_s"] if "bench" in e else None
            row[f"{name}_error"] = e.get("error")
        rows.append(row)
    return rows


def point_at(rows: list[dict], context_len: int, batch: int) -> dict | None:
    """The row of :func:`point_rows` at one (context length, batch), or None."""
    return next((r for r in rows if (r["context_len"], r["batch"]) == (context_len, batch)), None)


def comparison_rows(ref: dict | None, mine: dict | None = None,
                    gpu: specs.GPUSpec | None = None) -> list[Row]:
    """Model | H200 | yours rows of the split kernel's time per (context length, batch).

    From :data:`~helpers.labs.attention.decode.PREDICTED_FROM` tokens on the model is the
    bytes at the copy rate (claim ``decode_time``, a prediction); below it, the bytes at the
    datasheet's HBM bandwidth of ``gpu`` (claim ``decode_hbm``, a bound; by default the
    datasheet of the device each result was measured on).
    """
    def index(result):
        return {} if result is None else {
            (r["context_len"], r["batch"]): r for r in point_rows(result, gpu) if r["split_s"]}

    r_ref, r_mine = index(ref), index(mine)
    rows = []
    for n, b in sorted(set(r_ref) | set(r_mine)):
        a, y = r_ref.get((n, b), {}), r_mine.get((n, b), {})
        predicted = n >= PREDICTED_FROM
        rows.append(Row(f"split-KV N={n} B={b}", "us", 1e-6,
                        model=(a or y).get("model_s" if predicted else "hbm_bound_s"),
                        h200=a.get("split_s"), yours=y.get("split_s"),
                        claim=LAB.claim("decode_time" if predicted else "decode_hbm")))
    return rows


def comparison_table(ref: dict | None, mine: dict | None = None) -> Table:
    """The decode table of :func:`comparison_rows` (one row saying so when nothing is
    measured)."""
    rows = comparison_rows(ref, mine) or [Row("no measurement yet", "us", 1e-6)]
    card = (ref["provenance"].get("device_name") or "") if ref else ""
    label = next((c for c in ("H200", "H100") if c in card), "H200" if not card else "reference")
    title = "Decode attention, 32 query heads, 8 K/V heads, d=128, bf16"
    return Table(title + (f" (reference column: {card})" if card else ""), rows,
                 yours_label="yours" if mine is not None else None, reference_label=label)


def describe(result: dict) -> str:
    """A few lines summarizing a result: the checks, then per point each implementation's time
    (and the split kernel's fraction of the copy rate where it was timed)."""
    checks = result["measurements"]["checks"]
    worst = max(c["max_abs_error"] for c in checks["cases"])
    lines = [f"split-KV kernels checked on {len(checks['cases'])} odd shapes "
             f"({'interpreter' if checks['interpreted'] else 'GPU'}): worst error {worst:.1g}"]
    for r in point_rows(result):
        parts = [f"{name} {r[f'{name}_s'] * 1e6:.3g} us" for name in ("split", "sdpa", "naive")
                 if r[f"{name}_s"] is not None]
        if r["fraction_of_copy"] is not None:
            parts.append(f"split at {r['fraction_of_copy']:.2f} of the copy rate")
        lines.append(f"N={r['context_len']:>6} B={r['batch']:>2}: " + ", ".join(parts))
    return "\n".join(lines)


@core.page_numbers(["dec_device", "dec_copy_tbs", "dec_long_n", "dec_frac_b1", "dec_frac_lo",
                    "dec_frac_hi", "dec_goal_word", "dec_splits_b1", "dec_short_n",
                    "dec_frac_short", "dec_sdpa_pct", "dec_err_lo", "dec_fixed_lo_us", "dec_fixed_hi_us",
                    "dec_big_b", "dec_big_err",
                    "dec_err_hi", "dec_n_checks", "dec_worst_err"])
def prose_numbers(result: dict) -> dict:
    """The decode section's glued numbers from a GPU result: the copy rate, the fraction of it
    reached at the longest context (batch 1, and the range over the predicted points), whether
    every predicted point reaches ``goal``, the splits at batch 1, the shortest context's
    fraction, the kernel's speed as a percentage of SDPA's at the longest context and batch 1,
    the prediction's errors, the time beyond the bytes at the copy rate at batch 1 (lowest and
    highest over the context lengths), the largest batch's largest error, and the correctness
    checks. The goal is one less the prediction's
    tolerance (0.8 of the copy rate)."""
    goal = 1 - LAB.claim("decode_time").tolerance
    rows = [r for r in point_rows(result) if r["fraction_of_copy"] is not None]
    longest, shortest = max(r["context_len"] for r in rows), min(r["context_len"] for r in rows)
    b1, short = point_at(rows, longest, 1), point_at(rows, shortest, 1)
    pred = [r for r in rows if r["context_len"] >= PREDICTED_FROM]
    fracs = [r["fraction_of_copy"] for r in pred]
    errs = [r["model_s"] / r["split_s"] - 1 for r in pred]
    sdpa = b1["sdpa_s"] / b1["split_s"] if b1["sdpa_s"] else None
    fixed = [r["split_s"] - r["model_s"] for r in rows if r["batch"] == 1]
    big_b = max(r["batch"] for r in rows)
    big_err = max(abs(r["model_s"] / r["split_s"] - 1) for r in pred if r["batch"] == big_b)
    checks = result["measurements"]["checks"]["cases"]
    return {
        "dec_device": result["provenance"].get("device_name") or core.MISSING,
        "dec_copy_tbs": core.fmt(_copy_rate(result), ".3g", 1e12),
        "dec_long_n": core.fmt(longest, "d"), "dec_frac_b1": core.fmt(b1["fraction_of_copy"], ".2f"),
        "dec_frac_lo": core.fmt(min(fracs), ".2f"), "dec_frac_hi": core.fmt(max(fracs), ".2f"),
        "dec_goal_word": "reaches" if min(fracs) >= goal else "falls short of",
        "dec_splits_b1": core.fmt(b1["splits"], "d"), "dec_short_n": core.fmt(shortest, "d"),
        "dec_frac_short": core.fmt(short["fraction_of_copy"], ".2f"),
        "dec_sdpa_pct": core.fmt(sdpa if sdpa is None else 100 * sdpa, ".0f"),
        "dec_err_lo": core.fmt(100 * min(errs), "+.0f"), "dec_err_hi": core.fmt(100 * max(errs), "+.0f"),
        "dec_fixed_lo_us": core.fmt(min(fixed), ".2g", 1e-6),
        "dec_fixed_hi_us": core.fmt(max(fixed), ".2g", 1e-6),
        "dec_big_b": core.fmt(big_b, "d"), "dec_big_err": core.fmt(100 * big_err, ".0f"),
        "dec_n_checks": core.fmt(len(checks), "d"),
        "dec_worst_err": core.fmt(max(c["max_abs_error"] for c in checks), ".1g"),
    }
