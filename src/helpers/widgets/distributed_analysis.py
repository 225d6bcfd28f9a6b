"""Explorer of the distributed-analysis lesson: model size, GPUs and MFU -> time to train.

Used by: chapters/distributed-analysis.md.
"""

from __future__ import annotations

import numpy as np

from .. import specs
from ..figures.style import new_figure
from ..figures.svg import PALETTE
from ..models import distributed_analysis as da
from . import explorer, float_slider, int_slider, log_slider

__all__ = ["draw_time_to_train", "time_to_train_explorer"]

DAY_S = 86400.0


def draw_time_to_train(n_params: float, n_tokens: float, n_gpus: int, mfu: float, *,
                       gpu: specs.GPUSpec = specs.H200_SXM, precision: str = "bf16"):
    """Days to train against MFU (curve), with the chosen MFU marked."""
    peak = gpu.peak_flop_per_s(precision)
    xs = np.linspace(0.05, 0.8, 120)
    days = [da.time_to_train_s(n_params=n_params, n_tokens=n_tokens, n_devices=n_gpus,
                               peak_flop_per_s=peak, mfu=float(m)) / DAY_S for m in xs]
    here = da.time_to_train_s(n_params=n_params, n_tokens=n_tokens, n_devices=n_gpus,
                              peak_flop_per_s=peak, mfu=mfu) / DAY_S
    fig, ax = new_figure(width_in=6.6, height_in=3.3)
    ax.plot(xs * 100, days, color=PALETTE["memory"], lw=2)
    ax.plot([mfu * 100], [here], "o", color=PALETTE["accent"], ms=9)
    ax.set_yscale("log")
    ax.set_xlabel("MFU (%)")
    ax.set_ylabel("days to train (log)")
    ax.set_title(f"{n_params / 1e9:.3g}B parameters, {n_tokens / 1e12:.3g}T tokens, "
                 f"{n_gpus} x {gpu.name}: {here:.3g} days at {mfu:.0%} MFU", fontsize=10)
    return fig


def time_to_train_explorer(n_params: float = 70e9, n_tokens: float = 2e12, n_gpus: int = 1024,
                           mfu: float = 0.4):
    """Sliders for model size, tokens, GPUs and MFU above :func:`draw_time_to_train`."""
    return explorer(
        lambda params_b, tokens_t, gpus, mfu: draw_time_to_train(params_b * 1e9, tokens_t * 1e12,
                                                                 gpus, mfu),
        {"params_b": log_slider("parameters (billions)", n_params / 1e9, 1, 1000),
         "tokens_t": log_slider("training tokens (trillions)", n_tokens / 1e12, 0.1, 20),
         "gpus": int_slider("GPUs", n_gpus, 8, 16384, 8),
         "mfu": float_slider("MFU", mfu, 0.05, 0.8, 0.01)},
        title="Time to train: 6ND model FLOP at a given MFU")
