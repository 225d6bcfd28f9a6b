"""Figures of the page "PCIe, DMA and interconnects" ({ref}`sec-pcie-and-interconnects`).

* :func:`opening_animation`: the same model weights stream from HBM to the SMs and, far more
  slowly, from host memory across PCIe; the dots' speeds are in the ratio of the bandwidths.
* :func:`structure_diagram`: a GPU server's links: CPU and DRAM, the PCIe root complex and
  switch, GPUs joined by NVLink, an NVMe drive and a NIC, and the paths GPUDirect shortens.
* :func:`link_times_figure` (matplotlib): time to move one set of weights over each link.
* :func:`copy_figure` (matplotlib): measured host copy times against size, with the fitted
  latency-bandwidth line.

Every number drawn comes from the arguments.

Used by: foundations/pcie-and-interconnects.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from ..models.latency_bandwidth import transfer_time_s
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "link_times_figure", "copy_figure"]


def opening_animation(*, hbm_bytes_per_s: float = 4.8e12, pcie_bytes_per_s: float = 64e9,
                      cycle_s: float = 6.0) -> Figure:
    """Weights stream over HBM and over PCIe; dot speeds in the ratio of the two bandwidths.

    In one ``cycle_s`` the HBM lane delivers ``n_hbm`` blocks while the PCIe lane moves one
    block a fraction ``pcie / hbm * n_hbm`` of the way (drawn at least a little, so it shows).
    """
    ratio = hbm_bytes_per_s / pcie_bytes_per_s
    c = Canvas(760, 290, "The same weights over HBM and over PCIe", uid="pcie-open",
               description=(
                   "Animated diagram. Top lane: blocks of model weights stream from HBM into "
                   "the GPU's SMs, many per second. Bottom lane: the same blocks start in host "
                   "memory and cross the PCIe link to the GPU; in the same time one block "
                   f"barely moves, because HBM is about {ratio:.0f} times faster than the link. "
                   "This is why weights are loaded onto the GPU once and read from HBM on "
                   "every step, never fetched across PCIe per request."))
    mem, host, acc = PALETTE["memory"], PALETTE["host"], PALETTE["accent"]
    c.text(380, 22, "One decode step reads every weight once: from HBM, or across PCIe?",
           size=14, weight="600")
    # Top lane: HBM -> SMs
    c.box(30, 50, 150, 60, "HBM", sublabel=f"{hbm_bytes_per_s / units.TB:.3g} TB/s", color=mem)
    c.box(580, 50, 150, 60, "SMs", sublabel="compute", color=PALETTE["compute"])
    c.line(180, 80, 578, 80, stroke=mem, width=6, opacity=0.35)
    n_hbm = 8
    for k in range(n_hbm):
        c.moving_dot("M 185 80 L 575 80", dur_s=cycle_s / 4, begin_s=k * cycle_s / (4 * n_hbm),
                     r=6, color=mem)
    # Bottom lane: host DRAM -> PCIe -> HBM
    c.box(30, 170, 150, 60, "host DRAM", sublabel="pinned buffer", color=host)
    c.box(580, 170, 150, 60, "GPU HBM", sublabel="destination", color=mem)
    c.line(180, 200, 578, 200, stroke=PALETTE["network"], width=2, opacity=0.6)
    c.text(380, 186, f"PCIe: {pcie_bytes_per_s / units.GB:.3g} GB/s each way", size=12,
           fill=PALETTE["network"])
    frac = max(0.02, min(1.0, n_hbm * 4 / ratio))
    x_end = 185 + frac * (575 - 185)
    dot = (Canvas.animate("cx", [185, x_end], dur_s=cycle_s)
           + Canvas.animate("opacity", [1, 1, 0], dur_s=cycle_s, key_times=[0, 0.95, 1]))
    c.circle(185, 200, 6, fill=acc, children=dot)
    c.mark_animated()
    c.text(380, 252, f"HBM delivers {4 * n_hbm} blocks while PCIe moves one "
           f"{100 * frac:.0f} % of the way  (bandwidth ratio {ratio:.0f}:1)", size=12,
           fill=MUTED)
    c.text(380, 274, "Click to pause.", size=11.5, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """A GPU server's links, and the paths GPUDirect Storage and GPUDirect RDMA shorten."""
    c = Canvas(800, 420, "The links inside a GPU server", uid="pcie-struct", description=(
        "Diagram. At the top, a CPU with its DRAM. Below it the PCIe root complex, and a PCIe "
        "switch that connects two GPUs, an NVMe drive and a network card (NIC). The two GPUs "
        "are also joined directly by NVLink. A dashed path shows the classic route from NVMe "
        "to a GPU: up to host DRAM (a bounce buffer) and down again. A second path shows "
        "GPUDirect Storage going from NVMe through the switch straight to GPU memory, and "
        "GPUDirect RDMA going from the NIC straight to GPU memory."))
    host, mem, net, acc, cmp = (PALETTE["host"], PALETTE["memory"], PALETTE["network"],
                                PALETTE["accent"], PALETTE["compute"])
    c.box(300, 20, 200, 56, "CPU", sublabel="memory controller", color=host)
    c.box(560, 20, 200, 56, "host DRAM", sublabel="bounce buffers live here", color=host)
    c.line(500, 48, 558, 48, stroke=host, both=True)
    c.box(300, 120, 200, 46, "PCIe root complex", color=PALETTE["neutral"], size=12.5)
    c.line(400, 76, 400, 118, stroke=PALETTE["neutral"], both=True)
    c.box(300, 210, 200, 46, "PCIe switch", color=PALETTE["neutral"], size=12.5)
    c.line(400, 168, 400, 206, stroke=net, width=1.8, both=True)
    c.text(470, 188, "PCIe x16", size=11, fill=net, anchor="start")
    boxes = [(20, "GPU 0", "HBM", cmp), (200, "GPU 1", "HBM", cmp),
             (430, "NVMe drive", "weights on disk", host), (610, "NIC", "RDMA", net)]
    for x, label, sub, col in boxes:
        c.box(x, 310, 160, 56, label, sublabel=sub, color=col)
        c.line(x + 80, 308, 400 + (x + 80 - 400) * 0.15, 258, stroke=net, width=2, both=True)
    c.line(180, 338, 200, 338, stroke=acc, width=6)
    c.text(190, 384, "NVLink", size=11.5, fill=acc)
    # classic path: NVMe -> DRAM -> GPU (dashed), GPUDirect: NVMe -> GPU (solid accent)
    c.path("M 510 308 L 510 284 L 785 284 L 785 48 L 764 48", stroke=MUTED, dash="5 4",
           arrow=True)
    c.path("M 660 20 L 660 8 L 8 8 L 8 338 L 16 338", stroke=MUTED, dash="5 4", arrow=True)
    c.text(775, 140, "without GPUDirect (dashed):", size=11, fill=MUTED, anchor="end")
    c.text(775, 154, "drive to host DRAM,", size=11, fill=MUTED, anchor="end")
    c.text(775, 168, "then host DRAM to GPU", size=11, fill=MUTED, anchor="end")
    c.path("M 470 306 C 420 280, 330 280, 290 306", stroke=mem, width=2.2, arrow=True)
    c.text(380, 296, "GPUDirect Storage", size=11, fill=mem)
    c.path("M 650 366 C 560 398, 340 398, 280 368", stroke=mem, width=2.2, arrow=True)
    c.text(470, 410, "GPUDirect RDMA", size=11, fill=mem)
    return c.figure()


