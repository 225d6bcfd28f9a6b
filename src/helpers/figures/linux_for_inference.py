"""Figures of the page "Linux for inference engineers" ({ref}`sec-linux-for-inference`).

* :func:`opening_animation`: the same three requests in flight when the server is told to stop;
  with ``SIGTERM`` it drains them and exits, with ``SIGKILL`` they are cut and lost.
* :func:`structure_diagram`: a serving process and the kernel interfaces that bound it: its
  descriptors and limits, its CPU time in ``/proc``, the signals it receives, the kernel's tunables.
* :func:`utilization_figure` (matplotlib): CPU demanded against CPU granted, read from ``/proc``.

Every number drawn comes from the arguments.

Used by: foundations/linux-for-inference.md.
"""

from __future__ import annotations

from typing import Sequence

from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "utilization_figure"]


def opening_animation(*, remaining: Sequence[float] = (0.55, 0.25, 0.8),
                      elapsed: Sequence[float] = (0.45, 0.6, 0.2)) -> Figure:
    """Two copies of a server with three requests in flight: SIGTERM drains, SIGKILL cuts.

    ``elapsed[i]`` and ``remaining[i]`` are request ``i``'s work done and left when the signal
    arrives, as fractions of the drawn time span after and before the signal.
    """
    if len(remaining) != len(elapsed) or not remaining:
        raise ValueError("remaining and elapsed need one entry per request")
    c = Canvas(760, 330, "SIGTERM lets a server drain; SIGKILL loses the work in flight",
               uid="lin-open", description=(
                   "Animated timeline in two panels. In each, three requests are being served "
                   "when a signal arrives (the vertical line). Top panel, SIGTERM: the server "
                   "stops accepting, the three requests run on to completion, and the process "
                   "exits when the longest one ends. Bottom panel, SIGKILL: the bars stop at the "
                   "line and turn grey: the work already done on each request is lost and every "
                   "client has to retry."))
    host, acc, lost = PALETTE["host"], PALETTE["accent"], PALETTE["neutral"]
    x_sig, span, lane_h, dur = 330, 250, 22, 6.0
    t_sig = 0.45  # fraction of the animation at which the signal arrives
    panels = (("SIGTERM: stop accepting, finish, exit", 50, True),
              ("SIGKILL: stopped at once, work lost", 185, False))
    for title, y0, drains in panels:
        c.text(30, y0 - 12, title, size=13, anchor="start", weight="600")
        for i, (e, r) in enumerate(zip(elapsed, remaining)):
            y = y0 + i * (lane_h + 8)
            c.text(60, y + lane_h / 2 + 4, f"request {i + 1}", size=11, anchor="end", fill=MUTED)
            x_start = x_sig - e * span
            w_before = x_sig - x_start
            w_after = r * span if drains else 0.0
            grow = Canvas.animate("width", [0, 0, w_before, w_before + w_after, w_before + w_after],
                                  dur_s=dur, key_times=[0, 0.05, t_sig, t_sig + 0.3 * (1 - t_sig), 1])
            colour = host if drains else lost
            c.rect(x_start, y, 0, lane_h, fill=colour, stroke="none", rx=3, opacity=0.85,
                   children=grow)
            if not drains:  # the same bar, green until the signal, then grey
                fade = Canvas.animate("opacity", [0.85, 0.85, 0, 0], dur_s=dur,
                                      key_times=[0, t_sig - 0.01, t_sig, 1])
                c.rect(x_start, y, 0, lane_h, fill=host, stroke="none", rx=3, opacity=0.85,
                       children=grow + fade)
        c.line(x_sig, y0 - 6, x_sig, y0 + 3 * (lane_h + 8), stroke=acc, width=2)
        end = x_sig + (max(remaining) * span if drains else 0)
        c.text(end + 8, y0 + 1.5 * (lane_h + 8) + 4, "exit" if drains else "exit, 3 requests lost",
               size=12, anchor="start", fill=acc if not drains else MUTED)
    c.text(x_sig, 305, "signal arrives", size=12, fill=acc)
    c.mark_animated()
    return c.figure()


def structure_diagram() -> Figure:
    """A serving process and the kernel interfaces around it."""
    c = Canvas(780, 360, "What the kernel decides for a serving process",
               uid="lin-struct", description=(
                   "Diagram. In the middle, an inference server process. Around it, four kinds "
                   "of kernel interface. Top left: its file descriptors, one per socket, file or "
                   "pipe, capped by RLIMIT_NOFILE. Top right: its resource limits (nofile, "
                   "memlock, nproc). Bottom left: /proc/<pid>/stat, where the kernel records its "
                   "CPU time in clock ticks. Bottom right: signals, SIGTERM (can be handled: "
                   "drain) and SIGKILL (cannot). At the bottom, the kernel's tunables in /proc/sys "
                   "and /sys: transparent huge pages, swappiness, overcommit, somaxconn."))
    host, mem, net, q, acc = (PALETTE["host"], PALETTE["memory"], PALETTE["network"],
                              PALETTE["queue"], PALETTE["accent"])
    c.box(280, 130, 220, 70, "inference server", sublabel="one process, many threads",
          color=host, size=14)
    c.box(30, 30, 220, 70, "file descriptors", sublabel="sockets, files, pipes: one each",
          color=net, size=13)
    c.box(530, 30, 220, 70, "resource limits", sublabel="nofile, memlock, nproc", color=q, size=13)
    c.box(30, 220, 220, 70, "/proc/<pid>/stat", sublabel="CPU time in clock ticks", color=mem,
          size=13)
    c.box(530, 220, 220, 70, "signals", sublabel="SIGTERM: drain; SIGKILL: none", color=acc,
          size=13)
    c.box(30, 310, 720, 40, "kernel tunables (/proc/sys, /sys)",
          sublabel="huge pages, swappiness, overcommit, somaxconn", color=PALETTE["neutral"],
          size=12, fill_opacity=0.12)
    c.line(250, 70, 278, 145, stroke=net, arrow=True)
    c.line(530, 70, 502, 145, stroke=q, arrow=True)
    c.line(278, 190, 250, 245, stroke=mem, arrow=True)
    c.line(530, 245, 502, 190, stroke=acc, arrow=True)
    c.line(390, 200, 390, 308, stroke=PALETTE["neutral"], dash="4 3")
    return c.figure()


def utilization_figure(demanded: Sequence[float], granted: Sequence[float], *,
                       title: str = "CPU asked for and CPU granted"):
    """Measured utilization (from ``/proc``) against the fraction each child asked for."""
    if len(demanded) != len(granted) or not demanded:
        raise ValueError("demanded and granted need the same, non-zero length")
    fig, ax = new_figure(width_in=5.6, height_in=3.6)
    ax.plot([0, 1], [0, 1], color=COLORS["neutral"], lw=1.5, label="granted = asked (idle machine)")
    ax.plot(demanded, granted, "o", color=COLORS["host"], ms=7, label="measured in /proc")
    ax.set(xlim=(0, 1.05), ylim=(0, 1.05), xlabel="busy fraction the child asked for",
           ylabel="CPU seconds per second (/proc)", title=title)
    ax.legend(loc="upper left", fontsize=9)
    return fig
