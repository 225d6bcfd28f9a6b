"""Small PyTorch models of the book: a readable decoder-only transformer.

Kept apart from :mod:`helpers.models` (pure functions that import nothing heavy): importing
this package imports torch.
"""

from .decoder import Decoder, KVCache

__all__ = ["Decoder", "KVCache"]
