"""What the data-parallel lab's pages compute from a result: the bucket model's prediction of
each configuration's step and exposed communication (from the run's own forward, backward and
optimizer times and its all-reduce sweep), and the comparison table's rows.

Reads a result of :mod:`helpers.labs.data_parallel` (the shipped H200 reference or the reader's
run); the runner measures, this module only reads.
"""

from __future__ import annotations

from helpers.labs.data_parallel import LAB
from helpers.models import distributed_analysis as da

__all__ = ["predict", "copy_rate_of", "model_rows", "comparison_rows", "exposure_evidence",
           "overlap_stretch"]


def copy_rate_of(result: dict) -> float | None:
    """The copy rate the DDP model charges its gradient copies at (bytes read plus written per
    second): the datasheet HBM bandwidth of the run's GPU (an upper limit, so the copies are at
    least that long), or None where the run names no GPU the specs know (a CPU run)."""
    from helpers import specs

    name = str(result.get("provenance", {}).get("device_name", ""))
    return specs.H200_SXM.hbm_bytes_per_s if "H200" in name else None


def predict(result: dict, copy_bytes_per_s: float | None = None) -> dict:
    """The bucket model's step and exposed communication for each configuration of ``result``.

    alpha and beta come from a fit of the ring all-reduce model to the all-reduce sweep (the
    slower rank's median at each size); forward, backward and optimizer times are the slower
    rank's medians. The DDP model (``ddp_step_s``, ``ddp_exposed_s``) reads each bucket's
    all-reduce off the measured sweep itself (log-log between its points) and adds DDP's
    copies of the gradients into the buckets and back at ``copy_bytes_per_s`` (by default
    :func:`copy_rate_of`; without a rate the copies are left out).
    """
    from helpers.models import collectives

    m = result["measurements"]
    n = len(m["ranks"])
    sweep = [max(r["allreduce_sweep"][i]["median_s"] for r in m["ranks"])
             for i in range(len(m["ranks"][0]["allreduce_sweep"]))]
    sizes = [p["bytes"] for p in m["ranks"][0]["allreduce_sweep"]]
    fit = collectives.fit_alpha_beta(sizes, sweep, n)
    t = lambda key: max(r["timings"][key]["median_s"] for r in m["ranks"])
    forward, optimizer, compute = t("forward"), t("optimizer"), t("compute_step")
    backward = max(compute - forward - optimizer, 1e-9)
    rate = copy_bytes_per_s if copy_bytes_per_s is not None else copy_rate_of(result)
    curve = sorted(zip(sizes, sweep))
    out = {"alpha_s": fit.alpha_s, "copy_bytes_per_s": rate, "beta_s_per_byte": fit.beta_s_per_byte,
           "fit_residuals": [float(v) for v in fit.residuals],
           "forward_s": forward, "backward_s": backward, "optimizer_s": optimizer,
           "compute_step_s": compute, "configs": {}}
    for name in result["settings"]["configs"]:
        buckets = m["ranks"][0]["timings"][name]["bucket_bytes"]
        total = sum(buckets)
        comm = [float(collectives.ring_allreduce_time_s(b, n, fit.alpha_s, fit.beta_s_per_byte))
                for b in buckets]
        frac = [b / total for b in buckets]
        step = da.dp_step_time_s(forward_s=forward, backward_s=backward, bucket_comm_s=comm,
                                 bucket_grad_fractions=frac, optimizer_s=optimizer)
        exposed = da.dp_exposed_comm_s(forward_s=forward, backward_s=backward,
                                       bucket_comm_s=comm, bucket_grad_fractions=frac)
        swept = [da.measured_curve_s(b, [x for x, _ in curve], [t for _, t in curve])
                 for b in buckets]
        if rate:
            ddp_exposed = da.ddp_exposed_comm_s(forward_s=forward, backward_s=backward,
                                                bucket_comm_s=swept, bucket_bytes=buckets,
                                                copy_bytes_per_s=rate)
        else:
            ddp_exposed = da.dp_exposed_comm_s(forward_s=forward, backward_s=backward,
                                               bucket_comm_s=swept, bucket_grad_fractions=frac)
        measured = max(r["timings"][name]["step"]["median_s"] for r in m["ranks"])
        out["configs"][name] = {"n_buckets": len(buckets), "bucket_comm_s": comm,
                                "total_comm_s": sum(comm), "step_s": step,
                                "exposed_comm_s": exposed, "measured_step_s": measured,
                                "measured_exposed_s": max(measured - compute, 0.0),
                                "bucket_sweep_s": swept, "ddp_exposed_s": ddp_exposed,
                                "ddp_step_s": compute + ddp_exposed}
    return out


