"""Explorer of the page "ML compiler architecture" ({ref}`sec-ml-compilers`).

* :func:`break_even_explorer`: compile time, eager time per call and speedup; total time of
  ``N`` calls eager and compiled, and where they cross
  (:func:`helpers.models.compilation.break_even_calls`).

Used by: chapters/ml-compilers.md.
"""

from __future__ import annotations

import math

import numpy as np

from .. import units
from ..figures.style import COLORS, new_figure
from ..models import compilation as cm
from . import explorer, float_slider, log_slider

__all__ = ["draw_break_even", "break_even_explorer"]


def draw_break_even(compile_s: float, eager_ms: float, speedup: float):
    """Total time against calls, eager and compiled, with the break-even point marked."""
    te = eager_ms * units.ms
    tc = te / speedup
    n_star = cm.break_even_calls(compile_s, te, tc)
    n_max = 3 * n_star if math.isfinite(n_star) and n_star > 0 else 1000.0
    n = np.linspace(0, n_max, 200)
    fig, ax = new_figure(width_in=6.4, height_in=3.0)
    ax.plot(n, n * te, color=COLORS["neutral"], label="eager")
    ax.plot(n, [cm.amortized_time_s(int(k), compile_s, tc) for k in n], color=COLORS["accent"],
            label="compiled (compile time included)")
    if math.isfinite(n_star):
        ax.axvline(n_star, color=COLORS["queue"], linestyle="--", linewidth=1)
        ax.set_title(f"break-even after {n_star:.3g} calls")
    else:
        ax.set_title("compiled is not faster: it never pays")
    ax.set_xlabel("calls N")
    ax.set_ylabel("total time (s)")
    ax.legend(frameon=False, loc="upper left")
    return fig


def break_even_explorer(*, compile_s: float = 10.0, eager_ms: float = 10.0,
                        speedup: float = 2.0):
    """Sliders for the compile time (s), the eager time per call (ms) and the speedup."""
    return explorer(
        draw_break_even,
        {"compile_s": log_slider("compile time (s)", compile_s, 0.1, 600.0),
         "eager_ms": log_slider("eager time per call (ms)", eager_ms, 0.01, 1000.0),
         "speedup": float_slider("speedup when compiled", speedup, 0.5, 5.0, 0.05)},
        title="When does compiling pay?")
