"""What the memory-access lab's page computes from a result (``labs/memory-access.md``).

The runner :mod:`helpers.labs.memory_access` measures and writes a result; this module reads
one (the shipped H200 reference or the reader's run) and gives the page its stride panel, its
ratios and rates, and the rows of its model-vs-H200 table. The models are
:mod:`helpers.models.memory_access`.
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.memory_access import ELEMENT_BYTES, LAB, STRIDES
from helpers.models.memory_access import (DRAM_ACCESS_BYTES, accesses_abut,
                                          predicted_efficiency, predicted_strided_bytes_per_s,
                                          predicted_transpose_time_s, smem_transpose_min_time_s,
                                          stream_rate_bytes_per_s, strided_read_time_s,
                                          transpose_time_from_copy_s)

__all__ = ["strided_panel", "stride_ratios", "transpose_rates", "dirty_bytes", "sparse_rates",
           "strided_time_predictions", "comparison_rows", "check_numbers", "comparison_table",
           "counter_rows", "format_counter_rows"]


def strided_panel(result: dict, peak_bytes_per_s: float | None = None) -> dict:
    """Strides, measured useful bandwidth and the model's, from a result (for the stride plot).

    The model is :func:`predicted_strided_bytes_per_s` with ``peak_bytes_per_s`` (the
    datasheet's HBM bandwidth for the H200), or, when it is None, the result's own stride-1
    bandwidth, which compares the *shape* of the curve on a machine without a datasheet figure.
    """
    sr = result["measurements"]["strided_read"]
    strides = [row["stride"] for row in sr["rows"]]
    measured = [row["useful_bytes_per_s"] for row in sr["rows"]]
    peak = measured[strides.index(1)] if peak_bytes_per_s is None else peak_bytes_per_s
    return {"strides": strides, "measured": measured,
            "model": predicted_strided_bytes_per_s(strides, peak,
                                                   segment_bytes=sr["segment_bytes"])}


def stride_ratios(result: dict) -> dict[int, float]:
    """Each stride's useful bandwidth over the stride-1 bandwidth (the measured efficiency)."""
    rows = result["measurements"]["strided_read"]["rows"]
    base = next(r["useful_bytes_per_s"] for r in rows if r["stride"] == 1)
    return {r["stride"]: r["useful_bytes_per_s"] / base for r in rows}


def transpose_rates(result: dict) -> dict[str, float]:
    """Bytes moved per second of each transpose (and the copy) in a result."""
    return {name: op["bytes_per_s"] for name, op in result["measurements"]["transpose"]["ops"].items()}


def _strided_time(res: dict | None, stride: int) -> float | None:
    if res is None:
        return None
    return next((r["bench"]["median_s"] for r in res["measurements"]["strided_read"]["rows"]
                 if r["stride"] == stride), None)


def _op_time(res: dict | None, op: str) -> float | None:
    if res is None:
        return None
    return res["measurements"]["transpose"]["ops"].get(op, {}).get("bench", {}).get("median_s")


def _bank_time(res: dict | None, pad: int) -> float | None:
    if res is None or not res["measurements"]["bank_conflicts"].get("available"):
        return None
    return res["measurements"]["bank_conflicts"][f"pad{pad}"]["bench"]["median_s"]


def dirty_bytes(result: dict, l2_bytes: float = specs.H200_SXM.l2_bytes) -> float:
    """Dirty bytes each repetition of the strided read writes back first: the whole L2 when a
    GPU run flushed the cache between repetitions (``bench`` flushes by *writing* a buffer
    larger than the L2), else 0."""
    flushed = result["settings"].get("flush_cache_strided") and result.get("tier") == "gpu"
    return float(l2_bytes) if flushed else 0.0


def sparse_rates(result: dict, l2_bytes: float = specs.H200_SXM.l2_bytes) -> dict[int, float]:
    """HBM rates (bytes/s) of the strides whose accesses do not abut
    (:func:`~helpers.models.memory_access.accesses_abut`), each from the same-span sweep's read
    at that stride (another element count and span than the main sweep's), by
    :func:`~helpers.models.memory_access.stream_rate_bytes_per_s`; empty for a result without
    that sweep."""
    span = result["measurements"].get("strided_read_same_span")
    if span is None:
        return {}
    n = result["measurements"]["strided_read"]["n_elements"]
    dirty, b = dirty_bytes(result, l2_bytes), span["element_bytes"]
    return {r["stride"]: stream_rate_bytes_per_s(r["n_elements"], r["stride"],
                                                 r["bench"]["median_s"], dirty_bytes=dirty,
                                                 bytes_per_element=b)
            for r in span["rows"]
            if not accesses_abut(r["stride"], b, access_bytes=DRAM_ACCESS_BYTES)
            and r["n_elements"] != n}


def strided_time_predictions(result: dict, l2_bytes: float = specs.H200_SXM.l2_bytes
                             ) -> dict[int, float]:
    """The predicted time of the strided read at each stride above 1 (s),
    :func:`~helpers.models.memory_access.strided_read_time_s` at an HBM rate measured in the
    same run: where the accesses abut, the stride-1 read's
    (:func:`~helpers.models.memory_access.stream_rate_bytes_per_s`); where they do not, the
    rate the same-span sweep measured at that stride (:func:`sparse_rates`), or the stride-1
    rate for a result without that sweep."""
    sr = result["measurements"]["strided_read"]
    n, dirty, b = sr["n_elements"], dirty_bytes(result, l2_bytes), sr["element_bytes"]
    rate = stream_rate_bytes_per_s(n, 1, _strided_time(result, 1), dirty_bytes=dirty,
                                   bytes_per_element=b)
    sparse = sparse_rates(result, l2_bytes)
    return {r["stride"]: strided_read_time_s(n, r["stride"],
                                             mem_bytes_per_s=sparse.get(r["stride"], rate),
                                             dirty_bytes=dirty, bytes_per_element=b)
            for r in sr["rows"] if r["stride"] > 1}


def comparison_rows(ref: dict | None, mine: dict | None = None,
                    peak_bytes_per_s: float = specs.H200_SXM.hbm_bytes_per_s,
                    gpu: specs.GPUSpec = specs.H200_SXM) -> list:
    """Rows of the lab's table, each naming its claim (:data:`helpers.labs.memory_access.LAB`):
    the sector and HBM bounds at ``peak_bytes_per_s``, the shared-memory bound on ``gpu``'s
    datasheet, and the predictions built from the run's own stride-1 read and copy; with the
    H200 reference and the reader's GPU run (a CPU run has no column: its strides differ).
    The predictions come from the reference (or, without one, from the reader's GPU run)."""
    from helpers.labs.report import Row

    gpu_mine = mine if (mine is not None and mine.get("tier") == "gpu") else None
    basis = ref or gpu_mine
    rows = []
    for s in (1, 2, 8, 32):
        model = predicted_efficiency(s, ELEMENT_BYTES) * peak_bytes_per_s

        def bw(res, s=s):
            if res is None:
                return None
            return next((r["useful_bytes_per_s"] for r in
                         res["measurements"]["strided_read"]["rows"] if r["stride"] == s), None)
        rows.append(Row(f"strided read, stride {s}", "TB/s", 1e12, model=model, h200=bw(ref),
                        yours=bw(gpu_mine), claim=LAB.claim("strided_sector_bound")))
    predicted = strided_time_predictions(basis) if basis is not None else {}
    for s in STRIDES[1:]:
        rows.append(Row(f"strided read time, stride {s}", "µs", 1e-6, model=predicted.get(s),
                        h200=_strided_time(ref, s), yours=_strided_time(gpu_mine, s),
                        claim=LAB.claim("strided_read_time")))
    m, n = (basis or {"measurements": {"transpose": {"shape": [8192, 8192]}}})[
        "measurements"]["transpose"]["shape"]
    bounds = {"copy": 1, "torch": 1, "triton_tiled": 1, "triton_naive": m}
    for op, write_stride in bounds.items():
        q = 2.0 * m * n * ELEMENT_BYTES
        model = q / predicted_transpose_time_s(m, n, peak_bytes_per_s, write_stride=write_stride)

        def rate(res, op=op):
            if res is None:
                return None
            return res["measurements"]["transpose"]["ops"].get(op, {}).get("bytes_per_s")
        rows.append(Row(f"{op.replace('_', ' ')} ({m} x {n})", "TB/s", 1e12, model=model,
                        h200=rate(ref), yours=rate(gpu_mine),
                        claim=LAB.claim("transpose_hbm_bound")))
    copy_s = _op_time(basis, "copy")
    for op, write_stride in (("triton_tiled", 1), ("triton_naive", m)):
        model = (transpose_time_from_copy_s(copy_s, write_stride=write_stride)
                 if copy_s is not None else None)
        rows.append(Row(f"{op.replace('_', ' ')} time", "µs", 1e-6, model=model,
                        h200=_op_time(ref, op), yours=_op_time(gpu_mine, op),
                        claim=LAB.claim("transpose_time")))
    bm, bn = (basis["measurements"]["bank_conflicts"].get("shape", [m, n]) if basis is not None
              else [8192, 8192])
    for pad in (0, 1):
        model = smem_transpose_min_time_s(bm, bn, padding_words=pad, n_sms=gpu.sm_count,
                                          clock_hz=gpu.boost_clock_hz,
                                          mem_bytes_per_s=peak_bytes_per_s)
        rows.append(Row(f"smem transpose tile[32][{32 + pad}] time", "µs", 1e-6, model=model,
                        h200=_bank_time(ref, pad), yours=_bank_time(gpu_mine, pad),
                        claim=LAB.claim("smem_transpose_bound")))
    return rows


def check_numbers(ref: dict | None, counters: dict | None = None) -> dict[str, str]:
    """The numbers the page's "Check" glues about its predictions, formatted, each
    :data:`~helpers.labs.core.MISSING` where the reference (or that part of it) is absent:
    the stride-1 read rate and its write-back share, the step from stride 8 to 16, the largest
    error over strides 2 to 16, the errors at 32 and 64 (signed), the sparse rates there and
    the clause saying whether both errors are within the tolerance, the spans of the two
    sweeps, the transposes' errors and the median error of the lab's predictions; from the
    ncu ``counters`` (``memory_access_counters.json``), the DRAM bytes per float and the DRAM
    throughput at strides 16, 32 and 64 of the lab's sweep (with a clause reading them), and how much the time per float
    at stride 64 moves over the span sweep's reads of 2**21 floats and more."""
    from helpers import units
    from helpers.labs.core import MISSING

    keys = ("stream_tbs", "writeback_us", "writeback_pct", "t16_over_t8", "max_err_2_16_pct",
            "err_s32", "err_s64", "sparse_within", "rate_s32_tbs", "rate_s64_tbs",
            "span_s16_gb", "span_s32_gb", "span_s64_gb", "tiled_err", "naive_err",
            "naive_copies", "median_err_pct", "smem_pad0_bound_pct", "ctr_bpf_s16",
            "ctr_bpf_s32", "ctr_bpf_s64", "ctr_dram_pct_s16", "ctr_dram_pct_s32",
            "ctr_dram_pct_s64", "ctr_dram_clause", "ctr_span_lo_gb", "ctr_span_hi_gb", "ctr_span_spread_pct")
    out = dict.fromkeys(keys, MISSING)
    for r in counter_rows(counters, "same_n"):
        if r["stride"] in (16, 32, 64) and r["dram_bytes_per_float"] is not None:
            out[f"ctr_bpf_s{r['stride']}"] = f"{r['dram_bytes_per_float']:.3g}"
        if r["stride"] in (16, 32, 64) and r["dram_pct"] is not None:
            out[f"ctr_dram_pct_s{r['stride']}"] = f"{r['dram_pct']:.2g}"
    pct = {r["stride"]: r["dram_pct"] for r in counter_rows(counters, "same_n")}
    if all(pct.get(s) is not None for s in (16, 32, 64)):
        out["ctr_dram_clause"] = (
            "the same bytes keep the DRAM busy longer when they are scattered"
            if pct[64] < pct[32] < pct[16] else
            "the DRAM's share of its peak does not fall steadily as the gaps grow")
    full = max((c["n_elements"] for c in counters["measurements"]["cases"]
                if c["layout"] == "same_n"), default=0) if counters else 0
    sweep = [r for r in counter_rows(counters, "span_sweep") if r["stride"] == 64
             and r["n"] * 16 >= full and r["time_per_float_s"] is not None]
    if len(sweep) >= 2:
        t = [r["time_per_float_s"] for r in sweep]
        out["ctr_span_lo_gb"] = f"{min(r['span_bytes'] for r in sweep) / units.GB:.2g}"
        out["ctr_span_hi_gb"] = f"{max(r['span_bytes'] for r in sweep) / units.GB:.2g}"
        out["ctr_span_spread_pct"] = f"{100 * (max(t) - min(t)) / min(t):.2g}"
    if ref is None:
        return out
    sr = ref["measurements"]["strided_read"]
    n, dirty, t1 = sr["n_elements"], dirty_bytes(ref), _strided_time(ref, 1)
    rate = stream_rate_bytes_per_s(n, 1, t1, dirty_bytes=dirty, bytes_per_element=sr["element_bytes"])
    out["stream_tbs"] = f"{rate / units.TB:.3g}"
    out["writeback_us"] = f"{dirty / rate / units.us:.3g}"
    out["writeback_pct"] = f"{100 * dirty / rate / t1:.2g}"
    strides = {r["stride"] for r in sr["rows"]}
    if {8, 16} <= strides:
        out["t16_over_t8"] = f"{_strided_time(ref, 16) / _strided_time(ref, 8):.3g}"
    for s in (16, 32, 64):
        if s in strides:
            out[f"span_s{s}_gb"] = f"{n * s * sr['element_bytes'] / units.GB:.2g}"
    for s, r in sparse_rates(ref).items():
        if s in (32, 64):
            out[f"rate_s{s}_tbs"] = f"{r / units.TB:.3g}"
    rows = [r for r in comparison_rows(ref) if r.model is not None and r.h200 is not None]
    err = {r.quantity: (r.model - r.h200) / r.h200 for r in rows if r.claim.kind == "prediction"}
    near = [abs(err[f"strided read time, stride {s}"]) for s in (2, 4, 8, 16)
            if f"strided read time, stride {s}" in err]
    if near:
        out["max_err_2_16_pct"] = f"{100 * max(near):.2g}"
    far = {s: err.get(f"strided read time, stride {s}") for s in (32, 64)}
    for s, e in far.items():
        if e is not None:
            out[f"err_s{s}"] = f"{100 * e:+.2g} %"
    if all(e is not None for e in far.values()):
        tol = LAB.claim("strided_read_time").tolerance
        inside = sum(abs(e) <= tol for e in far.values())
        out["sparse_within"] = ("both within the tolerance" if inside == 2 else
                                "one of them outside the tolerance" if inside == 1 else
                                "both outside the tolerance")
    for op in ("tiled", "naive"):
        e = err.get(f"triton {op} time")
        if e is not None:
            out[f"{op}_err"] = f"{100 * e:+.2g}"
    copy_s, naive_s = _op_time(ref, "copy"), _op_time(ref, "triton_naive")
    if copy_s is not None and naive_s is not None:
        out["naive_copies"] = f"{naive_s / copy_s:.3g}"
    if err:
        e = sorted(abs(v) for v in err.values())
        mid = len(e) // 2
        out["median_err_pct"] = f"{100 * (e[mid] if len(e) % 2 else (e[mid - 1] + e[mid]) / 2):.2g}"
    smem = [r for r in rows if r.quantity == "smem transpose tile[32][32] time"]
    if smem:
        out["smem_pad0_bound_pct"] = f"{100 * smem[0].claim.fraction_of_bound(smem[0].model, smem[0].h200):.3g}"
    return out


def comparison_table(ref: dict | None, mine: dict | None, peak_bytes_per_s: float):
    """The lab's table: model | H200 | error | yours (yours only from a GPU run)."""
    from helpers.labs.report import Table

    gpu_mine = mine if (mine is not None and mine.get("tier") == "gpu") else None
    return Table("Memory access: model vs measured", comparison_rows(ref, mine, peak_bytes_per_s),
                 yours_label="yours (GPU)" if gpu_mine is not None else None)


#: The counters :func:`counter_rows` reads, by the name it gives them.
COUNTER_KEYS = {"dram_read": "dram__bytes_read.sum", "l2_read": "lts__t_sectors_op_read.sum",
                "l2_miss": "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
                "time": "gpu__time_duration.sum",
                "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                "dram_cycles": "dram__cycles_elapsed.avg"}


def counter_rows(counters: dict | None, layout: str | None = None) -> list[dict]:
    """Per counted read of ``counters`` (``memory_access_counters.json``; only ``layout`` if
    given): its layout, stride, floats, span (bytes), DRAM bytes read per float, L2 read
    sectors and L2 read-miss sectors per float, kernel time per float (s), DRAM throughput (%
    of peak) and the DRAM clock (Hz, cycles over time). A counter the run lacks reads None."""
    if counters is None:
        return []
    out = []
    for c in counters["measurements"]["cases"]:
        if layout is not None and c["layout"] != layout:
            continue
        m, n = c["metrics"], c["n_elements"]
        get = {k: m.get(metric) for k, metric in COUNTER_KEYS.items()}

        def per(k, n=n, get=get):
            return None if get[k] is None else get[k] / n
        clock = (get["dram_cycles"] / get["time"] if get["dram_cycles"] and get["time"]
                 else None)
        out.append({"layout": c["layout"], "stride": c["stride"], "n": n,
                    "span_bytes": float(n * c["stride"] * ELEMENT_BYTES),
                    "dram_bytes_per_float": per("dram_read"),
                    "l2_sectors_per_float": per("l2_read"),
                    "l2_miss_sectors_per_float": per("l2_miss"),
                    "time_per_float_s": per("time"), "dram_pct": get["dram_pct"],
                    "dram_clock_hz": clock})
    return out


def format_counter_rows(rows: list[dict]) -> str:
    """The rows of :func:`counter_rows` as a fixed-width text table."""
    from helpers import units

    def f(x, spec):
        return "-" if x is None else format(x, spec)
    lines = [f"{'layout':>10} {'stride':>6} {'span GB':>8} {'DRAM B/float':>12} "
             f"{'L2 sect/float':>13} {'L2 miss/float':>13} {'ps/float':>9} {'DRAM %':>7}"]
    for r in rows:
        t = None if r["time_per_float_s"] is None else r["time_per_float_s"] / 1e-12
        lines.append(f"{r['layout']:>10} {r['stride']:>6} {r['span_bytes'] / units.GB:>8.3g} "
                     f"{f(r['dram_bytes_per_float'], '.3g'):>12} "
                     f"{f(r['l2_sectors_per_float'], '.3g'):>13} "
                     f"{f(r['l2_miss_sectors_per_float'], '.3g'):>13} {f(t, '.3g'):>9} "
                     f"{f(r['dram_pct'], '.3g'):>7}")
    return "\n".join(lines)
