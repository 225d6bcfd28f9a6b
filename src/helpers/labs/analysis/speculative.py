"""What the speculative-decoding lab's page computes from a result (:mod:`helpers.labs.speculative`).

Per draft length, the measured tokens per cycle and speedup beside the formulas of
:mod:`helpers.models.speculative` fed with the run's own acceptance rate, cost ratio and
verification ratio (:func:`sweep_rows`); how far they agree (:func:`agreement_summary`); the
page's model-vs-H200 rows and table (:func:`comparison_rows`, :func:`comparison_table`), the
numbers its prose quotes (:func:`prose_numbers`) and a summary of a result (:func:`describe`).

The rows name the lab's claims (:data:`helpers.labs.speculative.LAB`), all predictions:
``tokens_per_cycle``, ``speedup`` and ``cost_ratio``.
"""

from __future__ import annotations

import math

from helpers.labs.core import MISSING, fmt, page_numbers
from helpers.labs.report import Row, Table
from helpers.labs.speculative import LAB
from helpers.models import speculative as model

__all__ = ["MISSING", "sweep_rows", "comparison_rows", "comparison_table", "TOKENS_TOLERANCE",
           "SPEEDUP_TOLERANCE", "agreement_summary", "prose_numbers", "describe"]


def sweep_rows(result: dict) -> list[dict]:
    """Per draft length: measured and predicted tokens per cycle and speedup.

    Predictions use the teacher-forced acceptance rate (``alpha``), the measured cost ratio
    ``c`` and either the paper's ``v = 1`` (``speedup_model``) or the measured verification
    ratio (``speedup_model_v``)."""
    m = result["measurements"]
    a = m["correctness"]["alpha_teacher_forced"]
    c = m["steps"]["cost_ratio"]
    t_target = m["steps"]["target"]["bench"]["median_s"]
    t_draft = m["steps"]["draft"]["bench"]["median_s"]
    n_tok = len(m["sweep"]["plain"]) * result["settings"]["new_tokens"]
    rows = []
    for p in m["sweep"]["points"]:
        g = p["draft_len"]
        v = m["steps"]["verify_ratio"][str(g)]
        rows.append({
            "draft_len": g, "alpha": a, "alpha_tested": p["alpha_tested"], "c": c, "v": v,
            "tokens_per_cycle": p["tokens_per_cycle"],
            "tokens_model": model.expected_tokens_per_cycle(a, g),
            # the standard error a text of this many cycles leaves, relative to the formula
            "tokens_stderr": model.tokens_per_cycle_std(a, g) / math.sqrt(p["cycles"])
            / model.expected_tokens_per_cycle(a, g),
            "speedup": p["speedup"],
            "speedup_model": model.speedup(a, g, c),
            "speedup_model_v": model.speedup(a, g, c, v),
            "speedup_model_measured_n": p["tokens_per_cycle"] / model.cycle_cost(g, c, v),
            # evidence for the gap: a cycle's measured time against the sum of its parts
            "cycle_s": p["spec_s"] / p["cycles"],
            "cycle_parts_s": g * t_draft + v * t_target,
            "plain_token_s": p["plain_s"] / n_tok, "target_step_s": t_target,
        })
    return rows


def comparison_rows(ref: dict | None, mine: dict | None = None) -> list[Row]:
    """Model | H200 | yours rows: tokens per cycle and speedup per draft length, and ``c``.

    Model values use each run's own measured acceptance rate, cost ratio and verification
    ratio (H200's when there is a reference, else the reader's); the model of ``c`` is the
    ratio of operators dispatched per step (the launch-bound limit)."""
    base = ref or mine
    if base is None:
        return []
    r_ref = {r["draft_len"]: r for r in sweep_rows(ref)} if ref else {}
    r_mine = {r["draft_len"]: r for r in sweep_rows(mine)} if mine else {}
    rows = []
    for g in sorted(set(r_ref) | set(r_mine)):
        a, b = r_ref.get(g, {}), r_mine.get(g, {})
        src = a or b
        rows.append(Row(f"tokens per cycle g={g}", "tokens", 1.0, model=src["tokens_model"],
                        h200=a.get("tokens_per_cycle"), yours=b.get("tokens_per_cycle"),
                        claim=LAB.claim("tokens_per_cycle")))
    for g in sorted(set(r_ref) | set(r_mine)):
        a, b = r_ref.get(g, {}), r_mine.get(g, {})
        src = a or b
        rows.append(Row(f"speedup g={g}", "x", 1.0, model=src["speedup_model_v"],
                        h200=a.get("speedup"), yours=b.get("speedup"),
                        claim=LAB.claim("speedup")))
    st_ref = ref["measurements"]["steps"] if ref else {}
    st_mine = mine["measurements"]["steps"] if mine else {}
    st = st_ref or st_mine
    rows.append(Row("cost ratio c", "-", 1.0,
                    model=model.launch_bound_cost_ratio(st["draft"]["ops"], st["target"]["ops"]),
                    h200=st_ref.get("cost_ratio"), yours=st_mine.get("cost_ratio"),
                    claim=LAB.claim("cost_ratio")))
    return rows


