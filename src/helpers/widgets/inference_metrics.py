"""The explorer of {ref}`sec-inference-metrics`.

* :func:`serving_explorer`: choose a model, a GPU, the prompt and answer lengths, the batch and
  the reserve; see the memory budget as a bar, whether the batch fits, and the TTFT and TPOT
  bounds (:mod:`helpers.models.inference`).

Used by: chapters/inference-metrics.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from .. import specs
from ..figures.inference_metrics import memory_budget_figure
from ..models import inference as inf
from ..models import transformer as tf
from . import explorer, int_slider, log_slider

__all__ = ["MODELS", "serving_numbers", "draw_serving", "serving_explorer"]

#: The models offered (Llama-style ones from :mod:`helpers.models.transformer`).
MODELS = {c.name: c for c in (tf.LLAMA2_7B, tf.LLAMA3_8B, tf.LLAMA3_70B)}
_GPUS = {g.name: g for g in specs.GPUS}


def serving_numbers(model: str, gpu: str, prompt_tokens: int, output_tokens: int, batch: int,
                    reserve_gb: float = 4.0, bytes_per_element: float = 2.0) -> dict:
    """The explorer's numbers: fits?, max batch, TTFT (prefill alone) and TPOT bounds, the
    tokens per second and the sustainable request rate at ``batch``."""
    if model not in MODELS or gpu not in _GPUS:
        raise ValueError(f"model must be one of {sorted(MODELS)} and gpu one of {sorted(_GPUS)}")
    cfg, g = MODELS[model], _GPUS[gpu]
    w = tf.weight_bytes(tf.parameter_count(cfg), bytes_per_element)
    per_token = tf.kv_cache_bytes_per_token(cfg, bytes_per_element)
    length = prompt_tokens + output_tokens
    peak, bw = g.peak_flop_per_s("bf16"), g.hbm_bytes_per_s
    out = {"weights_bytes": w, "hbm_bytes": g.hbm_bytes, "reserve_bytes": reserve_gb * 1e9,
           "kv_bytes_per_token": per_token, "tokens_per_request": length}
    try:
        out["max_batch"] = inf.max_concurrent_requests(g.hbm_bytes, w, per_token, length,
                                                       reserve_gb * 1e9)
    except ValueError:
        out["max_batch"] = 0  # the weights alone do not fit
    out["fits"] = batch <= out["max_batch"]
    out["ttft_s"] = inf.ttft_lower_bound_s(inf.prefill_time_lower_bound_s(
        cfg, prompt_len=prompt_tokens, bytes_per_element=bytes_per_element,
        peak_flop_per_s=peak, mem_bytes_per_s=bw))
    out["tpot_s"] = inf.decode_step_time_bound_s(
        cfg, context_len=prompt_tokens + output_tokens // 2, batch=batch,
        bytes_per_element=bytes_per_element, peak_flop_per_s=peak, mem_bytes_per_s=bw)
    out["tokens_per_s"] = batch / out["tpot_s"]
    out["requests_per_s"] = inf.sustainable_request_rate_per_s(batch, out["ttft_s"],
                                                               out["tpot_s"], output_tokens)
    return out


def draw_serving(model: str, gpu: str, prompt_tokens: int, output_tokens: int, batch: int,
                 reserve_gb: float):
    """The memory bar for these inputs, titled with the verdict and the bounds."""
    n = serving_numbers(model, gpu, prompt_tokens, output_tokens, batch, reserve_gb)
    if n["max_batch"] == 0 and n["weights_bytes"] + n["reserve_bytes"] >= n["hbm_bytes"]:
        return _overflow(n, f"{model} does not fit on one {gpu}: its weights need "
                            f"{n['weights_bytes'] / 1e9:.0f} GB")
    verdict = "fits" if n["fits"] else f"does NOT fit (max {n['max_batch']})"
    title = (f"batch {batch} {verdict}; TTFT >= {n['ttft_s'] * 1e3:.3g} ms, TPOT >= "
             f"{n['tpot_s'] * 1e3:.3g} ms, {n['tokens_per_s']:.3g} tok/s, "
             f"{n['requests_per_s']:.3g} req/s")
    return memory_budget_figure(n["hbm_bytes"], n["weights_bytes"], n["reserve_bytes"],
                                n["kv_bytes_per_token"], n["tokens_per_request"], batch=batch,
                                title=title)


def _overflow(n: dict, title: str):
    import matplotlib.pyplot as plt

    from ..figures.style import new_figure
    from ..figures.svg import PALETTE

    fig, ax = new_figure(width_in=7.2, height_in=2.3)
    ax.barh(0, n["weights_bytes"] / 1e9, color=PALETTE["compute"], label="weights")
    ax.axvline(n["hbm_bytes"] / 1e9, color=PALETTE["accent"], lw=2, label="GPU memory")
    ax.set_yticks([])
    ax.set_xlabel("GB")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10.5)
    plt.close(fig)
    return fig


def serving_explorer(model: str = "Llama-3-8B", gpu: str = "H200 SXM", prompt_tokens: int = 1024,
                     output_tokens: int = 256, batch: int = 64,
                     reserve_gb: float = 4.0) -> widgets.VBox:
    """Model, GPU, prompt and answer lengths, batch, reserve -> fits?, TTFT and TPOT bounds."""
    controls = {
        "model": widgets.Dropdown(options=list(MODELS), value=model, description="model"),
        "gpu": widgets.Dropdown(options=list(_GPUS), value=gpu, description="GPU"),
        "prompt_tokens": int_slider("prompt tokens P", prompt_tokens, 16, 8192, 16),
        "output_tokens": int_slider("output tokens n", output_tokens, 1, 4096, 1),
        "batch": int_slider("batch B", batch, 1, 1024, 1),
        "reserve_gb": log_slider("reserve R (GB)", reserve_gb, 0.5, 40.0),
    }
    return explorer(draw_serving, controls, title="Does it fit, and how fast?")
