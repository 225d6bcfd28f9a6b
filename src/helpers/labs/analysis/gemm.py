"""What the GEMM lab's page computes from a result (``labs/gemm.md``).

The runner :mod:`helpers.labs.gemm` measures and writes a result; this module reads one (the
shipped H200 reference or the reader's run) and gives the page its per-tiling and per-size
rows, the best tiling, the fp32 comparison, the rows of its model-vs-H200 table and a short
description. The models are :mod:`helpers.models.gemm`.
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.gemm import GPU, GRADE_CONFIG
from helpers.models import gemm as gm

__all__ = ["claim_rows", "check_rows", "config_rows", "best_config", "kernel_s", "size_rows", "launch_costs",
           "probe_rows", "small_predictions", "fp32_rows", "config_rate",
           "predicted_rate_flop_per_s", "size_predictions", "comparison_rows", "describe"]


def _rate(flop: float, entry: dict) -> float:
    return flop / entry["bench"]["median_s"]


def check_rows(result: dict) -> list[dict]:
    """The correctness checks: shape, precision, error and tolerance."""
    return [dict(r) for r in result["measurements"]["check"]]


def config_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per tiling of the sweep: FLOP/s, share of torch's rate and of ``gpu``'s bf16 peak, the
    model's shared memory per CTA and waves (None for a failed tiling)."""
    m = result["measurements"]["configs"]
    rows = []
    if "torch" not in m:
        return rows
    torch_rate = _rate(m["flop"], m["torch"])
    n = m["n"]
    for e in m["configs"]:
        c = e["config"]
        smem = gm.smem_bytes(c["block_m"], c["block_n"], c["block_k"], 2.0, c["num_stages"])
        tiles = gm.tile_count(n, n, c["block_m"], c["block_n"])
        row = {"name": e["name"], **c, "smem_bytes": smem, "tiles": tiles,
               "waves": gm.waves(tiles, gpu.sm_count, 1), "failed": e.get("failed"),
               "flop_per_s": None, "of_torch": None, "of_peak": None, "spread": None}
        if "bench" in e:
            row["flop_per_s"] = _rate(m["flop"], e)
            row["of_torch"] = row["flop_per_s"] / torch_rate
            row["of_peak"] = row["flop_per_s"] / gpu.peak_flop_per_s("bf16")
            row["spread"] = e["bench"]["spread"]
        rows.append(row)
    return rows


def best_config(result: dict, gpu: specs.GPUSpec = GPU) -> dict | None:
    """The fastest tiling of the sweep with torch's rate beside it, or None (CPU tier)."""
    rows = [r for r in config_rows(result, gpu) if r["flop_per_s"]]
    if not rows:
        return None
    best = max(rows, key=lambda r: r["flop_per_s"])
    m = result["measurements"]["configs"]
    torch_rate = _rate(m["flop"], m["torch"])
    return {**best, "torch_flop_per_s": torch_rate,
            "torch_of_peak": torch_rate / gpu.peak_flop_per_s("bf16")}


def kernel_s(entry: dict) -> float:
    """The time per product of a timed entry (s): from its CUDA-graph replay where the run has
    one (the kernels back to back, no host launcher between them), else the plain call's."""
    return (entry.get("graph") or entry["bench"])["median_s"]


