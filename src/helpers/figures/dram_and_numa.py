"""Figures of the page "RAM, DRAM and NUMA" ({ref}`sec-dram-and-numa`).

* :func:`opening_animation`: two sockets, each with its own DRAM; a core's loads to its own
  memory come back quickly, loads to the other socket's memory cross the link and take longer.
* :func:`structure_diagram`: from a core to a DRAM cell: memory controller, channels, DIMMs,
  ranks, chips, banks, rows and the row buffer; and the second socket behind the link.
* :func:`numa_latency_figure` (matplotlib): the model's mean latency against the remote
  fraction, for the ratios passed in.

Every number drawn comes from the arguments or from :mod:`helpers.models.dram`.

Used by: foundations/dram-and-numa.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from ..models import dram
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "numa_latency_figure"]


def opening_animation() -> Figure:
    """Loads from one core: to its own socket's DRAM (short) and to the other socket's (long)."""
    c = Canvas(760, 300, "Local and remote loads on a two-socket machine", uid="numa-open",
               description=(
                   "Animated diagram. Two sockets side by side, each a box with cores and a "
                   "memory controller, each with its own DRAM modules below it. A link joins the "
                   "two sockets. A core on socket 0 sends loads: some go down to the DRAM of "
                   "socket 0 and come back quickly; others cross the link to socket 1, go down "
                   "to its DRAM, and come back over the link, taking about twice as long."))
    host, mem, net, acc = PALETTE["host"], PALETTE["memory"], PALETTE["network"], PALETTE["accent"]
    for k, x in enumerate((40, 440)):
        c.box(x, 40, 280, 90, f"socket {k}", sublabel="cores, caches, memory controller",
              color=host)
        c.box(x + 20, 200, 240, 60, f"DRAM of node {k}", color=mem, fill_opacity=0.16)
        c.line(x + 140, 130, x + 140, 200, stroke=mem, width=2, both=True)
    c.line(320, 85, 440, 85, stroke=net, width=3, both=True)
    c.text(380, 74, "socket link", size=12, fill=MUTED)
    dur = 5.0
    # A local load: down to node 0's DRAM and back. A remote one: over the link, down, back.
    c.raw(f'<circle r="6" fill="{host}" opacity="0"><animateMotion path="M180,120 L180,215 '
          f'L180,120" dur="{dur}s" keyPoints="0;0;1;1" keyTimes="0;0.05;0.25;1" '
          f'calcMode="linear" repeatCount="indefinite"/><animate attributeName="opacity" '
          f'values="0;0;1;1;0;0" keyTimes="0;0.05;0.055;0.25;0.255;1" dur="{dur}s" '
          f'repeatCount="indefinite"/></circle>')
    c.raw(f'<circle r="6" fill="{acc}" opacity="0"><animateMotion path="M200,100 L560,100 '
          f'L560,215 L560,100 L200,100" dur="{dur}s" keyPoints="0;0;1;1" '
          f'keyTimes="0;0.4;0.8;1" calcMode="linear" repeatCount="indefinite"/><animate '
          f'attributeName="opacity" values="0;0;1;1;0;0" keyTimes="0;0.4;0.405;0.8;0.805;1" '
          f'dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    c.text(380, 288, "Click to pause. Green: a local load. Pink: a remote load, which crosses "
           "the link twice.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """From the memory controller to a DRAM cell, and the second socket behind the link."""
    c = Canvas(780, 330, "How DRAM is organised behind one socket", uid="numa-struct",
               description=(
                   "Diagram. A socket's memory controller drives several channels; each channel "
                   "is a 64-bit bus to one or two DIMMs. A DIMM holds ranks of DRAM chips that "
                   "answer together; each chip has banks; each bank is a grid of rows and "
                   "columns with a row buffer. Reading a column of the open row is fast; opening "
                   "another row costs a precharge and an activate. On the right, the second "
                   "socket with its own controller and DRAM, reached over the socket link."))
    host, mem, net = PALETTE["host"], PALETTE["memory"], PALETTE["network"]
    c.box(20, 20, 170, 60, "memory controller", sublabel="on the CPU die", color=host, size=12)
    for k in range(2):
        y = 110 + 80 * k
        c.line(105, 80, 105, y + 25, stroke=mem, width=1.5)
        c.line(105, y + 25, 150, y + 25, stroke=mem, width=2.2, arrow=True)
        c.text(55, y + 30, f"channel {k}", size=11.5, fill=MUTED)
        c.box(150, y, 150, 50, "DIMM", sublabel="64-bit bus, ranks", color=mem, size=12)
    c.box(330, 110, 200, 170, "", color=mem, fill_opacity=0.08)
    c.text(430, 128, "one DRAM chip", size=12, weight="600")
    for b in range(4):
        c.rect(345 + 45 * b, 142, 38, 70, fill=mem, stroke=mem, opacity=0.25)
        c.text(364 + 45 * b, 180, f"bank {b}", size=9.5)
    c.rect(345, 222, 173, 22, fill=PALETTE["queue"], stroke=PALETTE["queue"], opacity=0.3)
    c.text(431, 237, "row buffer (the open row)", size=11)
    c.text(431, 266, "rows x columns of cells", size=11, fill=MUTED)
    c.line(300, 135, 330, 160, stroke=mem, width=1.2, dash="4 3")
    c.box(580, 20, 180, 60, "socket 1", sublabel="its own controller", color=host, size=12)
    c.box(580, 120, 180, 60, "DRAM of node 1", color=mem, size=12)
    c.line(670, 80, 670, 120, stroke=mem, width=2, both=True)
    c.line(190, 50, 580, 50, stroke=net, width=2.6, both=True)
    c.text(385, 42, "socket link (remote loads cross it)", size=11.5, fill=MUTED)
    c.text(670, 215, "a column read from the open row:", size=11, fill=MUTED)
    c.text(670, 231, "fast; another row: precharge,", size=11, fill=MUTED)
    c.text(670, 247, "activate, then read", size=11, fill=MUTED)
    c.text(390, 315, "Bandwidth adds up across channels; latency is set by the row cycle and "
           "the distance.", size=12, fill=MUTED)
    return c.figure()


def numa_latency_figure(local_latency_s: float, ratios: Sequence[float], *, ax=None):
    """Mean load latency (:func:`~helpers.models.dram.numa_mean_latency_s`) against the remote
    fraction, one line per remote-to-local ratio, with the interleaved two-node point marked."""
    fig, ax = new_figure(height_in=3.3) if ax is None else (ax.figure, ax)
    f = np.linspace(0.0, 1.0, 101)
    cols = [COLORS["memory"], COLORS["accent"], COLORS["queue"], COLORS["network"]]
    f2 = dram.interleaved_remote_fraction(2)
    for k, rho in enumerate(ratios):
        t = [dram.numa_mean_latency_s(local_latency_s, rho * local_latency_s, x) for x in f]
        ax.plot(f, np.asarray(t) / units.ns, color=cols[k % len(cols)], lw=2,
                label=f"remote = {rho:g} x local")
        ax.plot([f2], [dram.numa_mean_latency_s(local_latency_s, rho * local_latency_s, f2)
                       / units.ns], "o", color=cols[k % len(cols)])
    ax.axvline(f2, color=COLORS["neutral"], ls=":", lw=1.2)
    ax.annotate("pages interleaved\nover two nodes", (f2, 0.97), xycoords=("data", "axes fraction"),
                va="top", ha="right", fontsize=8.5, color=COLORS["neutral"])
    ax.set_xlabel("fraction of loads served by the other node's memory")
    ax.set_ylabel("mean load latency (ns)")
    ax.set_xlim(0, 1)
    ax.legend(loc="lower right", fontsize=8.5)
    return fig
