"""Explorer of the page "Distributed model parallelism" ({ref}`sec-parallelism`).

:func:`mesh_explorer`: model size, the degrees ``dp``, ``tp`` and ``pp``, the ZeRO stage and
the number of micro-batches go in; the model-state bytes per rank
(:func:`helpers.models.parallelism.model_state_bytes_per_rank`, split into weights, gradients
and optimizer state) against one GPU's memory, and the simulated 1F1B step with its bubble,
come out.

Used by: chapters/parallelism.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from .. import specs
from ..figures.parallelism import timeline_figure
from ..figures.style import COLORS, new_figure
from ..models import parallelism as par
from ..sim import pipeline as pipe
from . import explorer, float_slider, int_slider

__all__ = ["draw_mesh", "mesh_explorer"]

_POW2 = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def draw_mesh(params_b: float = 70.0, dp: int = 8, tp: int = 8, pp: int = 4,
              zero_stage: int = 1, n_microbatches: int = 8,
              gpu: specs.GPUSpec = specs.H200_SXM):
    """One frame: per-rank model state (stacked) against ``gpu``'s memory, and the 1F1B
    timeline of ``pp`` stages and ``n_microbatches`` micro-batches."""
    n = float(params_b) * 1e9
    fig, (ax_m, ax_t) = new_figure(1, 2, width_in=9.6, height_in=max(2.6, 0.45 * pp + 1.4),
                                   gridspec_kw={"width_ratios": [1, 2.4]})
    parts = [("weights", (2.0, 0.0, 0.0), COLORS["memory"]),
             ("gradients", (0.0, 2.0, 0.0), COLORS["host"]),
             ("optimizer", (0.0, 0.0, 12.0), COLORS["compute"])]
    bottom = 0.0
    for name, (w, g, k), color in parts:
        v = par.model_state_bytes_per_rank(n, dp=dp, tp=tp, pp=pp, zero_stage=zero_stage,
                                           weight_bytes_per_param=w, grad_bytes_per_param=g,
                                           optimizer_state_bytes_per_param=k) / 1e9
        ax_m.bar([0], [v], bottom=bottom, color=color, label=name, width=0.6)
        bottom += v
    cap = gpu.hbm_bytes / 1e9
    ax_m.axhline(cap, color=COLORS["accent"], linestyle="--", linewidth=1.2)
    ax_m.set_xticks([])
    ax_m.set_ylim(0, 1.2 * max(bottom, cap))
    ax_m.set_ylabel("GB per rank")
    fits = "fits" if bottom < cap else "does NOT fit"
    ax_m.set_title(f"{bottom:.3g} GB: {fits} in {cap:.0f} GB", loc="left", fontsize=10)
    ax_m.legend(loc="center", fontsize=8)
    ax_m.grid(axis="x", visible=False)
    tl = pipe.simulate("1f1b", pp=pp, n_microbatches=n_microbatches)
    timeline_figure(tl, ax=ax_t, title=(
        f"world {dp * tp * pp} GPUs; 1F1B bubble {tl.bubble_fraction():.1%} "
        f"(model {par.pipeline_bubble_fraction(pp=pp, n_microbatches=n_microbatches):.1%})"))
    return fig


def mesh_explorer(*, params_b: float = 70.0, dp: int = 8, tp: int = 8, pp: int = 4,
                  zero_stage: int = 1, n_microbatches: int = 8,
                  gpu: specs.GPUSpec = specs.H200_SXM):
    """Sliders for the model size, the mesh, the ZeRO stage and the micro-batches, above
    :func:`draw_mesh`'s figure."""
    pick = {name: widgets.Dropdown(options=opts, value=v, description=name,
                                   style={"description_width": "initial"})
            for name, v, opts in (("dp", dp, _POW2), ("tp", tp, _POW2), ("pp", pp, _POW2[:5]))}
    return explorer(
        lambda params_b, dp, tp, pp, zero_stage, m: draw_mesh(params_b, dp, tp, pp,
                                                              zero_stage, m, gpu),
        {"params_b": float_slider("parameters (billions)", params_b, 1.0, 1000.0, 1.0,
                                  fmt=".0f"),
         **pick,
         "zero_stage": int_slider("ZeRO stage", zero_stage, 0, 3),
         "m": int_slider("micro-batches m", n_microbatches, 1, 32)},
        title="A mesh of ranks: model state per rank and the pipeline bubble")
