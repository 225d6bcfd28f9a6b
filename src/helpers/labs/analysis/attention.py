"""What the attention lab's page computes from a result: its rows, tables and prose numbers.

Reads a result of :mod:`helpers.labs.attention` (the shipped H200 reference or the reader's own
run): :func:`point_rows` (per point, each implementation's time and the models'),
:func:`comparison_rows` and :func:`comparison_table` (model, H200 and the reader's times, each
row naming one of the lab's claims), :func:`fused_vs_sdpa`, :func:`describe`, and, for the
fusion chapter, :func:`counter_rows` of the hardware-counter record.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import specs
from helpers.labs.attention import (DEFAULT_OPS_PER_SCORE, GPU, LAB, PIPE_RATES,
                                    PROGRAMS_PER_SM)
from helpers.labs.attention.pipes import pipes_reference
from helpers.labs.report import Row, Table
from helpers.models import attention as model
from helpers.models import occupancy, roofline
from helpers.models.stats import least_squares

__all__ = ["IMPLS", "PIPES_AT_N", "pipe_case", "pipe_counts", "pipe_inputs", "fused_pipe_time_s",
           "point_rows", "fused_vs_sdpa", "point_at", "sdpa_kernel_name", "comparison_rows",
           "comparison_table", "describe", "counter_rows"]

#: The counted sequence length whose instruction counts the pipe model uses (every launch
#: configuration is counted there, with and without the mask).
PIPES_AT_N = 4096


def _scores(case: dict) -> float:
    cfg = case["config"]
    tiles = model.flash2_program_tiles(case["seq_len"], block_rows=cfg["block_m"],
                                       block_cols=cfg["block_n"], causal=case["causal"])
    return float(case["batch"] * case["n_heads"] * sum(tiles) * cfg["block_m"] * cfg["block_n"])


def pipe_case(pipes: dict | None, head_dim: int, causal: bool, block_n: int,
              seq_len: int = PIPES_AT_N) -> dict | None:
    """The counted fused case of ``pipes`` (an ``attention_pipes`` result) at this head
    dimension, mask, key block and length, or None."""
    if pipes is None:
        return None
    return next((c for c in pipes["measurements"]["cases"]
                 if c["impl"] == "fused" and "error" not in c and c.get("kernels")
                 and (c["head_dim"], c["causal"], c["config"]["block_n"], c["seq_len"])
                 == (head_dim, causal, block_n, seq_len)), None)


def pipe_counts(case: dict) -> dict:
    """Per computed score of a counted case: thread operations issued to the special-function
    (``xu``), FMA and ALU pipes (warp instructions x 32), the elapsed SM cycles, the tensor
    pipe's active share and the clock ncu saw."""
    k = case["kernels"][0]["metrics"]
    scores = _scores(case)
    out = {p: k[f"smsp__inst_executed_pipe_{p}.sum"] * 32 / scores for p in ("xu", "fma", "alu")}
    out["cycles_per_score"] = k["sm__cycles_elapsed.avg"] / (scores / GPU.sm_count)
    out["tensor_active"] = k["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"] / 100
    out["clock_hz"] = k["sm__cycles_elapsed.avg.per_second"]
    out["scores"] = scores
    return out