def link_times_figure(links: dict[str, float], *, weight_bytes: float, ax=None):
    """Horizontal bars: seconds to move ``weight_bytes`` over each link (name -> bytes/s)."""
    fig, ax = new_figure(height_in=0.45 * len(links) + 1.2) if ax is None else (ax.figure, ax)
    names = list(links)
    t = np.array([weight_bytes / links[k] for k in names])
    colors = [COLORS["memory"] if "HBM" in k else COLORS["network"] for k in names]
    ax.barh(names, t, color=colors, alpha=0.85)
    for i, v in enumerate(t):
        ax.annotate(units.fmt_time(float(v)), (v, i), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(t.min() / 3, t.max() * 8)
    ax.invert_yaxis()
    ax.set_xlabel(f"time to move {weight_bytes / units.GB:.3g} GB once (s, log scale)")
    return fig


def copy_figure(sizes_bytes: Sequence[float], times_s: Sequence[float], *, latency_s: float,
                bandwidth_bytes_per_s: float, ax=None):
    """Measured copy time against size (log-log) with the fitted :math:`\\alpha + n/B`."""
    fig, ax = new_figure(height_in=3.2) if ax is None else (ax.figure, ax)
    n = np.asarray(sizes_bytes, dtype=float)
    ax.loglog(n, np.asarray(times_s) / units.us, "o", color=COLORS["host"], ms=6,
              label="measured here (median)")
    grid = np.geomspace(n.min(), n.max(), 100)
    ax.loglog(grid, transfer_time_s(grid, latency_s, bandwidth_bytes_per_s) / units.us, "--",
              color=COLORS["accent"],
              label=f"fit: {latency_s / units.us:.2g} us + n / {bandwidth_bytes_per_s / units.GB:.3g} GB/s")
    ax.set_xlabel("bytes copied")
    ax.set_ylabel("time (us)")
    ax.legend(loc="upper left")
    return fig
