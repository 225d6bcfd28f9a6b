"""Explorer of {ref}`sec-numerics-and-transformers`: does a model fit on one GPU?

Moves the model, the number formats of weights and KV cache, the batch and the context, and
redraws :func:`helpers.figures.numerics_and_transformers.memory_figure`, which calls the
tested models of :mod:`helpers.models.transformer`.

Used by: chapters/numerics-and-transformers.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from .. import specs
from ..figures import numerics_and_transformers as fig
from ..models import transformer as tm
from . import _LAYOUT, _STYLE, explorer, int_slider

__all__ = ["memory_explorer"]

_WEIGHT_FORMATS = ("fp32", "bf16", "fp8_e4m3", "int8", "int4")
_KV_FORMATS = ("bf16", "fp8_e4m3", "int8", "int4")


def _dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(options=options, value=value, description=description,
                            style=_STYLE, layout=_LAYOUT)


def memory_explorer(*, model: str = "Llama-3-8B", weight_format: str = "bf16",
                    kv_format: str = "bf16", batch: int = 16, context: int = 8192,
                    gpu: str = "h100") -> widgets.VBox:
    """Controls for model, formats, batch, context and GPU above the memory bar chart.

    The initial values are those the page discusses, so the static book shows that case.
    """
    if model not in tm.CONFIGS:
        raise ValueError(f"model must be one of {list(tm.CONFIGS)}, got {model!r}")
    controls = {
        "model": _dropdown("model", list(tm.CONFIGS), model),
        "weight_format": _dropdown("weights", [(fig.FORMAT_LABELS[k], k)
                                               for k in _WEIGHT_FORMATS], weight_format),
        "kv_format": _dropdown("KV cache", [(fig.FORMAT_LABELS[k], k) for k in _KV_FORMATS],
                               kv_format),
        "batch": int_slider("batch (sequences)", batch, 1, 256),
        "context": int_slider("context (tokens)", context, 512, 131072, step=512),
        "gpu": _dropdown("GPU", [(g.name, k) for k, g in
                                 (("a100", specs.A100_SXM_80GB), ("h100", specs.H100_SXM),
                                  ("h200", specs.H200_SXM), ("b200", specs.B200_HGX))], gpu),
    }

    def draw(model, weight_format, kv_format, batch, context, gpu):
        return fig.memory_figure(tm.CONFIGS[model], weight_format=weight_format,
                                 kv_format=kv_format, batch=batch, context=context,
                                 gpu=specs.gpu(gpu))

    return explorer(draw, controls, title="Memory of one model on one GPU")
