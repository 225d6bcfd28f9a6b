"""Explorer of the page "Kernel fusion, softmax and attention" ({ref}`sec-fusion-and-attention`).

* :func:`traffic_explorer`: move the sequence length, the head dimension and the on-chip memory;
  see the HBM bytes of standard attention and FlashAttention
  (:func:`helpers.figures.fusion_and_attention.traffic_figure`, from the tested models of
  :mod:`helpers.models.attention`). The static book shows it at its initial values, the ones
  the page discusses.

Used by: chapters/fusion-and-attention.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures import fusion_and_attention as figs
from . import _LAYOUT, _STYLE, explorer, int_slider

__all__ = ["traffic_explorer", "draw_traffic"]

_HEAD_DIMS = (32, 64, 128, 256)


def draw_traffic(seq_len: int, head_dim: int, sram_kib: int):
    """The explorer's figure: bytes against sequence length, ``seq_len`` marked."""
    return figs.traffic_figure(seq_len, head_dim, sram_kib * 1024.0)


def traffic_explorer(*, seq_len: int = 4096, head_dim: int = 64,
                     sram_kib: int = 100) -> widgets.VBox:
    """Controls for N, d and the on-chip memory above the HBM-bytes figure."""
    if head_dim not in _HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {_HEAD_DIMS}, got {head_dim!r}")
    controls = {
        "seq_len": widgets.Dropdown(options=[2**k for k in range(9, 18)], value=seq_len,
                                    description="sequence length N", style=_STYLE,
                                    layout=_LAYOUT),
        "head_dim": widgets.Dropdown(options=list(_HEAD_DIMS), value=head_dim,
                                     description="head dimension d", style=_STYLE,
                                     layout=_LAYOUT),
        "sram_kib": int_slider("on-chip memory (KiB)", sram_kib, 16, 256, step=4),
    }
    return explorer(draw_traffic, controls,
                    title="HBM bytes per head: standard attention vs FlashAttention")
