"""Explorer of the page "Performance measurement and benchmarking" ({ref}`sec-measurement`).

:func:`ci_explorer`: how the number of repetitions, the run-to-run noise and a sprinkle of
outliers change the median's and the mean's confidence intervals. The timings are simulated
(:func:`simulated_timings`: lognormal noise around a true median, plus rare slow outliers), so
the truth is known and the reader can see which interval still covers it.

Used by: chapters/measurement.md.
"""

from __future__ import annotations

import numpy as np

from ..figures.measurement import MUTED_HEX
from ..figures.style import new_figure
from ..figures.svg import PALETTE
from ..models import stats
from . import explorer, float_slider, int_slider

__all__ = ["simulated_timings", "ci_explorer", "draw_ci"]


def simulated_timings(n: int, *, median_s: float = 1e-3, sigma: float = 0.1,
                      outlier_fraction: float = 0.0, outlier_factor: float = 10.0,
                      seed: int = 0) -> np.ndarray:
    """``n`` timings: lognormal around ``median_s`` (shape ``sigma``), a fraction slowed down.

    Without outliers the population median is exactly ``median_s``. Each outlier is a timing
    multiplied by ``outlier_factor`` (an interrupt, a page fault, a context switch).

    >>> x = simulated_timings(5, seed=1)
    >>> x.shape, bool(np.all(x > 0))
    ((5,), True)
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not median_s > 0:
        raise ValueError(f"median_s must be > 0, got {median_s!r}")
    if not sigma >= 0:
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    if not 0 <= outlier_fraction < 0.5:
        raise ValueError(f"outlier_fraction must be in [0, 0.5), got {outlier_fraction!r}")
    if not outlier_factor >= 1:
        raise ValueError(f"outlier_factor must be >= 1, got {outlier_factor!r}")
    rng = np.random.default_rng(seed)
    x = median_s * np.exp(sigma * rng.standard_normal(int(n)))
    slow = rng.random(int(n)) < outlier_fraction
    x[slow] *= outlier_factor
    return x


def draw_ci(n: int = 50, sigma: float = 0.2, outlier_fraction: float = 0.02, *,
            median_s: float = 1e-3, seed: int = 0):
    """One frame of the explorer: histogram, true median, median CI and mean CI."""
    x = simulated_timings(n, median_s=median_s, sigma=sigma, outlier_fraction=outlier_fraction,
                          seed=seed)
    fig, ax = new_figure(width_in=6.6, height_in=3.3)
    ms = x * 1e3
    ax.hist(np.clip(ms, None, np.percentile(ms, 98)), bins=40, color=PALETTE["memory"], alpha=0.6)
    ax.axvline(median_s * 1e3, color=MUTED_HEX, lw=1.5, ls=":", label="true median")
    title = f"n = {n}"
    if n >= stats.min_samples_for_ci(50):
        med = stats.median_ci(x)
        ax.axvspan(med.low * 1e3, med.high * 1e3, color=PALETTE["host"], alpha=0.3,
                   label=f"median CI ({med.confidence:.1%})")
        title += f": median CI ±{med.width / 2 / np.median(x):.1%}"
    mean = stats.mean_ci(x)
    ax.axvspan(mean.low * 1e3, mean.high * 1e3, ymin=0, ymax=0.12, color=PALETTE["compute"],
               alpha=0.6, label="mean CI (95 %)")
    title += f", mean CI ±{mean.width / 2 / x.mean():.1%}"
    ax.set_xlabel("simulated time per call (ms); the last bin holds the top 2 %")
    ax.set_ylabel("repetitions")
    ax.set_title(title)
    ax.legend(fontsize=9)
    return fig


def ci_explorer():
    """Sliders for repetitions, noise and outliers above :func:`draw_ci`'s figure."""
    return explorer(
        lambda n, sigma, outliers: draw_ci(n, sigma, outliers),
        {"n": int_slider("repetitions n", 50, 6, 1000, 1),
         "sigma": float_slider("noise (lognormal σ)", 0.2, 0.01, 1.0, 0.01),
         "outliers": float_slider("outlier fraction", 0.02, 0.0, 0.2, 0.005, fmt=".3f")},
        title="How repetitions, noise and outliers move the confidence intervals")