def comparison_table(ref: dict | None, mine: dict | None) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine) or [Row("no measurement yet", "-", 1.0)]
    return Table("Speculative decoding of book-lm with book-draft", rows,
                 yours_label="yours" if mine is not None else None)


#: Relative tolerance for tokens per cycle against the formula (the claim's).
TOKENS_TOLERANCE = LAB.claim("tokens_per_cycle").tolerance
#: Relative tolerance for the measured speedup against the formula fed with the measured
#: acceptance, cost ratio and verification ratio (the claim's).
SPEEDUP_TOLERANCE = LAB.claim("speedup").tolerance


def agreement_summary(ref: dict | None) -> dict | None:
    """How far the measurement is from the formulas over every draft length: the largest
    relative error of tokens per cycle (and its draft length, and whether the measurement lies
    above or below the formula at the longest draft), the largest of the speedup against
    :func:`helpers.models.speculative.speedup` with the measured ``v``, whether each is within
    :data:`TOKENS_TOLERANCE` / :data:`SPEEDUP_TOLERANCE`, and the largest gap between a
    cycle's measured time and the sum of its parts. None without a result."""
    rows = sweep_rows(ref) if ref is not None else []
    if not rows:
        return None

    def worst(key, model_key):
        errs = [(abs(r[key] / r[model_key] - 1), r["draft_len"]) for r in rows]
        return max(errs)

    tok_err, tok_g = worst("tokens_per_cycle", "tokens_model")
    s_err, s_g = worst("speedup", "speedup_model_v")
    cyc_err, cyc_g = worst("cycle_s", "cycle_parts_s")
    last = rows[-1]
    return {"tokens_err": tok_err, "tokens_err_g": tok_g,
            "tokens_within": tok_err <= TOKENS_TOLERANCE,
            "tokens_side_longest": "above" if last["tokens_per_cycle"] > last["tokens_model"]
            else "below",
            "speedup_err": s_err, "speedup_err_g": s_g,
            "speedup_within": s_err <= SPEEDUP_TOLERANCE,
            "cycle_err": cyc_err, "cycle_err_g": cyc_g, "longest_g": last["draft_len"]}


@page_numbers(["alpha", "n4", "n4_model", "alpha4", "c", "t_target_us", "t_draft_us", "v4",
               "s4", "s4_model", "s4_model_v", "cycle_us", "parts_us", "best_g", "best_s",
               "tok_err_pct", "tok_err_g", "tok_side", "longest_g", "s_err_pct", "s_err_g",
               "cycle_err_pct", "tok_verdict", "s_verdict", "tok_tol_pct", "s_tol_pct",
               "tok_se_lo_pct", "tok_se_hi_pct", "cycles_lo", "cycles_hi", "c_err_pct",
               "c_side"])
