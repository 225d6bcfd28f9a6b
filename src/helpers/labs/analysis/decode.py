"""What the decode lab's page computes from a result (:mod:`helpers.labs.decode`).

Per point, the measured step time beside the bandwidth bound (:func:`point_rows`); where one
profiled step's time goes (:func:`kernel_breakdown`); the eager step predicted from the host's
time per launch measured in the same run (:func:`launch_s`, :func:`eager_rows`); the page's
model-vs-H200 rows and table (:func:`comparison_rows`, :func:`comparison_table`) and a summary
of a result (:func:`describe`).

The rows name the lab's claims (:data:`helpers.labs.decode.LAB`): tokens per second against
the datasheet-bandwidth bound (``tokens_hbm_bound``, a bound), and the eager step's time
(``eager_step``, a prediction).
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.decode import GPU, LAB
from helpers.labs.report import Row, Table
from helpers.models import decode_bandwidth as bw_model
from helpers.models import launch as launch_model

__all__ = ["point_rows", "kernel_breakdown", "launch_s", "eager_rows", "comparison_rows",
           "comparison_table", "describe"]

def _best(point: dict) -> tuple[float, str]:
    """The faster of the eager and graph medians, and which it was."""
    t, how = point["eager"]["median_s"], "eager"
    if point.get("graph") and point["graph"]["median_s"] < t:
        t, how = point["graph"]["median_s"], "graph"
    return t, how


def point_rows(result: dict, gpu: specs.GPUSpec = GPU) -> list[dict]:
    """Per (model, context, batch): measured and modelled step time and tokens per second.

    ``bound_s`` uses the datasheet bandwidth of ``gpu`` on a GPU result and the measured copy
    bandwidth on a CPU result (a CPU has no datasheet here); ``copy_bound_s`` always uses the
    measured copy bandwidth; ``roofline_s`` adds the compute roof of the matrix multiplies
    (:func:`helpers.models.decode_bandwidth.decode_step_time_s`, ``gpu``'s bf16 peak).
    """
    m = result["measurements"]
    copy_bw = m["copy"]["bytes_per_s"]
    spec_bw = gpu.hbm_bytes_per_s if result["tier"] == "gpu" else copy_bw
    rows = []
    for mod in m["models"]:
        esize, n_mm = mod["bytes_per_element"], mod["matmul_parameters"]
        w = n_mm * esize
        for p in mod["points"]:
            b, ctx = p["batch"], p["context"]
            kv_seq = p["kv_bytes"] / b
            t, how = _best(p)
            row = {"model": mod["name"], "batch": b, "context": ctx, "step_bytes": p["step_bytes"],
                   "kv_fraction": p["kv_bytes"] / p["step_bytes"],
                   "eager_s": p["eager"]["median_s"],
                   "graph_s": p["graph"]["median_s"] if p.get("graph") else None,
                   "step_s": t, "timed": how, "tokens_per_s": b / t,
                   "bound_s": bw_model.decode_step_time_lower_bound_s(w, kv_seq, b, spec_bw),
                   "copy_bound_s": bw_model.decode_step_time_lower_bound_s(w, kv_seq, b, copy_bw),
                   "roofline_s": bw_model.decode_step_time_s(w, kv_seq, b, spec_bw, n_mm,
                                                             gpu.peak_flop_per_s("bf16"))
                   if result["tier"] == "gpu" else None,
                   "kernels_per_step": p.get("kernels_per_step"),
                   "stock_s": p["stock_eager"]["median_s"] if p.get("stock_eager") else None}
            row["model_tokens_per_s"] = b / row["bound_s"]
            row["bandwidth_fraction"] = row["bound_s"] / t
            row["achieved_bytes_per_s"] = p["step_bytes"] / t
            rows.append(row)
    return rows


def kernel_breakdown(result: dict, model: str, context: int, batch: int) -> dict | None:
    """Where one profiled decode step's time goes, from its kernel profile
    (:func:`helpers.profiling.dispatch.kernel_profile`): the matrix multiplies (time, count, and the step's bytes over their time), the other kernels (time,
    count, mean time each), and the step's time (graph replay if measured, else eager) not
    covered by any kernel (``idle_s``: launch gaps between kernels), beside the copy-bandwidth
    bound of the step's bytes. None when that point has no profile (a CPU result)."""
    m = result["measurements"]
    for mod in m["models"]:
        if mod["name"] != model:
            continue
        for p in mod["points"]:
            prof = p.get("kernel_profile")
            if (p["context"], p["batch"]) != (context, batch) or not prof:
                continue
            step_s, how = _best(p)
            return {"step_s": step_s, "timed": how, "kernels": prof["kernels"],
                    "kernel_time_s": prof["kernel_time_s"],
                    "matmul_kernels": prof["matmul_kernels"], "matmul_s": prof["matmul_time_s"],
                    "matmul_bytes_per_s": p["step_bytes"] / prof["matmul_time_s"],
                    "other_kernels": prof["other_kernels"], "other_s": prof["other_time_s"],
                    "other_each_s": prof["other_time_s"] / max(1, prof["other_kernels"]),
                    "idle_s": max(0.0, step_s - prof["kernel_time_s"]),
                    "copy_bound_s": p["step_bytes"] / m["copy"]["bytes_per_s"],
                    "copy_bytes_per_s": m["copy"]["bytes_per_s"]}
    return None


def launch_s(result: dict) -> dict | None:
    """The host's time per kernel launch, measured in the same run: the eager step of the
    smallest model (``book-lm``) at one sequence and its shortest context, over the kernels the
    profiler counted in it. Its CUDA graph replays the same kernels in a tenth of that time, so
    the host's launches (PyTorch's per-operator work and the driver's), not the device, set its
    pace. None when no such point was profiled (a CPU result)."""
    mods = result["measurements"]["models"]
    if len(mods) < 2:
        return None
    small = min(mods, key=lambda mod: mod["matmul_parameters"])
    pts = sorted((p for p in small["points"] if p["batch"] == 1 and p.get("kernels_per_step")),
                 key=lambda p: p["context"])
    if not pts or not pts[0].get("graph"):
        return None
    p = pts[0]
    return {"model": small["name"], "context": p["context"], "kernels": p["kernels_per_step"],
            "eager_s": p["eager"]["median_s"], "graph_s": p["graph"]["median_s"],
            "launch_s": p["eager"]["median_s"] / p["kernels_per_step"]}


def eager_rows(result: dict) -> list[dict]:
    """Per profiled point of the larger models: the eager step's measured time beside
    :func:`helpers.models.launch.eager_step_time_s`, the slower of the host's launches (the
    point's kernel count times :func:`launch_s`) and the device's work (the point's CUDA graph
    replay). Empty without a profile and a graph (a CPU result)."""
    host = launch_s(result)
    if host is None:
        return []
    rows = []
    for mod in result["measurements"]["models"]:
        if mod["name"] == host["model"]:
            continue
        for p in mod["points"]:
            if not (p.get("kernels_per_step") and p.get("graph")):
                continue
            n, dev = p["kernels_per_step"], p["graph"]["median_s"]
            rows.append({"model": mod["name"], "context": p["context"], "batch": p["batch"],
                         "kernels": n, "launch_s": host["launch_s"], "host_s": n * host["launch_s"],
                         "device_s": dev, "eager_s": p["eager"]["median_s"],
                         "model_s": launch_model.eager_step_time_s(n, host["launch_s"], dev)})
    return rows


def comparison_rows(ref: dict | None, mine: dict | None = None, model: str | None = None,
                    context: int | None = None) -> list[Row]:
    """Model | H200 | yours rows for one model (default: the reference's scaled model): tokens
    per second per batch size at one context (default: its shortest) against the datasheet-
    bandwidth bound (claim ``tokens_hbm_bound``), then the eager step's time at every profiled
    point against :func:`eager_rows`' prediction (claim ``eager_step``)."""
    bound, eager = LAB.claim("tokens_hbm_bound"), LAB.claim("eager_step")
    base = ref or mine
    if base is None:
        return []
    model = model or base["measurements"]["models"][0]["name"]
    r_ref = {} if ref is None else {(r["model"], r["context"], r["batch"]): r
                                    for r in point_rows(ref)}
    r_mine = {} if mine is None else {(r["model"], r["context"], r["batch"]): r
                                      for r in point_rows(mine)}
    if context is None:
        ctxs = sorted({k[1] for k in (r_ref or r_mine) if k[0] == model})
        context = ctxs[0] if ctxs else 0
    rows = []
    keys = sorted({k for k in list(r_ref) + list(r_mine) if k[0] == model and k[1] == context},
                  key=lambda k: k[2])
    for k in keys:
        a, b = r_ref.get(k), r_mine.get(k)
        rows.append(Row(f"{model} S={context} B={k[2]}", "tok/s", 1.0,
                        model=a["model_tokens_per_s"] if a else None,
                        h200=a["tokens_per_s"] if a else None,
                        yours=b["tokens_per_s"] if b else None, claim=bound))
    e_ref = {} if ref is None else {(r["model"], r["context"], r["batch"]): r
                                    for r in eager_rows(ref)}
    e_mine = {} if mine is None else {(r["model"], r["context"], r["batch"]): r
                                      for r in eager_rows(mine)}
    for k in sorted({k for k in list(e_ref) + list(e_mine) if k[0] == model}):
        a, b = e_ref.get(k), e_mine.get(k)
        rows.append(Row(f"{model} S={k[1]} B={k[2]}, eager step", "ms", 1e-3,
                        model=a["model_s"] if a else None, h200=a["eager_s"] if a else None,
                        yours=b["eager_s"] if b else None, claim=eager))
    return rows


def comparison_table(ref: dict | None, mine: dict | None, model: str | None = None,
                     context: int | None = None) -> Table:
    """The lab's table of :func:`comparison_rows` (one row saying so when nothing is measured)."""
    rows = comparison_rows(ref, mine, model, context) or [Row("no measurement yet", "tok/s", 1.0)]
    return Table("Decode: tokens per second against the bandwidth bound, eager step time "
                 "against the launch model", rows,
                 yours_label="yours" if mine is not None else None)


def describe(result: dict) -> str:
    """A few lines summarizing a result."""
    m = result["measurements"]
    lines = [f"copy bandwidth {m['copy']['bytes_per_s'] / 1e9:.3g} GB/s"]
    for mod in m["models"]:
        c = mod["check"]
        lines.append(f"{mod['name']}: {mod['parameters']:,} parameters ({mod['dtype']}); batched "
                     f"vs alone {c['batched_vs_alone']:.1g}, read-once vs stock "
                     f"{c['read_once_vs_stock']:.1g}")
    for r in point_rows(result):
        g = f", graph {r['graph_s'] * 1e3:.3g} ms" if r["graph_s"] else ""
        lines.append(f"{r['model']:>16} S={r['context']:>5} B={r['batch']:>4}: eager "
                     f"{r['eager_s'] * 1e3:.3g} ms{g}; {r['tokens_per_s']:.4g} tok/s, "
                     f"{r['bandwidth_fraction']:.0%} of the bandwidth bound")
    return "\n".join(lines)

