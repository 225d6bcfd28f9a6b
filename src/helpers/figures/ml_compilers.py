"""Figures of the page "ML compiler architecture" ({ref}`sec-ml-compilers`).

* :func:`opening_animation`: a call enters ``torch.compile``; the first call is traced,
  lowered and built; the next call passes the guards and goes straight to the compiled code;
  a call that fails a guard is compiled again.
* :func:`structure_diagram`: the stages of ``torch.compile`` with the representation each
  stage hands on (bytecode, FX graph, ATen graph, loop-level IR, C++ or Triton source), the
  guards, and a graph break splitting a function into two graphs with Python between them.

Used by: chapters/ml-compilers.md.
"""

from __future__ import annotations

from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram"]

STAGES = (("Python call", "f(x)"), ("Dynamo", "trace: graph, guards"),
          ("AOTAutograd", "ATen graphs"), ("Inductor", "lower, fuse"),
          ("build", "C++ or Triton"))


def opening_animation() -> Figure:
    """First call compiles; a call that passes the guards reuses; a failed guard recompiles."""
    c = Canvas(800, 300, "torch.compile: compile once, check guards on every call",
               uid="comp-open", description=(
                   "Animated diagram. Five stages in a row: the Python call, Dynamo tracing the "
                   "bytecode into a graph, AOTAutograd, Inductor lowering and fusing, and the "
                   "C++ or Triton build. A first dot travels through every stage and arrives "
                   "at the cached compiled code. A second dot, a call with the same shapes, "
                   "passes the guard check and jumps directly to the compiled code. A third "
                   "dot, a call with a new shape, fails the guard and goes through the stages "
                   "again."))
    host, acc, comp, q, mem = (PALETTE["host"], PALETTE["accent"], PALETTE["compute"],
                               PALETTE["queue"], PALETTE["memory"])
    cols = (host, acc, q, comp, comp)
    for i, ((name, sub), col) in enumerate(zip(STAGES, cols)):
        c.box(20 + 156 * i, 60, 136, 50, name, sublabel=sub, color=col, size=12)
    for i in range(4):
        c.line(156 + 156 * i, 85, 176 + 156 * i, 85, stroke=MUTED, arrow=True)
    c.box(20, 190, 136, 50, "guard check", sublabel="shapes, dtypes, values", color=q,
          size=12)
    c.box(644, 190, 136, 50, "compiled code", sublabel="cached, reused", color=mem, size=12)
    c.line(156, 215, 644, 215, stroke=MUTED, width=1, dash="4 4", arrow=True)
    c.line(88, 110, 88, 190, stroke=MUTED, width=1, dash="4 4", both=True)
    c.line(712, 110, 712, 190, stroke=MUTED, width=1, arrow=True)
    dur = 9.0
    first = "M88,85 L712,85 L712,215"
    c.moving_dot(first, dur_s=dur, begin_s=0.0, r=6, color=acc)
    c.moving_dot("M88,215 L712,215", dur_s=dur, begin_s=3.0, r=6, color=mem)
    c.moving_dot("M88,215 L88,85 L712,85 L712,215", dur_s=dur, begin_s=6.0, r=6,
                 color=comp)
    for x, label in ((140, "first call: compile (seconds)"),
                     (400, "same shapes: guards pass (microseconds)"),
                     (660, "new shape: a guard fails, recompile")):
        c.text(x, 25, label, size=11.5, fill=MUTED)
    c.text(400, 280, "Click to pause. Magenta: first call; blue: guards pass; orange: a guard "
           "fails.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Stages, the representation between each pair, guards, and a graph break."""
    c = Canvas(800, 400, "Inside torch.compile: stages and the representations between them",
               uid="comp-struct", description=(
                   "Diagram. A column of stages with the representation each hands on: "
                   "Python bytecode, traced by TorchDynamo into an FX graph of torch "
                   "operations plus guards; AOTAutograd turns it into ATen graphs, forward and "
                   "backward; TorchInductor lowers these to a loop-level IR, fuses and "
                   "schedules, and generates C++ with OpenMP and vector code on a CPU or "
                   "Triton on a GPU; the system compiler or Triton builds machine code. On the "
                   "right, a function with a graph break: graph one, then Python running the "
                   "unsupported line, then graph two."))
    host, acc, comp, q, mem = (PALETTE["host"], PALETTE["accent"], PALETTE["compute"],
                               PALETTE["queue"], PALETTE["memory"])
    stages = [("Python bytecode", "your function", host),
              ("TorchDynamo", "traces: FX graph + guards", acc),
              ("AOTAutograd", "ATen graphs: forward, backward", q),
              ("TorchInductor", "lower, fuse, schedule: loop IR", comp),
              ("code generation", "C++ / OpenMP (CPU), Triton (GPU)", comp),
              ("C compiler / Triton", "machine code, cached", mem)]
    for i, (name, sub, col) in enumerate(stages):
        y = 30 + 60 * i
        c.box(30, y, 300, 46, name, sublabel=sub, color=col, size=12.5)
        if i:
            c.line(180, y - 14, 180, y, stroke=MUTED, arrow=True)
    c.box(360, 90, 150, 46, "guards", sublabel="checked on every call", color=q, size=12)
    c.line(330, 100, 360, 110, stroke=MUTED, width=1)
    c.text(640, 40, "a graph break", size=13, weight="600")
    c.box(560, 60, 160, 50, "graph 1", sublabel="compiled", color=acc, size=12)
    c.box(560, 140, 160, 50, "Python", sublabel="y.sum().item() > 0", color=host, size=12)
    c.box(560, 220, 160, 50, "graph 2", sublabel="compiled", color=acc, size=12)
    c.line(640, 110, 640, 140, stroke=MUTED, arrow=True)
    c.line(640, 190, 640, 220, stroke=MUTED, arrow=True)
    c.text(640, 295, "fix: keep the branch in the graph", size=11.5, fill=MUTED)
    c.text(640, 313, "(torch.where): one graph", size=11.5, fill=MUTED)
    return c.figure()
