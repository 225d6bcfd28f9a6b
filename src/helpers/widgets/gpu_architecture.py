"""Explorer of the page "GPU and accelerator architecture" ({ref}`sec-gpu-architecture`).

* :func:`peak_explorer`: for one GPU, pick a precision, move the SM count and the clock; the
  figure shows the peak of eq-peak-flops against the clock for that many SMs, the datasheet
  peak, and the roofline ridge the chosen point implies with the part's HBM bandwidth.

Used by: chapters/gpu-architecture.md.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np

from .. import specs, units
from ..figures.style import COLORS, new_figure
from ..models import gpu_peaks, roofline
from . import explorer, float_slider, int_slider

__all__ = ["peak_explorer", "draw_peak"]

_STYLE = {"description_width": "initial"}


def _by_name(name: str) -> specs.GPUSpec:
    for gpu in specs.GPUS:
        if gpu.name == name:
            return gpu
    raise ValueError(f"unknown GPU {name!r}; known: {[g.name for g in specs.GPUS]}")


def draw_peak(gpu: str, precision: str, sm_count: int, clock_mhz: float):
    """The explorer's figure: peak FLOP/s against clock for ``sm_count`` SMs of ``gpu``."""
    spec = _by_name(gpu)
    u = gpu_peaks.fma_per_clock_per_sm(spec, precision)
    clocks_hz = np.linspace(0.5e9, 2.5e9, 50)
    peaks = [gpu_peaks.sm_peak_flop_per_s(sm_count, u, f) / units.T for f in clocks_hz]
    here = gpu_peaks.sm_peak_flop_per_s(sm_count, u, clock_mhz * units.M)
    ridge = roofline.ridge_intensity_flop_per_byte(here, spec.hbm_bytes_per_s)
    fig, ax = new_figure(height_in=3.2)
    ax.plot(clocks_hz / units.G, peaks, color=COLORS["compute"],
            label=f"{sm_count} SMs x {u:.0f} FMA/clock x 2")
    ax.plot([clock_mhz / 1e3], [here / units.T], "D", color=COLORS["accent"], ms=9)
    if precision in spec.dense_flop_per_s:
        ax.axhline(spec.peak_flop_per_s(precision) / units.T, color=COLORS["neutral"], ls=":",
                   label=f"datasheet: {units.fmt_rate(spec.peak_flop_per_s(precision), 'FLOP/s')}")
    ax.set_xlabel("SM clock (GHz)")
    ax.set_ylabel(f"dense {precision} peak (TFLOP/s)")
    ax.set_title(f"{units.fmt_rate(here, 'FLOP/s')}; ridge {ridge:.3g} FLOP/byte at "
                 f"{units.fmt_rate(spec.hbm_bytes_per_s, 'B/s')}")
    ax.legend(loc="upper left")
    return fig


def peak_explorer(gpu: str = "h200", precision: str = "bf16") -> widgets.VBox:
    """Move the SM count and the clock of a GPU; watch the derived peak and the ridge move.

    Starts at the part's published SM count and the clock its ``precision`` peak uses.
    """
    spec = specs.gpu(gpu)
    clock = gpu_peaks.clock_for_precision_hz(spec, precision)
    precisions = ["fp64", "fp32"] + sorted(spec.tensor_fma_per_clock_per_sm)
    controls = {
        "precision": widgets.Dropdown(options=precisions, value=precision,
                                      description="precision", style=_STYLE,
                                      layout=widgets.Layout(width="360px")),
        "sm_count": int_slider("SMs", int(spec.sm_count), 1, 200),
        "clock_mhz": float_slider("clock (MHz)", clock / units.M, 500.0, 2500.0, 10.0, ".0f"),
    }
    return explorer(functools.partial(draw_peak, spec.name), controls, title=f"Derived peak of an {spec.name}")
