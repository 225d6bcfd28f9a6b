"""Figures of the page "Threads, processes and context switches"
({ref}`sec-threads-and-processes`).

* :func:`opening_animation`: two processes share one CPU and pass a token through pipes;
  each hand-off blocks one process and switches the CPU to the other.
* :func:`structure_diagram`: a process (address space, page tables, open files) holding
  threads (each with its own stack and registers) that share its heap; the GIL in front of
  the interpreter; the kernel's scheduler placing threads on cores, with an affinity mask.

Used by: foundations/threads-and-processes.md.
"""

from __future__ import annotations

from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram"]


def opening_animation() -> Figure:
    """A ping-pong between two processes on one CPU: every hand-off is a context switch."""
    c = Canvas(760, 280, "Two processes, one CPU: every hand-off is a context switch",
               uid="thr-open", description=(
                   "Animated diagram. Process A on the left and process B on the right, joined "
                   "by two pipes. A single CPU in the middle runs one of them at a time, "
                   "highlighted. A token travels from A to B through the upper pipe; A blocks "
                   "waiting for the reply and the CPU switches to B; B sends the token back "
                   "through the lower pipe, blocks, and the CPU switches back to A."))
    host, acc, queue = PALETTE["host"], PALETTE["accent"], PALETTE["queue"]
    dur = 4.0
    for x, name in ((40, "process A"), (560, "process B")):
        c.box(x, 90, 160, 90, name, sublabel="blocked while waiting", color=host)
    c.line(200, 115, 560, 115, stroke=queue, width=2, arrow=True)
    c.line(560, 155, 200, 155, stroke=queue, width=2, arrow=True)
    c.text(380, 105, "pipe A -> B", size=11.5, fill=MUTED)
    c.text(380, 175, "pipe B -> A", size=11.5, fill=MUTED)
    c.box(320, 210, 120, 44, "one CPU", color=acc)
    # The CPU's owner: highlight A, then B, then A.
    for x, vals in ((40, "0.22;0;0;0.22;0.22"), (560, "0;0.22;0.22;0;0")):
        c.raw(f'<rect x="{x}" y="90" width="160" height="90" rx="6" fill="{acc}" opacity="0">'
              f'<animate attributeName="opacity" values="{vals}" keyTimes="0;0.25;0.5;0.75;1" '
              f'calcMode="discrete" dur="{dur}s" repeatCount="indefinite"/></rect>')
    c.raw(f'<circle r="7" fill="{acc}"><animateMotion path="M200,115 L560,115 L560,155 '
          f'L200,155 L200,115" keyPoints="0;0.45;0.5;0.95;1" keyTimes="0;0.2;0.5;0.7;1" '
          f'calcMode="linear" dur="{dur}s" repeatCount="indefinite"/></circle>')
    c.mark_animated()
    c.text(380, 30, "a round trip costs two switches, two writes and two reads", size=12.5,
           fill=MUTED)
    c.text(380, 272, "Click to pause. The shaded process is the one the CPU is running.",
           size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Processes own resources, threads own execution state; the GIL; the scheduler."""
    c = Canvas(780, 330, "Processes, threads, the GIL and the scheduler", uid="thr-struct",
               description=(
                   "Diagram. A process box holds its address space and page tables, its open "
                   "files, and a shared heap. Inside it, three threads, each with its own stack "
                   "and registers. In front of the Python interpreter sits the GIL: only the "
                   "thread holding it runs Python bytecode; a thread inside NumPy or I/O "
                   "releases it. Below, the kernel's scheduler places runnable threads on "
                   "cores, restricted by each thread's CPU affinity mask. A second process "
                   "beside the first shares nothing but what it maps explicitly."))
    host, mem, acc, queue = PALETTE["host"], PALETTE["memory"], PALETTE["accent"], PALETTE["queue"]
    c.rect(20, 20, 470, 200, fill="none", stroke=host, stroke_width=1.8, rx=10)
    c.text(255, 40, "process: address space, page tables, open files", size=12.5,
           weight="600")
    c.box(40, 55, 430, 36, "heap and globals (shared by its threads)", color=mem, size=11.5)
    for k in range(3):
        c.box(40 + 148 * k, 105, 134, 50, f"thread {k}", sublabel="own stack, registers",
              color=host, size=11.5)
    c.box(40, 170, 430, 36, "GIL: one thread at a time runs Python bytecode", color=acc,
          size=11.5)
    c.rect(520, 20, 240, 200, fill="none", stroke=host, stroke_width=1.4, rx=10, dash="6 4")
    c.text(640, 40, "another process", size=12.5, weight="600")
    c.box(540, 60, 200, 60, "its own address space", sublabel="shares nothing by default",
          color=mem, size=11.5)
    c.box(540, 140, 200, 60, "its own interpreter", sublabel="and its own GIL", color=acc,
          size=11.5)
    c.box(20, 245, 740, 34, "kernel scheduler: runs threads on cores, within each thread's "
          "affinity mask", color=queue, size=12)
    for k in range(4):
        c.box(90 + 160 * k, 290, 120, 30, f"core {k}", color=host, size=11.5)
    return c.figure()
