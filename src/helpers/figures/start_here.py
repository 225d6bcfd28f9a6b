"""Figures of the primer "Start here" ({ref}`sec-start-here`).

* :func:`opening_animation`: a core asks memory for one byte; the request crosses the
  latency, and a whole cache line comes back at the bandwidth.
* :func:`structure_diagram`: the primer's map, from bytes in one machine to replicas agreeing
  across many, with latency and bandwidth on every path.
* :func:`bytes_diagram`: bytes, a 64-byte cache line, a number and a pointer in it.
* :func:`threads_animation`: two threads on two cores share a counter behind a lock.
* :func:`replication_animation`: a network call to a leader, copied to replicas; a majority
  answers and the write is committed.
* :func:`transfer_time_figure` (matplotlib): time against size for one latency and one
  bandwidth, with the half-bandwidth size; optional measured points.

Every number drawn comes from the arguments; none is typed here.

Used by: foundations/start-here.md.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import units
from ..models import latency_bandwidth as lb
from .style import COLORS, new_figure
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram", "bytes_diagram", "threads_animation",
           "replication_animation", "transfer_time_figure"]

GREY = PALETTE["neutral"]


def opening_animation(*, line_bytes: int = 64) -> Figure:
    """One load, animated: a request travels to memory (latency), a cache line returns."""
    c = Canvas(760, 250, "One load: the request crosses the latency, a cache line comes back",
               uid="start-open", description=(
                   "Animated diagram. A core on the left asks for one byte. A small request "
                   "travels along a long wire to memory on the right; that trip is the latency. "
                   f"Memory answers with a whole cache line of {line_bytes} bytes, drawn as a "
                   "train of blocks that streams back; how fast the train moves is the "
                   "bandwidth. The core then reads neighbouring bytes from its cache at once."))
    host, mem, acc = PALETTE["host"], PALETTE["memory"], PALETTE["accent"]
    dur = 4.0
    c.box(20, 70, 130, 110, "core", sublabel="+ its cache", color=host)
    c.box(610, 50, 130, 150, "memory", sublabel="DRAM", color=mem)
    c.line(150, 105, 610, 105, stroke=acc, width=1.5, opacity=0.5, dash="5 4")
    c.line(610, 150, 150, 150, stroke=mem, width=6, opacity=0.25)
    c.text(380, 88, "request: where is byte 1000?  (pays the latency)", size=12.5, fill=MUTED)
    c.text(380, 176, f"answer: the whole {line_bytes}-byte line  (rides the bandwidth)",
           size=12.5, fill=MUTED)
    # The request: one dot, first half of the cycle.
    c.raw(f'<circle r="6" fill="{acc}" opacity="0">'
          f'<animateMotion path="M152,105 L606,105" dur="{dur}s" keyPoints="0;1;1" '
          f'keyTimes="0;0.45;1" calcMode="linear" repeatCount="indefinite"/>'
          f'<animate attributeName="opacity" values="0;1;1;0;0" keyTimes="0;0.02;0.44;0.46;1" '
          f'dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    # The answer: a train of 8 blocks, second half of the cycle.
    n = 8
    for k in range(n):
        t0 = 0.5 + k * 0.025
        t1 = t0 + 0.3
        c.raw(f'<rect x="-7" y="-7" width="14" height="14" rx="2" fill="{mem}" opacity="0">'
              f'<animateMotion path="M606,150 L152,150" dur="{dur}s" keyPoints="0;0;1;1" '
              f'keyTimes="0;{t0:.3f};{t1:.3f};1" calcMode="linear" repeatCount="indefinite"/>'
              f'<animate attributeName="opacity" values="0;0;1;1;0;0" '
              f'keyTimes="0;{t0 - 0.01:.3f};{t0:.3f};{t1 - 0.01:.3f};{t1:.3f};1" dur="{dur}s" '
              f'repeatCount="indefinite"/></rect>')
    # The cache row in the core fills when the train arrives.
    for k in range(n):
        t_arrive = 0.8 + k * 0.02
        fill = Canvas.animate("opacity", [0.1, 0.1, 0.9, 0.9, 0.1],
                              key_times=[0, t_arrive, t_arrive + 0.01, 0.97, 1], dur_s=dur)
        c.rect(34 + k * 13, 150, 11, 14, fill=mem, stroke="none", rx=2, opacity=0.1,
               children=fill)
    c.text(380, 228, "Click to pause. Latency: how long until the first byte arrives. "
           "Bandwidth: how many bytes per second follow it.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """The primer's map: one core, one machine, many machines; latency and bandwidth on paths."""
    c = Canvas(780, 320, "The primer's map: from a byte to replicas that agree",
               uid="start-struct", description=(
                   "Diagram in three nested regions. Inside one core: bytes and cache lines. "
                   "Inside one machine: several cores running threads that share memory through "
                   "pointers and take turns through locks. Across machines: network calls, "
                   "replication of data to several machines, and consensus among them. Every "
                   "arrow between regions is labelled latency and bandwidth."))
    host, mem, net, q, acc = (PALETTE["host"], PALETTE["memory"], PALETTE["network"],
                              PALETTE["queue"], PALETTE["accent"])
    # one machine
    c.rect(14, 40, 430, 220, fill="none", stroke=host, stroke_width=1.8, rx=10)
    c.text(229, 26, "one machine", size=13.5, weight="600")
    c.box(30, 60, 120, 80, "core", sublabel="registers, L1, L2", color=host)
    c.box(30, 160, 120, 80, "core", sublabel="another thread", color=host)
    c.box(300, 60, 130, 180, "memory", sublabel="bytes, cache lines", color=mem)
    c.box(175, 110, 95, 80, "lock", sublabel="one at a time", color=q)
    c.line(150, 100, 298, 100, stroke=mem, width=2, both=True)
    c.line(150, 200, 298, 200, stroke=mem, width=2, both=True)
    c.text(222, 88, "pointers", size=11, fill=MUTED)
    c.text(222, 218, "loads, stores", size=11, fill=MUTED)
    # many machines
    c.rect(480, 40, 286, 220, fill="none", stroke=net, stroke_width=1.8, rx=10)
    c.text(623, 26, "many machines", size=13.5, weight="600")
    for i, (y, label) in enumerate([(60, "leader"), (130, "replica"), (200, "replica")]):
        c.box(620, y, 130, 50, label, color=net if i else acc)
    c.box(495, 120, 100, 70, "network", sublabel="calls", color=net)
    c.line(595, 145, 618, 90, stroke=net, arrow=True)
    c.line(685, 110, 685, 128, stroke=net, arrow=True)
    c.line(750, 85, 760, 85, stroke=net)
    c.path("M750,85 L760,85 L760,225 L752,225", stroke=net, arrow=True)
    c.text(623, 278, "replication, consensus (a majority agrees)", size=11.5, fill=MUTED)
    c.line(444, 155, 493, 155, stroke=GREY, width=2, arrow=True)
    c.text(390, 306, "every arrow: a latency (s) and a bandwidth (bytes/s)", size=12.5,
           fill=acc, weight="600")
    return c.figure()


