"""Figure of the index page "Below the API: systems foundations" ({ref}`sec-foundations`).

:func:`thread_diagram` draws the thirteen foundation pages as stations along the path of one
inference request's bytes, from storage to the GPU and back over the network, grouped by the
part of the machine they explain. Pages already written are drawn solid; pages still to come
are dashed.

Used by: foundations/overview.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["FoundationPage", "PAGES", "thread_diagram"]


@dataclass(frozen=True)
class FoundationPage:
    slug: str  # file name under foundations/, without .md
    title: str  # short title for the diagram
    group: str  # one of GROUPS
    question: str  # the inference question it answers


GROUPS = ("the processor", "memory", "devices and I/O", "the operating system")
_GROUP_COLORS = {"the processor": PALETTE["compute"], "memory": PALETTE["memory"],
                 "devices and I/O": PALETTE["network"], "the operating system": PALETTE["host"]}

#: The thirteen pages in reading order (BOOK-PLAN, "Below the API").
PAGES: tuple[FoundationPage, ...] = (
    FoundationPage("cpu-architecture", "CPU architecture", "the processor",
                   "how fast can the host prepare a batch?"),
    FoundationPage("memory-hierarchy", "caches, memory hierarchy", "memory",
                   "why is tokenization slow?"),
    FoundationPage("dram-and-numa", "DRAM and NUMA", "memory",
                   "why is the second socket twice as slow?"),
    FoundationPage("simd-vectorization", "SIMD, vectorization", "the processor",
                   "how much work per instruction?"),
    FoundationPage("threads-and-processes", "threads, processes", "the operating system",
                   "what does a context switch cost?"),
    FoundationPage("virtual-memory", "allocation, virtual memory", "memory",
                   "where does paged attention come from?"),
    FoundationPage("storage-and-model-loading", "storage, model loading", "devices and I/O",
                   "how long is a cold start?"),
    FoundationPage("networking", "networking", "devices and I/O",
                   "what does one request cost on the wire?"),
    FoundationPage("pcie-and-interconnects", "PCIe, DMA, interconnects", "devices and I/O",
                   "why never move weights per request?"),
    FoundationPage("os-scheduling", "OS scheduling, GPU sharing", "the operating system",
                   "who runs next, and on which GPU slice?"),
    FoundationPage("linux-for-inference", "Linux for inference", "the operating system",
                   "which knobs matter on a server?"),
    FoundationPage("containers-and-cgroups", "containers, cgroups", "the operating system",
                   "why 128 CPUs seen but 4 used?"),
    FoundationPage("syscalls-and-profiling", "syscalls, profiling", "the operating system",
                   "where did the time go?"),
)


def thread_diagram(written: Sequence[str] = ()) -> Figure:
    """The thirteen pages along one request's path; slugs in ``written`` drawn solid."""
    unknown = set(written) - {p.slug for p in PAGES}
    if unknown:
        raise ValueError(f"unknown foundation pages: {sorted(unknown)}")
    cols = 4
    bw, bh, gx, gy = 214, 56, 22, 30
    rows = -(-len(PAGES) // cols)
    width = 20 + cols * (bw + gx)
    height = 60 + rows * (bh + gy) + 24
    c = Canvas(width, height, "The thread through the systems foundations", uid="found-thread",
               description=(
                   "Diagram. Thirteen boxes in reading order, snaking left to right and back, "
                   "joined by one arrow: the path of an inference request's bytes through the "
                   "host, from the processor and its caches, through memory and the operating "
                   "system, to storage, the network and the GPU's PCIe link. Colour marks the "
                   "part of the machine each page explains; solid boxes are pages already "
                   "written, dashed ones pages still to come."))
    centers = []
    for i, page in enumerate(PAGES):
        r, k = divmod(i, cols)
        k = k if r % 2 == 0 else cols - 1 - k  # snake
        x, y = 20 + k * (bw + gx), 60 + r * (bh + gy)
        color = _GROUP_COLORS[page.group]
        if page.slug in written:
            c.box(x, y, bw, bh, "", color=color, fill_opacity=0.22)
            c.text(x + bw / 2, y + bh / 2 - 8, f"{i + 1}. {page.title}", size=12, weight="600")
        else:
            c.rect(x, y, bw, bh, fill="none", stroke=color, stroke_width=1.4, dash="5 4")
            c.text(x + bw / 2, y + bh / 2 - 8, f"{i + 1}. {page.title}", size=12, fill=MUTED)
        c.text(x + bw / 2, y + bh / 2 + 12, page.question, size=10, fill=MUTED)
        centers.append((x, y, k))
    for (x1, y1, k1), (x2, y2, k2) in zip(centers, centers[1:]):
        if y1 == y2:
            if k2 > k1:
                c.line(x1 + bw, y1 + bh / 2, x2 - 2, y2 + bh / 2, stroke=PALETTE["accent"],
                       width=1.6, arrow=True)
            else:
                c.line(x1, y1 + bh / 2, x2 + bw + 2, y2 + bh / 2, stroke=PALETTE["accent"],
                       width=1.6, arrow=True)
        else:
            c.line(x1 + bw / 2, y1 + bh, x2 + bw / 2, y2 - 2, stroke=PALETTE["accent"],
                   width=1.6, arrow=True)
    c.text(width / 2, 24, "one request's bytes: processor, memory, OS, devices, network",
           size=13, weight="600")
    lx = 20
    for g in GROUPS:
        c.rect(lx, height - 26, 14, 14, fill=_GROUP_COLORS[g], stroke="none", rx=3, opacity=0.6)
        c.text(lx + 20, height - 19, g, size=11.5, anchor="start", fill=MUTED)
        lx += 40 + 7 * len(g) + 30
    return c.figure()
