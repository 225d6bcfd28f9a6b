"""Figures of the page "Networking fundamentals" ({ref}`sec-networking`).

* :func:`opening_animation`: a request and its reply cross a connection quickly; then the
  same request written in two pieces waits for a delayed acknowledgement.
* :func:`structure_diagram`: the layers a message crosses, and which of them loopback skips.
* :func:`round_trip_figure` (matplotlib): measured round-trip time against message size, with
  the fitted latency-bandwidth line.

Every number drawn comes from the arguments.

Used by: foundations/networking.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from ..models import latency_bandwidth as lb
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "round_trip_figure"]


def _dot(c: Canvas, path: str, color: str, dur: float, t0: float, t1: float) -> None:
    """A dot that travels ``path`` between fractions t0 and t1 of a ``dur``-second loop."""
    c.raw(f'<circle r="7" fill="{color}" opacity="0"><animateMotion path="{path}" dur="{dur}s" '
          f'keyPoints="0;0;1;1" keyTimes="0;{t0:.3f};{t1:.3f};1" calcMode="linear" '
          f'repeatCount="indefinite"/><animate attributeName="opacity" values="0;0;1;1;0;0" '
          f'keyTimes="0;{t0:.3f};{t0 + 0.003:.3f};{t1:.3f};{t1 + 0.003:.3f};1" dur="{dur}s" '
          f'repeatCount="indefinite"/></circle>')


def opening_animation() -> Figure:
    """A quick request and reply; then a split request stalled by Nagle and a delayed ACK."""
    c = Canvas(760, 260, "One round trip, and the same request stalled by a delayed ACK",
               uid="net-open", description=(
                   "Animated diagram. A client on the left and a server on the right, joined "
                   "by a connection. First a request crosses to the server and the reply comes "
                   "straight back: one round trip. Then the client writes the same request in "
                   "two pieces. The header crosses; the body waits at the client (Nagle's "
                   "algorithm holds it until the header is acknowledged); the server holds "
                   "its acknowledgement on a timer; only when the timer fires does the ACK "
                   "return, the body cross and the reply come back, many times later."))
    host, net, acc, q = PALETTE["host"], PALETTE["network"], PALETTE["accent"], PALETTE["queue"]
    c.box(30, 90, 130, 80, "client", sublabel="inference API", color=host)
    c.box(600, 90, 130, 80, "server", sublabel="model worker", color=host)
    c.line(162, 130, 598, 130, stroke=MUTED, both=True)
    right, left = "M165,120 L595,120", "M595,140 L165,140"
    dur = 9.0
    _dot(c, right, net, dur, 0.02, 0.07)           # request
    _dot(c, left, net, dur, 0.07, 0.12)            # reply
    _dot(c, right, acc, dur, 0.30, 0.35)           # header
    _dot(c, left, q, dur, 0.75, 0.80)              # the delayed ACK
    _dot(c, right, acc, dur, 0.80, 0.85)           # body
    _dot(c, left, net, dur, 0.85, 0.90)            # reply
    hold = Canvas.animate("opacity", [0, 0, 1, 1, 0, 0], dur_s=dur,
                          key_times=[0, 0.35, 0.36, 0.75, 0.76, 1])
    c.text(380, 190, "body held by Nagle; ACK held by the server's timer", size=12.5, fill=q,
           weight="600", children=hold)
    one = Canvas.animate("opacity", [1, 1, 0, 0], dur_s=dur, key_times=[0, 0.25, 0.26, 1])
    two = Canvas.animate("opacity", [0, 0, 1, 1], dur_s=dur, key_times=[0, 0.27, 0.28, 1])
    c.text(380, 40, "one write: request and reply, one round trip", size=14, weight="600",
           children=one)
    c.text(380, 40, "two writes with Nagle on: the request stalls", size=14, weight="600",
           children=two)
    c.text(380, 235, "Click to pause.", size=11.5, fill=MUTED)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """The layers a message crosses between two processes, and what loopback skips."""
    c = Canvas(780, 330, "The path of a message, and the part loopback leaves out",
               uid="net-struct", description=(
                   "Diagram. Two stacks, sender and receiver, each: the application, its "
                   "socket buffer, the kernel's TCP and IP layers, and a network card. Between "
                   "the cards: cables and switches. A loopback connection turns around inside "
                   "the kernel below IP, so it exercises the application, the system calls, "
                   "TCP and IP, but not the card, the wire, the switches, distance, loss or "
                   "congestion."))
    host, net, mem, acc = PALETTE["host"], PALETTE["network"], PALETTE["memory"], PALETTE["accent"]
    layers = [("application", host), ("socket buffer", mem), ("TCP", net), ("IP", net),
              ("network card", PALETTE["neutral"])]
    for x, side in ((40, "sender"), (560, "receiver")):
        c.text(x + 90, 24, side, size=12.5, fill=MUTED)
        for i, (name, col) in enumerate(layers):
            c.box(x, 38 + i * 52, 180, 40, name, color=col, size=12)
    c.box(300, 250, 180, 40, "wire and switches", sublabel="distance, loss, congestion",
          color=PALETTE["neutral"], size=11.5)
    c.line(220, 268, 298, 268, stroke=MUTED, both=True)
    c.line(482, 268, 558, 268, stroke=MUTED, both=True)
    c.path("M 222 200 C 300 200, 300 150, 222 150", stroke=acc, width=2.2, arrow=True)
    c.text(320, 170, "loopback turns back", size=11.5, fill=acc, anchor="start")
    c.text(320, 186, "inside the kernel", size=11.5, fill=acc, anchor="start")
    c.text(390, 118, "system calls: send, recv", size=11.5, fill=MUTED)
    return c.figure()


def round_trip_figure(sizes_bytes: Sequence[float], times_s: Sequence[float], *,
                      fit: tuple[float, float] | None = None, ax=None):
    """Measured round-trip time against message size (log-log), with the fitted line
    ``fit`` = (latency_s, bandwidth_bytes_per_s) of :func:`~helpers.models.latency_bandwidth.
    transfer_time_s`."""
    fig, ax = new_figure(height_in=3.3) if ax is None else (ax.figure, ax)
    n = np.asarray(sizes_bytes, dtype=float)
    t = np.asarray(times_s, dtype=float)
    ax.loglog(n, t / units.us, "o", color=COLORS["network"], ms=6, label="measured here (median)")
    if fit is not None:
        grid = np.logspace(np.log10(n.min()), np.log10(n.max()), 100)
        a, b = fit
        ax.loglog(grid, lb.transfer_time_s(grid, a, b) / units.us, "--", color=COLORS["accent"],
                  label=f"α + n/B: α = {a / units.us:.3g} µs, B = {b / units.GB:.3g} GB/s")
    ax.set_xlabel("message size n (bytes), each way")
    ax.set_ylabel("round trip (µs)")
    ax.legend(loc="upper left")
    return fig
