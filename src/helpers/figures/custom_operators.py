"""Figures of the page "Triton, CUTLASS and PyTorch operators" ({ref}`sec-custom-operators`).

* :func:`opening_animation`: SwiGLU's gate ``silu(a) * b`` in eager PyTorch (two kernels, an
  intermediate written to memory and read back: five passes) and as one fused kernel (three).
* :func:`structure_diagram`: the authoring levels, from PyTorch operations to CUDA C++, and the
  registrations that make a kernel a PyTorch operator (schema, fake, autograd, device kernels).

Used by: chapters/custom-operators.md.
"""

from __future__ import annotations

from ..models.gated_activation import swiglu_passes
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram"]


def opening_animation() -> Figure:
    """Two kernels and an intermediate in memory, against one fused kernel."""
    c = Canvas(780, 330, "silu(a) * b: five passes over memory in eager mode, three fused",
               uid="ops-open", description=(
                   "Animated diagram in two rows. Top row, eager PyTorch: a memory strip "
                   "holding tensors a, b, s and out; a silu kernel reads a and writes s; a "
                   "multiply kernel reads s and b and writes out. Dots travel for each of the "
                   "five passes. Bottom row, one fused kernel reads a and b and writes out: "
                   "three passes, and s never exists in memory."))
    mem, comp, acc = PALETTE["memory"], PALETTE["compute"], PALETTE["accent"]
    dur = 5.0
    # Eager: memory strip on the left, kernels on the right.
    c.text(20, 24, "eager PyTorch: two kernels", size=13, anchor="start", weight="600")
    for i, name in enumerate(("a", "b", "s", "out")):
        c.box(30, 40 + 30 * i, 70, 24, name, color=mem if name != "s" else acc, size=12)
    c.box(330, 45, 150, 40, "silu kernel", color=comp, size=12.5)
    c.box(330, 105, 150, 40, "mul kernel", color=comp, size=12.5)
    trips = [("M100,52 L330,62", 0.0), ("M330,70 L100,112", 0.9),       # read a, write s
             ("M100,112 L330,120", 1.9), ("M100,82 L330,128", 1.9),     # read s, read b
             ("M330,132 L100,142", 2.9)]                               # write out
    for d, t in trips:
        c.path(d, stroke=mem, width=1, dash="3 4", opacity=0.5)
        c.moving_dot(d, dur_s=dur, begin_s=t, r=5, color=mem)
    c.text(620, 95, f"{swiglu_passes(fused=False)} passes of n elements", size=13, fill=MUTED)
    c.text(620, 115, "s is written, then read back", size=11.5, fill=MUTED)
    # Fused.
    c.text(20, 194, "one fused kernel (book::swiglu)", size=13, anchor="start", weight="600")
    for i, name in enumerate(("a", "b", "out")):
        c.box(30, 210 + 30 * i, 70, 24, name, color=mem, size=12)
    c.box(330, 235, 150, 40, "swiglu kernel", sublabel="s stays in registers", color=acc,
          size=12.5)
    fused = [("M100,222 L330,245", 0.0), ("M100,252 L330,255", 0.0),
             ("M330,265 L100,282", 1.4)]
    for d, t in fused:
        c.path(d, stroke=mem, width=1, dash="3 4", opacity=0.5)
        c.moving_dot(d, dur_s=dur, begin_s=t, r=5, color=acc)
    c.text(620, 250, f"{swiglu_passes(fused=True)} passes of n elements", size=13, fill=MUTED)
    c.text(620, 270, "one launch instead of two", size=11.5, fill=MUTED)
    c.text(390, 318, "Click to pause. Each dot is one pass over a tensor in device memory.",
           size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Authoring levels on the left; the registrations of a custom operator on the right."""
    c = Canvas(800, 380, "Where to write a kernel, and what makes it a PyTorch operator",
               uid="ops-struct", description=(
                   "Diagram. Left, a ladder of authoring levels from most productive to most "
                   "control: PyTorch operations and torch.compile; Triton, blocks of a tensor "
                   "per program; CUTLASS and CuTe, C++ templates for tensor-core GEMMs; CUDA "
                   "C++ and PTX, threads and instructions. Right, a call torch.ops.book.swiglu "
                   "enters PyTorch's dispatcher, which picks the registration for the job: the "
                   "autograd formula (setup_context and backward), the fake implementation "
                   "(shapes only, used by torch.compile), and the device kernels: the Triton "
                   "kernel on a CUDA GPU, the same kernel through Triton's interpreter on a "
                   "CPU. opcheck tests that these registrations agree."))
    host, comp, mem, acc, q = (PALETTE["host"], PALETTE["compute"], PALETTE["memory"],
                               PALETTE["accent"], PALETTE["queue"])
    c.text(170, 24, "authoring levels", size=13.5, weight="600")
    levels = [("PyTorch ops, torch.compile", "tensors; the compiler fuses", host),
              ("Triton", "a block of a tensor per program", acc),
              ("CUTLASS / CuTe", "C++ templates; tensor-core tiles", comp),
              ("CUDA C++ / PTX", "threads, shared memory, instructions", comp)]
    for i, (name, sub, col) in enumerate(levels):
        c.box(20, 45 + 72 * i, 300, 56, name, sublabel=sub, color=col, size=12.5)
    c.line(340, 60, 340, 320, stroke=MUTED, width=1.5, arrow=True)
    c.text(340, 33, "less code", size=11, fill=MUTED)
    c.text(340, 335, "more control", size=11, fill=MUTED)
    c.text(170, 350, "write at the highest level that reaches the roof", size=11.5,
           fill=MUTED)
    c.box(470, 40, 300, 40, "torch.ops.book.swiglu(a, b)", color=host, size=12.5)
    c.box(470, 105, 300, 40, "dispatcher: schema book::swiglu", color=q, size=12.5)
    c.line(620, 80, 620, 105, stroke=MUTED, arrow=True)
    regs = [("register_autograd", "setup_context, backward", acc),
            ("register_fake", "shapes only: torch.compile", mem),
            ("CUDA: Triton kernel", "compiled for the GPU", comp),
            ("CPU: same kernel", "Triton's interpreter", host)]
    for i, (name, sub, col) in enumerate(regs):
        x, y = 470 + 155 * (i % 2), 170 + 75 * (i // 2)
        c.box(x, y, 145, 56, name, sublabel=sub, color=col, size=11.5)
        # a bus down the gap between the two columns, a stub into each box
        stub_x = x + 145 if i % 2 == 0 else x
        c.line(620, y + 28, stub_x, y + 28, stroke=MUTED, width=1, arrow=True)
    c.line(620, 145, 620, 273, stroke=MUTED, width=1)
    c.text(620, 335, "opcheck: the registrations agree with each other", size=11.5,
           fill=MUTED)
    return c.figure()
