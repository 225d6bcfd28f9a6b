"""Explorers of the page "GPU memory optimization" ({ref}`sec-memory-optimization`).

* :func:`coalescing_explorer`: move the stride, the element size and the base offset of one
  warp request; see the sectors it touches and its efficiency
  (:func:`helpers.figures.memory_optimization.request_figure`).
* :func:`bank_explorer`: move the stride (in 4-byte words) of a warp's shared-memory access,
  or make every thread read one word; see the distinct words per bank and the conflict degree
  (:func:`helpers.figures.memory_optimization.bank_figure`).

Both call the tested models of :mod:`helpers.models.memory_access`. The static book shows
each at its initial values, the ones the page discusses.

Used by: chapters/memory-optimization.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures import memory_optimization as figs
from ..models import memory_access as ma
from . import _LAYOUT, _STYLE, explorer, int_slider

__all__ = ["coalescing_explorer", "bank_explorer", "draw_request", "draw_banks"]

_ELEMENT_SIZES = (1, 2, 4, 8, 16)


def draw_request(stride: int, bytes_per_element: int, offset: int):
    """The coalescing explorer's figure: one warp request (``offset`` in elements)."""
    return figs.request_figure(stride, bytes_per_element, base_bytes=offset * bytes_per_element)


def draw_banks(stride_words: int, broadcast: bool):
    """The bank explorer's figure: 32 threads reading words ``0, s, 2s, ...`` (or one word)."""
    s = 0 if broadcast else stride_words
    addrs = [ma.BANK_WORD_BYTES * s * t for t in range(ma.WARP_SIZE)]
    degree = ma.strided_bank_conflict_degree(s)
    label = "all threads read word 0 (broadcast)" if broadcast else f"stride {s} words"
    return figs.bank_figure(addrs, title=f"{label}: {degree}-way, {degree} "
                                         f"pass{'es' if degree > 1 else ''}")


def coalescing_explorer(*, stride: int = 8, bytes_per_element: int = 4,
                        offset: int = 0) -> widgets.VBox:
    """Controls for stride, element size and offset above one request's sectors."""
    if bytes_per_element not in _ELEMENT_SIZES:
        raise ValueError(f"bytes_per_element must be one of {_ELEMENT_SIZES}, "
                         f"got {bytes_per_element!r}")
    controls = {
        "stride": int_slider("stride (elements)", stride, 0, 64),
        "bytes_per_element": widgets.Dropdown(options=list(_ELEMENT_SIZES),
                                              value=bytes_per_element,
                                              description="element size (bytes)",
                                              style=_STYLE, layout=_LAYOUT),
        "offset": int_slider("offset (elements)", offset, 0, 32),
    }
    return explorer(draw_request, controls, title="One warp request: sectors and efficiency")


def bank_explorer(*, stride_words: int = 32, broadcast: bool = False) -> widgets.VBox:
    """Controls for the word stride (and a broadcast switch) above the bank histogram."""
    controls = {
        "stride_words": int_slider("stride (4-byte words)", stride_words, 1, 66),
        "broadcast": widgets.Checkbox(value=broadcast, description="all threads read one word",
                                      style=_STYLE, layout=_LAYOUT),
    }
    return explorer(draw_banks, controls, title="One warp in shared memory: bank conflicts")