def size_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per size: torch's (and the Triton kernel's) rate, timed from a CUDA graph where the run
    has one (``*_call_flop_per_s``: one Python call per timed interval, launcher included),
    and the wave-quantization model's efficiency for the tiling used (one CTA per SM on
    ``gpu``)."""
    m = result["measurements"]["sizes"]
    peak = gpu.peak_flop_per_s(m["precision"]) if result["tier"] == "gpu" else None
    best = result["measurements"].get("best_config") or list(GRADE_CONFIG)
    rows = []
    for e in m["sizes"]:
        n = e["n"]
        tiles = gm.tile_count(n, n, best[0], best[1])
        row = {"n": n, "torch_flop_per_s": e["flop"] / kernel_s(e["torch"]),
               "torch_call_flop_per_s": _rate(e["flop"], e["torch"]),
               "torch_error": e["torch"]["max_rel_error"], "tiles": tiles,
               "waves": gm.waves(tiles, gpu.sm_count, 1),
               "wave_efficiency": gm.wave_efficiency(tiles, gpu.sm_count, 1),
               "graph": "graph" in e["torch"],
               "triton_flop_per_s": None, "triton_call_flop_per_s": None,
               "triton_over_torch": None, "triton_of_peak": None}
        row["torch_of_peak"] = row["torch_flop_per_s"] / peak if peak else None
        if "triton" in e:
            row["triton_flop_per_s"] = e["flop"] / kernel_s(e["triton"])
            row["triton_call_flop_per_s"] = _rate(e["flop"], e["triton"])
            row["triton_over_torch"] = row["triton_flop_per_s"] / row["torch_flop_per_s"]
            row["triton_of_peak"] = row["triton_flop_per_s"] / peak if peak else None
        rows.append(row)
    return rows


def launch_costs(result: dict) -> dict | None:
    """The empty Triton launch of a GPU run (s per call): timed as one call per interval
    (``call_s``, the launcher's host time showing as GPU idle), the host's own time per call
    in a loop (``host_s``) and replayed from a CUDA graph (``graph_s``); None without one."""
    la = result["measurements"].get("launch") or {}
    if "plain" not in la:
        return None
    return {"call_s": la["plain"]["median_s"], "host_s": la["host_per_call_s"],
            "graph_s": la["graph"]["median_s"]}


def probe_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """The fixed-cost probe (GPU): per ``n``, the two short-K products ``n x n x K1`` and
    ``n x n x K2`` timed from a CUDA graph, and the line through them
    (:func:`helpers.models.gemm.fixed_s_and_rate_flop_per_s`): its fixed cost per product
    ``fixed_s`` (launch, the pipeline's fill and drain, the epilogue), its rate per extra K
    step ``rate_flop_per_s``, and that rate over the wave model's for the same tiles
    (``of_wave_model``: the cuBLAS full-wave rate of the run times the wave and tile
    efficiency; above 1, the busy SMs of a part-empty wave run faster than a full wave's)."""
    best = best_config(result, gpu)
    by_n: dict[int, list[dict]] = {}
    for p in result["measurements"].get("probe") or []:
        by_n.setdefault(p["n"], []).append(p)
    rows = []
    for n, ps in sorted(by_n.items()):
        if best is None or len(ps) != 2:
            continue
        ps = sorted(ps, key=lambda p: p["k"])
        times = [kernel_s({"bench": p["plain"], "graph": p.get("graph")}) for p in ps]
        t0, rate = gm.fixed_s_and_rate_flop_per_s([p["flop"] for p in ps], times)
        c = ps[0]["config"]
        wave = gm.quantized_rate_flop_per_s(n, n, c["block_m"], c["block_n"],
                                            peak_flop_per_s=best["torch_flop_per_s"],
                                            n_sms=gpu.sm_count)
        rows.append({"n": n, "k": [p["k"] for p in ps], "k_steps": [p["k_steps"] for p in ps],
                     "times_s": times, "call_s": [p["plain"]["median_s"] for p in ps],
                     "fixed_s": t0, "rate_flop_per_s": rate, "of_wave_model": rate / wave})
    return rows


def small_predictions(result: dict, gpu: specs.GPUSpec = GPU) -> dict[int, float]:
    """The predicted rate (FLOP/s) of the Triton kernel at each size of the sweep that the
    probe measured at the same ``n`` with short K loops: the probe's line (fixed cost plus
    rate per step, :func:`probe_rows`) carried to ``K = n``
    (:func:`helpers.models.gemm.rate_with_fixed_cost_flop_per_s`). Empty without the probe."""
    lines = {r["n"]: r for r in probe_rows(result, gpu)}
    return {e["n"]: gm.rate_with_fixed_cost_flop_per_s(e["flop"], lines[e["n"]]["rate_flop_per_s"],
                                                      lines[e["n"]]["fixed_s"])
            for e in result["measurements"]["sizes"]["sizes"] if e["n"] in lines}


def fp32_rows(result: dict) -> list[dict]:
    """The fp32 comparison (GPU): per setting, torch's and Triton's rate and errors."""
    m = result["measurements"].get("fp32") or {}
    rows = []
    for prec in ("fp32", "tf32"):
        if prec in m:
            e = m[prec]
            rows.append({"precision": prec, "n": m["n"],
                         "torch_flop_per_s": _rate(m["flop"], e["torch"]),
                         "triton_flop_per_s": _rate(m["flop"], e["triton"]),
                         "torch_error": e["torch"]["max_rel_error"],
                         "triton_error": e["triton"]["max_rel_error"]})
    return rows


def config_rate(rows: list[dict], block_m: int, block_n: int, group_m: int,
                stages: int) -> float | None:
    """The rate of one tiling among :func:`config_rows` (None if absent or failed)."""
    hits = [r for r in rows if (r["block_m"], r["block_n"], r["group_m"], r["num_stages"])
            == (block_m, block_n, group_m, stages) and r["flop_per_s"]]
    return hits[0]["flop_per_s"] if hits else None


def predicted_rate_flop_per_s(n: int, block_m: int, block_n: int, precision: str = "bf16",
                              gpu: specs.GPUSpec = GPU) -> float:
    """The model's bound on the rate of an ``n^3`` product: ``gpu``'s dense peak times the wave
    efficiency of ``block_m x block_n`` tiles on its SMs (one CTA per SM) and the tile
    efficiency (:func:`helpers.models.gemm.quantized_rate_flop_per_s`)."""
    return gm.quantized_rate_flop_per_s(n, n, block_m, block_n,
                                        peak_flop_per_s=gpu.peak_flop_per_s(precision),
                                        n_sms=gpu.sm_count)


def size_predictions(result: dict, gpu: specs.GPUSpec = GPU) -> dict[int, float]:
    """The predicted rate of the Triton kernel at each size of a GPU result's sweep (FLOP/s):
    its tiles' wave and tile efficiency (one CTA per SM on ``gpu``) times the full-wave rate
    measured in the same run, cuBLAS's (``torch.matmul``) rate at the configuration sweep's
    size, where cuBLAS's own waves are full. Empty for a CPU result."""
    best = best_config(result, gpu)
    if best is None:
        return {}
    tile = result["measurements"].get("best_config") or [best["block_m"], best["block_n"]]
    return {e["n"]: gm.quantized_rate_flop_per_s(e["n"], e["n"], tile[0], tile[1],
                                                 peak_flop_per_s=best["torch_flop_per_s"],
                                                 n_sms=gpu.sm_count)
            for e in result["measurements"]["sizes"]["sizes"]}


def comparison_rows(ref: dict | None, mine: dict | None = None, gpu: specs.GPUSpec = GPU) -> list:
    """Rows of the page's table, each naming its claim (:data:`helpers.labs.gemm.LAB`): the
    datasheet bounds (dense peaks; the Triton tiling's wave-quantized peak), the Triton
    kernel's rate at every size predicted from the run's own cuBLAS rate, and the fp32
    comparison's bounds; the H200 and the reader's run (None where not measured).

    Without ``mine`` (the status page) every "yours" is None and the CPU row is left out.
    """
    from helpers.labs.report import Row

    from helpers.labs.gemm import LAB

    rb = best_config(ref, gpu) if ref is not None else None
    mb = best_config(mine, gpu) if mine is not None else None
    peak = gpu.peak_flop_per_s("bf16")
    bm, bn = (rb["block_m"], rb["block_n"]) if rb else GRADE_CONFIG[:2]
    rows = [
        Row("torch.matmul bf16 8192^3", "TFLOP/s", 1e12, model=peak,
            h200=rb and rb["torch_flop_per_s"], yours=mb and mb["torch_flop_per_s"],
            claim=LAB.claim("peak_bound")),
        Row("Triton best tiling, bf16 8192^3", "TFLOP/s", 1e12,
            model=predicted_rate_flop_per_s(8192, bm, bn, "bf16", gpu),
            h200=rb and rb["flop_per_s"], yours=mb and mb["flop_per_s"],
            claim=LAB.claim("wave_bound")),
        Row("Triton / torch.matmul", "%", 0.01, model=None, h200=rb and rb["of_torch"],
            yours=mb and mb["of_torch"]),
    ]
    basis = ref if rb else (mine if mb else None)
    pred = size_predictions(basis, gpu) if basis is not None else {}

    def triton_at(res, n):
        if res is None or best_config(res, gpu) is None:
            return None
        return next((r["triton_flop_per_s"] for r in size_rows(res, gpu) if r["n"] == n), None)
    for n in (sorted(pred) or []):
        rows.append(Row(f"Triton bf16 {n}^3, from cuBLAS's rate", "TFLOP/s", 1e12,
                        model=pred[n], h200=triton_at(ref, n), yours=triton_at(mine, n),
                        claim=LAB.claim("triton_rate")))
    small = small_predictions(basis, gpu) if basis is not None else {}
    for n in sorted(small):
        rows.append(Row(f"Triton bf16 {n}^3, from the short-K probe", "TFLOP/s", 1e12,
                        model=small[n], h200=triton_at(ref, n), yours=triton_at(mine, n),
                        claim=LAB.claim("small_product_rate")))
    fp_ref = {r["precision"]: r for r in fp32_rows(ref)} if ref is not None else {}
    fp_mine = {r["precision"]: r for r in fp32_rows(mine)} if mine is not None else {}
    for prec in ("fp32", "tf32"):
        for who in ("torch", "triton"):
            if prec not in fp_ref and prec not in fp_mine:
                continue
            n = (fp_ref.get(prec) or fp_mine.get(prec))["n"]
            rows.append(Row(f"{'torch.matmul' if who == 'torch' else 'Triton'} {prec} {n}^3",
                            "TFLOP/s", 1e12, model=gpu.peak_flop_per_s(prec),
                            h200=fp_ref.get(prec, {}).get(f"{who}_flop_per_s"),
                            yours=fp_mine.get(prec, {}).get(f"{who}_flop_per_s"),
                            claim=LAB.claim("peak_bound")))
    if mine is not None and not mb:  # a CPU: this machine's own matrix-product rate
        big = size_rows(mine)[-1]
        rows.append(Row(f"torch.matmul fp32 {big['n']}^3 (this CPU)", "GFLOP/s", 1e9,
                        yours=big["torch_flop_per_s"]))
    return rows


def describe(result: dict) -> str:
    """A few lines summarizing a result: the checks, the best tiling, rates per size."""
    from helpers.units import fmt_rate

    lines = []
    for r in check_rows(result):
        where = "interpreter" if r["interpreted"] else "GPU"
        lines.append(f"check {r['precision']} {r['m']}x{r['n']}x{r['k']} ({where}): max relative "
                     f"error {r['max_rel_error']:.2g} (tolerance {r['tolerance']:g})")
    best = best_config(result)
    if best:
        lines.append(f"best tiling {best['name']}: {fmt_rate(best['flop_per_s'], 'FLOP/s')}, "
                     f"{best['of_torch']:.0%} of torch.matmul, {best['of_peak']:.0%} of peak")
    for r in size_rows(result):
        line = f"n={r['n']}: torch {fmt_rate(r['torch_flop_per_s'], 'FLOP/s')}"
        if r["triton_flop_per_s"]:
            line += (f", Triton {fmt_rate(r['triton_flop_per_s'], 'FLOP/s')} "
                     f"({r['triton_over_torch']:.0%})")
        lines.append(line)
    for r in fp32_rows(result):
        lines.append(f"{r['precision']} n={r['n']}: torch {fmt_rate(r['torch_flop_per_s'], 'FLOP/s')}, "
                     f"Triton {fmt_rate(r['triton_flop_per_s'], 'FLOP/s')}")
    return "\n".join(lines)


def claim_rows(ref: dict | None) -> list:
    """The reference's table rows that carry both a model and an H200 value, as
    :class:`helpers.labs.summary.LabRow` (what the status page reads), so the page's
    summaries (``summary.median_abs_error``, ``summary.predictions``, each row's ``holds``)
    are the status page's own."""
    from helpers.labs import summary

    return [] if ref is None else summary.lab_rows("gemm", ref)
