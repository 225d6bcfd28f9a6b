"""Figures of the page "SIMD and vectorization" ({ref}`sec-simd-vectorization`).

* :func:`opening_animation`: a scalar loop takes one element per step while a vector
  instruction takes a whole register's worth; the vector row finishes long before.
* :func:`structure_diagram`: one 512-bit register cut into lanes for four element types
  (lane counts from :func:`helpers.models.simd.simd_lanes`), and the three routes from Python
  to those instructions: the interpreter, NumPy, PyTorch.

Used by: foundations/simd-vectorization.md.
"""

from __future__ import annotations

from ..models import simd
from .svg import MUTED, PALETTE, Canvas, Figure

__all__ = ["opening_animation", "structure_diagram"]

_N = 32       # elements drawn
_LANES = 8    # lanes of the drawn vector unit


def opening_animation() -> Figure:
    """Scalar versus vector processing of the same elements."""
    c = Canvas(760, 250, "One element per step, or a whole vector per step", uid="simd-open",
               description=(
                   f"Animated diagram. Two rows of {_N} cells. In the top row, a scalar loop "
                   "colours one cell per step. In the bottom row, a vector instruction colours "
                   f"{_LANES} cells per step, so it finishes the row in {_N // _LANES} steps "
                   f"while the scalar row is only {_N // _LANES} cells along."))
    host, acc = PALETTE["host"], PALETTE["accent"]
    x0, w, dur = 110, 19, 8.0
    c.text(60, 75, "scalar", size=13, weight="600")
    c.text(60, 165, f"vector x{_LANES}", size=13, weight="600")
    for row, (y, color, per_step) in enumerate(((55, host, 1), (145, acc, _LANES))):
        for k in range(_N):
            step = k // per_step
            t_on = min(0.95, (step + 1) / _N * 0.9)
            anim = Canvas.animate("opacity", [0.08, 0.08, 0.85, 0.85], dur_s=dur,
                                  key_times=[0, t_on, min(0.999, t_on + 0.001), 1])
            c.rect(x0 + k * w, y, w - 3, 36, fill=color, stroke=color, opacity=0.08,
                   children=anim)
    c.mark_animated()
    c.text(380, 225, "Click to pause. Same work, same clock: the vector unit does "
           f"{_LANES} elements per instruction.", size=12, fill=MUTED)
    return c.figure()


def structure_diagram() -> Figure:
    """Lanes of a 512-bit register for four element types; the routes from Python to SIMD."""
    width_bits = 512
    c = Canvas(780, 350, "Lanes of a vector register, and who issues vector instructions",
               uid="simd-struct", description=(
                   f"Diagram. Top: a {width_bits}-bit register drawn four times, cut into "
                   + ", ".join(f"{simd.simd_lanes(width_bits, b)} lanes of {b} bits"
                               for b in (64, 32, 16, 8))
                   + ". Bottom: three routes from Python code to the hardware. A Python loop "
                   "runs one element per interpreted iteration, on scalar instructions. A NumPy "
                   "call runs a compiled loop or a BLAS routine that uses vector instructions. "
                   "A PyTorch call dispatches to a kernel compiled for the CPU's best vector "
                   "extension."))
    mem, acc, host, queue = PALETTE["memory"], PALETTE["accent"], PALETTE["host"], PALETTE["queue"]
    x0, full = 170, 580
    for row, (bits, name) in enumerate(((64, "float64"), (32, "float32"), (16, "bf16 / fp16"),
                                        (8, "int8"))):
        y = 20 + 38 * row
        lanes = simd.simd_lanes(width_bits, bits)
        c.text(85, y + 18, f"{name}: {lanes} lanes", size=11.5)
        w = full / lanes
        for k in range(lanes):
            c.rect(x0 + k * w, y, w, 26, fill=mem, stroke="none", rx=0,
                   opacity=0.35 if k % 2 == 0 else 0.15)
            c.rect(x0 + k * w, y, w, 26, fill="none", stroke=mem, stroke_width=0.8, rx=0)
    c.text(x0 + full / 2, 182, f"one {width_bits}-bit register (AVX-512); AVX2 is half, SSE and "
           "NEON a quarter", size=11.5, fill=MUTED)
    routes = [("Python loop", "one element per interpreted iteration", "scalar instructions",
               host),
              ("NumPy call", "a compiled loop or BLAS routine", "vector instructions", mem),
              ("PyTorch call", "a kernel built for the CPU's best extension",
               "vector instructions", acc)]
    for k, (name, how, what, col) in enumerate(routes):
        y = 205 + 48 * k
        c.box(20, y, 140, 38, name, color=col, size=12)
        c.line(160, y + 19, 200, y + 19, stroke=col, arrow=True)
        c.box(200, y, 320, 38, how, color=col, size=11.5, fill_opacity=0.06)
        c.line(520, y + 19, 560, y + 19, stroke=col, arrow=True)
        c.box(560, y, 200, 38, what, color=queue if k == 0 else col, size=11.5,
              fill_opacity=0.1)
    return c.figure()
