"""PyTorch operators the book defines: kernels of :mod:`helpers.kernels` made into operators.

An operator registered with ``torch.library`` is a first-class citizen of PyTorch: it has a
schema, works under autograd, can be traced by ``torch.compile`` without a graph break (its
shape behaviour is given by a "fake" implementation), and is checked by
``torch.library.opcheck``. Lesson 11 (:ref:`sec-custom-operators`) builds one.

* :mod:`.swiglu`: ``book::swiglu``, SwiGLU's gate ``silu(a) * b`` as one fused Triton kernel
  forward and one backward, and :class:`~.swiglu.SwiGLUMLP`, a feed-forward block that uses it.

Used by: chapters/custom-operators.md.
"""

from .swiglu import SwiGLUMLP, swiglu, swiglu_backward

__all__ = ["swiglu", "swiglu_backward", "SwiGLUMLP"]
