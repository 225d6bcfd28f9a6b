"""The explorer of {ref}`sec-fault-tolerance`.

* :func:`checkpoint_explorer`: move the number of nodes, one node's MTBF, the checkpoint cost
  and the restart cost; see the job's MTBF, Young's and Daly's intervals and the goodput curve
  (:func:`helpers.models.checkpointing.goodput`).

Used by: chapters/fault-tolerance.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures.fault_tolerance import goodput_figure
from ..models import checkpointing as ck
from . import explorer, int_slider, log_slider

__all__ = ["draw_checkpoint", "checkpoint_explorer"]

HOUR, MIN = 3600.0, 60.0


def draw_checkpoint(n_nodes: int, node_mtbf_h: float, checkpoint_min: float, restart_min: float):
    """Goodput against the interval for the job these inputs describe; the title says the
    job's MTBF, Daly's interval and the goodput there."""
    mtbf = ck.cluster_mtbf_s(node_mtbf_h * HOUR, n_nodes)
    delta, restart = checkpoint_min * MIN, restart_min * MIN
    tau = ck.daly_interval_s(delta, mtbf)
    fig = goodput_figure(delta, restart, mtbf, title="", unit_s=MIN, unit="min")
    fig.axes[0].set_title(
        f"job MTBF {mtbf / HOUR:.3g} h: Young {ck.young_interval_s(delta, mtbf) / MIN:.3g} min, "
        f"Daly {tau / MIN:.3g} min, goodput {ck.goodput(tau, delta, restart, mtbf):.1%}",
        fontsize=10.5)
    return fig


def checkpoint_explorer(n_nodes: int = 2048, node_mtbf_h: float = 50_000.0,
                        checkpoint_min: float = 1.0, restart_min: float = 10.0) -> widgets.VBox:
    """Nodes, node MTBF (hours), checkpoint and restart cost (minutes) -> interval, goodput."""
    controls = {
        "n_nodes": int_slider("nodes N", n_nodes, 1, 32_768, 1),
        "node_mtbf_h": log_slider("node MTBF (h)", node_mtbf_h, 1e3, 1e6),
        "checkpoint_min": log_slider("checkpoint δ (min)", checkpoint_min, 0.05, 60.0),
        "restart_min": log_slider("restart R (min)", restart_min, 0.1, 120.0),
    }
    return explorer(draw_checkpoint, controls, title="Checkpoint interval explorer")
