"""Explorers of the page "Performance models and metrics" ({ref}`sec-performance-models`).

Each returns a :func:`helpers.widgets.explorer` whose drawing function calls the same tested
models as the page. The static book shows each at its initial values, which are the ones the
page's prose discusses.

* :func:`roofline_explorer`: pick a GPU and a precision, move the arithmetic intensity.
* :func:`decode_explorer`: move the batch and the context length; H100 against H200.
* :func:`amdahl_explorer`: make the GPU stages of a request faster; see the request.
* :func:`queue_explorer`: move the utilization of an M/M/1 queue; formula and simulation.

Used by: chapters/performance-models.md.
"""

from __future__ import annotations

import functools
from typing import Mapping, Sequence

import ipywidgets as widgets

from .. import specs, units
from ..figures import performance_models as figs
from ..figures.style import COLORS, new_figure
from ..models import amdahl, decode_bandwidth, queueing, roofline
from ..sim import queue as simq
from . import explorer, float_slider, log_slider

__all__ = ["roofline_explorer", "decode_explorer", "amdahl_explorer", "queue_explorer",
           "draw_roofline", "draw_decode", "draw_amdahl", "draw_queue"]

_STYLE = {"description_width": "initial"}


def _dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(options=options, value=value, description=description,
                            style=_STYLE, layout=widgets.Layout(width="360px"))


def _by_name(name: str) -> specs.GPUSpec:
    for gpu in specs.GPUS:
        if gpu.name == name:
            return gpu
    raise ValueError(f"unknown GPU {name!r}; known: {[g.name for g in specs.GPUS]}")


def _message_figure(text: str):
    fig, ax = new_figure(height_in=1.2)
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=11)
    return fig


# --- roofline ----------------------------------------------------------------------------

def draw_roofline(gpu: str, precision: str, intensity: float):
    """The roofline explorer's figure for a GPU name, a precision and an intensity."""
    spec = _by_name(gpu)
    if precision not in spec.dense_flop_per_s:
        return _message_figure(f"The {spec.name} datasheet gives no dense {precision} peak.")
    peak, bw = spec.peak_flop_per_s(precision), spec.hbm_bytes_per_s
    rate = roofline.attainable_flop_per_s(intensity, peak, bw)
    kind = roofline.bound_kind(intensity, peak, bw)
    fig = figs.roofline_figure(spec, precision, marker=intensity)
    fig.axes[0].set_title(f"{intensity:.3g} FLOP/byte: at most {units.fmt_rate(rate, 'FLOP/s')}"
                          f" ({100 * rate / peak:.2g} % of peak), {kind}")
    return fig


def roofline_explorer(gpu: str = "h100", precision: str = "bf16",
                      intensity: float = 1.0) -> widgets.VBox:
    """Pick a GPU (a key of :func:`helpers.specs.gpu`) and a precision; move the intensity."""
    spec = specs.gpu(gpu)
    controls = {
        "gpu": _dropdown("GPU", [g.name for g in specs.GPUS], spec.name),
        "precision": _dropdown("precision (dense peak)", list(specs.PRECISIONS), precision),
        "intensity": log_slider("arithmetic intensity (FLOP/byte)", intensity, 0.01, 1e4),
    }
    return explorer(draw_roofline, controls, title="Roofline explorer")


# --- decode ------------------------------------------------------------------------------

def draw_decode(batch: float, context_tokens: float, *, n_params: float,
                bytes_per_element: float, kv_bytes_per_token: float,
                gpus: Sequence[str] = ("h100", "h200"), precision: str = "bf16"):
    """The decode explorer's figure: tokens/s against batch, with the chosen batch marked."""
    w_bytes = decode_bandwidth.weight_bytes(n_params, bytes_per_element)
    chosen = [specs.gpu(key) for key in gpus]
    b, ctx = max(1, int(round(batch))), max(1, int(round(context_tokens)))
    kv = kv_bytes_per_token * ctx
    fig = figs.decode_rate_figure(chosen, weight_bytes=w_bytes, n_params=n_params,
                                  kv_bytes_per_sequence=kv, precision=precision)
    ax = fig.axes[0]
    ax.axvline(b, color=COLORS["accent"], lw=1.2, alpha=0.7)
    parts = []
    for gpu in chosen:
        rate = decode_bandwidth.decode_tokens_per_s(
            w_bytes, kv, b, gpu.hbm_bytes_per_s, n_params, gpu.peak_flop_per_s(precision))
        parts.append(f"{gpu.name} {rate:,.0f}")
    ax.set_title(f"batch {b}, {ctx:,} tokens of context: tokens/s " + ", ".join(parts),
                 fontsize=10.5)
    return fig


