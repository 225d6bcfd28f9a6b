"""Weight-only quantization of the book's decoders, by round-to-nearest with absmax scales.

:func:`quantize_linears` returns a copy of a :class:`~helpers.nn.decoder.Decoder` whose linear
layers inside the blocks hold the round trip :math:`s \\cdot \\operatorname{round}(w / s)` of
:func:`helpers.models.quantization.fake_quantize` (the values an int8 or int4 kernel would
multiply with, stored here in float32 so any machine runs them). The token embedding, tied to
the output head, and the norms stay in full precision, as weight-only schemes usually keep them
(Frantar et al., 2023; Lin et al., 2024). :func:`bits_per_byte` measures the quality cost on
held-out text. Used by {ref}`sec-quantization-and-speculation`.
"""

from __future__ import annotations

import copy
import math

import torch

from ..models import quantization as quant
from .tinylm import evaluate_loss

__all__ = ["quantize_linears", "linear_weights", "bits_per_byte"]


def linear_weights(model) -> dict[str, torch.Tensor]:
    """The weight matrices of every linear layer inside the blocks, by name."""
    return {name: mod.weight for name, mod in model.named_modules()
            if isinstance(mod, torch.nn.Linear) and name.startswith("blocks.")}


def quantize_linears(model, granularity: str = "channel", *, bits=8,
                     group_size: int | None = None):
    """A copy of ``model`` with every block's linear weights rounded to ``bits``-bit absmax
    codes at ``granularity`` (``"tensor"``, ``"channel"`` or ``"group"`` of ``group_size``)."""
    out = copy.deepcopy(model)
    with torch.no_grad():
        for w in linear_weights(out).values():
            w.copy_(quant.fake_quantize(w, granularity, bits=bits, group_size=group_size))
    return out.eval()


def bits_per_byte(model, tokens: torch.Tensor, *, seq_len: int = 256,
                  max_windows: int | None = 8) -> float:
    """Mean next-byte cross-entropy of ``model`` on ``tokens`` in bits per byte."""
    return evaluate_loss(model, tokens, seq_len=seq_len, max_windows=max_windows) / math.log(2)