def bytes_diagram(*, line_bytes: int = 64, int_bytes: int = 4, pointer_bytes: int = 8,
                  int_offset: int = 8, pointer_offset: int = 40) -> Figure:
    """A cache line as a row of bytes, a 4-byte number and an 8-byte pointer inside it."""
    if not (0 <= int_offset and int_offset + int_bytes <= pointer_offset
            and pointer_offset + pointer_bytes <= line_bytes):
        raise ValueError("the number and the pointer must fit in the line without overlap")
    c = Canvas(780, 190, f"A {line_bytes}-byte cache line: bytes, a number and a pointer",
               uid="start-bytes", description=(
                   f"Diagram. A row of {line_bytes} small squares, one per byte, framed as one "
                   f"cache line. {int_bytes} adjacent bytes are marked as one integer, "
                   f"{pointer_bytes} as a pointer, whose value is the address of another line, "
                   "drawn as an arrow leaving the row."))
    mem, acc, comp = PALETTE["memory"], PALETTE["accent"], PALETTE["compute"]
    w = 740 / line_bytes
    x0, y0 = 20, 60
    for b in range(line_bytes):
        color = mem
        if int_offset <= b < int_offset + int_bytes:
            color = comp
        elif pointer_offset <= b < pointer_offset + pointer_bytes:
            color = acc
        c.rect(x0 + b * w, y0, w - 1.5, 30, fill=color, stroke="none", rx=1.5,
               opacity=0.75 if color != mem else 0.25)
    c.rect(x0 - 4, y0 - 4, line_bytes * w + 6, 38, fill="none", stroke=mem, stroke_width=2, rx=5)
    c.text(x0, 38, f"one cache line = {line_bytes} bytes, moved as a unit", anchor="start",
           size=13, weight="600")
    c.text(x0 + (int_offset + int_bytes / 2) * w, 112, f"a number: {int_bytes} bytes", size=12,
           fill=MUTED)
    px = x0 + (pointer_offset + pointer_bytes / 2) * w
    c.text(px, 112, f"a pointer: {pointer_bytes} bytes", size=12, fill=MUTED)
    c.path(f"M{px:.1f},124 C{px:.1f},168 {px - 160:.1f},168 {px - 180:.1f},150", stroke=acc,
           width=1.8, arrow=True)
    c.text(px - 186, 146, "the address of", anchor="end", size=11.5, fill=MUTED)
    c.text(px - 186, 162, "another line", anchor="end", size=11.5, fill=MUTED)
    c.text(x0, 150, "byte 0 of the line", anchor="start", size=11, fill=MUTED)
    return c.figure()


