"""Explorer of the page "Network topology and collective communication" ({ref}`sec-collectives`).

:func:`collective_explorer`: ranks, message size, alpha and the link bandwidth; the figure shows
ring and tree all-reduce times (:mod:`helpers.models.collectives`) and the bus bandwidth, and
its title the chosen size's time, algbw and busbw.

Used by: chapters/collectives.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from .. import units
from ..figures import collectives as figs
from ..models import collectives as model
from . import explorer, int_slider, log_slider

__all__ = ["draw_collective", "collective_explorer"]


def draw_collective(ranks: int, message_bytes: float, alpha_us: float, bandwidth_gb_per_s: float):
    """The explorer's figure for its four control values."""
    p, n = int(ranks), float(message_bytes)
    a, b = alpha_us * units.us, 1.0 / (bandwidth_gb_per_s * units.GB)
    fig = figs.cost_figure(p, a, b, marker_bytes=n)
    ring = float(model.ring_allreduce_time_s(n, p, a, b))
    tree = float(model.tree_allreduce_time_s(n, p, a, b))
    algbw = float(model.algbw_bytes_per_s(n, ring))
    busbw = float(model.busbw_bytes_per_s(n, ring, "all_reduce", p))
    fig.suptitle(f"{p} ranks, {units.fmt_bytes(n)}: ring {units.fmt_time(ring)} "
                 f"(algbw {units.fmt_rate(algbw, 'B/s')}, busbw {units.fmt_rate(busbw, 'B/s')}); "
                 f"tree {units.fmt_time(tree)}", fontsize=10)
    return fig


def collective_explorer(ranks: int = 8, message_bytes: float = 2**20, alpha_us: float = 10.0,
                        bandwidth_gb_per_s: float = 450.0) -> widgets.VBox:
    """Move the ranks, the message size, alpha and the link bandwidth."""
    controls = {
        "ranks": int_slider("ranks p", ranks, 2, 64),
        "message_bytes": log_slider("message size (bytes)", message_bytes, 1, 2**34, base=2,
                                    step=0.5, fmt=".3g"),
        "alpha_us": log_slider("α: latency per step (µs)", alpha_us, 0.1, 1000),
        "bandwidth_gb_per_s": log_slider("link bandwidth 1/β (GB/s)", bandwidth_gb_per_s, 1, 2000),
    }
    return explorer(draw_collective, controls, title="Collective cost explorer")
