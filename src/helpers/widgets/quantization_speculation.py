"""Explorer of the page "Quantization and speculative decoding"
({ref}`sec-quantization-and-speculation`).

* :func:`speculation_explorer`: move the acceptance rate, the draft length and the cost ratio;
  see tokens per cycle and the speedup against the draft length
  (:func:`helpers.figures.quantization_speculation.speedup_figure`, from the tested models of
  :mod:`helpers.models.speculative`). The static book shows it at its initial values, the ones
  the page discusses.

Used by: chapters/quantization-and-speculation.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures import quantization_speculation as figs
from . import explorer, float_slider, int_slider

__all__ = ["speculation_explorer", "draw_speculation"]


def draw_speculation(acceptance: float, draft_len: int, cost_ratio: float):
    """The explorer's figure: tokens per cycle and speedup against g, the chosen g marked."""
    return figs.speedup_figure(acceptance, draft_len, cost_ratio)


def speculation_explorer(*, acceptance: float = 0.8, draft_len: int = 4,
                         cost_ratio: float = 0.05) -> widgets.VBox:
    """Controls for the acceptance rate, the draft length and the cost ratio."""
    controls = {
        "acceptance": float_slider("acceptance rate α", acceptance, 0.05, 0.99, 0.01),
        "draft_len": int_slider("draft length g", draft_len, 1, 12),
        "cost_ratio": float_slider("cost ratio c", cost_ratio, 0.0, 1.0, 0.01),
    }
    return explorer(draw_speculation, controls,
                    title="Speculative decoding: tokens per cycle and speedup")
