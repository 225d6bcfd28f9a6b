"""Figures of the page "Memory allocation and virtual memory" ({ref}`sec-virtual-memory`).

* :func:`opening_animation`: three loads translate their addresses: one hits the TLB, one
  walks the page table, one touches a page for the first time and faults into the kernel.
* :func:`structure_diagram`: a 48-bit virtual address split into four table indices and an
  offset, the walk through the four tables to a physical frame, and underneath the same idea
  one level up: a paged KV cache's block table mapping a sequence's logical blocks to
  physical blocks.

The field widths drawn are computed from :mod:`helpers.models.virtual_memory`.

Used by: foundations/virtual-memory.md.
"""

from __future__ import annotations

import math

from ..models import virtual_memory as vmm
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram"]


def _dot(c: Canvas, path: str, color: str, t0: float, t1: float, dur: float) -> None:
    c.raw(f'<circle r="6" fill="{color}" opacity="0"><animateMotion path="{path}" dur="{dur}s" '
          f'keyPoints="0;0;1;1" keyTimes="0;{t0:.3f};{t1:.3f};1" calcMode="linear" '
          f'repeatCount="indefinite"/><animate attributeName="opacity" values="0;0;1;1;0;0" '
          f'keyTimes="0;{t0:.3f};{t0 + 0.005:.3f};{t1:.3f};{t1 + 0.005:.3f};1" dur="{dur}s" '
          f'repeatCount="indefinite"/></circle>')


def opening_animation() -> Figure:
    """A TLB hit, a page walk, and a first-touch page fault, one after another."""
    c = Canvas(760, 300, "Translating an address: TLB hit, page walk, page fault",
               uid="vm-open", description=(
                   "Animated diagram. A core on the left issues loads with virtual addresses. "
                   "The first finds its translation in the TLB and goes straight to memory. "
                   "The second misses the TLB and walks four page tables, one after another, "
                   "before going to memory. The third finds no page at all: it traps into the "
                   "kernel, which takes a free frame, zeroes it and fills in the table; only "
                   "then does the load complete. The three trips take increasingly long."))
    host, mem, queue, acc = PALETTE["host"], PALETTE["memory"], PALETTE["queue"], PALETTE["accent"]
    c.box(20, 110, 90, 70, "core", color=host)
    c.box(150, 115, 90, 60, "TLB", color=queue)
    for k in range(4):
        c.box(290 + 70 * k, 40, 56, 44, f"L{4 - k}", color=mem, size=12, fill_opacity=0.1)
    c.text(430, 28, "page-table walk", size=12, fill=MUTED)
    c.box(620, 110, 120, 70, "memory", sublabel="the data", color=mem)
    c.box(330, 220, 200, 56, "kernel", sublabel="fault: find, zero, map a frame", color=acc,
          size=12)
    dur = 9.0
    _dot(c, "M110,135 L620,135", host, 0.0, 0.08, dur)
    _dot(c, "M110,145 L195,145 L318,84 L388,84 L458,84 L528,84 L620,145", queue, 0.15, 0.45, dur)
    _dot(c, "M110,155 L195,155 L318,84 L528,84 L430,220 L430,248 L528,84 L620,155", acc,
         0.52, 0.97, dur)
    c.mark_animated()
    c.text(380, 292, "Click to pause. Green: TLB hit. Yellow: TLB miss, four table reads. "
           "Pink: first touch, a page fault.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """A 48-bit address's fields and its walk; below, a paged KV cache's block table."""
    bits_off = int(math.log2(vmm.PAGE_4K))
    bits_idx = int(math.log2(vmm.PAGE_4K / vmm.PTE_BYTES))
    levels = vmm.page_table_levels(48)
    c = Canvas(780, 360, "Page tables, and the block table of a paged KV cache", uid="vm-struct",
               description=(
                   f"Diagram. Top: a 48-bit virtual address drawn as {levels} index fields of "
                   f"{bits_idx} bits and a {bits_off}-bit page offset. Each index selects an "
                   "entry in one table; the last table's entry gives the physical frame, and "
                   "the offset selects the byte in it. Bottom: a paged KV cache. A sequence's "
                   "tokens fill logical blocks 0, 1, 2; a block table maps each to a physical "
                   "block scattered in GPU memory, just as the page table maps pages to "
                   "frames."))
    mem, queue, acc, host = PALETTE["memory"], PALETTE["queue"], PALETTE["accent"], PALETTE["host"]
    x = 30
    w_idx, w_off = 100, 130
    c.text(390, 20, "virtual address (48 bits translated)", size=12.5, weight="600")
    for k in range(levels):
        c.box(x + k * w_idx, 32, w_idx - 4, 40, f"index {k + 1}", sublabel=f"{bits_idx} bits",
              color=queue, size=11.5)
    c.box(x + levels * w_idx, 32, w_off, 40, "offset", sublabel=f"{bits_off} bits", color=mem,
          size=11.5)
    for k in range(levels):
        tx = x + k * w_idx
        c.box(tx, 100, w_idx - 4, 50, f"table {k + 1}",
              sublabel=f"{int(vmm.PAGE_4K / vmm.PTE_BYTES)} entries", color=mem, size=11,
              fill_opacity=0.08)
        c.line(tx + 48, 72, tx + 48, 100, stroke=queue, arrow=True)
        if k < levels - 1:
            c.line(tx + w_idx - 4, 125, tx + w_idx, 125, stroke=mem, arrow=True)
    fx = x + levels * w_idx
    c.box(fx, 100, w_off, 50, "physical frame", sublabel=f"{int(vmm.PAGE_4K) // 1024} KiB of DRAM", color=host, size=11.5)
    c.line(fx - 4, 125, fx, 125, stroke=mem, arrow=True)
    c.line(fx + 65, 72, fx + 65, 100, stroke=mem, arrow=True)
    c.text(390, 178, "the same idea one level up: a paged KV cache", size=12.5, weight="600")
    for k in range(3):
        c.box(40 + 110 * k, 200, 100, 40, f"logical block {k}", color=acc, size=11)
    c.box(380, 200, 110, 110, "block table", sublabel="logical -> physical", color=queue,
          size=11.5)
    phys = [(560, 195), (680, 250), (560, 290)]
    for k, (px, py) in enumerate(phys):
        c.box(px, py, 90, 36, f"physical {[7, 2, 9][k]}", color=mem, size=11)
        c.line(490, 230 + 20 * k, px, py + 18, stroke=acc, arrow=True, width=1.3)
    c.line(360, 220, 380, 240, stroke=acc, arrow=True)
    c.text(200, 270, "tokens fill blocks in order; only the", size=11, fill=MUTED)
    c.text(200, 286, "last block of a sequence is partly empty", size=11, fill=MUTED)
    return c.figure()