def pipe_inputs(pipes: dict | None, head_dim: int, causal: bool, block_m: int,
                block_n: int) -> dict:
    """The counters' inputs to the pipe model for one launch configuration.

    * ``fma_ops_per_score``, ``alu_ops_per_score``: the FMA and ALU pipes' operations per score
      at :data:`PIPES_AT_N`, less the accumulator's rescale (``d / B_c`` per score, which
      :func:`helpers.models.attention.flash2_tile_cycles` counts itself);
    * ``programs_per_sm``: the occupancy of the compiled kernel's registers and shared memory
      (:func:`helpers.models.occupancy.occupancy`, SM 9.0 limits);
    * ``program_overhead_cycles``: the fixed cycles per program, the intercept of the counted
      cycles per SM against tiles per SM over the counted lengths (a least-squares line:
      ``cycles = programs/SM x c0 / r + tiles/SM x c``), and ``tile_cycles`` its slope.

    Without a counted case (no reference, another configuration) the counts are
    :data:`helpers.labs.attention.DEFAULT_OPS_PER_SCORE`, one program per SM and no overhead;
    ``source`` says which.
    """
    case = pipe_case(pipes, head_dim, causal, block_n)
    if case is None or case["config"]["block_m"] != block_m:
        return dict(DEFAULT_OPS_PER_SCORE, programs_per_sm=1, program_overhead_cycles=0.0,
                    tile_cycles=None, source="assumed (no counters for this launch)")
    c = pipe_counts(case)
    meta = case["triton_meta"]
    occ = occupancy.occupancy(threads_per_block=32 * meta["num_warps"],
                              registers_per_thread=int(meta["n_regs"]),
                              smem_bytes=int(meta["shared"]), limits=specs.SM90)
    r = occ.blocks_per_sm
    same = [e for e in pipes["measurements"]["cases"]
            if e["impl"] == "fused" and "error" not in e and e.get("kernels")
            and (e["head_dim"], e["causal"], e["config"]) == (head_dim, causal, case["config"])]
    a, y = [], []
    for e in same:
        cfg = e["config"]
        progs = e["batch"] * e["n_heads"] * math.ceil(e["seq_len"] / cfg["block_m"])
        tiles = _scores(e) / (cfg["block_m"] * cfg["block_n"])
        a.append([progs / GPU.sm_count / r, tiles / GPU.sm_count])
        y.append(e["kernels"][0]["metrics"]["sm__cycles_elapsed.avg"])
    if len(same) >= 2:
        c0, slope = least_squares(a, y)
        c0, slope = max(0.0, float(c0)), float(slope)
    else:
        c0, slope = 0.0, None
    return {"fma_ops_per_score": c["fma"] - head_dim / block_n,
            "alu_ops_per_score": c["alu"], "programs_per_sm": r,
            "program_overhead_cycles": c0, "tile_cycles": slope,
            "xu_ops_per_score": c["xu"], "registers_per_thread": int(meta["n_regs"]),
            "smem_bytes": int(meta["shared"]), "lengths_fitted": sorted(e["seq_len"] for e in same),
            "source": f"counters (attention_pipes.json, N = {PIPES_AT_N})"}


def fused_pipe_time_s(point: dict, pipes: dict | None, gpu: specs.GPUSpec = GPU) -> float:
    """The pipe model's time of one sweep point (:func:`helpers.models.attention.flash2_attention_pipe_time_s`
    at ``gpu``'s SM count and tensor clock, :data:`helpers.labs.attention.PIPE_RATES`, the
    counters' inputs of :func:`pipe_inputs`)."""
    cfg = point["fused_config"]
    inp = pipe_inputs(pipes, point["head_dim"], point["causal"], cfg["block_m"], cfg["block_n"])
    return model.flash2_attention_pipe_time_s(
        point["seq_len"], point["head_dim"], block_rows=cfg["block_m"], block_cols=cfg["block_n"],
        n_sms=gpu.sm_count, clock_hz=gpu.tensor_boost_clock_hz,
        fma_ops_per_score=inp["fma_ops_per_score"], alu_ops_per_score=inp["alu_ops_per_score"],
        program_overhead_cycles=inp["program_overhead_cycles"],
        programs_per_sm=inp["programs_per_sm"], n_heads=point["n_heads"], batch=point["batch"],
        causal=point["causal"], **PIPE_RATES)

IMPLS = ("naive", "fused", "sdpa")


