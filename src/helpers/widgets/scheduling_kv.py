"""The explorer of {ref}`sec-scheduling-and-kv-cache`.

* :func:`serving_explorer`: move the arrival rate, the mean output length, the batch size and
  the token budget; the simulator (:mod:`helpers.sim.serving`) serves the same Poisson trace
  with static and continuous batching and the figure shows throughput and TTFT of both.

Used by: chapters/scheduling-and-kv-cache.md.
"""

from __future__ import annotations

import ipywidgets as widgets
import matplotlib.pyplot as plt

from .. import specs
from ..figures.style import COLORS, new_figure
from ..models import transformer as tf
from ..models.inference import trace_metrics
from ..sim import workload as W
from ..sim.serving import roofline_step_model, simulate
from . import explorer, float_slider, int_slider, log_slider

__all__ = ["serve_both", "draw_serving", "serving_explorer"]


def serve_both(rate_per_s: float, output_mean: float, max_batch: int, token_budget: int, *,
               n_requests: int = 100, seed: int = 0) -> dict:
    """Metrics of both schedulers on one trace (Llama-3-8B on an H200, roofline step model)."""
    step = roofline_step_model(tf.LLAMA3_8B, specs.H200_SXM, context_tokens=600)
    trace = W.poisson_trace(rate_per_s, n_requests, prompt_len=W.uniform(100, 1000),
                            output_len=W.geometric(output_mean, cap=int(8 * output_mean)),
                            seed=seed)
    longest = max(r.prompt_len + r.output_len for r in trace)
    blocks = max(1600, -(-longest // 16))
    return {k: trace_metrics(simulate(trace, k, step, num_blocks=blocks, block_size=16,
                                      max_batch=int(max_batch),
                                      token_budget=int(token_budget))["requests"])
            for k in ("static", "continuous")}


def draw_serving(rate_per_s: float, output_mean: float, max_batch: int, token_budget: int):
    """Two panels: output throughput and TTFT (p50 and p90) of static and continuous batching."""
    m = serve_both(rate_per_s, output_mean, max_batch, token_budget)
    fig, (a, b) = new_figure(1, 2, width_in=7.5, height_in=3.0)
    names = list(m)
    a.bar(names, [m[k]["output_tokens_per_s"] for k in names],
          color=[COLORS["neutral"], COLORS["accent"]])
    a.set_ylabel("output tokens/s")
    x = range(len(names))
    b.bar([i - 0.2 for i in x], [m[k]["ttft_s"]["p50"] for k in names], 0.4,
          color=COLORS["memory"], label="p50")
    b.bar([i + 0.2 for i in x], [m[k]["ttft_s"]["p90"] for k in names], 0.4,
          color=COLORS["compute"], label="p90")
    b.set_xticks(list(x), names)
    b.set_yscale("log")
    b.set_ylabel("TTFT (s)")
    b.legend(fontsize=8)
    ratio = m["continuous"]["output_tokens_per_s"] / m["static"]["output_tokens_per_s"]
    fig.suptitle(f"continuous / static throughput {ratio:.2f}x; median TTFT "
                 f"{m['static']['ttft_s']['p50']:.3g} s vs {m['continuous']['ttft_s']['p50']:.3g} s",
                 fontsize=10.5)
    plt.close(fig)
    return fig


def serving_explorer(rate_per_s: float = 20.0, output_mean: float = 150.0, max_batch: int = 32,
                     token_budget: int = 512) -> widgets.VBox:
    """Arrival rate, mean output length, batch size, token budget -> throughput and TTFT."""
    controls = {
        "rate_per_s": log_slider("arrivals (/s)", rate_per_s, 1.0, 100.0),
        "output_mean": float_slider("mean output", output_mean, 10.0, 400.0, 10.0),
        "max_batch": int_slider("batch size", max_batch, 1, 128),
        "token_budget": int_slider("token budget", token_budget, 64, 4096, 64),
    }
    return explorer(draw_serving, controls, title="Static vs continuous batching explorer")