def decode_explorer(*, n_params: float, bytes_per_element: float, kv_bytes_per_token: float,
                    batch: int = 1, context_tokens: int = 4096,
                    gpus: Sequence[str] = ("h100", "h200"),
                    precision: str = "bf16") -> widgets.VBox:
    """Move the batch and each sequence's context length; see decode tokens/s per GPU."""
    draw = functools.partial(draw_decode, n_params=n_params,
                             bytes_per_element=bytes_per_element,
                             kv_bytes_per_token=kv_bytes_per_token, gpus=tuple(gpus),
                             precision=precision)
    controls = {
        "batch": log_slider("batch (sequences)", batch, 1, 1024, base=2, step=0.25, fmt=".0f"),
        "context_tokens": log_slider("context length (tokens)", context_tokens, 128, 131072,
                                     base=2, step=0.25, fmt=".0f"),
    }
    return explorer(draw, controls, title="Decode token-rate explorer")


# --- Amdahl ------------------------------------------------------------------------------

def draw_amdahl(factor: float, *, stage_times_s: Mapping[str, float],
                gpu_stages: Sequence[str]):
    """The Amdahl explorer's figure: the request before and after the GPU stages speed up."""
    speedups = {s: factor for s in gpu_stages}
    fig = figs.request_figure(stage_times_s, speedups)
    whole = amdahl.request_speedup(stage_times_s, speedups)
    f = sum(stage_times_s[s] for s in gpu_stages) / sum(stage_times_s.values())
    fig.axes[0].set_title(f"GPU {factor:.3g}x faster: request {whole:.3g}x faster "
                          f"(limit {amdahl.amdahl_limit(f):.3g}x)")
    return fig


def amdahl_explorer(stage_times_s: Mapping[str, float], gpu_stages: Sequence[str],
                    factor: float = 2.0) -> widgets.VBox:
    """Make the named GPU stages of a request ``factor`` times faster; see the whole request."""
    draw = functools.partial(draw_amdahl, stage_times_s=dict(stage_times_s),
                             gpu_stages=list(gpu_stages))
    controls = {"factor": log_slider("GPU speedup factor", factor, 1.0, 100.0, step=0.02)}
    return explorer(draw, controls, title="Amdahl explorer: a chat request")


# --- queue -------------------------------------------------------------------------------

def draw_queue(utilization: float, *, service_time_s: float, percentile: float = 99.0,
               n_customers: int = 100_000, seed: int = 0):
    """The queue explorer's figure: M/M/1 curves and one seeded simulation at ``utilization``."""
    mu = 1.0 / service_time_s
    lam = utilization * mu
    tr = simq.simulate_mm1(lam, mu, n_customers, seed=seed)
    sim_mean, sim_p = tr.mean_time_in_system_s(), tr.time_in_system_percentile_s(percentile)
    fig = figs.queue_figure(service_time_s, simulated=[(utilization, sim_mean, sim_p)],
                            highlight=utilization, percentile=percentile)
    mean = queueing.mm1_mean_time_in_system_s(lam, mu)
    tail = queueing.mm1_time_in_system_percentile_s(percentile, lam, mu)
    fig.axes[0].set_title(
        f"ρ = {utilization:.2f}: mean {units.fmt_time(mean)} (simulated "
        f"{units.fmt_time(sim_mean)}), p{percentile:g} {units.fmt_time(tail)} "
        f"(simulated {units.fmt_time(sim_p)})", fontsize=10.5)
    return fig


def queue_explorer(service_time_s: float, utilization: float = 0.7, *,
                   percentile: float = 99.0, n_customers: int = 100_000,
                   seed: int = 0) -> widgets.VBox:
    """Move the utilization of an M/M/1 queue with the given mean service time (s).

    The figure shows the formulas for the mean and the ``percentile`` of the time in system,
    and the same two statistics measured on a seeded simulation at the chosen utilization.
    """
    draw = functools.partial(draw_queue, service_time_s=service_time_s,
                             percentile=percentile, n_customers=n_customers, seed=seed)
    controls = {"utilization": float_slider("utilization ρ", utilization, 0.05, 0.97, 0.01)}
    return explorer(draw, controls, title="Queue explorer: M/M/1")
