"""What the data-parallel lab's pages compute from a result: the bucket model's prediction of
each configuration's step and exposed communication (from the run's own forward, backward and
optimizer times and its all-reduce sweep), and the comparison table's rows.

Reads a result of :mod:`helpers.labs.data_parallel` (the shipped H200 reference or the reader's
run); the runner measures, this module only reads.
"""

from __future__ import annotations

from helpers.labs.data_parallel import LAB
from helpers.models import distributed_analysis as da

__all__ = ["predict", "model_rows", "comparison_rows", "exposure_evidence"]


def predict(result: dict) -> dict:
    """The bucket model's step and exposed communication for each configuration of ``result``.

    alpha and beta come from a fit of the ring all-reduce model to the all-reduce sweep (the
    slower rank's median at each size); forward, backward and optimizer times are the slower
    rank's medians.
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
    out = {"alpha_s": fit.alpha_s, "beta_s_per_byte": fit.beta_s_per_byte,
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
        measured = max(r["timings"][name]["step"]["median_s"] for r in m["ranks"])
        out["configs"][name] = {"n_buckets": len(buckets), "bucket_comm_s": comm,
                                "total_comm_s": sum(comm), "step_s": step,
                                "exposed_comm_s": exposed, "measured_step_s": measured,
                                "measured_exposed_s": max(measured - compute, 0.0)}
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
        rows.append(report.Row(f"step, {label}", "ms", 1e-3, model=src["configs"][name]["step_s"],
                               h200=h["measured_step_s"] if h else None,
                               yours=mine["configs"][name]["measured_step_s"],
                               claim=LAB.claim("step_time")))
        # a measured exposed time of zero (all hidden) has no relative error: leave it blank
        h_exp = h["measured_exposed_s"] if h and h["measured_exposed_s"] > 0 else None
        rows.append(report.Row(f"exposed comm, {label}", "ms", 1e-3,
                               model=src["configs"][name]["exposed_comm_s"], h200=h_exp,
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


def exposure_evidence(result: dict, hbm_bytes_per_s: float) -> dict:
    """What the exposed-communication rows leave out, from ``result`` itself (seconds): the
    measured exposure's excess over the model's in each configuration; the all-reduce of the
    whole gradient as the sweep measured it alone (the slower rank's median at the sweep's
    largest size, the whole gradient) against the fit's value there; and the least time DDP's
    copy of the reduced gradients back out of their buckets takes (read and write of every
    gradient byte at ``hbm_bytes_per_s``, a datasheet bound)."""
    from helpers.models import collectives

    pred = predict(result)
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
    return {"excess_s": excess, "sweep_largest_bytes": size, "allreduce_alone_s": alone,
            "allreduce_fit_s": fitted, "gradient_bytes": grad_bytes,
            "copy_out_min_s": 2.0 * grad_bytes / hbm_bytes_per_s}
