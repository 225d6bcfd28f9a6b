"""Interactive explorers: ipywidgets controls that redraw a figure from the tested models.

An explorer is built by :func:`explorer` from a drawing function and named controls. In
Jupyter it is live: moving a control calls the drawing function, which calls the same tested
model the page uses. In the built book there is no kernel, so the page shows the saved widget
state: the controls at their initial values and the figure drawn for them, which is why every
explorer starts at the values the page's prose discusses.

Page-specific explorers live in submodules (e.g. :mod:`helpers.widgets.performance_models`).

Used by many pages, among them: chapters/collectives.md, chapters/cuda-execution.md,
chapters/custom-operators.md, chapters/distributed-analysis.md, chapters/fault-tolerance.md,
chapters/fusion-and-attention.md.
"""

from __future__ import annotations

from typing import Callable, Mapping

import ipywidgets as widgets
import matplotlib.pyplot as plt

__all__ = ["explorer", "float_slider", "log_slider", "int_slider"]

_STYLE = {"description_width": "initial"}
_LAYOUT = widgets.Layout(width="360px")


def float_slider(description: str, value: float, lo: float, hi: float, step: float,
                 fmt: str = ".2f") -> widgets.FloatSlider:
    """A float slider in the book's layout."""
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                               readout_format=fmt, continuous_update=False, style=_STYLE,
                               layout=_LAYOUT)


def log_slider(description: str, value: float, lo: float, hi: float, *, base: float = 10,
               step: float = 0.05, fmt: str = ".3g") -> widgets.FloatLogSlider:
    """A logarithmic slider; ``lo`` and ``hi`` are values, not exponents."""
    import math

    return widgets.FloatLogSlider(value=value, base=base, min=math.log(lo, base),
                                  max=math.log(hi, base), step=step, description=description,
                                  readout_format=fmt, continuous_update=False, style=_STYLE,
                                  layout=_LAYOUT)


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> widgets.IntSlider:
    """An integer slider in the book's layout."""
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             continuous_update=False, style=_STYLE, layout=_LAYOUT)


def explorer(draw: Callable[..., "plt.Figure"], controls: Mapping[str, widgets.Widget], *,
             title: str = "") -> widgets.VBox:
    """Controls above a figure that ``draw(**values)`` redraws whenever a control moves.

    ``draw`` receives each control's value under its key in ``controls`` and returns a
    matplotlib figure (it must not call ``plt.show``). The figure for the initial values is
    drawn at once, so the saved widget state in the static book shows it.
    """
    if not controls:
        raise ValueError("an explorer needs at least one control")
    out = widgets.Output(layout=widgets.Layout(min_height="260px"))

    def redraw(_change=None) -> None:
        # The figure goes straight into the Output widget's state rather than through a
        # ``with out:`` capture. Capturing makes nbclient (which executes the book's pages)
        # answer on the kernel's shell socket while it waits for the cell's reply on the same
        # socket; with pyzmq's edge-triggered polling that reply can be missed until the cell
        # timeout expires, which stalled page builds for minutes at a time.
        values = {key: ctrl.value for key, ctrl in controls.items()}
        fig = draw(**values)
        out.outputs = ()
        out.append_display_data(fig)
        plt.close(fig)

    for ctrl in controls.values():
        ctrl.observe(redraw, names="value")
    redraw()
    parts = []
    if title:
        parts.append(widgets.HTML(f"<b>{title}</b>"))
    parts.append(widgets.VBox(list(controls.values())))
    parts.append(out)
    return widgets.VBox(parts, layout=widgets.Layout(border="1px solid #d0d7de", padding="8px"))
