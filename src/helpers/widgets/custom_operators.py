"""Explorer of the page "Triton, CUTLASS and PyTorch operators" ({ref}`sec-custom-operators`).

* :func:`traffic_explorer`: tokens, hidden width and element size of a SwiGLU gate; bars of
  the memory time of a training step's gate (forward and backward), eager against fused, at a
  GPU's HBM bandwidth (:mod:`helpers.models.gated_activation`, :mod:`helpers.models.roofline`).

Used by: chapters/custom-operators.md.
"""

from __future__ import annotations

from .. import units
from ..figures.style import COLORS, new_figure
from ..models import gated_activation as ga
from ..models import roofline
from . import explorer, float_slider, int_slider

__all__ = ["gate_times_s", "draw_traffic", "traffic_explorer"]

def gate_times_s(n_elements: int, bytes_per_element: float, mem_bytes_per_s: float) -> dict:
    """Memory time (s) of the gate, per direction, eager and fused: ``{(fused, dir): s}``."""
    return {(f, d): roofline.memory_time_s(
                ga.swiglu_traffic_bytes(n_elements, bytes_per_element, fused=f, direction=d),
                mem_bytes_per_s)
            for f in (False, True) for d in ("forward", "backward")}

def draw_traffic(tokens: int, d_ff: int, bytes_per_element: float, *, mem_bytes_per_s: float,
                 gpu_name: str):
    """Stacked bars: forward and backward memory time of the gate, eager and fused."""
    t = gate_times_s(int(tokens) * int(d_ff), bytes_per_element, mem_bytes_per_s)
    fig, ax = new_figure(width_in=6.4, height_in=2.8)
    for row, fused in enumerate((False, True)):
        fwd, bwd = t[(fused, "forward")], t[(fused, "backward")]
        ax.barh(row, fwd / units.us, color=COLORS["memory"], label="forward" if row == 0 else None)
        ax.barh(row, bwd / units.us, left=fwd / units.us, color=COLORS["accent"],
                label="backward" if row == 0 else None)
        ax.text((fwd + bwd) / units.us, row, f"  {units.fmt_time(fwd + bwd)}", va="center")
    ax.set_yticks([0, 1], ["eager (2 + 3 kernels)", "fused (1 + 1)"])
    ax.set_xlabel("memory time of the gate per layer (us)")
    ax.set_title(f"{gpu_name}: {units.fmt_count(tokens * d_ff)} elements")
    ax.margins(x=0.25)
    ax.legend(loc="upper right", frameon=False)
    return fig

def traffic_explorer(*, tokens: int = 8192, d_ff: int = 14336, bytes_per_element: float = 2.0,
                     mem_bytes_per_s: float, gpu_name: str):
    """Sliders for tokens per step, hidden width and bytes per element."""
    return explorer(
        lambda tokens, d_ff, bytes_per_element: draw_traffic(
            tokens, d_ff, bytes_per_element, mem_bytes_per_s=mem_bytes_per_s, gpu_name=gpu_name),
        {"tokens": int_slider("tokens per step", tokens, 512, 65536, 512),
         "d_ff": int_slider("hidden width d_ff", d_ff, 1024, 57344, 1024),
         "bytes_per_element": float_slider("bytes per element", bytes_per_element, 1.0, 4.0,
                                           1.0, fmt=".0f")},
        title="SwiGLU's gate: memory time eager against fused")