def model_rows(result: dict, reference: dict | None = None):
    """Rows of the lab's table: model vs the H200 reference vs this run (``result``)."""
    from helpers.labs import report

    mine = predict(result)
    ref = predict(reference) if reference is not None else None
    rows = []
    for name, label in (("per_layer", "bucket per layer"), ("one_bucket", "one bucket")):
        src = ref or mine
        h = ref["configs"][name] if ref else None
        rows.append(report.Row(f"step, {label}", "ms", 1e-3, model=src["configs"][name]["ddp_step_s"],
                               h200=h["measured_step_s"] if h else None,
                               yours=mine["configs"][name]["measured_step_s"],
                               claim=LAB.claim("step_time")))
        # a measured exposed time of zero (all hidden) has no relative error: leave it blank
        h_exp = h["measured_exposed_s"] if h and h["measured_exposed_s"] > 0 else None
        rows.append(report.Row(f"exposed comm, {label}", "ms", 1e-3,
                               model=src["configs"][name]["ddp_exposed_s"], h200=h_exp,
                               yours=mine["configs"][name]["measured_exposed_s"],
                               claim=LAB.claim("exposed_comm")))
    return rows


def comparison_rows(reference: dict | None, yours: dict | None = None) -> list:
    """:func:`model_rows` in the form every lab shares: the H200 reference's model and
    measurements, and the reader's run when one is given."""
    from dataclasses import replace

    if reference is None:
        return model_rows(yours) if yours is not None else []
    rows = model_rows(yours if yours is not None else reference, reference)
    return rows if yours is not None else [replace(r, yours=None) for r in rows]


def overlap_stretch(timeline: dict) -> list[dict]:
    """Per rank of a profiled step's aligned ``timeline``: how much longer the long kernels
    (at least half the longest's duration: the matrix products) take while a communication
    kernel runs beside them than while none does. Returns, per rank, the count and median
    duration (s) of each kind and the stretch: the overlapped kernels' total time beyond the
    free kernels' median, in seconds (0.0 when either kind is absent)."""
    import statistics

    out = []
    for r in timeline["ranks"]:
        comm, comp = r["comm"], r["compute"]
        longest = max((b - a for a, b in comp), default=0.0)
        big = [(a, b) for a, b in comp if b - a >= 0.5 * longest > 0]
        hit = lambda a, b: any(a < d and c < b for c, d in comm)
        over = [b - a for a, b in big if hit(a, b)]
        free = [b - a for a, b in big if not hit(a, b)]
        med_o = statistics.median(over) if over else None
        med_f = statistics.median(free) if free else None
        stretch = sum(over) - len(over) * med_f if over and free else 0.0
        out.append({"rank": r["rank"], "n_overlapped": len(over), "n_free": len(free),
                    "overlapped_median_s": med_o, "free_median_s": med_f,
                    "stretch_s": stretch})
    return out


def exposure_evidence(result: dict, hbm_bytes_per_s: float) -> dict:
    """What the exposed-communication rows rest on, from ``result`` itself (seconds): the
    measured exposure's excess over the bucket model's (alpha-beta fit, nothing else) and over
    the DDP model's (the measured sweep, the copies at ``hbm_bytes_per_s``) in each
    configuration; the all-reduce of the whole gradient as the sweep measured it alone (the
    slower rank's median at the sweep's largest size, the whole gradient) against the fit's
    value there; the least time each of DDP's two gradient copies takes (read and write of
    every gradient byte at ``hbm_bytes_per_s``, a datasheet bound); and the profiled step's
    :func:`overlap_stretch`."""
    from helpers.models import collectives

    pred = predict(result, hbm_bytes_per_s)
    m = result["measurements"]
    n = len(m["ranks"])
    sweep = m["ranks"][0]["allreduce_sweep"]
    largest = max(range(len(sweep)), key=lambda i: sweep[i]["bytes"])
    size = sweep[largest]["bytes"]
    alone = max(r["allreduce_sweep"][largest]["median_s"] for r in m["ranks"])
    fitted = float(collectives.ring_allreduce_time_s(size, n, pred["alpha_s"],
                                                     pred["beta_s_per_byte"]))
    grad_bytes = sum(m["ranks"][0]["timings"]["one_bucket"]["bucket_bytes"])
    excess = {name: c["measured_exposed_s"] - c["exposed_comm_s"]
              for name, c in pred["configs"].items()}
    residual = {name: c["measured_exposed_s"] - c["ddp_exposed_s"]
                for name, c in pred["configs"].items()}
    return {"excess_s": excess, "residual_s": residual,
            "ddp_exposed_s": {k: c["ddp_exposed_s"] for k, c in pred["configs"].items()},
            "sweep_largest_bytes": size, "allreduce_alone_s": alone,
            "allreduce_fit_s": fitted, "gradient_bytes": grad_bytes,
            "copy_out_min_s": 2.0 * grad_bytes / hbm_bytes_per_s,
            "stretch": overlap_stretch(m["timeline"])}
