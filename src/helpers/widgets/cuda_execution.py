"""Explorer of the page "CUDA execution and synchronization" ({ref}`sec-cuda-execution`).

:func:`occupancy_explorer`: block size, registers per thread, shared memory per block and the
compute capability go in; the blocks each SM resource allows, the binding limit and the
theoretical occupancy come out, computed by :func:`helpers.models.occupancy.occupancy`.

Used by: chapters/cuda-execution.md.
"""

from __future__ import annotations

import textwrap

import ipywidgets as widgets

from .. import specs
from ..figures.cuda_execution import MUTED_HEX, limits_figure
from ..figures.style import new_figure
from ..models import occupancy as occ
from . import explorer, int_slider

__all__ = ["draw_occupancy", "occupancy_explorer"]

_CHOICES = {f"{lim.compute_capability}: {lim.name.split('(')[-1].rstrip(')')}": lim
            for lim in specs.SM_LIMITS}


def draw_occupancy(threads_per_block: int = 256, registers_per_thread: int = 40,
                   smem_kib: int = 48, limits: specs.SMLimits = specs.SM90):
    """One frame of the explorer: :func:`helpers.figures.cuda_execution.limits_figure` for the
    inputs, or a one-line figure saying why the block cannot launch."""
    smem = int(smem_kib) * 1024
    try:
        o = occ.occupancy(threads_per_block=int(threads_per_block),
                          registers_per_thread=int(registers_per_thread), smem_bytes=smem,
                          limits=limits)
    except ValueError as err:
        fig, ax = new_figure(width_in=6.4, height_in=1.6)
        ax.axis("off")
        ax.text(0.5, 0.5, "This block cannot launch:\n" + textwrap.fill(str(err), 80),
                ha="center", va="center", fontsize=10, color=MUTED_HEX)
        return fig
    return limits_figure(o, limits)


def occupancy_explorer(*, threads_per_block: int = 256, registers_per_thread: int = 40,
                       smem_kib: int = 48, limits: specs.SMLimits = specs.SM90):
    """Sliders for block size, registers per thread and shared memory, and a compute
    capability menu, above :func:`draw_occupancy`'s figure."""
    if limits not in _CHOICES.values():
        raise ValueError(f"limits must be one of helpers.specs.SM_LIMITS, got {limits!r}")
    menu = widgets.Dropdown(options=list(_CHOICES.items()), value=limits,
                            description="compute capability", style={"description_width": "initial"})
    return explorer(
        lambda t, r, s, lim: draw_occupancy(t, r, s, lim),
        {"t": int_slider("threads per block", threads_per_block, 32, 1024, 32),
         "r": int_slider("registers per thread", registers_per_thread, 16, 255, 1),
         "s": int_slider("shared memory per block (KiB)", smem_kib, 0, 227, 1),
         "lim": menu},
        title="Occupancy: which resource runs out first?")
