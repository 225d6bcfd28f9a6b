"""Small PyTorch models of the book: a readable decoder-only transformer (:mod:`.decoder`) and
the book's own small language models trained on its pages (:mod:`.tinylm`).

Kept apart from :mod:`helpers.models` (pure functions that import nothing heavy): importing
this package imports torch.

Used by: chapters/inference-metrics.md, chapters/numerics-and-transformers.md,
chapters/quantization-and-speculation.md, labs/decode.md, labs/quantization.md.
"""

from .decoder import Decoder, KVCache

__all__ = ["Decoder", "KVCache"]