def threads_animation() -> Figure:
    """Two threads on two cores take turns on a shared counter through a lock."""
    c = Canvas(760, 230, "Two threads, one counter, one lock", uid="start-threads",
               description=(
                   "Animated diagram. Two cores each run a thread that wants to add one to a "
                   "shared counter in memory. A lock token sits between them; a thread may "
                   "update the counter only while it holds the token, so the two updates "
                   "happen one after the other and none is lost. The other thread waits."))
    host, q, mem = PALETTE["host"], PALETTE["queue"], PALETTE["memory"]
    dur = 4.0
    c.box(30, 40, 150, 60, "thread A", sublabel="core 0", color=host)
    c.box(30, 140, 150, 60, "thread B", sublabel="core 1", color=host)
    c.box(560, 80, 170, 80, "counter", sublabel="shared memory", color=mem)
    c.text(370, 18, "the lock: whoever holds it may touch the counter", size=12.5, fill=MUTED)
    # lock token moves A -> counter -> back, then B -> counter -> back
    path_a = "M190,70 L540,110 L190,70"
    path_b = "M190,170 L540,130 L190,170"
    c.raw(f'<circle r="9" fill="{q}"><animateMotion path="{path_a}" dur="{dur}s" '
          f'keyPoints="0;1;1;0;0;0" keyTimes="0;0.2;0.25;0.45;0.5;1" calcMode="linear" '
          f'repeatCount="indefinite"/><animate attributeName="opacity" values="1;1;0;0;1" '
          f'keyTimes="0;0.45;0.46;0.99;1" dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.raw(f'<circle r="9" fill="{q}" opacity="0"><animateMotion path="{path_b}" dur="{dur}s" '
          f'keyPoints="0;0;1;1;0;0" keyTimes="0;0.5;0.7;0.75;0.95;1" calcMode="linear" '
          f'repeatCount="indefinite"/><animate attributeName="opacity" values="0;0;1;1;0" '
          f'keyTimes="0;0.5;0.51;0.95;1" dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    # waiting indicators
    wait_b = Canvas.animate("opacity", [1, 1, 0, 0, 1], key_times=[0, 0.45, 0.5, 0.97, 1],
                            dur_s=dur)
    wait_a = Canvas.animate("opacity", [0, 0, 1, 1, 0], key_times=[0, 0.45, 0.5, 0.97, 1],
                            dur_s=dur)
    c.text(105, 120, "B waits", size=12, fill=MUTED, children=wait_b)
    c.text(105, 120, "A waits", size=12, fill=MUTED, children=wait_a)
    c.text(645, 185, "+1, then +1: nothing lost", size=12, fill=MUTED)
    return c.figure()


def replication_animation(*, n_replicas: int = 3) -> Figure:
    """A write travels to a leader, is copied to replicas, and commits once a majority acks."""
    if n_replicas < 1:
        raise ValueError(f"n_replicas must be >= 1, got {n_replicas}")
    n_nodes = n_replicas + 1
    majority = n_nodes // 2 + 1
    c = Canvas(760, 60 + 70 * n_replicas, "A network call, replicated, committed by a majority",
               uid="start-repl", description=(
                   f"Animated diagram. A client sends a write over the network to a leader, "
                   f"which copies it to {n_replicas} replicas. Each copy and each "
                   f"acknowledgement is a network call with its own latency. Once "
                   f"{majority} of the {n_nodes} machines hold the write (a majority), the leader "
                   f"answers the client: the write is committed even if one machine is slow."))
    net, acc, host = PALETTE["network"], PALETTE["accent"], PALETTE["host"]
    dur = 4.0
    h = 60 + 70 * n_replicas
    mid = h / 2
    c.box(20, mid - 30, 110, 60, "client", color=host)
    c.box(260, mid - 30, 120, 60, "leader", color=acc)
    ys = [50 + 70 * i for i in range(n_replicas)]
    for i, y in enumerate(ys):
        c.box(560, y - 25, 140, 50, f"replica {i + 1}", color=net)
        c.line(380, mid, 558, y, stroke=net, width=1.3, opacity=0.5)
    c.line(130, mid, 258, mid, stroke=GREY, width=1.3, opacity=0.6)
    c.moving_dot(f"M132,{mid} L258,{mid}", dur_s=dur, r=6, color=acc)
    for i, y in enumerate(ys):
        slow = i == n_replicas - 1 and n_replicas > 1
        c.raw(f'<circle r="5" fill="{net}" opacity="0"><animateMotion path="M382,{mid} L556,{y} '
              f'L382,{mid}" dur="{dur}s" keyPoints="0;0;{0.5};{1 if not slow else 0.5};1" '
              f'keyTimes="0;0.25;{0.45 if not slow else 0.8};{0.65 if not slow else 0.95};1" '
              f'calcMode="linear" repeatCount="indefinite"/><animate attributeName="opacity" '
              f'values="0;0;1;1;0" keyTimes="0;0.24;0.25;0.95;1" dur="{dur}s" '
              f'repeatCount="indefinite"/></circle>')
    commit = Canvas.animate("opacity", [0, 0, 1, 1, 0], key_times=[0, 0.66, 0.68, 0.97, 1],
                            dur_s=dur)
    c.text(320, mid + 50, f"committed: {majority} of {n_nodes} hold it", size=12.5, fill=acc,
           weight="600", children=commit)
    c.text(195, mid - 14, "call", size=11, fill=MUTED)
    return c.figure()


def transfer_time_figure(latency_s: float, bandwidth_bytes_per_s: float, *, label: str = "",
                         measured: Sequence[tuple[float, float]] = (), ax=None):
    """Time of one transfer against its size (log-log), eq. transfer-time, with n_1/2 marked.

    ``measured`` holds (bytes, seconds) pairs drawn as points.
    """
    fig, ax = new_figure(height_in=3.4) if ax is None else (ax.figure, ax)
    n_half = lb.half_bandwidth_bytes(latency_s, bandwidth_bytes_per_s)
    lo, hi = max(n_half / 1e4, 1.0), n_half * 1e4
    if measured:
        lo = min(lo, min(x for x, _ in measured) / 2)
        hi = max(hi, max(x for x, _ in measured) * 2)
    sizes = np.logspace(np.log10(lo), np.log10(hi), 300)
    t = lb.transfer_time_s(sizes, latency_s, bandwidth_bytes_per_s)
    ax.loglog(sizes, t, color=COLORS["accent"], lw=2.4, label=label or "latency + size / bandwidth")
    ax.loglog(sizes, np.full_like(sizes, latency_s), color=COLORS["network"], ls=":", lw=1.4,
              label=f"latency alone ({units.fmt_time(latency_s)})")
    ax.loglog(sizes, sizes / bandwidth_bytes_per_s, color=COLORS["memory"], ls="--", lw=1.4,
              label=f"bytes at {units.fmt_rate(bandwidth_bytes_per_s, 'B/s')}")
    ax.axvline(n_half, color=COLORS["neutral"], lw=1)
    ax.annotate(f"half-bandwidth size {units.fmt_bytes(n_half)}", (n_half, latency_s),
                xytext=(8, 30), textcoords="offset points", fontsize=9,
                color=COLORS["neutral"])
    if measured:
        xs, ys = zip(*measured)
        ax.loglog(xs, ys, "o", color=COLORS["compute"], ms=6, label="measured here")
    ax.set_xlabel("bytes moved in one transfer")
    ax.set_ylabel("time (s)")
    ax.legend(loc="upper left")
    return fig