def point_rows(result: dict, gpu: specs.GPUSpec = GPU, pipes: dict | None | str = "reference"
               ) -> list[dict]:
    """Per point: each implementation's time, FLOP/s (useful FLOP) and the models' times.

    The bounds are :func:`helpers.models.roofline.kernel_time_lower_bound_s` with ``gpu``'s
    bf16 dense peak and HBM bandwidth, for the naive path's full FLOP and bytes and for the
    fused kernel's FLOP and one-level bytes (:func:`helpers.models.attention.flash2_attention_hbm_bytes`);
    ``fused_two_level_s`` is the fused kernel's two-level time
    (:func:`helpers.models.attention.flash2_attention_time_s`: ``gpu``'s peak, HBM bandwidth, L2
    size and bandwidth, one program per SM, the point's query block), ``fused_pipe_s`` the pipe
    model's (:func:`fused_pipe_time_s`, with the counters ``pipes``: by default the shipped
    ``attention_pipes`` reference) and ``fused_pred_s``, the prediction, the larger of the two.
    """
    if isinstance(pipes, str):
        pipes = pipes_reference()
    peak = gpu.peak_flop_per_s("bf16")
    bw = gpu.hbm_bytes_per_s
    rows = []
    for p in result["measurements"]["sweep"]["points"]:
        row = {k: p[k] for k in ("head_dim", "causal", "seq_len", "batch", "flop")}
        row["naive_bound_s"] = roofline.kernel_time_lower_bound_s(p["naive_flop"],
                                                                  p["naive_bytes"], peak, bw)
        row["fused_bound_s"] = roofline.kernel_time_lower_bound_s(p["flop"], p["fused_bytes"],
                                                                  peak, bw)
        row["fused_two_level_s"] = model.flash2_attention_time_s(
            p["seq_len"], p["head_dim"], p["bytes_per_element"],
            block_rows=p["fused_config"]["block_m"], l2_capacity_bytes=gpu.l2_bytes,
            concurrent_programs=gpu.sm_count * PROGRAMS_PER_SM, peak_flop_per_s=peak,
            mem_bytes_per_s=bw, l2_bytes_per_s=gpu.l2_bytes_per_s, n_heads=p["n_heads"],
            batch=p["batch"], causal=p["causal"])
        row["fused_pipe_s"] = fused_pipe_time_s(p, pipes, gpu)
        row["fused_pred_s"] = max(row["fused_pipe_s"], row["fused_two_level_s"])
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


def comparison_rows(ref: dict | None, mine: dict | None = None, head_dim: int | None = None,
                    causal: bool | None = None) -> list[Row]:
    """Model | H200 | yours rows: times of the three implementations per sequence length.

    The model column is the naive path's roofline bound (claim ``naive_time``) and the fused
    kernel's prediction ``fused_pred_s`` (claim ``fused_time``); SDPA has no model of its own.
    ``head_dim`` and ``causal`` select one case; None (the default) keeps every case, labelled
    by head dimension and mask except the first (d = 64, no mask).
    """
    def index(result):
        return {} if result is None else {
            (r["seq_len"], r["head_dim"], r["causal"]): r for r in point_rows(result)}

    r_ref, r_mine = index(ref), index(mine)
    keys = sorted({k for k in r_ref} | {k for k in r_mine},
                  key=lambda k: (k[1], k[2], k[0])) or []
    rows = []
    for n, d, c in keys:
        if (head_dim is not None and d != head_dim) or (causal is not None and c != causal):
            continue
        a, b = r_ref.get((n, d, c), {}), r_mine.get((n, d, c), {})
        case = "" if (head_dim is not None and causal is not None) or (d, c) == (64, False) \
            else f" d={d}{' causal' if c else ''}"
        for name in IMPLS:
            model_s = {"naive": (a or b).get("naive_bound_s"),
                       "fused": (a or b).get("fused_pred_s")}.get(name)
            if a.get(f"{name}_s") is None and b.get(f"{name}_s") is None:
                continue
            claim = {"naive": "naive_time", "fused": "fused_time"}.get(name)
            rows.append(Row(f"{name} N={n}{case}", "ms", 1e-3, model=model_s,
                            h200=a.get(f"{name}_s"), yours=b.get(f"{name}_s"),
                            claim=LAB.claim(claim) if claim else None))
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