def prose_numbers(ref: dict | None) -> dict[str, str]:
    """The H200 numbers the page's prose quotes, formatted (:data:`MISSING` while unmeasured):
    acceptance, tokens per cycle and speedup at g = 4 against the model, step times, the
    verification ratio, a cycle's time against its parts, and the best draft length."""
    from helpers import units

    rows = sweep_rows(ref)
    by_g = {r["draft_len"]: r for r in rows}
    r4 = by_g.get(4)
    best = max(rows, key=lambda r: r["speedup"]) if rows else None
    st = ref["measurements"]["steps"]
    values = {
        "alpha": (rows[0]["alpha"] if rows else None, ".3f"),
        "n4": (r4 and r4["tokens_per_cycle"], ".2f"),
        "n4_model": (r4 and r4["tokens_model"], ".2f"),
        "alpha4": (r4 and r4["alpha_tested"], ".3f"),
        "c": (st and st["cost_ratio"], ".3f"),
        "t_target_us": (st and st["target"]["bench"]["median_s"] / units.us, ".0f"),
        "t_draft_us": (st and st["draft"]["bench"]["median_s"] / units.us, ".0f"),
        "v4": (r4 and r4["v"], ".2f"),
        "s4": (r4 and r4["speedup"], ".2f"),
        "s4_model": (r4 and r4["speedup_model"], ".2f"),
        "s4_model_v": (r4 and r4["speedup_model_v"], ".2f"),
        "cycle_us": (r4 and r4["cycle_s"] / units.us, ".0f"),
        "parts_us": (r4 and r4["cycle_parts_s"] / units.us, ".0f"),
        "best_g": (best and best["draft_len"], "d"),
        "best_s": (best and best["speedup"], ".2f"),
    }
    a = agreement_summary(ref)  # None without a sweep, so each `a and ...` is None too
    values.update({
        "tok_err_pct": (a and 100 * a["tokens_err"], ".1f"),
        "tok_err_g": (a and a["tokens_err_g"], "d"),
        "tok_side": (a and a["tokens_side_longest"], "s"),
        "longest_g": (a and a["longest_g"], "d"),
        "s_err_pct": (a and 100 * a["speedup_err"], ".1f"),
        "s_err_g": (a and a["speedup_err_g"], "d"),
        "cycle_err_pct": (a and 100 * a["cycle_err"], ".1f"),
        "tok_verdict": (a and ("within" if a["tokens_within"] else "outside"), "s"),
        "s_verdict": (a and ("within" if a["speedup_within"] else "outside"), "s"),
        "tok_tol_pct": (100 * TOKENS_TOLERANCE, ".0f"),
        "s_tol_pct": (100 * SPEEDUP_TOLERANCE, ".0f"),
    })
    se = [r["tokens_stderr"] for r in rows]
    cycles = [p["cycles"] for p in ref["measurements"]["sweep"]["points"]] if ref else []
    c_model = (model.launch_bound_cost_ratio(st["draft"]["ops"], st["target"]["ops"])
               if st else None)
    values.update({
        "tok_se_lo_pct": (se and 100 * min(se), ".1f"),
        "tok_se_hi_pct": (se and 100 * max(se), ".1f"),
        "cycles_lo": (cycles and min(cycles), "d"),
        "cycles_hi": (cycles and max(cycles), "d"),
        "c_err_pct": (st and 100 * abs(c_model / st["cost_ratio"] - 1), ".0f"),
        "c_side": (st and ("below" if c_model < st["cost_ratio"] else "above"), "s"),
    })
    return {k: fmt(v, spec) for k, (v, spec) in values.items()}



def describe(result: dict) -> str:
    """A few lines summarizing a result."""
    m = result["measurements"]
    st = m["steps"]
    lines = [
        f"exact: {m['correctness']['identical']} on {len(m['correctness']['cases'])} "
        f"(prompt, g) cases; teacher-forced acceptance {m['correctness']['alpha_teacher_forced']:.3f}",
        f"target step {st['target']['bench']['median_s'] * 1e3:.3g} ms, draft step "
        f"{st['draft']['bench']['median_s'] * 1e3:.3g} ms: c = {st['cost_ratio']:.3f} "
        f"(operators ratio {st['ops_ratio']:.3f})",
    ]
    for r in sweep_rows(result):
        lines.append(f"g={r['draft_len']}: tokens/cycle {r['tokens_per_cycle']:.2f} "
                     f"(model {r['tokens_model']:.2f}), speedup {r['speedup']:.2f} "
                     f"(model {r['speedup_model']:.2f}, with measured v {r['speedup_model_v']:.2f})")
    return "\n".join(lines)
